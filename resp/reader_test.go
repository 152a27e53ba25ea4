package resp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/redisconv"
)

// chunkReader returns at most n bytes per Read (all it has when n <= 0).
type chunkReader struct {
	data []byte
	n    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	k := len(p)
	if c.n > 0 && k > c.n {
		k = c.n
	}
	k = copy(p[:k], c.data)
	c.data = c.data[k:]
	return k, nil
}

// collect reads batches until an error and returns copies of the commands.
func collect(t testing.TB, rd *Reader) ([][]string, error) {
	var out [][]string
	var dst [][][]byte
	for i := 0; ; i++ {
		var err error
		dst, err = rd.ReadBatch(dst)
		if err != nil {
			require.Empty(t, dst)
			return out, err
		}
		require.NotEmpty(t, dst, "nil error with an empty batch")
		for _, cmd := range dst {
			require.NotEmpty(t, cmd)
			c := make([]string, len(cmd))
			for j, a := range cmd {
				c[j] = string(a)
			}
			out = append(out, c)
		}
		require.Less(t, i, 1<<20, "too many batches")
	}
}

func parseAll(t testing.TB, input []byte, chunk int, lim Limits, auth bool) ([][]string, error) {
	rd := NewReader(&chunkReader{data: bytes.Clone(input), n: chunk}, lim)
	rd.SetAuthenticated(auth)
	return collect(t, rd)
}

func mb(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}

type cmds = [][]string

const (
	eInvalidMbulk = "Protocol error: invalid multibulk length"
	eInvalidBulk  = "Protocol error: invalid bulk length"
	eBigMbulk     = "Protocol error: too big mbulk count string"
	eBigBulk      = "Protocol error: too big bulk count string"
	eBigInline    = "Protocol error: too big inline request"
	eUnbalanced   = "Protocol error: unbalanced quotes in request"
	eUnauthMbulk  = "Protocol error: unauthenticated multibulk length"
	eUnauthBulk   = "Protocol error: unauthenticated bulk length"
)

type readCase struct {
	name   string
	in     string
	want   cmds
	err    string // protocol error text; "" means the input ends cleanly (io.EOF)
	unauth bool
	lim    Limits
}

