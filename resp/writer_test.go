package resp

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func joined(bufs [][]byte) string { return string(bytes.Join(bufs, nil)) }

// A value written by reference comes out at its place, whatever is
// written, truncated or back-filled around it.
func TestWriterBulkRef(t *testing.T) {
	v1, v2 := []byte("first value"), []byte("second")

	w := NewWriter()
	w.OK()
	w.BulkRef(v1)
	mark := w.Mark()
	w.BulkRef(v2)
	w.Int(7)
	require.Equal(t, len("+OK\r\n$11\r\nfirst value\r\n$6\r\nsecond\r\n:7\r\n"), w.Len())
	w.Truncate(mark) // CLIENT REPLY OFF drops what came after mark
	w.BulkRef(nil)
	m := w.DeferArray()
	w.BulkRef(v2)
	w.Bulk([]byte("x"))
	w.FillArray(m, 2)
	require.True(t, w.HasRefs())
	want := "+OK\r\n$11\r\nfirst value\r\n$0\r\n\r\n*2\r\n$6\r\nsecond\r\n$1\r\nx\r\n"
	require.Equal(t, len(want), w.Len())
	bufs := w.TakeBuffers(nil)
	require.Equal(t, want, joined(bufs))
	// The buffers are handed over: later replies go elsewhere.
	require.False(t, w.HasRefs())
	require.Equal(t, 0, w.Len())
	w.Simple("PONG")
	require.Equal(t, want, joined(bufs))
	require.Equal(t, "+PONG\r\n", string(w.Bytes()))

	// Bytes copies referenced values in, for callers that want one slice.
	w.Reset()
	w.BulkRef(v1)
	w.Int(1)
	require.Equal(t, "$11\r\nfirst value\r\n:1\r\n", string(w.Bytes()))
	require.False(t, w.HasRefs())

	// Truncating back to before a reference drops it.
	w.Reset()
	w.OK()
	m = w.Mark()
	w.BulkRef(v1)
	w.Truncate(m)
	require.False(t, w.HasRefs())
	require.Equal(t, "+OK\r\n", string(w.Bytes()))
}
