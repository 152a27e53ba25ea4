package tests

// Hostile and malformed input: protocol errors must get redis-server
// 7.0's exact reply and close the connection, limits must hold, and no
// input may crash, hang or bloat the server.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func protoErr(msg string) string { return "-ERR Protocol error: " + msg + "\r\n" }

// exchange is what a server did with one input on a fresh connection.
type exchange struct {
	Out    string // every byte the server sent
	Closed bool   // the server closed the connection on its own
}

// openWindow is how long rawExchange listens for a close the server should
// not make. A slow server only makes that check weaker, never failing.
const openWindow = 300 * time.Millisecond

// rawExchange sends in on a fresh connection to addr. When the server is
// expected to close the connection (open false), it reads until it does
// (10 s guard). When the server is expected to keep it open, it reads
// for openWindow and notes a close, then half-closes its side so the
// server answers what it has and ends, and reads the rest.
func rawExchange(t *testing.T, addr string, in []byte, open bool) exchange {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	defer nc.Close()
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		nc.SetWriteDeadline(time.Now().Add(20 * time.Second))
		nc.Write(in) // fails when the server closes first: expected
	}()
	var out bytes.Buffer
	ex := exchange{}
	if open {
		ex.Closed = readUntil(nc, &out, time.Now().Add(openWindow))
		if !ex.Closed {
			<-wrote
			nc.(*net.TCPConn).CloseWrite()
			readUntil(nc, &out, time.Now().Add(10*time.Second))
		}
	} else {
		ex.Closed = readUntil(nc, &out, time.Now().Add(10*time.Second))
	}
	ex.Out = out.String()
	return ex
}

// readUntil appends what nc sends to out until the peer closes (true)
// or the deadline passes (false).
func readUntil(nc net.Conn, out *bytes.Buffer, deadline time.Time) bool {
	nc.SetReadDeadline(deadline)
	buf := make([]byte, 64<<10)
	for {
		n, err := nc.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return false
			}
			return true // EOF, or a reset after unread input
		}
	}
}

