package keyspace

import (
	"github.com/tidwall/btree"
)

// Field deadlines: Redis 7.4's hash field expiration (HEXPIRE and its
// family). A field may carry a deadline of its own (Unix ms); past it
// the field is gone, through the field funnel (hashfields.go), which
// sends it with its value to the expiry sinks.
//
// The deadlines of a hash's fields live beside its records, in the
// large form only: the first deadline given to a small hash turns it
// into a hashtable, which then says "listpack" to OBJECT ENCODING as
// long as it stays within the small form's limits, as 7.4's listpackex
// does (the small form has no room for them, and a hash whose fields
// expire one by one is worth its table). A hash with no field deadline
// pays one nil pointer in its table, and nothing in the small form.

// fieldTTLs holds the deadlines of a hash's volatile fields: by field,
// and in deadline order (earliest first) for the funnel.
type fieldTTLs struct {
	at    map[string]int64
	order *btree.BTreeG[fieldDeadline]
	// minAt is the earliest deadline (0 with none), kept up to date by
	// set and clear: every command on the hash asks for it (lazy field
	// expiry), the B-tree's Min costs a descent, and a cache filled on
	// read would be a write from readers that share the hash with a
	// snapshot's writer, which reads it without the lock.
	minAt int64
	// packed: the table stands for 7.4's listpackex (OBJECT ENCODING
	// "listpackex") until it passes the small form's limits.
	packed bool
}

// fieldDeadline is one volatile field in the order.
type fieldDeadline struct {
	at int64
	f  string
}

func fieldDeadlineLess(a, b fieldDeadline) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.f < b.f
}

func newFieldTTLs() *fieldTTLs {
	return &fieldTTLs{
		at:    make(map[string]int64),
		order: btree.NewBTreeGOptions(fieldDeadlineLess, btree.Options{NoLocks: true, Degree: 16}),
	}
}

func (ft *fieldTTLs) clone() *fieldTTLs {
	c := &fieldTTLs{at: make(map[string]int64, len(ft.at)), order: ft.order.Copy(), packed: ft.packed, minAt: ft.minAt}
	for f, at := range ft.at {
		c.at[f] = at
	}
	return c
}

func (ft *fieldTTLs) set(f string, at int64) {
	old, had := ft.at[f]
	if had {
		ft.order.Delete(fieldDeadline{old, f})
	}
	ft.at[f] = at
	ft.order.Set(fieldDeadline{at, f})
	switch {
	case len(ft.at) == 1 || at < ft.minAt:
		ft.minAt = at
	case had && old == ft.minAt:
		ft.remin()
	}
}

func (ft *fieldTTLs) clear(f []byte) bool {
	old, ok := ft.at[string(f)]
	if !ok {
		return false
	}
	ft.order.Delete(fieldDeadline{old, string(f)})
	delete(ft.at, string(f))
	if old == ft.minAt {
		ft.remin()
	}
	return true
}

// remin recomputes minAt from the order.
func (ft *fieldTTLs) remin() {
	ft.minAt = 0
	if d, ok := ft.order.Min(); ok {
		ft.minAt = d.at
	}
}

// ttls is the table's field deadlines, nil when none was ever set.
func (h *Hash) ttls() *fieldTTLs {
	if t := h.tab(); t != nil {
		return t.ttl
	}
	return nil
}

// HasFieldTTLs reports whether a field of h has a deadline.
func (h *Hash) HasFieldTTLs() bool {
	ft := h.ttls()
	return ft != nil && len(ft.at) > 0
}

// VolatileFields is the number of fields with a deadline.
func (h *Hash) VolatileFields() int {
	if ft := h.ttls(); ft != nil {
		return len(ft.at)
	}
	return 0
}

// FieldTTL is field f's deadline (Unix ms), 0 when it has none (or does
// not exist).
func (h *Hash) FieldTTL(f []byte) int64 {
	if ft := h.ttls(); ft != nil {
		return ft.at[string(f)]
	}
	return 0
}

// MinFieldTTL is the earliest field deadline, 0 when none.
func (h *Hash) MinFieldTTL() int64 {
	if ft := h.ttls(); ft != nil {
		return ft.minAt
	}
	return 0
}

// Live reports whether field f, present, is visible at now: it has no
// deadline, or its deadline is after now.
func (h *Hash) Live(f []byte, now int64) bool {
	at := h.FieldTTL(f)
	return at == 0 || at > now
}

// RangeTTL calls fn for each field with a deadline, earliest first,
// until fn returns false.
func (h *Hash) RangeTTL(fn func(f string, at int64) bool) {
	ft := h.ttls()
	if ft == nil {
		return
	}
	ft.order.Scan(func(d fieldDeadline) bool { return fn(d.f, d.at) })
}

// SetFieldTTL gives present field f the deadline at (0 removes it). A
// small hash becomes a table first (see the top of this file). The hash
// must be private; DB.SetFieldTTL keeps the database's index in step.
func (h *Hash) SetFieldTTL(f []byte, at int64) {
	if at == 0 {
		if ft := h.ttls(); ft != nil {
			ft.clear(f)
		}
		return
	}
	h.PrepareFieldTTLs()
	t := h.tab()
	r := t.lookup(f)
	if r == nil {
		return
	}
	// The index keeps a copy of the field's bytes (string() copies).
	t.ttl.set(string(recField(r)), at)
}

// PrepareFieldTTLs readies h for field deadlines, as 7.4's
// hashTypeSetExInit does before any is set: a small hash becomes the
// table that says "listpackex" (even when no field gets a deadline, as
// in 7.4), a table gets room for them. The hash must be private.
func (h *Hash) PrepareFieldTTLs() {
	t := h.tab()
	if t == nil {
		h.toTable()
		t = h.tab()
		t.ttl = newFieldTTLs()
		t.ttl.packed = true
	} else if t.ttl == nil {
		t.ttl = newFieldTTLs()
	}
}

// dueFields appends to dst the fields whose deadline is at or before
// upto, earliest first, with their deadlines.
func (h *Hash) dueFields(upto int64, max int, dst []fieldDeadline) []fieldDeadline {
	ft := h.ttls()
	if ft == nil {
		return dst
	}
	ft.order.Scan(func(d fieldDeadline) bool {
		if d.at > upto || len(dst) >= max {
			return false
		}
		dst = append(dst, d)
		return true
	})
	return dst
}

// leaveSmall records that the hash passed the small form's limits: a
// table made for field deadlines no longer stands for a listpack.
func (h *Hash) leaveSmall() {
	if ft := h.ttls(); ft != nil {
		ft.packed = false
	}
}

// overSmall reports whether f or v is too long for the small form, or
// the hash has more fields than it holds.
func (h *Hash) overSmall(lim HashLimits, f, v []byte) bool {
	return int64(len(f)) > lim.MaxValue || int64(len(v)) > lim.MaxValue || int64(h.Len()) > lim.MaxEntries
}

// fieldTTLCost estimates what a field deadline costs: its map slot and
// its item in the order.
const fieldTTLCost = 64

func (ft *fieldTTLs) cloneOrNil() *fieldTTLs {
	if ft == nil {
		return nil
	}
	return ft.clone()
}
