// Package netloop runs client connections on epoll event loops: one
// goroutine per loop waits for readiness, reads what is ready, lets the
// handler run the requests and writes the replies, with no goroutine per
// connection.
//
// Why not net.Conn: a blocking Read on a Go connection first tries the
// read, gets EAGAIN, then parks the goroutine in the runtime's poller, so
// a request/reply exchange costs three system calls and two goroutine
// switches. Redis costs two system calls (read, write) plus a share of
// one epoll_wait, and at pipeline depth 1 system calls are most of the
// work. Reading only what epoll reported ready removes the EAGAIN read
// and the switches.
//
// A loop that is busy with many connections naps for a few tens of
// microseconds before it blocks, so that its clients' writes do not
// each wake it (napper).
package netloop

import (
	"errors"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ErrWouldBlock is returned by Conn.Read when no input is ready.
var ErrWouldBlock = errors.New("netloop: would block")

// Handler receives a connection's events, always on its loop's goroutine.
type Handler interface {
	// Readable is called when input is ready or the peer hung up; the
	// handler calls Conn.Read until it returns ErrWouldBlock or it has
	// enough, and may Write replies.
	Readable(c *Conn)
	// Closed is called once, after the connection was closed.
	Closed(c *Conn)
}

const (
	evIn  = syscall.EPOLLIN | syscall.EPOLLRDHUP
	evOut = syscall.EPOLLOUT
)

// Conn is one connection on a loop. Its methods must be called on the
// loop's goroutine (from Handler callbacks or functions run with Submit).
type Conn struct {
	// Dropped is the output Close discarded unwritten, for the
	// handler's Closed.
	Dropped int

	fd       int
	loop     *Loop
	handler  Handler
	pending  atomic.Int64 // Pending(), readable from any goroutine
	closed   bool
	detached bool // not reading: a goroutine works on the connection's behalf
	closing  bool // close once the pending output is written
	// readPending: input is read while output waits (see
	// SetReadWhilePending).
	readPending bool
	events      uint32
	// seen: the napper's window in which the connection was last
	// served, and seenEvents its events in that window.
	seen       uint32
	seenEvents int

	// out is the output the socket did not take yet, in order: chunks
	// of output copied by Write (of outChunk bytes or more, as Redis
	// keeps a client's reply list) and buffers written by reference
	// (WriteBuffers). In chunks, output that waits for a slow reader is
	// never copied again as it grows, and what was written is freed a
	// chunk at a time; one flat buffer grown by append copied all of it
	// at every doubling, on the loop, and kept every byte of it until
	// the last was written. tailOwned: out's last buffer is a chunk Write
	// made, which the next Write may fill further.
	out       [][]byte
	outBytes  int
	tailOwned bool
	iov       []syscall.Iovec

	// drained runs once the output is all written, or the connection
	// closed (OnDrained).
	drained func()
}

// Loop is one event loop.
type Loop struct {
	epfd   int
	wakefd int // eventfd: Submit wakes the loop through it
	// conns holds the loop's connections by descriptor: the kernel
	// hands out the lowest free one, so a slice indexed by it stays about
	// as long as the connections are many, and finding a ready
	// connection's Conn costs an index, where a map's lookup was 0.4-0.7%
	// of the server's CPU at pipeline 1.
	conns []*Conn

	mu    sync.Mutex
	tasks []func()
	// early are the tasks submitted with SubmitEarly: run before tasks,
	// and by ServeWhileBlocked too.
	early []func()
	stop  bool

	// nap: whether to sleep briefly before blocking (napper).
	nap napper

	// blockedEvents is ServeWhileBlocked's poll buffer: Run's is in use
	// by the handler that called it.
	blockedEvents []syscall.EpollEvent

	// AfterHandlers, when set, runs on the loop right after the handlers
	// of the connections one poll reported, before any submitted task:
	// what the handlers left to write at the end of the round goes out
	// ahead of what a task writes. Set it before Run.
	AfterHandlers func()
	// handling: the handlers of a poll's connections are running, and
	// AfterHandlers runs next (Handling).
	handling bool
	// AfterEvents, when set, runs on the loop after the connections that
	// one poll reported were handled and the submitted tasks were run,
	// before the loop polls again (Redis's beforeSleep). Set it before Run.
	AfterEvents func()
}

// New makes a loop.
func New() (*Loop, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	r, _, errno := syscall.Syscall(syscall.SYS_EVENTFD2, 0, syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errno != 0 {
		syscall.Close(epfd)
		return nil, errno
	}
	l := &Loop{epfd: epfd, wakefd: int(r)}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(l.wakefd)}
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, l.wakefd, &ev); err != nil {
		l.closeFDs()
		return nil, err
	}
	return l, nil
}

