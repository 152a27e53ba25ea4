package keyspace

import (
	"bytes"
	"hash/maphash"
	"math/rand/v2"
	"time"
)

// numShards splits each database's map so that a snapshot can take it in
// O(shards) and a snapshot's reader pins one shard at a time (a writer to
// that shard copies it first: about keys/numShards entries). It is also
// the unit of SCAN's cursor. With 1024 shards a 1M-key database has about
// 1,000 keys a shard: the maps stay dense enough that commands on random
// keys run 10-18% less CPU than with 4096 (redis-benchmark -P 16 -r 100000:
// SET, INCR, SETEX), and taking a snapshot costs ~0.15 ms under the lock
// (BenchmarkSnapshot).
const (
	shardBits = 10
	numShards = 1 << shardBits
)

var shardSeed = maphash.MakeSeed()

// DB is one numbered database: its keys, in a map split into shards
// (snapshots copy a shard before a write), and its expiry index
// (deadlines.go). Every method must be called with the keyspace lock
// held (inside Keyspace.Exec).
type DB struct {
	ks      *Keyspace
	id      int
	shards  [numShards]*table
	keys    int
	expires deadlines
	fields  fieldIndex // hashes with volatile fields (hashfields.go)
	used    int64      // entries' and key strings' cost, see memory.go
	slots   *slotIndex // keys by hash slot, in cluster mode (slots.go)
	keyCost int64      // a key's cost in the indexes, see memory.go
	// resizing: keys whose member table a write or a load left resizing,
	// for the cron to finish (resizes.go).
	resizing map[string]struct{}
}

func newDB(ks *Keyspace, id int) *DB {
	return &DB{ks: ks, id: id, expires: newDeadlines(), fields: newFieldIndex(), keyCost: tableSlotCost}
}

// ID is the database number.
func (db *DB) ID() int { return db.id }

// Len is the number of keys, expired-but-not-yet-removed ones included,
// as DBSIZE counts them in Redis.
func (db *DB) Len() int { return db.keys }

// Volatile is the number of keys with a deadline.
func (db *DB) Volatile() int { return db.expires.len() }

// shardOf is the shard of a key with hash h (keyHash).
func shardOf(h uint64) int { return int(h & (numShards - 1)) }

// get returns the entry stored under key, whose hash is h.
func (db *DB) get(key string, h uint64) *Entry {
	if t := db.shards[shardOf(h)]; t != nil {
		return t.get(key, h)
	}
	return nil
}

// writable returns shard i ready for writing: created when empty, copied
// when a frozen snapshot has pinned it. The copy starts without undo
// logs: the streaming snapshots attached to the original read it, which
// nothing changes any more.
func (db *DB) writable(i int) *table {
	t := db.shards[i]
	if t == nil {
		t = &table{}
		db.shards[i] = t
		return t
	}
	if t.pins > 0 {
		c := t.clone()
		db.shards[i] = c
		return c
	}
	return t
}

// peek finds a key without expiring or touching it.
func (db *DB) peek(key []byte) *Entry {
	k := bytesKey(key)
	return db.get(k, keyHash(k))
}

// live applies lazy expiry to e, found under key, and returns the live
// entry of key: e itself, nil when the key must be treated as absent, or
// the entry a deadline hook left in its place (Keep, Rewritten).
//
// The replica rule: only a master deletes an expired key (and emits its
// expiry). A replica answers as if the key were gone but keeps it until
// the master's DEL arrives, so that master and replica never diverge.
func (db *DB) live(key []byte, e *Entry) *Entry {
	if at := e.ExpireAt(); at == 0 || at > db.ks.now || db.ks.loading {
		// Nothing expires while a data set loads (keyIsExpired): the
		// AOF being replayed holds the DEL of every key that expired.
		return e
	}
	if db.ks.replica {
		if db.ks.obeying {
			return e // the master's own commands: its DEL is what removes it
		}
		return nil
	}
	if db.ks.expiryPaused(db.ks.now) {
		return nil // CLIENT PAUSE: gone for the reader, removed after
	}
	if db.expireLazily(string(key), e) {
		return db.peek(key)
	}
	return nil
}

// lazyCatchUp bounds the keys a lazy expiry expires ahead of its own (see
// expireLazily), so that one read never does more than a slice of the
// expiry timer's work.
const lazyCatchUp = 1024

// expireLazily expires a key met past its deadline by a command, before
// the expiry timer got to it. Expiry events must leave in deadline order
// (the 0MQ stream promises it), so the keys of this database due earlier
// are expired first, in order, as the timer would have: normally none or
// a few, since the timer runs at the deadlines; at most lazyCatchUp, past
// which a backlog the timer is still working off may be overtaken.
// It reports whether a deadline hook kept the key.
func (db *DB) expireLazily(key string, e *Entry) (kept bool) {
	db.catchUp(e.ExpireAt())
	if e = db.get(key, keyHash(key)); e == nil {
		return false // a field funnel's catch-up took the hash's last fields
	}
	return db.expireKey(key, e)
}

