package keyspace

// Snapshot is a point-in-time view of every database, taken without
// copying. Taking one costs O(databases × shards) under the lock. Entries
// it may read are copied by writers before they change them (see
// Keyspace.shared); the shards' maps are handled in one of two ways (see
// table):
//
//   - A streaming snapshot (Snapshot) attaches an undo log to each shard:
//     writers go on changing the maps in place, recording once per key
//     what the snapshot must see. Its ForEach pins one shard at a time
//     while it reads it (a writer to that shard copies it first, as for a
//     frozen snapshot), taking the lock only to pin and unpin, so the
//     caller must not hold the lock. BGSAVE and the AOF rewrite read such
//     snapshots: the memory a save costs is about the data written
//     meanwhile.
//   - A frozen snapshot (SnapshotDB, for KEYS) pins the maps: a writer
//     copies a pinned shard first. It is read without the lock, and may
//     be read by a caller that holds it (KEYS inside a transaction).
type Snapshot struct {
	ks       *Keyspace
	gen      uint32
	now      int64
	frozen   bool
	tables   [][]*table
	logs     [][]undoLog // streaming: per database, the log attached to each of tables
	keys     []int       // per database, at the time of the snapshot
	volatile []int

	// Extra is what the hook of SetSnapshotExtra gave when the snapshot
	// was taken: state of the server's that is saved with the dataset
	// (its function libraries), as of the same instant.
	Extra any
}

// SetSnapshotExtra sets the hook whose value every snapshot of all the
// databases keeps in Extra. Called under the lock.
func (ks *Keyspace) SetSnapshotExtra(fn func() any) { ks.snapExtra = fn }

// Snapshot takes a streaming snapshot of every database. Call with the
// lock held (inside Exec); read it without the lock, then Release it.
func (ks *Keyspace) Snapshot() *Snapshot {
	s := ks.newSnapshot(false)
	s.logs = make([][]undoLog, len(ks.dbs))
	for i, db := range ks.dbs {
		s.tables[i] = db.tablesInUse()
		logs := make([]undoLog, len(s.tables[i]))
		for j, t := range s.tables[i] {
			t.logs = append(t.logs, &logs[j])
		}
		s.logs[i] = logs
		s.keys[i], s.volatile[i] = db.keys, db.expires.len()
	}
	if ks.snapExtra != nil {
		s.Extra = ks.snapExtra()
	}
	return s
}

// SnapshotDB takes a frozen snapshot of database i only (KEYS): O(shards)
// under the lock. The other databases read as empty in it.
func (ks *Keyspace) SnapshotDB(i int) *Snapshot {
	s := ks.newSnapshot(true)
	s.tables[i] = ks.dbs[i].pin()
	s.keys[i], s.volatile[i] = ks.dbs[i].keys, ks.dbs[i].expires.len()
	return s
}

// FrozenSnapshot takes a frozen snapshot of every database: SnapshotDB's
// kind, for all of them and with Extra, O(databases × shards) under the
// lock. It may be read by a caller that holds the lock, as DEBUG RELOAD
// writes its file without letting go of it (Redis blocks the server for
// that save); that caller then releases it with ReleaseLocked.
func (ks *Keyspace) FrozenSnapshot() *Snapshot {
	s := ks.newSnapshot(true)
	for i, db := range ks.dbs {
		s.tables[i] = db.pin()
		s.keys[i], s.volatile[i] = db.keys, db.expires.len()
	}
	if ks.snapExtra != nil {
		s.Extra = ks.snapExtra()
	}
	return s
}

func (ks *Keyspace) newSnapshot(frozen bool) *Snapshot {
	n := len(ks.dbs)
	s := &Snapshot{ks: ks, gen: ks.gen, now: ks.now, frozen: frozen, tables: make([][]*table, n), keys: make([]int, n), volatile: make([]int, n)}
	ks.gen++
	ks.live[s.gen]++
	if s.gen > ks.liveMax {
		ks.liveMax = s.gen
	}
	return s
}

// tablesInUse returns the database's non-empty shards.
func (db *DB) tablesInUse() []*table {
	ts := make([]*table, 0, numShards)
	for _, t := range db.shards {
		if t != nil && t.len() > 0 {
			ts = append(ts, t)
		}
	}
	return ts
}

