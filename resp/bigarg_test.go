package resp

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func strs(args [][]byte) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = string(a)
	}
	return out
}

// within reports whether b lies inside buf's backing array.
func within(b, buf []byte) bool {
	if len(b) == 0 || cap(buf) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	return p >= lo && p < lo+uintptr(cap(buf))
}

// pattern is n bytes with CR, LF and NUL among them.
func pattern(n int, seed byte) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) ^ seed
	}
	return string(b)
}

// A big bulk is read into an allocation of its own, exactly its length,
// which the reader never touches again: the server stores it as it is.
// The reader's buffer does not grow for it.
func TestBigArgOwnAllocation(t *testing.T) {
	for _, size := range []int{BigArg, BigArg + 1, 100000, 3 << 20} {
		for _, chunk := range []int{0, 1, 1000, 16 << 10, 70000} {
			if chunk == 1 && size > 100000 {
				continue
			}
			val := pattern(size, byte(size))
			in := mb("SET", "k", val) + mb("GET", "k") + mb("SET", "k2", pattern(size, 1)) + mb("PING")
			rd := NewReader(&chunkReader{data: []byte(in), n: chunk}, Limits{})
			var got cmds
			var kept [][]byte
			var dst [][][]byte
			for {
				var err error
				dst, err = rd.ReadBatch(dst)
				if err != nil {
					require.ErrorIs(t, err, io.EOF)
					break
				}
				for _, cmd := range dst {
					got = append(got, strs(cmd))
					for _, a := range cmd {
						if IsOwned(a) {
							require.Equal(t, len(a), cap(a), "an owned argument has cap == len")
							require.False(t, within(a, rd.buf), "an owned argument is not in the buffer")
							kept = append(kept, a)
						}
					}
				}
				require.LessOrEqual(t, len(rd.buf), 4*initialBufSize, "size %d chunk %d: the buffer grew for a big argument", size, chunk)
			}
			require.Equal(t, cmds{{"SET", "k", val}, {"GET", "k"}, {"SET", "k2", pattern(size, 1)}, {"PING"}}, got, "size %d chunk %d", size, chunk)
			// What the caller kept was not overwritten by later reads.
			require.Len(t, kept, 2)
			require.True(t, string(kept[0]) == val)
			require.True(t, string(kept[1]) == pattern(size, 1))
		}
	}
}

// An inline request's argument lies in the buffer; a big one (inline
// requests reach 64 KiB) is copied out, since IsOwned says it may be kept.
func TestBigInlineArgOwned(t *testing.T) {
	val := strings.Repeat("i", BigArg+100)
	rd := NewReader(&chunkReader{data: []byte("SET k " + val + "\r\nPING\r\n"), n: 5000}, Limits{})
	dst, err := rd.ReadBatch(nil)
	require.NoError(t, err)
	require.Equal(t, []string{"SET", "k", val}, strs(dst[0]))
	require.True(t, IsOwned(dst[0][2]))
	require.False(t, within(dst[0][2], rd.buf))
	require.Equal(t, len(dst[0][2]), cap(dst[0][2]))
}

// Split at every boundary: the same commands whatever the reads, with
// the big-argument threshold lowered so that short input exercises it.
func TestBigArgSplitAtEveryBoundary(t *testing.T) {
	in := mb("SET", "key", "0123456789abcdef") + mb("MSET", "a", "xyzxyzxyz", "b", "", "c", "1234567") +
		"*2\r\n$4\r\nECHO\r\n$12\r\nhello\r\nworld\r\n" + "PING\r\n" + mb("GET", "0123456789")
	want := cmds{{"SET", "key", "0123456789abcdef"}, {"MSET", "a", "xyzxyzxyz", "b", "", "c", "1234567"},
		{"ECHO", "hello\r\nworld"}, {"PING"}, {"GET", "0123456789"}}
	for _, bigMin := range []int64{1, 4, 8, 9, 10, BigArg} {
		for cut := 0; cut <= len(in); cut++ {
			rd := NewReader(&splitReader{parts: [][]byte{[]byte(in[:cut]), []byte(in[cut:])}}, Limits{})
			rd.bigMin = bigMin
			got, err := collect(t, rd)
			require.ErrorIs(t, err, io.EOF)
			require.Equal(t, want, got, "bigMin %d cut %d", bigMin, cut)
		}
		for chunk := 1; chunk <= 12; chunk++ {
			rd := NewReader(&chunkReader{data: []byte(in), n: chunk}, Limits{})
			rd.bigMin = bigMin
			got, err := collect(t, rd)
			require.ErrorIs(t, err, io.EOF)
			require.Equal(t, want, got, "bigMin %d chunk %d", bigMin, chunk)
		}
	}
}

