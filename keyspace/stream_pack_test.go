package keyspace

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Closed nodes of a big stream are packed side by side into chunks; a
// node that XDEL grows (its deleted count passing 127 takes a wider
// integer) must leave its chunk without touching its neighbours, and a
// clone must not share the chunks it copies.
func TestStreamPackedNodes(t *testing.T) {
	const perNode, nodes = 200, 3 * streamPackMinNodes
	s := NewStream()
	value := func(i int) string { return fmt.Sprintf("v%09d", i) }
	for i := 0; i < perNode*nodes; i++ {
		s.Append(StreamID{Ms: 1, Seq: uint64(i)}, [][]byte{[]byte("f"), []byte(value(i))}, 0, perNode)
	}
	require.Equal(t, nodes, s.NodeCount())
	packed := 0
	s.nodes.Scan(func(n *streamNode) bool {
		if cap(n.lp()) == len(n.lp()) {
			packed++
		}
		return true
	})
	assert.GreaterOrEqual(t, packed, nodes-streamPackMinNodes-1, "nodes packed")

	c := s.Clone().(*Stream)

	// Delete 150 of the entries of a packed node in the middle.
	mid := (nodes - 10) * perNode
	for i := mid; i < mid+150; i++ {
		require.True(t, s.Delete(StreamID{Ms: 1, Seq: uint64(i)}))
	}
	check := func(st *Stream, deleted func(i int) bool) {
		t.Helper()
		i := 0
		st.Range(StreamID{}, MaxStreamID, false, func(e *StreamEntry) bool {
			for deleted(i) {
				i++
			}
			require.Equal(t, uint64(i), e.ID.Seq)
			require.Equal(t, value(i), string(e.FV[1].Bytes()))
			i++
			return true
		})
		assert.Equal(t, perNode*nodes, i)
	}
	check(s, func(i int) bool { return i >= mid && i < mid+150 })
	check(c, func(int) bool { return false })
	assert.Equal(t, uint64(perNode*nodes-150), s.Length())
	assert.Equal(t, uint64(perNode*nodes), c.Length())
}

// Once a stream packs its nodes, a new tail grows in its chunk's free
// room and closing it copies nothing: closed nodes lie end to end. The
// tail may grow in place there (XDEL widening its counts), be cloned,
// or be trimmed away, and appends after each must leave every entry
// readable and the clone untouched.
func TestStreamTailInChunk(t *testing.T) {
	const perNode, nodes = 100, 2 * streamPackMinNodes
	s := NewStream()
	value := func(i int) string { return fmt.Sprintf("v%09d", i) }
	seq := 0
	add := func(st *Stream, n int) {
		for range n {
			st.Append(StreamID{Ms: 1, Seq: uint64(seq)}, [][]byte{[]byte("f"), []byte(value(seq))}, 0, perNode)
			seq++
		}
	}
	add(s, perNode*nodes+perNode/2)
	require.Equal(t, nodes+1, s.NodeCount())

	// Closed nodes made after packing began follow one another in memory.
	var prev []byte
	adjacent := 0
	s.nodes.Scan(func(n *streamNode) bool {
		if prev != nil && endsWhereBegins(prev, n.lp()) {
			adjacent++
		}
		prev = n.lp()
		return true
	})
	assert.GreaterOrEqual(t, adjacent, nodes-streamPackMinNodes-2, "closed nodes end to end in the chunk")
	tail, _ := s.nodes.Max()
	require.True(t, s.inChunk(tail.lp()), "the tail grows in the chunk")

	check := func(st *Stream, want []int) {
		t.Helper()
		i := 0
		st.Range(StreamID{}, MaxStreamID, false, func(e *StreamEntry) bool {
			require.Less(t, i, len(want))
			require.Equal(t, uint64(want[i]), e.ID.Seq)
			require.Equal(t, value(want[i]), string(e.FV[1].Bytes()))
			i++
			return true
		})
		require.Equal(t, len(want), i)
		require.Equal(t, uint64(len(want)), st.Length())
	}
	upto := func(n int, skip func(int) bool) []int {
		var w []int
		for i := range n {
			if skip == nil || !skip(i) {
				w = append(w, i)
			}
		}
		return w
	}

	// A clone taken now keeps its entries whatever the original does.
	c := s.Clone().(*Stream)
	cloned := seq

	// Delete most of the tail in place, then fill and close it.
	base := perNode * nodes
	for i := base; i < base+perNode/2-1; i++ {
		require.True(t, s.Delete(StreamID{Ms: 1, Seq: uint64(i)}))
	}
	add(s, 3*perNode)
	gone := func(i int) bool { return i >= base && i < base+perNode/2-1 }
	check(s, upto(seq, gone))
	check(c, upto(cloned, nil))

	// Trim to nothing, then grow past packing again.
	s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 0})
	require.Equal(t, 0, s.NodeCount())
	start := seq
	add(s, perNode*(streamPackMinNodes+5))
	w := upto(seq, func(i int) bool { return i < start })
	check(s, w)
	check(c, upto(cloned, nil))
}