func (l *Loop) closeFDs() {
	syscall.Close(l.wakefd)
	syscall.Close(l.epfd)
}

// Submit runs fn on the loop's goroutine. Safe from any goroutine; fn
// runs in submission order. After Stop, fn is dropped.
func (l *Loop) Submit(fn func()) {
	l.mu.Lock()
	if l.stop {
		l.mu.Unlock()
		return
	}
	first := len(l.tasks)+len(l.early) == 0
	l.tasks = append(l.tasks, fn)
	l.mu.Unlock()
	if first {
		l.wake()
	}
}

// SubmitEarly is Submit for a task that may also run while a handler
// serves the loop from inside (ServeWhileBlocked), such as taking in a
// new connection: it runs before the tasks of Submit.
func (l *Loop) SubmitEarly(fn func()) {
	l.mu.Lock()
	if l.stop {
		l.mu.Unlock()
		return
	}
	first := len(l.tasks)+len(l.early) == 0
	l.early = append(l.early, fn)
	l.mu.Unlock()
	if first {
		l.wake()
	}
}

// Handling reports whether the loop is running the handlers of the
// connections a poll reported, so that AfterHandlers runs before the
// loop does anything else: a handler may leave output for it to write.
// A handler run by a task (a connection read again once a wait ended)
// is not. On the loop's goroutine.
func (l *Loop) Handling() bool { return l.handling }

// runEarly runs the tasks of SubmitEarly.
func (l *Loop) runEarly() {
	l.mu.Lock()
	early := l.early
	l.early = nil
	l.mu.Unlock()
	for _, fn := range early {
		fn()
	}
}

func (l *Loop) wake() {
	var one = [8]byte{1}
	syscall.Write(l.wakefd, one[:])
}

// Stop makes Run return after closing every connection (their Closed
// callbacks run first). Safe from any goroutine.
func (l *Loop) Stop() {
	l.mu.Lock()
	l.stop = true
	l.mu.Unlock()
	l.wake()
}

// Add registers fd (a connected, non-blocking socket the loop now owns)
// and returns its Conn. Call on the loop's goroutine (through Submit).
func (l *Loop) Add(fd int, h Handler) (*Conn, error) {
	c := &Conn{fd: fd, loop: l, handler: h, events: evIn}
	ev := syscall.EpollEvent{Events: c.events, Fd: int32(fd)}
	if err := syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return nil, err
	}
	if fd >= len(l.conns) {
		l.conns = append(l.conns, make([]*Conn, fd+1-len(l.conns))...)
	}
	l.conns[fd] = c
	return c, nil
}

// yieldEvery is how long the loop runs at most, counted at the polls
// that find nothing, before it passes through the runtime's scheduler
// (Run says why).
const yieldEvery = 2 * time.Millisecond