// catchUp expires, in deadline order, the keys and the hash fields of
// this database due before at, at most lazyCatchUp steps (a key, or one
// millisecond's fields of a hash): what the expiry timer would have done
// before a lazy expiry at at, so that messages leave in deadline order.
func (db *DB) catchUp(at int64) {
	for n := 0; n < lazyCatchUp; n++ {
		d, ok := db.expires.min()
		f, fok := db.fields.dl.min()
		switch {
		case fok && f.at < at && (!ok || f.at < d.at):
			db.expireFieldsOf(f.key, f.e, f.at)
		case ok && d.at < at:
			db.expireKey(d.key, db.get(d.key, keyHash(d.key)))
		default:
			return
		}
	}
}

// Lookup returns the live entry for key, or nil, for a read. It applies
// lazy expiry, counts a keyspace hit or miss, and records the access
// (OBJECT IDLETIME, OBJECT FREQ) unless the current command asked not to
// touch keys. As Redis skips the LRU update while a fork is alive, an
// entry a live snapshot may read is not touched: the snapshot reads it
// without the lock.
func (db *DB) Lookup(key []byte) *Entry {
	e := db.LookupNoTouch(key)
	if e != nil && !db.ks.noTouch && !db.ks.shared(e) {
		db.ks.touch(e)
	}
	return e
}

// LookupNoTouch is Lookup for introspection (TYPE, TTL, EXISTS): lazy
// expiry and keyspace hit/miss counting, no access recorded.
func (db *DB) LookupNoTouch(key []byte) *Entry { return db.lookupCounted(key, true) }

// LookupNoNotify is LookupNoTouch without the keymiss event, for OBJECT,
// which Redis looks up with LOOKUP_NONOTIFY.
func (db *DB) LookupNoNotify(key []byte) *Entry { return db.lookupCounted(key, false) }

// Peek returns the entry stored under key, past its deadline or not,
// without expiring it or counting anything: MEMORY USAGE, which Redis
// answers from the dictionary directly.
func (db *DB) Peek(key []byte) *Entry { return db.peek(key) }

func (db *DB) lookupCounted(key []byte, notify bool) *Entry {
	e := db.peek(key)
	if e != nil {
		e = db.live(key, e)
	}
	if e == nil {
		db.ks.stats.KeyspaceMiss++
		if notify && db.ks.onMiss != nil {
			db.ks.onMiss(db.id, key)
		}
		return nil
	}
	db.ks.stats.KeyspaceHits++
	return e
}

// LookupWrite returns the live entry for key, or nil, for an in-place
// change. The entry returned is private to the live keyspace (copied
// first if a snapshot may read it), so the caller may modify it. Write
// lookups count no keyspace hit or miss.
func (db *DB) LookupWrite(key []byte) *Entry { return db.lookupPrivate(key, true) }

// LookupWriteRead is a write command's lookup of a key it may leave
// unchanged (SMOVE's destination when the member is already in it), as
// Redis's lookupKeyWrite: lazy expiry and the access recorded, but no
// keyspace hit or miss counted and no keymiss event. Nothing is copied
// or signalled to WATCH: the caller must not modify the entry, and goes
// through LookupWrite once it decides to.
func (db *DB) LookupWriteRead(key []byte) *Entry {
	e := db.peek(key)
	if e != nil {
		e = db.live(key, e)
	}
	if e != nil && !db.ks.noTouch && !db.ks.shared(e) {
		db.ks.touch(e)
	}
	return e
}

// LookupWriteQuiet is LookupWrite for a change that Redis does not signal
// to WATCH (signalModifiedKey): a stream's consumer-group state, which
// XREADGROUP, XACK, XCLAIM and XGROUP change without touching the key.
func (db *DB) LookupWriteQuiet(key []byte) *Entry {
	k := bytesKey(key)
	h := keyHash(k)
	e := db.get(k, h)
	if e != nil {
		e = db.live(key, e)
	}
	if e == nil {
		return nil
	}
	return db.private(h, nil, e, true)
}

// lookupMeta returns the live entry for key, or nil, ready for a change
// of its metadata (deadline) only. An entry a snapshot may read is
// replaced by a shallow copy that keeps the old generation: the value
// stays shared, so a later LookupWrite still deep-copies it before any
// change of the value. This keeps EXPIRE on a large collection O(1)
// while a snapshot is live.
func (db *DB) lookupMeta(key []byte) *Entry { return db.lookupPrivate(key, false) }

// lookupPrivate is LookupWrite (deep) or lookupMeta (shallow).
func (db *DB) lookupPrivate(key []byte, deep bool) *Entry {
	k := bytesKey(key)
	h := keyHash(k)
	e := db.get(k, h)
	if e != nil {
		e = db.live(key, e)
	}
	if e == nil {
		return nil
	}
	return db.private(h, key, e, deep)
}

