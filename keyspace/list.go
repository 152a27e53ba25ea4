package keyspace

import "bytes"

// List is a list value, stored as Redis's quicklist is: a sequence of
// chunks, each packing up to listChunkElems elements (and about
// listChunkBytes of data) into one byte buffer with a 4-byte end offset
// per element. An element costs its bytes plus 4, against 24 for a slice
// header and an allocation of its own.
//
//   - Pushes and pops at both ends are O(1) amortized: a chunk grows at
//     one end only (the tail for a chunk made by a tail push, the head
//     for one made by a head push, which stores its elements in reverse),
//     and an element taken from the other end is only skipped.
//   - Access by index is O(log chunks): every chunk records the absolute
//     position of its first element, positions that only change for the
//     chunks after an insertion in the middle.
//   - Changes in the middle (LSET, LINSERT) rebuild one chunk; LREM
//     rebuilds the list.
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

// Chunk limits. A chunk accepts elements while it holds fewer than
// listChunkElems and its data stays within listChunkBytes (a larger
// element gets a chunk of its own), as Redis's default
// list-max-listpack-size of -2 (8 kB nodes) does.
const (
	listChunkBytes = 8 << 10
	listChunkElems = 512
)

type listChunk struct {
	data  []byte
	ends  []uint32 // ends[k] is where physical element k ends in data
	lo    int      // physical elements [lo, len(ends)) are live
	start int      // absolute position of the chunk's first element
	rev   bool     // the logical order is the physical order reversed
}

func (c *listChunk) count() int { return len(c.ends) - c.lo }

// phys is physical element k.
func (c *listChunk) phys(k int) []byte {
	s := uint32(0)
	if k > 0 {
		s = c.ends[k-1]
	}
	e := c.ends[k]
	return c.data[s:e:e]
}

// at is the chunk's j-th element in list order.
func (c *listChunk) at(j int) []byte {
	if c.rev {
		return c.phys(len(c.ends) - 1 - j)
	}
	return c.phys(c.lo + j)
}

// fits reports whether v may be added to the chunk.
func (c *listChunk) fits(v []byte) bool {
	return len(c.ends) == 0 || (len(c.ends) < listChunkElems && len(c.data)+len(v) <= listChunkBytes)
}

// add appends a copy of v at the chunk's growing end.
func (c *listChunk) add(v []byte) {
	c.data = append(c.data, v...)
	c.ends = append(c.ends, uint32(len(c.data)))
}

// dropLast removes the physical element at the growing end.
func (c *listChunk) dropLast() {
	c.ends = c.ends[:len(c.ends)-1]
	if len(c.ends) == 0 {
		c.data = c.data[:0]
		return
	}
	c.data = c.data[:c.ends[len(c.ends)-1]]
}

// seal compacts a chunk that stopped growing: the room append left in
// its buffers and the skipped elements' bytes are released.
func (c *listChunk) seal() {
	if c.lo == 0 && cap(c.data)-len(c.data) <= len(c.data)/8 && cap(c.ends)-len(c.ends) <= len(c.ends)/8 {
		return
	}
	*c = *c.copyLive()
}

// copyLive returns a copy of the chunk holding only its live elements,
// in buffers of the exact size.
func (c *listChunk) copyLive() *listChunk {
	base := uint32(0)
	if c.lo > 0 {
		base = c.ends[c.lo-1]
	}
	data := make([]byte, len(c.data)-int(base))
	copy(data, c.data[base:])
	ends := make([]uint32, c.count())
	for k := range ends {
		ends[k] = c.ends[c.lo+k] - base
	}
	return &listChunk{data: data, ends: ends, start: c.start, rev: c.rev}
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
	i := from
	if !reverse {
		for ; k < len(l.cs); k++ {
			c := l.cs[k]
			for ; j < c.count(); j++ {
				if !fn(i, c.at(j)) {
					return
				}
				i++
			}
			j = 0
		}
		return
	}
	for ; k >= l.c0; k-- {
		c := l.cs[k]
		for ; j >= 0; j-- {
			if !fn(i, c.at(j)) {
				return
			}
			i--
		}
		if k > l.c0 {
			j = l.cs[k-1].count() - 1
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

// newChunkAfter seals prev, the end chunk that cannot take the next
// push, and makes the chunk that replaces it at that end. When prev
// grew the same way until it was full, pushes are streaming in: the new
// chunk starts with prev's size, so that it fills without regrowing.
func newChunkAfter(prev *listChunk, rev bool, start int) *listChunk {
	c := &listChunk{rev: rev, start: start}
	if prev == nil {
		return c
	}
	if prev.rev == rev && prev.lo == 0 {
		c.data = make([]byte, 0, min(len(prev.data), listChunkBytes))
		c.ends = make([]uint32, 0, len(prev.ends))
	}
	prev.seal()
	return c
}

// Push adds a copy of v at the head (front) or the tail.
func (l *List) Push(front bool, v []byte) {
	if front {
		c := l.first()
		if c == nil || !c.rev || !c.fits(v) {
			c = newChunkAfter(c, true, l.head)
			l.prependChunk(c)
		}
		c.add(v)
		c.start--
		l.head--
	} else {
		c := l.tail()
		if c == nil || c.rev || !c.fits(v) {
			c = newChunkAfter(c, false, l.head+l.n)
			l.appendChunk(c)
		}
		c.add(v)
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
			v = c.phys(len(c.ends) - 1)
			c.dropLast()
		} else {
			v = c.phys(c.lo)
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
			v = c.phys(c.lo)
			c.lo++
		} else {
			v = c.phys(len(c.ends) - 1)
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

// chunkElems returns the elements of chunk c in list order, plus room
// for one more.
func chunkElems(c *listChunk) [][]byte {
	out := make([][]byte, c.count(), c.count()+1)
	for j := range out {
		out[j] = c.at(j)
	}
	return out
}

// buildChunks packs copies of elems into chunks, the first holding
// position start, all growing in the given direction.
func buildChunks(elems [][]byte, start int, rev bool) []*listChunk {
	var out []*listChunk
	for from := 0; from < len(elems); {
		to, size := from, 0
		for to < len(elems) && (to == from || (to-from < listChunkElems && size+len(elems[to]) <= listChunkBytes)) {
			size += len(elems[to])
			to++
		}
		c := &listChunk{start: start + from, rev: rev, data: make([]byte, 0, size), ends: make([]uint32, 0, to-from)}
		if rev {
			for j := to - 1; j >= from; j-- {
				c.add(elems[j])
			}
		} else {
			for j := from; j < to; j++ {
				c.add(elems[j])
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

// Set replaces element i, 0 <= i < Len(), with a copy of v.
func (l *List) Set(i int, v []byte) {
	k, j := l.locate(i)
	c := l.cs[k]
	elems := chunkElems(c)
	elems[j] = v
	l.replaceChunk(k, buildChunks(elems, c.start, c.rev))
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
	elems := chunkElems(c)
	elems = append(elems, nil)
	copy(elems[j+1:], elems[j:])
	elems[j] = v
	for _, after := range l.cs[k+1:] {
		after.start++
	}
	l.n++
	l.replaceChunk(k, buildChunks(elems, c.start, c.rev))
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
