package server

import (
	"sync/atomic"
	"time"

	"github.com/zredis/zredis/netloop"
	"github.com/zredis/zredis/persistence/aof"
)

// heldReplies are one event loop's connections whose replies wait for the
// AOF, as Redis writes the AOF in beforeSleep before any reply of the
// round goes out: written to the file under everysec and no (a crash of
// the process loses no acknowledged write), fsynced under always.
//
// At the end of a round of events (AfterEvents) the round's held
// connections become one group and the loop writes (and under always
// fsyncs) the AOF itself, as Redis does: one write and one fsync cover
// the round, and no hand-off to another goroutine and back adds its
// wake-up latency to every round. The fsync is cheap enough for that
// because the AOF keeps disk blocks reserved ahead of its end (see
// persistence/aof's appendFile). A group the write did not settle (the
// flusher was busy with it, or the write failed and the flusher retries)
// waits, while the loop goes on serving; the flusher's progress hook
// queues its release on the loop.
type heldReplies struct {
	s    *Server
	loop *netloop.Loop

	round   []*conn     // held in this round of events; loop
	groups  []heldGroup // handed to the AOF, oldest first; loop
	waiting atomic.Bool // groups is not empty
	queued  atomic.Bool // a release is queued on the loop
	release func()      // the queued task (one closure for the loop's life)
	// releasing: releaseSettled is running; loop.
	releasing bool
}

// heldGroup is one round's held connections and the AOF ticket of w that
// covers all their writes.
type heldGroup struct {
	w     *aof.Writer
	upTo  aof.Ticket
	conns []*conn
}

func newHeldReplies(s *Server, loop *netloop.Loop) *heldReplies {
	h := &heldReplies{s: s, loop: loop}
	h.release = func() {
		h.queued.Store(false)
		h.releaseSettled()
	}
	return h
}

// hold keeps the batch's replies until the AOF has its records; err is
// what ended the batch, handled when the replies go out. On the loop.
func (c *conn) hold(err error) {
	c.heldErr = err
	c.held.round = append(c.held.round, c)
}

// afterEvents is the loop's AfterEvents hook with the AOF on: the round's
// held connections are handed to the AOF as one group.
func (h *heldReplies) afterEvents() {
	for len(h.round) > 0 {
		g := heldGroup{w: h.round[0].aofW, conns: h.round}
		h.round = nil
		for i, c := range g.conns {
			if c.aofW != g.w {
				// The AOF was turned off or on during the round
				// (CONFIG SET appendonly): the rest is another group.
				h.round, g.conns = g.conns[i:], g.conns[:i]
				break
			}
			g.upTo = max(g.upTo, c.aofWait)
		}
		h.groups = append(h.groups, g)
		g.w.Flush(g.upTo)
		h.releaseSettled()
		if len(h.groups) > 0 {
			// waiting is set before the flusher is kicked, and the
			// groups are checked once more after: a flusher that
			// finished before it saw waiting has already made that
			// check succeed.
			h.waiting.Store(true)
			g.w.Kick()
			h.releaseSettled()
		}
	}
}

// progressed is the AOF writer's OnProgress hook, on the flusher: it
// queues a release on the loop if groups wait and none is queued.
func (h *heldReplies) progressed() {
	if h.waiting.Load() && !h.queued.Swap(true) {
		h.loop.Submit(h.release)
	}
}

// releaseSettled sends the replies of the groups the AOF covers now, in
// order, and lets each connection go on with the input it has. Under
// always a group whose write failed stays held: the writer's failure
// hook exits the process (see aofWriterOptions), and until then nothing
// is acknowledged; if the writer is closed with the write not on disk
// (CONFIG SET appendonly no, shutdown), its connections are closed
// unanswered. Under everysec and no the replies go out, as
// Redis's do. On the loop.
func (h *heldReplies) releaseSettled() {
	if h.releasing {
		// Re-entered: a connection this call let go on runs a script
		// past busy-reply-threshold, whose serving of the loop ran
		// AfterEvents. The outer call goes on with what is settled.
		return
	}
	h.releasing = true
	defer func() { h.releasing = false }()
	for len(h.groups) > 0 {
		g := h.groups[0]
		ok, err := g.w.Settled(g.upTo)
		always := err != nil && g.w.Policy() == aof.Always
		if !ok || (always && err != aof.ErrClosed) {
			break
		}
		// The group leaves the list before its connections go on: they
		// may be held again, in a new group.
		rest := copy(h.groups, h.groups[1:])
		h.groups[rest] = heldGroup{}
		h.groups = h.groups[:rest]
		for _, c := range g.conns {
			c.aofWait, c.aofW = 0, nil
			if c.lc.IsClosed() || always {
				// No reply goes out (closed, or under always without the
				// write on disk): finish does not run for the batch.
				c.forgetBatch()
				c.lc.Close()
				continue
			}
			if c.heldDetached {
				c.heldDetached = false
				c.lc.Attach()
			}
			c.readMore(c.finish(c.heldErr))
		}
	}
	if len(h.groups) == 0 {
		h.waiting.Store(false)
	}
}

// aofRetryPoll is how often a connection off the loop (see waitAOF)
// checks again whether a failed AOF write has been retried.
const aofRetryPoll = 10 * time.Millisecond

// waitAOF waits, off the event loop, until the AOF covers ticket t, with
// the rule of releaseSettled: under always, through failed attempts until
// the write is on disk. It reports false when the replies must not go out
// (always, and the AOF was closed without the write on disk).
func waitAOF(w *aof.Writer, t aof.Ticket) bool {
	for {
		err := w.Wait(t)
		switch {
		case err == nil || w.Policy() != aof.Always:
			return true
		case err == aof.ErrClosed:
			return false
		}
		time.Sleep(aofRetryPoll)
	}
}
