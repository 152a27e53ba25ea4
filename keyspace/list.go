package keyspace

import (
	"bytes"
	"encoding/binary"
	"slices"
)

// List is a list value, stored as Redis's quicklist is: a sequence of
// chunks, each packing elements into one buffer of at most
// listChunkBytes (a larger element has a chunk of its own), their bytes
// from the front and a 2-byte offset per element from the back, as a
// listpack node packs its entries. An element costs its bytes plus 2,
// against 24 for a slice header and an allocation of its own.
//
//   - Pushes and pops at both ends are O(1) amortized: a chunk grows at
//     one end only (the tail for a chunk made by a tail push, the head
//     for one made by a head push, which stores its elements in reverse),
//     and an element taken from the other end is only skipped.
//   - Access by index is O(log chunks): every chunk records the absolute
//     position of its first element, positions that only change for the
//     chunks after an insertion in the middle.
//   - Changes in the middle (LSET, LINSERT) rewrite one chunk, split in
//     halves when it overflows; LREM rebuilds the list.
//
// Every method that stores an element copies it. A slice returned by At,
// Pop or Each aliases the list's memory: it must not be modified, and it
// is valid only until the list next changes.
type List struct {
	cs   []*listChunk // the chunks are cs[c0:]; cs[:c0] is free room for prepending
	c0   int
	head int // absolute position of element 0
	n    int
}

// listChunkBytes bounds a chunk's buffer, elements and offsets: a chunk
// takes an element while its buffer stays within it, except that an
// empty chunk takes any element. Redis's nodes are 8 kB by default
// (list-max-listpack-size -2); 14 KiB is a size class of Go's allocator
// whose spans hold four buffers exactly, so that a chunk filled by
// streaming pushes wastes nothing. An 8 KiB buffer would take a span of
// its own, whose descriptor (about 160 bytes, outside the heap) would
// cost a 10-byte element a quarter of a byte more.
const listChunkBytes = 14 << 10

// A chunk of more than one element stays within listChunkBytes, so that
// its offsets fit 16 bits; a larger element is alone in its chunk.
const _ uint16 = listChunkBytes

// listChunk holds n physical elements: their bytes one after the other
// from the buffer's front, and from its back n+1 2-byte slots, the k-th
// from the end holding where element k starts, the last where the data
// ends (size; its low 16 bits for an element alone that is larger).
// Between the two is the room the next elements grow into.
type listChunk struct {
	buf   []byte
	size  int    // bytes of element data, buf[:size]
	start int    // absolute position of the chunk's first element
	n     uint16 // physical elements
	lo    uint16 // physical elements [lo, n) are live
	rev   bool   // the logical order is the physical order reversed
}

func (c *listChunk) count() int { return int(c.n - c.lo) }

// used is the bytes of the buffer the elements and their offsets take.
func (c *listChunk) used() int { return c.size + 2*int(c.n+1) }

// slot is slot k, 0 <= k <= n.
func (c *listChunk) slot(k int) int {
	i := len(c.buf) - 2*k - 2
	return int(binary.LittleEndian.Uint16(c.buf[i : i+2]))
}

func (c *listChunk) setSlot(k, off int) {
	i := len(c.buf) - 2*k - 2
	binary.LittleEndian.PutUint16(c.buf[i:i+2], uint16(off))
}

// off is where physical element k starts, 0 <= k <= n (n: the data's
// end, whatever its size).
func (c *listChunk) off(k int) int {
	if k == int(c.n) {
		return c.size
	}
	return c.slot(k)
}

// phys is physical element k, 0 <= k < n. Its two slots are read at
// once: slot k+1 is the lower address.
func (c *listChunk) phys(k int) []byte {
	i := len(c.buf) - 2*k - 4
	x := binary.LittleEndian.Uint32(c.buf[i : i+4])
	// A chunk of one element may exceed 16 bits: slot 1 holds the low
	// bits of its size, the only offset with more.
	s, e := int(x>>16), int(x&0xffff)|c.size&^0xffff
	return c.buf[s:e:e]
}

