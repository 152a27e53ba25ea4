package engine

import (
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/zredis/zredis/keyspace"
)

// TestRaxNodes counts the nodes rax builds for a set of keys: by hand for
// small cases, and as the stream's count of its 16-byte node keys (which
// XINFO's radix-tree-nodes checks against redis-server) for many.
func TestRaxNodes(t *testing.T) {
	for _, c := range []struct {
		keys []string
		want int
	}{
		{[]string{"a"}, 2},          // root "a", then the key's node
		{[]string{"a", "ab"}, 3},    // "a" ends inside the run: split
		{[]string{"a", "b"}, 3},     // a branching root
		{[]string{"ab", "ac"}, 4},   // "a", branching, two ends
		{[]string{"", "a"}, 2},      // the empty key marks the root
		{[]string{"abc", "abd"}, 4}, // "ab" compressed, then branching
		{[]string{"x1", "y1"}, 5},   // branching root, a run and an end each
		{[]string{"foo", "foobar"}, 3},
	} {
		assert.Equal(t, c.want, raxNodes(c.keys, 0), "%q", c.keys)
	}

	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 20; round++ {
		s := keyspace.NewStream()
		var keys []string
		ms := uint64(rng.IntN(1 << 40))
		for i := 0; i < 1+rng.IntN(300); i++ {
			ms += uint64(rng.IntN(1 << uint(rng.IntN(20))))
			id := keyspace.StreamID{Ms: ms, Seq: uint64(rng.IntN(3))}
			s.Append(id, [][]byte{[]byte("f"), []byte("v")}, 4096, 1)
			k := id.Encode()
			keys = append(keys, string(k[:]))
			ms++
		}
		sort.Strings(keys)
		assert.Equal(t, s.RaxNodes(), raxNodes(keys, 0), "round %d", round)
	}
}

// TestTrackingFlushFreed: FLUSHDB ASYNC frees the tracking table in the
// background when its rax has more than 64 nodes, counting its keys.
func TestTrackingFlushFreed(t *testing.T) {
	tr := &Tracking{keys: map[string]map[int64]struct{}{}}
	assert.Zero(t, tr.FlushFreed(), "empty")
	for i := 0; i < 65; i++ {
		tr.keys[string(rune('A'+i%26))+string(rune('a'+i/26))+"key"] = nil
	}
	assert.Equal(t, 65, tr.FlushFreed(), "more keys than the threshold")
	// 32 keys under distinct first bytes: a branching root, then a run
	// and an end each, 65 nodes.
	clear(tr.keys)
	for i := 0; i < 32; i++ {
		tr.keys[string(rune('!'+i))+"k"] = nil
	}
	assert.Equal(t, 32, tr.FlushFreed(), "65 nodes")
	delete(tr.keys, "!k")
	assert.Zero(t, tr.FlushFreed(), "63 nodes")
	// Keys sharing a prefix: a run, a branching node, an end each.
	clear(tr.keys)
	for i := 0; i < 62; i++ {
		tr.keys["user:"+string(rune('0'+i))] = nil
	}
	assert.Zero(t, tr.FlushFreed(), "64 nodes")
	tr.keys["user:~"] = nil
	assert.Equal(t, 63, tr.FlushFreed(), "65 nodes")
}