// private makes e, the live entry of key (hash h), private to the live
// keyspace for a change (see lookupPrivate) and records the access.
func (db *DB) private(h uint64, key []byte, e *Entry, deep bool) *Entry {
	if deep && e.compact() && !db.ks.shared(e) {
		// A change in place may change what the entry costs, which a
		// compact entry does not record: the change goes to an extended
		// copy, which the output a pin protects does not see either.
		c := db.extendedCopy(e)
		db.replaceWith(h, e, c)
		e = c
	}
	if deep && e.pinned() && !db.ks.shared(e) {
		// Output refers to the value: the change goes to a copy.
		e.setStrBytes(bytes.Clone(e.Str()))
		e.flags &^= flagPinned
	}
	if db.ks.shared(e) {
		var c *Entry
		if deep {
			c = e.clone(true)
			c.setGen(db.ks.gen)
		} else {
			// The copy shares the value, but for one in e's tail: e
			// stays the snapshot's alone, and the copy alone is counted.
			c = e.shallow()
		}
		db.replaceWith(h, e, c)
		e = c
	}
	if !db.ks.noTouch {
		db.ks.touch(e)
	}
	if key != nil {
		db.mayChange(key, deep)
	}
	if deep {
		db.markDirty(e)
	}
	return e
}

// replaceWith stores c, a copy of e, in e's place (key hash h), with the
// counts and indexes following.
func (db *DB) replaceWith(h uint64, e, c *Entry) {
	wasDirty := e.flags&flagDirty != 0
	db.writable(shardOf(h)).put(c, h)
	db.replaceEntry(e, c, h)
	db.reheld(e, c)
	if wasDirty {
		db.markDirty(c) // changed earlier in this command: measured at its end
	}
}

// Exists reports whether key is live, without touching it or counting a
// keyspace hit (a lookup for write, as SET NX/XX makes).
func (db *DB) Exists(key []byte) bool {
	e := db.peek(key)
	return e != nil && db.live(key, e) != nil
}

// Deadline reports whether key is live and its deadline (0 for none),
// as a lookup for write: lazy expiry, no keyspace hit or miss counted,
// nothing copied. EXPIRE reads it before deciding what to change.
func (db *DB) Deadline(key []byte) (at int64, ok bool) {
	e := db.peek(key)
	if e != nil {
		e = db.live(key, e)
	}
	if e == nil {
		return 0, false
	}
	return e.ExpireAt(), true
}

// TypeOf is the type of key, TypeNone when absent. Like Redis's TYPE it
// does not touch the key.
func (db *DB) TypeOf(key []byte) Type {
	if e := db.LookupNoTouch(key); e != nil {
		return e.typ
	}
	return TypeNone
}

// SetString stores a string value under key, replacing any value of any
// type. val is copied. With keepTTL the key's deadline survives; otherwise
// expireAt (Unix ms, 0 for none) becomes the deadline.
func (db *DB) SetString(key, val []byte, keepTTL bool, expireAt int64) {
	db.setString(key, val, keepTTL, expireAt, false, false)
}

// SetStringOwned is SetString storing val itself, not a copy: the caller
// hands it over and never touches it again (a big argument the request
// reader allocated for it, which a 100 MB SET then holds once).
func (db *DB) SetStringOwned(key, val []byte, keepTTL bool, expireAt int64) {
	db.setString(key, val, keepTTL, expireAt, true, false)
}

// OverwriteString is SetString without expiring the old value first when
// its deadline passed: the old value, whatever its type, is replaced as
// it stands, with no expiry of its own. A deadline hook rewrites the key
// it is asked about with it (Rewritten), or keys of another database.
func (db *DB) OverwriteString(key, val []byte, expireAt int64) {
	db.setString(key, val, false, expireAt, false, true)
}

// expiredBeforeWrite expires old, the entry of key in shard i met past
// its deadline by a write, and returns what then stands under key: nil,
// or the entry a deadline hook kept.
func (db *DB) expiredBeforeWrite(h uint64, key []byte, old *Entry) *Entry {
	if !db.expireLazily(old.Key(), old) {
		return nil
	}
	return db.get(bytesKey(key), h)
}

// reheld moves the deadline index's hold of a key from old to e, which
// replaced it in the table: the index holds the table's entries.
func (db *DB) reheld(old, e *Entry) {
	if at := old.ExpireAt(); at != 0 && at == e.ExpireAt() && old != e {
		db.expires.del(at, old)
		db.expires.add(at, e)
	}
}

// PinStr records that output not yet written refers to e's string value
// (a GET of a large value written from the stored bytes), so that the
// value does not change under it: the next write lookup (LookupWrite) of
// the key changes a copy, and SET does not overwrite it in place. It
// reports false, pinning nothing, for an entry a live snapshot may read
// (whose value cannot change anyway while the snapshot lives, but may
// after): the caller then copies the value into its output.
func (db *DB) PinStr(e *Entry) bool {
	if db.ks.shared(e) {
		return false
	}
	e.flags |= flagPinned
	return true
}

