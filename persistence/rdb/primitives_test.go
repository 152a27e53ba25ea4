package rdb

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/listpack"
	"github.com/zredis/zredis/redisconv"
)

func TestCRC64(t *testing.T) {
	assert.Equal(t, uint64(0xe9c6d914c4b8d9ca), CRC64([]byte("123456789")))
	assert.Equal(t, uint64(0), CRC64(nil))
	// Incremental updates give the same result as one pass.
	data := bytes.Repeat([]byte("redis"), 1000)
	assert.Equal(t, CRC64(data), crc64Update(crc64Update(0, data[:77]), data[77:]))
}

func TestLZFRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 5000)
	for i := range random {
		random[i] = byte(rng.IntN(256))
	}
	cases := []struct {
		name       string
		in         []byte
		compresses bool
	}{
		{"repeated", bytes.Repeat([]byte("a"), 100), true},
		{"text", bytes.Repeat([]byte("hello world, this is redis. "), 50), true},
		{"long run", bytes.Repeat([]byte{0}, 100000), true},
		{"random", random, false},
		{"short", []byte("abcdefghijklmnopqrstuvwxyz"), false},
	}
	var c lzfCompressor
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, ok := c.compress(nil, tc.in, len(tc.in)-4)
			require.Equal(t, tc.compresses, ok)
			if !ok {
				return
			}
			back, err := lzfDecompress(nil, out, len(tc.in))
			require.NoError(t, err)
			assert.Equal(t, tc.in, back)
			// The wrong expected size is an error.
			_, err = lzfDecompress(nil, out, len(tc.in)+1)
			assert.Error(t, err)
		})
	}
}

func TestLZFDecompressRejects(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		n    int
	}{
		{"literal past input", []byte{5, 'a'}, 6},
		{"reference before start", []byte{0, 'a', 0x20, 5}, 4},
		{"reference without offset", []byte{0, 'a', 0x20}, 4},
		{"output overflow", []byte{3, 'a', 'b', 'c', 'd'}, 2},
		{"long reference without length", []byte{0, 'a', 0xE0}, 20},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := lzfDecompress(nil, tc.in, tc.n)
			assert.Error(t, err)
		})
	}
}

func TestParseInt(t *testing.T) {
	cases := []struct {
		in string
		v  int64
		ok bool
	}{
		{"0", 0, true}, {"-1", -1, true}, {"123", 123, true},
		{"9223372036854775807", math.MaxInt64, true}, {"-9223372036854775808", math.MinInt64, true},
		{"9223372036854775808", 0, false}, {"-0", 0, false}, {"01", 0, false}, {"+1", 0, false},
		{"", 0, false}, {"-", 0, false}, {" 1", 0, false}, {"1a", 0, false}, {"99999999999999999999", 0, false},
	}
	for _, tc := range cases {
		v, ok := redisconv.ParseInt([]byte(tc.in))
		assert.Equal(t, tc.ok, ok, tc.in)
		if ok {
			assert.Equal(t, tc.v, v, tc.in)
		}
	}
}

