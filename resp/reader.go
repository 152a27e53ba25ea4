// Package resp reads client requests in the Redis protocol.
//
// The parser follows redis-server 7.0's processMultibulkBuffer and
// processInlineBuffer (networking.c): the same limits, the same error texts and
// the same leniencies, so that clients observe identical behaviour.
package resp

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/zredis/zredis/redisconv"
	"github.com/zredis/zredis/sds"
)

// Redis defaults and hard-coded protocol limits.
const (
	// DefaultMaxBulkLen is proto-max-bulk-len's default.
	DefaultMaxBulkLen int64 = 512 << 20
	// DefaultMaxQueryBuf is client-query-buffer-limit's default.
	DefaultMaxQueryBuf int64 = 1 << 30

	inlineMaxSize      = 64 << 10      // PROTO_INLINE_MAX_SIZE
	maxMultibulkLen    = math.MaxInt32 // Redis 7.0 rejects counts above INT_MAX
	unauthMaxMultibulk = 10
	unauthMaxBulk      = 16384
	// initialBufSize is the query buffer's size and the most one read
	// takes into it. Redis reads PROTO_IOBUF_LEN (16 KiB) into a new
	// query buffer and, from then on, the buffer's free room: jemalloc
	// gives 20 KiB for the 16 KiB and sds's header. A pipeline of sixteen
	// 1 KiB writes (17 KiB) is then one read and one write of replies, as
	// with Redis, instead of two of each.
	initialBufSize = 20 << 10
	// QueryBufSize is the query buffer's size while it holds no more
	// than one read (CLIENT LIST shows it as Redis's 16 KiB one).
	QueryBufSize = initialBufSize
	// BigArg is the length from which a bulk argument is read into an
	// allocation of its own (PROTO_MBULK_BIG_ARG): see ReadBatch.
	BigArg = 32 << 10
	// BigValue is the size from which an argument's allocation is
	// announced to the hook set with SetBigHook before it is made.
	BigValue = 1 << 20
	// bigArgGrowth is how much the allocation of a big argument whose
	// bytes have not all arrived grows at a time (from BigArg or four
	// times what had arrived), so that memory follows what the client
	// sent, not what it announced (see bigArgReach).
	bigArgGrowth = 4
	// bigArgReach: once what arrived is a 64th of a big argument, its
	// allocation goes straight to the exact length, so that a 100 MB
	// value is copied only 2.7 MB on the way (at 16, 10.7 MB, and its
	// SET took 77-93 ms against redis-server's 60-66). A client thus
	// makes the server allocate at most 64 times what it sent.
	bigArgReach   = 64
	maxEmptyReads = 100
	// bigCopyChunk is how much of a big argument growBig copies at a
	// time: small enough for a collection to get in between.
	bigCopyChunk = 256 << 10
	// argvKeepCap bounds the argument vectors kept for reuse, so one huge
	// command does not pin its argv for the life of the connection.
	argvKeepCap = 1024
	// spillMin is how many bytes of completed arguments of a command still
	// arriving must fill half the read buffer before they are moved out of
	// it (spill) instead of the buffer growing to hold the whole command.
	spillMin = 32 << 10
	// sliceHeader is the size of an argument in an argument list.
	sliceHeader = int64(unsafe.Sizeof([]byte(nil)))
)

// Limits bound what a client may send. Zero means the Redis default.
type Limits struct {
	MaxBulkLen  int64 // proto-max-bulk-len, default 512*1024*1024
	MaxQueryBuf int64 // client-query-buffer-limit, default 1<<30
}

func (l Limits) withDefaults() Limits {
	if l.MaxBulkLen <= 0 {
		l.MaxBulkLen = DefaultMaxBulkLen
	}
	if l.MaxQueryBuf <= 0 {
		l.MaxQueryBuf = DefaultMaxQueryBuf
	}
	return l
}

// ProtocolError is a malformed request. Its Error() is the text Redis sends
// after "-ERR ", e.g. "Protocol error: invalid multibulk length". After it the
// server replies and closes the connection. The text never contains CR or LF.
//
// ReadBatch returns a *ProtocolError; errors.As accepts a target of either
// *ProtocolError or ProtocolError.
type ProtocolError struct{ Msg string }

func (e ProtocolError) Error() string { return e.Msg }

// As lets errors.As fill a ProtocolError value target from a *ProtocolError.
func (e *ProtocolError) As(target any) bool {
	if t, ok := target.(*ProtocolError); ok {
		*t = *e
		return true
	}
	return false
}

// ErrQueryBufLimit is returned when the unprocessed input exceeds MaxQueryBuf.
// Redis closes the connection without a reply.
var ErrQueryBufLimit = errors.New("resp: client query buffer limit exceeded")

var (
	errInvalidMultibulk = &ProtocolError{"Protocol error: invalid multibulk length"}
	errInvalidBulk      = &ProtocolError{"Protocol error: invalid bulk length"}
	errTooBigMbulkCount = &ProtocolError{"Protocol error: too big mbulk count string"}
	errTooBigBulkCount  = &ProtocolError{"Protocol error: too big bulk count string"}
	errTooBigInline     = &ProtocolError{"Protocol error: too big inline request"}
	errUnbalancedQuotes = &ProtocolError{"Protocol error: unbalanced quotes in request"}
	errUnauthMultibulk  = &ProtocolError{"Protocol error: unauthenticated multibulk length"}
	errUnauthBulk       = &ProtocolError{"Protocol error: unauthenticated bulk length"}
)

const errExpectedDollarPfx = "Protocol error: expected '$', got '"