func (db *DB) setString(key, val []byte, keepTTL bool, expireAt int64, owned, overwrite bool) {
	k := bytesKey(key)
	h := keyHash(k)
	i := shardOf(h)
	t := db.shards[i]
	var old *Entry
	if t != nil {
		old = t.get(k, h)
	}
	if old != nil && old.expiredBy(db.ks.now) && !db.ks.replica && !overwrite {
		// The old value had expired: it is expired now (with its event,
		// as Redis's lookup for write does), then the key is created.
		old = db.expiredBeforeWrite(h, key, old)
		t = db.shards[i]
	}
	// The key's deadline after the write.
	deadline := expireAt
	if keepTTL {
		deadline = 0
		if old != nil {
			deadline = old.ExpireAt()
		}
	}
	// Whether the new value makes a compact entry (see Entry): no
	// deadline, a value that fits the tail, no snapshot live, which
	// would have to copy it at its next write.
	compact := !owned && deadline == 0 && db.ks.liveMax == 0 && fitsTail(len(k), len(val))
	if old != nil && t.pins == 0 && db.takesInPlace(old, val, owned, compact) {
		// Reuse the entry and, when it fits, the value's storage: the
		// common overwrite allocates nothing.
		if owned || old.pinned() {
			db.ks.dropped(old, FreeServerDel)
			old.flags &^= flagPinned
			if owned {
				old.setStrBytes(val)
			} else {
				old.setStrBytes(append([]byte(nil), val...))
			}
		} else {
			if !old.holds(len(val)) {
				db.ks.dropped(old, FreeServerDel)
			}
			old.setStrCopy(val)
		}
		old.strEnc = strEncAuto
		db.inheritAccess(old, old)
		db.remeasure(old)
		if !keepTTL {
			db.setDeadline(old, deadline)
		}
		db.touched(key)
		return
	}
	var e *Entry
	if owned {
		e, _ = newEntry(old.keyOr(k), 0, true)
		e.typ = TypeString
		e.setStrBytes(val)
	} else {
		e, _ = newEntry(old.keyOr(k), len(val), !compact)
		e.typ = TypeString
		e.setStrCopy(val)
	}
	if !e.compact() {
		e.setGen(db.ks.gen)
	}
	e.atime, e.freq = db.ks.lru, lfuInitVal
	if old != nil {
		db.ks.dropped(old, FreeServerDel) // dbOverwrite
		db.inheritAccess(e, old)
		if at := old.ExpireAt(); at != 0 {
			db.expires.del(at, old)
		}
		t = db.writable(i)
		t.put(e, h)
		db.replaceEntry(old, e, h)
	} else {
		t = db.writable(i)
		t.insertNew(e, h)
		db.keys++
		db.addEntry(e, h)
		if db.ks.onAdded != nil {
			db.ks.onAdded(db.id, key)
		}
	}
	if deadline != 0 {
		e.setExpireAt(deadline)
		db.expires.add(deadline, e)
		db.scheduled(e.Key(), deadline)
	}
	db.touched(key)
}

// takesInPlace reports whether old, the live entry of a key SET gives
// val, can take it in place. A value outgrowing the tail gets a new
// entry instead, which it fits in; so does a value that changes whether
// the entry is compact (compact: the new one is; see setString), so that
// an extended entry, made while a snapshot was live or changed in place,
// becomes compact again at its next plain SET.
func (db *DB) takesInPlace(old *Entry, val []byte, owned, compact bool) bool {
	switch {
	case old.typ != TypeString || db.ks.shared(old) || old.compact() != compact:
		return false
	case compact:
		// Its value stays inline, in the room it has.
		return !old.pinned() && len(val) <= int(old.vcap)
	}
	return owned || old.pinned() || len(val) <= int(old.vcap) || !old.inline()
}

// keyOr is the key of e, an entry stored under k, or k itself when e is
// nil: a new entry for the key copies its key from there.
func (e *Entry) keyOr(k string) string {
	if e != nil {
		return e.Key()
	}
	return k
}

// inheritAccess sets the access data of e, the new value of a key whose
// old value old is overwritten by the SET family, as Redis's dbSetValue
// does: under LFU the new value keeps the old one's counter, after the
// access of the lookup for write (lookupKeyWrite); otherwise it starts
// fresh. e and old may be the same entry (overwritten in place).
func (db *DB) inheritAccess(e, old *Entry) {
	if db.ks.lfu {
		if !db.ks.noTouch && !db.ks.shared(old) {
			db.ks.touch(old)
		}
		e.freq, e.atime = old.freq, old.atime
		return
	}
	e.freq, e.atime = lfuInitVal, db.ks.lru
}

// Insert stores e under key while a data set loads (SetLoading): Put
// without Put's lazy expiry of an old value (nothing expires while
// loading), keeping the key string itself in the map and the deadline
// index rather than a copy. A key the file holds twice ends with the
// later value.
func (db *DB) Insert(key string, e *Entry) {
	e = e.rekeyed(key)
	e = db.extendShared(e)
	if e.gen() == 0 {
		e.setGen(db.ks.gen)
		e.freq = lfuInitVal
	}
	if !db.ks.shared(e) {
		e.atime = db.ks.lru
	}
	h := keyHash(key)
	t := db.writable(shardOf(h))
	old := t.put(e, h)
	if old != nil {
		if at := old.ExpireAt(); at != 0 {
			db.expires.del(at, old)
		}
		db.replaceEntry(old, e, h)
	} else {
		db.keys++
		db.addEntry(e, h)
	}
	if at := e.ExpireAt(); at != 0 {
		db.expires.add(at, e)
		db.scheduled(e.Key(), at)
	}
	if t := e.memberTable(); t != nil && t.resizing() {
		// The decoder's last Set began a growth: no write finishes it.
		db.noteResizing(key)
	}
	db.touchedString(key)
}

