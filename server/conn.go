package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/zredis/zredis/commands"
	"github.com/zredis/zredis/resp"
)

// runID identifies this process run, as Redis's run_id does.
var runID = func() string {
	var b [20]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}()

// maxBatchUnderLock bounds how many commands of one pipeline run per
// acquisition of the keyspace lock, so that a client sending a huge
// pipeline does not starve the others.
const maxBatchUnderLock = 1024

// writeTimeout bounds one write to a client. A client that reads nothing
// for this long is disconnected rather than holding its goroutine.
const writeTimeout = 30 * time.Second

// conn is one client connection: a goroutine that reads a batch, runs it
// under the keyspace lock and writes the replies.
type conn struct {
	s  *Server
	nc net.Conn
	cl *commands.Client
	rd *resp.Reader

	// killed is set (under the keyspace lock) when the connection was
	// dropped by CLIENT KILL or the idle timeout: it runs nothing more.
	killed bool
	gone   chan struct{} // closed when killed
	paused bool          // held back by CLIENT PAUSE (exempt from the idle timeout)

	// out carries all output once the client is a MONITOR (see
	// Server.Monitor); nil before. Set under the lock by this
	// connection's own command, so the connection's goroutine reads it
	// without the lock.
	out *outQueue
}

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{s: s, nc: nc, gone: make(chan struct{})}
	now := time.Now().UnixMilli()
	cl := &commands.Client{
		Addr:    nc.RemoteAddr().String(),
		LAddr:   nc.LocalAddr().String(),
		Created: now,
		W:       resp.NewWriter(),
	}
	cl.FD = fdOf(nc)
	cl.Kill = func() { s.drop(c) }
	cl.LastInteraction.Store(now)
	c.cl = cl
	c.rd = resp.NewReader(countingReader{c}, *s.limits.Load())
	return c
}

// countingReader counts the bytes and reads of a connection for INFO and
// CLIENT LIST.
type countingReader struct{ c *conn }

func (r countingReader) Read(p []byte) (int, error) {
	n, err := r.c.nc.Read(p)
	if n > 0 {
		st := &r.c.s.stats
		r.c.cl.NetIn.Add(int64(n))
		st.NetIn.Add(int64(n))
		st.ReadsProcessed.Add(1)
	}
	return n, err
}

func fdOf(nc net.Conn) int {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return -1
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	raw.Control(func(f uintptr) { fd = int(f) })
	return fd
}

// closeRead stops the connection from reading more commands; replies of
// the batch in progress are still written. Called under the lock.
func (c *conn) closeRead() {
	if tc, ok := c.nc.(*net.TCPConn); ok {
		tc.CloseRead()
		return
	}
	c.nc.Close()
}

// serve runs the connection until the peer goes away, a protocol error,
// QUIT, CLIENT KILL, the idle timeout or shutdown.
func (c *conn) serve() {
	s := c.s
	cl := c.cl
	defer func() {
		if c.out != nil {
			c.out.close()
		}
		c.nc.Close()
		s.ks.Exec(func() { s.drop(c) })
	}()
	lim := s.limits.Load()
	authed := true
	s.ks.Exec(func() { authed = cl.Authed })
	c.rd.SetAuthenticated(authed)
	var batch [][][]byte
	for {
		var err error
		batch, err = c.rd.ReadBatch(batch[:0])
		cl.QueryBuf.Store(int64(c.rd.Buffered()))
		if len(batch) > 0 {
			cl.LastInteraction.Store(time.Now().UnixMilli())
			authed = c.exec(batch)
		}
		if err != nil {
			var pe *resp.ProtocolError
			if errors.As(err, &pe) {
				cl.W.Error("ERR " + pe.Error())
				cl.CloseAfterReply = true
			} else if cl.W.Len() == 0 {
				return
			} else {
				cl.CloseAfterReply = true
			}
		}
		cl.QueryBuf.Store(int64(c.rd.Buffered()))
		if cl.W.Len() > 0 && !c.flush() {
			return
		}
		if cl.CloseAfterReply {
			return
		}
		if l := s.limits.Load(); l != lim {
			lim = l
			c.rd.SetLimits(*l)
		}
		c.rd.SetAuthenticated(authed)
	}
}

// flush writes the pending replies, through the MONITOR queue when there
// is one. It reports false when the connection is broken.
func (c *conn) flush() bool {
	cl := c.cl
	defer cl.W.Reset()
	if c.out != nil {
		return c.out.push(cl.W.Bytes())
	}
	c.nc.SetWriteDeadline(time.Now().Add(writeTimeout))
	n, err := c.nc.Write(cl.W.Bytes())
	st := &c.s.stats
	cl.NetOut.Add(int64(n))
	st.NetOut.Add(int64(n))
	st.WritesProcessed.Add(1)
	cl.LastInteraction.Store(time.Now().UnixMilli())
	return err == nil
}