// endsWhereBegins reports whether b begins right where a ends.
func endsWhereBegins(a, b []byte) bool {
	return len(a) > 0 && len(b) > 0 &&
		uintptr(unsafe.Pointer(&a[len(a)-1]))+1 == uintptr(unsafe.Pointer(&b[0]))
}

// A tail built in the chunk's free room must join the chunk when it
// closes even if trimming left the stream too few nodes to pack, and
// even if it filled that room nearly to the end (so that nothing else
// would copy it out): the next node is built in the room after the
// chunk's bytes, over it otherwise.
func TestStreamTailInChunkClosedAfterTrim(t *testing.T) {
	s := newSizedStream(4096, 1)
	add := s.add
	// One entry a node; stop when the room after the tail is between
	// the 4 KiB a node is given and what a 1 KiB step spans beyond it.
	room := func() int {
		tail, _ := s.nodes.Max()
		if !s.inChunk(tail.lp()) {
			return -1
		}
		return cap(s.chunk) - len(s.chunk) - len(tail.lp())
	}
	for s.NodeCount() < streamPackMinNodes+12 || room() < streamPrealloc+100 || room() > streamPrealloc+1100 {
		add(1000)
		require.Less(t, s.NodeCount(), 2000, "no room in the window")
	}
	// A value that takes the next node to within 64 bytes of the room's
	// end, yet starts it in the room (its size plus 64 fits).
	add(room() - 66)
	tail, _ := s.nodes.Max()
	require.True(t, s.inChunk(tail.lp()))
	require.LessOrEqual(t, cap(tail.lp())-len(tail.lp()), 64)

	s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 10})
	add(1000) // closes the big tail with 11 nodes in the stream
	for range 200 {
		add(1000)
	}
	s.check(t, 211)
}

// A new tail begins in the chunk's room when that holds a node the size
// of the last one closed, not Redis's 4 KiB preallocation. One that then
// grows past the room is copied out of it by append, and into a new
// chunk when it closes; the entries around it stay readable.
func TestStreamTailOutgrowsRoom(t *testing.T) {
	s := newSizedStream(0, 2)
	add := s.add
	// Nodes of two 1000-byte entries, until a new one begins in less
	// room than streamPrealloc.
	room := func() int { return cap(s.chunk) - len(s.chunk) }
	for {
		add(1000)
		tail, _ := s.nodes.Max()
		if s.NodeCount() > streamPackMinNodes && s.inChunk(tail.lp()) && room() < streamPrealloc {
			break
		}
		add(1000)
		require.Less(t, s.NodeCount(), 2000, "no node began in little room")
	}
	require.GreaterOrEqual(t, room(), s.lastClosed, "the room holds a node like the last")
	chunk := unsafe.SliceData(s.chunk)

	add(room()) // the tail's second entry does not fit in the room
	tail, _ := s.nodes.Max()
	assert.False(t, s.inChunk(tail.lp()), "the tail left the room")
	add(1000) // closes it
	assert.NotEqual(t, chunk, unsafe.SliceData(s.chunk), "packed into a new chunk")
	for range 300 {
		add(1000)
	}
	s.check(t, int(s.seq))
}

// sizedStream is a stream whose nodes close at maxBytes and maxEntries,
// given entries of one field with values of chosen sizes, each of which
// it remembers.
type sizedStream struct {
	*Stream
	maxBytes, maxEntries int64
	seq                  uint64
	vals                 map[uint64]string
}

func newSizedStream(maxBytes, maxEntries int64) *sizedStream {
	return &sizedStream{Stream: NewStream(), maxBytes: maxBytes, maxEntries: maxEntries, vals: map[uint64]string{}}
}

// add appends an entry with a value of size bytes.
func (s *sizedStream) add(size int) {
	v := strings.Repeat(string(rune('a'+s.seq%26)), size)
	s.Append(StreamID{Ms: 1, Seq: s.seq}, [][]byte{[]byte("f"), []byte(v)}, s.maxBytes, s.maxEntries)
	s.vals[s.seq] = v
	s.seq++
}

// check requires the stream to hold n entries, each with its value.
func (s *sizedStream) check(t *testing.T, n int) {
	t.Helper()
	seen := 0
	s.Range(StreamID{}, MaxStreamID, false, func(e *StreamEntry) bool {
		require.Equal(t, s.vals[e.ID.Seq], string(e.FV[1].Bytes()), "entry %d", e.ID.Seq)
		seen++
		return true
	})
	require.Equal(t, n, seen)
}
