package keyspace

import (
	"encoding/binary"
	"hash/maphash"
	"math/rand/v2"
	"slices"
	"strconv"
	"unsafe"

	"github.com/zredis/zredis/redisconv"
)

// Set is a set value. Like Redis 7.0 it has two encodings:
//
//   - intset: every member is the canonical decimal form of an int64 and
//     there are at most set-max-intset-entries of them. The members are
//     kept as a sorted []int64, so iteration is in ascending numeric order,
//     exactly as Redis's intset iterates.
//   - hashtable: anything else. The members live in small tables split
//     by the high bits of a 64-bit hash of the member (extendible
//     hashing, see hashSet), which keeps each table small enough for
//     SSCAN and random draws to be cheap.
//
// As in Redis 7.0, a set never converts back from hashtable to intset;
// only a set made afresh (SMOVE to a new key, the STORE commands, SPOP's
// rebuild) starts as an intset again.
type Set struct {
	ints []int64  // intset encoding, when ht is nil
	ht   *hashSet // hashtable encoding
}

var _ Encoder = (*Set)(nil)

// NewSet returns an empty intset-encoded set.
func NewSet() *Set { return &Set{} }

// NewSetFor returns an empty set in the encoding Redis's setTypeCreate
// chooses for a set whose first member is m: intset when m is an
// integer, hashtable otherwise.
func NewSetFor(m []byte) *Set {
	if _, ok := redisconv.ParseInt(m); ok {
		return &Set{}
	}
	return &Set{ht: newHashSet(0)}
}

// Type is TypeSet.
func (s *Set) Type() Type { return TypeSet }

// Len is the number of members.
func (s *Set) Len() int {
	if s.ht != nil {
		return s.ht.n
	}
	return len(s.ints)
}

// Encoding is "intset" or "hashtable", as OBJECT ENCODING reports.
func (s *Set) Encoding() string {
	if s.ht != nil {
		return "hashtable"
	}
	return "intset"
}

// IsIntset reports whether the set is intset-encoded.
func (s *Set) IsIntset() bool { return s.ht == nil }

// Ints is the members of an intset-encoded set in ascending order, nil
// for a hashtable. The slice is the set's own: do not modify it.
func (s *Set) Ints() []int64 {
	if s.ht != nil {
		return nil
	}
	return s.ints
}

// Clone returns a deep copy in the same encoding.
func (s *Set) Clone() Object {
	if s.ht != nil {
		return &Set{ht: s.ht.clone()}
	}
	return &Set{ints: slices.Clone(s.ints)}
}

// Add adds m (copied), reporting whether it was new. maxIntset is
// set-max-intset-entries: an intset growing beyond it, or given a member
// that is not an integer, becomes a hashtable.
func (s *Set) Add(m []byte, maxIntset int) bool {
	if s.ht != nil {
		return s.ht.add(m)
	}
	v, ok := redisconv.ParseInt(m)
	if !ok {
		s.toHashtable()
		return s.ht.add(m)
	}
	i, found := slices.BinarySearch(s.ints, v)
	if found {
		return false
	}
	s.ints = slices.Insert(s.ints, i, v)
	if len(s.ints) > maxIntset {
		s.toHashtable()
	}
	return true
}

// AddInt adds the integer member v, as Add of its decimal form.
func (s *Set) AddInt(v int64, maxIntset int) bool {
	if s.ht != nil {
		var tmp [24]byte
		return s.ht.add(strconv.AppendInt(tmp[:0], v, 10))
	}
	i, found := slices.BinarySearch(s.ints, v)
	if found {
		return false
	}
	s.ints = slices.Insert(s.ints, i, v)
	if len(s.ints) > maxIntset {
		s.toHashtable()
	}
	return true
}

// Remove removes m, reporting whether it was a member. The caller
// deletes the key when the set becomes empty.
func (s *Set) Remove(m []byte) bool {
	if s.ht != nil {
		return s.ht.remove(m)
	}
	v, ok := redisconv.ParseInt(m)
	if !ok {
		return false
	}
	i, found := slices.BinarySearch(s.ints, v)
	if !found {
		return false
	}
	s.ints = slices.Delete(s.ints, i, i+1)
	return true
}