// exec runs a batch of commands, holding the keyspace lock for at most
// maxBatchUnderLock commands at a time and releasing it for work a
// command offloaded (a KEYS over a snapshot) and while a CLIENT PAUSE
// holds a command back. It returns whether the client is authenticated
// afterwards, read under the lock.
func (c *conn) exec(batch [][][]byte) (authed bool) {
	s := c.s
	cl := c.cl
	for i := 0; i < len(batch); {
		var offload func()
		mark := 0
		s.ks.Lock()
		s.disp.BeginBatch(cl)
		for n := 0; i < len(batch) && n < maxBatchUnderLock; n++ {
			if !s.waitPause(c, batch[i]) {
				break
			}
			mark = cl.W.Mark()
			offload = s.disp.Exec(cl, batch[i])
			i++
			if offload != nil {
				break
			}
			c.afterReply(mark)
			if cl.CloseAfterReply {
				break
			}
		}
		if s.closing || c.killed {
			cl.CloseAfterReply = true
		}
		authed = cl.Authed
		s.ks.Unlock()
		if offload != nil {
			offload()
			c.afterReply(mark)
		}
		if cl.CloseAfterReply {
			return authed
		}
	}
	return authed
}

// afterReply applies CLIENT REPLY to the reply just written from mark on,
// and moves a MONITOR client's replies to its queue so that they keep
// their place among the feed lines.
func (c *conn) afterReply(mark int) {
	cl := c.cl
	if cl.ReplyOff || cl.ReplySkip {
		cl.W.Truncate(mark)
	}
	cl.ReplySkip = false
	if cl.ReplySkipNext {
		cl.ReplySkip, cl.ReplySkipNext = true, false
	}
	if c.out != nil && cl.W.Len() > 0 {
		c.out.push(cl.W.Bytes())
		cl.W.Reset()
	}
}

// outQueue is the output of a MONITOR connection: replies and feed lines
// appended under the keyspace lock by any client's goroutine, and written
// in order by one writer goroutine owned by the connection. The queue is
// bounded: a consumer that falls behind by more than limit bytes is
// disconnected, as Redis disconnects a client past its output buffer
// limit, so a slow MONITOR never holds memory or stalls the server.
type outQueue struct {
	nc    net.Conn
	limit int
	stats *commands.ServerStats

	mu     sync.Mutex
	buf    []byte
	closed bool

	sig  chan struct{} // capacity 1: "there is work"
	done chan struct{} // closed when the writer has exited
}

func newOutQueue(nc net.Conn, limit int, st *commands.ServerStats) *outQueue {
	return &outQueue{nc: nc, limit: limit, stats: st, sig: make(chan struct{}, 1), done: make(chan struct{})}
}

// push queues b (copied). It reports false when the queue is closed or
// just overflowed (and closed the connection).
func (q *outQueue) push(b []byte) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	if len(q.buf)+len(b) > q.limit {
		q.closed = true
		q.buf = nil
		q.mu.Unlock()
		q.nc.Close()
		q.signal()
		return false
	}
	q.buf = append(q.buf, b...)
	q.mu.Unlock()
	q.signal()
	return true
}

func (q *outQueue) signal() {
	select {
	case q.sig <- struct{}{}:
	default:
	}
}

// run is the writer goroutine: it writes whatever is queued until the
// queue is closed and drained, or a write fails.
func (q *outQueue) run() {
	defer close(q.done)
	var spare []byte
	for {
		q.mu.Lock()
		for len(q.buf) == 0 && !q.closed {
			q.mu.Unlock()
			<-q.sig
			q.mu.Lock()
		}
		buf := q.buf
		q.buf = spare[:0]
		closed := q.closed
		q.mu.Unlock()
		if len(buf) == 0 && closed {
			return
		}
		q.nc.SetWriteDeadline(time.Now().Add(writeTimeout))
		n, err := q.nc.Write(buf)
		q.stats.NetOut.Add(int64(n))
		q.stats.WritesProcessed.Add(1)
		if err != nil {
			q.mu.Lock()
			q.closed = true
			q.buf = nil
			q.mu.Unlock()
			q.nc.Close()
			return
		}
		if cap(buf) <= 1<<20 {
			spare = buf[:0]
		} else {
			spare = nil
		}
	}
}

// close stops the queue and waits until the writer has written what was
// queued (bounded by the write timeout) and exited.
func (q *outQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
	<-q.done
}
