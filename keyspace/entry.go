package keyspace

import (
	"encoding/binary"
	"math/bits"
	"reflect"
	"strconv"
	"sync"
	"unsafe"

	"github.com/zredis/zredis/redisconv"
)

// Type is the type of a stored value, as TYPE names it.
type Type uint8

// The value types. The numbering is internal; the expiry wire format maps
// types to its own codes.
const (
	TypeNone Type = iota
	TypeString
	TypeList
	TypeSet
	TypeZSet
	TypeHash
	TypeStream
)

var typeNames = [...]string{"none", "string", "list", "set", "zset", "hash", "stream"}

// String is the name TYPE replies with.
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "unknown"
}

// Object is a collection value (hash, list, set, sorted set).
type Object interface {
	Type() Type
	// Clone returns a deep copy. A value shared with a live snapshot is
	// cloned before its first in-place mutation.
	Clone() Object
	// Len is the number of elements.
	Len() int
}

// Encoder is implemented by collection values that know the encoding
// Redis would report for them in OBJECT ENCODING ("listpack",
// "hashtable", "intset", "skiplist", "quicklist").
type Encoder interface {
	Encoding() string
}

// Entry is one key's value and metadata, and the key itself. Entries are
// shared with live snapshots: code that changes an entry in place
// obtains it through DB.LookupWrite, which hands out a private copy when
// a snapshot may still read the original.
//
// An entry is one allocation: this 24-byte header, then a tail holding
// the key and, when they fit, a string value (Redis's embstr, with the
// key too) or a small hash's packed fields, and last, in an extended
// entry, its deadline, generation and counted cost (entryExt). A
// million short keys thus cost one object each, of which the collector
// scans one word (ref), rather than an entry, a key string and a value
// array, plus the slot of a map keyed by string.
//
// A compact entry, without the extension, is a string stored inline
// with no deadline, made while no snapshot was live: the common key of a
// queue. It needs none of the three: no deadline; the oldest generation
// (compactGen), which any live snapshot may read, so that a write
// copies it; and its size as its cost, which cannot change in place,
// since what would change it replaces the entry with an extended copy
// first: a write through LookupWrite (DB.private), a deadline
// (DB.setDeadline), SET of a value that does not fit the tail
// (DB.setString), storing it while a snapshot is live
// (DB.extendShared). A plain SET makes an extended string compact again
// (DB.setString). A 10-byte key with a 10-byte value takes 48 bytes;
// with a deadline 64, the size class Valkey 8's object embedding key
// and value reaches. See newEntry and the tail's layout below.
type Entry struct {
	// ref, vlen and vcap are the value: a string's bytes (vlen of vcap),
	// in the tail or an array of their own; a hash, which is these three
	// words (Hash: Obj points here); or another collection (*List, *Set,
	// *ZSet, or an *objBox for an Object of another type).
	ref  unsafe.Pointer
	vlen uint32
	vcap uint32

	atime  uint32 // last access on the keyspace's LRU clock (lruUnitMs units, wrapping)
	typ    Type
	strEnc uint8 // how Redis encoded the string, when not derived from it; objBoxed
	freq   uint8 // LFU counter (OBJECT FREQ), see Keyspace.SetLFU
	flags  uint8 // flagLive, flagDirty (memory.go), flagPinned
}

// entryExt is an extended entry's metadata, the last 16 bytes of its
// tail.
type entryExt struct {
	expireAt int64  // Unix ms; 0 = no deadline
	gen      uint32 // keyspace generation in which this entry was made
	mem      uint32 // counted cost in 8-byte units, see memory.go
}

const extSize = int(unsafe.Sizeof(entryExt{}))

// compactGen is a compact entry's generation: the first, which every
// live snapshot may read.
const compactGen = 1

// headerSize is the Entry struct's size: the tail starts there.
const headerSize = unsafe.Sizeof(Entry{})

