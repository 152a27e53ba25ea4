package zmqpub

// The outbox: a bounded, ordered queue of expiry messages between the
// keyspace (which Puts under its lock) and the publisher (which takes them
// with Next).
//
// Order. Messages leave in the order they were Put. Memory holds the
// oldest segment and the spool the segments after it: once anything is in
// the spool, every new message goes to the spool's tail until the spool
// has drained back into memory. Requeue puts messages back in front of
// memory.
//
// Accounting. Every message Put is, at any moment, exactly one of:
// returned by Next (and not requeued), queued in memory, in the spool, or
// dropped. Stats reports the last three; "in the spool" includes messages
// accepted for the spool that its goroutine has not yet written.
//
// Goroutines. With a spool, one goroutine (started by OpenOutbox, stopped
// by Close) owns the file: it writes what Put spilled, refills memory from
// the spool's head when memory runs half empty, truncates the file when it
// is fully read and compacts it when most of it has been delivered. File
// I/O never happens under the mutex that Put takes.

import (
	"errors"
	"sync"
	"time"
)

// Message is one expiry message as it waits in the outbox: the three
// frames of the wire format, the message id (frame 4) when the operator
// asked for ids, the deadline of the key it describes and its place in
// the expiry journal.
type Message struct {
	Frames   [3][]byte
	ID       []byte // frame 4 (AppendMessageID); nil: three frames
	Deadline int64  // Unix ms at which the key was due (0: unknown)
	Seq      uint64 // the journal's sequence number (0: not journaled)
}

// Size is the sum of the frame lengths: the bytes the message occupies
// in the outbox's memory bounds and on the wire (framing excluded).
func (m *Message) Size() int {
	return len(m.Frames[0]) + len(m.Frames[1]) + len(m.Frames[2]) + len(m.ID)
}

// wireFrames is the number of frames the message has on the wire.
func (m *Message) wireFrames() int {
	if m.ID != nil {
		return 4
	}
	return 3
}

// wireFrame is frame i (0-based) on the wire.
func (m *Message) wireFrame(i int) []byte {
	if i == 3 {
		return m.ID
	}
	return m.Frames[i]
}

// OutboxConfig sets the outbox's bounds and spool.
type OutboxConfig struct {
	// HWM is the number of messages held in memory; past it, messages
	// spill to the spool. <= 0: no count bound.
	HWM int
	// MaxMemBytes bounds the frame bytes held in memory; past it, spill.
	// 0: no byte bound.
	MaxMemBytes int64
	// SpoolPath is the spool file; "" disables the spool.
	SpoolPath string
	// SpoolMaxBytes bounds the spool's unread records, framing included;
	// 0: nothing new is spilled (a spool left by a previous run is still
	// replayed).
	SpoolMaxBytes int64
	// Logf receives warnings, rate-limited by the outbox; Put may call it
	// on its caller's goroutine (at most once a second). May be nil.
	Logf func(format string, args ...any)
}

// OutboxStats is a snapshot of the outbox's counters.
type OutboxStats struct {
	Queued, QueuedBytes   int64 // in memory now
	Spooled, SpooledBytes int64 // in the spool now (frame bytes)
	SpilledTotal          int64 // messages ever written to the spool
	Dropped, DroppedBytes int64 // messages lost since start: past both bounds, after Close, or to spool I/O errors
}

const (
	// maxPendingSpillBytes bounds the messages Put has handed to the spool
	// goroutine that it has not yet written: if the disk cannot keep up,
	// Put drops rather than wait or grow memory without bound.
	maxPendingSpillBytes = 64 << 20
	// refillMaxMsgs and refillMaxBytes bound one read from the spool, so
	// the mutex is held briefly when the batch is moved into memory.
	refillMaxMsgs  = 4096
	refillMaxBytes = 8 << 20
	logInterval    = time.Second
)

// Outbox is safe for concurrent use.
type Outbox struct {
	logf func(format string, args ...any)

	mu           sync.Mutex
	hwm          int
	maxMem       int64
	spoolMax     int64
	mem          msgRing
	queuedBytes  int64
	spooled      int64 // messages in the spool: file, pending and in flight
	spooledBytes int64
	pending      spillQueue // accepted for the spool, not yet taken by the spool goroutine
	spilledTotal int64
	dropped      int64
	droppedBytes int64
	closed       bool
	waiters      int // Next calls waiting on avail
	dropLog      rateLog
	spillLog     rateLog

	avail     chan struct{} // capacity 1: memory may hold a message for a waiting Next
	spoolKick chan struct{} // capacity 1: the spool goroutine has work
	closing   chan struct{} // closed by Close
	spoolDone chan struct{} // closed when the spool goroutine has returned
	closeDone chan struct{} // closed when Close has finished
	closeErr  error

	spool       *spoolFile // owned by the spool goroutine; by Close once it has stopped
	spoolErrLog time.Time  // last spool error line; owned like spool
}

