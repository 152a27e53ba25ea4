package keyspace

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// Prefetch takes any keys, on empty and loaded databases, in batches of
// any length, and changes nothing.
func TestPrefetchChangesNothing(t *testing.T) {
	ks := New(16, NewManualClock(epoch))
	db := ks.DB(0)
	keys := [][]byte{nil, {}, []byte("absent")}
	db.Prefetch(keys) // no table yet
	for i := 0; i < 1000; i++ {
		k := []byte(fmt.Sprintf("k%d", i))
		db.SetString(k, k, false, 0)
		keys = append(keys, k)
	}
	for _, n := range []int{0, 1, 2, PrefetchKeys - 1, PrefetchKeys, PrefetchKeys + 1, len(keys)} {
		db.Prefetch(keys[:n])
	}
	require.Equal(t, 1000, db.Len())
	for _, k := range keys[3:] {
		e := db.LookupNoTouch(k)
		require.NotNil(t, e)
		require.Equal(t, string(k), string(e.Str()))
	}
}