// protoCases are inputs and redis-server 7.0.15's exact answers. open
// marks the inputs after which Redis keeps the connection.
var protoCases = []struct {
	name string
	in   string
	open bool
	want string
}{
	// Multibulk count.
	{"count not a number", "*x\r\n", false, protoErr("invalid multibulk length")},
	{"count empty", "*\r\n", false, protoErr("invalid multibulk length")},
	{"count leading space", "* 1\r\n", false, protoErr("invalid multibulk length")},
	{"count trailing space", "*1 \r\n", false, protoErr("invalid multibulk length")},
	{"count leading zero", "*01\r\n$4\r\nPING\r\n", false, protoErr("invalid multibulk length")},
	{"count plus sign", "*+1\r\n", false, protoErr("invalid multibulk length")},
	{"count minus zero", "*-0\r\n", false, protoErr("invalid multibulk length")},
	{"count LF only", "*1\n$4\r\nPING\r\n", false, protoErr("invalid multibulk length")},
	{"count above INT_MAX", "*2147483648\r\n", false, protoErr("invalid multibulk length")},
	{"count int64 max", "*9223372036854775807\r\n", false, protoErr("invalid multibulk length")},
	{"count overflows int64", "*99999999999999999999\r\n", false, protoErr("invalid multibulk length")},
	{"too big mbulk count string", "*" + strings.Repeat("1", 70000), false, protoErr("too big mbulk count string")},
	{"negative count skipped", "*-5\r\n*1\r\n$4\r\nPING\r\n", true, "+PONG\r\n"},
	{"count -1 skipped", "*-1\r\nPING\r\n", true, "+PONG\r\n"},
	{"count 0 skipped", "*0\r\n*1\r\n$4\r\nPING\r\n", true, "+PONG\r\n"},
	{"count INT_MAX waits", "*2147483647\r\n$1\r\na\r\n", true, ""},
	{"count CR CR waits", "*1\r\r\n", true, ""},

	// Bulk length.
	{"bulk length not a number", "*2\r\n$x\r\n", false, protoErr("invalid bulk length")},
	{"bulk length empty", "*1\r\n$\r\n", false, protoErr("invalid bulk length")},
	{"bulk length -1", "*1\r\n$-1\r\n", false, protoErr("invalid bulk length")},
	{"bulk length negative", "*1\r\n$-5\r\n", false, protoErr("invalid bulk length")},
	{"bulk length minus zero", "*1\r\n$-0\r\n", false, protoErr("invalid bulk length")},
	{"bulk length leading zero", "*1\r\n$00\r\n", false, protoErr("invalid bulk length")},
	{"bulk length trailing space", "*1\r\n$4 \r\nPING\r\n", false, protoErr("invalid bulk length")},
	{"bulk length above proto-max-bulk-len", "*1\r\n$536870913\r\n", false, protoErr("invalid bulk length")},
	{"bulk length 1e9", "*1\r\n$1000000000\r\nabc", false, protoErr("invalid bulk length")},
	{"bulk length near int64 max", "*1\r\n$9223372036854775800\r\nabc", false, protoErr("invalid bulk length")},
	{"too big bulk count string", "*1\r\n$" + strings.Repeat("1", 70000), false, protoErr("too big bulk count string")},
	{"bulk at proto-max-bulk-len waits", "*1\r\n$536870912\r\nabc", true, ""},
	{"bulk incomplete waits", "*1\r\n$4\r\nPING", true, ""},
	{"bulk terminator not checked", "*1\r\n$4\r\nPINGxx*1\r\n$4\r\nPING\r\n", true, "+PONG\r\n+PONG\r\n"},
	{"bulk shorter than declared", "*1\r\n$1\r\nab\r\n", true, "-ERR unknown command 'a', with args beginning with: \r\n"},
	{"empty bulk command", "*1\r\n$0\r\n\r\n", true, "-ERR unknown command '', with args beginning with: \r\n"},
	{"empty bulk argument", "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", true, "$0\r\n\r\n"},
	{"expected dollar got x", "*1\r\nx\r\n", false, "-ERR Protocol error: expected '$', got 'x'\r\n"},
	{"expected dollar got colon", "*3\r\n$3\r\nSET\r\n$1\r\na\r\n:1\r\n", false, "-ERR Protocol error: expected '$', got ':'\r\n"},

	// Inline requests.
	{"unbalanced double quotes", "SET \"a b\r\n", false, protoErr("unbalanced quotes in request")},
	{"unbalanced single quotes", "ECHO 'a\r\n", false, protoErr("unbalanced quotes in request")},
	{"closing quote not followed by space", "ECHO \"a\"b\r\n", false, protoErr("unbalanced quotes in request")},
	{"adjacent single quotes", "ECHO 'it''s'\r\n", false, protoErr("unbalanced quotes in request")},
	{"too big inline request", strings.Repeat("a", 65<<10), false, protoErr("too big inline request")},
	{"inline quoted escapes", "ECHO \"\\x41\\x00b\"\r\n", true, "$3\r\nA\x00b\r\n"},
	{"inline escaped single quote", "ECHO 'a\\'b'\r\n", true, "$3\r\na'b\r\n"},
	{"inline LF only", "PING\n", true, "+PONG\r\n"},
	{"inline empty lines skipped", "\r\n\r\n\n PING\r\n", true, "+PONG\r\n"},
	{"inline blanks only", "  \t \r\n", true, ""},
	{"inline binary command", "\xff\xfe\r\n", true, "-ERR unknown command '\xff\xfe', with args beginning with: \r\n"},
	{"inline dollar line", "$5\r\nxyzzy\r\n", true,
		"-ERR unknown command '$5', with args beginning with: \r\n-ERR unknown command 'xyzzy', with args beginning with: \r\n"},
	{"inline NUL hides the newline", "PI\x00NG\r\n", true, ""},

	// Order: replies before the error are sent, nothing after it runs.
	{"replies before the error", "PING\r\n*1\r\n$4\r\nPING\r\n*x\r\n", false, "+PONG\r\n+PONG\r\n" + protoErr("invalid multibulk length")},
	{"nothing after the error", "*x\r\nPING\r\n", false, protoErr("invalid multibulk length")},
}