func TestListpackRoundTrip(t *testing.T) {
	elems := []string{"", "a", "0", "127", "128", "-1", "-4096", "4095", "4096", "-32768", "32767", "32768",
		"-8388608", "8388607", "8388608", "2147483647", "-2147483648", "2147483648", "9223372036854775807",
		"-9223372036854775808", "007", "-0", "1.5", string(bytes.Repeat([]byte("x"), 63)),
		string(bytes.Repeat([]byte("y"), 64)), string(bytes.Repeat([]byte("z"), 4095)), string(bytes.Repeat([]byte("w"), 4096)),
		string(bytes.Repeat([]byte("v"), 20000))}
	var lb listpack.Builder
	lb.Reset(nil)
	size := listpack.HeaderSize + 1
	for _, e := range elems {
		lb.Append([]byte(e))
		size += listpack.EntrySize([]byte(e))
	}
	lp := lb.Finish()
	assert.Len(t, lp, size)
	var got []string
	n, err := listpack.Each(lp, func(e listpack.Entry) error {
		got = append(got, string(e.AppendTo(nil)))
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, len(elems), n)
	assert.Equal(t, elems, got)

	// Every truncation and every single-byte change of the header or
	// terminator is caught; no change panics.
	for i := 0; i < len(lp); i++ {
		_, err := listpack.Each(lp[:i], nil)
		assert.Error(t, err, "cut at %d", i)
		c := bytes.Clone(lp)
		c[i] ^= 0xFF
		_, err = listpack.Each(c, nil)
		if i < listpack.HeaderSize || i == len(lp)-1 {
			assert.Error(t, err, "byte %d flipped", i)
		}
	}
}

func TestIntsetRoundTrip(t *testing.T) {
	for _, vs := range [][]int64{{1, 2, 3}, {-40000, 5, 40000}, {math.MinInt64, 0, math.MaxInt64}} {
		b := intsetAppend(nil, vs)
		got, err := intsetDecode(b)
		require.NoError(t, err)
		assert.Equal(t, vs, got)
	}
	bad := [][]byte{
		nil,
		intsetAppend(nil, nil),               // empty
		{2, 0, 0, 0, 2, 0, 0, 0, 5, 0, 1, 0}, // not ascending
		{3, 0, 0, 0, 1, 0, 0, 0, 5, 0, 0},    // bad encoding
		{2, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 5, 0}, // huge length
	}
	for i, b := range bad {
		_, err := intsetDecode(b)
		assert.Error(t, err, "case %d", i)
	}
}

func TestFormatScore(t *testing.T) {
	cases := map[float64]string{0: "0", 1: "1", -3: "-3", 1.5: "1.5", 0.1: "0.10000000000000001",
		math.Inf(1): "inf", math.Inf(-1): "-inf", 1e20: "1e+20", 4503599627370496: "4503599627370496"}
	for v, want := range cases {
		assert.Equal(t, want, string(formatScore(nil, v)), strconv.FormatFloat(v, 'g', -1, 64))
	}
	assert.Equal(t, "-0", string(formatScore(nil, math.Copysign(0, -1))))
}

// TestLZFRandomRoundTrip compresses many inputs of small alphabets (so
// that matches, long runs and literal runs at the size limit all occur)
// and checks the round trip and the size limit.
func TestLZFRandomRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var c lzfCompressor
	compressed := 0
	defer func() { assert.Greater(t, compressed, 300, "inputs that compressed within the limit (653 of 3000)") }()
	for i := 0; i < 3000; i++ {
		n := 1 + rng.IntN(600)
		alphabet := 1 + rng.IntN(40)
		in := make([]byte, n)
		for j := range in {
			in[j] = byte('a' + rng.IntN(alphabet))
		}
		limit := max(1, n-4)
		out, ok := c.compress([]byte("prefix"), in, limit)
		if !ok {
			continue
		}
		compressed++
		require.Equal(t, "prefix", string(out[:6]))
		require.LessOrEqual(t, len(out)-6, limit)
		back, err := lzfDecompress(nil, out[6:], n)
		require.NoError(t, err)
		require.Equal(t, in, back)
	}
}

// OnResize receives the RESIZEDB announcement of each database.
func TestLoadOnResize(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, WriterOptions{Checksum: true})
	require.NoError(t, err)
	require.NoError(t, w.SelectDB(3, 2, 1))
	require.NoError(t, w.WriteEntry("a", keyspace.NewString([]byte("1"), 0)))
	require.NoError(t, w.WriteEntry("b", keyspace.NewString([]byte("2"), 4102444800000)))
	require.NoError(t, w.Close())
	var got [][3]int
	opt := DefaultLoadOptions()
	opt.OnResize = func(db, keys, expires int) { got = append(got, [3]int{db, keys, expires}) }
	_, err = Load(bytes.NewReader(buf.Bytes()), opt, func(int, string, *keyspace.Entry) error { return nil })
	require.NoError(t, err)
	require.Equal(t, [][3]int{{3, 2, 1}}, got)
}

// A RESIZEDB record may announce any count; the hint passed on is bounded
// by what the rest of the input can hold (a 25-byte file announcing 2^28
// keys once made the server reserve tables for them), or by maxResizeHint
// on a stream of unknown size.
func TestLoadOnResizeBounded(t *testing.T) {
	file := []byte("REDIS0010\xfe\x00\xfb\x80\x10\x00\x00\x00\x00\xff")
	file = binary.LittleEndian.AppendUint64(file, 0) // no checksum
	var got [][3]int
	opt := DefaultLoadOptions()
	opt.OnResize = func(db, keys, expires int) { got = append(got, [3]int{db, keys, expires}) }
	_, err := Load(bytes.NewReader(file), opt, nil)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.LessOrEqual(t, got[0][1], len(file)/minKeyBytes)

	got = nil
	_, err = Load(io.MultiReader(bytes.NewReader(file)), opt, nil) // size unknown
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, maxResizeHint, got[0][1])
}