// readCases were checked against redis-server 7.0.15 where they concern Redis
// behaviour (replies and whether the connection is closed).
var readCases = []readCase{
	{name: "set", in: mb("SET", "key", "value"), want: cmds{{"SET", "key", "value"}}},
	{name: "pipeline", in: mb("SET", "a", "1") + mb("GET", "a") + mb("PING"),
		want: cmds{{"SET", "a", "1"}, {"GET", "a"}, {"PING"}}},
	{name: "empty and binary bulks", in: mb("SET", "", "a\r\nb\x00c\r\n"),
		want: cmds{{"SET", "", "a\r\nb\x00c\r\n"}}},
	{name: "lowercase and large count digits", in: "*2\r\n$4\r\necho\r\n$10\r\n0123456789\r\n",
		want: cmds{{"echo", "0123456789"}}},
	{name: "zero and negative counts skipped", in: "*0\r\n*-1\r\n*-5\r\n" + mb("PING"), want: cmds{{"PING"}}},
	{name: "crlf bytes not checked", in: "*1\rX$4\rXPINGXY*1\r\n$4\r\nPING\r\n", want: cmds{{"PING"}, {"PING"}}},
	{name: "incomplete command at end", in: mb("PING") + "*2\r\n$3\r\nGET\r\n$1\r\n", want: cmds{{"PING"}}},
	{name: "announced count never arrives", in: "*2147483647\r\n"},
	{name: "count above 1M accepted", in: "*1048577\r\n"},
	{name: "max bulk accepted", in: "*1\r\n$536870912\r\n"},
	{name: "long count digits", in: "*0000001\r\n", err: eInvalidMbulk},

	{name: "inline", in: "PING\r\n", want: cmds{{"PING"}}},
	{name: "inline lf only", in: "set a b\nget a\n", want: cmds{{"set", "a", "b"}, {"get", "a"}}},
	{name: "inline spaces", in: "  set \t a   b  \r\n", want: cmds{{"set", "a", "b"}}},
	{name: "inline empty lines skipped", in: "\r\n\n   \r\n\t\nPING\n", want: cmds{{"PING"}}},
	{name: "inline double quotes", in: `echo "a\x41\n"` + "\r\n", want: cmds{{"echo", "aA\n"}}},
	{name: "inline single quotes", in: `echo 'x\'y'` + "\r\n", want: cmds{{"echo", "x'y"}}},
	{name: "inline bad hex", in: `echo "\x4g"` + "\r\n", want: cmds{{"echo", "x4g"}}},
	{name: "inline escapes", in: `echo "a\qb\t\b\a\r\\\""` + "\r\n", want: cmds{{"echo", "aqb\t\b\a\r\\\""}}},
	{name: "inline empty quotes", in: `echo "" ''` + "\r\n", want: cmds{{"echo", "", ""}}},
	{name: "inline single quote no escapes", in: `echo 'a\nb'` + "\r\n", want: cmds{{"echo", `a\nb`}}},
	{name: "inline quote then vt", in: "echo \"a\"\vb\r\n", want: cmds{{"echo", "a", "b"}}},
	{name: "inline vt inside token", in: "echo a\vb\r\n", want: cmds{{"echo", "a\vb"}}},
	{name: "inline ff before quote", in: "echo \f\"a\"\r\n", want: cmds{{"echo", "a"}}},
	{name: "inline hex high", in: `echo "\xFf"` + "\n", want: cmds{{"echo", "\xff"}}},
	{name: "inline quote inside token", in: `echo ab"cd"` + "\n", want: cmds{{"echo", "abcd"}}},
	{name: "inline cr inside line", in: "echo a\rb\n", want: cmds{{"echo", "a", "b"}}},
	{name: "inline dollar", in: "$4\r\nPING\r\n", want: cmds{{"$4"}, {"PING"}}},
	{name: "inline then multibulk", in: "PING\r\n" + mb("GET", "k") + "ECHO x\n",
		want: cmds{{"PING"}, {"GET", "k"}, {"ECHO", "x"}}},
	{name: "inline 64KiB without newline waits", in: strings.Repeat("a", 65536)},
	{name: "inline long line", in: "ECHO " + strings.Repeat("a", 30000) + "\r\n",
		want: cmds{{"ECHO", strings.Repeat("a", 30000)}}},

	// A NUL ends Redis's strchr search, so these lines are never complete.
	{name: "nul in count line", in: "*1\x00\r\n$4\r\nPING\r\n"},
	{name: "nul in bulk line", in: "*1\r\n$4\x00\r\nPING\r\n"},
	{name: "nul in inline", in: "PING\x00\nPING\r\n"},
	{name: "nul in count line too big", in: "*1\x00\r\n" + strings.Repeat("a", 65536), err: eBigMbulk},
	{name: "nul in inline too big", in: "PING\x00\n" + strings.Repeat("a", 65536), err: eBigInline},

	{name: "count not a number", in: "*x\r\n", err: eInvalidMbulk},
	{name: "count plus", in: "*+1\r\n", err: eInvalidMbulk},
	{name: "count leading zero", in: "*01\r\n", err: eInvalidMbulk},
	{name: "count minus zero", in: "*-0\r\n", err: eInvalidMbulk},
	{name: "count empty", in: "*\r\n", err: eInvalidMbulk},
	{name: "count space", in: "* 1\r\n", err: eInvalidMbulk},
	{name: "count trailing space", in: "*1 \r\n", err: eInvalidMbulk},
	{name: "count above INT_MAX", in: "*2147483648\r\n", err: eInvalidMbulk},
	{name: "count overflow", in: "*99999999999999999999\r\n", err: eInvalidMbulk},
	{name: "redcon spin", in: "*9223372036854775807\r\n", err: eInvalidMbulk},
	{name: "redcon panic", in: "*1\r\n$9223372036854775800\r\nabc", err: eInvalidBulk},
	{name: "expected dollar", in: "*1\r\nx3\r\n", err: "Protocol error: expected '$', got 'x'"},
	{name: "expected dollar crlf", in: "*1\r\n\r\n", err: "Protocol error: expected '$', got ' '"},
	{name: "expected dollar lf", in: "*1\r\n\n\r\n", err: "Protocol error: expected '$', got ' '"},
	{name: "expected dollar high byte", in: "*1\r\n\xff3\r\n", err: "Protocol error: expected '$', got '\xff'"},
	{name: "expected dollar second arg", in: "*2\r\n$1\r\na\r\n:1\r\n", err: "Protocol error: expected '$', got ':'"},
	{name: "bulk negative", in: "*1\r\n$-1\r\n", err: eInvalidBulk},
	{name: "bulk empty", in: "*1\r\n$\r\n", err: eInvalidBulk},
	{name: "bulk plus", in: "*1\r\n$+1\r\n", err: eInvalidBulk},
	{name: "bulk above max", in: "*1\r\n$536870913\r\n", err: eInvalidBulk},
	{name: "bulk overflow", in: "*1\r\n$99999999999999999999\r\n", err: eInvalidBulk},
	{name: "bulk 19 digits", in: "*1\r\n$1000000000000000000\r\n", err: eInvalidBulk},
	{name: "bulk custom max", in: "*1\r\n$11\r\n", lim: Limits{MaxBulkLen: 10}, err: eInvalidBulk},
	{name: "bulk at custom max", in: mb("0123456789"), lim: Limits{MaxBulkLen: 10}, want: cmds{{"0123456789"}}},
	{name: "too big mbulk count", in: "*" + strings.Repeat("1", 65536), err: eBigMbulk},
	{name: "mbulk count at limit waits", in: "*" + strings.Repeat("1", 65535)},
	{name: "too big bulk count", in: "*1\r\n$" + strings.Repeat("1", 65536), err: eBigBulk},
	{name: "too big inline", in: strings.Repeat("a", 65537), err: eBigInline},
	{name: "unbalanced double", in: `set a "b"c` + "\r\n", err: eUnbalanced},
	{name: "unbalanced single", in: "set a 'b\r\n", err: eUnbalanced},
	{name: "unbalanced single after", in: "set a 'b'c\r\n", err: eUnbalanced},
	{name: "unbalanced escaped quote", in: `echo "abc\"` + "\r\n", err: eUnbalanced},
	{name: "unbalanced mid token", in: `echo a"b c"d` + "\r\n", err: eUnbalanced},
	{name: "unbalanced lone quote", in: "\"\r\n", err: eUnbalanced},
	{name: "unbalanced backslash end", in: "\"a\\\n", err: eUnbalanced},

	{name: "commands before error", in: "PING\r\n" + mb("PING") + "*x\r\n", want: cmds{{"PING"}, {"PING"}}, err: eInvalidMbulk},
	{name: "commands after error dropped", in: "*x\r\nPING\r\n", err: eInvalidMbulk},
	{name: "error mid command", in: mb("GET", "a") + "*2\r\n$3\r\nGET\r\n$-2\r\n", want: cmds{{"GET", "a"}}, err: eInvalidBulk},

	{name: "unauth count", in: "*11\r\n", unauth: true, err: eUnauthMbulk},
	{name: "unauth count 10", in: "*10\r\n", unauth: true},
	{name: "unauth invalid before unauth", in: "*2147483648\r\n", unauth: true, err: eInvalidMbulk},
	{name: "unauth bulk", in: "*1\r\n$16385\r\n", unauth: true, err: eUnauthBulk},
	{name: "unauth bulk 16384", in: "*1\r\n$16384\r\n", unauth: true},
	{name: "unauth bulk invalid first", in: "*1\r\n$536870913\r\n", unauth: true, err: eInvalidBulk},
	{name: "unauth inline unlimited", in: "ECHO " + strings.Repeat("a", 20000) + "\n", unauth: true,
		want: cmds{{"ECHO", strings.Repeat("a", 20000)}}},
	{name: "unauth pipeline", in: "AUTH x\r\n" + mb("PING") + "*11\r\n", unauth: true,
		want: cmds{{"AUTH", "x"}, {"PING"}}, err: eUnauthMbulk},
}

