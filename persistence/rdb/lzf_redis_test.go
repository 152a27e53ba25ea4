package rdb

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/keyspace"
)

// TestLZFMatchesRedis compresses strings shaped to put matches at every
// distance from the end of the input (where lzf_c.c's loop bounds
// matter) and compares the DUMP payloads with redis-server's.
func TestLZFMatchesRedis(t *testing.T) {
	redisPath(t)
	r := startRedis(t, t.TempDir())
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	var values [][]byte
	for n := 21; n < 140; n++ {
		for k := 0; k < 6; k++ {
			// A random head over a small alphabet, then a copy of a piece
			// of it reaching the end.
			v := make([]byte, n)
			for i := range v {
				v[i] = "abcdxyz"[rng.IntN(4+k%4)]
			}
			tail := 3 + rng.IntN(min(n/2, 40))
			from := rng.IntN(n - tail)
			copy(v[n-tail:], v[from:from+tail])
			v[0] = 'q' // not an integer
			values = append(values, v)
		}
	}
	p := r.client.Pipeline()
	for i, v := range values {
		p.Set(ctx, "v"+strconv.Itoa(i), v, 0)
	}
	_, err := p.Exec(ctx)
	require.NoError(t, err)
	bad := 0
	for i, v := range values {
		payload, err := r.client.Dump(ctx, "v"+strconv.Itoa(i)).Result()
		require.NoError(t, err)
		if !assert.Equal(t, []byte(payload), Dump(keyspace.NewString(v, 0)), "%q", v) {
			bad++
		}
	}
	assert.Zero(t, bad, "of %d", len(values))
}
