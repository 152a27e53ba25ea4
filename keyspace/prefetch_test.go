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

// PrefetchElements takes any key and fields: absent, not a hash, a small
// hash, a large one (fields there and not, batches of any length), one
// past its deadline; it changes nothing.
func TestPrefetchElementsChangesNothing(t *testing.T) {
	ks := New(16, NewManualClock(epoch))
	db := ks.DB(0)
	fields := [][]byte{nil, {}, []byte("absent")}
	db.PrefetchElements([]byte("none"), fields)
	db.SetString([]byte("s"), []byte("v"), false, 0)
	db.PrefetchElements([]byte("s"), fields)
	small, large := NewHash(), NewHash()
	small.Set([]byte("f"), []byte("v"), testLimits)
	for i := 0; i < 1000; i++ {
		f := []byte(fmt.Sprintf("f%d", i))
		large.Set(f, f, testLimits)
		fields = append(fields, f)
	}
	db.Put([]byte("small"), NewObject(small, 0))
	db.Put([]byte("large"), NewObject(large, 0))
	db.Put([]byte("gone"), NewObject(large.Clone(), epoch-1))
	for _, key := range []string{"small", "large", "gone"} {
		for _, n := range []int{0, 1, 2, PrefetchKeys - 1, PrefetchKeys, PrefetchKeys + 1, len(fields)} {
			db.PrefetchElements([]byte(key), fields[:n])
		}
	}
	require.Equal(t, 1000, large.Len())
	for _, f := range fields[3:] {
		v, ok := large.Get(f)
		require.True(t, ok)
		require.Equal(t, string(f), string(v))
	}
	require.Equal(t, 4, db.Len(), "s, small, large and gone, not expired by a prefetch")

	ints, strs, z := NewSet(), NewSet(), NewZSet()
	for i := 0; i < 1000; i++ {
		ints.Add([]byte(fmt.Sprint(i)), 512*1024)
		strs.Add(fields[3+i], 512)
		z.Set(fields[3+i], float64(i), false)
	}
	db.Put([]byte("ints"), NewObject(ints, 0))
	db.Put([]byte("strs"), NewObject(strs, 0))
	db.Put([]byte("z"), NewObject(z, 0))
	for _, key := range []string{"ints", "strs", "z"} {
		for _, n := range []int{0, 1, 2, PrefetchKeys - 1, PrefetchKeys, PrefetchKeys + 1, len(fields)} {
			db.PrefetchElements([]byte(key), fields[:n])
		}
	}
	require.Equal(t, 1000, ints.Len())
	require.Equal(t, 1000, strs.Len())
	require.Equal(t, 1000, z.Len())
	for i, f := range fields[3:] {
		require.True(t, strs.Has(f))
		score, ok := z.Score(f)
		require.True(t, ok)
		require.Equal(t, float64(i), score)
	}
}
