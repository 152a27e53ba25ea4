package keyspace

import (
	"fmt"
	"testing"

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
		if cap(n.lp) == len(n.lp) {
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