// A hash is the entry's ref, vlen and vcap: its layout must match.
var _ [unsafe.Offsetof(Entry{}.vcap) - unsafe.Offsetof(Entry{}.ref) - unsafe.Offsetof(Hash{}.c)]struct{}
var _ [unsafe.Offsetof(Hash{}.c) + unsafe.Offsetof(Entry{}.ref) - unsafe.Offsetof(Entry{}.vcap)]struct{}
var _ [unsafe.Offsetof(Entry{}.vlen) - unsafe.Offsetof(Entry{}.ref) - unsafe.Offsetof(Hash{}.n)]struct{}
var _ [unsafe.Offsetof(Hash{}.n) + unsafe.Offsetof(Entry{}.ref) - unsafe.Offsetof(Entry{}.vlen)]struct{}
var _ [unsafe.Sizeof(Hash{}) - 16]struct{}
var _ [16 - unsafe.Sizeof(Hash{})]struct{}

// Entry flags kept here (memory.go has the accounting ones).
const (
	// flagPinned: output not yet written refers to the string value
	// (DB.PinStr), which must therefore not change: a write lookup
	// copies it first.
	flagPinned uint8 = 1 << 7
)

func (e *Entry) pinned() bool { return e.flags&flagPinned != 0 }

// objBoxed, in a collection's strEnc, says that ref is an *objBox (an
// Object of a type Obj does not know). It is kept out of flags, which
// the keyspace writes while a snapshot may read the entry.
const objBoxed uint8 = 1

// boxed reports whether ref is an *objBox.
func (e *Entry) boxed() bool { return e.typ != TypeString && e.strEnc == objBoxed }

// objBox holds a collection of a type Obj does not know by its Type.
type objBox struct{ o Object }

// The tail's layout:
//
//	size      1 byte: the tail's size in 8-byte units, size byte
//	          included, with tailExt set in an extended entry; bigTail
//	          for a big entry, followed by the size in bytes as 4 bytes,
//	          little-endian, with bigExt set in an extended one
//	key len   uvarint (one byte below 128)
//	key       the key's bytes: every key lives in its entry's tail
//	value     the value's room, when newEntry gave it one
//	ext       an extended entry's entryExt, in the tail's last 16 bytes
//
// An entry of up to 256 bytes has a tail type of its own (tailed, one
// per size class); a longer key makes a big entry, whose type is made
// at run time (bigEntryType). The size bytes never change: a snapshot
// reading the entry on another goroutine reads them too.
const (
	bigTail   = 0xff
	tailExt   = 0x40        // in a small entry's size byte
	tailUnits = tailExt - 1 // a small entry's size byte's size bits
	bigExt    = 1 << 31     // in a big entry's size
)

// tailed is an Entry followed by its tail: T is a byte array sized so
// that the whole is one of Go's size classes.
type tailed[T any] struct {
	Entry
	tail T
}

// maxTail is the largest tail of a small entry (a 256-byte entry): a
// key and value that do not fit one leave the value to an array of its
// own, and a key that does not fit alone makes a big entry.
const maxTail = 256 - int(headerSize)

// tailClasses are the entry sizes allocEntry allocates: Go's size
// classes.
var tailClasses = [...]int{32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256}

// allocEntry returns a zero entry whose tail has room for at least n
// bytes besides its size bytes and, when ext, its entryExt; and that
// room.
func allocEntry(n int, ext bool) (*Entry, int) {
	need := n + 1
	if ext {
		need += extSize
	}
	if need > maxTail {
		return allocBigEntry(n, ext)
	}
	size := 256
	for _, c := range tailClasses {
		if need <= c-int(headerSize) {
			size = c
			break
		}
	}
	var e *Entry
	switch size {
	case 32:
		e = &new(tailed[[32 - headerSize]byte]).Entry
	case 48:
		e = &new(tailed[[48 - headerSize]byte]).Entry
	case 64:
		e = &new(tailed[[64 - headerSize]byte]).Entry
	case 80:
		e = &new(tailed[[80 - headerSize]byte]).Entry
	case 96:
		e = &new(tailed[[96 - headerSize]byte]).Entry
	case 112:
		e = &new(tailed[[112 - headerSize]byte]).Entry
	case 128:
		e = &new(tailed[[128 - headerSize]byte]).Entry
	case 144:
		e = &new(tailed[[144 - headerSize]byte]).Entry
	case 160:
		e = &new(tailed[[160 - headerSize]byte]).Entry
	case 176:
		e = &new(tailed[[176 - headerSize]byte]).Entry
	case 192:
		e = &new(tailed[[192 - headerSize]byte]).Entry
	case 208:
		e = &new(tailed[[208 - headerSize]byte]).Entry
	case 224:
		e = &new(tailed[[224 - headerSize]byte]).Entry
	case 240:
		e = &new(tailed[[240 - headerSize]byte]).Entry
	default:
		e = &new(tailed[[256 - headerSize]byte]).Entry
	}
	tail := size - int(headerSize)
	room := tail - 1
	*e.tailByte() = byte(tail / 8)
	if ext {
		*e.tailByte() |= tailExt
		room -= extSize
	}
	return e, room
}

