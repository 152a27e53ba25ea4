package replication

// Backlog is the replication backlog: the last Size bytes of the
// replication stream, in a ring, with the stream offsets they stand at.
// Offsets count the bytes of the stream as Redis's master_repl_offset
// does: the first byte ever fed is offset 1, and End is the offset of the
// last byte fed. A replica that asks to continue from offset o (the
// first byte it lacks: its own offset plus one) can be served when
// First <= o <= End+1.
//
// A Backlog is not safe for concurrent use; the server uses it under the
// keyspace lock.
type Backlog struct {
	buf     []byte
	idx     int   // where the next byte goes in buf
	histlen int   // bytes held, at most len(buf)
	end     int64 // offset of the last byte fed
}

// MinSize is the smallest backlog (CONFIG_REPL_BACKLOG_MIN_SIZE).
const MinSize = 16 << 10

// NewBacklog makes a backlog of size bytes (at least MinSize) for a
// stream whose last byte fed so far is at offset end (master_repl_offset
// when the backlog is created: it holds nothing yet, and First is end+1).
func NewBacklog(size int, end int64) *Backlog {
	return &Backlog{buf: make([]byte, max(size, MinSize)), end: end}
}

// Size is the capacity in bytes.
func (b *Backlog) Size() int { return len(b.buf) }

// End is the offset of the last byte fed (master_repl_offset).
func (b *Backlog) End() int64 { return b.end }

// HistLen is the number of bytes held (repl_backlog_histlen).
func (b *Backlog) HistLen() int64 { return int64(b.histlen) }

// First is the offset of the first byte held
// (repl_backlog_first_byte_offset); End+1 when nothing is held.
func (b *Backlog) First() int64 { return b.end - int64(b.histlen) + 1 }

// Write appends p to the stream: the offsets advance by len(p) and the
// oldest bytes make room.
func (b *Backlog) Write(p []byte) {
	b.end += int64(len(p))
	size := len(b.buf)
	if len(p) >= size {
		// Only the last size bytes can stay.
		copy(b.buf, p[len(p)-size:])
		b.idx, b.histlen = 0, size
		return
	}
	n := copy(b.buf[b.idx:], p)
	if n < len(p) {
		copy(b.buf, p[n:])
	}
	b.idx = (b.idx + len(p)) % size
	b.histlen = min(b.histlen+len(p), size)
}

// Covers reports whether the stream from offset from on is held: from is
// between First and End+1 (End+1: nothing to send, the replica is up to
// date).
func (b *Backlog) Covers(from int64) bool {
	return from >= b.First() && from <= b.end+1
}

// AppendFrom appends to dst the bytes from offset from to End, which
// Covers must accept.
func (b *Backlog) AppendFrom(dst []byte, from int64) []byte {
	n := int(b.end - from + 1) // bytes to send
	if n <= 0 {
		return dst
	}
	size := len(b.buf)
	start := (b.idx - n + size) % size
	if start+n <= size {
		return append(dst, b.buf[start:start+n]...)
	}
	dst = append(dst, b.buf[start:]...)
	return append(dst, b.buf[:n-(size-start)]...)
}

// Resize changes the capacity to size bytes (at least MinSize), keeping
// the most recent bytes that fit (CONFIG SET repl-backlog-size).
func (b *Backlog) Resize(size int) {
	size = max(size, MinSize)
	if size == len(b.buf) {
		return
	}
	keep := min(b.histlen, size)
	nb := make([]byte, size)
	held := b.AppendFrom(make([]byte, 0, keep), b.end-int64(keep)+1)
	copy(nb, held)
	b.buf, b.idx, b.histlen = nb, keep%size, keep
}