// splitReader returns its parts one per Read.
type splitReader struct{ parts [][]byte }

func (s *splitReader) Read(p []byte) (int, error) {
	for len(s.parts) > 0 && len(s.parts[0]) == 0 {
		s.parts = s.parts[1:]
	}
	if len(s.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.parts[0])
	s.parts[0] = s.parts[0][n:]
	return n, nil
}

// A length larger than what follows: the command waits, and what is
// allocated follows what arrived (at most bigArgReach times it), not the
// length.
func TestBigArgAnnouncedLongerThanSent(t *testing.T) {
	for _, sent := range []int{0, 10, BigArg, 1 << 20} {
		in := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$536870912\r\n" + strings.Repeat("x", sent)
		var rd *Reader
		n := allocatedBytes(func() {
			rd = NewReader(&chunkReader{data: []byte(in), n: 4096}, Limits{})
			dst, err := rd.ReadBatch(nil)
			require.ErrorIs(t, err, io.EOF)
			require.Empty(t, dst)
		})
		require.Less(t, n, uint64(64<<10+bigArgReach*sent), "sent %d: allocated %d bytes", sent, n)
		require.Equal(t, sent, rd.Buffered(), "qbuf counts the bytes of the big argument")
	}
}

// A connection closed in the middle of a big argument leaves its
// allocation, and those it outgrew, as garbage: Abandoned counts them;
// a reader that took only small commands abandons nothing.
func TestBigArgAbandoned(t *testing.T) {
	const sent = 1 << 20
	in := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$536870912\r\n" + strings.Repeat("x", sent)
	rd := NewReader(&chunkReader{data: []byte(in), n: 4096}, Limits{})
	_, err := rd.ReadBatch(nil)
	require.ErrorIs(t, err, io.EOF)
	require.GreaterOrEqual(t, rd.Abandoned(), int64(sent))

	rd = NewReader(&chunkReader{data: []byte(mb("SET", "k", "v")), n: 4096}, Limits{})
	dst, err := rd.ReadBatch(nil)
	require.NoError(t, err)
	require.Len(t, dst, 1)
	require.Zero(t, rd.Abandoned())
}

// A connection that closes with its last batch not finished (its
// replies held) counts what that batch's big argument outgrew once:
// Abandoned, then Forget of the batch, report it between them once.
func TestAbandonedThenForgetCountsOnce(t *testing.T) {
	val := pattern(3000000, 5)
	rd := NewReader(&chunkReader{data: []byte(mb("SET", "k", val)), n: 20000}, Limits{})
	dst, err := rd.ReadBatch(nil)
	require.NoError(t, err)
	require.Equal(t, []string{"SET", "k", val}, strs(dst[0]))
	grown := rd.grown
	require.Positive(t, grown, "the argument outgrew allocations on the way")
	abandoned := rd.Abandoned()
	require.GreaterOrEqual(t, abandoned, grown)
	require.Equal(t, int64(3000000), rd.Forget(dst), "the argument itself, not its outgrown allocations again")
}