// bigEntryTypes caches bigEntryType's types by tail size.
var bigEntryTypes sync.Map // int -> reflect.Type

// bigEntryType is the type of a big entry with a tail of n bytes: an
// Entry followed by a byte array, which the collector scans no further
// than the header's pointer.
func bigEntryType(n int) reflect.Type {
	if t, ok := bigEntryTypes.Load(n); ok {
		return t.(reflect.Type)
	}
	t := reflect.StructOf([]reflect.StructField{
		{Name: "E", Type: reflect.TypeFor[Entry]()},
		{Name: "T", Type: reflect.ArrayOf(n, reflect.TypeFor[byte]())},
	})
	t1, _ := bigEntryTypes.LoadOrStore(n, t)
	return t1.(reflect.Type)
}

// allocBigEntry is allocEntry for a tail of more than maxTail bytes
// (a key that long). The tail is rounded up to an eighth of its power
// of two, so that at most eight types are made per doubling, whatever
// the lengths of the keys clients send.
func allocBigEntry(n int, ext bool) (*Entry, int) {
	tail := n + 5
	if ext {
		tail += extSize
	}
	step := 1 << (bits.Len(uint(tail-1)) - 3)
	tail = (tail + step - 1) &^ (step - 1)
	e := (*Entry)(reflect.New(bigEntryType(tail)).UnsafePointer())
	t := unsafe.Slice(e.tailByte(), 5)
	t[0] = bigTail
	size, room := uint32(tail), tail-5
	if ext {
		size |= bigExt
		room -= extSize
	}
	binary.LittleEndian.PutUint32(t[1:], size)
	return e, room
}

// tailByte is the tail's first byte: its size in 8-byte units, or
// bigTail.
func (e *Entry) tailByte() *byte { return (*byte)(unsafe.Add(unsafe.Pointer(e), headerSize)) }

// tailSize is the tail's size, size bytes included.
func (e *Entry) tailSize() int {
	if s := *e.tailByte(); s != bigTail {
		return int(s&tailUnits) * 8
	}
	return int(e.bigSize() &^ bigExt)
}

// bigSize is a big entry's size field.
func (e *Entry) bigSize() uint32 {
	return binary.LittleEndian.Uint32(unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(e), headerSize+1)), 4))
}

// ext is an extended entry's entryExt, nil for a compact entry.
func (e *Entry) ext() *entryExt {
	if off := e.extAt(); off != 0 {
		return (*entryExt)(unsafe.Add(unsafe.Pointer(e), off))
	}
	return nil
}

// extAt is the offset of an extended entry's entryExt, 0 for a compact
// entry: a test of the size byte for a small compact entry, which every
// lookup's deadline check makes.
func (e *Entry) extAt() uintptr {
	s := *e.tailByte()
	switch {
	case s&tailExt == 0: // bigTail has it
		return 0
	case s != bigTail:
		return headerSize + uintptr(s&tailUnits)*8 - uintptr(extSize)
	}
	return e.bigExtAt()
}

// bigExtAt is extAt for a big entry.
func (e *Entry) bigExtAt() uintptr {
	if n := e.bigSize(); n&bigExt != 0 {
		return headerSize + uintptr(n&^bigExt) - uintptr(extSize)
	}
	return 0
}

// compact reports whether e has no entryExt.
func (e *Entry) compact() bool { return e.extAt() == 0 }

// roomAt is the offset in the tail of the room after its size bytes.
func (e *Entry) roomAt() uintptr {
	if *e.tailByte() != bigTail {
		return 1
	}
	return 5
}

// room is the tail after its size bytes: the key, then the value's room
// (up to the entryExt of an extended entry).
func (e *Entry) room() []byte {
	at := e.roomAt()
	n := e.tailSize() - int(at)
	if !e.compact() {
		n -= extSize
	}
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(e), headerSize+at)), n)
}

