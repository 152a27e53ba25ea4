package resp

// LoopBuffers is the read buffer that the connections of one event loop
// share, as Valkey 8 shares one query buffer per thread: a connection
// reads into it, runs what it read, and gives it back for the next one
// to read into, so an idle connection holds no read buffer at all (with
// one of its own, 10,000 idle connections held 4 KiB each of touched
// buffer, 20 KiB each once the collector had reused the memory). A
// connection keeps a buffer only while it holds input it has not run: a
// command half received, or a batch that waits (a blocked command, CLIENT
// PAUSE, the AOF, a script serving the loop); the loop then takes a
// spare for the next reader.
//
// It belongs to one goroutine, the loop's: a Reader uses it (UseLoop)
// only while that goroutine calls ReadBatch.
type LoopBuffers struct {
	cur    []byte   // the buffer lent to the next reader; nil: take a spare
	spares [][]byte // buffers given back by readers that had kept one
}

// maxSpareBufs bounds the buffers a loop keeps for its readers: enough
// for the few connections that keep one at a time in a pipelined
// workload, without holding memory for a burst of them.
const maxSpareBufs = 16

// NewLoopBuffers returns the buffers of one loop.
func NewLoopBuffers() *LoopBuffers { return &LoopBuffers{} }

// lend returns the buffer a reader reads into.
func (lb *LoopBuffers) lend() []byte {
	if lb.cur == nil {
		if n := len(lb.spares); n > 0 {
			lb.cur, lb.spares[n-1] = lb.spares[n-1], nil
			lb.spares = lb.spares[:n-1]
		} else {
			lb.cur = make([]byte, initialBufSize)
		}
	}
	return lb.cur
}

// giveBack takes a reader's own buffer of initialBufSize for later use.
func (lb *LoopBuffers) giveBack(b []byte) {
	if len(lb.spares) < maxSpareBufs {
		lb.spares = append(lb.spares, b)
	}
}

// UseLoop makes the reader read into lb's buffer whenever it holds no
// buffer of its own (nil: into its own, always). Between batches, on the
// goroutine that calls ReadBatch.
func (r *Reader) UseLoop(lb *LoopBuffers) {
	r.KeepShared()
	r.shared = lb
}

// smallBuf is the buffer of initialBufSize the reader reads into when a
// larger one is not needed: its own, or the loop's, lent.
func (r *Reader) smallBuf() []byte {
	if r.small == nil {
		if r.shared != nil {
			r.small, r.onShared = r.shared.lend(), true
		} else {
			r.small = make([]byte, initialBufSize)
		}
	}
	return r.small
}

// DoneWithShared tells the reader that the batch ReadBatch returned last
// has run and the loop is moving on to other connections. A reader that
// holds nothing (no input left to parse, no command half received) lets
// go of its buffer: the loop's goes back to the loop, one of its own
// to the loop's spares. One that holds input keeps the loop's buffer as
// its own (KeepShared). On the loop's goroutine.
func (r *Reader) DoneWithShared() {
	if r.shared == nil || r.buf == nil {
		return
	}
	holds := r.multi > 0 || r.big != nil || r.w != r.pos || r.err != nil
	grown := len(r.buf) != initialBufSize
	switch {
	case holds && grown:
		// The input is in the grown buffer: the loop's is not in use.
		if r.onShared {
			r.small, r.onShared = nil, false
		}
		return
	case holds:
		r.KeepShared()
		return
	}
	if grown {
		putBuf(r.buf)
	}
	if r.small != nil && !r.onShared {
		r.shared.giveBack(r.small)
	}
	r.onShared = false
	r.buf, r.small = nil, nil
	r.r, r.pos, r.w, r.cmdStart = 0, 0, 0, 0
}

// KeepShared makes the loop's buffer, if the reader holds it, the
// reader's own, for a batch that is still in use, or input still to be
// parsed, while the loop serves other connections: the loop lends a
// spare to the next reader. On the loop's goroutine.
func (r *Reader) KeepShared() {
	if r.onShared {
		r.shared.cur = nil
		r.onShared = false
	}
}