func TestReadBatchCases(t *testing.T) {
	for _, tc := range readCases {
		t.Run(tc.name, func(t *testing.T) {
			// Every way of splitting the input must give the same result; a
			// chunk of 1 splits it at every byte boundary.
			for _, chunk := range []int{0, 1, 2, 3, 7, 4096} {
				if chunk > 0 && chunk < 3 && len(tc.in) > 1<<16 {
					continue // redundant with the other sizes, and slow with -race
				}
				got, err := parseAll(t, []byte(tc.in), chunk, tc.lim, !tc.unauth)
				require.Equal(t, tc.want, got, "chunk %d", chunk)
				if tc.err == "" {
					require.ErrorIs(t, err, io.EOF, "chunk %d", chunk)
					continue
				}
				var pe *ProtocolError
				require.ErrorAs(t, err, &pe, "chunk %d", chunk)
				require.Equal(t, tc.err, pe.Error(), "chunk %d", chunk)
				require.Equal(t, tc.err, err.Error())
				require.NotContains(t, pe.Msg, "\r")
				require.NotContains(t, pe.Msg, "\n")
			}
		})
	}
}

func TestProtocolErrorAs(t *testing.T) {
	_, err := parseAll(t, []byte("*x\r\n"), 0, Limits{}, true)
	var pv ProtocolError
	require.True(t, errors.As(err, &pv))
	require.Equal(t, eInvalidMbulk, pv.Msg)
	var pp *ProtocolError
	require.True(t, errors.As(err, &pp))
	require.Equal(t, eInvalidMbulk, pp.Msg)
}