// Has reports whether m is a member.
func (s *Set) Has(m []byte) bool {
	if s.ht != nil {
		return s.ht.has(m)
	}
	v, ok := redisconv.ParseInt(m)
	if !ok {
		return false
	}
	_, found := slices.BinarySearch(s.ints, v)
	return found
}

// HasMember reports whether the member m (from another set's Each) is a
// member of s.
func (s *Set) HasMember(m Member) bool {
	if s.ht == nil {
		if !m.IsInt {
			// A hashtable member may still be an integer ("5" added to a
			// set that held "a" once).
			v, ok := redisconv.ParseInt(m.Str)
			if !ok {
				return false
			}
			_, found := slices.BinarySearch(s.ints, v)
			return found
		}
		_, found := slices.BinarySearch(s.ints, m.Int)
		return found
	}
	if m.IsInt {
		var tmp [24]byte
		return s.ht.has(strconv.AppendInt(tmp[:0], m.Int, 10))
	}
	return s.ht.hasString(m.Str)
}

// Member is one member handed out by iteration: an integer of an intset
// (IsInt) or a string of a hashtable. Str aliases the set's storage,
// whose bytes the set never changes: it stays valid after the member is
// removed (SPOP propagates a member it removed).
type Member struct {
	Str   string
	Int   int64
	IsInt bool
}

// Bytes appends the member's bytes to dst.
func (m Member) Bytes(dst []byte) []byte {
	if m.IsInt {
		return strconv.AppendInt(dst, m.Int, 10)
	}
	return append(dst, m.Str...)
}

// String is the member as a string (allocates for an integer).
func (m Member) String() string {
	if m.IsInt {
		return strconv.FormatInt(m.Int, 10)
	}
	return m.Str
}

// Each calls fn for every member until fn returns false: ascending
// integers for an intset, hash order for a hashtable. fn must not
// modify the set.
func (s *Set) Each(fn func(m Member) bool) {
	if s.ht == nil {
		for _, v := range s.ints {
			if !fn(Member{Int: v, IsInt: true}) {
				return
			}
		}
		return
	}
	s.ht.each(func(k string) bool { return fn(Member{Str: k}) })
}

// Random returns a random member of a non-empty set.
func (s *Set) Random() Member {
	if s.ht == nil {
		return Member{Int: s.ints[rand.IntN(len(s.ints))], IsInt: true}
	}
	return Member{Str: s.ht.random()}
}

// RemoveMember removes a member obtained from this set's Random or Each.
func (s *Set) RemoveMember(m Member) {
	if m.IsInt {
		if i, found := slices.BinarySearch(s.ints, m.Int); found {
			s.ints = slices.Delete(s.ints, i, i+1)
		}
		return
	}
	s.ht.removeString(m.Str)
}

// Replace makes s hold the contents of o (o must not be used after).
func (s *Set) Replace(o *Set) { *s = *o }

func (s *Set) toHashtable() {
	h := newHashSet(len(s.ints) + 1)
	var tmp [24]byte
	for _, v := range s.ints {
		h.add(strconv.AppendInt(tmp[:0], v, 10))
	}
	s.ints = nil
	s.ht = h
}

// Scan continues an SSCAN from cursor: it examines about count members
// and calls fn for each, returning the cursor to continue from (0 when
// the scan is complete).
//
// An intset is returned whole in one call with cursor 0, as Redis does.
// For a hashtable the cursor is a position in the 64-bit hash space of
// the members (the hash is fixed for the life of the process): a call
// returns every member whose hash lies in [cursor, next) and the next
// call starts at next. The intervals of successive calls tile the hash
// space, and a member's position does not depend on the set's layout
// (growth, shrinking, splits and rebuilds of the maps), so a member
// present for the whole scan is returned at least once whatever happens
// to the set in between; members added or removed meanwhile may or may
// not be returned. Members sharing a hash are never split across calls.
func (s *Set) Scan(cursor uint64, count int, fn func(m Member)) uint64 {
	if s.ht == nil {
		for _, v := range s.ints {
			fn(Member{Int: v, IsInt: true})
		}
		return 0
	}
	return s.ht.scan(cursor, count, fn)
}

