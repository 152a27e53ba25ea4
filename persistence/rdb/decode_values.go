package rdb

import (
	"fmt"
	"math"
	"strconv"

	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/listpack"
)

// Values are rebuilt as Redis 7.0's rdbLoadObject rebuilds them: the
// same conversions to the large encodings under the LoadOptions
// thresholds, the same refusal of duplicates, NaN scores and bad
// containers, and values without elements reported as errEmptyKey.

// readObject reads a value of type t (after its key).
func (d *decoder) readObject(t byte) (keyspace.Object, []byte, error) {
	switch t {
	case typeString:
		v, err := d.readString(nil)
		if v == nil {
			v = []byte{}
		}
		return nil, v, err
	case typeList:
		o, err := d.readLinkedList()
		return o, nil, err
	case typeListZiplist, typeListQuicklist, typeListQuicklist2:
		o, err := d.readPackedList(t)
		return o, nil, err
	case typeSet:
		o, err := d.readSet()
		return o, nil, err
	case typeSetIntset:
		o, err := d.readIntset()
		return o, nil, err
	case typeSetListpack:
		o, err := d.readSetListpack()
		return o, nil, err
	case typeZSet, typeZSet2:
		o, err := d.readZSet(t == typeZSet2)
		return o, nil, err
	case typeZSetZiplist, typeZSetListpack:
		o, err := d.readPackedZSet(t)
		return o, nil, err
	case typeHash:
		o, err := d.readHash()
		return o, nil, err
	case typeHashZipmap, typeHashZiplist, typeHashListpack:
		o, err := d.readPackedHash(t)
		return o, nil, err
	case typeHashMetadata, typeHashMetadataPreGA:
		o, err := d.readHashMetadata(t)
		return o, nil, err
	case typeHashListpackEx, typeHashListpackExPreGA:
		o, err := d.readHashListpackEx(t)
		return o, nil, err
	case typeModule, typeModule2:
		return nil, nil, fmt.Errorf("unsupported type %d (module values need the module that wrote them; zredis loads no modules)", t)
	case typeStreamListpacks, typeStreamListpacks2, typeStreamListpacks3:
		o, err := d.readStream(t)
		return o, nil, err
	}
	return nil, nil, fmt.Errorf("unsupported type %d", t)
}

func (d *decoder) readLinkedList() (keyspace.Object, error) {
	n, err := d.readNonEmptyCount()
	if err != nil {
		return nil, err
	}
	l := keyspace.NewList()
	for ; n > 0; n-- {
		if d.a, err = d.readString(d.a[:0]); err != nil {
			return nil, err
		}
		l.Push(false, d.a)
	}
	return l, nil
}

// pushEntry appends a listpack or ziplist element to l.
func (d *decoder) pushEntry(l *keyspace.List, e listpack.Entry) {
	if e.IsInt {
		d.b = strconv.AppendInt(d.b[:0], e.Int, 10)
		l.Push(false, d.b)
		return
	}
	l.Push(false, e.Str)
}

func (d *decoder) readPackedList(t byte) (keyspace.Object, error) {
	l := keyspace.NewList()
	push := func(e listpack.Entry) error {
		d.pushEntry(l, e)
		return nil
	}
	if t == typeListZiplist {
		blob, err := d.readBlob()
		if err != nil {
			return nil, err
		}
		if _, err := zlEach(blob, push); err != nil {
			return nil, err
		}
		if l.Len() == 0 {
			return nil, errEmptyKey
		}
		return l, nil
	}
	nodes, err := d.readNonEmptyCount()
	if err != nil {
		return nil, err
	}
	for ; nodes > 0; nodes-- {
		container := uint64(containerPacked)
		if t == typeListQuicklist2 {
			if container, err = d.readCount(); err != nil {
				return nil, err
			}
			if container != containerPacked && container != containerPlain {
				return nil, corrupt("Quicklist integrity check failed.")
			}
		}
		blob, err := d.readBlob()
		if err != nil {
			return nil, err
		}
		if len(blob) == 0 {
			return nil, corrupt("empty quicklist node")
		}
		switch {
		case container == containerPlain:
			l.Push(false, blob)
		case t == typeListQuicklist2:
			_, err = listpack.Each(blob, push)
		default:
			_, err = zlEach(blob, push)
		}
		if err != nil {
			return nil, err
		}
	}
	if l.Len() == 0 {
		return nil, errEmptyKey
	}
	return l, nil
}

