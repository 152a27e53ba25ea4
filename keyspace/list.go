package keyspace

import (
	"bytes"
	"encoding/binary"
	"slices"
)

// List is a list value, stored as Redis's quicklist is: a sequence of
// chunks, each packing elements into one buffer of at most
// listChunkBytes (a larger element has a chunk of its own), their bytes
// from the front and an index of where each starts from the back, as a
// listpack node packs its entries. An element costs its bytes plus 1⅛
// in a chunk whose elements are all at most 255 bytes, plus 2 in a chunk
// that holds a longer one, against 24 for a slice header and an
// allocation of its own.
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

// listChunkBytes bounds a chunk's buffer, elements and index: a chunk
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

// narrowMax is the largest element a narrow chunk holds: its index
// keeps an element's length in one byte.
const narrowMax = 255

// listChunk holds n physical elements: their bytes one after the other
// from the buffer's front and, from its back, the index that says where
// each starts. Between the two is the room the next elements grow into.
// The index takes one of two forms:
//
//   - narrow, when every element is at most narrowMax bytes: a length
//     byte per element, element k's at 1+k+2(k/16) bytes from the end,
//     and before each 16th element's (k = 16g, g > 0) a 2-byte
//     checkpoint, where that element starts, 18g bytes from the end.
//     Element k starts at its group's checkpoint (0 for the first group)
//     plus the lengths of the elements before it in the group: at most
//     15 additions for 1⅛ bytes an element. A longer element widens the
//     chunk.
//   - wide: n+1 2-byte slots, the k-th from the end holding where
//     element k starts, the last where the data ends (size; its low 16
//     bits for an element alone that is larger).
type listChunk struct {
	buf    []byte
	size   int    // bytes of element data, buf[:size]
	start  int    // absolute position of the chunk's first live element
	n      uint16 // physical elements
	lo     uint16 // physical elements [lo, n) are live
	loOff  uint16 // where element lo starts (a chunk with lo > 0 holds two elements or more)
	rev    bool   // the logical order is the physical order reversed
	narrow bool   // the index is narrow
}

func (c *listChunk) count() int { return int(c.n - c.lo) }

// indexBytes is the size of the index of n elements.
func indexBytes(narrow bool, n int) int {
	switch {
	case !narrow:
		return 2 * (n + 1)
	case n == 0:
		return 0
	}
	return n + 2*((n-1)>>4)
}

// used is the bytes of the buffer the elements and their index take.
func (c *listChunk) used() int { return c.size + indexBytes(c.narrow, int(c.n)) }

// widens reports whether adding v makes the chunk wide.
func (c *listChunk) widens(v []byte) bool { return c.narrow && len(v) > narrowMax }

// usedWith is used once v is added.
func (c *listChunk) usedWith(v []byte) int {
	return c.size + len(v) + indexBytes(c.narrow && len(v) <= narrowMax, int(c.n)+1)
}

// slot is slot k of a wide index, 0 <= k <= n.
func (c *listChunk) slot(k int) int {
	i := len(c.buf) - 2*k - 2
	return int(binary.LittleEndian.Uint16(c.buf[i : i+2]))
}

func (c *listChunk) setSlot(k, off int) {
	i := len(c.buf) - 2*k - 2
	binary.LittleEndian.PutUint16(c.buf[i:i+2], uint16(off))
}

// length is the length of element k of a narrow chunk, 0 <= k < n.
func (c *listChunk) length(k int) int { return int(c.buf[len(c.buf)-1-k-2*(k>>4)]) }

// off is where physical element k starts, 0 <= k <= n (n: the data's
// end, whatever its size).
func (c *listChunk) off(k int) int {
	switch {
	case k == int(c.n):
		return c.size
	case k == int(c.lo):
		return int(c.loOff)
	case !c.narrow:
		return c.slot(k)
	}
	// The group's lengths run down from e, its checkpoint sits at e.
	e, s := len(c.buf)-18*(k>>4), 0
	if k >= 16 {
		s = int(binary.LittleEndian.Uint16(c.buf[e : e+2]))
	}
	m := k & 15 // the lengths to add, buf[e-m:e]
	if e < 16 {
		for i := e - m; i < e; i++ {
			s += int(c.buf[i])
		}
		return s
	}
	// Eight at a time: the m bytes below e, the top ones of hi and lo.
	hi := binary.LittleEndian.Uint64(c.buf[e-8 : e])
	lo := binary.LittleEndian.Uint64(c.buf[e-16 : e-8])
	if m <= 8 {
		return s + byteSum(hi>>(64-8*m))
	}
	return s + byteSum(hi) + byteSum(lo>>(64-8*(m-8)))
}