// Run serves events until Stop. The caller owns the goroutine.
//
// The loop's system calls return to the processor (P) they left, so
// without help its goroutine would never pass through the runtime's
// scheduler, whose count of a processor's turns (schedtick) is what the
// runtime's monitor thread (sysmon) watches. Seeing the same turn for
// 10 ms, the monitor takes the processor while the loop blocks in
// epoll_wait, or preempts it while it runs, and then goes back to
// waking every 20 µs for a millisecond or more, often on the loop's
// core. At pipeline 1 the kernel then took the core from the loop four
// to ten times as often as from redis-server's thread (GET runs,
// counted in /proc), and zredis's tail latency was longer than
// redis-server's. So the loop yields (runtime.Gosched) at a poll that
// found nothing, once every yieldEvery: the turn count moves, and the
// monitor stays at rest.
//
// The goroutine is not locked to its thread: a yield of a locked
// goroutine hands its processor to another thread and back (two
// wake-ups), and a lock would only keep the naps' timer slack, which
// the loop now sets on whichever thread it runs before each nap.
func (l *Loop) Run() {
	events := make([]syscall.EpollEvent, 256)
	var tasks []func()
	var lastYield time.Time
	for {
		// Poll first without blocking: under load events are waiting and
		// the runtime need not hand the processor away.
		n, err := pollNow(l.epfd, events)
		l.nap.polled(n > 1 || n == 1 && int(events[0].Fd) != l.wakefd)
		if err == nil && n == 0 {
			now := time.Now()
			if now.Sub(lastYield) >= yieldEvery {
				lastYield = now
				runtime.Gosched()
			}
			if l.nap.due(now) {
				l.nap.nap()
				n, err = pollNow(l.epfd, events)
			}
		}
		if err == nil && n == 0 {
			n, err = syscall.EpollWait(l.epfd, events, -1)
		}
		if err != nil && err != syscall.EINTR {
			break
		}
		l.handling = true
		for i := 0; i < n; i++ {
			fd := int(events[i].Fd)
			if fd == l.wakefd {
				var buf [8]byte
				syscall.Read(l.wakefd, buf[:])
				continue
			}
			if c := l.conn(fd); c != nil {
				l.nap.served(c)
				c.handle(events[i].Events)
			}
		}
		l.handling = false
		if l.AfterHandlers != nil {
			l.AfterHandlers()
		}
		// Both queues are taken in one hold of mu. A submitter that
		// finds either not empty does not wake the loop, counting on the
		// turn that takes the queued task to take its own; taking early
		// first and tasks later left a SubmitEarly made in between (a
		// connection accepted while another was attached) queued with no
		// wake-up pending, and every later Submit saw early not empty:
		// the loop slept and new connections went unserved.
		l.mu.Lock()
		early := l.early
		l.early = nil
		tasks, l.tasks = l.tasks, tasks[:0]
		stop := l.stop
		l.mu.Unlock()
		for _, fn := range early {
			fn()
		}
		for i, fn := range tasks {
			fn()
			tasks[i] = nil
		}
		if l.AfterEvents != nil {
			l.AfterEvents()
		}
		if stop {
			break
		}
	}
	for _, c := range l.conns {
		if c != nil {
			c.Close()
		}
	}
	l.closeFDs()
}

// conn is the connection of descriptor fd, nil if the loop has none.
func (l *Loop) conn(fd int) *Conn {
	if uint(fd) < uint(len(l.conns)) {
		return l.conns[fd]
	}
	return nil
}