func errExpectedDollar(got byte) error {
	// addReplyErrorFormat maps CR and LF to spaces so the reply stays one line.
	if got == '\r' || got == '\n' {
		got = ' '
	}
	return &ProtocolError{errExpectedDollarPfx + string([]byte{got}) + "'"}
}

// span is an argument's position in Reader.buf; for a big argument in an
// allocation of its own, start is -1-i for Reader.exts[i] (and end 0).
type span struct{ start, end int }

// Reader parses client requests from a connection.
//
// Layout of buf: [0:r) is free, [r:pos) holds bytes already parsed whose
// arguments may still be in use (the last returned batch, or the completed
// elements of the command in progress), [pos:w) is unparsed input.
type Reader struct {
	rd    io.Reader
	buf   []byte
	small []byte // the initial buffer, returned to when a grown one is released
	// shared is the buffer of initialBufSize that the connections of one
	// event loop read into in turn (see LoopBuffers); onShared tells
	// that small is it, lent to this reader until DoneWithShared or
	// KeepShared.
	shared   *LoopBuffers
	onShared bool
	r        int
	pos      int
	w        int

	// State of a multibulk command whose elements have only partly arrived.
	// It persists across reads so no element is parsed twice, which keeps a
	// command with many arguments arriving in small pieces linear.
	multi    int64 // elements still expected; 0 when no multibulk command is in progress
	bulkLen  int64 // length of the bulk being read, -1 until its header is parsed
	cmdStart int   // where the command in progress begins
	args     []span
	// A big bulk (BigArg or longer) is read straight into big, which
	// becomes the argument: bigN bytes of it (with its CRLF) have arrived.
	big     []byte
	bigN    int64
	bigMin  int64  // BigArg; tests lower it to exercise the path with short input
	bigHook func() // SetBigHook's
	bigOut  bool   // a returned argument list held a big argument or spilled ones (see Forget)
	grown   int64  // bytes of big-argument allocations outgrown since Forget
	exts    [][]byte
	// done is the start of the argument list of a command of many
	// arguments that is still arriving: its completed arguments that left
	// the buffer (spill), in order, before those of r.args, as their
	// lengths (see spilledOwn). doneBufs are the allocations they share,
	// in order, and doneOwn the big arguments' own. spilled is the bytes
	// of those allocations.
	done     []uint32
	doneBufs [][]byte
	doneOwn  [][]byte
	spilled  int64

	lim        Limits
	unauth     bool
	err        error // sticky: the stream cannot be resynchronised
	ioErr      error // read error held back until the commands read with it are returned
	emptyReads int
	qbuf       atomic.Int64
	// alloc is the query buffer's allocation as Redis's would be (see
	// Allocated), large whether it outgrew the initial buffer or took a
	// big argument since the last Release: CLIENT LIST and the server's
	// cron read them from other goroutines (see Allocated, Large).
	alloc atomic.Int64
	large atomic.Bool
	peak  atomic.Int64 // the largest alloc since TakePeak
}

// NewReader returns a Reader that reads requests from rd.
func NewReader(rd io.Reader, lim Limits) *Reader {
	return &Reader{rd: rd, lim: lim.withDefaults(), bulkLen: -1, bigMin: BigArg}
}

// SetBigHook sets fn, called on the reading goroutine before an
// argument's allocation of BigValue bytes or more is made: the server
// lets its heap grow further while values that big arrive, so that a
// collection does not start in the middle of reading one
// (server/gcfloor.go).
func (r *Reader) SetBigHook(fn func()) { r.bigHook = fn }

// SetAuthenticated(false) applies Redis's limits for clients that have not
// authenticated while requirepass is set: a multibulk count above 10 yields
// "Protocol error: unauthenticated multibulk length" and a bulk longer than
// 16384 "Protocol error: unauthenticated bulk length". The default is true.
//
// While unauthenticated, ReadBatch returns one command per batch, because Redis
// runs each command (AUTH among them) before parsing the next one.
func (r *Reader) SetAuthenticated(ok bool) { r.unauth = !ok }

// SetLimits replaces the limits; it applies from the next element parsed.
func (r *Reader) SetLimits(lim Limits) { r.lim = lim.withDefaults() }

// Err is the protocol error (or ErrQueryBufLimit) the reader found after
// the commands it returned last, nil when there is none. ReadBatch would
// report it on the next call; a caller that waits for input before
// calling again must look here first, since the client may send nothing
// more.
func (r *Reader) Err() error { return r.err }

// Unparsed is the number of bytes received after the last command
// ReadBatch returned. Input may hold more whole commands than one batch
// returns (an unauthenticated client gets one command per batch, as Redis
// runs one before parsing the next); a caller that waits for input before
// calling ReadBatch again must call it first while this is not zero.
func (r *Reader) Unparsed() int { return r.w - r.pos }

// Buffered reports how many bytes the query buffer holds, as CLIENT LIST's qbuf
// does: while a batch is being executed (after ReadBatch returned it) that is
// the batch's bytes plus any unparsed remainder, as Redis trims its buffer only
// after running what it read; while waiting for input, the unparsed bytes. It
// may be called from any goroutine.
func (r *Reader) Buffered() int { return int(r.qbuf.Load()) }

// BatchDone tells the reader that the batch ReadBatch returned last has
// run: the query buffer then holds only the input not parsed yet (and
// what arrived of a big argument), as Redis's does once it trimmed what
// it processed, so that an idle client shows qbuf=0. It returns
// Buffered's new value. On the reading goroutine.
func (r *Reader) BatchDone() int {
	n := r.Waiting()
	r.qbuf.Store(int64(n))
	return n
}

