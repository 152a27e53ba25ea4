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
// by the cron's StepResizes, which forgets its key, counts the old
// arrays as freed, and re-measures the entries for used_memory.
func TestStepResizesFinishesGrowths(t *testing.T) {
	e := newEnv(t)
	zt, ht := growUntilResizing(t, e)
	old := int64(len(zt.old.tags)+len(ht.old.tags)) * slotBytes
	var told int64
	e.ks.SetFreedHook(func(n int64) { told += n })
	e.ks.Exec(func() {
		require.Len(t, e.ks.DB(0).resizing, 2)
		used := e.ks.UsedMemory()
		freed, more := e.ks.StepResizes(time.Minute)
		require.False(t, more)
		require.Equal(t, old, freed)
		require.Equal(t, old, told)
		require.Empty(t, e.ks.DB(0).resizing)
		require.Less(t, e.ks.UsedMemory(), used-old/2, "used_memory still counts the old arrays")
	})
	for _, tb := range []*recTable{zt, ht} {
		require.False(t, tb.resizing())
		checkRecTable(t, tb)
	}
	e.do(func(db *DB) { zsetConsistent(t, db.LookupNoTouch([]byte("z")).Obj().(*ZSet)) })
}

// With a budget of 0, StepResizes moves nothing and only forgets the
// keys that are gone; a table that a live snapshot shares is left as it
// is until the snapshot is released.
func TestStepResizesBudgetSnapshotAndDeletion(t *testing.T) {
	e := newEnv(t)
	zt, ht := growUntilResizing(t, e)
	zmoved, hmoved := zt.moved, ht.moved
	e.do(func(db *DB) { db.Delete([]byte("h")) })
	e.ks.Exec(func() {
		freed, more := e.ks.StepResizes(0)
		require.True(t, more)
		require.Zero(t, freed)
		require.Len(t, e.ks.DB(0).resizing, 1, "a deleted key is still noted")
	})
	require.Equal(t, zmoved, zt.moved, "a budget of 0 moved records")

	var snap *Snapshot
	e.ks.Exec(func() { snap = e.ks.Snapshot() })
	e.ks.Exec(func() {
		_, more := e.ks.StepResizes(time.Minute)
		require.True(t, more)
	})
	require.Equal(t, zmoved, zt.moved, "a table a snapshot shares was stepped")
	snap.Release()
	e.ks.Exec(func() {
		_, more := e.ks.StepResizes(time.Minute)
		require.False(t, more)
		require.Empty(t, e.ks.DB(0).resizing)
	})
	require.False(t, zt.resizing())
	require.True(t, ht.resizing(), "a deleted key's table was stepped")
	require.Equal(t, hmoved, ht.moved)
}

// A loaded value whose decoding began a growth (its last Set) is noted
// too: no write of the load's finishes it.
func TestInsertNotesResizingTable(t *testing.T) {
	e := newEnv(t)
	h := NewHash()
	h.Convert(HashLimits{MaxValue: -1}, nil)
	for i := 0; !h.tab().resizing(); i++ {
		require.Less(t, i, 100000, "no growth began")
		m := []byte(fmt.Sprint("m", i))
		h.Set(m, m, testLimits)
	}
	e.ks.SetLoading(true)
	e.ks.Exec(func() { e.ks.DB(0).Insert("loaded", NewObject(h, 0)) })
	e.ks.SetLoading(false)
	e.ks.Exec(func() {
		require.Len(t, e.ks.DB(0).resizing, 1)
		_, more := e.ks.StepResizes(time.Minute)
		require.False(t, more)
	})
	require.False(t, h.tab().resizing())
}