// handle serves the readiness ev that a poll reported for c.
func (c *Conn) handle(ev uint32) {
	if ev&(syscall.EPOLLOUT|syscall.EPOLLERR|syscall.EPOLLHUP) != 0 && c.waiting() {
		c.flush()
	}
	if c.closed || c.detached {
		return
	}
	if ev&(syscall.EPOLLIN|syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 && (!c.waiting() || c.readPending) {
		c.handler.Readable(c)
	}
}

// ServeWhileBlocked serves, once and without blocking, the connections
// whose input or output is ready now, all but busy: a handler that runs
// long on the loop (a script past busy-reply-threshold) calls it from
// time to time, so that the loop's other clients are answered meanwhile,
// as Redis's processEventsWhileBlocked does. busy's own input waits
// (Redis's protectClient). The submitted tasks wait for Run, and the
// loop's wake-up stays pending for it; those of SubmitEarly run, and so
// do AfterHandlers and AfterEvents. On the loop's goroutine, from a
// handler.
func (l *Loop) ServeWhileBlocked(busy *Conn) {
	if l.blockedEvents == nil {
		l.blockedEvents = make([]syscall.EpollEvent, 64)
	}
	events := l.blockedEvents
	n, err := pollNow(l.epfd, events)
	if err != nil {
		return
	}
	outer := l.handling
	l.handling = true
	for i := 0; i < n; i++ {
		fd := int(events[i].Fd)
		if fd == l.wakefd {
			continue
		}
		if c := l.conn(fd); c != nil && c != busy {
			c.handle(events[i].Events)
		}
	}
	l.handling = outer
	if l.AfterHandlers != nil {
		l.AfterHandlers()
	}
	l.runEarly()
	// The end of a round, as Redis's beforeSleep in this state: replies
	// held for the AOF go out once it has their writes.
	if l.AfterEvents != nil {
		l.AfterEvents()
	}
}

// Read reads ready input without blocking: ErrWouldBlock when none is
// ready, io.EOF when the peer closed.
func (c *Conn) Read(p []byte) (int, error) {
	if c.closed {
		return 0, io.EOF
	}
	for {
		n, err := rawRead(c.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return 0, ErrWouldBlock
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// outChunk is the size of a chunk of copied output waiting for the
// socket: Redis's PROTO_REPLY_CHUNK_BYTES.
const outChunk = 16 << 10

// Write sends p, keeping what the socket does not take for when it
// becomes writable again; while output waits, the connection is not read
// (a client that does not read its replies is not served more) unless
// SetReadWhilePending turned reading on. p is not retained.
func (c *Conn) Write(p []byte) {
	if c.closed || len(p) == 0 {
		return
	}
	if c.waiting() {
		c.keep(p)
		return
	}
	for len(p) > 0 {
		n, err := rawWrite(c.fd, p)
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EAGAIN {
			break
		}
		if err != nil {
			c.Close()
			return
		}
		p = p[n:]
	}
	if len(p) > 0 {
		c.keep(p)
		c.setEvents(c.want())
	}
}

// keep appends a copy of p to the output waiting: into the room left in
// the last chunk, the rest into a new chunk of outChunk bytes or of the
// rest's length if larger (Redis's _addReplyProtoToList).
func (c *Conn) keep(p []byte) {
	c.outBytes += len(p)
	if c.tailOwned {
		t := &c.out[len(c.out)-1]
		n := min(cap(*t)-len(*t), len(p))
		*t = append(*t, p[:n]...)
		p = p[n:]
	}
	if len(p) > 0 {
		chunk := make([]byte, len(p), max(outChunk, len(p)))
		copy(chunk, p)
		c.out = append(c.out, chunk)
		c.tailOwned = true
	}
	c.setPending()
}

// WriteBuffers sends bufs in order, as Write would their concatenation,
// in one system call, but keeps what the socket does not take by
// reference instead of copying it: a large value goes out from where it
// is stored. The bytes of bufs must not change until written (the slice
// bufs itself may).
func (c *Conn) WriteBuffers(bufs [][]byte) {
	if c.closed {
		return
	}
	if c.waiting() {
		c.enqueue(bufs)
		return
	}
	c.enqueue(bufs)
	c.flush()
}

// enqueue appends bufs, by reference, to the output waiting.
func (c *Conn) enqueue(bufs [][]byte) {
	for _, b := range bufs {
		if len(b) > 0 {
			c.out = append(c.out, b)
			c.outBytes += len(b)
			c.tailOwned = false // not ours to append to
		}
	}
	c.setPending()
}

// waiting reports whether output waits for the socket.
func (c *Conn) waiting() bool { return len(c.out) > 0 }

func (c *Conn) setPending() { c.pending.Store(int64(c.outBytes)) }

// flushOut writes the output waiting; false when the socket takes no
// more (or the connection was closed).
func (c *Conn) flushOut() bool {
	for len(c.out) > 0 {
		c.iov = c.iov[:0]
		for _, b := range c.out[:min(len(c.out), maxIovecs)] {
			v := syscall.Iovec{Base: &b[0]}
			v.SetLen(len(b))
			c.iov = append(c.iov, v)
		}
		n, err := rawWritev(c.fd, c.iov)
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EAGAIN {
			return false
		}
		if err != nil {
			c.Close()
			return false
		}
		c.outBytes -= n
		for n > 0 {
			if n < len(c.out[0]) {
				c.out[0] = c.out[0][n:]
				break
			}
			n -= len(c.out[0])
			c.out[0] = nil
			c.out = c.out[1:]
		}
		c.setPending()
	}
	c.out, c.tailOwned = nil, false
	clear(c.iov)
	return true
}

// Pending is the number of bytes of output not yet written. Unlike the
// other methods it may be called from any goroutine (CLIENT LIST, the
// output limits of a connection whose batch runs on its worker): the
// figure is exact on the loop and a recent one elsewhere.
func (c *Conn) Pending() int { return int(c.pending.Load()) }

// SetReadWhilePending chooses what happens to input while output waits
// for the socket: by default the connection is not read until the output
// is written, which bounds what a client that does not read its replies
// costs to one batch of them; with on, it is read and served meanwhile,
// as Redis serves it, for a caller that bounds the output itself (an
// output buffer limit closes the connection).
func (c *Conn) SetReadWhilePending(on bool) {
	if c.readPending == on {
		return
	}
	c.readPending = on
	c.setEvents(c.want())
}

// want is what epoll should watch for in the connection's state.
func (c *Conn) want() uint32 {
	var ev uint32
	if c.waiting() {
		ev = evOut
	}
	if !c.detached && (!c.waiting() || c.readPending) {
		ev |= evIn
	}
	return ev
}

func (c *Conn) flush() {
	if !c.flushOut() {
		c.setEvents(c.want())
		return
	}
	if c.closing {
		c.Close()
		return
	}
	c.setEvents(c.want())
	c.fireDrained()
}

// OnDrained runs fn on the loop once every byte of output written so far
// has gone to the socket, or the connection is closed: at once when
// nothing waits. It replaces an earlier fn that has not run. A writer
// that must not get ahead of a slow peer (a replica receiving an RDB
// payload) waits for it between writes.
func (c *Conn) OnDrained(fn func()) {
	if c.closed || !c.waiting() {
		fn()
		return
	}
	c.drained = fn
}

func (c *Conn) fireDrained() {
	if fn := c.drained; fn != nil {
		c.drained = nil
		fn()
	}
}

// setEvents changes what epoll watches for; 0 removes the descriptor from
// epoll altogether, because epoll reports a hang-up even for a descriptor
// that asks for nothing, and a detached connection must not spin its loop.
func (c *Conn) setEvents(ev uint32) {
	if c.closed || c.events == ev {
		return
	}
	op := syscall.EPOLL_CTL_MOD
	switch {
	case ev == 0:
		op = syscall.EPOLL_CTL_DEL
	case c.events == 0:
		op = syscall.EPOLL_CTL_ADD
	}
	c.events = ev
	e := syscall.EpollEvent{Events: ev, Fd: int32(c.fd)}
	syscall.EpollCtl(c.loop.epfd, op, c.fd, &e)
}

// Detach stops reading the connection while another goroutine works on
// its behalf (a long read over a snapshot, a blocked command); Attach
// resumes. Pending output is still written.
func (c *Conn) Detach() {
	c.detached = true
	c.setEvents(c.want())
}

// Attach resumes reading after Detach. Input that arrived meanwhile is
// reported at once (epoll is level-triggered).
func (c *Conn) Attach() {
	c.detached = false
	c.setEvents(c.want())
}

// Loop is the connection's loop, for Submit.
func (c *Conn) Loop() *Loop { return c.loop }

// Closed reports whether Close ran.
func (c *Conn) IsClosed() bool { return c.closed }

// Close closes the connection and calls the handler's Closed.
func (c *Conn) Close() {
	if c.closed {
		return
	}
	c.setEvents(0)
	c.closed = true
	syscall.Close(c.fd)
	c.loop.conns[c.fd] = nil
	c.Dropped = c.outBytes
	c.out, c.outBytes, c.tailOwned, c.iov = nil, 0, false, nil
	c.pending.Store(0)
	c.fireDrained()
	c.handler.Closed(c)
}

// CloseAfterFlush closes the connection once its pending output is
// written (QUIT, a protocol error), and reads nothing more meanwhile.
func (c *Conn) CloseAfterFlush() {
	if !c.waiting() {
		c.Close()
		return
	}
	c.closing = true
	c.detached = true
	c.setEvents(c.want())
}

// ShutdownRead stops further input (SHUTDOWN and server stop: replies in
// progress are still written).
func (c *Conn) ShutdownRead() {
	if !c.closed {
		syscall.Shutdown(c.fd, syscall.SHUT_RD)
	}
}