func (d *decoder) readSet() (keyspace.Object, error) {
	n, err := d.readNonEmptyCount()
	if err != nil {
		return nil, err
	}
	maxIntset := int(min(d.opt.SetMaxIntsetEntries, 1<<30))
	s := keyspace.NewSet()
	if n > uint64(maxIntset) {
		// Too many members for an intset: a hashtable from the start.
		s = keyspace.NewSetFor([]byte("-"))
	}
	for ; n > 0; n-- {
		if d.a, err = d.readString(d.a[:0]); err != nil {
			return nil, err
		}
		if !s.Add(d.a, maxIntset) {
			return nil, corrupt("Duplicate set members detected")
		}
	}
	return s, nil
}

func (d *decoder) readIntset() (keyspace.Object, error) {
	blob, err := d.readBlob()
	if err != nil {
		return nil, err
	}
	vs, err := intsetDecode(blob)
	if err != nil {
		return nil, err
	}
	maxIntset := int(min(d.opt.SetMaxIntsetEntries, 1<<30))
	s := keyspace.NewSet()
	for _, v := range vs {
		s.AddInt(v, maxIntset)
	}
	return s, nil
}

// readSetListpack reads Redis 7.2's SET_LISTPACK. Sets here have 7.0's
// encodings, so the members go into an intset when they all are integers
// within set-max-intset-entries, else into a hashtable (what 7.0 builds
// from SADDs of the same members). A duplicate member fails the listpack
// check, as 7.2's deep sanitization has it.
func (d *decoder) readSetListpack() (keyspace.Object, error) {
	blob, err := d.readBlob()
	if err != nil {
		return nil, err
	}
	n, err := listpack.Each(blob, nil)
	if err != nil {
		return nil, corrupt("Set listpack integrity check failed.")
	}
	if n == 0 {
		return nil, errEmptyKey
	}
	maxIntset := int(min(d.opt.SetMaxIntsetEntries, 1<<30))
	s := keyspace.NewSet()
	if n > maxIntset {
		s = keyspace.NewSetFor([]byte("-"))
	}
	_, err = listpack.Each(blob, func(e listpack.Entry) error {
		d.a = e.AppendTo(d.a[:0])
		if !s.Add(d.a, maxIntset) {
			return corrupt("Set listpack integrity check failed.")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (d *decoder) readZSet(binary bool) (keyspace.Object, error) {
	n, err := d.readNonEmptyCount()
	if err != nil {
		return nil, err
	}
	z := keyspace.NewZSet()
	z.MarkBig()
	maxLen, total := 0, 0
	for ; n > 0; n-- {
		if d.a, err = d.readString(d.a[:0]); err != nil {
			return nil, err
		}
		var score float64
		if binary {
			score, err = d.readBinaryDouble()
		} else {
			score, err = d.readTextDouble()
		}
		if err != nil {
			return nil, err
		}
		if math.IsNaN(score) {
			return nil, corrupt("Zset with NAN score detected")
		}
		maxLen = max(maxLen, len(d.a))
		total += len(d.a)
		if !z.Set(d.a, score, false) {
			return nil, corrupt("Duplicate zset fields detected")
		}
	}
	// Converted after loading, as Redis does, since the file holds the
	// members in no particular order.
	if int64(z.Len()) <= d.opt.ZSetMaxListpackEntries && int64(maxLen) <= d.opt.ZSetMaxListpackValue && total < 1<<30 {
		z.Fit(int(d.opt.ZSetMaxListpackEntries), int(d.opt.ZSetMaxListpackValue))
	}
	return z, nil
}

// readPairs reads a ziplist or listpack blob of field/value pairs,
// validates it, and returns it with its element count.
func (d *decoder) readPairs(t byte) ([]byte, func([]byte, func(listpack.Entry) error) (int, error), int, error) {
	blob, err := d.readBlob()
	if err != nil {
		return nil, nil, 0, err
	}
	each := listpack.Each
	if t == typeZSetZiplist || t == typeHashZiplist {
		each = zlEach
	}
	n, err := each(blob, nil)
	if err != nil {
		return nil, nil, 0, err
	}
	if n%2 != 0 {
		return nil, nil, 0, corrupt("odd number of elements in a field/value encoding")
	}
	return blob, each, n / 2, nil
}

func (d *decoder) readPackedZSet(t byte) (keyspace.Object, error) {
	blob, each, pairs, err := d.readPairs(t)
	if err != nil {
		return nil, err
	}
	if pairs == 0 {
		return nil, errEmptyKey
	}
	z := keyspace.NewZSet()
	if int64(pairs) > d.opt.ZSetMaxListpackEntries {
		z.MarkBig()
	}
	odd := false
	_, err = each(blob, func(e listpack.Entry) error {
		odd = !odd
		if odd {
			d.a = e.AppendTo(d.a[:0])
			return nil
		}
		score := float64(e.Int)
		if !e.IsInt {
			// zzlStrtod: at most 127 characters are parsed.
			s := e.Str[:min(len(e.Str), 127)]
			v, err := strconv.ParseFloat(string(s), 64)
			if err != nil || math.IsNaN(v) {
				return corrupt("invalid sorted set score %q", s)
			}
			score = v
		}
		if !z.Set(d.a, score, false) {
			return corrupt("Duplicate zset fields detected")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return z, nil
}

// noLimits keeps a hash in its small form whatever it holds.
var noLimits = keyspace.HashLimits{MaxEntries: math.MaxInt64, MaxValue: math.MaxInt64}

// toTable converts h to the hashtable encoding.
func toTable(h *keyspace.Hash) {
	h.Convert(keyspace.HashLimits{MaxValue: -1}, nil)
}

// newHash is an empty hash for n fields, a hashtable from the start when
// they are too many for the small form, and the small form's limits.
func (d *decoder) newHash(n uint64) (*keyspace.Hash, keyspace.HashLimits) {
	h := keyspace.NewHash()
	if n > uint64(d.opt.HashMaxListpackEntries) {
		toTable(h)
	}
	return h, keyspace.HashLimits{MaxEntries: d.opt.HashMaxListpackEntries, MaxValue: d.opt.HashMaxListpackValue}
}

func (d *decoder) readHash() (keyspace.Object, error) {
	n, err := d.readNonEmptyCount()
	if err != nil {
		return nil, err
	}
	h, lim := d.newHash(n)
	for ; n > 0; n-- {
		if d.a, err = d.readString(d.a[:0]); err != nil {
			return nil, err
		}
		if d.b, err = d.readString(d.b[:0]); err != nil {
			return nil, err
		}
		if !h.Set(d.a, d.b, lim) {
			return nil, corrupt("Duplicate hash fields detected")
		}
	}
	return h, nil
}

func (d *decoder) readPackedHash(t byte) (keyspace.Object, error) {
	h := keyspace.NewHash()
	maxLen := 0
	set := func(f, v []byte) error {
		maxLen = max(maxLen, len(f), len(v))
		if !h.Set(f, v, noLimits) {
			return corrupt("Duplicate hash fields detected")
		}
		return nil
	}
	if t == typeHashZipmap {
		blob, err := d.readBlob()
		if err != nil {
			return nil, err
		}
		// Count first so that a large zipmap is built as a hashtable.
		n, err := zipmapEach(blob, func(f, v []byte) error { return nil })
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, errEmptyKey
		}
		if int64(n) > d.opt.HashMaxListpackEntries {
			toTable(h)
		}
		if _, err := zipmapEach(blob, set); err != nil {
			return nil, err
		}
		if int64(maxLen) > d.opt.HashMaxListpackValue {
			toTable(h)
		}
		return h, nil
	}
	blob, each, pairs, err := d.readPairs(t)
	if err != nil {
		return nil, err
	}
	if pairs == 0 {
		return nil, errEmptyKey
	}
	if int64(pairs) > d.opt.HashMaxListpackEntries {
		toTable(h)
	}
	odd := false
	_, err = each(blob, func(e listpack.Entry) error {
		odd = !odd
		if odd {
			d.a = e.AppendTo(d.a[:0])
			return nil
		}
		d.b = e.AppendTo(d.b[:0])
		return set(d.a, d.b)
	})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// readBlob reads a string into the decoder's blob scratch buffer (a
// listpack, ziplist, intset or zipmap, parsed before anything is kept).
func (d *decoder) readBlob() ([]byte, error) {
	var err error
	d.blob, err = d.readString(d.blob[:0])
	return d.blob, err
}

// readNonEmptyCount reads a collection's element count: zero is an empty
// key, which Redis never writes (errEmptyKey).
func (d *decoder) readNonEmptyCount() (uint64, error) {
	n, err := d.readCount()
	if err == nil && n == 0 {
		err = errEmptyKey
	}
	return n, err
}