// extendShared returns e, an entry about to be stored, or, while a
// snapshot is live and e is compact, an extended copy of it made in the
// current generation: a compact entry counts as one the snapshot may
// read, which its every write would copy again.
func (db *DB) extendShared(e *Entry) *Entry {
	if db.ks.liveMax == 0 || !e.compact() {
		return e
	}
	return db.extendedCopy(e)
}

// extendedCopy is an extended copy of the compact entry e, made in the
// current generation.
func (db *DB) extendedCopy(e *Entry) *Entry {
	c := e.clone(false)
	c.setGen(db.ks.gen)
	return c
}

// Put stores e under key, replacing any value. The entry's deadline is
// e's (NewString's or NewObject's argument). The keyspace
// takes ownership of e. An old value past its deadline is expired first
// (with its event), as Redis's lookup for write would; a live old value
// is simply replaced.
//
// e is either fresh (NewString, NewObject, Entry.Copy) or an entry
// returned by Take. A taken entry keeps its generation, so that if a
// snapshot still reads it, the next LookupWrite copies it first. What
// is stored is e, or a copy of it made for the key (Entry.rekeyed):
// the caller uses the entry Put returns, not e, afterwards.
func (db *DB) Put(key []byte, e *Entry) *Entry {
	k := bytesKey(key)
	h := keyHash(k)
	i := shardOf(h)
	e = db.extendShared(e)
	if e.gen() == 0 {
		e.setGen(db.ks.gen)
		e.freq = lfuInitVal
	}
	if !db.ks.shared(e) {
		e.atime = db.ks.lru
	}
	var old *Entry
	if t := db.shards[i]; t != nil {
		old = t.get(k, h)
	}
	if old != nil && old.expiredBy(db.ks.now) && !db.ks.replica {
		old = db.expiredBeforeWrite(h, key, old)
	}
	e = e.rekeyed(old.keyOr(k))
	t := db.writable(i)
	if old != nil {
		if at := old.ExpireAt(); at != 0 {
			db.expires.del(at, old)
		}
		if old != e {
			db.ks.dropped(old, FreeServerDel) // dbOverwrite
		}
		t.put(e, h)
		db.replaceEntry(old, e, h)
	} else {
		t.insertNew(e, h)
		db.keys++
		db.addEntry(e, h)
		if db.ks.onAdded != nil {
			db.ks.onAdded(db.id, key)
		}
	}
	if e.typ != TypeString || e.flags&flagDirty != 0 {
		db.markStored(e)
	}
	if at := e.ExpireAt(); at != 0 {
		db.expires.add(at, e)
		db.scheduled(e.Key(), at)
	}
	db.touched(key)
	return e
}

// NewString makes an entry holding a string value (not copied, unless
// it is short enough for the entry itself). Put stores it under a key of
// its own; NewStringFor, made for its key, saves Put that copy.
func NewString(val []byte, expireAt int64) *Entry { return NewStringFor("", val, expireAt) }

// NewStringFor is NewString for an entry to be stored under key (Put,
// Insert): the entry holds the key already. Without a deadline, a value
// that fits the tail makes a compact entry (see Entry).
func NewStringFor(key string, val []byte, expireAt int64) *Entry {
	compact := expireAt == 0 && fitsTail(len(key), len(val))
	e, _ := newEntry(key, len(val), !compact)
	e.typ = TypeString
	if compact {
		e.freq = lfuInitVal // fresh, which Put tells by an extended entry's generation 0
	} else {
		e.setExpireAt(expireAt)
	}
	if e.inline() && len(val) <= int(e.vcap) {
		e.setStrCopy(val)
	} else {
		e.setStrBytes(val)
	}
	return e
}

// NewObject makes an entry holding a collection value.
func NewObject(obj Object, expireAt int64) *Entry { return NewObjectFor("", obj, expireAt) }

// NewObjectFor is NewObject for an entry to be stored under key.
func NewObjectFor(key string, obj Object, expireAt int64) *Entry {
	room := 0
	if h, ok := obj.(*Hash); ok {
		room = len(h.lpb()) // packed fields go into the tail
	}
	e, _ := newEntry(key, room, true)
	e.setObj(obj)
	e.setExpireAt(expireAt)
	return e
}

// AddHash stores an empty hash under key, which holds no live key, and
// returns it for the caller to add pairs (at least one, in the same
// command: an empty hash is no key) and to Convert first, as HSET does.
// When pairs (fields and values) will be packed and fit, their room is
// in the entry itself, so a new small hash is one allocation: building
// it apart (NewHash) and storing it (PutObject) makes two more, a Hash
// and its packed array, which the entry then copies and drops.
func (db *DB) AddHash(key []byte, lim HashLimits, pairs [][]byte) *Hash {
	room, small := packedRoom(lim, pairs)
	if !small || int64(len(pairs)/2) > lim.MaxEntries {
		room = 0
	}
	e, inTail := newEntry(bytesKey(key), room, true)
	if !inTail {
		e.ref, e.vlen, e.vcap = nil, 0, 0
	}
	e.typ = TypeHash
	return db.Put(key, e).hash() // measured once the caller filled it (Put)
}

