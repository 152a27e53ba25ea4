package keyspace

import (
	"bytes"
	"encoding/binary"
	"math"
	"strconv"
	"sync"
	"unsafe"

	"github.com/tidwall/btree"

	"github.com/zredis/zredis/listpack"
)

// Stream is a stream value, stored as Redis stores it (t_stream.c): a
// tree of nodes ordered by their master ID, each node one listpack in
// Redis's node layout:
//
//	master entry: count, deleted, num-fields, field..., 0
//	each entry:   flags, ms-diff, seq-diff, [num-fields, field,] value..., lp-count
//
// where an entry whose fields are the master entry's carries only its
// values (the SAMEFIELDS flag). Keeping Redis's bytes rather than an
// equivalent layout is what makes a node fill up, and so split, exactly
// where Redis's does (stream-node-max-bytes counts listpack bytes), and
// hence `~` trimming, which drops whole nodes, answer as Redis does; it
// also makes the RDB form a copy. Redis keys the nodes by a radix tree
// of their 128-bit master IDs; a B-tree gives the same costs (seek
// O(log n), walk in order).
//
// Consumer groups are B-trees too: groups and consumers by name (byte
// order, as a rax iterates), pending entries by ID, each pending entry
// shared by its group's list and its consumer's.
type Stream struct {
	nodes *btree.BTreeG[*streamNode]

	length       uint64
	LastID       StreamID // the last ID generated (XADD, XSETID)
	FirstID      StreamID // the first live entry's ID, 0-0 when empty
	MaxDeletedID StreamID // the largest ID XDEL removed
	EntriesAdded uint64   // every entry ever added

	groups *btree.BTreeG[*StreamGroup] // nil until the first group

	lpBytes int64 // the nodes' listpack bytes, for the memory estimate

	// chunk is where closed nodes' listpacks are packed (pack): its
	// length is the bytes used, its capacity the chunk's. The tail node
	// may be growing in the room past its length (newNodeLP).
	chunk []byte
	// lastClosed is the size of the node Append closed last: what the
	// next is expected to need of the chunk's room.
	lastClosed int

	// ident is allocated with the stream and kept by its clones: what
	// SameAs compares.
	ident *streamIdent
}

type streamIdent struct{ _ byte } // not zero-sized: each allocation is distinct

// StreamID is an entry ID: milliseconds and sequence.
type StreamID struct{ Ms, Seq uint64 }

// MaxStreamID is the largest ID ("+").
var MaxStreamID = StreamID{math.MaxUint64, math.MaxUint64}

// Cmp compares IDs: -1, 0 or 1.
func (a StreamID) Cmp(b StreamID) int {
	switch {
	case a.Ms > b.Ms:
		return 1
	case a.Ms < b.Ms:
		return -1
	case a.Seq > b.Seq:
		return 1
	case a.Seq < b.Seq:
		return -1
	}
	return 0
}

// Less reports a < b.
func (a StreamID) Less(b StreamID) bool { return a.Cmp(b) < 0 }

// IsZero reports whether the ID is 0-0.
func (a StreamID) IsZero() bool { return a.Ms == 0 && a.Seq == 0 }

// Incr returns the next ID; ok is false for the largest ID (which wraps
// to 0-0, as streamIncrID).
func (a StreamID) Incr() (StreamID, bool) {
	switch {
	case a.Seq != math.MaxUint64:
		a.Seq++
	case a.Ms != math.MaxUint64:
		a.Ms++
		a.Seq = 0
	default:
		return StreamID{}, false
	}
	return a, true
}

// Decr returns the previous ID; ok is false for 0-0 (which wraps to the
// largest, as streamDecrID).
func (a StreamID) Decr() (StreamID, bool) {
	switch {
	case a.Seq != 0:
		a.Seq--
	case a.Ms != 0:
		a.Ms--
		a.Seq = math.MaxUint64
	default:
		return MaxStreamID, false
	}
	return a, true
}

// Append appends "ms-seq" to dst.
func (a StreamID) Append(dst []byte) []byte {
	dst = strconv.AppendUint(dst, a.Ms, 10)
	dst = append(dst, '-')
	return strconv.AppendUint(dst, a.Seq, 10)
}

// String is "ms-seq".
func (a StreamID) String() string { return string(a.Append(nil)) }

// Encode is the 128-bit big-endian form (the RDB's and a rax's key).
func (a StreamID) Encode() [16]byte {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:], a.Ms)
	binary.BigEndian.PutUint64(b[8:], a.Seq)
	return b
}

// DecodeStreamID reads the 128-bit big-endian form.
func DecodeStreamID(b []byte) StreamID {
	return StreamID{binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:])}
}

// Entry flags in a node.
const (
	streamFlagDeleted    = 1
	streamFlagSameFields = 2
)

// streamNode is one listpack of entries; master is the ID its entries'
// IDs are relative to (the first entry added to it).
type streamNode struct {
	master StreamID
	// buf is the listpack's first byte and room the capacity of the
	// buffer it begins: lp() makes the slice, its length read from the
	// listpack's header. A slice field made the node 40 bytes, allocated
	// as 48; this way it takes 32 (0.16 bytes an entry of nodes of 100).
	buf  unsafe.Pointer
	room uint32
}

// lp is the node's listpack, with the room to grow that its buffer has.
func (n *streamNode) lp() []byte {
	if n.buf == nil {
		return nil
	}
	b := unsafe.Slice((*byte)(n.buf), n.room)
	return b[:listpack.Bytes(b)]
}

// setLP makes lp the node's listpack; its length must be the one its
// header gives, as it is for any listpack the package returns.
func (n *streamNode) setLP(lp []byte) {
	n.buf = unsafe.Pointer(unsafe.SliceData(lp))
	n.room = uint32(min(cap(lp), math.MaxUint32))
}

