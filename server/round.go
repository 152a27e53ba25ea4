package server

import "github.com/zredis/zredis/netloop"

// roundReplies are one event loop's connections whose replies wait for
// the end of the round of events: the loop's AfterHandlers writes them
// once every connection the poll reported has run its commands, as
// Redis writes its clients' replies in beforeSleep
// (handleClientsWithPendingWrites) rather than after each client's
// commands.
//
// Why: a reply written at once to a client that waits in epoll wakes it
// for that one reply. Under a pipelined benchmark the wake-up was the
// server's largest cost: perf showed 14% of zredis's CPU under EVALSHA at
// pipeline 16 in the scheduler's wake-up (sock_def_readable ->
// _raw_spin_unlock_irqrestore), against 2% for redis-server. Written
// together, a round's replies wake the client once, and it answers them
// with its next requests together.
//
// A batch's replies wait only when writing them is all its finish has to
// do (canDefer), and only when the loop runs the handlers of a poll's
// connections (netloop's Handling), which AfterHandlers follows at once;
// a batch run by a task (once a wait for the AOF or on a worker ended)
// writes its replies itself. What else is written to a connection comes
// from tasks (messages of a subscriber, the replication stream, blocked
// commands' replies), which run after AfterHandlers: output goes out in
// the order it was produced in.
type roundReplies struct {
	conns []*conn
}

// canDefer reports whether the batch that err ended may leave its
// replies for the end of the round: finish has nothing to do for it but
// write them (no error to answer, no close to make).
func (c *conn) canDefer(err error) bool {
	return (err == nil || err == netloop.ErrWouldBlock) && !c.cl.CloseAfterReply && !c.overLimit.Load()
}

// add defers c's replies to the end of the round; err ended its batch.
func (r *roundReplies) add(c *conn, err error) {
	if !c.deferred {
		c.deferred = true
		r.conns = append(r.conns, c)
	}
	c.deferredErr = err
}

// finish writes c's deferred replies now (finish), if it is still open.
func (r *roundReplies) finish(c *conn) {
	c.deferred = false
	if !c.lc.IsClosed() {
		c.finish(c.deferredErr)
	}
	c.deferredErr = nil
}

// afterHandlers is the loop's AfterHandlers hook: the round's deferred
// replies go out.
func (r *roundReplies) afterHandlers() {
	for i := 0; i < len(r.conns); i++ {
		if c := r.conns[i]; c.deferred {
			r.finish(c)
		}
	}
	clear(r.conns)
	r.conns = r.conns[:0]
}