// proto-max-bulk-len bounds a big argument as any other.
func TestBigArgMaxBulkLen(t *testing.T) {
	lim := Limits{MaxBulkLen: 100000}
	ok := mb("SET", "k", pattern(100000, 3))
	got, err := parseAll(t, []byte(ok), 5000, lim, true)
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, cmds{{"SET", "k", pattern(100000, 3)}}, got)

	tooLong := mb("PING") + mb("SET", "k", pattern(100001, 3))
	got, err = parseAll(t, []byte(tooLong), 5000, lim, true)
	require.EqualError(t, err, eInvalidBulk)
	require.Equal(t, cmds{{"PING"}}, got)
}

// client-query-buffer-limit counts the bytes of a big argument being
// received, as Redis's query buffer holds them.
func TestBigArgQueryBufLimit(t *testing.T) {
	lim := Limits{MaxQueryBuf: 200000}
	fits := mb("SET", "k", pattern(150000, 4)) + mb("SET", "k", pattern(150000, 5))
	got, err := parseAll(t, []byte(fits), 7000, lim, true)
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, cmds{{"SET", "k", pattern(150000, 4)}, {"SET", "k", pattern(150000, 5)}}, got)

	over := mb("PING") + mb("SET", "k", pattern(300000, 4))
	rd := NewReader(&chunkReader{data: []byte(over), n: 7000}, lim)
	got, err = collect(t, rd)
	require.ErrorIs(t, err, ErrQueryBufLimit)
	require.Equal(t, cmds{{"PING"}}, got)
	_, err = rd.ReadBatch(nil)
	require.ErrorIs(t, err, ErrQueryBufLimit)
}

// Unauthenticated clients never reach the big-argument path: their bulks
// stop at 16384 bytes.
func TestBigArgUnauthenticated(t *testing.T) {
	got, err := parseAll(t, []byte(mb("AUTH", pattern(BigArg, 1))), 1000, Limits{}, false)
	require.EqualError(t, err, eUnauthBulk)
	require.Empty(t, got)
}

// FuzzBigArgs: whatever the input, lowering the big-argument threshold
// (so that short arguments take the big path) and splitting the reads
// changes nothing in what is parsed.
func FuzzBigArgs(f *testing.F) {
	for _, tc := range readCases {
		if len(tc.in) < 4096 {
			f.Add([]byte(tc.in), uint8(3), uint8(5))
		}
	}
	f.Add([]byte(mb("SET", "key", "a longer value\r\n")), uint8(4), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, bigMin, chunk uint8) {
		if len(data) > 20000 {
			return
		}
		whole := resultOf(t, data, 0, Limits{}, true)
		rd := NewReader(&chunkReader{data: bytes.Clone(data), n: int(chunk)}, Limits{})
		rd.bigMin = int64(bigMin) + 1
		got, err := collect(t, rd)
		res := parseResult{got, ""}
		if err != io.EOF {
			res.err = err.Error()
		}
		require.Equal(t, whole, res)
	})
}

// Forget reports the bytes of the big arguments it let go and of the
// allocations they outgrew, once.
func TestForgetReportsBigBytes(t *testing.T) {
	val := pattern(3000000, 9)
	rd := NewReader(&chunkReader{data: []byte(mb("SET", "k", val) + mb("GET", "k")), n: 20000}, Limits{})
	dst, err := rd.ReadBatch(nil)
	require.NoError(t, err)
	require.Equal(t, []string{"SET", "k", val}, strs(dst[0]))
	n := rd.Forget(dst)
	// 3000000 bytes, and the allocation (4x the first read, at most
	// initialBufSize) outgrown on the way: what arrived was less than
	// the length / bigArgReach.
	require.Greater(t, n, int64(3000000+3*initialBufSize))
	require.LessOrEqual(t, n, int64(3000000+4*initialBufSize))
	require.Nil(t, dst[0][:3][2], "the argument list no longer refers to it")
	require.Zero(t, rd.Forget(dst))
	dst, err = rd.ReadBatch(dst)
	require.NoError(t, err)
	require.Equal(t, []string{"GET", "k"}, strs(dst[0]))
	require.Zero(t, rd.Forget(dst))
}