func nodeLess(a, b *streamNode) bool { return a.master.Less(b.master) }

// NewStream returns an empty stream.
func NewStream() *Stream {
	return &Stream{nodes: btree.NewBTreeGOptions(nodeLess, btree.Options{NoLocks: true, Degree: 32}), ident: new(streamIdent)}
}

// SameAs reports whether s is o or a clone of it (the copy-on-write copy
// a live snapshot makes before a change, or COPY's): the same stream
// changed in place, as a reader blocked on its key sees it, where a
// stream deleted and made again, or written over, is another.
func (s *Stream) SameAs(o *Stream) bool { return s.ident == o.ident }

// Type is TypeStream.
func (s *Stream) Type() Type { return TypeStream }

// Len is the number of live entries.
func (s *Stream) Len() int { return int(s.length) }

// Length is the number of live entries.
func (s *Stream) Length() uint64 { return s.length }

// Encoding is "stream".
func (s *Stream) Encoding() string { return "stream" }

// Clone returns a deep copy: node listpacks are edited in place.
func (s *Stream) Clone() Object {
	c := *s
	c.nodes = NewStream().nodes
	c.chunk = nil
	s.nodes.Scan(func(n *streamNode) bool {
		cn := &streamNode{master: n.master}
		cn.setLP(c.pack(n.lp(), s.nodes.Len()))
		c.nodes.Load(cn)
		return true
	})
	if s.groups != nil {
		c.groups = newGroupTree()
		s.groups.Scan(func(g *StreamGroup) bool {
			c.groups.Load(g.clone())
			return true
		})
	}
	return &c
}

func (s *Stream) memSize(samples int) int64 {
	n := int64(96) + s.lpBytes + int64(s.nodes.Len())*32
	if s.groups != nil {
		s.groups.Scan(func(g *StreamGroup) bool {
			n += 96 + allocSize(len(g.Name)) + int64(g.pel.Len())*80
			g.consumers.Scan(func(c *StreamConsumer) bool {
				n += 64 + allocSize(len(c.Name))
				return true
			})
			return true
		})
	}
	return n
}

// ---- a node's listpack -------------------------------------------------------

func lpInt(lp []byte, p int) int64 {
	v, _ := listpack.IntAt(lp, p)
	return v
}

// nodeHead reads a node's master entry: its live and deleted counts,
// the master fields' count and position, and the position of its first
// entry (-1 when none).
type nodeHead struct {
	count, deleted int64
	nfields        int64
	fieldsPos      int
	firstPos       int
}

func readHead(lp []byte) nodeHead {
	var h nodeHead
	p := listpack.First(lp)
	h.count = lpInt(lp, p)
	p = listpack.Next(lp, p)
	h.deleted = lpInt(lp, p)
	p = listpack.Next(lp, p)
	h.nfields = lpInt(lp, p)
	p = listpack.Next(lp, p)
	h.fieldsPos = p
	for i := int64(0); i < h.nfields; i++ {
		p = listpack.Next(lp, p)
	}
	h.firstPos = listpack.Next(lp, p) // past the master's 0 terminator
	return h
}

// nodeEntry is one entry of a node as read: its flags (and where they
// are), ID, and fields and values alternating (views into the node,
// integers decoded).
type nodeEntry struct {
	flagsPos int
	flags    int64
	id       StreamID
	fv       []listpack.Entry
	next     int // the next entry's position, -1 after the last
}

// readEntry reads the entry at p of node n into e (reusing e.fv).
func readEntry(n *streamNode, h *nodeHead, p int, e *nodeEntry) {
	lp := n.lp()
	e.flagsPos = p
	e.flags = lpInt(lp, p)
	p = listpack.Next(lp, p)
	e.id = n.master
	e.id.Ms += uint64(lpInt(lp, p))
	p = listpack.Next(lp, p)
	e.id.Seq += uint64(lpInt(lp, p))
	p = listpack.Next(lp, p)
	e.fv = e.fv[:0]
	if e.flags&streamFlagSameFields != 0 {
		fp := h.fieldsPos
		for i := int64(0); i < h.nfields; i++ {
			f, fn := listpack.At(lp, fp)
			fp = fn
			v, vn := listpack.At(lp, p)
			p = vn
			e.fv = append(e.fv, f, v)
		}
	} else {
		nf := lpInt(lp, p)
		p = listpack.Next(lp, p)
		for i := int64(0); i < nf*2; i++ {
			x, xn := listpack.At(lp, p)
			p = xn
			e.fv = append(e.fv, x)
		}
	}
	e.next = listpack.Next(lp, p) // past lp-count
}

// lastEntryID is the ID of a node's last entry, deleted or not.
func lastEntryID(n *streamNode) StreamID {
	lp := n.lp()
	p := listpack.Last(lp)
	cnt := lpInt(lp, p)
	for ; cnt > 0; cnt-- {
		p = listpack.Prev(lp, p)
	}
	p = listpack.Next(lp, p) // the ms-diff (p was at flags)
	id := n.master
	id.Ms += uint64(lpInt(lp, p))
	id.Seq += uint64(lpInt(lp, listpack.Next(lp, p)))
	return id
}

// A closed node's listpack, which only XDEL and trimming change in place
// from then on, is copied to fit, as Redis shrinks it (lpShrinkToFit).
// One allocation per node costs Go, beside its size class's rounding, a
// share of a span's bookkeeping: a 2 KB node is one of 4 in an 8 KB
// span. A stream of many nodes has them packed side by side instead,
// into chunks of streamChunk bytes that hold nothing else; 1M entries
// of XADD * f v<9 digits> grew the process's RSS by 22.0-22.5 bytes each
// instead of 22.8-23.8 (Valkey 8.0.1: 22.3-22.8). A node changed later
// in a way that grows it leaves its chunk (the slice's capacity ends
// where the node does, so append copies), and a chunk is freed with the
// last of its nodes. Nodes leave a stream mostly oldest first (XTRIM,
// MAXLEN, consumers' XDEL), and so do chunks; a chunk outlived by one
// node holds at most streamChunk for it. A stream smaller than a chunk
// keeps one allocation per node.
const (
	streamChunk         = 256 << 10
	streamPackMinNodes  = 128
	streamPackMaxLPSize = streamChunk / 8
)