// pin marks the database's non-empty shards as read by a frozen snapshot
// and returns them.
func (db *DB) pin() []*table {
	ts := db.tablesInUse()
	for _, t := range ts {
		t.pins++
	}
	return ts
}

// NowMs is the time the snapshot was taken; keys past their deadline at
// that instant are not part of it.
func (s *Snapshot) NowMs() int64 { return s.now }

// ForEach calls fn for every key of database db that was live when the
// snapshot was taken, in no particular order, until fn returns false. fn
// must not modify the entry. A streaming snapshot takes the lock to pin
// and unpin each shard (not while it reads one); the caller must not hold
// it.
func (s *Snapshot) ForEach(db int, fn func(key string, e *Entry) bool) {
	s.each(db, func(k string, e *Entry) bool {
		if e.expiredBy(s.now) {
			return true
		}
		return fn(k, e)
	})
}

// ForEachAll is ForEach including the keys already past their deadline
// that expiry had not removed yet: what a save writes, so that a restart
// expires them and sends their expiry messages (as Redis's rdbSave writes
// them and a master drops them at load).
func (s *Snapshot) ForEachAll(db int, fn func(key string, e *Entry) bool) {
	s.each(db, fn)
}

func (s *Snapshot) each(db int, fn func(key string, e *Entry) bool) {
	if s.frozen {
		for _, t := range s.tables[db] {
			more := true
			t.all(func(e *Entry) bool {
				more = fn(e.Key(), e)
				return more
			})
			if !more {
				return
			}
		}
		return
	}
	// Each shard is pinned while it is read, so that its map and this
	// snapshot's log of it do not change meanwhile: a writer to that one
	// shard copies it first (writable), as for a frozen snapshot. The
	// lock is held only to pin and unpin, not while the shard is read.
	var pinned *table
	defer func() {
		if pinned != nil {
			s.ks.Lock()
			pinned.pins--
			s.ks.Unlock()
		}
	}()
	for j, t := range s.tables[db] {
		s.ks.Lock()
		if pinned != nil {
			pinned.pins--
		}
		t.pins++
		pinned = t
		s.ks.Unlock()
		if !readThrough(t, &s.logs[db][j], fn) {
			return
		}
	}
}

// readThrough calls fn for every key of t as a streaming snapshot sees it
// through its log: the map's entries with the log's in place of the keys
// changed since the snapshot, skipping those created since, then the keys
// deleted since. It reports false when fn stopped it. t is pinned.
func readThrough(t *table, log *undoLog, fn func(key string, e *Entry) bool) bool {
	more := true
	t.all(func(e *Entry) bool {
		if pre, changed := log.pre[e.Key()]; changed {
			if pre == nil {
				return true // created after the snapshot
			}
			e = pre
		}
		more = fn(e.Key(), e)
		return more
	})
	if !more {
		return false
	}
	for k, pre := range log.pre {
		if pre != nil && t.get(k, keyHash(k)) == nil {
			if !fn(k, pre) { // deleted since
				return false
			}
		}
	}
	return true
}

// Counts are database db's number of keys and of keys with a deadline
// when the snapshot was taken (the sizes RDB's RESIZEDB announces).
func (s *Snapshot) Counts(db int) (keys, volatile int) { return s.keys[db], s.volatile[db] }

// Release ends the snapshot: pinned shards become writable in place
// again, and undo logs are detached, once the next holder of the keyspace
// lock applies it (at its Lock or Exec). It never waits for the lock, so
// it is safe both with and without it: an offloaded reader may end up
// running inside a transaction that holds the lock. The snapshot must not
// be read after.
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
	for db, ts := range s.tables {
		for j, t := range ts {
			if s.frozen {
				t.pins--
				continue
			}
			log := &s.logs[db][j]
			for i, l := range t.logs {
				if l == log {
					t.logs = append(t.logs[:i], t.logs[i+1:]...)
					break
				}
			}
			if len(t.logs) == 0 {
				t.logs = nil
			}
		}
	}
	s.tables, s.logs = nil, nil
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
