package keyspace

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// growUntilResizing writes members to the sorted set z and the hash h of
// database 0, one command each, until a write leaves each table in the
// middle of a growth, and returns the tables.
func growUntilResizing(t *testing.T, e *env) (zt, ht *recTable) {
	t.Helper()
	e.do(func(db *DB) {
		z := NewZSet()
		z.MarkBig()
		db.Put([]byte("z"), NewObject(z, 0))
		h := NewHash()
		h.Convert(HashLimits{MaxValue: -1}, nil)
		db.Put([]byte("h"), NewObject(h, 0))
	})
	for i := 0; zt == nil || ht == nil; i++ {
		require.Less(t, i, 100000, "no growth began")
		m := []byte(fmt.Sprint("m", i))
		e.do(func(db *DB) {
			if zt == nil {
				z := db.LookupWrite([]byte("z")).Obj().(*ZSet)
				z.Set(m, float64(i), true)
				if z.dict.resizing() && z.dict.moved == 0 {
					zt = z.dict
				}
			}
			if ht == nil {
				h := db.LookupWrite([]byte("h")).Obj().(*Hash)
				h.Set(m, m, testLimits)
				if tb := h.tab(); tb.resizing() && tb.moved == 0 {
					ht = &tb.recTable
				}
			}
		})
		e.ks.EndCommand(true)
	}
	return zt, ht
}

// A table left in the middle of a growth by its last write is finished
// by the cron's StepResizes, and its key forgotten.
func TestStepResizesFinishesGrowths(t *testing.T) {
	e := newEnv(t)
	zt, ht := growUntilResizing(t, e)
	e.ks.Exec(func() {
		require.Len(t, e.ks.DB(0).resizing, 2)
		require.False(t, e.ks.StepResizes(time.Minute))
		require.Empty(t, e.ks.DB(0).resizing)
	})
	for _, tb := range []*recTable{zt, ht} {
		require.False(t, tb.resizing())
		checkRecTable(t, tb)
	}
	e.do(func(db *DB) { zsetConsistent(t, db.LookupNoTouch([]byte("z")).Obj().(*ZSet)) })
}

// With no time to spend, StepResizes says that work is left; a table
// that a live snapshot shares is left as it is until the snapshot is
// released; a key deleted meanwhile is forgotten.
func TestStepResizesBudgetSnapshotAndDeletion(t *testing.T) {
	e := newEnv(t)
	zt, ht := growUntilResizing(t, e)
	e.ks.Exec(func() { require.True(t, e.ks.StepResizes(0)) })
	var snap *Snapshot
	e.ks.Exec(func() { snap = e.ks.Snapshot() })
	zmoved, hmoved := zt.moved, ht.moved
	e.ks.Exec(func() { require.True(t, e.ks.StepResizes(time.Minute)) })
	require.Equal(t, zmoved, zt.moved, "a table a snapshot shares was stepped")
	require.Equal(t, hmoved, ht.moved, "a table a snapshot shares was stepped")
	snap.Release()
	e.do(func(db *DB) { db.Delete([]byte("h")) })
	e.ks.Exec(func() {
		require.False(t, e.ks.StepResizes(time.Minute))
		require.Empty(t, e.ks.DB(0).resizing)
	})
	require.False(t, zt.resizing())
	require.True(t, ht.resizing(), "a deleted key's table was stepped")
}