// pack returns lp fitted: in the stream's chunk when the stream has
// nodes nodes or more, else an allocation of its own. The tail, which
// newNodeLP began where the chunk's bytes end, joins the chunk where it
// lies, so closing it copies nothing.
func (s *Stream) pack(lp []byte, nodes int) []byte {
	if s.inChunk(lp) {
		s.chunk = s.chunk[:len(s.chunk)+len(lp)]
		return lp[:len(lp):len(lp)]
	}
	if nodes < streamPackMinNodes || len(lp) > streamPackMaxLPSize {
		return bytes.Clone(lp)
	}
	if len(lp) > cap(s.chunk)-len(s.chunk) {
		s.chunk = make([]byte, 0, streamChunk)
	}
	at := len(s.chunk)
	s.chunk = append(s.chunk, lp...)
	return s.chunk[at:len(s.chunk):len(s.chunk)]
}

// inChunk reports whether lp begins where the chunk's bytes end: a tail
// node built in the chunk's free room.
func (s *Stream) inChunk(lp []byte) bool {
	n := len(s.chunk)
	return n < cap(s.chunk) && len(lp) > 0 && &lp[0] == &s.chunk[n : n+1][0]
}

// newNodeLP returns an empty listpack buffer for a new tail node with
// room for size bytes. When the stream packs its nodes it is the chunk's
// free room instead, provided that holds fit bytes: the node grows there
// in place and pack then takes it as it is. Built apart, each node cost
// an allocation of streamPrealloc that closing it dropped: garbage the
// size of the stream's listpacks, whose fresh pages the kernel zeroed
// (clear_page was half of the server's CPU samples under XADD of 1 KiB
// values). Only the tail is ever in the free room, and only Append and
// pack write there.
//
// fit is what the node is expected to take (the size of the node closed
// before it), not size: a chunk asked for streamPrealloc of room left up
// to that much unused at its end, about 3.8 KB in each 256 KiB chunk
// with nodes of 2 KB (0.3 bytes an entry of 20). A node that outgrows
// the room is copied out of it by append, and into the next chunk when
// closed.
func (s *Stream) newNodeLP(size, fit int64, nodes int) []byte {
	if nodes < streamPackMinNodes || size > streamPackMaxLPSize {
		return make([]byte, 0, size)
	}
	if fit > int64(cap(s.chunk)-len(s.chunk)) {
		s.chunk = make([]byte, 0, streamChunk)
	}
	return s.chunk[len(s.chunk):len(s.chunk)]
}

// setNodeLP makes lp n's listpack, which was bytes long before the
// change: a change in place has its new length in the header already.
func (s *Stream) setNodeLP(n *streamNode, was int, lp []byte) {
	s.lpBytes += int64(len(lp) - was)
	n.setLP(lp)
}

// ---- entries -----------------------------------------------------------------

// streamPrealloc is the room a new node is given
// (STREAM_LISTPACK_MAX_PRE_ALLOCATE).
const streamPrealloc = 4096

// StreamMaxListpackSize is the largest listpack a node may hold
// (STREAM_LISTPACK_MAX_SIZE): the bound on an entry's total size too.
const StreamMaxListpackSize = 1 << 30

// Append adds an entry with ID id (greater than LastID: the caller
// checked) and field/value pairs fv, splitting nodes as Redis does under
// maxBytes and maxEntries (stream-node-max-bytes and -entries).
func (s *Stream) Append(id StreamID, fv [][]byte, maxBytes, maxEntries int64) {
	numFields := int64(len(fv) / 2)
	var total int64
	for _, b := range fv {
		total += int64(len(b))
	}
	var tail *streamNode
	if n, ok := s.nodes.Max(); ok {
		tail = n
	}
	if tail != nil {
		nodeMax := maxBytes
		if nodeMax == 0 || nodeMax > StreamMaxListpackSize {
			nodeMax = StreamMaxListpackSize
		}
		full := int64(len(tail.lp()))+total >= nodeMax
		if !full && maxEntries != 0 {
			h := readHead(tail.lp())
			full = h.count+h.deleted >= maxEntries
		}
		if full {
			// The node is closed: its room to grow goes (lpShrinkToFit).
			// A tail built in the chunk is always taken into it, however
			// few nodes trimming left: its bytes lie in the chunk's free
			// room, which the next node would be written over.
			if s.inChunk(tail.lp()) || s.nodes.Len() >= streamPackMinNodes || cap(tail.lp())-len(tail.lp()) > 64 {
				tail.setLP(s.pack(tail.lp(), s.nodes.Len()))
			}
			s.lastClosed = len(tail.lp())
			tail = nil
		}
	}
	flags := int64(0)
	if tail == nil {
		// A new node gets room to grow at once, as Redis preallocates
		// STREAM_LISTPACK_MAX_PRE_ALLOCATE: appends then copy nothing.
		prealloc := int64(streamPrealloc)
		if maxBytes > 0 && maxBytes < prealloc {
			prealloc = maxBytes
		}
		size := max(prealloc, total+64)
		fit := size
		if s.lastClosed > 0 {
			fit = max(int64(s.lastClosed), total+64)
		}
		lp := append(s.newNodeLP(size, fit, s.nodes.Len()), listpack.New()...)
		lp = listpack.AppendInt(lp, 1)
		lp = listpack.AppendInt(lp, 0)
		lp = listpack.AppendInt(lp, numFields)
		for i := int64(0); i < numFields; i++ {
			lp = listpack.Append(lp, fv[2*i])
		}
		lp = listpack.AppendInt(lp, 0)
		tail = &streamNode{master: id}
		s.setNodeLP(tail, 0, lp)
		s.nodes.Set(tail)
		flags = streamFlagSameFields
	} else {
		lp := tail.lp()
		was := len(lp)
		p := listpack.First(lp)
		count := lpInt(lp, p)
		lp = listpack.ReplaceInt(lp, p, count+1)
		h := readHead(lp)
		if numFields == h.nfields {
			same := true
			fp := h.fieldsPos
			for i := int64(0); i < numFields; i++ {
				f, next := listpack.At(lp, fp)
				if !f.Equal(fv[2*i]) {
					same = false
					break
				}
				fp = next
			}
			if same {
				flags = streamFlagSameFields
			}
		}
		s.setNodeLP(tail, was, lp)
	}
	lp := tail.lp()
	was := len(lp)
	lp = listpack.AppendInt(lp, flags)
	lp = listpack.AppendInt(lp, int64(id.Ms-tail.master.Ms))
	lp = listpack.AppendInt(lp, int64(id.Seq-tail.master.Seq))
	if flags&streamFlagSameFields == 0 {
		lp = listpack.AppendInt(lp, numFields)
	}
	for i := int64(0); i < numFields; i++ {
		if flags&streamFlagSameFields == 0 {
			lp = listpack.Append(lp, fv[2*i])
		}
		lp = listpack.Append(lp, fv[2*i+1])
	}
	lpCount := numFields + 3
	if flags&streamFlagSameFields == 0 {
		lpCount += numFields + 1
	}
	lp = listpack.AppendInt(lp, lpCount)
	s.setNodeLP(tail, was, lp)
	s.length++
	s.EntriesAdded++
	s.LastID = id
	if s.length == 1 {
		s.FirstID = id
	}
}