// PutObject stores the collection obj under key: Put of NewObjectFor.
func (db *DB) PutObject(key []byte, obj Object) *Entry {
	return db.Put(key, NewObjectFor(bytesKey(key), obj, 0))
}

// Copy returns a private deep copy of e for storing under another key
// (COPY): a hash's or sorted set's records are shared, and from then on
// replaced, never rewritten in place (Hash.Clone, ZSet.Clone). The copy
// keeps the deadline and the string encoding, but like Redis's
// dupStringObject it owns its integer: never the shared object.
func (e *Entry) Copy() *Entry {
	c := e.clone(false)
	c.setGen(0)
	if c.typ == TypeString && c.strEnc == strEncAuto {
		c.strEnc = strEncIntOwned
	}
	return c
}

// setDeadline changes e's deadline (0 removes it), keeping the index in
// step, and returns the entry that has it: e, or for a compact entry
// given a deadline, the extended copy stored in its place. e must be
// private (from LookupWrite or lookupMeta, or fresh) and, when compact,
// stored.
func (db *DB) setDeadline(e *Entry, at int64) *Entry {
	was := e.ExpireAt()
	if was == at {
		return e
	}
	if e.compact() {
		c := db.extendedCopy(e)
		db.replaceWith(keyHash(e.Key()), e, c)
		e = c
	}
	if was != 0 {
		db.expires.del(was, e)
	}
	e.setExpireAt(at)
	if at != 0 {
		db.expires.add(at, e)
		db.scheduled(e.Key(), at)
	}
	return e
}

// SetExpire sets key's deadline to at (Unix ms). It reports false when
// the key does not exist. A deadline in the past is stored as given; the
// caller decides whether to delete instead (EXPIRE does).
func (db *DB) SetExpire(key []byte, at int64) bool {
	e := db.lookupMeta(key)
	if e == nil {
		return false
	}
	db.setDeadline(e, at)
	db.touched(key)
	return true
}

// Persist removes key's deadline, reporting whether it had one (false
// also when the key does not exist).
func (db *DB) Persist(key []byte) bool {
	e := db.lookupMeta(key)
	if e == nil || e.ExpireAt() == 0 {
		return false
	}
	db.setDeadline(e, 0)
	db.touched(key)
	return true
}

// Delete removes key, reporting whether it existed (and was live). This
// is an explicit deletion: no expiry event. It is a command's deletion of
// a key as a side effect (Redis's dbDelete); DeleteAs names another kind.
func (db *DB) Delete(key []byte) bool { return db.DeleteAs(key, FreeServerDel) }

// DeleteAs is Delete for a deletion of kind m (DEL, UNLINK, a deadline
// already past), which decides whether Redis would have freed the value
// in the background (lazyfreed_objects).
func (db *DB) DeleteAs(key []byte, m FreeMode) bool {
	k := bytesKey(key)
	h := keyHash(k)
	e := db.get(k, h)
	if e != nil {
		e = db.live(key, e)
	}
	if e == nil {
		return false
	}
	db.remove(h, e)
	db.ks.dropped(e, m)
	return true
}

// Take removes key and returns its entry (for RENAME and MOVE), or nil.
// The entry may still be read by a live snapshot: do not modify it; Put
// it under its new key, and change it only through LookupWrite.
func (db *DB) Take(key []byte) *Entry {
	k := bytesKey(key)
	h := keyHash(k)
	e := db.get(k, h)
	if e != nil {
		e = db.live(key, e)
	}
	if e == nil {
		return nil
	}
	db.remove(h, e)
	return e
}

// remove deletes e, the entry stored under its key (hash h).
func (db *DB) remove(h uint64, e *Entry) {
	t := db.writable(shardOf(h))
	t.del(e.Key(), h)
	db.keys--
	db.dropEntry(e, h)
	if at := e.ExpireAt(); at != 0 {
		db.expires.del(at, e)
	}
	db.touchedString(e.Key())
}

// scheduled tells the expiry timer of a new deadline, and remembers a
// key a client gave one on a writable replica (writtenHere).
func (db *DB) scheduled(key string, at int64) {
	db.ks.scheduled(at)
	if db.ks.replica && !db.ks.obeying && !db.ks.loading {
		db.ks.writtenHere(db.id, key)
	}
}

// expireKey is the funnel every key whose deadline passed goes through,
// whoever met it: the expiry timer (ExpireDue), a command reading or
// writing it (expireLazily), a writable replica expiring the keys its
// clients wrote (expireWrittenHere). Eviction and explicit deletions do
// not come here.
//
// The deadline hook (Keyspace.SetDeadlineHook), if any, decides first:
// Keep leaves the key live without its deadline, Rewritten leaves it as
// the hook rewrote it; then expireKey reports kept and no sink sees the
// key. Otherwise it removes the key, counts it in ExpiredKeys and hands
// an Expired event to the sinks in their registration order
// (AddExpiredSink). The event holds the detached entry, captured before
// removal, so the sinks see the value; nothing mutates it afterwards.
func (db *DB) expireKey(key string, e *Entry) (kept bool) {
	if h := db.ks.deadlineHook; h != nil {
		switch h(db, key, e) {
		case Keep:
			k := []byte(key)
			e = db.private(keyHash(key), k, e, false)
			db.setDeadline(e, 0)
			db.touched(k)
			return true
		case Rewritten:
			return true
		}
	}
	var start time.Time // the latency monitor's (SetLatencyMonitor)
	timed := db.ks.latencyMs > 0
	if timed {
		start = time.Now()
	}
	db.remove(keyHash(key), e)
	db.ks.dropped(e, FreeExpire)
	db.ks.stats.ExpiredKeys++
	ev := Expired{DB: db.id, Key: key, Entry: e, Replica: db.ks.replica}
	for _, sink := range db.ks.sinks {
		sink(ev)
	}
	if timed {
		db.ks.latencySince("expire-del", start)
	}
	return false
}