// OpenOutbox opens the outbox. With a spool path, a spool file left by a
// previous run is replayed: its messages come out of Next before any new
// one. A spool file that is unreadable as a whole (not a spool, I/O
// error) is an error; bad records inside it are logged and skipped as the
// spool format describes.
func OpenOutbox(cfg OutboxConfig) (*Outbox, error) {
	o := &Outbox{
		logf:      cfg.Logf,
		hwm:       cfg.HWM,
		maxMem:    cfg.MaxMemBytes,
		spoolMax:  cfg.SpoolMaxBytes,
		avail:     make(chan struct{}, 1),
		spoolKick: make(chan struct{}, 1),
		closing:   make(chan struct{}),
		spoolDone: make(chan struct{}),
		closeDone: make(chan struct{}),
	}
	if o.logf == nil {
		o.logf = func(string, ...any) {}
	}
	if cfg.SpoolPath == "" {
		close(o.spoolDone)
		return o, nil
	}
	s, count, bytes, err := openSpool(cfg.SpoolPath, o.logf)
	if err != nil {
		return nil, err
	}
	if count > 0 {
		o.logf("zmq outbox: spool %s: replaying %d messages (%d bytes) left by a previous run", cfg.SpoolPath, count, bytes)
	}
	o.spool, o.spooled, o.spooledBytes = s, count, bytes
	go o.runSpool()
	o.kickSpool()
	return o, nil
}

// Put queues m. It never blocks on I/O and may be called from any
// goroutine, under any lock. Its cost, all under the outbox mutex, which
// nothing holds for longer than a few slice operations:
//   - memory path: a ring-buffer append and counter updates, O(1)
//     amortized (the ring doubles when full; it never shrinks, so copying
//     stops once it has reached HWM);
//   - spill path: an append to the spill queue, handed to the spool
//     goroutine with a non-blocking channel send; the queue grows by
//     fixed chunks and never copies what it holds;
//   - drop path: counter updates.
//
// At most once a second per kind (spill started, drops) it calls Logf
// after releasing the mutex. When memory is within its bounds and the
// spool is empty, m goes to memory; otherwise to the spool if its bound
// allows and its goroutine is less than 64 MiB behind; otherwise m is
// dropped and counted. After Close, Put drops. It reports whether m was
// queued (false: dropped).
func (o *Outbox) Put(m Message) bool {
	size := int64(m.Size())
	queued := true
	o.mu.Lock()
	switch {
	case o.closed:
		queued = false
		o.dropLocked(1, size, "outbox closed")
	case o.spooled == 0 && o.memRoomLocked(size):
		o.mem.pushBack(m)
		o.queuedBytes += size
		o.signalAvailLocked()
	case o.spoolRoomLocked(size):
		o.pending.push(m, size)
		if o.spooled == 0 {
			o.spillLog.start = true
		}
		o.spooled++
		o.spooledBytes += size
		o.spilledTotal++
		o.spillLog.count++
		o.spillLog.bytes += size
		o.kickSpool()
	default:
		queued = false
		o.dropLocked(1, size, o.dropReasonLocked(size))
	}
	line, args := o.takeLogLocked()
	o.mu.Unlock()
	if line != "" {
		o.logf(line, args...)
	}
	return queued
}

// memRoomLocked reports whether memory can take a message of size bytes.
func (o *Outbox) memRoomLocked(size int64) bool {
	return (o.hwm <= 0 || o.mem.len() < o.hwm) &&
		(o.maxMem <= 0 || o.queuedBytes+size <= o.maxMem)
}

// spoolRoomLocked reports whether the spool can take a message of size
// bytes: the spool exists, the records it holds (with their framing) stay
// within SpoolMaxBytes, and the spool goroutine is not too far behind.
func (o *Outbox) spoolRoomLocked(size int64) bool {
	if o.spool == nil || o.spoolMax <= 0 || size > maxRecordFrameBytes {
		return false
	}
	if o.spooledBytes+(o.spooled+1)*recordOverhead+size > o.spoolMax {
		return false
	}
	return o.pending.n == 0 || o.pending.bytes+size <= maxPendingSpillBytes
}