// Waiting is what the query buffer holds besides the commands ReadBatch
// returned: the input not parsed yet and what arrived of a big argument.
// On the reading goroutine.
func (r *Reader) Waiting() int { return r.w - r.pos + int(r.bigN) }

// Head is the first n bytes (or fewer) of what the query buffer holds
// unparsed, or of the big argument arriving: what Redis's log shows of
// a query buffer that passed its limit. On the reading goroutine.
func (r *Reader) Head(n int) []byte {
	if r.big != nil {
		return r.big[:min(int64(n), r.bigN)]
	}
	return r.buf[r.pos:min(r.w, r.pos+n)]
}

// Allocated is the size of the query buffer's allocation as Redis's
// would be: the read buffer (its initial 16 KiB, or the larger one a
// pipeline needed), or while a big argument arrives its allocation, if
// larger (Redis reads a big argument into a query buffer of its size);
// 0 before the first read and after Release. It may be called from any
// goroutine.
func (r *Reader) Allocated() int64 { return r.alloc.Load() }

// Large reports whether the query buffer outgrew its initial size or
// took a big argument since the last Release: Redis's query buffer is
// then past PROTO_RESIZE_THRESHOLD, which its cron trims back without
// waiting for the client to go idle. It may be called from any
// goroutine.
func (r *Reader) Large() bool { return r.large.Load() }

// noteAlloc records the allocations' size after a change (Allocated).
func (r *Reader) noteAlloc() {
	n := int64(max(len(r.buf), len(r.big)))
	r.alloc.Store(n)
	if n > r.peak.Load() {
		r.peak.Store(n)
	}
}

// TakePeak returns the largest Allocated since the last call, and starts
// the next period from the current size: a big argument's allocation,
// gone once its command took it, still shows in the period it arrived,
// as Redis's cron samples a query buffer that it trims only later. It
// may be called from any goroutine.
func (r *Reader) TakePeak() int64 {
	cur := r.alloc.Load()
	return max(r.peak.Swap(cur), cur)
}

// Release frees the query buffer when it holds nothing (no input left to
// parse, no command half received), as Redis's clientsCronResizeQueryBuffer
// gives back the buffer of an idle client, or of one whose buffer grew
// for a large request: the next read allocates the initial buffer again.
// batch is the last batch ReadBatch returned, which the caller is done
// with: its argument lists, kept for reuse, would otherwise keep the
// buffer alive. It reports whether the buffer was released. On the
// reading goroutine, between batches.
func (r *Reader) Release(batch [][][]byte) bool {
	if r.buf == nil && r.alloc.Load() != 0 && r.err == nil {
		// Read through the loop's buffer (DoneWithShared): nothing to
		// free, but the figures Redis would show now go to 0.
		r.alloc.Store(0)
		r.large.Store(false)
		return true
	}
	if r.buf == nil || r.onShared || r.multi > 0 || r.big != nil || r.w != r.pos || r.err != nil {
		return false
	}
	for _, cmd := range batch[:cap(batch)] {
		clear(cmd[:cap(cmd)])
	}
	if len(r.buf) > initialBufSize {
		putBuf(r.buf)
	}
	r.buf, r.small = nil, nil
	r.r, r.pos, r.w, r.cmdStart = 0, 0, 0, 0
	r.large.Store(false)
	r.alloc.Store(0)
	r.qbuf.Store(0)
	return true
}

// ReadBatch blocks until at least one complete command is buffered, then parses
// and returns every complete command already in the buffer (a pipeline read in
// one go becomes one batch), appending to dst[:0].
//
// Each command is its argument list. Arguments alias the reader's buffer and
// stay valid only until the next ReadBatch call; the argument lists themselves
// (dst[i]) are reused by later calls. Callers may modify argument bytes in
// place (e.g. to fold a command name's case); appending to an argument never
// overwrites another, as each has cap == len. Keeping an argument past the
// next call is a bug: its bytes are reused, possibly for another connection
// (large buffers are pooled), so anything stored must be copied. Empty commands (inline empty line,
// "*0\r\n", "*-1\r\n") are skipped as Redis skips them.
//
// The exception, as in Redis's processMultibulkBuffer: a bulk argument of
// BigArg bytes or more is an allocation of its own, of exactly its length,
// that the reader never touches again (see IsOwned). A caller may keep it
// instead of copying it: a 100 MB SET stores the bytes the reader read.
//
// When the input holds complete commands followed by a protocol error,
// ReadBatch returns those commands with a nil error and reports the error on
// the next call. Protocol errors and ErrQueryBufLimit are final: every later
// call returns them again. Errors from the underlying reader are returned as
// they are, after the commands that arrived with them.
func (r *Reader) ReadBatch(dst [][][]byte) ([][][]byte, error) {
	r.Forget(dst)
	dst = dst[:0]
	if r.err != nil {
		return dst, r.err
	}
	for {
		// Nothing before the command in progress is referenced any more:
		// not the previous batch, nor input skipped since ("*0", empty lines).
		r.release()
		var err error
		dst, err = r.parse(dst)
		if err != nil {
			r.err = err
		}
		if len(dst) > 0 {
			r.qbuf.Store(int64(r.w-r.r) + r.bigN)
			return dst, nil
		}
		if err != nil {
			r.qbuf.Store(int64(r.w-r.r) + r.bigN)
			return dst, err
		}
		if r.ioErr != nil {
			err, r.ioErr = r.ioErr, nil
			return dst, err
		}
		r.release()
		if err := r.fill(); err != nil {
			return dst, err
		}
	}
}

