package keyspace

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"math/bits"
	"math/rand/v2"
	"strings"
	"unsafe"
)

// Hash is the hash type: a map from fields to values, both binary-safe.
//
// Like Redis it has two encodings. A small hash ("listpack") is one packed
// byte slice of records, uvarint(len field) field uvarint(len value) value,
// in insertion order (an update keeps the field's place, as Redis's listpack
// replaces in place), so HGETALL answers in the order Redis does. A hash
// that outgrows the thresholds the caller passes (hash-max-listpack-entries
// and hash-max-listpack-value) becomes a "hashtable" and never goes back,
// as in Redis.
//
// The hashtable is a recTable (open addressing, a slot of a 31-bit tag
// and a pointer, incremental growth) whose records are uvarint(len
// field) field uvarint(len value) value: one allocation per element,
// plus 16 to 32 bytes of table. A record's value is rewritten in place
// only by a value of its length, and only while nothing else holds the
// record (see HashLimits.Overwrite); otherwise a change replaces the
// record.
//
// Returned field and value slices are read-only views into the hash,
// valid until its next change.
//
// The value is 16 bytes: one pointer, to the small form's bytes or to the
// hashtable, and the small form's length and capacity (a capacity of
// tableMark marks the large form). Millions of small hashes make every
// word count.
type Hash struct {
	p    unsafe.Pointer
	n, c uint32
}

const (
	tableMark = math.MaxUint32
	// maxPacked bounds the small form (Redis's listpack stops at 1 GB too).
	maxPacked = 1 << 30
)

// tab is the large form, nil while small.
func (h *Hash) tab() *hashTable {
	if h.c == tableMark {
		return (*hashTable)(h.p)
	}
	return nil
}

// lpb is the small form's bytes (nil when large or empty).
func (h *Hash) lpb() []byte {
	if h.c == tableMark || h.p == nil {
		return nil
	}
	return unsafe.Slice((*byte)(h.p), h.c)[:h.n]
}

func (h *Hash) setLP(b []byte) {
	if cap(b) == 0 {
		h.p, h.n, h.c = nil, 0, 0
		return
	}
	h.p, h.n, h.c = unsafe.Pointer(unsafe.SliceData(b)), uint32(len(b)), uint32(cap(b))
}

func (h *Hash) setTab(t *hashTable) { h.p, h.n, h.c = unsafe.Pointer(t), 0, tableMark }

var fieldSeed = maphash.MakeSeed()

func fieldHash(f []byte) uint64 { return maphash.Bytes(fieldSeed, f) }

// NewHash returns an empty small hash.
func NewHash() *Hash { return &Hash{} }

// Type is TypeHash.
func (h *Hash) Type() Type { return TypeHash }

// Encoding is "listpack", "hashtable" or (a table made for field
// deadlines, hashttl.go) "listpackex", as OBJECT ENCODING reports.
func (h *Hash) Encoding() string {
	if t := h.tab(); t != nil {
		if t.ttl != nil && t.ttl.packed {
			return "listpackex"
		}
		return "hashtable"
	}
	return "listpack"
}

// Len is the number of fields.
func (h *Hash) Len() int {
	if h.tab() != nil {
		return h.tab().n
	}
	n := 0
	lp := h.lpb()
	for p := 0; p < len(lp); n++ {
		_, _, p = lpNext(lp, p)
	}
	return n
}

// Clone returns a deep copy. Records of the large form are shared, and
// both tables are marked copied: neither rewrites a record in place from
// then on (hashTable.set), a change replaces it.
func (h *Hash) Clone() Object {
	c := h.cloneForSnapshot().(*Hash)
	if t := h.tab(); t != nil {
		t.copied, c.tab().copied = true, true
	}
	return c
}

