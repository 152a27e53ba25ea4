package keyspace

import "bytes"

// The field funnel: hash fields whose own deadline passed (hashttl.go)
// leave through here, whoever met them: the expiry timer (ExpireDue, in
// deadline order with the keys), or a command reading or writing the
// hash (ExpireFields). Each database indexes the hashes that have a
// volatile field by their earliest field deadline, in a deadline index
// of the keys' kind (fieldIndex), so that the timer finds a field due
// among a million as it finds a key.

// ExpiredFields describes fields of one hash removed because their
// deadline passed: all the fields of that hash that fell due in the
// same millisecond. Pairs holds copies (field, value, field, value...),
// owned by the event; a sink may keep them.
type ExpiredFields struct {
	DB    int
	Key   string
	At    int64 // the deadline they shared, Unix ms
	Pairs [][]byte
	// HashGone: these were the hash's last fields, and the key went
	// with them (no DEL is propagated: the HDELs say it, as in 7.4).
	HashGone bool
}

// ExpiredFieldsSink receives every group of expired fields, under the
// keyspace lock, like an ExpiredSink.
type ExpiredFieldsSink func(ExpiredFields)

// AddExpiredFieldsSink registers a sink for expired fields.
func (ks *Keyspace) AddExpiredFieldsSink(s ExpiredFieldsSink) {
	ks.fieldSinks = append(ks.fieldSinks, s)
}

// fieldIndex is a database's index of hashes with volatile fields: each
// entry at its earliest field deadline when indexed (at), which may have
// become earlier than the hash's own since (a field deleted or given a
// later deadline): the funnel then finds nothing due and indexes the
// hash anew. A deadline set earlier is indexed at once (SetFieldTTL).
type fieldIndex struct {
	dl deadlines
	at map[*Entry]int64
}

func newFieldIndex() fieldIndex { return fieldIndex{dl: newDeadlines()} }

// minFieldTTLOf is e's earliest field deadline, 0 for none or another
// type.
func minFieldTTLOf(e *Entry) int64 {
	if e.typ != TypeHash || e.boxed() || e.vcap != tableMark {
		return 0
	}
	return e.hash().MinFieldTTL()
}

// indexFields indexes e, live in db, at its earliest field deadline.
func (db *DB) indexFields(e *Entry) {
	want := minFieldTTLOf(e)
	have, ok := db.fields.at[e]
	if ok && have == want {
		return
	}
	if ok {
		db.fields.dl.del(have, e)
		delete(db.fields.at, e)
	}
	if want != 0 {
		if db.fields.at == nil {
			db.fields.at = make(map[*Entry]int64)
		}
		db.fields.dl.add(want, e)
		db.fields.at[e] = want
		db.ks.scheduled(want)
	}
}

// unindexFields drops e, leaving db's live table, from the index.
func (db *DB) unindexFields(e *Entry) {
	if have, ok := db.fields.at[e]; ok {
		db.fields.dl.del(have, e)
		delete(db.fields.at, e)
	}
}

// VolatileHashes is the number of hashes with a volatile field (INFO
// keyspace's subexpiry).
func (db *DB) VolatileHashes() int { return db.fields.dl.len() }

// SetFieldTTL gives field f of e, a hash from LookupWrite stored under
// key, the deadline at (0 removes it), keeping the index in step.
func (db *DB) SetFieldTTL(e *Entry, f []byte, at int64) {
	h := e.Obj().(*Hash)
	h.SetFieldTTL(f, at)
	if at != 0 || db.fields.at[e] != 0 {
		db.indexFields(e)
	}
}

// FieldsChanged re-indexes e, a hash whose fields a command changed
// (fields deleted, set without their deadline): nothing is needed for
// correctness (a stale earlier deadline only costs a look), but a hash
// left without volatile fields leaves the index at once.
func (db *DB) FieldsChanged(e *Entry) {
	if _, ok := db.fields.at[e]; ok && !e.hash().HasFieldTTLs() {
		db.unindexFields(e)
	}
}

// ExpireFields applies lazy field expiry to e, the live hash stored
// under key, as a command meets it: on a master, the fields past their
// deadline go through the funnel now, and it returns what stands under
// key afterwards (nil when they were the last). A replica keeps them
// until its master's HDEL, as nothing expires while loading or paused:
// the caller hides them (Hash.Live).
func (db *DB) ExpireFields(key []byte, e *Entry) *Entry {
	if e == nil || e.typ != TypeHash {
		return e
	}
	at := minFieldTTLOf(e)
	if at == 0 || at > db.ks.now || !db.fieldsExpire() {
		return e
	}
	// One millisecond's fields at a time, each after what fell due
	// before it (keys, other hashes' fields), until none of the hash's
	// fields is past its deadline: every step removes a field, so this
	// ends, after the hash's due fields.
	k := bytesKey(key)
	for at != 0 && at <= db.ks.now {
		db.catchUp(at)
		if e = db.peek(key); e == nil || e.typ != TypeHash {
			return e
		}
		if at = minFieldTTLOf(e); at == 0 || at > db.ks.now {
			break
		}
		db.expireFieldsOf(k, e, at)
		if e = db.peek(key); e == nil || e.typ != TypeHash {
			return e
		}
		at = minFieldTTLOf(e)
	}
	return e
}

// fieldsExpire reports whether this server removes fields past their
// deadline now: a master that is not loading nor paused.
func (db *DB) fieldsExpire() bool {
	return !db.ks.replica && !db.ks.loading && !db.ks.expiryPaused(db.ks.now)
}

// fieldGroupMax bounds the fields one funnel call removes, so that the
// timer's batches stay bounded.
const fieldGroupMax = 1024

// expireFieldsOf removes the fields of e, the live hash stored under
// key, whose deadline is at or before upto, one millisecond's group at a
// time, and hands each group to the field sinks. It reports how many
// fields it removed.
func (db *DB) expireFieldsOf(key string, e *Entry, upto int64) int {
	due := e.hash().dueFields(upto, fieldGroupMax, nil)
	if len(due) == 0 {
		db.indexFields(e)
		return 0
	}
	h := keyHash(key)
	e = db.private(h, nil, e, true)
	hash := e.hash()
	for i := 0; i < len(due); {
		j := i
		for j < len(due) && due[j].at == due[i].at {
			j++
		}
		pairs := make([][]byte, 0, 2*(j-i))
		for _, d := range due[i:j] {
			f := []byte(d.f)
			v, _ := hash.Get(f)
			pairs = append(pairs, f, bytes.Clone(v))
			hash.Delete(f)
		}
		db.ks.stats.ExpiredSubkeys += int64(j - i)
		gone := hash.Len() == 0
		if gone {
			db.remove(h, e)
			db.ks.dropped(e, FreeExpire)
		}
		ev := ExpiredFields{DB: db.id, Key: key, At: due[i].at, Pairs: pairs, HashGone: gone}
		for _, sink := range db.ks.fieldSinks {
			sink(ev)
		}
		if gone {
			return len(due)
		}
		i = j
	}
	db.touchedString(key)
	db.indexFields(e)
	return len(due)
}

// nextFieldDeadline is the earliest indexed field deadline, 0 if none.
func (db *DB) nextFieldDeadline() int64 {
	if d, ok := db.fields.dl.min(); ok {
		return d.at
	}
	return 0
}