func TestErrorIsSticky(t *testing.T) {
	rd := NewReader(&chunkReader{data: []byte("PING\r\n*x\r\nPING\r\n")}, Limits{})
	dst, err := rd.ReadBatch(nil)
	require.NoError(t, err)
	require.Len(t, dst, 1)
	for i := 0; i < 3; i++ {
		dst, err = rd.ReadBatch(dst)
		require.Empty(t, dst)
		require.EqualError(t, err, eInvalidMbulk)
	}
}

func TestPipelineIsOneBatch(t *testing.T) {
	var in strings.Builder
	for i := 0; i < 100; i++ {
		in.WriteString(mb("SET", fmt.Sprint("key", i), "value"))
	}
	rd := NewReader(&chunkReader{data: []byte(in.String())}, Limits{})
	dst, err := rd.ReadBatch(nil)
	require.NoError(t, err)
	require.Len(t, dst, 100)
	require.Equal(t, "key99", string(dst[99][1]))
	require.Equal(t, in.Len(), rd.Buffered())
	_, err = rd.ReadBatch(dst)
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, 0, rd.Buffered())
}

func TestUnauthenticatedOneCommandPerBatch(t *testing.T) {
	// Redis runs AUTH before parsing what follows it in the same read.
	in := "AUTH secret\r\n" + "*11\r\n$4\r\nECHO\r\n" + strings.Repeat("$1\r\na\r\n", 10)
	rd := NewReader(&chunkReader{data: []byte(in)}, Limits{})
	rd.SetAuthenticated(false)
	dst, err := rd.ReadBatch(nil)
	require.NoError(t, err)
	require.Equal(t, 1, len(dst))
	require.Equal(t, "AUTH", string(dst[0][0]))
	rd.SetAuthenticated(true)
	dst, err = rd.ReadBatch(dst)
	require.NoError(t, err)
	require.Len(t, dst, 1)
	require.Len(t, dst[0], 11)
}

func TestBufferedClientList(t *testing.T) {
	// CLIENT LIST run alone reports qbuf=26 in Redis: its own bytes.
	rd := NewReader(&chunkReader{data: []byte(mb("client", "list") + "*1\r\n$4\r\nPI")}, Limits{})
	dst, err := rd.ReadBatch(nil)
	require.NoError(t, err)
	require.Len(t, dst, 1)
	require.Equal(t, 26+10, rd.Buffered())
	_, err = rd.ReadBatch(dst)
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, 2, rd.Buffered(), "while waiting only unparsed bytes count")
}

func TestArgumentsDoNotOverlap(t *testing.T) {
	rd := NewReader(&chunkReader{data: []byte(mb("a", "b") + "x y\n")}, Limits{})
	dst, err := rd.ReadBatch(nil)
	require.NoError(t, err)
	require.Len(t, dst, 2)
	for _, cmd := range dst {
		for _, a := range cmd {
			require.Equal(t, len(a), cap(a))
		}
	}
	dst[0][0] = append(dst[0][0], 'Z')
	require.Equal(t, "b", string(dst[0][1]))
}

// errAfterReader returns its data together with err on the last Read.
type errAfterReader struct {
	data []byte
	err  error
}

func (e *errAfterReader) Read(p []byte) (int, error) {
	n := copy(p, e.data)
	e.data = e.data[n:]
	if len(e.data) == 0 {
		return n, e.err
	}
	return n, nil
}

func TestIOErrorAfterCommands(t *testing.T) {
	boom := errors.New("boom")
	rd := NewReader(&errAfterReader{data: []byte("PING\r\nECHO a\r\n"), err: boom}, Limits{})
	dst, err := rd.ReadBatch(nil)
	require.NoError(t, err)
	require.Len(t, dst, 2)
	_, err = rd.ReadBatch(dst)
	require.ErrorIs(t, err, boom)
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

func TestNoProgress(t *testing.T) {
	_, err := NewReader(zeroReader{}, Limits{}).ReadBatch(nil)
	require.ErrorIs(t, err, io.ErrNoProgress)
}

// countingReader hands out its chunks, never more than one per Read, and
// counts the Reads, so a test can see that a batch needed a single Read.
type countingReader struct {
	chunks [][]byte
	reads  int
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.reads++
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.chunks[0])
	c.chunks[0] = c.chunks[0][n:]
	if len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
	}
	return n, nil
}