// inTail reports whether p points into the entry's tail: a value stored
// there rather than in an allocation of its own. Exact, since no other
// object can start inside this one.
func (e *Entry) inTail(p unsafe.Pointer) bool {
	return uintptr(p)-uintptr(unsafe.Pointer(e)) < headerSize+uintptr(e.tailSize()) &&
		uintptr(p) >= uintptr(unsafe.Pointer(e))+headerSize
}

// keyRoom is how much of the tail's room the key takes: its length's
// uvarint and its bytes.
func (e *Entry) keyRoom() int {
	r := e.room()
	n, w := binary.Uvarint(r)
	return w + int(n)
}

// keyRoomFor is keyRoom for a key of n bytes.
func keyRoomFor(n int) int { return uvarintLen(uint64(n)) + n }

// fitsTail reports whether a key of keyLen bytes and a value of valLen
// share a small entry's tail.
func fitsTail(keyLen, valLen int) bool { return keyRoomFor(keyLen)+valLen < maxTail }

// newEntry allocates an entry for key ("": a detached entry, which Put
// gives its key) with room for a value of valRoom bytes in its tail when
// that fits (reported by ok, the room then being the value's capacity:
// vcap, with ref pointing there), extended or compact (see Entry). An
// extended entry's generation is 0 (fresh: Put stamps it).
func newEntry(key string, valRoom int, ext bool) (e *Entry, ok bool) {
	k := keyRoomFor(len(key))
	need := k
	if ok = fitsTail(len(key), valRoom); ok {
		need += valRoom
	}
	e, _ = allocEntry(need, ext)
	r := e.room()
	copy(r[binary.PutUvarint(r, uint64(len(key))):], key)
	if ok {
		e.ref = unsafe.Pointer(unsafe.SliceData(r[k:]))
		e.vcap = uint32(len(r) - k)
	}
	return e, ok
}

// Key is the entry's key (empty for a detached entry, see Put): a view
// of its tail. The common case, a small entry and a key below 128 bytes,
// is read without a loop: it is every lookup's comparison.
func (e *Entry) Key() string {
	p := unsafe.Add(unsafe.Pointer(e), headerSize)
	if *(*byte)(p) != bigTail {
		if n := *(*byte)(unsafe.Add(p, 1)); n < 0x80 {
			return unsafe.String((*byte)(unsafe.Add(p, 2)), int(n))
		}
	}
	r := e.room()
	n, w := binary.Uvarint(r)
	return unsafe.String(&r[w], int(n))
}

// inline reports whether the string value lives in the entry's tail.
func (e *Entry) inline() bool { return e.typ == TypeString && e.inTail(e.ref) }

// setStrBytes makes the string value b itself (an array of its own).
func (e *Entry) setStrBytes(b []byte) {
	e.ref = unsafe.Pointer(unsafe.SliceData(b))
	e.vlen, e.vcap = uint32(len(b)), uint32(cap(b))
}

// setStrCopy makes the string value a copy of b: in the entry's own
// storage when it fits there (the tail, or an array of its own that b
// does not more than fill by half), else in a new array. The entry must
// be private and not pinned.
func (e *Entry) setStrCopy(b []byte) {
	if e.holds(len(b)) {
		copy(unsafe.Slice((*byte)(e.ref), e.vcap), b)
		e.vlen = uint32(len(b))
		return
	}
	e.setStrBytes(append([]byte(nil), b...))
}

// holds reports whether the string value's storage takes n bytes and is
// kept for them: the tail always, an array of its own when n fills more
// than about half of it (a long value overwritten by a short one is
// not kept alive by it).
func (e *Entry) holds(n int) bool {
	return n <= int(e.vcap) && (e.inTail(e.ref) || int(e.vcap) <= 2*n+64)
}

// setObj makes the value the collection obj. A hash is copied into the
// entry (its three words); a small one's packed fields move into the
// tail when they fit its room.
func (e *Entry) setObj(obj Object) {
	e.typ = obj.Type()
	e.vlen, e.vcap = 0, 0
	e.strEnc = 0
	switch o := obj.(type) {
	case *Hash:
		e.ref, e.vlen, e.vcap = o.p, o.n, o.c
		if lp := o.lpb(); len(lp) > 0 {
			if r := e.room()[e.keyRoom():]; len(r) >= len(lp) {
				copy(r, lp)
				e.hash().setLP(r[:len(lp)])
			}
		}
	case *List:
		e.ref = unsafe.Pointer(o)
	case *Set:
		e.ref = unsafe.Pointer(o)
	case *ZSet:
		e.ref = unsafe.Pointer(o)
	case *Stream:
		e.ref = unsafe.Pointer(o)
	default:
		e.ref = unsafe.Pointer(&objBox{obj})
		e.strEnc = objBoxed
	}
}

