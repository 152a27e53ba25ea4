package replication

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stream returns the bytes of offsets from..to of a test stream whose
// byte at offset o is byte(o).
func stream(from, to int64) []byte {
	var b []byte
	for o := from; o <= to; o++ {
		b = append(b, byte(o))
	}
	return b
}

func TestBacklogEmpty(t *testing.T) {
	b := NewBacklog(MinSize, 100)
	assert.Equal(t, int64(100), b.End())
	assert.Equal(t, int64(101), b.First())
	assert.Equal(t, int64(0), b.HistLen())
	assert.True(t, b.Covers(101), "up to date: nothing to send")
	assert.False(t, b.Covers(100))
	assert.False(t, b.Covers(102))
	assert.Empty(t, b.AppendFrom(nil, 101))
}

func TestBacklogMinSize(t *testing.T) {
	assert.Equal(t, MinSize, NewBacklog(10, 0).Size())
	assert.Equal(t, MinSize+1, NewBacklog(MinSize+1, 0).Size())
}

func TestBacklogOffsetsAndRanges(t *testing.T) {
	b := NewBacklog(MinSize, 0)
	var off int64
	for _, n := range []int{1, 7, 1000, 5000, 3} {
		b.Write(stream(off+1, off+int64(n)))
		off += int64(n)
	}
	require.Equal(t, off, b.End())
	assert.Equal(t, int64(1), b.First())
	assert.Equal(t, off, b.HistLen())
	for _, from := range []int64{1, 2, 8, 1009, off, off + 1} {
		assert.True(t, b.Covers(from), "from %d", from)
		assert.Equal(t, stream(from, off), b.AppendFrom(nil, from), "from %d", from)
	}
	assert.False(t, b.Covers(0))
	assert.False(t, b.Covers(off+2))
}

func TestBacklogWraparound(t *testing.T) {
	size := MinSize
	b := NewBacklog(size, 0)
	var off int64
	// Writes of odd lengths cross the end of the ring many times.
	for i := 0; i < 200; i++ {
		n := int64(1 + (i*977)%3001)
		b.Write(stream(off+1, off+n))
		off += n
		require.Equal(t, off, b.End())
		hist := min(off, int64(size))
		require.Equal(t, hist, b.HistLen())
		first := off - hist + 1
		require.Equal(t, first, b.First())
		for _, from := range []int64{first, first + hist/2, off, off + 1} {
			require.True(t, b.Covers(from))
			require.True(t, bytes.Equal(stream(from, off), b.AppendFrom(nil, from)), "write %d from %d", i, from)
		}
		if first > 1 {
			require.False(t, b.Covers(first-1))
		}
	}
}

func TestBacklogWriteLargerThanSize(t *testing.T) {
	b := NewBacklog(MinSize, 10)
	b.Write(stream(11, 20))
	big := stream(21, 20+3*MinSize+5)
	b.Write(big)
	end := int64(20 + 3*MinSize + 5)
	assert.Equal(t, end, b.End())
	assert.Equal(t, int64(MinSize), b.HistLen())
	assert.Equal(t, stream(end-MinSize+1, end), b.AppendFrom(nil, b.First()))
	b.Write(stream(end+1, end+10))
	assert.Equal(t, stream(end+10-MinSize+1, end+10), b.AppendFrom(nil, b.First()))
}

func TestBacklogResize(t *testing.T) {
	b := NewBacklog(2*MinSize, 0)
	end := int64(2*MinSize + 777)
	b.Write(stream(1, 1000))
	b.Write(stream(1001, end))
	require.Equal(t, int64(2*MinSize), b.HistLen())

	// Shrinking keeps the most recent bytes.
	b.Resize(MinSize)
	assert.Equal(t, MinSize, b.Size())
	assert.Equal(t, int64(MinSize), b.HistLen())
	assert.Equal(t, end, b.End())
	assert.Equal(t, stream(end-MinSize+1, end), b.AppendFrom(nil, b.First()))

	// Growing keeps everything and makes room for more.
	b.Resize(3 * MinSize)
	assert.Equal(t, int64(MinSize), b.HistLen())
	b.Write(stream(end+1, end+2*MinSize))
	end += 2 * MinSize
	assert.Equal(t, int64(3*MinSize), b.HistLen())
	assert.Equal(t, stream(end-3*MinSize+1, end), b.AppendFrom(nil, b.First()))

	// Below the minimum: the minimum.
	b.Resize(1)
	assert.Equal(t, MinSize, b.Size())
	assert.Equal(t, stream(end-MinSize+1, end), b.AppendFrom(nil, b.First()))
}

func TestStreamFeed(t *testing.T) {
	s := NewStream()
	assert.Len(t, s.ID, 40)
	assert.Equal(t, NoID, s.ID2)
	assert.Equal(t, int64(-1), s.SecondOff)
	// No backlog: nothing is written, the offset stays.
	assert.Nil(t, s.Feed(0, [][]byte{[]byte("SET"), []byte("k"), []byte("v")}))
	assert.Equal(t, int64(0), s.Offset())

	old := s.ID
	s.CreateBacklog(MinSize)
	assert.NotEqual(t, old, s.ID, "a new backlog is a new history")
	set := [][]byte{[]byte("SET"), []byte("k"), []byte("v")}
	out := string(s.Feed(3, set))
	assert.Equal(t, "*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n", out)
	assert.Equal(t, string(s.Feed(3, set)), "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n", "same database: no SELECT")
	assert.Equal(t, "*1\r\n$4\r\nPING\r\n", string(s.Feed(-1, [][]byte{[]byte("PING")})), "PING keeps the database")
	assert.Equal(t, "*2\r\n$6\r\nSELECT\r\n$2\r\n12\r\n*1\r\n$1\r\nX\r\n", string(s.Feed(12, [][]byte{[]byte("X")})))
	s.ResetSelect()
	assert.Contains(t, string(s.Feed(12, set)), "SELECT")
	assert.Equal(t, s.Backlog().End(), s.Offset())
	assert.Equal(t, s.Offset(), s.Backlog().HistLen())
}

func TestStreamCanContinue(t *testing.T) {
	s := NewStream()
	s.CreateBacklog(MinSize)
	for range 10 {
		s.Feed(0, [][]byte{[]byte("INCR"), []byte("n")})
	}
	off := s.Offset()
	assert.True(t, s.CanContinue(s.ID, off+1))
	assert.True(t, s.CanContinue(s.ID, 1))
	assert.False(t, s.CanContinue(s.ID, off+2))
	assert.False(t, s.CanContinue(s.ID, 0))
	assert.False(t, s.CanContinue("?", -1))
	assert.False(t, s.CanContinue(NewID(), off+1))
	// The previous ID is valid up to second_repl_offset.
	s.ID2, s.SecondOff = NewID(), off-5
	assert.True(t, s.CanContinue(s.ID2, off-5))
	assert.False(t, s.CanContinue(s.ID2, off-4))

	s.FreeBacklog()
	assert.Nil(t, s.Backlog())
	assert.False(t, s.CanContinue(s.ID, off+1))
	assert.Equal(t, off, s.Offset(), "the offset survives the backlog")
}