// Forget drops the references that the argument lists of batch, a batch
// ReadBatch returned and the caller is done with, hold to big arguments:
// the lists are kept for reuse, and a 100 MB value a command deleted must
// not stay alive through a list. ReadBatch does it for the batch passed
// to it; a caller that waits before reading again calls it first.
//
// It returns the bytes of the big arguments it let go, and of the
// allocations they outgrew while arriving: garbage unless a command kept
// the argument, which the caller may want the collector to see to.
func (r *Reader) Forget(batch [][][]byte) (dropped int64) {
	dropped, r.grown = r.grown, 0
	if !r.bigOut {
		return dropped
	}
	r.bigOut = false
	all := batch[:cap(batch)]
	for i, cmd := range all {
		for _, a := range cmd[:cap(cmd)] {
			if int64(len(a)) >= r.bigMin {
				dropped += int64(len(a))
			}
		}
		clear(cmd[:cap(cmd)])
		if cap(cmd) > argvKeepCap {
			all[i] = nil // a command of many arguments: not kept for reuse
		}
	}
	return dropped
}

// Abandoned is, for a connection that closes, the bytes of allocations
// of the reader's own that become garbage: a buffer grown past the
// initial one, a big argument in progress and those it outgrew, and
// arguments spilled or read apart. The release of freed memory counts
// them, as it counts big arguments no command kept. The outgrown
// allocations are counted once: a Forget of the last batch after it
// (its replies were held when the connection closed) no longer reports
// them.
func (r *Reader) Abandoned() int64 {
	n := r.grown + int64(cap(r.big)) + r.spilled + int64(cap(r.done))*int64(unsafe.Sizeof(r.done[0])) + int64(cap(r.doneBufs)+cap(r.doneOwn))*sliceHeader
	r.grown = 0
	for _, e := range r.exts {
		n += int64(cap(e))
	}
	if cap(r.buf) > initialBufSize {
		n += int64(cap(r.buf))
	}
	return n
}

// IsOwned reports whether arg, an argument ReadBatch returned, is a big
// argument in an allocation of its own that the caller may keep.
func IsOwned(arg []byte) bool { return len(arg) >= BigArg }

// release marks everything before the command in progress as free. Only
// valid while no returned command refers to the buffer.
func (r *Reader) release() {
	if r.multi > 0 {
		r.r = r.cmdStart
	} else {
		r.r = r.pos
	}
}

// fill reads once from the underlying reader into the buffer.
func (r *Reader) fill() error {
	if r.big != nil {
		return r.fillBig()
	}
	r.makeRoom()
	r.noteAlloc()
	// While waiting, Redis's query buffer holds only unparsed bytes.
	r.qbuf.Store(int64(r.w - r.pos))
	// Like Redis, read at most a query buffer's worth at a time unless the
	// rest of a large bulk is pending, so a batch holds a bounded number
	// of commands.
	want := int64(initialBufSize)
	if r.multi > 0 && r.bulkLen >= 0 {
		if rem := r.bulkLen + 2 - int64(r.w-r.pos); rem > want {
			want = rem
		}
	}
	end := len(r.buf)
	if int64(end-r.w) > want {
		end = r.w + int(want)
	}
	n, readErr, err := r.readSome(r.buf[r.w:end])
	if err != nil {
		return err
	}
	r.w += n
	// Redis counts only what is not yet parsed: completed elements of the
	// command in progress have left its query buffer.
	if int64(r.w-r.pos) > r.lim.MaxQueryBuf {
		r.err = ErrQueryBufLimit
		return r.err
	}
	r.ioErr = readErr
	return nil
}

// readSome reads once into dst, reading again after a read that returned
// nothing and no error (at most maxEmptyReads times in a row). It returns
// n > 0 with the error that came with those bytes (kept for after they
// are parsed), or err when nothing was read.
func (r *Reader) readSome(dst []byte) (n int, readErr, err error) {
	for {
		got, rerr := r.rd.Read(dst)
		if got < 0 || got > len(dst) {
			return 0, nil, errors.New("resp: invalid Read count")
		}
		if got > 0 {
			r.emptyReads = 0
			return got, rerr, nil
		}
		if rerr != nil {
			return 0, nil, rerr
		}
		r.emptyReads++
		if r.emptyReads >= maxEmptyReads {
			return 0, nil, io.ErrNoProgress
		}
	}
}

// fillBig reads once into the big argument being received, growing its
// allocation when it is full: bigArgGrowth times larger each time, and
// straight to the exact length once that is at most bigArgGrowth times
// the next size or bigArgReach times what arrived, so a long value is
// copied at most a few times while arriving and never held twice once
// complete.
func (r *Reader) fillBig() error {
	want := r.bulkLen + 2
	r.qbuf.Store(r.bigN)
	if r.bigN == int64(len(r.big)) {
		r.grown += int64(len(r.big))
		r.big = r.growBig(r.big, want)
		r.noteAlloc()
	}
	n, readErr, err := r.readSome(r.big[r.bigN:])
	if err != nil {
		return err
	}
	r.bigN += int64(n)
	if r.bigN+int64(r.w-r.pos) > r.lim.MaxQueryBuf {
		r.err = ErrQueryBufLimit
		return r.err
	}
	r.ioErr = readErr
	return nil
}