// cloneForSnapshot is Clone for the copy a write makes while a snapshot
// is live (DB.private): the copy becomes the live hash and the original
// the snapshot's. Their records are shared, but neither is marked copied:
// nothing is rewritten in place while a snapshot is live
// (HashLimits.Overwrite), and once it has ended the original is read by
// no one.
func (h *Hash) cloneForSnapshot() Object {
	c := &Hash{}
	if t := h.tab(); t != nil {
		c.setTab(t.clone())
	} else if lp := h.lpb(); lp != nil {
		c.setLP(append([]byte(nil), lp...))
	}
	return c
}

// ---- small form ---------------------------------------------------------------

// lpNext decodes the record at p: field and value views and the offset
// of the next record.
func lpNext(lp []byte, p int) (f, v []byte, next int) {
	fl, n := binary.Uvarint(lp[p:])
	p += n
	f = lp[p : p+int(fl)]
	p += int(fl)
	vl, n := binary.Uvarint(lp[p:])
	p += n
	v = lp[p : p+int(vl)]
	return f, v, p + int(vl)
}

// lpFind returns the offsets of the record holding f (start, value start,
// end), or start -1.
func lpFind(lp []byte, f []byte) (start, vstart, end int) {
	for p := 0; p < len(lp); {
		fl, n := binary.Uvarint(lp[p:])
		q := p + n
		ff := lp[q : q+int(fl)]
		q += int(fl)
		vl, m := binary.Uvarint(lp[q:])
		vs := q + m
		e := vs + int(vl)
		if string(ff) == string(f) {
			return p, vs, e
		}
		p = e
	}
	return -1, 0, 0
}

func uvarintLen(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }

// growTight returns lp with room for n more bytes and no more (beyond
// the allocator's size class): small hashes are many, so their slack is
// memory. Like a listpack, the small form is reallocated as it grows.
func growTight(lp []byte, n int) []byte {
	if cap(lp)-len(lp) >= n {
		return lp
	}
	nb := make([]byte, len(lp), len(lp)+n)
	copy(nb, lp)
	return nb
}

// ---- reads --------------------------------------------------------------------

// Get returns the value of field f.
func (h *Hash) Get(f []byte) ([]byte, bool) {
	if t := h.tab(); t != nil {
		r := t.lookup(f)
		if r == nil {
			return nil, false
		}
		_, v := recSplit(r)
		return v, true
	}
	lp := h.lpb()
	s, vs, e := lpFind(lp, f)
	if s < 0 {
		return nil, false
	}
	return lp[vs:e], true
}

// StableValueMin is the length from which a value of the large form is
// never overwritten in place: a change replaces its record, never its
// bytes, so output may refer to it until written. Shorter values are
// overwritten in place by a value of the same length (see
// HashLimits.Overwrite), and are copied into replies.
const StableValueMin = 32 << 10

// ValueStable reports whether v, a value view Get or Range returned,
// stays unchanged when the hash changes later: a large form's value of
// at least StableValueMin bytes. The small form is edited in place.
func (h *Hash) ValueStable(v []byte) bool { return len(v) >= StableValueMin && h.tab() != nil }

// largeValueBytes is the bytes of the large form's records of at least
// min bytes, for a hash of at most maxFields fields (0 otherwise, and
// for the small form): what deleting a hash that holds a few large
// values, a mail queue's message, gives back.
func (h *Hash) largeValueBytes(min, maxFields int) int64 {
	t := h.tab()
	if t == nil || t.n > maxFields {
		return 0
	}
	var n int64
	t.each(func(a *slotArray, i int) bool {
		if l := hrecLen(a.recs[i]); l >= min {
			n += int64(l)
		}
		return true
	})
	return n
}

// Range calls fn for each field and value, in storage order (insertion
// order for a small hash), until fn returns false.
func (h *Hash) Range(fn func(f, v []byte) bool) {
	if t := h.tab(); t != nil {
		t.each(func(a *slotArray, i int) bool {
			return fn(recSplit(a.recs[i]))
		})
		return
	}
	lp := h.lpb()
	for p := 0; p < len(lp); {
		var f, v []byte
		f, v, p = lpNext(lp, p)
		if !fn(f, v) {
			return
		}
	}
}

