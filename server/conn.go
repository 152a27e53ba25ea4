package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/netloop"
	"github.com/zredis/zredis/persistence/aof"
	"github.com/zredis/zredis/resp"
	"github.com/zredis/zredis/sds"
)

// newRunID makes a server's run_id: 40 random hex digits, as Redis's
// getRandomHexChars.
func newRunID() string {
	var b [20]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// maxBatchUnderLock bounds how many commands of one pipeline run per
// acquisition of the keyspace lock, so that a client sending a huge
// pipeline does not starve the others.
const maxBatchUnderLock = 1024

// readBudget is how many bytes one call of Readable reads at most
// before the loop serves its other connections: one read of a query
// buffer's worth (the 20 KiB Redis's query buffer holds), as Redis reads
// once per readable event. A client that
// sends one huge request as fast as the socket takes it is thus read a
// piece at each turn of the loop instead of holding the loop until the
// whole request is in; and of fifty clients pipelining big writes, each
// gets its first replies after one piece of every other's batch, not
// after their whole batches: with 256 KiB, MSET of ten 1 KiB values at
// pipeline 16 had a p99 of 51-68 ms where redis-server's was 11-25 (the
// latency redis-benchmark reports is the time to a pipeline's first
// reply). One read may take more (the rest of a big argument, up to what
// the socket holds); the budget is checked before each.
const readBudget = resp.QueryBufSize

// prefetchWindow is how many commands of a pipelined batch have their
// keys' memory requested at a time, before the first of them runs
// (Dispatcher.Prefetch): as many as keyspace.DB.Prefetch keeps in
// flight.
const prefetchWindow = keyspace.PrefetchKeys

// conn is one client connection. It lives on an event loop: the loop
// calls Readable when input is ready, and the connection reads a batch,
// runs it under the keyspace lock and writes the replies, all on the
// loop's goroutine. A command that must wait (a KEYS over a snapshot, a
// CLIENT PAUSE, a blocking pop) detaches the connection from the loop and
// finishes the batch on a goroutine the connection owns, so the loop keeps
// serving the other connections.
//
// Fields marked "loop" are touched only on the loop's goroutine (or by the
// connection's worker while detached, when the loop leaves it alone);
// "lock" fields only under the keyspace lock.
type conn struct {
	s    *Server
	loop *netloop.Loop
	lc   *netloop.Conn // loop; nil until the loop has added the socket
	fd   int
	cl   *engine.Client
	rd   *resp.Reader // loop
	// onClose runs once the socket is closed: a TLS client's connection
	// is closed with it (tls.go).
	onClose func()

	batch  [][][]byte // loop: the commands being run
	budget int        // loop: what Readable may still read (readBudget)
	bufs   [][]byte   // loop: replies handed to the socket by reference
	authed bool       // loop: the client has authenticated, as of the last batch

	killed bool          // lock: CLIENT KILL, idle timeout or shutdown: run nothing more
	gone   chan struct{} // closed when killed
	// ringAt is the connection's place in the server's clientRing, and
	// memCounted what it weighed at its last visit there; lock.
	ringAt     int
	memCounted int64
	paused     bool // lock: held back by CLIENT PAUSE (exempt from the idle timeout)

	// aofWait is the AOF ticket the replies of the running batch wait for
	// (0: none): a write is acknowledged once the AOF has it (see
	// noteAOF). Loop (or the connection's worker while detached).
	aofWait      aof.Ticket
	aofW         *aof.Writer  // the writer aofWait belongs to
	heldErr      error        // what ended the held batch (see hold); loop
	held         *heldReplies // its loop's held connections
	heldDetached bool         // input came while held: detached until released; loop

	// round is its loop's connections whose replies wait for the end
	// of the round of events (round.go); deferred: c is among them,
	// its batch ended by deferredErr. Loop.
	round       *roundReplies
	deferred    bool
	deferredErr error

	ps        pubsubOutbox // messages for a subscriber, MONITOR lines (pubsub.go)
	suspended bool         // loop: a batch is finishing on the worker (suspend)

	// Output buffer limits (outlimit.go). overLimit: the connection is
	// closing for them, its output is dropped. softSince: when its output
	// went past the soft limit (Unix s; 0: it is not past it); lock.
	// readPending: its class has a limit, so it is read while its output
	// waits; loop.
	overLimit   atomic.Bool
	softSince   int64
	readPending bool

	// releasing: a release of the query buffer is on its way to the
	// loop (querybuf.go).
	releasing atomic.Bool
}

func newConn(s *Server, nc net.Conn, fd int, loop *netloop.Loop) *conn {
	c := &conn{s: s, loop: loop, fd: fd, gone: make(chan struct{}), held: s.held[loop], round: s.rounds[loop]}
	now := time.Now().UnixMilli()
	cl := &engine.Client{
		Addr:     nc.RemoteAddr().String(),
		LAddr:    nc.LocalAddr().String(),
		Created:  now,
		FD:       fd,
		W:        resp.NewWriter(),
		OwnsArgs: true,
	}
	if _, unix := nc.LocalAddr().(*net.UnixAddr); unix {
		// As Redis names a unix socket client: the socket's path, port 0.
		cl.Addr = s.cfg.String("unixsocket") + ":0"
		cl.LAddr = cl.Addr
		cl.UnixSocket = true
	}
	cl.Kill = func() { s.drop(c) }
	cl.PeerClosed = func() bool { return peerClosed(fd) }
	cl.WhileBlocked = c.serveWhileBlocked
	cl.LastInteraction.Store(now)
	c.cl = cl
	c.rd = resp.NewReader(c, *s.limits.Load())
	c.rd.SetBigHook(bigValueArriving)
	return c
}

// Read implements io.Reader for the request reader: it reads what the
// socket holds without blocking, counting bytes for INFO and CLIENT LIST.
func (c *conn) Read(p []byte) (int, error) {
	if c.budget <= 0 {
		// Epoll is level-triggered: the loop calls again next turn.
		return 0, netloop.ErrWouldBlock
	}
	n, err := c.lc.Read(p)
	c.budget -= n
	if n > 0 {
		st := &c.s.stats
		c.cl.NetIn.Add(int64(n))
		st.NetIn.Add(int64(n))
		st.ReadsProcessed.Add(1)
	}
	return n, err
}

// attach runs on the loop: it takes the socket into the loop, also while
// the loop serves its clients from inside a long script (SubmitEarly).
func (c *conn) attach() {
	lc, err := c.loop.Add(c.fd, c)
	if err != nil {
		c.s.log.Warningf("Registering client connection: %v", err)
		syscall.Close(c.fd)
		locked := c.lock(true)
		c.s.drop(c)
		c.unlock(locked)
		if c.onClose != nil {
			c.onClose()
		}
		c.s.conns.Done()
		return
	}
	c.lc = lc
	c.rd.UseLoop(c.s.loopBufs[c.loop])
	locked := c.lock(true)
	authed := !c.s.disp.AuthRequired(c.cl)
	c.cl.Output = c.outputFigures
	c.unlock(locked)
	c.rd.SetAuthenticated(authed)
}

// Readable implements netloop.Handler. It runs every batch the input
// already holds: more input may never come to make the loop call again.
// Then the reader gives the loop's read buffer back (DoneWithShared)
// unless a worker finishes the batch (suspend).
func (c *conn) Readable(lc *netloop.Conn) {
	c.readable(lc)
	if !c.suspended {
		c.rd.DoneWithShared()
	}
}

// readMore reads on after a batch that had waited (suspend, held.go)
// has been finished (more: finish's answer), or gives the loop's read
// buffer back. On the loop.
func (c *conn) readMore(more bool) {
	if more && c.rd.Unparsed() > 0 {
		c.Readable(c.lc)
		return
	}
	c.rd.DoneWithShared()
}

func (c *conn) readable(lc *netloop.Conn) {
	if c.deferred {
		// Served again before the round ended (from inside a long
		// script): the last batch's replies go first.
		c.round.finish(c)
	}
	if c.aofWait != 0 {
		// Replies are held for the AOF (held.go): the input that came
		// meanwhile waits until they are out, so that no later reply
		// overtakes the AOF.
		lc.Detach()
		c.heldDetached = true
		return
	}
	c.budget = readBudget
	for {
		batch, err := c.rd.ReadBatch(c.batch[:0])
		c.batch = batch
		if len(batch) == 0 && err == netloop.ErrWouldBlock {
			c.noteQueryBuf(c.rd.Buffered())
			return
		}
		if len(batch) > 0 {
			// run notes the client's interaction as it reads the
			// clock for the batch (BeginBatch). While the batch runs,
			// the query buffer holds it and the rest, as Redis's holds
			// what it processes (a client's own CLIENT LIST counts its
			// request).
			c.noteQueryBuf(c.rd.Buffered())
			i, resume := c.run(batch, 0, false)
			if resume == nil && c.aofWait != 0 {
				// The replies go out once the AOF has the writes: held
				// until the loop has run every ready client, then one
				// write (one fsync under always) covers them all (see
				// heldReplies).
				c.hold(c.rd.Err())
				return
			}
			if resume != nil {
				c.suspend(batch, i, resume)
				return
			}
			// A protocol error after the last whole command is reported
			// now, with the replies before it.
			err = c.rd.Err()
		}
		if c.rd.Unparsed() == 0 && c.loop.Handling() && c.canDefer(err) {
			c.round.add(c, err)
			return
		}
		if !c.finish(err) || c.rd.Unparsed() == 0 {
			return
		}
	}
}

// serveWhileBlocked serves the other connections of c's loop while c
// runs a script past busy-reply-threshold (engine.Client.WhileBlocked):
// this goroutine, the loop's, holds the keyspace lock for the script, so
// what they send runs without taking it, and the dispatcher answers
// -BUSY to all but the commands flagged allow-busy. Under the lock.
func (c *conn) serveWhileBlocked() {
	s := c.s
	if c.suspended {
		// The script runs on the connection's worker, not on the loop:
		// the loop goes on serving, and its clients get -BUSY when the
		// script yields the lock (keyspace.Yield).
		return
	}
	s.blockedLoop.Store(c.loop)
	c.rd.KeepShared() // the script's batch is in it
	c.loop.ServeWhileBlocked(c.lc)
	s.blockedLoop.Store(nil)
}

// lock takes the keyspace lock for c's commands, unless onLoop (the
// caller runs on c's loop goroutine, not on the connection's worker) and
// the loop serves its connections from inside a script that holds it
// (serveWhileBlocked). It reports whether it took it. The lock may be one
// a long script yields (keyspace.LockOrBusy): the dispatcher then answers
// -BUSY.
func (c *conn) lock(onLoop bool) bool {
	if onLoop && c.s.blockedLoop.Load() == c.loop {
		return false
	}
	c.s.ks.LockOrBusy()
	return true
}

// unlock releases what lock took.
func (c *conn) unlock(locked bool) {
	if locked {
		// The keys changed under BCAST prefixes go out once per hold of
		// the lock, as Redis sends them once per event loop cycle.
		c.s.disp.Tracking.Broadcast()
		c.s.ks.Unlock()
	}
}

// Closed implements netloop.Handler.
func (c *conn) Closed(lc *netloop.Conn) {
	s := c.s
	if c.deferred {
		// Closed while its replies waited for the end of the round (a
		// write that failed from inside a long script): finish never
		// runs for its last batch. The round skips it.
		c.deferred = false
		c.deferredErr = nil
		c.forgetBatch()
	}
	// A client cut off in the middle of a big argument (or one that
	// sent a long inline line, or many arguments), or with replies it
	// did not read, leaves its buffers as garbage: without this, a
	// stream of such clients let the heap grow by the collector's whole
	// allowance (gcfloor.go) before a collection.
	if n := c.rd.Abandoned() + int64(lc.Dropped); n > 0 {
		s.rel.freed(n)
	}
	locked := c.lock(true)
	s.drop(c)
	c.unlock(locked)
	if c.onClose != nil {
		c.onClose()
	}
	s.conns.Done()
}

// forgetBatch counts the batch's big arguments that no command kept as
// garbage: the release of freed memory counts them, as it counts deleted
// values. Once per batch, when its replies are written or the connection
// closes before they could be.
func (c *conn) forgetBatch() {
	if n := c.rd.Forget(c.batch) - c.cl.KeptArgBytes; n > 0 {
		c.s.rel.freed(n)
	}
	c.cl.KeptArgBytes = 0
}

// finish writes the batch's replies and handles what ended it. It
// reports whether the connection goes on reading. On the loop.
func (c *conn) finish(err error) bool {
	cl := c.cl
	s := c.s
	c.forgetBatch()
	if c.overLimit.Load() {
		// Past its output limits: what it was sent is dropped.
		cl.W.Reset()
		c.lc.Close()
		return false
	}
	if err != nil && err != netloop.ErrWouldBlock {
		var pe *resp.ProtocolError
		switch {
		case errors.As(err, &pe):
			cl.W.Error("ERR " + pe.Error())
			cl.CloseAfterReply = true
		case errors.Is(err, resp.ErrQueryBufLimit):
			c.logQueryBufLimit()
			cl.CloseAfterReply = true
		case err == io.EOF && cl.W.Len() == 0 && c.lc.Pending() == 0:
			c.lc.Close()
			return false
		default:
			cl.CloseAfterReply = true
		}
	}
	c.noteQueryBuf(c.rd.BatchDone())
	if n := cl.W.Len(); n > 0 {
		if cl.W.HasRefs() {
			// Large values go out from where they are stored.
			c.bufs = cl.W.TakeBuffers(c.bufs[:0])
			c.lc.WriteBuffers(c.bufs)
			clear(c.bufs)
		} else {
			c.lc.Write(cl.W.Bytes())
			cl.W.Reset()
		}
		c.countOut(int64(n))
		s.stats.WritesProcessed.Add(1)
	}
	if cl.CloseAfterReply {
		c.lc.CloseAfterFlush()
		return false
	}
	c.rd.SetLimits(*s.limits.Load())
	c.rd.SetAuthenticated(c.authed)
	c.lc.SetReadWhilePending(c.readPending)
	return !c.lc.IsClosed()
}

// logQueryBufLimit logs, as Redis's readQueryFromClient does, a client
// closed for passing client-query-buffer-limit, with the first 64 bytes
// of its query buffer. On the loop.
func (c *conn) logQueryBufLimit() {
	c.noteQueryBuf(c.rd.Waiting())
	info := engine.ClientInfoString(c.cl, time.Now().UnixMilli(), c.cl.W.Len())
	head := sds.AppendRepr(nil, c.rd.Head(64))
	c.s.log.Warningf("Closing client that reached max query buffer length: %s (qbuf initial bytes: %s)", info, head)
}

// suspend detaches the connection from its loop and finishes the batch on
// a goroutine owned by the connection, starting with resume (the work a
// command left to run without the lock, or a wait for CLIENT PAUSE).
func (c *conn) suspend(batch [][][]byte, i int, resume func()) {
	s := c.s
	c.lc.Detach()
	c.suspended = true
	c.rd.KeepShared() // the batch is in it, and the loop reads on
	s.workers.Add(1)
	go func() {
		defer s.workers.Done()
		for resume != nil {
			resume()
			if c.cl.CloseAfterReply {
				break
			}
			i, resume = c.run(batch, i, true)
		}
		durable := true
		if t := c.aofWait; t != 0 {
			c.aofWait = 0
			durable = waitAOF(c.aofW, t)
			c.aofW = nil
		}
		err := c.rd.Err()
		c.loop.Submit(func() {
			if c.lc.IsClosed() || !durable {
				// No reply goes out: finish does not run for the batch.
				c.forgetBatch()
				c.lc.Close()
				return
			}
			c.lc.Attach()
			c.suspended = false
			more := c.finish(err)
			c.flushPubSub()
			c.readMore(more)
		})
	}()
}

// run executes batch[i:], holding the keyspace lock for at most
// maxBatchUnderLock commands at a time. It returns early, with the index
// of the next command and a resume function, when a command offloaded
// work to run without the lock, or when CLIENT PAUSE holds the next
// command back and the caller may not block (it runs on the loop). With
// mayBlock (on the connection's worker) it waits for a pause in place.
func (c *conn) run(batch [][][]byte, i int, mayBlock bool) (int, func()) {
	s := c.s
	cl := c.cl
	prefetched := i // batch[:prefetched] had their keys' memory requested
	for i < len(batch) {
		locked := c.lock(!mayBlock)
		aofW, aofBefore := s.persist.AOFTicket()
		s.disp.BeginBatch(cl)
		for n := 0; i < len(batch) && n < maxBatchUnderLock; n++ {
			// A script past busy-reply-threshold answers -BUSY first,
			// paused or not (processCommand).
			pause := pauseRun
			if s.disp.BusyScript() == "" {
				pause = s.pauseCheck(c, batch, i, mayBlock)
			}
			switch pause {
			case pauseStop:
				cl.CloseAfterReply = true
			case pauseWait:
				c.noteAOF(aofW, aofBefore)
				c.unlock(locked)
				return i, func() {
					s.ks.Lock()
					ok := s.waitPause(c, batch, i)
					s.ks.Unlock()
					if !ok {
						cl.CloseAfterReply = true
					}
				}
			}
			if cl.CloseAfterReply {
				break
			}
			if cl.Subs+cl.PSubs+cl.SSubs > 0 || cl.Monitor || cl.Tracking != nil {
				c.takePubSub() // messages published so far precede this reply
			}
			if i >= prefetched {
				prefetched = i + s.disp.Prefetch(cl, batch[i:min(i+prefetchWindow, len(batch))])
			}
			mark := cl.W.Mark()
			offload := s.disp.Exec(cl, batch[i])
			i++
			if offload != nil {
				// Blocked or offloaded, the command has left the query
				// buffer: what follows it stays there.
				c.noteQueryBuf(batchBytes(batch[i:]) + c.rd.Waiting())
				c.noteAOF(aofW, aofBefore)
				c.unlock(locked)
				return i, func() {
					offload()
					s.ks.Exec(func() {
						c.afterReply(mark)
						c.checkReplies()
					})
				}
			}
			c.afterReply(mark)
			if cl.CloseAfterReply || c.checkReplies() {
				break
			}
		}
		if s.closing || c.killed {
			cl.CloseAfterReply = true
		}
		c.authed = !s.disp.AuthRequired(cl)
		c.readPending = limited(&s.outLimits.Load()[outputClass(cl)])
		c.noteAOF(aofW, aofBefore)
		c.unlock(locked)
		if cl.CloseAfterReply {
			return len(batch), nil
		}
	}
	return i, nil
}

// noteQueryBuf publishes the query buffer's figures for CLIENT LIST and
// INFO: n bytes held, and the reader's allocations. Loop (or the
// connection's worker while detached).
func (c *conn) noteQueryBuf(n int) {
	c.cl.QueryBuf.Store(int64(n))
	c.cl.QueryBufAlloc.Store(c.rd.Allocated())
}

// batchBytes is the length of cmds in the protocol, as a client sends
// them in multibulk form: what Redis's query buffer still holds of a
// batch behind a command that blocked. Only computed when one does.
func batchBytes(cmds [][][]byte) int {
	n := 0
	for _, args := range cmds {
		n += 3 + len(strconv.Itoa(len(args)))
		for _, a := range args {
			n += 5 + len(strconv.Itoa(len(a))) + len(a)
		}
	}
	return n
}

// noteAOF records that the commands run since writer w's ticket was
// before were appended to the AOF: the batch's replies wait until the AOF
// has them, as Redis writes the AOF before replying — written to the file
// (everysec, no: a crash of the process loses no acknowledged write), and
// fsynced under always. Under the lock.
// A batch that turned the AOF off (CONFIG SET appendonly no) after
// writing waits for the old writer's final flush, as Redis's
// stopAppendOnly fsyncs before replying (persistence.Service.AOFWait).
func (c *conn) noteAOF(w *aof.Writer, before aof.Ticket) {
	if w, t, ok := c.s.persist.AOFWait(w, before); ok {
		c.aofWait, c.aofW = t, w
	}
}

// afterReply applies CLIENT REPLY to the reply just written from mark on.
// Under the lock.
func (c *conn) afterReply(mark int) {
	cl := c.cl
	if cl.ReplyOff || cl.ReplySkip {
		cl.W.Truncate(mark)
		cl.W.Raw(cl.Pushed)
	}
	cl.Pushed = cl.Pushed[:0]
	cl.ReplySkip = false
	if cl.ReplySkipNext {
		cl.ReplySkip, cl.ReplySkipNext = true, false
	}
}

// checkReplies applies the output limits once a command has added its
// reply (Redis checks them as replies are added): past them the
// connection is closed, its output dropped and the rest of its batch not
// run. One comparison unless the output passes Redis's static reply
// buffer. Under the lock, on the connection's goroutine.
func (c *conn) checkReplies() bool {
	if n := c.cl.W.Len() + c.lc.Pending(); n > replyStaticBytes {
		w := c.cl.W.Len()
		if c.checkOutput(w+c.pendingOutput(), w) {
			c.cl.CloseAfterReply = true
			return true
		}
	}
	return false
}

// closeRead stops the connection from reading more commands; replies of
// the batch in progress are still written. Under the lock.
func (c *conn) closeRead() {
	c.loop.Submit(func() {
		if c.lc != nil {
			c.lc.ShutdownRead()
		}
	})
}

// closeNow closes the socket from any goroutine.
func (c *conn) closeNow() {
	c.loop.Submit(func() {
		if c.lc != nil {
			c.lc.Close()
		}
	})
}