func TestOneReadPerBatch(t *testing.T) {
	cr := &countingReader{chunks: [][]byte{[]byte(strings.Repeat(mb("SET", "k", "v"), 50) + "*3\r\n$3\r\nSE"), []byte("T\r\n$1\r\nk\r\n$1\r\nv\r\n")}}
	rd := NewReader(cr, Limits{})
	dst, err := rd.ReadBatch(nil)
	require.NoError(t, err)
	require.Len(t, dst, 50)
	require.Equal(t, 1, cr.reads)
	dst, err = rd.ReadBatch(dst)
	require.NoError(t, err)
	require.Len(t, dst, 1)
	require.Equal(t, []string{"SET", "k", "v"}, []string{string(dst[0][0]), string(dst[0][1]), string(dst[0][2])})
	require.Equal(t, 2, cr.reads)
}

func TestArgumentsMayBeModified(t *testing.T) {
	cr := &countingReader{chunks: [][]byte{[]byte("get a\r\n*1\r\n$4\r\nPI"), []byte("NG\r\n")}}
	rd := NewReader(cr, Limits{})
	dst, err := rd.ReadBatch(nil)
	require.NoError(t, err)
	require.Len(t, dst, 1)
	copy(dst[0][0], "GET")
	dst[0][1][0] = 'x'
	dst, err = rd.ReadBatch(dst)
	require.NoError(t, err)
	require.Equal(t, "PING", string(dst[0][0]))
}

func TestQueryBufLimit(t *testing.T) {
	lim := Limits{MaxQueryBuf: 1024}
	// An element larger than the limit.
	in := "*2\r\n$4\r\nECHO\r\n$2000\r\n" + strings.Repeat("y", 1500)
	for _, chunk := range []int{0, 100} {
		_, err := parseAll(t, []byte(in), chunk, lim, true)
		require.ErrorIs(t, err, ErrQueryBufLimit, "chunk %d", chunk)
	}
	// A count line growing past the limit.
	_, err := parseAll(t, []byte("*"+strings.Repeat("1", 2000)), 100, lim, true)
	require.ErrorIs(t, err, ErrQueryBufLimit)

	// As in Redis, completed arguments of the command in progress do not
	// count: three arguments of 800 bytes pass a 1024 byte limit.
	v := strings.Repeat("x", 800)
	got, err := parseAll(t, []byte(mb("RPUSH", v, v, v)), 256, lim, true)
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, cmds{{"RPUSH", v, v, v}}, got)

	// Sticky.
	rd := NewReader(&chunkReader{data: []byte(in)}, lim)
	_, err = rd.ReadBatch(nil)
	require.ErrorIs(t, err, ErrQueryBufLimit)
	_, err = rd.ReadBatch(nil)
	require.ErrorIs(t, err, ErrQueryBufLimit)
}