// growBig returns a larger allocation for a big argument of want bytes
// (with its CRLF) holding what b holds, at least bigMin bytes.
func (r *Reader) growBig(b []byte, want int64) []byte {
	n := max(r.bigMin, int64(len(b))*bigArgGrowth)
	if n*bigArgGrowth >= want || int64(len(b))*bigArgReach >= want {
		n = want
	}
	n = min(n, want)
	r.announce(n)
	nb := make([]byte, n)
	// Not copy(nb, b): the compiler fuses make and copy into an
	// allocation left unzeroed, the copy, and one clear of the rest,
	// which for a 100 MB value is 70 MB of page faults in a loop that
	// a collection cannot stop. make alone zeroes only reused memory, a
	// chunk at a time. And the copy goes by bigCopyChunk: one memmove
	// cannot be preempted, and its first touch of the new pages faults
	// them in, so a collection starting meanwhile (this allocation may
	// well start one) spins signalling the goroutine until the copy is
	// done, where at each copyChunk call it stops the goroutine at once.
	// Measured with 100 MB SETs from a Python client: 10-13% of the
	// server's time was the collector spinning, the SET 88-93 ms
	// against redis-server's 70.
	for off := 0; off < len(b); off += bigCopyChunk {
		copyChunk(nb[off:len(b)], b[off:min(off+bigCopyChunk, len(b))])
	}
	return nb
}

// announce calls the hook before an argument's allocation of n bytes,
// when n is BigValue or more.
func (r *Reader) announce(n int64) {
	if n >= BigValue && r.bigHook != nil {
		r.bigHook()
	}
}

// copyChunk is copy as a call the collector can stop at: memmove is
// never preempted, but a Go function's entry is where a goroutine the
// collector asked to stop does so.
//
//go:noinline
func copyChunk(dst, src []byte) { copy(dst, src) }

// makeRoom ensures there is free space after w, compacting, shrinking or
// growing the buffer. Growth doubles the buffer only when it is full, so memory
// stays proportional to the input actually received, whatever length a client
// announces.
func (r *Reader) makeRoom() {
	if r.buf == nil {
		r.buf = r.smallBuf()
	}
	held := r.w - r.r
	if held == 0 {
		r.r, r.pos, r.w, r.cmdStart = 0, 0, 0, 0
		if len(r.buf) > initialBufSize {
			putBuf(r.buf)
			r.buf = r.smallBuf()
		}
		return
	}
	if len(r.buf) > initialBufSize && held <= initialBufSize/2 {
		// A large buffer is no longer needed for what is held: move back.
		old := r.buf
		r.moveTo(r.smallBuf())
		putBuf(old)
		return
	}
	if r.r > 0 && len(r.buf)-r.w < len(r.buf)/2 {
		r.moveTo(r.buf)
	}
	if r.w == len(r.buf) && r.multi > 0 && r.pos-r.cmdStart >= max(spillMin, len(r.buf)/2) {
		// A command of many arguments is arriving: its completed ones
		// leave the buffer, which then holds only what is not parsed
		// yet, as Redis's query buffer does once it made them objects.
		r.spill()
		r.moveTo(r.buf)
	}
	if r.w == len(r.buf) {
		r.large.Store(true)
		nb := getBuf(2 * len(r.buf))
		old := r.buf
		r.moveTo(nb)
		if len(old) > initialBufSize {
			putBuf(old)
		}
	}
}

// spilledOwn is the length r.done gives an argument that left the buffer
// in an allocation of its own (a big one, the next of r.doneOwn). Any
// other is an argument's length in the shared allocations of r.doneBufs,
// which hold the arguments one after another in their order: one
// allocation a spill, each argument whole in one, and each shorter than
// BigArg, so that no length is spilledOwn. A length of 4 bytes is what
// lets the list of a command of a million arguments take 4 MB while it
// arrives, where a place in an allocation (its index, start and end)
// took 12.
const spilledOwn = math.MaxUint32

// spill moves the completed arguments of the command in progress out of
// the buffer and frees their place in it. Without it the buffer grew, by
// doubling, to hold the whole command: one RPUSH of a million arguments
// took a buffer of the next power of two above the request and copies at
// every doubling, where Redis holds each argument as it completes and
// keeps only the unparsed input. The bytes of the arguments moved at
// once go to one allocation of their exact total, which they share, and
// their lengths to r.done, which grows as Redis's argv does: doubling,
// but never past the count the command announced. An argument in a
// shared allocation is not a big one that the caller may keep
// (IsOwned): it is shorter than BigArg.
//
// The lengths hold no pointers, so that the collector has nothing to
// trace in them while the command arrives; emit makes the argument list
// once, at the end. With the list itself growing here (a slice of each
// argument), a million arguments were a million pointers, and a
// collection that started while they arrived marked for 130-170 ms (the
// list's appends also ran the write barrier), on the second core the
// client needed too: make bench's huge RPUSH answered in 0.23-0.27 s
// instead of 0.09-0.10, and other clients' PING waited as long. (With
// spans of buffer offsets kept to the end instead, a million-argument
// RPUSH had held both them and the list, 40 bytes an argument, and the
// spans' outgrown copies: a peak of 108-116 MB of RSS against
// redis-server's 72-73.)
func (r *Reader) spill() {
	size := 0
	for _, a := range r.args {
		if a.start >= 0 {
			size += a.end - a.start
		}
	}
	var shared []byte // the arguments from the buffer, one after another
	if size > 0 {
		shared = make([]byte, 0, size)
	}
	if need := len(r.done) + len(r.args); need > cap(r.done) {
		// r.multi counts the arguments still to come: the lengths never
		// outgrow the command.
		n := min(max(2*cap(r.done), need, argvKeepCap), need+int(r.multi))
		done := make([]uint32, len(r.done), n)
		copy(done, r.done)
		r.done = done
	}
	for _, a := range r.args {
		if a.start < 0 {
			own := r.exts[-1-a.start]
			r.doneOwn = append(r.doneOwn, own)
			r.done = append(r.done, spilledOwn)
			r.spilled += int64(cap(own))
			continue
		}
		shared = append(shared, r.buf[a.start:a.end]...)
		r.done = append(r.done, uint32(a.end-a.start))
	}
	if size > 0 {
		r.doneBufs = append(r.doneBufs, shared)
	}
	r.spilled += int64(size)
	r.args = r.args[:0]
	clear(r.exts)
	r.exts = r.exts[:0]
	r.cmdStart = r.pos
	r.r = r.pos
}