// StreamEntry is an entry handed to a Range callback: fields and values
// alternate; they are views valid only during the call.
type StreamEntry struct {
	ID StreamID
	FV []listpack.Entry
}

// Range calls fn for each live entry with start <= ID <= end, in order
// (rev: from end down to start), until fn returns false.
func (s *Stream) Range(start, end StreamID, rev bool, fn func(e *StreamEntry) bool) {
	s.walk(start, end, rev, true, true, fn)
}

// streamWalker holds what a walk needs besides its arguments: the key it
// looks the first node up by, the entry it reads and the one it hands
// over. The tree's generic lookups take their key through a function
// value, which moves it to the heap, and the entry handed to a callback
// escapes too: built afresh, a walk cost three allocations and about
// 300 bytes of garbage, and an XREADGROUP two walks. On a stream of 1
// KiB entries freshly loaded that garbage went to new pages (the next
// collection is a heap's size away), and zeroing them was 15% of the
// server's CPU. So walkers are pooled: a walk inside another's callback
// takes its own, and so does a reader on another goroutine.
type streamWalker struct {
	pivot streamNode
	e     nodeEntry
	out   StreamEntry
}

var streamWalkers = sync.Pool{New: func() any { return new(streamWalker) }}

// walk is Range, with deleted entries too when skipTombstones is false,
// and with each entry's ID alone (FV nil) when fields is false. As
// Redis's iterator, it reads only an entry's flags and ID to decide
// whether to emit it, stepping over the rest element by element going
// forward and jumping back by its lp-count going backward, and decodes
// the fields and values only of the entries it emits.
func (s *Stream) walk(start, end StreamID, rev, skipTombstones, fields bool, fn func(e *StreamEntry) bool) {
	if start.Cmp(end) > 0 {
		return
	}
	w := streamWalkers.Get().(*streamWalker)
	defer func() {
		clear(w.e.fv) // views into listpacks the pool must not keep
		w.e.fv = w.e.fv[:0]
		w.pivot, w.out = streamNode{}, StreamEntry{}
		streamWalkers.Put(w)
	}()
	// emit reads and hands over the entry at p, whose ID is id; false
	// stops the walk.
	emit := func(n *streamNode, h *nodeHead, p int, id StreamID) bool {
		if fields {
			readEntry(n, h, p, &w.e)
			w.out.ID, w.out.FV = w.e.id, w.e.fv
		} else {
			w.out.ID, w.out.FV = id, nil
		}
		return fn(&w.out)
	}
	skip := func(flags int64) bool { return skipTombstones && flags&streamFlagDeleted != 0 }
	forward := func(n *streamNode) bool {
		h := readHead(n.lp())
		for p := h.firstPos; p >= 0; {
			flags, id, next := peekEntry(n, &h, p)
			if id.Cmp(end) > 0 {
				return false
			}
			if !id.Less(start) && !skip(flags) && !emit(n, &h, p, id) {
				return false
			}
			p = next
		}
		return true
	}
	backward := func(n *streamNode) bool {
		h := readHead(n.lp())
		lp := n.lp()
		for p := listpack.Last(lp); ; {
			cnt := lpInt(lp, p)
			if cnt == 0 {
				return true // the master entry's terminator
			}
			q := p
			for ; cnt > 0; cnt-- {
				q = listpack.Prev(lp, q)
			}
			flags, id, _ := peekEntry(n, &h, q)
			if id.Less(start) {
				return false
			}
			if id.Cmp(end) <= 0 && !skip(flags) && !emit(n, &h, q, id) {
				return false
			}
			p = listpack.Prev(lp, q) // the previous entry's lp-count
		}
	}
	if !rev {
		// The node holding start is the last whose master is <= start.
		var from *streamNode
		w.pivot.master = start
		s.nodes.Descend(&w.pivot, func(n *streamNode) bool {
			from = n
			return false
		})
		if from == nil {
			if n, ok := s.nodes.Min(); ok {
				from = n
			} else {
				return
			}
		}
		s.nodes.Ascend(from, func(n *streamNode) bool {
			return n.master.Cmp(end) <= 0 && forward(n)
		})
		return
	}
	w.pivot.master = end
	s.nodes.Descend(&w.pivot, backward)
}