// dropReasonLocked says why a message of size bytes fits nowhere.
func (o *Outbox) dropReasonLocked(size int64) string {
	switch {
	case o.spool == nil || o.spoolMax <= 0:
		return "memory full, no spool"
	case size > maxRecordFrameBytes:
		return "message too large for the spool"
	case o.spooledBytes+(o.spooled+1)*recordOverhead+size > o.spoolMax:
		return "memory and spool full"
	default:
		return "spool writer behind the disk"
	}
}

func (o *Outbox) dropLocked(n, size int64, reason string) {
	o.dropped += n
	o.droppedBytes += size
	o.dropLog.count += n
	o.dropLog.bytes += size
	o.dropLog.reason = reason
}

// takeLogLocked returns at most one pending log line, at most one per
// logInterval per kind. Drops since the last line are summed into the next
// one; INFO has the exact totals.
func (o *Outbox) takeLogLocked() (string, []any) {
	if o.dropLog.count == 0 && !o.spillLog.start {
		return "", nil
	}
	now := time.Now()
	if o.dropLog.count > 0 && now.Sub(o.dropLog.last) >= logInterval {
		args := []any{o.dropLog.count, o.dropLog.bytes, o.dropLog.reason, o.mem.len(), o.spooled}
		o.dropLog.last, o.dropLog.count, o.dropLog.bytes = now, 0, 0
		return "zmq outbox: dropped %d expiry messages (%d bytes) since the last report: %s (queued %d, spooled %d)", args
	}
	if o.spillLog.start && now.Sub(o.spillLog.last) >= logInterval {
		args := []any{o.mem.len(), o.queuedBytes, o.spillLog.count, o.spillLog.bytes}
		o.spillLog.last, o.spillLog.count, o.spillLog.bytes, o.spillLog.start = now, 0, 0, false
		return "zmq outbox: memory full (queued %d, %d bytes), spilling to the spool (%d messages, %d bytes since the last report)", args
	}
	return "", nil
}

// rateLog is the state of one rate-limited log line.
type rateLog struct {
	last   time.Time
	count  int64
	bytes  int64
	start  bool   // spilling (re)started since the last line
	reason string // why the latest message was dropped
}

// Next returns the oldest message, waiting until there is one. It
// returns false when stop is closed or the outbox is closed. The caller
// owns the message: it either delivers it or hands it back with Requeue.
func (o *Outbox) Next(stop <-chan struct{}) (Message, bool) {
	waiting := false
	for {
		select {
		case <-stop:
			if waiting {
				o.mu.Lock()
				o.waiters--
				// The wake-up this call may have consumed belongs to
				// another waiter now.
				if o.mem.len() > 0 {
					o.signalAvailLocked()
				}
				o.mu.Unlock()
			}
			return Message{}, false
		default:
		}
		o.mu.Lock()
		if waiting {
			o.waiters--
			waiting = false
		}
		if o.closed {
			o.mu.Unlock()
			return Message{}, false
		}
		if o.mem.len() > 0 {
			m := o.mem.popFront()
			o.queuedBytes -= int64(m.Size())
			if o.spooled > 0 && o.wantsRefillLocked() {
				o.kickSpool()
			}
			if o.mem.len() > 0 {
				o.signalAvailLocked() // another waiting Next may take the next one
			}
			o.mu.Unlock()
			return m, true
		}
		if o.spooled > 0 {
			o.kickSpool()
		}
		o.waiters++
		waiting = true
		o.mu.Unlock()
		select {
		case <-stop:
		case <-o.avail:
		case <-o.closing:
		}
	}
}

// Requeue puts ms back at the head of the outbox, in the given order,
// ahead of everything queued: they were taken by Next but not delivered.
// Memory may exceed HWM until they leave again. After Close they are
// dropped and counted.
func (o *Outbox) Requeue(ms []Message) {
	if len(ms) == 0 {
		return
	}
	o.mu.Lock()
	if o.closed {
		var size int64
		for i := range ms {
			size += int64(ms[i].Size())
		}
		o.dropLocked(int64(len(ms)), size, "requeued after Close")
	} else {
		for i := len(ms) - 1; i >= 0; i-- {
			o.mem.pushFront(ms[i])
			o.queuedBytes += int64(ms[i].Size())
		}
		o.signalAvailLocked()
	}
	line, args := o.takeLogLocked()
	o.mu.Unlock()
	if line != "" {
		o.logf(line, args...)
	}
}