// hash is the entry's value as a Hash (its ref, vlen and vcap).
func (e *Entry) hash() *Hash { return (*Hash)(unsafe.Pointer(&e.ref)) }

// valueInTail reports whether the value's bytes are in the tail: a short
// string, or a small hash's packed fields.
func (e *Entry) valueInTail() bool {
	return (e.typ == TypeString || e.typ == TypeHash && !e.boxed()) && e.ref != nil && e.inTail(e.ref)
}

// String encoding hints (Entry.strEnc). By default OBJECT ENCODING
// derives a string's encoding from its value, as tryObjectEncoding
// does; these record the cases where Redis ends up elsewhere.
const (
	strEncAuto     uint8 = iota
	strEncRaw            // edited in place (APPEND, SETRANGE): raw
	strEncNoInt          // made by createStringObject (INCRBYFLOAT): embstr/raw only
	strEncIntOwned       // duplicated integer (COPY): int, never the shared object
)

// lfuInitVal is the counter of a new key under an LFU policy (Redis's
// LFU_INIT_VAL): new keys are not evicted before they had a chance.
const lfuInitVal = 5

// Type is the entry's value type.
func (e *Entry) Type() Type { return e.typ }

// Str is a string value. The caller must not modify it: use SetStr or
// the DB's string operations for changes.
func (e *Entry) Str() []byte {
	if e.typ != TypeString {
		return nil
	}
	return unsafe.Slice((*byte)(e.ref), e.vcap)[:e.vlen:e.vcap]
}

// Obj is a collection value.
func (e *Entry) Obj() Object {
	if e.boxed() {
		return (*objBox)(e.ref).o
	}
	switch e.typ {
	case TypeHash:
		return e.hash() // the entry's own words, nil array or not
	case TypeList:
		return (*List)(e.ref)
	case TypeSet:
		return (*Set)(e.ref)
	case TypeZSet:
		return (*ZSet)(e.ref)
	case TypeStream:
		return (*Stream)(e.ref)
	}
	return nil
}

// ExpireAt is the deadline in Unix ms, 0 when the key does not expire.
func (e *Entry) ExpireAt() int64 {
	if *e.tailByte()&tailExt == 0 {
		return 0 // compact and small: the common case, inlined
	}
	return e.extExpireAt()
}

// extExpireAt is ExpireAt for an entry whose size byte has tailExt set:
// kept out of line so that ExpireAt's test is inlined.
//
//go:noinline
func (e *Entry) extExpireAt() int64 {
	if x := e.ext(); x != nil {
		return x.expireAt
	}
	return 0
}

// expiredBy reports whether e has a deadline and it is at or before now
// (Unix ms): Redis's keyIsExpired.
func (e *Entry) expiredBy(now int64) bool {
	// A compact small entry is answered inline, as in ExpireAt.
	return *e.tailByte()&tailExt != 0 && e.extExpiredBy(now)
}

// extExpiredBy is expiredBy for an entry whose size byte has tailExt
// set, out of line.
//
//go:noinline
func (e *Entry) extExpiredBy(now int64) bool {
	x := e.ext()
	return x != nil && x.expireAt != 0 && x.expireAt <= now
}

// setExpireAt sets an extended entry's deadline.
func (e *Entry) setExpireAt(at int64) { e.ext().expireAt = at }

// gen is the keyspace generation in which e was made (compactGen for a
// compact entry; 0: fresh, not yet stored).
func (e *Entry) gen() uint32 {
	if x := e.ext(); x != nil {
		return x.gen
	}
	return compactGen
}

// setGen sets an extended entry's generation.
func (e *Entry) setGen(g uint32) { e.ext().gen = g }

