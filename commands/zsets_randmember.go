package commands

import (
	"math"
	"math/rand/v2"

	"github.com/zredis/zredis/engine"
)

// Sorted set commands: ZRANDMEMBER (Redis t_zset.c).
func init() {
	register(
		&engine.Command{Name: "zrandmember", Arity: -2, Flags: engine.ReadOnly, ACL: "@read @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zrandmemberCommand},
	)
}

// zrandmemberCommand is ZRANDMEMBER key [count [WITHSCORES]]
// (zrandmemberCommand, zrandmemberWithCountCommand). A negative count
// may repeat members; a positive one returns distinct members, the whole
// set in descending order when it asks for at least all of them.
func zrandmemberCommand(c *engine.Ctx) {
	if len(c.Args) == 2 {
		z, ok := zsetRead(c, c.Args[1])
		if !ok {
			return
		}
		if z == nil {
			c.W.Null()
			return
		}
		m, _ := z.At(rand.IntN(z.Len()))
		c.W.BulkString(m)
		return
	}
	l, ok := engine.ParseInt(c.Args[2])
	if !ok {
		c.Error(engine.ErrNotInteger)
		return
	}
	if l == math.MinInt64 {
		c.Error(engine.ErrLongRange)
		return
	}
	withScores := false
	if len(c.Args) > 4 || len(c.Args) == 4 && !engine.EqualFold(c.Args[3], "withscores") {
		c.Error(engine.ErrSyntax)
		return
	}
	if len(c.Args) == 4 {
		withScores = true
		if l < -math.MaxInt64/2 || l > math.MaxInt64/2 {
			c.Error(engine.ErrValueOutOfRange)
			return
		}
	}
	z, ok := zsetRead(c, c.Args[1])
	if !ok {
		return
	}
	if z == nil || l == 0 {
		c.W.Array(0)
		return
	}
	size := z.Len()
	if l < 0 || l == 1 {
		count := int(min(-l, math.MaxInt32))
		if l == 1 {
			count = 1
		}
		scoredHeader(c, count, withScores)
		for i := 0; i < count; i++ {
			m, s := z.At(rand.IntN(size))
			writeScored(c, m, s, withScores)
		}
		return
	}
	if l >= int64(size) {
		// Redis's set iterator (zuiNext) walks from the tail.
		scoredHeader(c, size, withScores)
		z.Descend(size-1, func(m string, s float64) bool {
			writeScored(c, m, s, withScores)
			return true
		})
		return
	}
	// Distinct positions by a partial Fisher-Yates shuffle over a sparse
	// permutation: O(count) time and space.
	count := int(l)
	swapped := make(map[int]int, count)
	at := func(i int) int {
		if v, ok := swapped[i]; ok {
			return v
		}
		return i
	}
	scoredHeader(c, count, withScores)
	for i := 0; i < count; i++ {
		j := i + rand.IntN(size-i)
		pos := at(j)
		swapped[j] = at(i)
		m, s := z.At(pos)
		writeScored(c, m, s, withScores)
	}
}