// byteSum adds up the eight bytes of x.
func byteSum(x uint64) int {
	const bytes = 0x00ff00ff00ff00ff
	x = x&bytes + x>>8&bytes // four 16-bit sums, each at most 510
	return int(x * 0x0001000100010001 >> 48)
}

// phys is physical element k, 0 <= k < n.
func (c *listChunk) phys(k int) []byte {
	if c.narrow {
		// The last element, which pops take, ends the data.
		s, e := 0, c.size
		if k == int(c.n)-1 {
			s = e - c.length(k)
		} else {
			s = c.off(k)
			e = s + c.length(k)
		}
		return c.buf[s:e:e]
	}
	// Its two slots are read at once: slot k+1 is the lower address.
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
	return c.n == 0 || c.usedWith(v) <= listChunkBytes
}

// put appends a copy of v at the chunk's growing end, in room the
// buffer has; a narrow chunk's v is at most narrowMax bytes.
func (c *listChunk) put(v []byte) {
	copy(c.buf[c.size:c.size+len(v)], v)
	c.note(len(v))
}

// note indexes the l bytes after the data, already in place, as a new
// element at the growing end.
func (c *listChunk) note(l int) {
	if c.narrow {
		setLength(c.buf, int(c.n), c.size, l)
	} else {
		c.setSlot(int(c.n)+1, c.size+l)
	}
	c.size += l
	c.n++
}

// setLength writes element k's entry in the narrow index at the end of
// buf: its length l, and for each 16th element where it starts.
func setLength(buf []byte, k, start, l int) {
	e := len(buf) - 18*(k>>4) // the group's checkpoint, its lengths below
	if k&15 == 0 && k > 0 {
		binary.LittleEndian.PutUint16(buf[e:e+2], uint16(start))
	}
	buf[e-1-(k&15)] = byte(l)
}

// grow moves the chunk into a buffer of at least need bytes, doubling
// (up to listChunkBytes) so that pushes stay O(1) amortized. The buffer
// is its whole size class: the allocator would round it up anyway.
func (c *listChunk) grow(need int) {
	b := slices.Grow([]byte(nil), max(need, min(2*len(c.buf), listChunkBytes)))
	b = b[:cap(b)]
	index := c.used() - c.size
	if c.buf == nil {
		clear(b[len(b)-index:]) // a wide slot 0: element 0 starts at 0
	} else {
		copy(b, c.buf[:c.size])
		copy(b[len(b)-index:], c.buf[len(c.buf)-index:])
	}
	c.buf = b
}

// widen gives the chunk a wide index, in a buffer of the exact size
// (the push that follows grows it), without its skipped elements.
func (c *listChunk) widen() {
	w := &listChunk{start: c.start, rev: c.rev}
	w.buf = make([]byte, c.size-c.off(int(c.lo))+indexBytes(false, c.count()))
	for k := int(c.lo); k < int(c.n); k++ {
		w.put(c.phys(k))
	}
	*c = *w
}

// dropLast removes the physical element at the growing end.
func (c *listChunk) dropLast() {
	c.n--
	if c.narrow {
		c.size -= c.length(int(c.n))
	} else {
		// Its start is the new end of the data, in the slot that
		// becomes the last.
		c.size = c.slot(int(c.n))
	}
}

// popLo skips the live element at the chunk's non-growing end and
// returns it.
func (c *listChunk) popLo() []byte {
	var v []byte
	if k := int(c.lo); c.narrow {
		s := int(c.loOff)
		e := s + c.length(k)
		v = c.buf[s:e:e]
	} else {
		v = c.phys(k)
	}
	c.lo++
	c.loOff += uint16(len(v))
	return v
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
	if c.lo == 0 {
		// Data and index as they are.
		out := *c
		index := c.used() - c.size
		out.buf = make([]byte, c.size+index)
		copy(out.buf, c.buf[:c.size])
		copy(out.buf[c.size:], c.buf[len(c.buf)-index:])
		return &out
	}
	return c.splice(int(c.n), 0)
}