// SetInt replaces the string value of an entry obtained from LookupWrite
// with the decimal form of v (INCR and friends), in the entry itself when
// it fits.
func (e *Entry) SetInt(v int64) {
	if e.holds(20) {
		e.vlen = uint32(len(strconv.AppendInt(e.Str()[:0], v, 10)))
	} else {
		var b [20]byte
		e.setStrCopy(strconv.AppendInt(b[:0], v, 10))
	}
	e.strEnc = strEncAuto
}

// SetStr replaces the string value of an entry obtained from
// LookupWrite. b is kept: the caller hands over ownership. OBJECT
// ENCODING then derives the encoding from the new value, as Redis does
// for a value it re-encodes (INCR and friends); call MarkRaw or
// MarkNoInt afterwards where Redis encodes otherwise.
func (e *Entry) SetStr(b []byte) {
	if len(b) <= int(e.vcap) && e.inline() {
		copy(unsafe.Slice((*byte)(e.ref), e.vcap), b)
		e.vlen = uint32(len(b))
	} else {
		e.setStrBytes(b)
	}
	e.strEnc = strEncAuto
}

// MarkRaw records that the string was edited in place (APPEND, SETRANGE),
// which Redis keeps raw-encoded whatever its length or content. The
// entry must come from LookupWrite or be fresh.
func (e *Entry) MarkRaw() { e.strEnc = strEncRaw }

// MarkNoInt records that Redis made this string without trying the
// integer encoding (INCRBYFLOAT's result "3" is embstr, not int). The
// entry must come from LookupWrite or be fresh.
func (e *Entry) MarkNoInt() { e.strEnc = strEncNoInt }

// IdleSeconds is the time since the last access, for OBJECT IDLETIME. A
// clock that went backwards gives 0, not a huge idle time.
func (e *Entry) IdleSeconds(nowMs int64) int64 {
	idle := int32(uint32(nowMs/lruUnitMs) - e.atime)
	if idle < 0 {
		return 0
	}
	return int64(idle) / lruUnitsPerSecond
}

// The LRU clock counts tenths of a second, finer than Redis's 1 s
// (LRU_CLOCK_RESOLUTION) so that eviction tells a key read a moment ago
// from one written earlier in the same second. As a uint32 it wraps
// every 13 years; differences are taken modulo 2^32 and read as int32
// (6.8 years), which bounds the idle time an entry can report.
const (
	lruUnitMs         = 100
	lruUnitsPerSecond = 1000 / lruUnitMs
	lruUnitsPerMinute = 60 * lruUnitsPerSecond
	maxIdleSeconds    = (1<<31 - 1) / lruUnitsPerSecond
)

// Shared integers: Redis keeps one object for each integer in
// [0, sharedIntegers) and reports its refcount as INT_MAX.
const (
	sharedIntegers = 10000
	// SharedRefcount is OBJECT REFCOUNT of a shared integer.
	SharedRefcount = 1<<31 - 1
	embstrLimit    = 44 // OBJ_ENCODING_EMBSTR_SIZE_LIMIT
)

// Encoding is what OBJECT ENCODING answers for the entry. For a string
// it reproduces tryObjectEncoding: "int" for a canonical integer that
// fits 64 bits (at most 20 bytes), "embstr" up to 44 bytes, "raw" beyond
// and after an in-place edit. Collections answer through Encoder.
func (e *Entry) Encoding() string {
	switch e.typ {
	case TypeString:
		switch e.strEnc {
		case strEncRaw:
			return "raw"
		case strEncAuto, strEncIntOwned:
			if _, ok := redisconv.ParseInt(e.Str()); ok {
				return "int"
			}
		}
		if e.vlen <= embstrLimit {
			return "embstr"
		}
		return "raw"
	default:
		if enc, ok := e.Obj().(Encoder); ok {
			return enc.Encoding()
		}
		return defaultEncoding(e.typ)
	}
}

func defaultEncoding(t Type) string {
	switch t {
	case TypeList:
		return "quicklist"
	case TypeSet, TypeHash:
		return "hashtable"
	case TypeZSet:
		return "skiplist"
	case TypeStream:
		return "stream"
	}
	return "raw"
}

// Refcount is what OBJECT REFCOUNT answers: INT_MAX for a small
// non-negative integer string when Redis would share it (sharedInts),
// 1 otherwise.
func (e *Entry) Refcount(sharedInts bool) int64 {
	if sharedInts && e.typ == TypeString && e.strEnc == strEncAuto {
		if n, ok := redisconv.ParseInt(e.Str()); ok && n >= 0 && n < sharedIntegers {
			return SharedRefcount
		}
	}
	return 1
}