// ---- hashtable encoding ---------------------------------------------------

// hashSet is extendible hashing over small open-addressing tables: a
// directory of 2^depth entries indexed by the top depth bits of a
// member's 64-bit hash, each pointing to a bucket whose members share
// the top bucket.depth bits (a bucket of local depth d fills 2^(depth-d)
// consecutive directory entries). A bucket's table grows up to
// bucketSlots slots, then the bucket splits in two on its next hash bit.
// So a bucket always holds one contiguous range of the hash space, which
// SSCAN's cursor relies on, and no single operation rehashes more than
// one bucket.
//
// A bucket keeps its members' records (uvarint length, then the bytes)
// one after another in one byte array, its arena, and a slot is a 4-byte
// reference into it with a tag byte that answers most probes without
// reading the record. Tables run between 3/8 and 3/4 full: about 7 bytes
// of slot per member plus its record (11 bytes for a 10-byte member),
// where a pointer and tag per slot to a record of its own cost 38, a Go
// map[string]struct{} about 56, and Redis's dictEntry and bucket pointer
// 32 plus the sds.
//
// Members are handed out as views of their records (Member.Str), so the
// bytes of a record are never changed: a record is only ever appended to
// the arena, and a removed one stays as a hole, counted, until the
// bucket copies its live records into a new arena: when the holes pass
// half of it, when its table shrinks, and when it splits (each half
// copies its own records).
type hashSet struct {
	dir   []*bucket
	depth uint8
	n     int
	// sized is what memSize last measured: the buckets' bytes when the
	// set held n members (see Set.memSize).
	sized struct {
		n     int
		bytes int64
	}
}

// bucket is one linear-probing table. A slot is 0 when free, else the
// member's tag in the top 8 bits and its ref in the low refBits: the
// offset of its record in arena plus 1, or, with bigRef set, its index
// in big. The tag shares the slot's word so that a probe reads one
// array (a separate tag array cost a byte per slot and often a cache
// miss). The empty member is kept aside, in the empty flag.
type bucket struct {
	slots []uint32
	arena []byte   // records, appended only (see hashSet)
	big   []string // members too long for the arena (see store)
	n     int      // members, the empty one included
	holes int      // bytes of arena held by removed records
	empty bool
	depth uint8
}

const (
	refBits = 24
	refMask = 1<<refBits - 1
	// bigRef marks a ref to big; arena offsets stay below it (8 MB). A
	// bucket's arena holds up to 768 records of at most bigMember bytes,
	// and holes up to as much again: about 100 KB. Past the limit (a
	// bucket at maxDepth), store keeps members in big.
	bigRef = 1 << (refBits - 1)
	// bigMember is the longest member kept in the arena (Redis's
	// set-max-listpack-value). A longer one is a string of its own, so
	// that the copies of a compaction, a growth or a split stay small:
	// with 1 KiB members in the arena, SADD at pipeline 16 cost 2.2
	// times redis-server's CPU per request.
	bigMember = 64
	// arenaGrowth: a full arena grows into a new one with room for
	// 1/arenaGrowth more bytes, so each byte is copied about three times
	// as the bucket fills (nine times with an eighth), and the room left
	// is a fifth of it on average.
	arenaGrowth = 2
)

// newBucket makes a bucket of size slots.
func newBucket(size int, depth uint8) *bucket {
	return &bucket{slots: make([]uint32, size), depth: depth}
}

// memberTag is the tag of a member of hash hv, in a slot's top bits:
// bits that neither the directory (the top ones) nor the slot index (the
// bottom ones) use.
func memberTag(hv uint64) uint32 { return uint32(hv>>32) << refBits }