// Reserve sizes an empty database's tables for about n keys (an RDB's
// RESIZEDB announcement), so that loading them does not grow each map
// step by step. Small announcements are ignored: every shard would get a
// map for a few keys.
func (db *DB) Reserve(n int) {
	if db.keys != 0 || n < numShards*8 {
		return
	}
	per := n/numShards + n/numShards/4
	for i := range db.shards {
		if db.shards[i] == nil {
			db.shards[i] = &table{}
			db.shards[i].reserve(per)
		}
	}
	if db.slots != nil {
		db.slots.reserve(n)
	}
}

// Flush removes every key. Snapshots keep what they pinned.
func (db *DB) Flush() {
	db.flush()
	db.ks.flushed()
}

func (db *DB) flush() {
	db.ks.watch.flushing(db, nil)
	if len(db.ks.dirty) != 0 {
		db.ks.settle()
	}
	for i := range db.shards {
		db.shards[i] = nil
	}
	db.keys = 0
	db.used = 0
	db.expires = newDeadlines()
	db.fields = newFieldIndex()
	db.resizing = nil
	if db.slots != nil {
		clear(db.slots.slots[:])
	}
}

// RandomKey returns a random live key, or "" and false when there is
// none. On a master, an expired key it meets is expired and another is
// drawn; a replica, which keeps expired keys, skips them but gives up
// after 100 draws and returns one anyway, as Redis's dbRandomKey does
// (every key may be logically expired there).
func (db *DB) RandomKey() (string, bool) {
	tries := 100
	for db.keys > 0 {
		k, e := db.randomEntry()
		if !e.expiredBy(db.ks.now) {
			return k, true
		}
		if db.ks.replica {
			if tries--; tries == 0 {
				return k, true
			}
			continue
		}
		db.expireLazily(k, e) // progress: one key fewer
	}
	return "", false
}

// randomEntry draws a key; the database must not be empty. A small
// database is walked to a uniformly drawn index, so that a key alone
// after a run of empty shards is not favoured. A large one has keys in
// nearly every shard, all of about the same size: a random shard (the
// next non-empty one from a random start), then a random position in
// it, is close to uniform and costs O(shard size).
func (db *DB) randomEntry() (string, *Entry) {
	if db.keys < 4*numShards {
		n := rand.IntN(db.keys)
		for _, t := range db.shards {
			if t == nil {
				continue
			}
			if n >= t.len() {
				n -= t.len()
				continue
			}
			return t.nth(n)
		}
	}
	start := rand.IntN(numShards)
	for j := 0; ; j++ {
		t := db.shards[(start+j)&(numShards-1)]
		if t == nil || t.len() == 0 {
			continue
		}
		return t.nth(rand.IntN(t.len()))
	}
}

// EachEntry calls fn for every key of the database, those past their
// deadline that expiry has not removed yet included, in no particular
// order, until fn returns false: what Redis's dictionary iterator sees
// (DEBUG DIGEST). It changes nothing; fn must not modify the database.
func (db *DB) EachEntry(fn func(key string, e *Entry) bool) {
	for _, t := range db.shards {
		if t == nil {
			continue
		}
		more := true
		t.all(func(e *Entry) bool {
			more = fn(e.Key(), e)
			return more
		})
		if !more {
			return
		}
	}
}

// ScanShard calls fn for each key of shard i whose deadline has not
// passed. It changes nothing: keys past their deadline are skipped, not
// expired (INFO's sampling must not expire keys, as Redis's does not).
// fn must not modify the database.
func (db *DB) ScanShard(i int, fn func(key string, e *Entry)) {
	t := db.shards[i]
	if t == nil {
		return
	}
	t.all(func(e *Entry) bool {
		if !e.expiredBy(db.ks.now) {
			fn(e.Key(), e)
		}
		return true
	})
}

// NumShards is the number of shards per database.
func NumShards() int { return numShards }

// SCAN cursors. A key's 64-bit hash h places it in shard h&(numShards-1)
// at position h>>shardBits; the scan visits shards in order and, within
// a shard, positions in increasing order. The cursor is the next
// (shard, position) to visit: shard<<posBits | position. Any 64-bit value
// is a valid cursor, and because a key's place depends only on its name,
// a key present for the whole scan is returned at least once whatever
// the writes, deletions, FLUSHes and snapshots in between.
const (
	posBits = 64 - shardBits
	posMask = 1<<posBits - 1
)

type scanItem struct {
	pos uint64
	key string
	e   *Entry
}

