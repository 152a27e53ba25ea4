package keyspace

import "time"

// A big hash's or sorted set's member table resizes a step at a time,
// each write moving the next of the old array's records (recTable.step);
// reads move none, since a snapshot may be reading the arrays. A table
// written to during a growth and then only read would keep both arrays,
// and its lookups probe both. So the keys whose table a command left
// resizing are noted (settle), and the cron finishes their resizes a
// slice at a time (StepResizes) with activerehashing on, as Redis's cron
// helps rehash its main dictionaries a millisecond a run.

// noteResizing notes key of db, whose member table a write left
// resizing. Under the lock.
func (db *DB) noteResizing(key string) {
	if _, ok := db.resizing[key]; ok {
		return
	}
	if db.resizing == nil {
		db.resizing = make(map[string]struct{})
	}
	db.resizing[string([]byte(key))] = struct{}{} // the entry's key bytes are not ours to keep
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
// up to budget, and reports whether any is left to finish. A table that
// a live snapshot shares is left for later: moving its slots would
// change what the snapshot reads. The old slot arrays of the resizes it
// finishes are told to the freed hook (SetFreedHook): nothing else would
// start the collection that frees them while the server is idle. Under
// the lock (the cron's).
func (ks *Keyspace) StepResizes(budget time.Duration) (more bool) {
	if len(ks.dirty) != 0 {
		ks.settle()
	}
	deadline := time.Now().Add(budget)
	var freed int64
	defer func() {
		if freed > 0 && ks.onFreed != nil {
			ks.onFreed(freed)
		}
	}()
	for _, db := range ks.dbs {
		for key := range db.resizing {
			if time.Now().After(deadline) {
				return true
			}
			e := db.get(key, keyHash(key))
			var t *recTable
			if e != nil {
				t = e.memberTable()
			}
			if t == nil || !t.resizing() {
				delete(db.resizing, key)
				continue
			}
			if ks.shared(e) {
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
				return true
			}
			freed += old
			delete(db.resizing, key)
		}
	}
	return more
}
