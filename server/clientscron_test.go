package server

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The ring visits a tenth of the clients per tick (at least 5), keeps
// places right through removals, and its memory total follows them.
func TestClientRing(t *testing.T) {
	assert.Equal(t, 0, clientsPerTick(0))
	assert.Equal(t, 3, clientsPerTick(3))
	assert.Equal(t, 5, clientsPerTick(12))
	assert.Equal(t, 1000, clientsPerTick(10000))

	var r clientRing
	cs := make([]*conn, 20)
	for i := range cs {
		cs[i] = &conn{ringAt: -1, memCounted: int64(i)}
		r.add(cs[i])
		r.mem += int64(i)
	}
	r.remove(cs[3])
	r.remove(cs[19])
	r.remove(cs[3]) // twice: nothing
	r.remove(&conn{ringAt: 0})
	assert.Len(t, r.all, 18)
	assert.Equal(t, int64(190-3-19), r.mem)
	for i, c := range r.all {
		assert.Equal(t, i, c.ringAt)
		assert.NotSame(t, cs[3], c)
		assert.NotSame(t, cs[19], c)
	}
	assert.Equal(t, -1, cs[3].ringAt)
}