// ---- writes -------------------------------------------------------------------

// HashLimits are the thresholds of the small form (hash-max-listpack-entries,
// hash-max-listpack-value), and whether a write may reuse a record.
type HashLimits struct {
	MaxEntries int64
	MaxValue   int64
	// Overwrite lets Set write a value over the old one in its record
	// when both have the same length (under StableValueMin), instead of
	// making a new record: no snapshot is live (DB.SnapshotLive), which
	// could be reading the records, shared by the copy a write during it
	// made. A queue rewriting a message's fields leaves no garbage then.
	Overwrite bool
}

// Convert turns a small hash into a hashtable when any of args is longer
// than lim.MaxValue (Redis's hashTypeTryConversion, which HSET and HSETNX
// run over their arguments before changing anything).
func (h *Hash) Convert(lim HashLimits, args ...[]byte) {
	if h.tab() != nil {
		if ft := h.ttls(); ft != nil && ft.packed {
			if _, small := packedRoom(lim, args); !small {
				ft.packed = false
			}
		}
		return
	}
	need, small := packedRoom(lim, args)
	if !small {
		h.toTable()
		return
	}
	// A new hash's pairs, when they will stay packed, get their room at
	// once rather than one array per field, all but the last garbage.
	if lp := h.lpb(); len(lp) == 0 && int64(len(args)/2) <= lim.MaxEntries && need <= maxPacked && cap(lp) < need {
		h.setLP(growTight(lp, need))
	}
}

// packedRoom is the room args (fields and values) take packed, and
// whether none of them is too long for the small form.
func packedRoom(lim HashLimits, args [][]byte) (need int, small bool) {
	for _, a := range args {
		if int64(len(a)) > lim.MaxValue {
			return 0, false
		}
		need += uvarintLen(uint64(len(a))) + len(a)
	}
	return need, true
}

// Set sets field f to v (both copied), reporting whether the field is new.
// A small hash converts when f or v is longer than lim.MaxValue or when it
// grows beyond lim.MaxEntries fields. The field loses its deadline, as
// HSET's does in 7.4 (SetKeepTTL keeps it).
func (h *Hash) Set(f, v []byte, lim HashLimits) bool {
	if h.tab() == nil && (int64(len(f)) > lim.MaxValue || int64(len(v)) > lim.MaxValue) {
		h.toTable()
	}
	if t := h.tab(); t != nil {
		if t.ttl == nil {
			return t.set(f, v, lim.Overwrite)
		}
		t.ttl.clear(f)
		added := t.set(f, v, lim.Overwrite)
		if t.ttl.packed && h.overSmall(lim, f, v) {
			t.ttl.packed = false
		}
		return added
	}
	lp := h.lpb()
	s, vs, e := lpFind(lp, f)
	if s >= 0 {
		old := e - vs
		if old == len(v) {
			copy(lp[vs:e], v)
			return false
		}
		// Re-encode the value's length and bytes in place of the old ones.
		lenAt := vs - uvarintLen(uint64(old))
		tail := len(lp) - e
		need := uvarintLen(uint64(len(v))) + len(v)
		delta := need - (e - lenAt)
		if len(lp)+delta > maxPacked {
			h.toTable()
			return h.tab().set(f, v, false)
		}
		if delta > 0 {
			lp = growTight(lp, delta)
		}
		nl := len(lp) + delta
		lp = lp[:max(nl, len(lp))]
		copy(lp[lenAt+need:], lp[e:e+tail])
		lp = lp[:nl]
		p := lenAt + binary.PutUvarint(lp[lenAt:], uint64(len(v)))
		copy(lp[p:], v)
		if cap(lp) > 2*len(lp)+64 {
			lp = append([]byte(nil), lp...)
		}
		h.setLP(lp)
		return false
	}
	n := uvarintLen(uint64(len(f))) + len(f) + uvarintLen(uint64(len(v))) + len(v)
	if len(lp)+n > maxPacked {
		h.toTable()
		return h.tab().set(f, v, false)
	}
	lp = growTight(lp, n)
	lp = binary.AppendUvarint(lp, uint64(len(f)))
	lp = append(lp, f...)
	lp = binary.AppendUvarint(lp, uint64(len(v)))
	lp = append(lp, v...)
	h.setLP(lp)
	if int64(h.Len()) > lim.MaxEntries {
		h.toTable()
	}
	return true
}