// peekEntry reads the flags and ID of the entry at p of node n, and
// returns them with the position of the next entry (-1 after the last),
// without decoding its fields and values.
func peekEntry(n *streamNode, h *nodeHead, p int) (flags int64, id StreamID, next int) {
	lp := n.lp()
	flags = lpInt(lp, p)
	p = listpack.Next(lp, p)
	id = n.master
	id.Ms += uint64(lpInt(lp, p))
	p = listpack.Next(lp, p)
	id.Seq += uint64(lpInt(lp, p))
	p = listpack.Next(lp, p)
	elems := h.nfields // values, then the lp-count
	if flags&streamFlagSameFields == 0 {
		elems = lpInt(lp, p)*2 + 1 // num-fields, fields and values
	}
	for ; elems > 0; elems-- {
		p = listpack.Next(lp, p)
	}
	return flags, id, listpack.Next(lp, p)
}

// FirstEntry and LastEntry call fn with the first (last) live entry, if
// any; they report whether there was one.
func (s *Stream) FirstEntry(fn func(e *StreamEntry)) bool {
	found := false
	s.Range(StreamID{}, MaxStreamID, false, func(e *StreamEntry) bool {
		found = true
		fn(e)
		return false
	})
	return found
}

func (s *Stream) LastEntry(fn func(e *StreamEntry)) bool {
	found := false
	s.Range(StreamID{}, MaxStreamID, true, func(e *StreamEntry) bool {
		found = true
		fn(e)
		return false
	})
	return found
}

// EdgeID is the first (or last) entry's ID, tombstones included unless
// skipTombstones; for none, the largest ID (first) or 0-0 (last), as
// streamGetEdgeID.
func (s *Stream) EdgeID(first, skipTombstones bool) StreamID {
	id, found := StreamID{}, false
	s.walk(StreamID{}, MaxStreamID, !first, skipTombstones, false, func(e *StreamEntry) bool {
		id, found = e.ID, true
		return false
	})
	if !found {
		if first {
			return MaxStreamID
		}
		return StreamID{}
	}
	return id
}

// LastValidID is the last live entry's ID (0-0 when empty).
func (s *Stream) LastValidID() StreamID { return s.EdgeID(false, true) }

// Exists reports whether a live entry has ID id.
func (s *Stream) Exists(id StreamID) bool {
	found := false
	s.Range(id, id, false, func(*StreamEntry) bool {
		found = true
		return false
	})
	return found
}

// Delete marks the entry id deleted (a node whose last live entry goes
// is dropped) and reports whether it was there. FirstID and
// MaxDeletedID are the caller's (XDEL's) to update.
func (s *Stream) Delete(id StreamID) bool {
	var node *streamNode
	s.nodes.Descend(&streamNode{master: id}, func(n *streamNode) bool {
		node = n
		return false
	})
	if node == nil {
		return false
	}
	h := readHead(node.lp())
	var e nodeEntry
	for p := h.firstPos; p >= 0; p = e.next {
		readEntry(node, &h, p, &e)
		if e.id.Cmp(id) > 0 {
			return false
		}
		if e.id != id || e.flags&streamFlagDeleted != 0 {
			continue
		}
		if h.count == 1 {
			s.lpBytes -= int64(len(node.lp()))
			s.nodes.Delete(node)
		} else {
			lp := node.lp()
			was := len(lp)
			lp = listpack.ReplaceInt(lp, e.flagsPos, e.flags|streamFlagDeleted)
			q := listpack.First(lp)
			lp = listpack.ReplaceInt(lp, q, h.count-1)
			q = listpack.Next(lp, listpack.First(lp))
			lp = listpack.ReplaceInt(lp, q, h.deleted+1)
			s.setNodeLP(node, was, lp)
		}
		s.length--
		return true
	}
	return false
}

// Trim strategies.
const (
	TrimNone = iota
	TrimMaxLen
	TrimMinID
)

// TrimArgs says how to trim (streamAddTrimArgs).
type TrimArgs struct {
	Strategy int
	MaxLen   int64
	MinID    StreamID
	Approx   bool
	Limit    int64 // most entries to remove; 0: no bound
}

// Trim removes entries from the head as streamTrim does, whole nodes
// first and, unless Approx, entries inside the first node left, and
// returns how many it removed.
func (s *Stream) Trim(a TrimArgs) int64 {
	if a.Strategy == TrimNone {
		return 0
	}
	maxlen := uint64(a.MaxLen)
	var deleted int64
	for {
		if a.Strategy == TrimMaxLen && s.length <= maxlen {
			break
		}
		n, ok := s.nodes.Min()
		if !ok {
			break
		}
		h := readHead(n.lp())
		entries := h.count
		if a.Limit != 0 && deleted+entries > a.Limit {
			break
		}
		var remove bool
		if a.Strategy == TrimMaxLen {
			remove = s.length-uint64(entries) >= maxlen
		} else {
			remove = lastEntryID(n).Less(a.MinID)
		}
		if remove {
			s.lpBytes -= int64(len(n.lp()))
			s.nodes.Delete(n)
			s.length -= uint64(entries)
			deleted += entries
			continue
		}
		if a.Approx {
			break
		}
		lp := n.lp()
		was := len(lp)
		var fromLP int64
		var e nodeEntry
		for p := h.firstPos; p >= 0; {
			view := streamNode{master: n.master}
			view.setLP(lp)
			readEntry(&view, &h, p, &e)
			var stop bool
			if a.Strategy == TrimMaxLen {
				stop = s.length <= maxlen
			} else {
				stop = e.id.Cmp(a.MinID) >= 0
			}
			if stop {
				break
			}
			next := e.next
			if e.flags&streamFlagDeleted == 0 {
				before := len(lp)
				lp = listpack.ReplaceInt(lp, e.flagsPos, e.flags|streamFlagDeleted)
				if next >= 0 {
					next += len(lp) - before
				}
				fromLP++
				s.length--
			}
			p = next
		}
		deleted += fromLP
		q := listpack.First(lp)
		lp = listpack.ReplaceInt(lp, q, entries-fromLP)
		q = listpack.Next(lp, listpack.First(lp))
		lp = listpack.ReplaceInt(lp, q, h.deleted+fromLP)
		s.setNodeLP(n, was, lp)
		break
	}
	if s.length == 0 {
		s.FirstID = StreamID{}
	} else if deleted != 0 {
		s.FirstID = s.EdgeID(true, true)
	}
	return deleted
}