// recStr is the member of the record at off in a, a view of its bytes.
func recStr(a []byte, off uint32) string {
	if n := a[off]; n < 0x80 {
		return unsafe.String(&a[off+1], int(n))
	}
	return recStrLong(a, off)
}

func recStrLong(a []byte, off uint32) string {
	n, k := binary.Uvarint(a[off:])
	return unsafe.String(&a[int(off)+k], int(n))
}

// recLen is the size of the record at off in a: header and bytes.
func recLen(a []byte, off uint32) int {
	if c := a[off]; c < 0x80 {
		return 1 + int(c)
	}
	n, k := binary.Uvarint(a[off:])
	return k + int(n)
}

// str is the member of the non-free slot value v.
func (b *bucket) str(v uint32) string {
	if ref := v & refMask; ref < bigRef {
		return recStr(b.arena, ref-1)
	}
	return b.big[v&refMask-bigRef]
}

// store keeps a copy of the non-empty member m, in the arena or, when
// long (or when the arena is at its limit), in big, and returns its ref.
func (b *bucket) store(m []byte) uint32 {
	size := uvarintLen(uint64(len(m))) + len(m)
	if len(m) > bigMember || len(b.arena)+size >= bigRef {
		if len(b.big) >= bigRef {
			panic("keyspace: set bucket overflow") // 8M long members sharing 40 hash bits
		}
		b.big = append(b.big, string(m))
		return bigRef + uint32(len(b.big)-1)
	}
	if len(b.arena)+size > cap(b.arena) {
		// Into a new array: the old one may be shared with a clone's
		// arena or with the views of members handed out.
		need := len(b.arena) + size
		a := slices.Grow([]byte(nil), need+need/arenaGrowth)
		b.arena = append(a, b.arena...)
	}
	off := len(b.arena)
	b.arena = binary.AppendUvarint(b.arena, uint64(len(m)))
	b.arena = append(b.arena, m...)
	return uint32(off) + 1
}

const (
	// bucketSlots is the largest table of a bucket: it bounds the work of
	// one SSCAN call, of a random draw and of a split.
	bucketSlots = 1024
	// maxDepth bounds the directory (2^maxDepth entries).
	maxDepth = 40
	minSlots = 4
)

var setSeed = maphash.MakeSeed()

func hashString(s string) uint64 { return maphash.String(setSeed, s) }

// slotsFor is the table size for n non-empty members: at most 3/4 full.
func slotsFor(n int) int {
	c := minSlots
	for c*3 < n*4+4 {
		c *= 2
	}
	return c
}

func newHashSet(hint int) *hashSet {
	h := &hashSet{}
	for h.depth < maxDepth && hint > (bucketSlots*3/8)<<h.depth {
		h.depth++
	}
	h.dir = make([]*bucket, 1<<h.depth)
	slots := slotsFor(hint >> h.depth)
	for i := range h.dir {
		h.dir[i] = newBucket(slots, h.depth)
	}
	return h
}

func (h *hashSet) bucketOf(hv uint64) *bucket { return h.dir[hv>>(64-h.depth)] }

// find returns the slot holding m (non-empty) or -1, and the first free
// slot met (where m would go).
func (b *bucket) find(hv uint64, m string) (at, free int) {
	mask := uint64(len(b.slots) - 1)
	tag := memberTag(hv)
	for i := hv & mask; ; i = (i + 1) & mask {
		v := b.slots[i]
		if v == 0 {
			return -1, int(i)
		}
		if v&^refMask != tag {
			continue
		}
		// A short member is compared in place (recStr is not inlined):
		// a record of another length has another first byte.
		if ref := v & refMask; ref < bigRef && len(m) < 0x80 {
			if r := b.arena[ref-1:]; int(r[0]) == len(m) && string(r[1:1+len(m)]) == m {
				return int(i), -1
			}
		} else if b.str(v) == m {
			return int(i), -1
		}
	}
}