// moveTo copies the held bytes [r:w) to the start of nb and makes nb the buffer.
func (r *Reader) moveTo(nb []byte) {
	shift := r.r
	r.w = copy(nb, r.buf[r.r:r.w])
	r.buf = nb
	if shift == 0 {
		return
	}
	r.r = 0
	r.pos -= shift
	r.cmdStart -= shift
	for i := range r.args {
		if r.args[i].start >= 0 {
			r.args[i].start -= shift
			r.args[i].end -= shift
		}
	}
}

// Grown buffers are power-of-two sized and pooled by size, so a connection that
// keeps sending large values does not reallocate them, while an idle one holds
// only its initial buffer.
var bufPools [bits.UintSize]sync.Pool

func getBuf(size int) []byte {
	c := bits.Len(uint(size - 1))
	if v := bufPools[c].Get(); v != nil {
		return *v.(*[]byte)
	}
	return make([]byte, 1<<c)
}

func putBuf(b []byte) {
	c := bits.Len(uint(len(b) - 1))
	if len(b) != 1<<c {
		return
	}
	bufPools[c].Put(&b)
}

// parse appends every complete command in buf[pos:w] to dst. It returns at the
// first incomplete element, or at a protocol error with the commands before it.
func (r *Reader) parse(dst [][][]byte) ([][][]byte, error) {
	buf := r.buf[:r.w]
	for {
		if r.multi == 0 {
			if r.pos >= len(buf) || (r.unauth && len(dst) > 0) {
				return dst, nil
			}
			r.cmdStart = r.pos
			if buf[r.pos] == '*' {
				var ok bool
				if dst, ok = r.fastMultibulk(buf, dst); ok {
					continue
				}
			} else {
				done, err := r.parseInline(buf)
				if !done {
					return dst, err
				}
				if len(r.args) > 0 {
					dst = r.emit(dst, buf)
				}
				continue
			}
			done, err := r.parseCount(buf)
			if !done {
				return dst, err
			}
			if r.multi == 0 {
				continue // "*0" or a negative count: Redis ignores the command
			}
		}
		for r.multi > 0 {
			if r.bulkLen < 0 {
				done, err := r.parseBulkLen(buf)
				if !done {
					return dst, err
				}
			}
			if r.bulkLen >= r.bigMin {
				if !r.bigArg(buf) {
					return dst, nil
				}
				continue
			}
			// Like Redis, the two bytes after the bulk are skipped unchecked.
			if int64(len(buf)-r.pos) < r.bulkLen+2 {
				return dst, nil
			}
			end := r.pos + int(r.bulkLen)
			r.args = append(r.args, span{start: r.pos, end: end})
			r.pos = end + 2
			r.bulkLen = -1
			r.multi--
		}
		dst = r.emit(dst, buf)
	}
}

// bigArg takes a big bulk argument whose length line was parsed: copied
// out of the buffer when it is all there, else read from here on into an
// allocation of its own (fillBig). It reports whether the argument is
// complete.
func (r *Reader) bigArg(buf []byte) bool {
	want := r.bulkLen + 2
	r.large.Store(true)
	if r.big == nil {
		have := int64(len(buf) - r.pos)
		if have >= want {
			r.announce(r.bulkLen)
			arg := make([]byte, r.bulkLen)
			copy(arg, buf[r.pos:])
			r.addExt(arg)
			r.pos += int(want)
			r.bulkLen = -1
			r.multi--
			return true
		}
		r.big = r.growBig(buf[r.pos:len(buf):len(buf)], want)
		r.bigN = have
		r.pos = len(buf)
		r.noteAlloc()
	}
	if r.bigN < want {
		return false
	}
	// Like Redis, the two bytes after the bulk are skipped unchecked.
	r.addExt(r.big[:r.bulkLen:r.bulkLen])
	r.big, r.bigN = nil, 0
	r.noteAlloc()
	r.bulkLen = -1
	r.multi--
	return true
}

// addExt appends a big argument in an allocation of its own to r.args.
func (r *Reader) addExt(arg []byte) {
	r.args = append(r.args, span{start: -1 - len(r.exts)})
	r.exts = append(r.exts, arg)
}

// emit appends the command held in r.args to dst.
func (r *Reader) emit(dst [][][]byte, buf []byte) [][][]byte {
	var cmd [][]byte
	if r.done != nil {
		// A command of many arguments: its list is made of those spilled,
		// then those in the buffer, and Forget lets it go.
		cmd = make([][]byte, len(r.done), len(r.done)+len(r.args))
		var shared []byte // the allocation being walked, from off
		off, nextBuf, nextOwn := 0, 0, 0
		for i, n := range r.done {
			if n == spilledOwn {
				cmd[i] = r.doneOwn[nextOwn]
				nextOwn++
				continue
			}
			if n > 0 && off == len(shared) {
				shared, off = r.doneBufs[nextBuf], 0
				nextBuf++
			}
			end := off + int(n)
			cmd[i] = shared[off:end:end]
			off = end
		}
		r.bigOut = true
	} else {
		cmd = spareArgv(dst, len(r.args))
	}
	for _, a := range r.args {
		switch {
		case a.start < 0:
			cmd = append(cmd, r.exts[-1-a.start])
			r.bigOut = true
		case int64(a.end-a.start) >= r.bigMin:
			// An inline argument (up to 64 KiB) is in the buffer: a big
			// one gets its own allocation too, as IsOwned promises.
			arg := make([]byte, a.end-a.start)
			copy(arg, buf[a.start:a.end])
			cmd = append(cmd, arg)
			r.bigOut = true
		default:
			cmd = append(cmd, buf[a.start:a.end:a.end])
		}
	}
	dst = append(dst, cmd)
	if cap(r.args) > argvKeepCap {
		r.args = nil
	} else {
		r.args = r.args[:0]
	}
	r.dropExts()
	return dst
}