// allocatedBytes runs f and reports the bytes it allocated.
func allocatedBytes(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestHugeAnnouncedLengthsCostLittle(t *testing.T) {
	for _, in := range []string{
		"*2147483647\r\n",
		"*2147483647\r\n$536870912\r\nabc",
		"*1\r\n$536870912\r\n" + strings.Repeat("z", 100000),
		"*1048576\r\n" + strings.Repeat("$1\r\na\r\n", 1000),
	} {
		var rd *Reader
		n := allocatedBytes(func() {
			rd = NewReader(&chunkReader{data: []byte(in), n: 1000}, Limits{})
			_, err := rd.ReadBatch(nil)
			require.ErrorIs(t, err, io.EOF)
		})
		// The buffer grows by doubling as data arrives: at most twice what
		// was received (plus the initial 16 KiB and bookkeeping).
		require.LessOrEqual(t, len(rd.buf), max(initialBufSize, 2*len(in)), "%.20q", in)
		require.Less(t, n, uint64(64<<10+8*len(in)), "%.20q: allocated %d bytes", in, n)
	}
}

func TestBufferShrinksWhenIdle(t *testing.T) {
	// Many arguments below BigArg: the completed ones of the command in
	// progress leave the buffer (spill), which grows only to a few times
	// spillMin, then goes back to its initial size.
	args := []string{"MSET"}
	for i := 0; i < 64; i++ {
		args = append(args, fmt.Sprint("k", i), strings.Repeat("v", 16<<10))
	}
	cr := &countingReader{chunks: [][]byte{[]byte(mb(args...)), []byte(mb("GET", "k"))}}
	rd := NewReader(cr, Limits{})
	dst, err := rd.ReadBatch(nil)
	require.NoError(t, err)
	require.Equal(t, args, strs(dst[0]))
	require.Greater(t, len(rd.buf), initialBufSize)
	require.LessOrEqual(t, len(rd.buf), 4*spillMin, "the buffer held the whole 1 MB command")
	dst, err = rd.ReadBatch(dst)
	require.NoError(t, err)
	require.Equal(t, "GET", string(dst[0][0]))
	require.Equal(t, initialBufSize, len(rd.buf))
}

func TestLargeValuesInPipeline(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var in strings.Builder
	var want cmds
	for i := 0; i < 20; i++ {
		v := strings.Repeat(string(rune('a'+i)), rng.Intn(200000))
		in.WriteString(mb("SET", "k", v))
		want = append(want, []string{"SET", "k", v})
		in.WriteString("PING\r\n")
		want = append(want, []string{"PING"})
	}
	for _, chunk := range []int{0, 1000, 70000} {
		got, err := parseAll(t, []byte(in.String()), chunk, Limits{}, true)
		require.ErrorIs(t, err, io.EOF)
		require.Equal(t, want, got)
	}
}

func TestManyArgumentsArrivingSlowly(t *testing.T) {
	// The command in progress is parsed incrementally, never from its start
	// again, so this stays linear.
	const n = 200000
	in := fmt.Sprintf("*%d\r\n", n) + strings.Repeat("$1\r\na\r\n", n)
	got, err := parseAll(t, []byte(in), 512, Limits{}, true)
	require.ErrorIs(t, err, io.EOF)
	require.Len(t, got, 1)
	require.Len(t, got[0], n)
}

// A spill may move only empty arguments: they are still listed, empty,
// and a big argument moved with them keeps its own bytes.
func TestSpillEmptyArguments(t *testing.T) {
	for _, withBig := range []bool{false, true} {
		args := []string{"RPUSH", "list"}
		for i := 0; i < 100000; i++ {
			args = append(args, "")
			if withBig && i%20000 == 10000 {
				args = append(args, strings.Repeat("b", BigArg+1))
			}
		}
		requireArgumentsBack(t, args, []int{1000, 70000}, fmt.Sprintf("big %v", withBig))
	}
}

// requireArgumentsBack sends the command args, then PING, in reads of
// each of pieces bytes, and requires both back as sent.
func requireArgumentsBack(t *testing.T, args []string, pieces []int, label string) {
	t.Helper()
	in := []byte(mb(args...) + mb("PING"))
	for _, piece := range pieces {
		rd := NewReader(&chunkReader{data: in, n: piece}, Limits{})
		got, err := collect(t, rd)
		require.ErrorIs(t, err, io.EOF)
		require.Len(t, got, 2, "%s, piece %d", label, piece)
		require.True(t, slices.Equal(args, got[0]), "%s, piece %d: arguments changed", label, piece)
		require.Equal(t, []string{"PING"}, got[1])
	}
}

// Commands of many arguments of every length, empty ones and big ones
// among them, spill in pieces that end anywhere: each argument comes back
// whole, in its place, from the spills' shared allocations or its own.
func TestSpillMixedArguments(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for iter := 0; iter < 6; iter++ {
		args := []string{"RPUSH", "list"}
		total := 0
		for total < 600<<10 {
			var n int
			switch r := rng.Intn(100); {
			case r < 20:
				n = 0
			case r < 97:
				n = rng.Intn(3000)
			default:
				n = BigArg + rng.Intn(5000)
			}
			b := make([]byte, n)
			rng.Read(b)
			args = append(args, string(b))
			total += n
		}
		requireArgumentsBack(t, args, []int{777, 4096, 70001}, fmt.Sprintf("iter %d", iter))
	}
}

func TestRandomPipelines(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for iter := 0; iter < 300; iter++ {
		var in []byte
		var want cmds
		for c := rng.Intn(20); c >= 0; c-- {
			args := make([]string, 1+rng.Intn(5))
			for i := range args {
				b := make([]byte, rng.Intn(40))
				rng.Read(b)
				args[i] = string(b)
			}
			if rng.Intn(3) == 0 {
				in = append(in, inlineEncode(args)...)
			} else {
				in = append(in, mb(args...)...)
			}
			want = append(want, args)
		}
		chunk := rng.Intn(64)
		got, err := parseAll(t, in, chunk, Limits{}, true)
		require.ErrorIs(t, err, io.EOF)
		require.Equal(t, want, got, "chunk %d input %q", chunk, in)
	}
}

// inlineEncode quotes every argument so that it round-trips through an
// inline request.
func inlineEncode(args []string) []byte {
	var b []byte
	for i, a := range args {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, '"')
		for j := 0; j < len(a); j++ {
			c := a[j]
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < ' ' || c > '~':
				b = fmt.Appendf(b, "\\x%02x", c)
			default:
				b = append(b, c)
			}
		}
		b = append(b, '"')
	}
	return append(b, '\r', '\n')
}