// TestProtocolErrors checks every input's reply and close against the
// table, and the table against a real redis-server.
func TestProtocolErrors(t *testing.T) {
	z := StartZredis(t)
	r := StartRedis(t)
	for _, tc := range protoCases {
		t.Run(tc.name, func(t *testing.T) {
			want := exchange{Out: tc.want, Closed: !tc.open}
			assert.Equal(t, want, rawExchange(t, z.Addr, []byte(tc.in), tc.open), "zredis, input %.80q", tc.in)
			diffCases.Add(1)
			assert.Equal(t, want, rawExchange(t, r.Addr, []byte(tc.in), tc.open), "redis-server, input %.80q (the table is wrong)", tc.in)
		})
	}
	requireAlive(t, z)
}

// TestProtocolErrorsUnauthenticated: before AUTH, Redis allows at most 10
// arguments of at most 16 KiB each.
func TestProtocolErrorsUnauthenticated(t *testing.T) {
	cases := []struct {
		name string
		in   string
		open bool
		want string
	}{
		{"count above 10", "*11\r\n", false, protoErr("unauthenticated multibulk length")},
		{"count 10 waits", "*10\r\n", true, ""},
		{"bulk above 16 KiB", "*1\r\n$16385\r\n", false, protoErr("unauthenticated bulk length")},
		{"bulk 16 KiB waits", "*1\r\n$16384\r\n", true, ""},
		{"command before AUTH", "PING\r\n", true, "-NOAUTH Authentication required.\r\n"},
		{"limits lifted by AUTH in the same packet", "*2\r\n$4\r\nAUTH\r\n$6\r\nsecret\r\n*11\r\n", true, "+OK\r\n"},
		{"limits kept after a wrong AUTH", "AUTH wrong\r\n*11\r\n", false,
			"-WRONGPASS invalid username-password pair or user is disabled.\r\n" + protoErr("unauthenticated multibulk length")},
	}
	// The password is set once the server runs: the harness's readiness
	// probe is an unauthenticated PING.
	withPass := func(p *Proc) *Proc {
		require.Equal(t, "+OK\r\n", Dial(t, p.Addr).Do("CONFIG", "SET", "requirepass", "secret"))
		return p
	}
	z := withPass(StartZredis(t))
	r := withPass(StartRedis(t))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := exchange{Out: tc.want, Closed: !tc.open}
			assert.Equal(t, want, rawExchange(t, z.Addr, []byte(tc.in), tc.open), "zredis, input %.80q", tc.in)
			diffCases.Add(1)
			assert.Equal(t, want, rawExchange(t, r.Addr, []byte(tc.in), tc.open), "redis-server, input %.80q (the table is wrong)", tc.in)
		})
	}
}

// requireAlive checks that p is running and answers PING on a new
// connection.
func requireAlive(t *testing.T, p *Proc) {
	t.Helper()
	if hasExited(p) {
		t.Fatalf("%s exited:\n%s", p.Name, p.Output())
	}
	c := Dial(t, p.Addr)
	require.Equal(t, "+PONG\r\n", c.Do("PING"))
}

func hasExited(p *Proc) bool {
	select {
	case <-p.Done():
		return true
	default:
		return false
	}
}

// rssBytes is the resident set size of process pid.
func rssBytes(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	// Without /proc (not Linux) the RSS cannot be read: a machine
	// condition, which stays a skip under ZREDIS_TEST_REQUIRE_ALL.
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc status")
	return 0
}