// at is the chunk's j-th element in list order.
func (c *listChunk) at(j int) []byte {
	if c.rev {
		j = c.count() - 1 - j
	}
	return c.phys(int(c.lo) + j)
}

// fits reports whether v may be added to the chunk.
func (c *listChunk) fits(v []byte) bool {
	return c.n == 0 || c.used()+len(v)+2 <= listChunkBytes
}

// add appends a copy of v at the chunk's growing end.
func (c *listChunk) add(v []byte) {
	if need := c.used() + len(v) + 2; need > len(c.buf) {
		c.grow(need)
	}
	c.put(v)
}

// put is add when the buffer has room.
func (c *listChunk) put(v []byte) {
	size := c.size + len(v)
	copy(c.buf[c.size:size], v)
	c.size = size
	c.n++
	c.setSlot(int(c.n), size)
}

// grow moves the chunk into a buffer of at least need bytes, doubling
// (up to listChunkBytes) so that pushes stay O(1) amortized. The buffer
// is its whole size class: the allocator would round it up anyway.
func (c *listChunk) grow(need int) {
	b := slices.Grow([]byte(nil), max(need, min(2*len(c.buf), listChunkBytes)))
	b = b[:cap(b)]
	offs := 2 * int(c.n+1)
	if c.buf == nil {
		clear(b[len(b)-offs:]) // slot 0: element 0 starts at 0
	} else {
		copy(b, c.buf[:c.size])
		copy(b[len(b)-offs:], c.buf[len(c.buf)-offs:])
	}
	c.buf = b
}

// dropLast removes the physical element at the growing end; its start
// is the new end of the data, in the slot that becomes the last.
func (c *listChunk) dropLast() {
	c.n--
	c.size = c.slot(int(c.n))
}

// seal compacts a chunk that stopped growing: the room left for growth
// and the skipped elements' bytes are released.
func (c *listChunk) seal() {
	if c.lo == 0 && len(c.buf)-c.used() <= c.used()/8 {
		return
	}
	*c = *c.copyLive()
}

// copyLive returns a copy of the chunk holding only its live elements,
// in a buffer of the exact size.
func (c *listChunk) copyLive() *listChunk {
	return c.splice(int(c.n), 0)
}

// splice returns a copy of the chunk's live elements, in a buffer of the
// exact size, with the del physical elements from q (lo <= q, q+del <=
// n) replaced by vs (in physical order). It returns nil when the result
// would not fit a chunk.
func (c *listChunk) splice(q, del int, vs ...[]byte) *listChunk {
	lo, n := int(c.lo), int(c.n)
	// The bytes [base, cut) stay, [cut, rest) go, vs come, [rest, size) stay.
	base, cut, rest := c.off(lo), c.off(q), c.off(q+del)
	out := &listChunk{start: c.start, rev: c.rev, n: uint16(n - lo - del + len(vs))}
	out.size = cut - base + c.size - rest
	for _, v := range vs {
		out.size += len(v)
	}
	if out.n > 1 && out.used() > listChunkBytes {
		return nil
	}
	out.buf = make([]byte, out.used())
	at := copy(out.buf, c.buf[base:cut])
	t := 0
	for k := lo; k < q; k++ {
		out.setSlot(t, c.slot(k)-base)
		t++
	}
	for _, v := range vs {
		out.setSlot(t, at)
		at += copy(out.buf[at:], v)
		t++
	}
	copy(out.buf[at:], c.buf[rest:c.size])
	for k := q + del; k <= n; k++ {
		out.setSlot(t, c.off(k)-rest+at)
		t++
	}
	return out
}

// NewList returns an empty list.
func NewList() *List { return &List{} }

// Type is TypeList.
func (l *List) Type() Type { return TypeList }

// Len is the number of elements.
func (l *List) Len() int { return l.n }