func TestString2ll(t *testing.T) {
	for _, tc := range []struct {
		in string
		v  int64
		ok bool
	}{
		{"0", 0, true}, {"1", 1, true}, {"-1", -1, true}, {"9223372036854775807", 9223372036854775807, true},
		{"-9223372036854775808", -9223372036854775808, true}, {"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false}, {"18446744073709551616", 0, false}, {"", 0, false},
		{"-", 0, false}, {"+1", 0, false}, {"01", 0, false}, {"-0", 0, false}, {" 1", 0, false},
		{"1 ", 0, false}, {"1a", 0, false}, {"000000000000000000001", 0, false},
	} {
		v, ok := redisconv.ParseInt([]byte(tc.in))
		require.Equal(t, tc.ok, ok, tc.in)
		require.Equal(t, tc.v, v, tc.in)
	}
}

// repeatReader serves an endless repetition of data.
type repeatReader struct {
	data []byte
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := copy(p[n:], r.data[r.off:])
		n += k
		r.off = (r.off + k) % len(r.data)
	}
	return n, nil
}

func TestSteadyStateZeroAllocs(t *testing.T) {
	rd := NewReader(&repeatReader{data: []byte(strings.Repeat(mb("SET", "key", "value"), 1000))}, Limits{})
	dst, err := rd.ReadBatch(nil)
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(1000, func() {
		dst, err = rd.ReadBatch(dst)
		if err != nil || len(dst) == 0 {
			panic(err)
		}
	})
	require.Zero(t, allocs)
}

func benchReadBatch(b *testing.B, cmd string) {
	data := []byte(strings.Repeat(cmd, 1000))
	rd := NewReader(&repeatReader{data: data}, Limits{})
	var dst [][][]byte
	var err error
	b.SetBytes(int64(len(cmd)))
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; {
		dst, err = rd.ReadBatch(dst)
		if err != nil {
			b.Fatal(err)
		}
		n += len(dst)
	}
}

// BenchmarkReadBatch measures pipelined "SET key value"; ns/op is per command.
func BenchmarkReadBatch(b *testing.B) {
	b.Run("multibulk", func(b *testing.B) { benchReadBatch(b, mb("SET", "key:000001", "value-0123456789")) })
	b.Run("inline", func(b *testing.B) { benchReadBatch(b, "SET key:000001 value-0123456789\r\n") })
}

// limitedRepeat serves data n times, then tail, then io.EOF.
type limitedRepeat struct {
	data, tail []byte
	n          int
	rest       []byte
}

func (l *limitedRepeat) Read(p []byte) (int, error) {
	if len(l.rest) == 0 {
		switch {
		case l.n > 0:
			l.n--
			l.rest = l.data
		case l.tail != nil:
			l.rest, l.tail = l.tail, nil
		default:
			return 0, io.EOF
		}
	}
	k := copy(p, l.rest)
	l.rest = l.rest[k:]
	return k, nil
}

func TestSkippedInputIsReleased(t *testing.T) {
	for _, junk := range []string{"\r\n", "\n", "*0\r\n", "*-1\r\n", "   \r\n"} {
		rd := NewReader(&limitedRepeat{data: []byte(strings.Repeat(junk, 4096)), n: 1000, tail: []byte("PING\r\n")}, Limits{})
		dst, err := rd.ReadBatch(nil)
		require.NoError(t, err)
		require.Equal(t, [][][]byte{{[]byte("PING")}}, dst)
		require.Equal(t, initialBufSize, len(rd.buf), "%q", junk)
	}
}

// BatchDone: once the batch ran, only what was not parsed counts in
// qbuf (Redis trims what it processed), so an idle client shows 0.
func TestBatchDoneLeavesUnparsed(t *testing.T) {
	rd := NewReader(&chunkReader{data: []byte(mb("client", "list") + "*1\r\n$4\r\nPI")}, Limits{})
	dst, err := rd.ReadBatch(nil)
	require.NoError(t, err)
	require.Equal(t, 26+10, rd.Buffered(), "the batch runs: its bytes count")
	// The next command's headers are parsed already, as Redis parses
	// them into its argument count and bulk length: "PI" is left.
	require.Equal(t, 2, rd.BatchDone())
	require.Equal(t, 2, rd.Buffered())
	require.Equal(t, int64(initialBufSize), rd.Allocated())
	require.False(t, rd.Large())

	rd = NewReader(&chunkReader{data: []byte(mb("PING"))}, Limits{})
	dst, err = rd.ReadBatch(dst)
	require.NoError(t, err)
	require.Equal(t, 0, rd.BatchDone(), "idle: nothing held")
}