// findBytes is find for a []byte member, without allocating.
func (b *bucket) findBytes(hv uint64, m []byte) (at, free int) {
	mask := uint64(len(b.slots) - 1)
	tag := memberTag(hv)
	for i := hv & mask; ; i = (i + 1) & mask {
		v := b.slots[i]
		if v == 0 {
			return -1, int(i)
		}
		if v&^refMask != tag {
			continue
		}
		if ref := v & refMask; ref < bigRef && len(m) < 0x80 {
			if r := b.arena[ref-1:]; int(r[0]) == len(m) && string(r[1:1+len(m)]) == string(m) {
				return int(i), -1
			}
		} else if b.str(v) == string(m) {
			return int(i), -1
		}
	}
}

// put stores a copy of the non-empty member m (of hash hv), known to be
// absent, growing the table when it would pass 3/4 full.
func (b *bucket) put(hv uint64, m []byte) {
	if (b.n+1)*4 > len(b.slots)*3 {
		b.rehash(len(b.slots) * 2)
	}
	b.place(hv, memberTag(hv)|b.store(m))
	b.n++
}

// place puts the slot value v in the first free slot from hv's home.
func (b *bucket) place(hv uint64, v uint32) {
	mask := uint64(len(b.slots) - 1)
	i := hv & mask
	for b.slots[i] != 0 {
		i = (i + 1) & mask
	}
	b.slots[i] = v
}

// rehash moves the slots into a table of size slots; their refs stand.
func (b *bucket) rehash(size int) {
	old := b.slots
	b.slots = make([]uint32, size)
	for _, v := range old {
		if v != 0 {
			b.place(hashString(b.str(v)), v)
		}
	}
}

// repack copies the records of b's slots, whose refs point into arena
// and big (b's own, or those of the bucket b was split from), into a new
// arena of their size and a new big, and points the slots there.
func (b *bucket) repack(arena []byte, big []string) {
	size, long := 0, 0
	for _, v := range b.slots {
		if v == 0 {
			continue
		}
		if ref := v & refMask; ref < bigRef {
			size += recLen(arena, ref-1)
		} else {
			long++
		}
	}
	var na []byte
	if size > 0 {
		na = slices.Grow(na, size)
	}
	var nb []string
	if long > 0 {
		nb = make([]string, 0, long)
	}
	for i, v := range b.slots {
		if v == 0 {
			continue
		}
		ref := v & refMask
		if ref < bigRef {
			off := ref - 1
			ref = uint32(len(na)) + 1
			na = append(na, arena[off:int(off)+recLen(arena, off)]...)
		} else {
			nb = append(nb, big[ref-bigRef])
			ref = bigRef + uint32(len(nb)-1)
		}
		b.slots[i] = v&^refMask | ref
	}
	b.arena, b.big, b.holes = na, nb, 0
}

// del empties slot i and shifts the following run back (no tombstones).
// Its record becomes a hole; a long member's place in big is taken by
// the last one.
func (b *bucket) del(i int) {
	v := b.slots[i]
	if ref := v & refMask; ref < bigRef {
		b.holes += recLen(b.arena, ref-1)
	} else {
		last := uint32(len(b.big) - 1)
		if k := ref - bigRef; k != last {
			moved := b.big[last]
			at, _ := b.find(hashString(moved), moved)
			b.slots[at] = b.slots[at]&^refMask | ref
			b.big[k] = moved
		}
		b.big[last] = ""
		b.big = b.big[:last]
	}
	mask := len(b.slots) - 1
	b.slots[i] = 0
	b.n--
	for j := (i + 1) & mask; b.slots[j] != 0; j = (j + 1) & mask {
		k := int(hashString(b.str(b.slots[j]))) & mask
		// Move slots[j] into the hole at i unless its home k lies
		// cyclically in (i, j].
		if (j > i && (k <= i || k > j)) || (j < i && k <= i && k > j) {
			b.slots[i], b.slots[j] = b.slots[j], 0
			i = j
		}
	}
	shrink := len(b.slots) > minSlots && b.n*8 < len(b.slots)
	if shrink {
		b.rehash(len(b.slots) / 2)
	}
	if shrink || b.holes*2 > len(b.arena) {
		b.repack(b.arena, b.big)
	}
}

