package keyspace

import (
	"strings"
	"time"
)

// A big hash's or sorted set's member table resizes a step at a time,
// each write moving the next of the old array's records (recTable.step);
// reads move none, since a snapshot may be reading the arrays. A table
// written to during a growth and then only read would keep both arrays,
// and its lookups probe both. So the keys whose table a command or a
// load left resizing are noted (settle, Insert), and the cron finishes
// their resizes a slice at a time (StepResizes) with activerehashing on,
// as Redis's cron helps rehash its main dictionaries a millisecond a
// run.

// noteResizing notes key of db, whose member table a write or a load
// left resizing. Under the lock.
func (db *DB) noteResizing(key string) {
	if _, ok := db.resizing[key]; ok {
		return
	}
	if db.resizing == nil {
		db.resizing = make(map[string]struct{})
	}
	// A copy: a view of the entry's key would keep the entry, and its
	// table, alive after the key is deleted, until the cron's next run.
	db.resizing[strings.Clone(key)] = struct{}{}
}

// memberTable is e's member table when it is a big hash or a sorted set,
// else nil.
func (e *Entry) memberTable() *recTable {
	switch o := e.Obj().(type) {
	case *Hash:
		if t := o.tab(); t != nil {
			return &t.recTable
		}
	case *ZSet:
		return o.dict
	}
	return nil
}

// resizeSliceSteps is how many steps StepResizes takes between two reads
// of the clock: a few hundred nanoseconds each.
const resizeSliceSteps = 32

// StepResizes moves records of the noted tables that are resizing, for
// up to budget, and forgets the keys that are gone or whose tables are
// done (a budget of 0 only forgets: the cron's run with activerehashing
// off, which keeps the notes from piling up). A table that a live
// snapshot shares is left for later: moving its slots would change what
// the snapshot reads. An entry whose resize it finishes is re-measured
// for used_memory, and its old slot array's bytes are told to the freed
// hook (SetFreedHook) and returned: the server's idle release may have
// run before the array became garbage. more reports resizes left to
// finish. Under the lock (the cron's).
func (ks *Keyspace) StepResizes(budget time.Duration) (freed int64, more bool) {
	if len(ks.dirty) != 0 {
		ks.settle()
	}
	deadline := time.Now().Add(budget)
	for _, db := range ks.dbs {
		for key := range db.resizing {
			e := db.get(key, keyHash(key))
			var t *recTable
			if e != nil {
				t = e.memberTable()
			}
			if t == nil || !t.resizing() {
				delete(db.resizing, key)
				continue
			}
			if ks.shared(e) || budget <= 0 || !time.Now().Before(deadline) {
				more = true
				continue
			}
			old := int64(len(t.old.tags)) * slotBytes
			for t.resizing() && time.Now().Before(deadline) {
				for i := 0; i < resizeSliceSteps && t.resizing(); i++ {
					t.step()
				}
			}
			if t.resizing() {
				more = true
				continue
			}
			delete(db.resizing, key)
			db.remeasure(e)
			freed += old
		}
	}
	if freed > 0 && ks.onFreed != nil {
		ks.onFreed(freed)
	}
	return freed, more
}