// Scan continues a SCAN from cursor: it examines about count keys (more
// when keys share a position, or to finish a shard), calls fn for each
// live one, and returns the cursor to continue from, 0 when the scan is
// complete. Expired keys it examines are expired, not passed to fn. fn
// must not modify the database.
func (db *DB) Scan(cursor uint64, count int, fn func(key string, e *Entry)) uint64 {
	return db.ScanMatch(cursor, count, nil, fn)
}

// ScanMatch is Scan for SCAN ... MATCH: a key examined that match
// rejects is skipped before its deadline is looked at, so that an
// expired key the pattern leaves out stays, and nothing is propagated
// for it (scanGenericCommand filters by pattern before expireIfNeeded).
// match nil takes every key.
func (db *DB) ScanMatch(cursor uint64, count int, match func(key string) bool, fn func(key string, e *Entry)) uint64 {
	if count < 1 {
		count = 1
	}
	shard := int(cursor >> posBits)
	pos := cursor & posMask
	examined := 0
	var expired []scanItem
	next := uint64(0)
	for shard < numShards {
		t := db.shards[shard]
		if t == nil || t.len() == 0 {
			shard++
			pos = 0
			continue
		}
		items := db.ks.scanBuf[:0]
		t.all(func(e *Entry) bool {
			if p := keyHash(e.Key()) >> shardBits; p >= pos {
				items = append(items, scanItem{p, e.Key(), e})
			}
			return true
		})
		take := items
		more := false
		var resume uint64
		if need := count - examined; len(items) > need {
			// Take every key up to the need-th position, ties included
			// (the cursor cannot split a position), and resume at the
			// smallest position left.
			limit := selectPos(items, need-1)
			resume = posMask
			n := 0
			for j := range items {
				if items[j].pos <= limit {
					items[n], items[j] = items[j], items[n]
					n++
				} else {
					more = true
					resume = min(resume, items[j].pos)
				}
			}
			take = items[:n]
		}
		for _, it := range take {
			examined++
			if match != nil && !match(it.key) {
				continue
			}
			if it.e.expiredBy(db.ks.now) {
				expired = append(expired, it)
				continue
			}
			fn(it.key, it.e)
		}
		clear(items)
		db.ks.scanBuf = items[:0]
		if more {
			next = uint64(shard)<<posBits | resume
			break
		}
		shard++
		pos = 0
		if examined >= count {
			// Stop here, unless no key is left to visit: then the scan
			// is complete and says so now rather than one call later.
			for shard < numShards && (db.shards[shard] == nil || db.shards[shard].len() == 0) {
				shard++
			}
			if shard < numShards {
				next = uint64(shard) << posBits
			}
			break
		}
	}
	for _, it := range expired {
		if e := db.peek([]byte(it.key)); e == it.e {
			db.live([]byte(it.key), e)
		}
	}
	return next
}

// positioned is a scan item that carries its hash position.
type positioned interface{ position() uint64 }

func (it scanItem) position() uint64 { return it.pos }

// selectPos returns the k-th smallest position of items (0-based),
// reordering items (quickselect). The SCAN family uses it to cut a call
// at the count-th position without sorting.
func selectPos[T positioned](items []T, k int) uint64 {
	lo, hi := 0, len(items)-1
	for lo < hi {
		p := items[lo+(hi-lo)/2].position()
		i, j := lo, hi
		for i <= j {
			for items[i].position() < p {
				i++
			}
			for items[j].position() > p {
				j--
			}
			if i <= j {
				items[i], items[j] = items[j], items[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return items[k].position()
		}
	}
	return items[k].position()
}

// ExpireDue expires keys and hash fields whose deadline has passed, in
// deadline order, at most about max of them, and returns how many it
// expired.
func (db *DB) ExpireDue(limit int) int {
	n := 0
	for n < limit {
		d, ok := db.expires.min()
		f, fok := db.fields.dl.min()
		if fok && f.at <= db.ks.now && (!ok || f.at < d.at) {
			n += max(1, db.expireFieldsOf(f.key, f.e, f.at)) // one millisecond: then the next deadline, whoever holds it
			continue
		}
		if !ok || d.at > db.ks.now {
			break
		}
		db.expireKey(d.key, db.get(d.key, keyHash(d.key)))
		n++
	}
	return n
}

// NextDeadline is the earliest deadline in this database, of a key or a
// hash field, 0 if none.
func (db *DB) NextDeadline() int64 {
	next := db.nextFieldDeadline()
	if d, ok := db.expires.min(); ok && (next == 0 || d.at < next) {
		next = d.at
	}
	return next
}

// swap exchanges the contents of two databases (SWAPDB).
func (db *DB) swap(o *DB) {
	db.shards, o.shards = o.shards, db.shards
	db.keys, o.keys = o.keys, db.keys
	db.used, o.used = o.used, db.used
	db.expires, o.expires = o.expires, db.expires
	db.fields, o.fields = o.fields, db.fields
	db.resizing, o.resizing = o.resizing, db.resizing
	// The slot index stays database 0's and is rebuilt for what it holds
	// now (a cluster has no SWAPDB: this is for completeness, not speed).
	for _, d := range [...]*DB{db, o} {
		if d.slots != nil {
			d.slots.build(d)
		}
	}
}