// SetLimits changes the bounds at run time. Lowering them drops nothing:
// memory or spool above a new bound only stops taking new messages until
// it has drained below it.
func (o *Outbox) SetLimits(hwm int, maxMemBytes, spoolMaxBytes int64) {
	o.mu.Lock()
	o.hwm, o.maxMem, o.spoolMax = hwm, maxMemBytes, spoolMaxBytes
	o.kickSpool() // more room in memory may mean a refill
	o.mu.Unlock()
}

// Stats returns the current counters; they are consistent with each other.
func (o *Outbox) Stats() OutboxStats {
	o.mu.Lock()
	defer o.mu.Unlock()
	return OutboxStats{
		Queued:       int64(o.mem.len()),
		QueuedBytes:  o.queuedBytes,
		Spooled:      o.spooled,
		SpooledBytes: o.spooledBytes,
		SpilledTotal: o.spilledTotal,
		Dropped:      o.dropped,
		DroppedBytes: o.droppedBytes,
	}
}

// Close stops the outbox. Waiting Next calls return false and later Puts
// and Requeues drop. With a spool, what memory holds is written in front
// of what the spool holds (a new file, fsynced and renamed into place,
// regardless of SpoolMaxBytes), so the next OpenOutbox replays every
// message not delivered, in order; without one, memory is dropped and
// counted. Close the publisher first so that its undelivered messages are
// requeued before this. Close is idempotent; every call returns the first
// call's result.
func (o *Outbox) Close() error {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		<-o.closeDone
		return o.closeErr
	}
	o.closed = true
	close(o.closing)
	o.mu.Unlock()
	<-o.spoolDone

	// Memory moves to the spool (or, without one, to the drops) in one
	// step, so that Stats add up at every moment; closeSpool moves what
	// it fails to save from the spool to the drops.
	o.mu.Lock()
	front := make([]Message, 0, o.mem.len())
	var frontBytes int64
	for o.mem.len() > 0 {
		m := o.mem.popFront()
		frontBytes += int64(m.Size())
		front = append(front, m)
	}
	o.queuedBytes = 0
	if o.spool == nil {
		if len(front) > 0 {
			o.dropLocked(int64(len(front)), frontBytes, "closed without a spool")
		}
	} else {
		o.spooled += int64(len(front))
		o.spooledBytes += frontBytes
	}
	o.mu.Unlock()

	var err error
	if o.spool == nil {
		if len(front) > 0 {
			o.logf("zmq outbox: closing without a spool: %d queued expiry messages (%d bytes) dropped", len(front), frontBytes)
		}
	} else {
		err = o.closeSpool(front)
	}
	o.closeErr = err
	close(o.closeDone)
	return err
}

// closeSpool saves front (already counted as spooled) ahead of the
// spool's records, fsyncs and closes the file.
func (o *Outbox) closeSpool(front []Message) error {
	s := o.spool
	lostFromSpool := func(n, size int64, reason string) {
		o.mu.Lock()
		o.spooled -= n
		o.spooledBytes -= size
		o.dropLocked(n, size, reason)
		o.mu.Unlock()
	}
	fits := front[:0]
	for _, m := range front {
		if size := int64(m.Size()); size > maxRecordFrameBytes {
			o.logf("zmq outbox: closing: a %d-byte expiry message is too large for the spool, dropped", size)
			lostFromSpool(1, size, "too large for the spool")
			continue
		}
		fits = append(fits, m)
	}
	front = fits
	var err error
	switch {
	case len(front) > 0 || (s.head > spoolHeaderSize && !s.consumed()):
		if err = s.rewrite(front); err != nil {
			o.logf("zmq outbox: saving %d queued expiry messages to the spool: %v; they are dropped", len(front), err)
			var size int64
			for i := range front {
				size += int64(front[i].Size())
			}
			lostFromSpool(int64(len(front)), size, "spool I/O error")
		}
	case s.consumed():
		err = s.reset()
	}
	return errors.Join(err, s.sync(), s.close())
}