// clone returns a deep copy of e for the same key. forSnapshot: the copy
// is made for a write while a snapshot is live, and the original becomes
// the snapshot's (a hash's or sorted set's records stay writable in
// place afterwards; see Hash.cloneForSnapshot).
//
// The copy is extended (its generation is then e's, which the caller
// sets as it needs).
func (e *Entry) clone(forSnapshot bool) *Entry {
	var c *Entry
	switch {
	case e.typ == TypeString:
		c, _ = newEntry(e.Key(), int(e.vlen), true)
		*c = e.header(c)
		c.setStrCopy(e.Str())
	case e.typ == TypeHash && !e.boxed() && e.hash().tab() == nil:
		lp := e.hash().lpb()
		c, _ = newEntry(e.Key(), len(lp), true)
		*c = e.header(c)
		c.setPacked(lp)
	default:
		c, _ = newEntry(e.Key(), 0, true)
		*c = e.header(c)
		obj := e.Obj()
		if s, ok := obj.(snapshotCloner); ok && forSnapshot {
			c.setObj(s.cloneForSnapshot())
		} else {
			c.setObj(obj.Clone())
		}
	}
	return c
}

// snapshotCloner is a collection whose Clone marks the records it shares
// as held twice, which the copy a write makes while a snapshot is live
// must not do (Hash.cloneForSnapshot, ZSet.cloneForSnapshot).
type snapshotCloner interface{ cloneForSnapshot() Object }

// header is e's header for the entry c, made for the same key: c's
// value storage, e's metadata, and e's deadline and generation copied
// into c's entryExt when c has one (an extended copy of a compact entry
// gets compactGen). The copy is in no table and not queued for
// re-measuring: it gets both when it is stored (memory.go).
func (e *Entry) header(c *Entry) Entry {
	h := *e
	h.ref, h.vlen, h.vcap = c.ref, c.vlen, c.vcap
	h.flags = e.flags &^ (flagLive | flagDirty | flagPinned)
	if x := c.ext(); x != nil {
		x.expireAt, x.gen = e.ExpireAt(), e.gen()
	}
	return h
}

// shallow returns a copy of e for the same key that shares e's value,
// but for bytes in e's tail, which it copies into its own.
func (e *Entry) shallow() *Entry { return e.copyFor(e.Key()) }

// copyFor returns a copy of e for key: e's metadata, and e's value,
// shared, but for bytes in e's tail, which are copied (into the copy's
// tail when they fit).
//
// The copy of a compact entry is compact when its value still fits its
// tail with key.
func (e *Entry) copyFor(key string) *Entry {
	var c *Entry
	if !e.valueInTail() {
		c, _ = newEntry(key, 0, true)
		*c = e.header(c)
		c.ref, c.vlen, c.vcap = e.ref, e.vlen, e.vcap
		// A pin stays with the value: output not yet written refers
		// to it (RENAME of a key just read).
		c.flags |= e.flags & flagPinned
		return c
	}
	c, _ = newEntry(key, int(e.vlen), !e.compact() || !fitsTail(len(key), int(e.vlen)))
	*c = e.header(c)
	if e.typ == TypeString {
		c.setStrCopy(e.Str())
		return c
	}
	c.setPacked(e.hash().lpb())
	return c
}

// setPacked makes c's value a small hash holding a copy of the packed
// fields lp: in c's tail when they fit the room newEntry pointed ref at,
// else in an array of their own.
func (c *Entry) setPacked(lp []byte) {
	if c.ref != nil && c.inTail(c.ref) && int(c.vcap) >= len(lp) {
		c.vlen = uint32(copy(unsafe.Slice((*byte)(c.ref), c.vcap), lp))
		return
	}
	c.hash().setLP(append([]byte(nil), lp...))
}

// rekeyed returns e under key: e itself when it holds that key already,
// else a copy for key that takes e's value over (a detached entry from
// NewString or NewObject, or one Take removed from another key). e is
// not changed: a snapshot may still read it.
func (e *Entry) rekeyed(key string) *Entry {
	if e.Key() == key {
		return e
	}
	return e.copyFor(key)
}
