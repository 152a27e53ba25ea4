package keyspace

import (
	"strings"

	"github.com/zredis/zredis/keyslot"
)

// slotIndex is Redis Cluster's index of a database's keys by hash slot
// (redis-server 7.0's slots_to_keys): for each slot, a table of the
// entries whose key hashes there, kept by the same Swiss table that
// holds a shard (table.go), keyed by the key's keyHash as there.
//
// Redis 7.0 threads a list per slot through its dictEntries, 16 bytes of
// metadata on every key. Here a link in the entry would cost every key
// its 16 bytes, in cluster mode or not; a table per slot costs 9 bytes
// a place at a load between 0.58 and 0.875, and its header, only when
// the index is on (15 bytes a key among 1M: BenchmarkSlotIndexHeapPerKey),
// and finds a key in O(1) to remove it. A Go map per slot would cost a
// string header and a map slot a key, about 40 bytes, and a slice per
// slot would have to be searched to remove.
//
// The tables are held by value, not by pointer: a change of the index
// then misses the cache on a table's header and its group, not first on
// a pointer to the header. The 16384 headers, 1.2 MB, are cluster
// mode's fixed cost (Redis 7.0's is 256 kB), less than headers of their
// own once most slots hold keys.
//
// The index holds the live tables' entries, never a snapshot's: a write
// that copies an entry for a snapshot (DB.private) stores the copy here
// too. Snapshots never read it, so it has neither pins nor undo logs.
type slotIndex struct {
	slots [keyslot.Slots]table
}

// The index's changes, each given the entry's key hash (keyHash).
func (x *slotIndex) add(e *Entry, h uint64) {
	x.slots[keyslot.OfString(e.Key())].insert(e, h)
}

// replace stores e in place of the entry its key had.
func (x *slotIndex) replace(e *Entry, h uint64) {
	x.slots[keyslot.OfString(e.Key())].put(e, h)
}

func (x *slotIndex) del(key string, h uint64) {
	t := &x.slots[keyslot.OfString(key)]
	t.del(key, h)
	switch {
	case t.n == 0:
		*t = table{} // a slot migrated away frees its groups
	case len(t.groups) > 1 && t.n*4 < len(t.groups)*groupSlots:
		// A quarter full: shrink to half full, so that a walk of the
		// slot (KeysInSlot) passes few empty places while a migration
		// takes its keys away.
		t.resize((2*t.n + groupSlots - 1) / groupSlots)
	}
}

// build indexes every entry of db's tables.
func (x *slotIndex) build(db *DB) {
	clear(x.slots[:])
	db.EachEntry(func(key string, e *Entry) bool {
		x.add(e, keyHash(key))
		return true
	})
}

// reserve sizes the slot tables for about n keys spread over the slots.
func (x *slotIndex) reserve(n int) {
	per := n/keyslot.Slots + n/keyslot.Slots/4
	if per < groupSlots {
		return // a few keys a slot: their tables grow soon enough
	}
	for i := range x.slots {
		x.slots[i].reserve(per)
	}
}

// EnableSlotIndex gives database 0 the index of its keys by hash slot
// that Redis Cluster needs (CountKeysInSlot, KeysInSlot), kept from then
// on by every change of its keys. Cluster mode calls it once at start,
// before a data set loads (it indexes what database 0 holds already).
// Without it a key costs no byte and a write no work beyond a nil test.
// Under the lock.
func (ks *Keyspace) EnableSlotIndex() {
	db := ks.dbs[0]
	if db.slots == nil {
		db.slots = new(slotIndex)
		db.slots.build(db)
		db.keyCost += slotIndexCost
	}
}

// SlotIndexed reports whether the database keeps the index of its keys
// by hash slot (EnableSlotIndex: database 0 in cluster mode).
func (db *DB) SlotIndexed() bool { return db.slots != nil }

// CountKeysInSlot is the number of keys in hash slot slot (0 to
// keyslot.Slots-1), those past their deadline that expiry has not
// removed yet included, as Redis's countKeysInSlot: O(1) with the index;
// a database without it is walked.
func (db *DB) CountKeysInSlot(slot int) int {
	if db.slots != nil {
		return db.slots.slots[slot].len()
	}
	n := 0
	db.EachKeyInSlot(slot, func(string, *Entry) bool { n++; return true })
	return n
}

// EachKeyInSlot calls fn for the keys of hash slot slot, in no
// particular order, until fn returns false: with the index, a walk of
// the slot's table alone. fn must not change the database; the key
// string is the entry's own, valid while the key stays.
func (db *DB) EachKeyInSlot(slot int, fn func(key string, e *Entry) bool) {
	if db.slots == nil {
		db.EachEntry(func(key string, e *Entry) bool {
			return keyslot.OfString(key) != slot || fn(key, e)
		})
		return
	}
	db.slots.slots[slot].all(func(e *Entry) bool { return fn(e.Key(), e) })
}

// KeysInSlot returns at most count keys of hash slot slot, copied, as
// CLUSTER GETKEYSINSLOT replies them: the slot's table is walked from
// its start until count keys, which, the table being at least a quarter
// full, costs about count's, never the database's. The order is the
// index's: Redis 7.0 answers the slot's newest keys first, 7.4 its
// slot dictionary's order; clients (redis-cli --cluster reshard) take
// what comes and MIGRATE it.
func (db *DB) KeysInSlot(slot, count int) []string {
	if count <= 0 {
		return nil
	}
	keys := make([]string, 0, min(count, db.CountKeysInSlot(slot)))
	db.EachKeyInSlot(slot, func(key string, _ *Entry) bool {
		keys = append(keys, strings.Clone(key))
		return len(keys) < count
	})
	return keys
}

// DeleteKeysInSlot removes every key of hash slot slot, as Redis's
// delKeysInSlot when the node learns it no longer serves the slot: each
// as a deletion by the server (dbDelete), with no expiry event; deleted,
// when not nil, is given each key removed (to propagate its DEL). It
// returns how many it removed.
func (db *DB) DeleteKeysInSlot(slot int, deleted func(key string)) int {
	var doomed []*Entry
	db.EachKeyInSlot(slot, func(_ string, e *Entry) bool {
		doomed = append(doomed, e)
		return true
	})
	for _, e := range doomed {
		db.remove(keyHash(e.Key()), e)
		db.ks.dropped(e, FreeServerDel)
		if deleted != nil {
			deleted(e.Key())
		}
	}
	return len(doomed)
}