// dropExts forgets the arguments held outside the buffer. The arguments
// returned keep the spilled ones alive until the caller is done.
func (r *Reader) dropExts() {
	r.done, r.doneBufs, r.doneOwn, r.spilled = nil, nil, nil, 0
	if len(r.exts) > 0 {
		clear(r.exts)
		r.exts = r.exts[:0]
	}
}

// spareArgv returns an empty argument list for a command of n arguments,
// reusing the one a previous batch left in dst's spare capacity.
func spareArgv(dst [][][]byte, n int) [][]byte {
	var cmd [][]byte
	if len(dst) < cap(dst) {
		cmd = dst[: len(dst)+1 : len(dst)+1][len(dst)][:0]
		if cap(cmd) > argvKeepCap && n <= argvKeepCap {
			cmd = nil
		}
	}
	if cap(cmd) < n {
		cmd = make([][]byte, 0, max(n, 4))
	}
	return cmd
}

// fastMultibulk parses the common case directly: a multibulk command at pos
// that is entirely buffered, with plain counts and lengths. It returns false,
// having consumed nothing, for anything else, which the general parser then
// handles with the exact Redis rules.
func (r *Reader) fastMultibulk(buf []byte, dst [][][]byte) ([][][]byte, bool) {
	if len(dst) == cap(dst) {
		return dst, false // let the general parser grow dst
	}
	p := r.pos
	cnt, cr, ok := smallLen(buf[p:])
	if !ok || cnt == 0 || cnt > argvKeepCap || (r.unauth && cnt > unauthMaxMultibulk) {
		return dst, false
	}
	maxBulk := r.lim.MaxBulkLen
	if r.unauth {
		maxBulk = min(maxBulk, unauthMaxBulk)
	}
	p += cr + 2
	cmd := spareArgv(dst, int(cnt))
	for ; cnt > 0; cnt-- {
		if p >= len(buf) || buf[p] != '$' {
			break
		}
		l, cr, ok := smallLen(buf[p:])
		if !ok || l > maxBulk || l >= r.bigMin || l > int64(len(buf)) {
			break
		}
		start := p + cr + 2
		end := start + int(l)
		if end+2 > len(buf) {
			break
		}
		cmd = append(cmd, buf[start:end:end])
		p = end + 2
	}
	if cnt > 0 {
		// Keep the argument list in the spare slot for the next attempt.
		dst[: len(dst)+1 : len(dst)+1][len(dst)] = cmd[:0]
		return dst, false
	}
	r.pos = p
	return append(dst, cmd), true
}

// lineEnd finds where a "*count" or "$len" line starting at b[0] ends, as
// Redis does with strchr(p, '\r'): a NUL byte ends that search, so a line with
// a NUL before its CR counts as not found. It reports i, the index of the CR,
// or ok == false when the line is not complete yet, or err when the pending
// bytes exceed the inline limit without a line (tooBig is that error).
//
// Redis only requires some byte after the CR, not that it is LF.
func lineEnd(b []byte, tooBig error) (i int, ok bool, err error) {
	i = bytes.IndexByte(b, '\r')
	if i < 0 || hasNUL(b[:i]) {
		if len(b) > inlineMaxSize {
			return 0, false, tooBig
		}
		return 0, false, nil
	}
	if i+1 >= len(b) {
		return 0, false, nil
	}
	return i, true, nil
}

func hasNUL(b []byte) bool { return bytes.IndexByte(b, 0) >= 0 }

// smallLen parses the fast-path form of a count or length line at b[1:]: one
// to 18 digits without a leading zero (or a lone "0") then CR and one more
// byte. It returns the value and the index of the CR, or ok == false to defer
// to the exact Redis rules.
func smallLen(b []byte) (n int64, cr int, ok bool) {
	if len(b) < 4 {
		return 0, 0, false
	}
	c := b[1]
	if c == '0' {
		if b[2] == '\r' {
			return 0, 2, true
		}
		return 0, 0, false
	}
	if c < '1' || c > '9' {
		return 0, 0, false
	}
	n = int64(c - '0')
	for i := 2; i < len(b); i++ {
		c = b[i]
		if c >= '0' && c <= '9' {
			if i > 18 {
				break // might overflow: let string2ll decide
			}
			n = n*10 + int64(c-'0')
			continue
		}
		if c == '\r' && i+1 < len(b) {
			return n, i, true
		}
		break
	}
	return 0, 0, false
}

// parseCount parses a "*count" line at pos. done is false when more input is
// needed or on error.
func (r *Reader) parseCount(buf []byte) (done bool, err error) {
	b := buf[r.pos:]
	ll, cr, ok := smallLen(b)
	if !ok {
		cr, ok, err = lineEnd(b, errTooBigMbulkCount)
		if !ok {
			return false, err
		}
		ll, ok = redisconv.ParseInt(b[1:cr])
		if !ok {
			return false, errInvalidMultibulk
		}
	}
	if ll > maxMultibulkLen {
		return false, errInvalidMultibulk
	}
	if ll > unauthMaxMultibulk && r.unauth {
		return false, errUnauthMultibulk
	}
	r.pos += cr + 2
	if ll > 0 {
		r.multi = ll
		r.bulkLen = -1
		r.args = r.args[:0]
		r.dropExts()
	}
	return true, nil
}