// RangeHasTombstones reports whether an entry deleted by XDEL may lie in
// [start, end] (streamRangeHasTombstones; end nil: to the last).
func (s *Stream) RangeHasTombstones(start StreamID, end *StreamID) bool {
	if s.length == 0 || s.MaxDeletedID.IsZero() {
		return false
	}
	if s.FirstID.Cmp(s.MaxDeletedID) > 0 {
		return false
	}
	e := MaxStreamID
	if end != nil {
		e = *end
	}
	return start.Cmp(s.MaxDeletedID) <= 0 && s.MaxDeletedID.Cmp(e) <= 0
}

// InvalidEntriesRead is a group's unknown read counter
// (SCG_INVALID_ENTRIES_READ).
const InvalidEntriesRead = -1

// EstimateDistance is id's logical read counter when it can be known
// (streamEstimateDistanceFromFirstEverEntry), else InvalidEntriesRead.
func (s *Stream) EstimateDistance(id StreamID) int64 {
	if s.EntriesAdded == 0 {
		return 0
	}
	if s.length == 0 && id.Cmp(s.LastID) < 1 {
		return int64(s.EntriesAdded)
	}
	switch c := id.Cmp(s.LastID); {
	case c == 0:
		return int64(s.EntriesAdded)
	case c > 0:
		return InvalidEntriesRead
	}
	cmpFirst := id.Cmp(s.FirstID)
	if s.MaxDeletedID.IsZero() || s.MaxDeletedID.Less(s.FirstID) {
		if cmpFirst < 0 {
			return int64(s.EntriesAdded - s.length)
		} else if cmpFirst == 0 {
			return int64(s.EntriesAdded - s.length + 1)
		}
	}
	return InvalidEntriesRead
}

// Lag is a group's lag (streamReplyWithCGLag); ok is false when it
// cannot be known (a null reply).
func (s *Stream) Lag(g *StreamGroup) (int64, bool) {
	if s.EntriesAdded == 0 {
		return 0, true
	}
	if g.EntriesRead != InvalidEntriesRead && !s.RangeHasTombstones(g.LastID, nil) {
		return int64(s.EntriesAdded) - g.EntriesRead, true
	}
	if r := s.EstimateDistance(g.LastID); r != InvalidEntriesRead {
		return int64(s.EntriesAdded) - r, true
	}
	return 0, false
}

// ---- nodes, for XINFO and persistence ----------------------------------------

// NodeCount is the number of nodes (XINFO's radix-tree-keys).
func (s *Stream) NodeCount() int { return s.nodes.Len() }

// RaxNodes is the number of nodes a rax holding the node keys would
// have (XINFO's radix-tree-nodes): a compressed trie over the 16-byte
// master IDs, counted as rax builds it — a compressed node for each run
// of single-child bytes, a branching node where keys part, an empty
// node where each key ends.
func (s *Stream) RaxNodes() int {
	keys := make([][16]byte, 0, s.nodes.Len())
	s.nodes.Scan(func(n *streamNode) bool {
		keys = append(keys, n.master.Encode())
		return true
	})
	if len(keys) == 0 {
		return 1
	}
	var pos, point func(ks [][16]byte, d int) int
	pos = func(ks [][16]byte, d int) int {
		l := 0
		for d+l < 16 && ks[0][d+l] == ks[len(ks)-1][d+l] {
			l++
		}
		if l > 0 {
			return 1 + point(ks, d+l)
		}
		return point(ks, d)
	}
	point = func(ks [][16]byte, d int) int {
		if d == 16 {
			return 1
		}
		n := 1
		for i := 0; i < len(ks); {
			j := i + 1
			for j < len(ks) && ks[j][d] == ks[i][d] {
				j++
			}
			n += pos(ks[i:j], d+1)
			i = j
		}
		return n
	}
	return pos(keys, 0)
}

// Nodes calls fn with each node's master ID and listpack, in order; the
// listpack must not be changed.
func (s *Stream) Nodes(fn func(master StreamID, lp []byte) bool) {
	s.nodes.Scan(func(n *streamNode) bool { return fn(n.master, n.lp()) })
}

// LoadNode adds a node read from an RDB file (validated by the caller,
// in order, master IDs increasing). lp is copied.
func (s *Stream) LoadNode(master StreamID, lp []byte) {
	n := &streamNode{master: master}
	s.setNodeLP(n, 0, s.pack(lp, s.nodes.Len()+1))
	s.nodes.Load(n)
}

// SetLength sets the entry count read from an RDB file.
func (s *Stream) SetLength(n uint64) { s.length = n }

