// Package tests holds the end-to-end suites: they build and start the real
// zredis-server binary on a free loopback port and talk to it with real
// clients (raw RESP, go-redis, redis-cli), and compare its replies with a
// real redis-server 7.0 (differential tests).
package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/internal/testsupport"
)

var (
	zredisBin string // built by TestMain
	listenBin string // bin/zredis-expiry-listen, built by TestMain
	// testBinDir holds both, for a pass of the suite in a subprocess.
	testBinDir string
	diffCases  atomic.Int64

	shared struct {
		once   sync.Once
		z, r   *Proc
		failed string
	}
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zredis-tests")
	if err != nil {
		panic(err)
	}
	// A pass of this binary run by another (TestDiffSuitesOverResp3)
	// uses the programs its parent built.
	binDir := dir
	if parent := os.Getenv("ZREDIS_TEST_BINDIR"); parent != "" {
		binDir = parent
	}
	testBinDir = binDir
	zredisBin = filepath.Join(binDir, "zredis-server")
	listenBin = filepath.Join(binDir, "zredis-expiry-listen")
	for bin, pkg := range map[string]string{zredisBin: "../cmd/zredis-server", listenBin: "../cmd/zredis-expiry-listen"} {
		if binDir != dir {
			break
		}
		build := exec.Command("go", "build", "-o", bin, pkg)
		build.Stdout, build.Stderr = os.Stdout, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building "+pkg+":", err)
			os.Exit(2)
		}
	}
	code := m.Run()
	if shared.z != nil {
		shared.z.Close()
	}
	if shared.r != nil {
		shared.r.Close()
	}
	if n := diffCases.Load(); n > 0 {
		fmt.Printf("differential cases compared with redis-server: %d\n", n)
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// Proc is a server process started by a test.
type Proc = testsupport.Proc

// FreePort returns a TCP port free on 127.0.0.1.
func FreePort(t testing.TB) int { return testsupport.FreePort(t) }

// StartZredis starts bin/zredis-server for this test; it is stopped when
// the test ends.
func StartZredis(t testing.TB, args ...string) *Proc {
	t.Helper()
	return testsupport.StartZredis(t, zredisBin, args...)
}

// RequireRedis returns the real redis-server 7.0, or ends the test (a
// skip, a failure under ZREDIS_TEST_REQUIRE_ALL) when there is none.
func RequireRedis(t testing.TB) string {
	t.Helper()
	return testsupport.RequireRedis(t)
}

// RequireTool returns the executable name from $PATH, or ends the test
// as RequireRedis does.
func RequireTool(t testing.TB, name string) string {
	t.Helper()
	return testsupport.RequireTool(t, name)
}

// StartRedis starts a real redis-server for this test, or ends the test
// as RequireRedis does.
func StartRedis(t testing.TB, args ...string) *Proc {
	t.Helper()
	return testsupport.StartRedis(t, args...)
}

// ---- raw RESP client -------------------------------------------------------

// Conn is a raw RESP connection that returns replies as the exact bytes
// the server sent.
type Conn struct {
	t  testing.TB
	nc net.Conn
	rd *bufio.Reader
}

// Dial connects to addr.
func Dial(t testing.TB, addr string) *Conn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &Conn{t: t, nc: nc, rd: bufio.NewReader(nc)}
}

// Encode encodes args as a RESP multibulk request.
func Encode(args ...string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.Bytes()
}

// Do sends one command and returns the raw reply.
func (c *Conn) Do(args ...string) string {
	c.t.Helper()
	c.Send(Encode(args...))
	return c.Read()
}

// connDeadline bounds one write or one reply of Do, Send and Read: only a
// hung server reaches it, a busy machine must not (a script's or a large
// value's reply can take seconds while another make test runs beside).
const connDeadline = 30 * time.Second