// Encoding is OBJECT ENCODING's answer: Redis 7.0 keeps every list in a
// quicklist, however small.
func (l *List) Encoding() string { return "quicklist" }

// Clone returns a deep copy, chunk by chunk, without the room and the
// skipped elements of the original's chunks.
func (l *List) Clone() Object {
	c := &List{head: l.head, n: l.n}
	if l.n == 0 {
		return c
	}
	c.cs = make([]*listChunk, 0, len(l.cs)-l.c0)
	for _, ch := range l.cs[l.c0:] {
		c.cs = append(c.cs, ch.copyLive())
	}
	return c
}

func (l *List) first() *listChunk {
	if l.n == 0 {
		return nil
	}
	return l.cs[l.c0]
}

func (l *List) tail() *listChunk {
	if l.n == 0 {
		return nil
	}
	return l.cs[len(l.cs)-1]
}

// Index converts a Redis index (negative counts from the tail) into a
// position, reporting false when it is out of range.
func (l *List) Index(idx int64) (int, bool) {
	if idx < 0 {
		idx += int64(l.n)
	}
	if idx < 0 || idx >= int64(l.n) {
		return 0, false
	}
	return int(idx), true
}

// locate finds position i (0 <= i < Len()): the index in cs of its chunk
// and its place in the chunk.
func (l *List) locate(i int) (k, j int) {
	p := l.head + i
	// The last chunk starting at or before p.
	lo, hi := l.c0, len(l.cs)-1
	for lo < hi {
		mid := int(uint(lo+hi+1) >> 1)
		if l.cs[mid].start <= p {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo, p - l.cs[lo].start
}

// At returns element i, 0 <= i < Len().
func (l *List) At(i int) []byte {
	k, j := l.locate(i)
	return l.cs[k].at(j)
}

// Each calls fn with the position and value of the elements from
// position from (0 <= from < Len()) towards the tail, or towards the head
// when reverse is set, until fn returns false or the list ends. fn must
// not change the list.
func (l *List) Each(from int, reverse bool, fn func(i int, v []byte) bool) {
	if from < 0 || from >= l.n {
		return
	}
	k, j := l.locate(from)
	step := 1
	if reverse {
		step = -1
	}
	for i := from; k >= l.c0 && k < len(l.cs); k += step {
		c := l.cs[k]
		// Elements j onwards (m of them), by physical index p stepping d.
		m := c.count() - j
		if reverse {
			if j < 0 {
				j = c.count() - 1
			}
			m = j + 1
		}
		p, d := int(c.lo)+j, step
		if c.rev {
			p, d = int(c.n)-1-j, -step
		}
		for ; m > 0; m-- {
			if !fn(i, c.phys(p)) {
				return
			}
			i += step
			p += d
		}
		j = 0
		if reverse {
			j = -1 // the next chunk's last element
		}
	}
}

// prependChunk makes c the first chunk.
func (l *List) prependChunk(c *listChunk) {
	if l.c0 == 0 {
		live := len(l.cs)
		room := live + 1
		cs := make([]*listChunk, room+live)
		copy(cs[room:], l.cs)
		l.cs, l.c0 = cs, room
	}
	l.c0--
	l.cs[l.c0] = c
}

// appendChunk makes c the last chunk. The room freed at the front by
// removed chunks is reclaimed when the slice must grow, so that a queue
// (pushes at the tail, pops at the head) does not leak slots.
func (l *List) appendChunk(c *listChunk) {
	if len(l.cs) == cap(l.cs) && l.c0 > 0 {
		live := len(l.cs) - l.c0
		cs := make([]*listChunk, live, 2*live+2)
		copy(cs, l.cs[l.c0:])
		l.cs, l.c0 = cs, 0
	}
	l.cs = append(l.cs, c)
}

// newEnd adds an empty chunk at the head (front) or the tail for v,
// which end, the chunk there (nil when none), cannot take; end is sealed.
// When end grew the same way until it was full, pushes are streaming
// in: the new chunk starts with end's size, so that it fills without
// regrowing.
func (l *List) newEnd(front bool, end *listChunk, v []byte) *listChunk {
	c := &listChunk{rev: front, start: l.head + l.n}
	if front {
		c.start = l.head
	}
	if end != nil {
		if end.rev == front && end.lo == 0 && end.n > 1 {
			c.grow(max(min(end.used(), listChunkBytes), c.used()+len(v)+2))
		}
		end.seal()
	}
	if front {
		l.prependChunk(c)
	} else {
		l.appendChunk(c)
	}
	return c
}

// Push adds a copy of v at the head (front) or the tail.
func (l *List) Push(front bool, v []byte) {
	c := l.tail()
	if front {
		c = l.first()
	}
	if c == nil || c.rev != front || !c.fits(v) {
		c = l.newEnd(front, c, v)
	}
	// c.add(v), spelled out: add is too large to be inlined.
	if need := c.used() + len(v) + 2; need > len(c.buf) {
		c.grow(need)
	}
	c.put(v)
	if front {
		c.start--
		l.head--
	}
	l.n++
}

// PushCopy adds copies of vals one after the other at the head (each
// becoming the new first element, as LPUSH does) or the tail.
func (l *List) PushCopy(front bool, vals [][]byte) {
	for _, v := range vals {
		l.Push(front, v)
	}
}

// Pop removes and returns the first (front) or last element; nil when
// the list is empty.
func (l *List) Pop(front bool) []byte {
	if l.n == 0 {
		return nil
	}
	var v []byte
	if front {
		c := l.cs[l.c0]
		if c.rev {
			v = c.phys(int(c.n) - 1)
			c.dropLast()
		} else {
			v = c.phys(int(c.lo))
			c.lo++
		}
		c.start++
		l.head++
		if c.count() == 0 {
			l.cs[l.c0] = nil
			l.c0++
		}
	} else {
		last := len(l.cs) - 1
		c := l.cs[last]
		if c.rev {
			v = c.phys(int(c.lo))
			c.lo++
		} else {
			v = c.phys(int(c.n) - 1)
			c.dropLast()
		}
		if c.count() == 0 {
			l.cs[last] = nil
			l.cs = l.cs[:last]
		}
	}
	l.n--
	if l.n == 0 {
		*l = List{}
	}
	return v
}

// buildChunks packs copies of n elements, element x being elem(x), into
// chunks, the first holding position start, all growing in the given
// direction, each in a buffer of the exact size.
func buildChunks(n int, elem func(x int) []byte, start int, rev bool) []*listChunk {
	var out []*listChunk
	for from := 0; from < n; {
		to, size := from+1, len(elem(from))
		for to < n && size+len(elem(to))+2*(to-from+2) <= listChunkBytes {
			size += len(elem(to))
			to++
		}
		c := &listChunk{start: start + from, rev: rev, buf: make([]byte, size+2*(to-from+1))}
		if rev {
			for x := to - 1; x >= from; x-- {
				c.add(elem(x))
			}
		} else {
			for x := from; x < to; x++ {
				c.add(elem(x))
			}
		}
		out = append(out, c)
		from = to
	}
	return out
}

// replaceChunk puts chunks in place of cs[k].
func (l *List) replaceChunk(k int, chunks []*listChunk) {
	if len(chunks) == 1 {
		l.cs[k] = chunks[0]
		return
	}
	cs := make([]*listChunk, 0, len(l.cs)-l.c0+len(chunks)-1)
	cs = append(cs, l.cs[l.c0:k]...)
	cs = append(cs, chunks...)
	cs = append(cs, l.cs[k+1:]...)
	l.cs, l.c0 = cs, 0
}

// physIndex is the physical index of the chunk's j-th element in list
// order, and where an element inserted before it goes.
func (c *listChunk) physIndex(j int) (at, before int) {
	if c.rev {
		return int(c.n) - 1 - j, int(c.n) - j
	}
	return int(c.lo) + j, int(c.lo) + j
}

// rebuild puts in place of chunk k the n elements elem(0..n-1), in two
// halves, so that inserts into a full chunk leave it two chunks of half
// its size rather than a full one and a trail of single elements.
func (l *List) rebuild(k, n int, elem func(x int) []byte) {
	c := l.cs[k]
	h := n / 2
	chunks := buildChunks(h, elem, c.start, c.rev)
	chunks = append(chunks, buildChunks(n-h, func(x int) []byte { return elem(h + x) }, c.start+h, c.rev)...)
	l.replaceChunk(k, chunks)
}

// Set replaces element i, 0 <= i < Len(), with a copy of v.
func (l *List) Set(i int, v []byte) {
	k, j := l.locate(i)
	c := l.cs[k]
	p, _ := c.physIndex(j)
	if out := c.splice(p, 1, v); out != nil {
		l.cs[k] = out
		return
	}
	l.rebuild(k, c.count(), func(x int) []byte {
		if x == j {
			return v
		}
		return c.at(x)
	})
}

// Insert puts a copy of v before element i (0 <= i <= Len(); Len()
// appends).
func (l *List) Insert(i int, v []byte) {
	if i == 0 || i == l.n {
		l.Push(i == 0, v)
		return
	}
	k, j := l.locate(i)
	c := l.cs[k]
	for _, after := range l.cs[k+1:] {
		after.start++
	}
	l.n++
	_, q := c.physIndex(j)
	if out := c.splice(q, 0, v); out != nil {
		l.cs[k] = out
		return
	}
	l.rebuild(k, c.count()+1, func(x int) []byte {
		switch {
		case x < j:
			return c.at(x)
		case x == j:
			return v
		}
		return c.at(x - 1)
	})
}

// Trim keeps elements [start, end] (inclusive, 0 <= start <= end < Len())
// and drops the others; start > end empties the list.
func (l *List) Trim(start, end int) {
	if start > end {
		*l = List{}
		return
	}
	back := l.n - 1 - end
	// Whole chunks go at once; the elements left over one at a time.
	for start > 0 && l.cs[l.c0].count() <= start {
		c := l.cs[l.c0]
		start -= c.count()
		l.head += c.count()
		l.n -= c.count()
		l.cs[l.c0] = nil
		l.c0++
	}
	for ; start > 0; start-- {
		l.Pop(true)
	}
	for back > 0 && l.cs[len(l.cs)-1].count() <= back {
		last := len(l.cs) - 1
		back -= l.cs[last].count()
		l.n -= l.cs[last].count()
		l.cs[last] = nil
		l.cs = l.cs[:last]
	}
	for ; back > 0; back-- {
		l.Pop(false)
	}
}

// Remove deletes elements equal to v, at most limit of them (0: all),
// scanning from the head, or from the tail when fromTail is set, and
// returns how many it removed (LREM). The list is rebuilt, compacted,
// when anything is removed.
func (l *List) Remove(v []byte, limit int64, fromTail bool) int64 {
	if l.n == 0 || l.Find(v) < 0 {
		return 0
	}
	var removed int64
	out := &List{}
	from := 0
	if fromTail {
		from = l.n - 1
	}
	l.Each(from, fromTail, func(_ int, e []byte) bool {
		if (limit == 0 || removed < limit) && bytes.Equal(e, v) {
			removed++
			return true
		}
		out.Push(fromTail, e)
		return true
	})
	for _, c := range out.cs[out.c0:] {
		c.seal()
	}
	*l = *out
	return removed
}

// Find returns the position of the first element equal to v, or -1.
func (l *List) Find(v []byte) int {
	pos := -1
	l.Each(0, false, func(i int, e []byte) bool {
		if bytes.Equal(e, v) {
			pos = i
			return false
		}
		return true
	})
	return pos
}
