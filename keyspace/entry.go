package keyspace

import (
	"strconv"
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
)

var typeNames = [...]string{"none", "string", "list", "set", "zset", "hash"}

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

// Entry is one key's value and metadata. Entries are shared with live
// snapshots: code that changes an entry in place obtains it through
// DB.LookupWrite, which hands out a private copy when a snapshot may
// still read the original.
type Entry struct {
	str      []byte // value of a TypeString: its own array, or inl
	obj      Object // value of the other types
	expireAt int64  // Unix ms; 0 = no deadline
	gen      uint32 // keyspace generation in which this entry was made
	atime    uint32 // last access on the keyspace's LRU clock (lruUnitMs units, wrapping)
	mem      uint32 // counted cost in 8-byte units, see memory.go
	typ      Type
	strEnc   uint8 // how Redis encoded the string, when not derived from it
	freq     uint8 // LFU counter (OBJECT FREQ), see Keyspace.SetLFU
	flags    uint8 // flagLive, flagDirty (memory.go), flagPinned

	// inl holds a string value of up to inlineMax bytes (a counter, a
	// flag, a short token) in the entry itself: str then points here.
	// The entry fills Go's 80-byte size class either way, so the value
	// costs no allocation of its own, and reading it (INCR parses it)
	// touches no other cache line than the entry's.
	inl [inlineMax]byte
}

// inlineMax is the longest string value kept in the entry (Entry.inl):
// with it the struct is exactly 80 bytes, one of Go's size classes.
const inlineMax = 16

// flagPinned: output not yet written refers to str (DB.PinStr), which
// must therefore not change: a write lookup copies it first.
const flagPinned uint8 = 1 << 7

func (e *Entry) pinned() bool { return e.flags&flagPinned != 0 }

// inline reports whether the string value lives in the entry (inl).
func (e *Entry) inline() bool {
	return cap(e.str) > 0 && unsafe.SliceData(e.str) == &e.inl[0]
}

// setStrCopy makes the string value a copy of b: in the entry when it
// fits, else in an array of its own. The entry must be private.
func (e *Entry) setStrCopy(b []byte) {
	if len(b) <= inlineMax {
		e.str = append(e.inl[:0], b...)
		return
	}
	e.str = append([]byte(nil), b...)
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
func (e *Entry) Str() []byte { return e.str }

// Obj is a collection value.
func (e *Entry) Obj() Object { return e.obj }

// ExpireAt is the deadline in Unix ms, 0 when the key does not expire.
func (e *Entry) ExpireAt() int64 { return e.expireAt }

// SetInt replaces the string value of an entry obtained from LookupWrite
// with the decimal form of v (INCR and friends), in the entry itself when
// it fits.
func (e *Entry) SetInt(v int64) {
	if !e.inline() && cap(e.str) >= 20 && cap(e.str) <= 2*20+64 {
		e.str = strconv.AppendInt(e.str[:0], v, 10)
	} else {
		e.str = strconv.AppendInt(e.inl[:0], v, 10)
	}
	e.strEnc = strEncAuto
}

// SetStr replaces the string value of an entry obtained from
// LookupWrite. b is kept: the caller hands over ownership. OBJECT
// ENCODING then derives the encoding from the new value, as Redis does
// for a value it re-encodes (INCR and friends); call MarkRaw or
// MarkNoInt afterwards where Redis encodes otherwise.
func (e *Entry) SetStr(b []byte) {
	e.str = b
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
			if _, ok := redisconv.ParseInt(e.str); ok {
				return "int"
			}
		}
		if len(e.str) <= embstrLimit {
			return "embstr"
		}
		return "raw"
	default:
		if enc, ok := e.obj.(Encoder); ok {
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
	}
	return "raw"
}

// Refcount is what OBJECT REFCOUNT answers: INT_MAX for a small
// non-negative integer string when Redis would share it (sharedInts),
// 1 otherwise.
func (e *Entry) Refcount(sharedInts bool) int64 {
	if sharedInts && e.typ == TypeString && e.strEnc == strEncAuto {
		if n, ok := redisconv.ParseInt(e.str); ok && n >= 0 && n < sharedIntegers {
			return SharedRefcount
		}
	}
	return 1
}

func (e *Entry) clone() *Entry {
	c := *e
	// The copy is in no table and not queued for re-measuring: it gets
	// both when it is stored (memory.go).
	c.flags &^= flagLive | flagDirty | flagPinned
	if e.str != nil {
		c.setStrCopy(e.str)
	}
	if e.obj != nil {
		c.obj = e.obj.Clone()
	}
	return &c
}