// splice returns a copy of the chunk's live elements, in a buffer of the
// exact size, with the del physical elements from q (lo <= q, q+del <=
// n) replaced by vs (in physical order). The copy's index is narrow when
// its elements allow. It returns nil when the result would not fit a
// chunk.
func (c *listChunk) splice(q, del int, vs ...[]byte) *listChunk {
	lo, n := int(c.lo), int(c.n)
	count := n - lo - del + len(vs)
	size := c.size - c.off(lo) - (c.off(q+del) - c.off(q))
	narrow := true
	for _, v := range vs {
		size += len(v)
		narrow = narrow && len(v) <= narrowMax
	}
	for k := lo; k < n && narrow && !c.narrow; k++ {
		if k < q || k >= q+del {
			narrow = len(c.phys(k)) <= narrowMax
		}
	}
	out := &listChunk{start: c.start, rev: c.rev, narrow: narrow}
	if used := size + indexBytes(narrow, count); count <= 1 || used <= listChunkBytes {
		out.buf = make([]byte, used)
	} else {
		return nil
	}
	// The bytes [base, cut) stay, [cut, rest) go, vs come, [rest, size)
	// stay; then the index, element by element.
	base, cut, rest := c.off(lo), c.off(q), c.off(q+del)
	at := copy(out.buf, c.buf[base:cut])
	for _, v := range vs {
		at += copy(out.buf[at:], v)
	}
	copy(out.buf[at:], c.buf[rest:c.size])
	out.noteFrom(c, lo, q)
	for _, v := range vs {
		out.note(len(v))
	}
	out.noteFrom(c, q+del, n)
	return out
}

// noteFrom is note for each of c's physical elements [from, to), whose
// bytes follow the data.
func (c *listChunk) noteFrom(src *listChunk, from, to int) {
	for k := from; k < to; k++ {
		var l int
		switch {
		case src.narrow:
			l = src.length(k)
		case k+1 == int(src.n):
			l = src.size - src.slot(k)
		default:
			l = src.slot(k+1) - src.slot(k)
		}
		// note(l), spelled out: note is too large to be inlined.
		if c.narrow {
			setLength(c.buf, int(c.n), c.size, l)
		} else {
			c.setSlot(int(c.n)+1, c.size+l)
		}
		c.size += l
		c.n++
	}
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
		if !c.each(p, d, m, i, step, fn) {
			return
		}
		i += m * step
		j = 0
		if reverse {
			j = -1 // the next chunk's last element
		}
	}
}

// each is Each's walk over m elements of the chunk from physical element
// p stepping d, their positions from i stepping step. It reports whether
// fn asked for more. In a narrow chunk the elements' bounds follow from
// their lengths: one offset is looked up for the walk.
func (c *listChunk) each(p, d, m, i, step int, fn func(i int, v []byte) bool) bool {
	if !c.narrow {
		for ; m > 0; m-- {
			if !fn(i, c.phys(p)) {
				return false
			}
			i, p = i+step, p+d
		}
		return true
	}
	if d > 0 {
		s := c.off(p)
		for ; m > 0; m-- {
			e := s + c.length(p)
			if !fn(i, c.buf[s:e:e]) {
				return false
			}
			s, i, p = e, i+step, p+1
		}
		return true
	}
	e := c.off(p + 1)
	for ; m > 0; m-- {
		s := e - c.length(p)
		if !fn(i, c.buf[s:e:e]) {
			return false
		}
		e, i, p = s, i+step, p-1
	}
	return true
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
	c := &listChunk{rev: front, start: l.head + l.n, narrow: len(v) <= narrowMax}
	if front {
		c.start = l.head
	}
	if end != nil {
		if end.rev == front && end.lo == 0 && end.n > 1 {
			c.grow(max(min(end.used(), listChunkBytes), c.usedWith(v)))
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
	if c.widens(v) {
		c.widen()
	}
	if need := c.usedWith(v); need > len(c.buf) {
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
			v = c.popLo()
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
			v = c.popLo()
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
// direction, each in a buffer of the exact size, its index narrow when
// its elements allow.
func buildChunks(n int, elem func(x int) []byte, start int, rev bool) []*listChunk {
	var out []*listChunk
	for from := 0; from < n; {
		to, size := from+1, len(elem(from))
		narrow := size <= narrowMax
		for ; to < n; to++ {
			v := elem(to)
			nw := narrow && len(v) <= narrowMax
			if size+len(v)+indexBytes(nw, to-from+1) > listChunkBytes {
				break
			}
			size += len(v)
			narrow = nw
		}
		c := &listChunk{start: start + from, rev: rev, narrow: narrow}
		c.buf = make([]byte, size+indexBytes(narrow, to-from))
		if rev {
			for x := to - 1; x >= from; x-- {
				c.put(elem(x))
			}
		} else {
			for x := from; x < to; x++ {
				c.put(elem(x))
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
