package keyspace

// WATCH support: the keyspace side of MULTI/EXEC's optimistic locking
// (Redis multi.c). A Watch is one client's set of watched (database, key)
// pairs; the registry maps each watched pair to its watchers, and every
// path that changes a key signals it, so that the watchers' next EXEC
// fails. With nothing watched, a signal costs one length check.
//
// When the signal fires:
//   - at once, after the change, for SetString, Put, Delete, Take (RENAME,
//     MOVE), SetExpire, Persist (when a deadline was removed) and the
//     expiry funnel (lazy and active expiry);
//   - for an entry handed out by LookupWrite, at the end of the command
//     (EndCommand), and only if the command changed the dataset (its dirty
//     count is positive): a command that looks a key up for writing and
//     then fails (WRONGTYPE) or changes nothing (SETRANGE with an empty
//     value) does not touch the key, as in Redis, where commands call
//     signalModifiedKey only after a change;
//   - for FLUSHDB, FLUSHALL and SWAPDB, for every watched key that exists
//     in a database emptied or replaced (touchAllWatchedKeysInDb).
//
// Redis 7.0 remembers, per watched key, whether the key was already
// logically expired (past its deadline, not yet removed) at WATCH time: its
// later removal by expiry is no logical change and does not break the
// transaction, while any other change does; a key that expires after
// WATCH breaks it, even when nothing removed it yet (checked at EXEC by
// Watch.Broken).

// watchedKey is one (database, key) pair of one Watch.
type watchedKey struct {
	w       *Watch
	db      int
	key     string
	expired bool // logically expired when watched (Redis's wk->expired)
}

// watchRegistry is the keyspace's index of watched keys, per database
// number (not per DB object: SWAPDB leaves watchers on their number, as
// Redis keeps watched_keys with the database).
type watchRegistry struct {
	n       int                        // registered pairs over all databases
	dbs     []map[string][]*watchedKey // by database number, made on first use
	pending []pendingTouch             // LookupWrite signals awaiting EndCommand
}

type pendingTouch struct {
	db  *DB
	key string
}

// Watch is one client's watched keys and whether one of them was touched.
// All its methods run with the keyspace lock held.
type Watch struct {
	ks    *Keyspace
	keys  []*watchedKey
	dirty bool
	// onTouch, when set, is called for each touch of a watched key
	// instead of marking the Watch dirty: the blocking layer's way to
	// hear that a stream a client waits on was changed or deleted.
	onTouch func(db int, key string)
}

// NewWatch makes an empty Watch for one client.
func (ks *Keyspace) NewWatch() *Watch { return &Watch{ks: ks} }

// NewTouchWatch makes a Watch that calls fn, under the lock, whenever a
// key it watches is touched (changed, deleted, overwritten, flushed),
// however often; it is never dirty.
func (ks *Keyspace) NewTouchWatch(fn func(db int, key string)) *Watch {
	return &Watch{ks: ks, onTouch: fn}
}

// Add watches key in db. A key already watched by w in db is not added
// again; once w is dirty nothing is added (the transaction will fail
// anyway, as Redis's watchCommand skips a dirty client). key is copied.
func (w *Watch) Add(db *DB, key []byte) {
	if w.dirty {
		return
	}
	for _, wk := range w.keys {
		if wk.db == db.id && wk.key == string(key) {
			return
		}
	}
	r := &w.ks.watch
	if r.dbs == nil {
		r.dbs = make([]map[string][]*watchedKey, len(w.ks.dbs))
	}
	m := r.dbs[db.id]
	if m == nil {
		m = map[string][]*watchedKey{}
		r.dbs[db.id] = m
	}
	wk := &watchedKey{w: w, db: db.id, key: string(key), expired: db.logicallyExpired(key)}
	m[wk.key] = append(m[wk.key], wk)
	w.keys = append(w.keys, wk)
	r.n++
}

// WatchedKeys is the number of (client, database, key) watches, for
// INFO and tests.
func (ks *Keyspace) WatchedKeys() int { return ks.watch.n }

// Len is the number of keys w watches.
func (w *Watch) Len() int { return len(w.keys) }

// Dirty reports whether a watched key was touched since it was watched.
func (w *Watch) Dirty() bool { return w.dirty }

// Broken reports whether EXEC must fail: a watched key was touched, or
// one that was live when watched is now past its deadline (Redis's
// isWatchedKeyExpired), at the running command's time.
func (w *Watch) Broken() bool {
	if w.dirty {
		return true
	}
	for _, wk := range w.keys {
		if !wk.expired && w.ks.dbs[wk.db].logicallyExpired([]byte(wk.key)) {
			return true
		}
	}
	return false
}