func (h *hashSet) has(m []byte) bool {
	hv := maphash.Bytes(setSeed, m)
	b := h.bucketOf(hv)
	if len(m) == 0 {
		return b.empty
	}
	at, _ := b.findBytes(hv, m)
	return at >= 0
}

func (h *hashSet) hasString(m string) bool {
	hv := hashString(m)
	b := h.bucketOf(hv)
	if m == "" {
		return b.empty
	}
	at, _ := b.find(hv, m)
	return at >= 0
}

func (h *hashSet) add(m []byte) bool {
	hv := maphash.Bytes(setSeed, m)
	b := h.bucketOf(hv)
	if len(m) == 0 {
		if b.empty {
			return false
		}
		b.empty = true
		b.n++
		h.n++
		return true
	}
	if at, _ := b.findBytes(hv, m); at >= 0 {
		return false
	}
	if (b.n+1)*4 > len(b.slots)*3 && len(b.slots) >= bucketSlots && b.depth < maxDepth {
		h.split(b)
		b = h.bucketOf(hv)
	}
	b.put(hv, m)
	h.n++
	return true
}

func (h *hashSet) remove(m []byte) bool {
	hv := maphash.Bytes(setSeed, m)
	b := h.bucketOf(hv)
	if len(m) == 0 {
		if !b.empty {
			return false
		}
		b.empty = false
		b.n--
	} else {
		at, _ := b.findBytes(hv, m)
		if at < 0 {
			return false
		}
		b.del(at)
	}
	h.removed()
	return true
}

func (h *hashSet) removeString(m string) {
	hv := hashString(m)
	b := h.bucketOf(hv)
	if m == "" {
		if b.empty {
			b.empty = false
			b.n--
			h.removed()
		}
		return
	}
	if at, _ := b.find(hv, m); at >= 0 {
		b.del(at)
		h.removed()
	}
}

// removed accounts for a removal. A set that shrank to a sixteenth of
// what its directory was sized for is rebuilt with fewer buckets
// (amortized O(1) per removal); the buckets' tables shrink by themselves.
func (h *hashSet) removed() {
	h.n--
	if h.depth > 0 && h.n*16 < len(h.dir)*bucketSlots*3/8 {
		nh := newHashSet(h.n)
		h.eachBucket(func(b *bucket) bool {
			if b.empty {
				nb := nh.bucketOf(hashString(""))
				nb.empty = true
				nb.n++
			}
			for _, v := range b.slots {
				if v != 0 {
					m := b.str(v)
					hv := hashString(m)
					nh.bucketOf(hv).put(hv, unsafe.Slice(unsafe.StringData(m), len(m)))
				}
			}
			return true
		})
		nh.n = h.n
		*h = *nh
	}
}

// split divides b on its next hash bit. The halves' slots first refer to
// b's records (their arena and big are b's), then each half copies its
// own into an arena of its size.
func (h *hashSet) split(b *bucket) {
	if b.depth == h.depth {
		dir := make([]*bucket, 2*len(h.dir))
		for i := range dir {
			dir[i] = h.dir[i>>1]
		}
		h.dir = dir
		h.depth++
	}
	d := b.depth
	var kids [2]*bucket
	for i := range kids {
		kids[i] = newBucket(slotsFor(b.n/2+1), d+1)
		kids[i].arena, kids[i].big = b.arena, b.big
	}
	var prefix uint64
	found := false
	kidOf := func(hv uint64) *bucket {
		if !found {
			prefix, found = hv>>(64-d), true
		}
		return kids[hv>>(63-d)&1]
	}
	if b.empty {
		kid := kidOf(hashString(""))
		kid.empty = true
		kid.n++
	}
	for _, v := range b.slots {
		if v != 0 {
			hv := hashString(b.str(v))
			kid := kidOf(hv)
			if (kid.n+1)*4 > len(kid.slots)*3 {
				kid.rehash(len(kid.slots) * 2)
			}
			kid.place(hv, v)
			kid.n++
		}
	}
	for _, kid := range kids {
		kid.repack(kid.arena, kid.big)
	}
	if d == 0 {
		prefix = 0
	}
	width := 1 << (h.depth - d)
	start := int(prefix) << (h.depth - d)
	for i := 0; i < width; i++ {
		h.dir[start+i] = kids[i*2/width]
	}
}