// SetKeepTTL is Set keeping the field's deadline (HINCRBY, HINCRBYFLOAT).
func (h *Hash) SetKeepTTL(f, v []byte, lim HashLimits) bool {
	ft := h.ttls()
	if ft == nil {
		return h.Set(f, v, lim)
	}
	at, had := ft.at[string(f)]
	added := h.Set(f, v, lim)
	if had {
		h.SetFieldTTL(f, at)
	}
	return added
}

// Delete removes field f, reporting whether it was there.
func (h *Hash) Delete(f []byte) bool {
	if t := h.tab(); t != nil {
		if t.ttl != nil {
			t.ttl.clear(f)
		}
		return t.del(f)
	}
	lp := h.lpb()
	s, _, e := lpFind(lp, f)
	if s < 0 {
		return false
	}
	lp = append(lp[:s], lp[e:]...)
	if len(lp) == 0 {
		lp = nil
	} else if cap(lp) > 2*len(lp)+64 {
		lp = append([]byte(nil), lp...)
	}
	h.setLP(lp)
	return true
}

// toTable converts the small form into a hashtable.
func (h *Hash) toTable() {
	n := h.Len()
	t := newHashTable(n)
	h.Range(func(f, v []byte) bool {
		t.set(f, v, false)
		return true
	})
	h.setTab(t)
}

// ---- random and scan ----------------------------------------------------------

// Pairs appends every field and value view, in storage order, to dst
// (fields at even, values at odd indexes).
func (h *Hash) Pairs(dst [][]byte) [][]byte {
	h.Range(func(f, v []byte) bool {
		dst = append(dst, f, v)
		return true
	})
	return dst
}

// Random returns a uniformly drawn field and its value. The hash must not
// be empty.
func (h *Hash) Random() (f, v []byte) {
	if t := h.tab(); t != nil {
		return recSplit(t.random())
	}
	n := rand.IntN(h.Len())
	lp := h.lpb()
	p := 0
	for ; n > 0; n-- {
		_, _, p = lpNext(lp, p)
	}
	f, v, _ = lpNext(lp, p)
	return f, v
}

// Scan continues an HSCAN from cursor. A small hash is returned whole
// with the next cursor 0, whatever the cursor, as Redis does for a
// listpack. A hashtable is walked in the order of the fields' 64-bit
// hash positions: the cursor is the position to continue from
// (recTable.scan).
func (h *Hash) Scan(cursor uint64, count int, fn func(f, v []byte)) uint64 {
	if h.tab() == nil {
		h.Range(func(f, v []byte) bool {
			fn(f, v)
			return true
		})
		return 0
	}
	return h.tab().scan(cursor, count, func(r *byte) { fn(recSplit(r)) })
}

// MemoryUsage estimates the bytes the value holds, sampling up to samples
// records of a hashtable (all when samples <= 0).
func (h *Hash) MemoryUsage(samples int) int64 {
	const hdr = 16
	if h.tab() == nil {
		return hdr + int64(h.c)
	}
	t := h.tab()
	size := int64(hdr + 48)
	if t.ttl != nil {
		size += 96 + int64(len(t.ttl.at))*fieldTTLCost
	}
	slots, recs := t.memSize(func(r *byte) int64 { return int64(roundAlloc(hrecLen(r))) }, samples)
	return size + slots + recs
}