// TestHugeDeclaredSizes: a client declaring a huge argument count or bulk
// length and then sending little must not make the server allocate what
// it declared.
func TestHugeDeclaredSizes(t *testing.T) {
	// 2gb lets a 1e9-byte bulk through the length check, so it is the
	// allocation, not the limit, that is tested.
	z := StartZredis(t, "--proto-max-bulk-len", "2gb")
	pid := z.Pid()
	before := rssBytes(t, pid)
	const limit = 100 << 20

	var conns []net.Conn
	defer func() {
		for _, nc := range conns {
			nc.Close()
		}
	}()
	for i := 0; i < 20; i++ {
		nc, err := net.DialTimeout("tcp", z.Addr, 5*time.Second)
		require.NoError(t, err)
		conns = append(conns, nc)
		var in []byte
		if i%2 == 0 {
			in = []byte("*2147483647\r\n" + strings.Repeat("$1\r\na\r\n", 100))
		} else {
			in = []byte("*1\r\n$1000000000\r\n" + strings.Repeat("x", 4096))
		}
		nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		_, err = nc.Write(in)
		require.NoError(t, err)
	}
	// The server reads the connections concurrently with this one; a few
	// PINGs give it the chance to have read them all before measuring.
	c := Dial(t, z.Addr)
	var peak int64
	for i := 0; i < 10; i++ {
		require.Equal(t, "+PONG\r\n", c.Do("PING"))
		peak = max(peak, rssBytes(t, pid))
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("RSS before %d MB, peak with 20 open huge requests %d MB", before>>20, peak>>20)
	assert.Less(t, peak, int64(limit), "RSS %d MB with 20 open huge requests", peak>>20)

	// None of them got a reply: each is still waiting for its data.
	for _, nc := range conns {
		nc.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		n, err := nc.Read(make([]byte, 64))
		var ne net.Error
		assert.True(t, n == 0 && errors.As(err, &ne) && ne.Timeout(), "unexpected reply or close: %d bytes, %v", n, err)
	}
	requireAlive(t, z)
}

// TestRedconCrashInputs: inputs that panic or spin tidwall/redcon's parser
// get Redis's error, and the server keeps serving.
func TestRedconCrashInputs(t *testing.T) {
	z := StartZredis(t)
	for i := 0; i < 5; i++ {
		for _, in := range []string{"*1\r\n$9223372036854775800\r\nabc", "*9223372036854775807\r\n"} {
			ex := rawExchange(t, z.Addr, []byte(in), false)
			assert.True(t, ex.Closed, "%q: connection not closed", in)
			assert.True(t, strings.HasPrefix(ex.Out, "-ERR Protocol error: invalid "), "%q: %q", in, ex.Out)
		}
	}
	requireAlive(t, z)
}

// bigSet is a SET of k to an n-byte value, complete when terminated.
func bigSet(n int, terminated bool) []byte {
	b := []byte(fmt.Sprintf("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n", n))
	b = append(b, bytes.Repeat([]byte("x"), n)...)
	if terminated {
		b = append(b, "\r\n"...)
	}
	return b
}

// onBothConfigured runs fn against zredis and redis-server started with
// the same arguments (redis-server skipped when not installed).
func onBothConfigured(t *testing.T, args []string, fn func(t *testing.T, p *Proc)) {
	t.Run("zredis", func(t *testing.T) { fn(t, StartZredis(t, args...)) })
	t.Run("redis", func(t *testing.T) { diffCases.Add(1); fn(t, StartRedis(t, args...)) })
}

func TestProtoMaxBulkLen(t *testing.T) {
	onBothConfigured(t, []string{"--proto-max-bulk-len", "1mb"}, func(t *testing.T, p *Proc) {
		ex := rawExchange(t, p.Addr, bigSet(2<<20, true)[:4096], false)
		assert.Equal(t, exchange{Out: protoErr("invalid bulk length"), Closed: true}, ex)
		ex = rawExchange(t, p.Addr, bigSet(1<<20, true), true)
		assert.Equal(t, exchange{Out: "+OK\r\n"}, ex)
		requireAlive(t, p)
	})
}

// TestClientQueryBufferLimit: Redis closes, without a reply, a client
// whose unprocessed input exceeds client-query-buffer-limit (1mb is the
// smallest value it accepts); a big argument counts in full, so even a
// complete 2 MB SET is refused. The server logs the client it closed.
func TestClientQueryBufferLimit(t *testing.T) {
	onBothConfigured(t, []string{"--client-query-buffer-limit", "1mb"}, func(t *testing.T, p *Proc) {
		ex := rawExchange(t, p.Addr, bigSet(2<<20, false), false)
		assert.Equal(t, exchange{Out: "", Closed: true}, ex, "unterminated 2 MB bulk")
		ex = rawExchange(t, p.Addr, bigSet(2<<20, true), false)
		assert.Equal(t, exchange{Out: "", Closed: true}, ex, "complete 2 MB SET")
		// Both logged, with the client and the start of its query
		// buffer (the big argument's bytes, as they arrived).
		waitLog(t, p, `Closing client that reached max query buffer length: id=\d+ addr=\S+ .*qbuf=\d+ .* \(qbuf initial bytes: "x{64}"\)`)
		ex = rawExchange(t, p.Addr, bigSet(512<<10, true), true)
		assert.Equal(t, exchange{Out: "+OK\r\n"}, ex, "512 KB SET")
		requireAlive(t, p)
	})
}

func TestMaxClients(t *testing.T) {
	onBothConfigured(t, []string{"--maxclients", "2"}, func(t *testing.T, p *Proc) {
		// The readiness probe's connection may not be unregistered yet:
		// retry until two connections are accepted.
		var held []*Conn
		for deadline := time.Now().Add(20 * time.Second); len(held) < 2; {
			require.True(t, time.Now().Before(deadline), "could not open 2 connections")
			c := Dial(t, p.Addr)
			if reply := c.Do("PING"); reply == "+PONG\r\n" {
				held = append(held, c)
				continue
			}
			time.Sleep(20 * time.Millisecond)
		}
		ex := rawExchange(t, p.Addr, nil, false)
		assert.Equal(t, exchange{Out: "-ERR max number of clients reached\r\n", Closed: true}, ex)
		// Commands sent by the refused client change nothing.
		ex = rawExchange(t, p.Addr, Encode("SET", "refused", "1"), false)
		assert.Equal(t, exchange{Out: "-ERR max number of clients reached\r\n", Closed: true}, ex)
		assert.Equal(t, "$-1\r\n", held[0].Do("GET", "refused"))
	})
}

// TestGarbage sends seeded random bytes, raw and mixed with fragments of
// valid requests, on 50 concurrent connections; the server must survive
// and keep answering.
func TestGarbage(t *testing.T) {
	z := StartZredis(t)
	fragments := []string{"*", "$", "\r\n", "\n", "\r", "-1", "0", "1", "2", "3", "10", "2147483647",
		"9223372036854775807", "-9223372036854775808", "99999999999999999999", "\"", "'", "\\x", "\\", " ",
		"SET", "GET", "PING", "ECHO", "INCR", "k", "\x00", "*1\r\n$4\r\nPING\r\n", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n"}
	// Each of the 50 workers opens connections one after another, since
	// most garbage streams end in a protocol error after a few bytes.
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 0x5eed))
			for conn := 0; conn < 10; conn++ {
				if !sendGarbage(t, z.Addr, rng, fragments) {
					return
				}
			}
		}(uint64(i))
	}
	wg.Wait()
	requireAlive(t, z)
	// SIGTERM still stops it cleanly.
	z.Signal(syscall.SIGTERM)
	code, ok := z.Wait(15 * time.Second)
	require.True(t, ok, "no exit after SIGTERM")
	assert.Equal(t, 0, code, "exit code after SIGTERM\n%s", z.Output())
}

// sendGarbage sends up to 32 KiB of garbage built from rng on a new
// connection, in random-sized writes, and closes it. It reports false
// when it could not connect.
func sendGarbage(t *testing.T, addr string, rng *rand.Rand, fragments []string) bool {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Error(err)
		return false
	}
	defer nc.Close()
	go io.Copy(io.Discard, nc)
	var b bytes.Buffer
	size := 1 + rng.IntN(32<<10)
	for b.Len() < size {
		if rng.IntN(2) == 0 {
			b.WriteString(fragments[rng.IntN(len(fragments))])
		} else {
			for n := rng.IntN(64); n > 0; n-- {
				b.WriteByte(byte(rng.Uint32()))
			}
		}
	}
	data := b.Bytes()
	for len(data) > 0 {
		n := min(len(data), 1+rng.IntN(4096))
		nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if _, err := nc.Write(data[:n]); err != nil {
			return true // closed on a protocol error: expected
		}
		data = data[n:]
	}
	return true
}