// ValidateNode checks a node's listpack as streamValidateListpackIntegrity
// does (deep), and that its first entry's ID is master.
func ValidateNode(lp []byte, master StreamID) bool {
	if _, err := listpack.Each(lp, nil); err != nil {
		return false
	}
	p := listpack.First(lp)
	ints := func() (int64, bool) {
		if p < 0 {
			return 0, false
		}
		e, next := listpack.At(lp, p)
		p = next
		return e.IntValue()
	}
	skip := func() bool {
		if p < 0 {
			return false
		}
		p = listpack.Next(lp, p)
		return true
	}
	count, ok1 := ints()
	deleted, ok2 := ints()
	nfields, ok3 := ints()
	if !ok1 || !ok2 || !ok3 || count < 0 || deleted < 0 || nfields < 0 {
		return false
	}
	for j := int64(0); j < nfields; j++ {
		if !skip() {
			return false
		}
	}
	if z, ok := ints(); !ok || z != 0 {
		return false
	}
	total := count + deleted
	first := true
	for ; total > 0; total-- {
		flags, ok := ints()
		if !ok {
			return false
		}
		ms, ok1 := ints()
		seq, ok2 := ints()
		if !ok1 || !ok2 {
			return false
		}
		if first {
			if ms != 0 || seq != 0 {
				return false
			}
			first = false
		}
		fields, extra := nfields, int64(3)
		if flags&streamFlagSameFields == 0 {
			f, ok := ints()
			if !ok || f < 0 {
				return false
			}
			fields = f
			for j := int64(0); j < fields; j++ {
				if !skip() {
					return false
				}
			}
			extra += fields + 1
		}
		for j := int64(0); j < fields; j++ {
			if !skip() {
				return false
			}
		}
		c, ok := ints()
		if !ok || c != fields+extra {
			return false
		}
	}
	return p < 0
}

// ---- consumer groups ---------------------------------------------------------

// StreamGroup is a consumer group.
type StreamGroup struct {
	Name        string
	LastID      StreamID
	EntriesRead int64 // InvalidEntriesRead when unknown
	pel         *btree.BTreeG[*StreamNACK]
	consumers   *btree.BTreeG[*StreamConsumer]
}

// StreamConsumer is a consumer of a group.
type StreamConsumer struct {
	Name     string
	SeenTime int64 // Unix ms
	pel      *btree.BTreeG[*StreamNACK]
}

// StreamNACK is a pending entry: delivered, not yet acknowledged.
type StreamNACK struct {
	ID            StreamID
	DeliveryTime  int64 // Unix ms
	DeliveryCount uint64
	Consumer      *StreamConsumer
}

func nackLess(a, b *StreamNACK) bool { return a.ID.Less(b.ID) }

func newPEL() *btree.BTreeG[*StreamNACK] {
	return btree.NewBTreeGOptions(nackLess, btree.Options{NoLocks: true, Degree: 32})
}

func newGroupTree() *btree.BTreeG[*StreamGroup] {
	return btree.NewBTreeGOptions(func(a, b *StreamGroup) bool { return a.Name < b.Name }, btree.Options{NoLocks: true})
}

func (g *StreamGroup) clone() *StreamGroup {
	c := &StreamGroup{Name: g.Name, LastID: g.LastID, EntriesRead: g.EntriesRead, pel: newPEL(), consumers: newConsumerTree()}
	owners := map[*StreamConsumer]*StreamConsumer{}
	g.consumers.Scan(func(x *StreamConsumer) bool {
		y := &StreamConsumer{Name: x.Name, SeenTime: x.SeenTime, pel: newPEL()}
		owners[x] = y
		c.consumers.Load(y)
		return true
	})
	g.pel.Scan(func(n *StreamNACK) bool {
		m := *n
		m.Consumer = owners[n.Consumer]
		c.pel.Load(&m)
		if m.Consumer != nil {
			m.Consumer.pel.Set(&m)
		}
		return true
	})
	return c
}

func newConsumerTree() *btree.BTreeG[*StreamConsumer] {
	return btree.NewBTreeGOptions(func(a, b *StreamConsumer) bool { return a.Name < b.Name }, btree.Options{NoLocks: true})
}

// GroupCount is the number of consumer groups.
func (s *Stream) GroupCount() int {
	if s.groups == nil {
		return 0
	}
	return s.groups.Len()
}

// Search keys for the trees of groups, consumers and pending entries,
// pooled for streamWalker's reason: a key built for each lookup went to
// the heap, and an XREADGROUP made four.
var (
	groupKeys    = sync.Pool{New: func() any { return new(StreamGroup) }}
	consumerKeys = sync.Pool{New: func() any { return new(StreamConsumer) }}
	nackKeys     = sync.Pool{New: func() any { return new(StreamNACK) }}
)

// viewString is b as a string without a copy, for a search key that
// lives no longer than the lookup.
func viewString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// Group is the group named name, or nil.
func (s *Stream) Group(name []byte) *StreamGroup {
	if s.groups == nil {
		return nil
	}
	k := groupKeys.Get().(*StreamGroup)
	k.Name = viewString(name)
	g, _ := s.groups.Get(k)
	k.Name = ""
	groupKeys.Put(k)
	return g
}

// CreateGroup adds a group; nil when one has the name already.
func (s *Stream) CreateGroup(name []byte, last StreamID, entriesRead int64) *StreamGroup {
	if s.groups == nil {
		s.groups = newGroupTree()
	}
	if s.Group(name) != nil {
		return nil
	}
	g := &StreamGroup{Name: string(name), LastID: last, EntriesRead: entriesRead, pel: newPEL(), consumers: newConsumerTree()}
	s.groups.Set(g)
	return g
}

// DestroyGroup removes a group and reports whether it was there.
func (s *Stream) DestroyGroup(name []byte) bool {
	if s.groups == nil {
		return false
	}
	_, ok := s.groups.Delete(&StreamGroup{Name: string(name)})
	return ok
}