// wantsRefillLocked reports whether memory has drained enough (empty, or
// at most half full on both bounds) to be worth a read from the spool.
func (o *Outbox) wantsRefillLocked() bool {
	n := o.mem.len()
	return n == 0 ||
		((o.hwm <= 0 || n <= o.hwm/2) && (o.maxMem <= 0 || o.queuedBytes <= o.maxMem/2))
}

// refillBudgetLocked is how much one refill may move into memory.
func (o *Outbox) refillBudgetLocked() (msgs int, bytes int64, atLeastOne bool) {
	msgs, bytes = refillMaxMsgs, refillMaxBytes
	if o.hwm > 0 {
		msgs = min(msgs, max(0, o.hwm-o.mem.len()))
	}
	if o.maxMem > 0 {
		bytes = min(bytes, max(0, o.maxMem-o.queuedBytes))
	}
	atLeastOne = o.mem.len() == 0
	if atLeastOne {
		msgs = max(msgs, 1)
	}
	return msgs, bytes, atLeastOne
}

func (o *Outbox) signalAvailLocked() {
	if o.waiters > 0 {
		select {
		case o.avail <- struct{}{}:
		default:
		}
	}
}

func (o *Outbox) kickSpool() {
	select {
	case o.spoolKick <- struct{}{}:
	default:
	}
}

// runSpool is the spool goroutine: it owns o.spool until Close.
func (o *Outbox) runSpool() {
	defer close(o.spoolDone)
	var spare [][]Message
	for {
		select {
		case <-o.spoolKick:
		case <-o.closing:
		}
		for {
			var again, closing bool
			spare, again, closing = o.spoolRound(spare)
			if closing {
				return
			}
			if !again {
				break
			}
		}
	}
}

// spoolRound does one round of the spool goroutine's work: write what Put
// spilled, refill memory if it wants it, and reset or compact the file.
// The mutex is held only to swap the spill queue and move messages and
// counters. It returns the chunk list to reuse, whether more work is
// waiting, and whether the outbox is closing (the batch written is then
// the last).
func (o *Outbox) spoolRound(spare [][]Message) (next [][]Message, again, closing bool) {
	s := o.spool
	o.mu.Lock()
	batch, batchN, batchBytes := o.pending.take(spare)
	closing = o.closed
	refill := !closing && o.spooled > 0 && o.wantsRefillLocked()
	var budgetMsgs int
	var budgetBytes int64
	var atLeastOne bool
	if refill {
		budgetMsgs, budgetBytes, atLeastOne = o.refillBudgetLocked()
	}
	o.mu.Unlock()

	// When the file holds nothing, the oldest spooled messages are the
	// front of the batch: move them to memory without a disk round trip.
	var movedN int
	var movedBytes int64
	if refill && s.unread == 0 {
		movedN, movedBytes = frontWithin(batch, budgetMsgs, budgetBytes, atLeastOne)
	}
	var writeErr error
	if batchN > movedN {
		writeErr = s.appendBatch(batch, movedN)
	}
	var read []Message
	var readBytes int64
	var readErr error
	if refill && writeErr == nil && s.unread > 0 && movedN < budgetMsgs {
		read, readBytes, readErr = s.readBatch(budgetMsgs-movedN, budgetBytes-movedBytes, atLeastOne && movedN == 0)
	}
	if readErr == nil && writeErr == nil {
		if s.consumed() && s.tail > spoolHeaderSize {
			readErr = s.reset()
		} else if s.shouldCompact() {
			if err := s.rewrite(nil); err != nil {
				o.logf("zmq outbox: compacting the spool: %v", err)
			}
		}
	}

	o.mu.Lock()
	left := movedN
	for _, c := range batch {
		for i := 0; i < len(c) && left > 0; i++ {
			o.mem.pushBack(c[i])
			left--
		}
	}
	for i := range read {
		o.mem.pushBack(read[i])
	}
	n := int64(movedN + len(read))
	o.queuedBytes += movedBytes + readBytes
	o.spooled -= n
	o.spooledBytes -= movedBytes + readBytes
	var lost, lostBytes int64
	if writeErr != nil {
		// The file was cut back to its last whole record: only this
		// batch is lost, and what follows it still comes after the older
		// records, in order.
		lost, lostBytes = int64(batchN-movedN), batchBytes-movedBytes
	}
	var readLoss *spoolLossError
	if errors.As(readErr, &readLoss) {
		// The file was reset: of the spool, only what was spilled since
		// this round began is left.
		lost, lostBytes = o.spooled-int64(o.pending.n), o.spooledBytes-o.pending.bytes
	}
	o.spooled -= lost
	o.spooledBytes -= lostBytes
	if lost > 0 {
		o.dropLocked(lost, lostBytes, "spool I/O error")
	}
	if n > 0 {
		o.signalAvailLocked()
	}
	again = o.pending.n > 0 || (n > 0 && o.spooled > 0 && o.wantsRefillLocked())
	o.mu.Unlock()

	if err := errors.Join(writeErr, readErr); err != nil && time.Since(o.spoolErrLog) >= logInterval {
		o.spoolErrLog = time.Now()
		o.logf("zmq outbox: spool failed, %d expiry messages (%d bytes) dropped: %v", lost, lostBytes, err)
	}
	for i, c := range batch {
		clear(c)
		batch[i] = c[:0]
	}
	o.mu.Lock()
	o.pending.recycle(batch)
	o.mu.Unlock()
	clear(batch)
	return batch[:0], again, closing
}

