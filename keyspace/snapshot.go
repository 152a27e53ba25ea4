package keyspace

// Snapshot is a point-in-time view of every database, taken without
// copying: it pins each shard's map, and writers copy a pinned shard (and
// any entry the snapshot may read) before changing it. Taking one costs
// O(databases × shards) under the lock; reading it needs no lock.
type Snapshot struct {
	ks       *Keyspace
	gen      uint32
	now      int64
	tables   [][]*table
	keys     []int // per database, at the time of the snapshot
	volatile []int
}

// Snapshot takes a snapshot of every database. Call with the lock held
// (inside Exec); read it outside, then Release it.
func (ks *Keyspace) Snapshot() *Snapshot {
	s := ks.newSnapshot()
	for i, db := range ks.dbs {
		s.tables[i] = db.pin()
		s.keys[i], s.volatile[i] = db.keys, db.expires.len()
	}
	return s
}

// SnapshotDB takes a snapshot of database i only (KEYS): O(shards) under
// the lock. The other databases read as empty in it.
func (ks *Keyspace) SnapshotDB(i int) *Snapshot {
	s := ks.newSnapshot()
	s.tables[i] = ks.dbs[i].pin()
	s.keys[i], s.volatile[i] = ks.dbs[i].keys, ks.dbs[i].expires.len()
	return s
}

func (ks *Keyspace) newSnapshot() *Snapshot {
	n := len(ks.dbs)
	s := &Snapshot{ks: ks, gen: ks.gen, now: ks.now, tables: make([][]*table, n), keys: make([]int, n), volatile: make([]int, n)}
	ks.gen++
	ks.live[s.gen]++
	if s.gen > ks.liveMax {
		ks.liveMax = s.gen
	}
	return s
}

// pin marks the database's non-empty shards as read by a snapshot and
// returns them.
func (db *DB) pin() []*table {
	ts := make([]*table, 0, numShards)
	for _, t := range db.shards {
		if t != nil && len(t.m) > 0 {
			t.pins++
			ts = append(ts, t)
		}
	}
	return ts
}

// NowMs is the time the snapshot was taken; keys past their deadline at
// that instant are not part of it.
func (s *Snapshot) NowMs() int64 { return s.now }

// ForEach calls fn for every key of database db that was live when the
// snapshot was taken, in no particular order, until fn returns false. It
// needs no lock. fn must not modify the entry.
func (s *Snapshot) ForEach(db int, fn func(key string, e *Entry) bool) {
	for _, t := range s.tables[db] {
		for k, e := range t.m {
			if e.expireAt != 0 && e.expireAt <= s.now {
				continue
			}
			if !fn(k, e) {
				return
			}
		}
	}
}

// ForEachAll is ForEach including the keys already past their deadline
// that expiry had not removed yet: what a save writes, so that a restart
// expires them and sends their expiry messages (as Redis's rdbSave writes
// them and a master drops them at load).
func (s *Snapshot) ForEachAll(db int, fn func(key string, e *Entry) bool) {
	for _, t := range s.tables[db] {
		for k, e := range t.m {
			if !fn(k, e) {
				return
			}
		}
	}
}

// Counts are database db's number of keys and of keys with a deadline
// when the snapshot was taken (the sizes RDB's RESIZEDB announces).
func (s *Snapshot) Counts(db int) (keys, volatile int) { return s.keys[db], s.volatile[db] }

// Release ends the snapshot: pinned shards become writable in place
// again once the next holder of the keyspace lock applies it (at its
// Lock or Exec). It never waits for the lock, so it is safe both with
// and without it: an offloaded reader may end up running inside a
// transaction that holds the lock. The snapshot must not be read after.
func (s *Snapshot) Release() {
	ks := s.ks
	ks.relMu.Lock()
	ks.released = append(ks.released, s)
	ks.relPending.Store(true)
	ks.relMu.Unlock()
}

// ReleaseLocked is Release for a caller that holds the lock.
func (s *Snapshot) ReleaseLocked() { s.release() }

func (s *Snapshot) release() {
	ks := s.ks
	for _, ts := range s.tables {
		for _, t := range ts {
			t.pins--
		}
	}
	s.tables = nil
	if ks.live[s.gen]--; ks.live[s.gen] == 0 {
		delete(ks.live, s.gen)
	}
	ks.liveMax = 0
	for g := range ks.live {
		if g > ks.liveMax {
			ks.liveMax = g
		}
	}
}