// Groups calls fn for each group, in name order.
func (s *Stream) Groups(fn func(g *StreamGroup) bool) {
	if s.groups != nil {
		s.groups.Scan(fn)
	}
}

// PendingCount is the size of the group's pending entries list.
func (g *StreamGroup) PendingCount() int { return g.pel.Len() }

// ConsumerCount is the number of consumers.
func (g *StreamGroup) ConsumerCount() int { return g.consumers.Len() }

// Pending is the pending entry id, or nil.
func (g *StreamGroup) Pending(id StreamID) *StreamNACK {
	if last, ok := g.pel.Max(); !ok || last.ID.Less(id) {
		return nil // past the last: what ">" delivers, most of the time
	}
	k := nackKeys.Get().(*StreamNACK)
	k.ID = id
	n, _ := g.pel.Get(k)
	nackKeys.Put(k)
	return n
}

// PendingRange calls fn for the group's pending entries from start on,
// in ID order, until fn returns false.
func (g *StreamGroup) PendingRange(start StreamID, fn func(n *StreamNACK) bool) {
	k := nackKeys.Get().(*StreamNACK)
	k.ID = start
	g.pel.Ascend(k, fn)
	nackKeys.Put(k)
}

// PendingEdges are the first and last pending IDs (the group must have
// some).
func (g *StreamGroup) PendingEdges() (StreamID, StreamID) {
	a, _ := g.pel.Min()
	b, _ := g.pel.Max()
	return a.ID, b.ID
}

// AddPending records id as pending for consumer c, delivered now: a new
// entry, or one another consumer held, moved to c, its count reset to
// 1 (streamReplyWithRange). It returns the entry.
func (g *StreamGroup) AddPending(id StreamID, c *StreamConsumer, now int64) *StreamNACK {
	if n := g.Pending(id); n != nil {
		if n.Consumer != nil {
			n.Consumer.pel.Delete(n)
		}
		n.Consumer, n.DeliveryTime, n.DeliveryCount = c, now, 1
		c.pel.Set(n)
		return n
	}
	n := &StreamNACK{ID: id, DeliveryTime: now, DeliveryCount: 1, Consumer: c}
	g.pel.Set(n)
	c.pel.Set(n)
	return n
}

// CreatePending adds a pending entry owned by nobody yet (XCLAIM
// FORCE); Claim gives it an owner.
func (g *StreamGroup) CreatePending(id StreamID, now int64) *StreamNACK {
	n := &StreamNACK{ID: id, DeliveryTime: now, DeliveryCount: 1}
	g.pel.Set(n)
	return n
}

// Claim moves pending entry n to consumer c.
func (g *StreamGroup) Claim(n *StreamNACK, c *StreamConsumer) {
	if n.Consumer == c {
		return
	}
	if n.Consumer != nil {
		n.Consumer.pel.Delete(n)
	}
	n.Consumer = c
	c.pel.Set(n)
}

// Ack removes pending entry id and reports whether it was there.
func (g *StreamGroup) Ack(id StreamID) bool {
	k := nackKeys.Get().(*StreamNACK)
	k.ID = id
	n, ok := g.pel.Delete(k)
	nackKeys.Put(k)
	if !ok {
		return false
	}
	if n.Consumer != nil {
		n.Consumer.pel.Delete(n)
	}
	return true
}

// Consumer is the consumer named name, or nil.
func (g *StreamGroup) Consumer(name []byte) *StreamConsumer {
	k := consumerKeys.Get().(*StreamConsumer)
	k.Name = viewString(name)
	c, _ := g.consumers.Get(k)
	k.Name = ""
	consumerKeys.Put(k)
	return c
}

// CreateConsumer adds a consumer seen at now; nil when one has the name.
func (g *StreamGroup) CreateConsumer(name []byte, now int64) *StreamConsumer {
	if g.Consumer(name) != nil {
		return nil
	}
	c := &StreamConsumer{Name: string(name), SeenTime: now, pel: newPEL()}
	g.consumers.Set(c)
	return c
}

// DeleteConsumer removes c and its pending entries; it returns how many
// it had.
func (g *StreamGroup) DeleteConsumer(c *StreamConsumer) int {
	n := c.pel.Len()
	c.pel.Scan(func(x *StreamNACK) bool {
		g.pel.Delete(x)
		return true
	})
	g.consumers.Delete(c)
	return n
}

// Consumers calls fn for each consumer, in name order.
func (g *StreamGroup) Consumers(fn func(c *StreamConsumer) bool) { g.consumers.Scan(fn) }

// PendingCount is the size of the consumer's pending list.
func (c *StreamConsumer) PendingCount() int { return c.pel.Len() }

// PendingRange calls fn for the consumer's pending entries from start
// on, in ID order, until fn returns false.
func (c *StreamConsumer) PendingRange(start StreamID, fn func(n *StreamNACK) bool) {
	k := nackKeys.Get().(*StreamNACK)
	k.ID = start
	c.pel.Ascend(k, fn)
	nackKeys.Put(k)
}

// LoadPending adds a pending entry read from an RDB file to the group
// (its consumer is set by LoadConsumerPending); false for a duplicate.
func (g *StreamGroup) LoadPending(n *StreamNACK) bool {
	if _, ok := g.pel.Get(n); ok {
		return false
	}
	g.pel.Set(n)
	return true
}

// LoadConsumerPending gives pending entry id to c, as an RDB consumer
// lists it; false when the group has no such entry or it has an owner.
func (g *StreamGroup) LoadConsumerPending(c *StreamConsumer, id StreamID) bool {
	n := g.Pending(id)
	if n == nil || n.Consumer != nil {
		return false
	}
	n.Consumer = c
	c.pel.Set(n)
	return true
}