// frontWithin counts the leading messages of chunks that fit in maxMsgs
// and maxBytes (with atLeastOne, the first always fits).
func frontWithin(chunks [][]Message, maxMsgs int, maxBytes int64, atLeastOne bool) (n int, bytes int64) {
	for _, c := range chunks {
		for i := range c {
			size := int64(c[i].Size())
			if n >= maxMsgs || (bytes+size > maxBytes && (n > 0 || !atLeastOne)) {
				return n, bytes
			}
			n++
			bytes += size
		}
	}
	return n, bytes
}

const (
	spillChunk      = 1024 // messages per chunk of the spill queue
	spillFreeChunks = 16   // cleared chunks kept for reuse
)

// spillQueue holds the messages Put has accepted for the spool that the
// spool goroutine has not yet taken, in chunks of fixed size: a push never
// copies what is already queued, so its worst case is allocating one
// chunk when none is free.
type spillQueue struct {
	chunks [][]Message
	n      int
	bytes  int64
	free   [][]Message
}

func (q *spillQueue) push(m Message, size int64) {
	last := len(q.chunks) - 1
	if last < 0 || len(q.chunks[last]) == cap(q.chunks[last]) {
		var c []Message
		if k := len(q.free); k > 0 {
			c = q.free[k-1]
			q.free[k-1] = nil
			q.free = q.free[:k-1]
		} else {
			c = make([]Message, 0, spillChunk)
		}
		q.chunks = append(q.chunks, c)
		last++
	}
	q.chunks[last] = append(q.chunks[last], m)
	q.n++
	q.bytes += size
}

// take empties the queue and returns what it held; spare (emptied) becomes
// the queue's chunk list.
func (q *spillQueue) take(spare [][]Message) (chunks [][]Message, n int, bytes int64) {
	chunks, n, bytes = q.chunks, q.n, q.bytes
	q.chunks, q.n, q.bytes = spare[:0], 0, 0
	return chunks, n, bytes
}

// recycle keeps cleared, empty chunks for later pushes, up to a bound.
func (q *spillQueue) recycle(chunks [][]Message) {
	for _, c := range chunks {
		if len(q.free) == spillFreeChunks {
			return
		}
		q.free = append(q.free, c)
	}
}

// msgRing is a FIFO of messages with O(1) amortized push at both ends.
type msgRing struct {
	buf  []Message
	head int
	n    int
}

func (r *msgRing) len() int { return r.n }

func (r *msgRing) grow() {
	nb := make([]Message, max(16, 2*len(r.buf)))
	for i := 0; i < r.n; i++ {
		nb[i] = r.buf[(r.head+i)%len(r.buf)]
	}
	r.buf, r.head = nb, 0
}

func (r *msgRing) pushBack(m Message) {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.n)%len(r.buf)] = m
	r.n++
}

func (r *msgRing) pushFront(m Message) {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.head = (r.head - 1 + len(r.buf)) % len(r.buf)
	r.buf[r.head] = m
	r.n++
}

// popFront removes the oldest message; the ring must not be empty. The
// slot is cleared so the ring does not keep the frames alive.
func (r *msgRing) popFront() Message {
	m := r.buf[r.head]
	r.buf[r.head] = Message{}
	r.head = (r.head + 1) % len(r.buf)
	r.n--
	return m
}