// roundAlloc rounds a small allocation to Go's size classes, roughly.
func roundAlloc(n int) int {
	switch {
	case n <= 8:
		return 8
	case n <= 32:
		return (n + 7) &^ 7
	case n <= 128:
		return (n + 15) &^ 15
	}
	step := 1 << (bits.Len(uint(n-1)) - 3)
	return (n + step - 1) &^ (step - 1)
}

// ---- hashtable ----------------------------------------------------------------

// hashTable is the large form: the fields' table and their deadlines.
type hashTable struct {
	recTable
	ttl *fieldTTLs // the fields' deadlines (hashttl.go), nil when none was set
}

func newHashTable(n int) *hashTable { return &hashTable{recTable: *newRecTable(n)} }

// A record is uvarint(len field) field uvarint(len value) value, in one
// allocation. A slot holds a pointer to it, which carries no length: 8
// bytes where a string header took 16, and the value's length costs the
// record one byte (two from 128 bytes on). A million fields of 10-byte
// names and values (make bench's memory part) took 68.8 bytes of RSS
// each with string headers, 51.8 with pointers; Valkey 8: 72.2, and
// 65.9 after MEMORY PURGE.

// uvarintAt decodes the uvarint at offset off of r: its value and the
// offset past it.
func uvarintAt(r *byte, off int) (x, next int) {
	for shift := 0; ; shift += 7 {
		c := *(*byte)(unsafe.Add(unsafe.Pointer(r), off))
		off++
		x |= int(c&0x7f) << shift
		if c < 0x80 {
			return x, off
		}
	}
}

// recSplit splits a record into read-only field and value views. They
// are cut from the whole record, so that an empty value at its end is
// not a pointer past the allocation (a zero-capacity slice keeps its
// base).
func recSplit(r *byte) (f, v []byte) {
	fl, fo := uvarintAt(r, 0)
	vl, vo := uvarintAt(r, fo+fl)
	b := unsafe.Slice(r, vo+vl)
	return b[fo : fo+fl : fo+fl], b[vo : vo+vl : vo+vl]
}

// recField is the record's field, a view of its bytes.
func recField(r *byte) []byte { return bytesOf(recKey(r)) }

// hrecLen is the record's length, as allocated.
func hrecLen(r *byte) int {
	fl, fo := uvarintAt(r, 0)
	vl, vo := uvarintAt(r, fo+fl)
	return vo + vl
}

// makeRec makes the record of f and v. A strings.Builder's allocation
// is not zeroed first (make's is): every byte is written at once, and
// for 1 KiB values the zeroing was 1.2% of HSET's time.
func makeRec(f, v []byte) *byte {
	var b strings.Builder
	b.Grow(uvarintLen(uint64(len(f))) + len(f) + uvarintLen(uint64(len(v))) + len(v))
	var l [binary.MaxVarintLen64]byte
	b.Write(binary.AppendUvarint(l[:0], uint64(len(f))))
	b.Write(f)
	b.Write(binary.AppendUvarint(l[:0], uint64(len(v))))
	b.Write(v)
	return unsafe.StringData(b.String())
}

// clone returns a copy sharing the records.
func (t *hashTable) clone() *hashTable {
	return &hashTable{recTable: *t.recTable.clone(), ttl: t.ttl.cloneOrNil()}
}

// set stores f -> v, reporting whether f is new; overwrite allows the
// old record to take v in place (HashLimits.Overwrite).
func (t *hashTable) set(f, v []byte, overwrite bool) bool {
	t.step()
	x := fieldHash(f)
	if a, i := t.find(f, x); a != nil {
		if _, old := recSplit(a.recs[i]); overwrite && !t.copied && len(old) == len(v) && len(v) < StableValueMin {
			// Nothing else holds the record (HashLimits.Overwrite,
			// copied), and no output refers to a value this short
			// (StableValueMin): its bytes are this table's to change.
			copy(old, v)
			return false
		}
		a.recs[i] = makeRec(f, v)
		return false
	}
	t.add(makeRec(f, v), x)
	return true
}