// Release gives the buffer back only when it holds nothing, clears the
// argument lists kept for reuse (they point into it), and the next read
// allocates a buffer again.
func TestReleaseBuffer(t *testing.T) {
	cr := &countingReader{chunks: [][]byte{[]byte(mb("SET", "k", "v") + "*2\r\n$3\r\nGET"), []byte("\r\n$1\r\nk\r\n"), []byte(mb("PING"))}}
	rd := NewReader(cr, Limits{})
	dst, err := rd.ReadBatch(nil)
	require.NoError(t, err)
	require.Equal(t, "SET", string(dst[0][0]))
	rd.BatchDone()
	require.False(t, rd.Release(dst), "a command half received holds the buffer")
	dst, err = rd.ReadBatch(dst)
	require.NoError(t, err)
	require.Equal(t, []string{"GET", "k"}, strs(dst[0]))
	rd.BatchDone()
	require.True(t, rd.Release(dst))
	require.Nil(t, rd.buf)
	require.Equal(t, int64(0), rd.Allocated())
	require.Equal(t, 0, rd.Buffered())
	for _, a := range dst[0][:cap(dst[0])] {
		require.Nil(t, a, "the kept argument lists no longer point into the buffer")
	}
	require.False(t, rd.Release(dst), "nothing left to release")
	dst, err = rd.ReadBatch(dst)
	require.NoError(t, err)
	require.Equal(t, []string{"PING"}, strs(dst[0]))
	require.Equal(t, int64(initialBufSize), rd.Allocated())
}

// Large: the buffer outgrew its initial size, or a big argument came;
// the allocation Redis would have made for it shows in TakePeak until
// the next call.
func TestLargeAndPeak(t *testing.T) {
	args := []string{"MSET"}
	for i := 0; i < 8; i++ {
		args = append(args, fmt.Sprint("k", i), strings.Repeat("v", 16<<10))
	}
	rd := NewReader(&chunkReader{data: []byte(mb(args...) + mb("PING")), n: 4096}, Limits{})
	dst, err := rd.ReadBatch(nil)
	require.NoError(t, err)
	require.True(t, rd.Large())
	require.Greater(t, rd.TakePeak(), int64(initialBufSize))

	big := strings.Repeat("x", 100000)
	rd = NewReader(&chunkReader{data: []byte(mb("SET", "k", big)), n: 4096}, Limits{})
	dst, err = rd.ReadBatch(dst)
	require.NoError(t, err)
	require.Equal(t, big, string(dst[0][2]))
	require.True(t, rd.Large())
	require.Equal(t, int64(100002), rd.TakePeak(), "the big argument's allocation, as Redis's query buffer")
	require.Equal(t, int64(initialBufSize), rd.TakePeak(), "then the buffer alone")
	require.True(t, rd.Release(dst))
	require.False(t, rd.Large())
}

// A command of many arguments, arriving in pieces of several sizes, with
// big ones among them: its completed arguments leave the buffer as it
// arrives (spill), so the buffer stays a few times spillMin whatever the
// command's length, and the arguments come out whole and in order.
func TestSpillManyArguments(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	args := []string{"RPUSH", "list"}
	for i := 0; i < 100000; i++ {
		n := rng.Intn(300)
		if i%10000 == 5000 {
			n = BigArg + rng.Intn(10000)
		}
		args = append(args, strings.Repeat(string(rune('a'+i%26)), n))
	}
	in := []byte(mb(args...) + mb("PING"))
	for _, piece := range []int{1000, 4096, 70000, 1 << 20} {
		rd := NewReader(&chunkReader{data: in, n: piece}, Limits{})
		dst, err := rd.ReadBatch(nil)
		require.NoError(t, err)
		require.True(t, slices.Equal(args, strs(dst[0])), "piece %d: arguments changed", piece)
		require.LessOrEqual(t, len(rd.buf), 4*max(spillMin, piece), "piece %d", piece)
		require.Nil(t, rd.done, "the spilled arguments are not kept")
		require.Nil(t, rd.doneBufs, "nor their allocations")
		require.Equal(t, len(dst[0]), cap(dst[0]), "piece %d: the list outgrew the command", piece)
		if len(dst) == 1 {
			dst, err = rd.ReadBatch(dst)
			require.NoError(t, err)
			dst = append(dst[:0:0], nil, dst[0])
		}
		require.Equal(t, []string{"PING"}, strs(dst[1]))
	}
}