// Send writes raw bytes.
func (c *Conn) Send(raw []byte) {
	c.t.Helper()
	c.nc.SetWriteDeadline(time.Now().Add(connDeadline))
	if _, err := c.nc.Write(raw); err != nil {
		c.t.Fatal(err)
	}
}

// Read reads one complete reply and returns its raw bytes.
func (c *Conn) Read() string {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(connDeadline))
	var b bytes.Buffer
	if err := readRaw(c.rd, &b); err != nil {
		c.t.Fatalf("reading reply: %v (so far %q)", err, b.String())
	}
	return b.String()
}

// ReadErr is Read that returns the error (EOF when the server closed).
func (c *Conn) ReadErr(timeout time.Duration) (string, error) {
	c.nc.SetReadDeadline(time.Now().Add(timeout))
	var b bytes.Buffer
	err := readRaw(c.rd, &b)
	return b.String(), err
}

func readRaw(rd *bufio.Reader, b *bytes.Buffer) error {
	line, err := rd.ReadString('\n')
	b.WriteString(line)
	if err != nil {
		return err
	}
	if len(line) < 3 {
		return fmt.Errorf("short line %q", line)
	}
	switch line[0] {
	case '+', '-', ':', '_', '#', ',', '(':
		return nil
	case '$', '=', '!':
		n, err := strconv.Atoi(strings.TrimRight(line[1:], "\r\n"))
		if err != nil {
			return err
		}
		if n < 0 {
			return nil
		}
		buf := make([]byte, n+2)
		if _, err := ioReadFull(rd, buf); err != nil {
			return err
		}
		b.Write(buf)
		return nil
	case '*', '%', '~', '>', '|':
		n, err := strconv.Atoi(strings.TrimRight(line[1:], "\r\n"))
		if err != nil {
			return err
		}
		if line[0] == '%' || line[0] == '|' {
			n *= 2
		}
		for i := 0; i < n; i++ {
			if err := readRaw(rd, b); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("bad reply line %q", line)
}

func ioReadFull(rd *bufio.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := rd.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// ---- differential harness --------------------------------------------------

// Diff sends the same commands to zredis and to a real redis-server and
// compares the raw replies. Both servers are shared by the whole package
// run; NewDiff flushes them so every test starts empty.
type Diff struct {
	t    *testing.T
	Z, R *Conn
}

// NewDiff connects to the shared pair of servers (started on first use).
func NewDiff(t *testing.T) *Diff {
	t.Helper()
	redisBin := RequireRedis(t)
	shared.once.Do(func() {
		var err error
		shared.z, err = testsupport.Launch(t, testsupport.Options{Name: "zredis", Bin: zredisBin})
		if err != nil {
			shared.failed = err.Error()
			return
		}
		shared.r, err = testsupport.Launch(t, testsupport.Options{Name: "redis", Bin: redisBin})
		if err != nil {
			shared.failed = err.Error()
		}
	})
	if shared.failed != "" {
		t.Fatal(shared.failed)
	}
	d := &Diff{t: t, Z: Dial(t, shared.z.Addr), R: Dial(t, shared.r.Addr)}
	d.Z.Do("FLUSHALL")
	d.R.Do("FLUSHALL")
	if diffResp3 {
		d.Resp3()
	}
	return d
}

// Do sends a command to both servers and requires identical raw replies.
func (d *Diff) Do(args ...string) string {
	d.t.Helper()
	z, r := d.Z.Do(args...), d.R.Do(args...)
	diffCases.Add(1)
	if z != r {
		d.t.Errorf("%q:\n zredis: %q\n  redis: %q", args, z, r)
	}
	return z
}

// DoSorted compares replies whose element order is unspecified (KEYS,
// SMEMBERS...): the array elements are compared as sorted lists.
func (d *Diff) DoSorted(args ...string) {
	d.t.Helper()
	z, r := d.Z.Do(args...), d.R.Do(args...)
	diffCases.Add(1)
	if sortedElems(z) != sortedElems(r) {
		d.t.Errorf("%q (unordered):\n zredis: %q\n  redis: %q", args, z, r)
	}
}

// DoLen compares only the type and length of the reply (RANDOMKEY-like
// replies that are random by nature).
func (d *Diff) DoLen(args ...string) {
	d.t.Helper()
	z, r := d.Z.Do(args...), d.R.Do(args...)
	diffCases.Add(1)
	zl, rl := strings.SplitN(z, "\r\n", 2)[0], strings.SplitN(r, "\r\n", 2)[0]
	if zl[0] != rl[0] {
		d.t.Errorf("%q (shape):\n zredis: %q\n  redis: %q", args, z, r)
	}
}

// diffResp3: every Diff speaks RESP3 (ZREDIS_TEST_RESP=3), for the
// differential suites' second pass (TestDiffSuitesOverResp3).
var diffResp3 = os.Getenv("ZREDIS_TEST_RESP") == "3"

// Resp3 switches both connections to RESP3 with HELLO 3 (whose replies
// differ in the client ID only).
func (d *Diff) Resp3() {
	d.t.Helper()
	for _, c := range []*Conn{d.Z, d.R} {
		reply := c.Do("HELLO", "3")
		require.Truef(d.t, strings.HasPrefix(reply, "%7\r\n"), "HELLO 3: %q", reply)
	}
}

// DoBoth runs a command on both servers without comparing (set-up steps
// whose replies legitimately differ).
func (d *Diff) DoBoth(args ...string) {
	d.t.Helper()
	d.Z.Do(args...)
	d.R.Do(args...)
}

// sortedElems splits a raw array (or RESP3 set) reply into its top-level
// elements and sorts them; a RESP3 map's pairs are sorted, each kept
// whole.
func sortedElems(raw string) string {
	rd := bufio.NewReader(strings.NewReader(raw))
	head, err := rd.ReadString('\n')
	if err != nil || len(head) == 0 || !strings.ContainsRune("*~%", rune(head[0])) {
		return raw
	}
	var elems []string
	for {
		var b bytes.Buffer
		if err := readRaw(rd, &b); err != nil {
			break
		}
		if head[0] == '%' {
			if err := readRaw(rd, &b); err != nil {
				break
			}
		}
		elems = append(elems, b.String())
	}
	sort.Strings(elems)
	return head + strings.Join(elems, "")
}

// nullArray is the null multi-bulk of the protocol the Diffs speak.
func nullArray() string {
	if diffResp3 {
		return "_\r\n"
	}
	return "*-1\r\n"
}

// StartServer starts zredis or, for name "redis", a real redis-server
// (skipping when none is installed), with the same arguments.
func StartServer(t testing.TB, name string, args ...string) *Proc {
	t.Helper()
	if name == "redis" {
		return StartRedis(t, args...)
	}
	return StartZredis(t, args...)
}

// serverBin is the binary of zredis or, for name "redis", of the real
// redis-server, for a test that runs it itself; it skips the test when
// redis-server is not installed (RequireRedis).
func serverBin(t testing.TB, name string) string {
	t.Helper()
	if name != "redis" {
		return zredisBin
	}
	return RequireRedis(t)
}

// waitLog waits for a line of p's log that matches pattern: a live
// server writes its log line a moment after the event the test saw
// (later still on a busy machine).
func waitLog(t *testing.T, p *Proc, pattern string) {
	t.Helper()
	re := regexp.MustCompile(pattern)
	assert.Eventually(t, func() bool { return re.MatchString(p.Output()) }, 20*time.Second, 10*time.Millisecond,
		"no log line matching %q in:\n%s", pattern, p.Output())
}

// waitOutput is waitLog for a literal text.
func waitOutput(t *testing.T, p *Proc, text string) {
	t.Helper()
	waitLog(t, p, regexp.QuoteMeta(text))
}

// Close closes the connection (the test's cleanup closes it too).
func (c *Conn) Close() { c.nc.Close() }