// Clear unwatches every key and forgets that one was touched (UNWATCH,
// EXEC, DISCARD, RESET, the client's end).
func (w *Watch) Clear() {
	r := &w.ks.watch
	for _, wk := range w.keys {
		m := r.dbs[wk.db]
		list := m[wk.key]
		for i, x := range list {
			if x == wk {
				last := len(list) - 1
				list[i] = list[last]
				list[last] = nil
				list = list[:last]
				break
			}
		}
		if len(list) == 0 {
			delete(m, wk.key)
		} else {
			m[wk.key] = list
		}
		r.n--
	}
	clear(w.keys)
	w.keys = w.keys[:0]
	w.dirty = false
}

// logicallyExpired reports whether key is present but past its deadline
// (Redis's keyIsExpired), without removing it.
func (db *DB) logicallyExpired(key []byte) bool {
	e := db.peek(key)
	return e != nil && e.expiredBy(db.ks.now)
}

// Tracker is what client-side caching needs of the keyspace (Redis's
// trackingInvalidateKey and trackingInvalidateKeysOnFlush, called where
// signalModifiedKey and signalFlushedDb touch the WATCHed keys): every
// change of a key, by name whatever its database, and every flush or
// swap of databases. Called under the lock, after the change.
type Tracker interface {
	KeyModified(key []byte)
	Flushed()
}

// SetTracker makes t hear of every change from now on.
func (ks *Keyspace) SetTracker(t Tracker) { ks.tracker = t }

// flushed tells the tracker that databases were emptied or swapped.
func (ks *Keyspace) flushed() {
	if ks.tracker != nil {
		ks.tracker.Flushed()
	}
}

// touched signals a change of key in db, after the change.
func (db *DB) touched(key []byte) {
	if db.ks.watch.n != 0 {
		db.ks.watch.touch(db, key)
	}
	if db.ks.tracker != nil {
		db.ks.tracker.KeyModified(key)
	}
}

// touchedString is touched for a key held as a string.
func (db *DB) touchedString(key string) {
	if db.ks.watch.n != 0 || db.ks.tracker != nil {
		db.touched([]byte(key))
	}
}

// mayChange records that the caller of LookupWrite (write is true) may
// change key's entry in place: the signal fires at EndCommand if the
// command changed the dataset.
func (db *DB) mayChange(key []byte, write bool) {
	if write && (db.ks.watch.n != 0 || db.ks.tracker != nil) {
		db.ks.watch.later(db, key)
	}
}

// EndCommand ends a command started with BeginCommand: the keys it looked
// up for writing are signalled as touched if changed is set (the command
// changed the dataset), and forgotten otherwise. The entries it changed
// in place are re-measured for used_memory.
func (ks *Keyspace) EndCommand(changed bool) {
	if len(ks.watch.pending) != 0 {
		ks.watch.flushPending(changed)
	}
	if len(ks.dirty) != 0 {
		ks.settle()
	}
}

func (r *watchRegistry) later(db *DB, key []byte) {
	if db.ks.tracker == nil && (r.dbs == nil || r.dbs[db.id][string(key)] == nil) {
		return
	}
	r.pending = append(r.pending, pendingTouch{db, string(key)})
}

func (r *watchRegistry) flushPending(changed bool) {
	p := r.pending
	if changed {
		for _, t := range p {
			t.db.touched([]byte(t.key))
		}
	}
	clear(p)
	r.pending = p[:0]
}

// touch marks dirty every watcher of key in db (touchWatchedKey). A
// watcher that saw the key already expired is not: if the key is gone
// now, its removal was no logical change and the mark is cleared; if it
// is present (a case Redis's ordering makes unreachable: a write removes
// an expired key first), it is left alone.
func (r *watchRegistry) touch(db *DB, key []byte) {
	if r.dbs == nil {
		return
	}
	list := r.dbs[db.id][string(key)]
	for _, wk := range list {
		if wk.w.onTouch != nil {
			wk.w.onTouch(db.id, string(key))
			continue
		}
		if wk.expired {
			if db.peek(key) == nil {
				wk.expired = false
			}
			continue
		}
		wk.w.dirty = true
	}
}

// flushing signals that emptied's contents are about to be dropped and,
// for SWAPDB, replaced by those of replaced (nil for a flush). Call it
// before the change. Only keys that exist in either database touch their
// watchers; expired-at-WATCH marks follow Redis's touchAllWatchedKeysInDb.
func (r *watchRegistry) flushing(emptied, replaced *DB) {
	if r.n == 0 || r.dbs == nil {
		return
	}
	for key, list := range r.dbs[emptied.id] {
		k := []byte(key)
		inEmptied := emptied.peek(k) != nil
		inReplaced := replaced != nil && replaced.peek(k) != nil
		if !inEmptied && !inReplaced {
			continue
		}
		for _, wk := range list {
			if wk.w.onTouch != nil {
				wk.w.onTouch(emptied.id, key)
				continue
			}
			if wk.expired {
				if !inReplaced {
					wk.expired = false // expired key now deleted: no logical change
					continue
				}
				if replaced.logicallyExpired(k) {
					continue // expired key remains expired
				}
			} else if !inEmptied && replaced.logicallyExpired(k) {
				wk.expired = true // a missing key replaced by an expired one
				continue
			}
			wk.w.dirty = true
		}
	}
}
