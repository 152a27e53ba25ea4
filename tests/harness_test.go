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
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

var (
	zredisBin string // built by TestMain
	diffCases atomic.Int64

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
	zredisBin = filepath.Join(dir, "zredis-server")
	build := exec.Command("go", "build", "-o", zredisBin, "../cmd/zredis-server")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building zredis-server:", err)
		os.Exit(2)
	}
	code := m.Run()
	if shared.z != nil {
		shared.z.Stop()
	}
	if shared.r != nil {
		shared.r.Stop()
	}
	if n := diffCases.Load(); n > 0 {
		fmt.Printf("differential cases compared with redis-server: %d\n", n)
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// Proc is a server process started by a test.
type Proc struct {
	Name string
	Port int
	Addr string
	Dir  string
	cmd  *exec.Cmd
	out  *bytes.Buffer
	mu   *sync.Mutex
	done chan struct{}
}

// Output is what the process printed so far.
func (p *Proc) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// Stop sends SIGTERM and waits for the exit (SIGKILL after 10 s).
func (p *Proc) Stop() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// Wait waits for the process to exit and returns its exit code.
func (p *Proc) Wait(timeout time.Duration) (int, bool) {
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode(), true
	case <-time.After(timeout):
		return -1, false
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// FreePort returns a TCP port free on 127.0.0.1.
func FreePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startProc starts bin with args plus "--port N --bind 127.0.0.1" and
// waits until it answers PING. The process runs in its own temp dir.
func startProc(t testing.TB, name, bin string, args ...string) (*Proc, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port := FreePort(t)
		// A test that restarts a server on the same data passes its own
		// --dir, and removes it itself.
		dir := argAfter(args, "--dir")
		full := append([]string{}, args...)
		if dir == "" {
			var err error
			if dir, err = os.MkdirTemp("", "zredis-proc"); err != nil {
				return nil, err
			}
			full = append(full, "--dir", dir)
		}
		full = append(full, "--port", strconv.Itoa(port), "--bind", "127.0.0.1")
		if name == "redis" {
			// No persistence unless the test asks for it.
			if !hasArg(args, "--save") {
				full = append(full, "--save", "")
			}
			if !hasArg(args, "--appendonly") {
				full = append(full, "--appendonly", "no")
			}
		}
		p := &Proc{Name: name, Port: port, Addr: fmt.Sprintf("127.0.0.1:%d", port), Dir: dir,
			out: &bytes.Buffer{}, mu: &sync.Mutex{}, done: make(chan struct{})}
		p.cmd = exec.Command(bin, full...)
		p.cmd.Dir = dir
		p.cmd.Stdout = lockedWriter{p.mu, p.out}
		p.cmd.Stderr = lockedWriter{p.mu, p.out}
		if err := p.cmd.Start(); err != nil {
			return nil, err
		}
		go func() { p.cmd.Wait(); close(p.done) }()
		if err := waitReady(p); err != nil {
			p.Stop()
			p.removeDir(args)
			lastErr = fmt.Errorf("%s did not start: %v\n%s", name, err, p.Output())
			continue
		}
		return p, nil
	}
	return nil, lastErr
}

// argAfter returns the argument following name in args, or "".
func argAfter(args []string, name string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == name {
			return args[i+1]
		}
	}
	return ""
}

// hasArg reports whether args contains name.
func hasArg(args []string, name string) bool {
	for _, a := range args {
		if a == name {
			return true
		}
	}
	return false
}

// removeDir removes the process's directory unless the test gave it.
func (p *Proc) removeDir(args []string) {
	if argAfter(args, "--dir") == "" {
		os.RemoveAll(p.Dir)
	}
}

func waitReady(p *Proc) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return fmt.Errorf("exited")
		default:
		}
		c, err := net.DialTimeout("tcp", p.Addr, 200*time.Millisecond)
		if err == nil {
			c.SetDeadline(time.Now().Add(time.Second))
			c.Write([]byte("PING\r\n"))
			buf := make([]byte, 64)
			n, _ := c.Read(buf)
			c.Close()
			if strings.HasPrefix(string(buf[:n]), "+PONG") {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("timeout")
}

// StartZredis starts bin/zredis-server for this test; it is stopped when
// the test ends.
func StartZredis(t testing.TB, args ...string) *Proc {
	t.Helper()
	p, err := startProc(t, "zredis", zredisBin, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(); p.removeDir(args) })
	return p
}

// RedisServerPath is the real redis-server, or "" when not installed.
func RedisServerPath() string {
	p, err := exec.LookPath("redis-server")
	if err != nil {
		return ""
	}
	return p
}

// StartRedis starts a real redis-server for this test, or skips the test
// when none is installed (make test installs it).
func StartRedis(t testing.TB, args ...string) *Proc {
	t.Helper()
	bin := RedisServerPath()
	if bin == "" {
		t.Skip("redis-server is not installed: differential test skipped (make test installs it)")
	}
	p, err := startProc(t, "redis", bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(); os.RemoveAll(p.Dir) })
	return p
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
	nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
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

// Send writes raw bytes.
func (c *Conn) Send(raw []byte) {
	c.t.Helper()
	c.nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.nc.Write(raw); err != nil {
		c.t.Fatal(err)
	}
}

// Read reads one complete reply and returns its raw bytes.
func (c *Conn) Read() string {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
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
	if RedisServerPath() == "" {
		t.Skip("redis-server is not installed: differential test skipped (make test installs it)")
	}
	shared.once.Do(func() {
		var err error
		shared.z, err = startProc(t, "zredis", zredisBin)
		if err != nil {
			shared.failed = err.Error()
			return
		}
		shared.r, err = startProc(t, "redis", RedisServerPath())
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

// DoBoth runs a command on both servers without comparing (set-up steps
// whose replies legitimately differ).
func (d *Diff) DoBoth(args ...string) {
	d.t.Helper()
	d.Z.Do(args...)
	d.R.Do(args...)
}

// sortedElems splits a raw array reply into its top-level elements and
// sorts them.
func sortedElems(raw string) string {
	rd := bufio.NewReader(strings.NewReader(raw))
	head, err := rd.ReadString('\n')
	if err != nil || len(head) == 0 || head[0] != '*' {
		return raw
	}
	var elems []string
	for {
		var b bytes.Buffer
		if err := readRaw(rd, &b); err != nil {
			break
		}
		elems = append(elems, b.String())
	}
	sort.Strings(elems)
	return head + strings.Join(elems, "")
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
// redis-server is not installed.
func serverBin(t testing.TB, name string) string {
	t.Helper()
	if name != "redis" {
		return zredisBin
	}
	bin := RedisServerPath()
	if bin == "" {
		t.Skip("redis-server is not installed")
	}
	return bin
}