// clone copies the directory and the buckets' tables. The arenas are
// shared, the clone's capped at its length: records are never changed,
// and an append goes past what the other copy reads (the original's,
// into its spare room) or into a new array (the clone's). big is copied,
// as del changes it in place.
func (h *hashSet) clone() *hashSet {
	c := &hashSet{dir: make([]*bucket, len(h.dir)), depth: h.depth, n: h.n}
	var last, lastCopy *bucket
	for i, b := range h.dir {
		if b != last {
			last = b
			cp := *b
			cp.slots = slices.Clone(b.slots)
			cp.arena = slices.Clip(b.arena)
			cp.big = slices.Clone(b.big)
			lastCopy = &cp
		}
		c.dir[i] = lastCopy
	}
	return c
}

// eachBucket calls fn for every bucket once, in hash order.
func (h *hashSet) eachBucket(fn func(b *bucket) bool) {
	for i := 0; i < len(h.dir); {
		b := h.dir[i]
		if !fn(b) {
			return
		}
		i += 1 << (h.depth - b.depth)
	}
}

func (h *hashSet) each(fn func(k string) bool) {
	h.eachBucket(func(b *bucket) bool {
		if b.empty && !fn("") {
			return false
		}
		for _, v := range b.slots {
			if v != 0 && !fn(b.str(v)) {
				return false
			}
		}
		return true
	})
}

// random draws a member: a random directory entry (a bucket with the
// probability of the share of the hash space it covers, so about in
// proportion to its size), then a uniform member of that bucket by
// drawing slots (tables are at least 1/8 full).
func (h *hashSet) random() string {
	for {
		b := h.dir[rand.IntN(len(h.dir))]
		if b.n == 0 {
			continue
		}
		if b.empty && rand.IntN(b.n) == 0 {
			return ""
		}
		if b.n == 1 && b.empty {
			continue
		}
		for {
			if v := b.slots[rand.IntN(len(b.slots))]; v != 0 {
				return b.str(v)
			}
		}
	}
}

type scanMember struct {
	pos uint64
	key string
}

func (h *hashSet) scan(cursor uint64, count int, fn func(m Member)) uint64 {
	if count < 1 {
		count = 1
	}
	examined := 0
	var items []scanMember
	for {
		b := h.bucketOf(cursor)
		// The bucket covers [lo, end): end is 0 when it reaches the top.
		var end uint64
		if b.depth > 0 {
			shift := 64 - uint(b.depth)
			end = (cursor>>shift + 1) << shift
		}
		items = items[:0]
		if b.empty {
			if p := hashString(""); p >= cursor {
				items = append(items, scanMember{p, ""})
			}
		}
		for _, v := range b.slots {
			if v == 0 {
				continue
			}
			s := b.str(v)
			if p := hashString(s); p >= cursor {
				items = append(items, scanMember{p, s})
			}
		}
		if need := count - examined; len(items) > need {
			// Take every member up to the need-th position, ties included
			// (a position is never split across calls), and resume at the
			// smallest position left.
			limit := selectPos(items, need-1)
			resume := uint64(0)
			more := false
			for _, it := range items {
				if it.pos <= limit {
					fn(Member{Str: it.key})
				} else if !more || it.pos < resume {
					resume, more = it.pos, true
				}
			}
			if more {
				return resume
			}
		} else {
			for _, it := range items {
				fn(Member{Str: it.key})
			}
		}
		examined += len(items)
		if end == 0 {
			return 0
		}
		cursor = end
		if examined >= count {
			return cursor
		}
	}
}

func (m scanMember) position() uint64 { return m.pos }