// parseBulkLen parses a "$len" line at pos.
func (r *Reader) parseBulkLen(buf []byte) (done bool, err error) {
	b := buf[r.pos:]
	if len(b) == 0 {
		return false, nil
	}
	var ll int64
	var cr int
	ok := false
	if b[0] == '$' {
		ll, cr, ok = smallLen(b)
	}
	if !ok {
		cr, ok, err = lineEnd(b, errTooBigBulkCount)
		if !ok {
			return false, err
		}
		if b[0] != '$' {
			return false, errExpectedDollar(b[0])
		}
		ll, ok = redisconv.ParseInt(b[1:cr])
		if !ok || ll < 0 {
			return false, errInvalidBulk
		}
	}
	if ll > r.lim.MaxBulkLen {
		return false, errInvalidBulk
	}
	if ll > unauthMaxBulk && r.unauth {
		return false, errUnauthBulk
	}
	r.pos += cr + 2
	r.bulkLen = ll
	return true, nil
}

// parseInline parses an inline command: a line ending in LF (an optional CR
// before it is dropped), split like sdssplitargs. Arguments are unescaped in
// place in the buffer, which is safe because an unescaped argument is never
// longer than its source.
func (r *Reader) parseInline(buf []byte) (done bool, err error) {
	b := buf[r.pos:]
	i := bytes.IndexByte(b, '\n')
	// Redis searches with strchr, which stops at a NUL byte.
	if i < 0 || hasNUL(b[:i]) {
		if len(b) > inlineMaxSize {
			return false, errTooBigInline
		}
		return false, nil
	}
	end := i
	if end > 0 && b[end-1] == '\r' {
		end--
	}
	args, ok := splitArgs(b[:end], r.pos, r.args[:0])
	r.args = args
	if !ok {
		r.args = r.args[:0]
		return false, errUnbalancedQuotes
	}
	r.pos += i + 1
	return true, nil
}

// plainEnd marks the bytes that end the plain (unquoted, escape-free) prefix
// of an inline token: the token separators of sdssplitargs and the quotes.
var plainEnd = [256]bool{' ': true, '\n': true, '\r': true, '\t': true, '"': true, '\'': true}

// byteAt returns line[i], or the terminating NUL of the C string Redis scans.
func byteAt(line []byte, i int) byte {
	if i < len(line) {
		return line[i]
	}
	return 0
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// splitArgs splits line as Redis's sdssplitargs does, writing each unescaped
// argument over its own source bytes and appending its span (offset by base)
// to args. ok is false for unbalanced quotes, or a closing quote followed by
// something other than a space. line holds no NUL byte.
func splitArgs(line []byte, base int, args []span) (_ []span, ok bool) {
	n := len(line)
	i := 0
	for {
		for i < n && sds.IsSpace(line[i]) {
			i++
		}
		if i >= n {
			return args, true
		}
		start := i
		for i < n && !plainEnd[line[i]] {
			i++
		}
		if i >= n || line[i] != '"' && line[i] != '\'' {
			// A plain token: nothing to unescape.
			args = append(args, span{start: base + start, end: base + i})
			if i < n {
				i++
			}
			continue
		}
		var o int
		if o, i, ok = quotedToken(line, i); !ok {
			return args, false
		}
		args = append(args, span{start: base + start, end: base + o})
	}
}

// quotedToken finishes a token whose bytes before i are plain and line[i] is
// an opening quote, unescaping in place. It returns the end of the unescaped
// token and where scanning resumes.
func quotedToken(line []byte, i int) (o, next int, ok bool) {
	n := len(line)
	o = i
	inq, insq := false, false
	for {
		c := byteAt(line, i)
		switch {
		case inq:
			if c == '\\' && byteAt(line, i+1) == 'x' {
				if hi, ok := hexVal(byteAt(line, i+2)); ok {
					if lo, ok := hexVal(byteAt(line, i+3)); ok {
						line[o] = hi<<4 | lo
						o++
						i += 4
						continue
					}
				}
			}
			switch {
			case c == '\\' && i+1 < n:
				i++
				e := line[i]
				switch e {
				case 'n':
					e = '\n'
				case 'r':
					e = '\r'
				case 't':
					e = '\t'
				case 'b':
					e = '\b'
				case 'a':
					e = '\a'
				}
				line[o] = e
				o++
			case c == '"':
				if i+1 < n && !sds.IsSpace(line[i+1]) {
					return 0, 0, false
				}
				return o, i + 1, true
			case i >= n:
				return 0, 0, false // unterminated quotes
			default:
				line[o] = c
				o++
			}
		case insq:
			switch {
			case c == '\\' && byteAt(line, i+1) == '\'':
				i++
				line[o] = '\''
				o++
			case c == '\'':
				if i+1 < n && !sds.IsSpace(line[i+1]) {
					return 0, 0, false
				}
				return o, i + 1, true
			case i >= n:
				return 0, 0, false
			default:
				line[o] = c
				o++
			}
		default:
			switch {
			case i >= n:
				return o, i, true
			case c == ' ' || c == '\n' || c == '\r' || c == '\t':
				return o, i + 1, true
			case c == '"':
				inq = true
			case c == '\'':
				insq = true
			default:
				line[o] = c
				o++
			}
		}
		i++
	}
}
