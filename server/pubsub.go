package server

import (
	"sync"
	"time"

	"github.com/zredis/zredis/commands"
	"github.com/zredis/zredis/config"
)

// Pub/Sub delivery. PUBLISH (and every keyspace notification) runs under
// the keyspace lock, on the publisher's loop; the subscriber's socket
// belongs to the subscriber's loop. A message is therefore appended to
// the subscriber's outbox and the outbox is handed to its loop, which
// writes it in order with the subscriber's own replies. The publisher
// never waits: a subscriber that does not read is closed once its
// pending output passes client-output-buffer-limit pubsub (at once past
// the hard limit, after soft-seconds continuously past the soft limit),
// as Redis closes it.

// pubsubOutbox holds the messages on their way to one connection.
type pubsubOutbox struct {
	mu        sync.Mutex
	buf       []byte // frames not yet handed to the socket
	spare     []byte // the previous buf, reused
	scheduled bool   // a flush is submitted to the loop and has not run
	closed    bool   // the connection is closing: buffer nothing more

	softSince time.Time // loop: when the output went past the soft limit
}

// PubSub implements commands.Server.
func (s *Server) PubSub() *commands.Subscriptions { return s.pubsub }

// watchPubSubLimits keeps the pubsub class of client-output-buffer-limit
// where the loops can read it.
func (s *Server) watchPubSubLimits() {
	load := func(string) error {
		l := s.cfg.ClientOutputBufferLimits()[config.ClientPubSub]
		s.pubsubLimit.Store(&l)
		return nil
	}
	load("")
	s.cfg.OnChange("client-output-buffer-limit", load)
}

// deliverPubSub is the registry's delivery function: it queues frame for
// cl's connection. Under the keyspace lock.
//
// A client with CLIENT REPLY OFF gets nothing, as in Redis, though it
// counts as a receiver.
func (s *Server) deliverPubSub(cl *commands.Client, frame []byte) {
	if cl.ReplyOff {
		return
	}
	if c := s.clients[cl.ID]; c != nil && !c.killed {
		c.pushPubSub(frame)
	}
}

// pushPubSub appends frame to the outbox and asks the loop to write it.
// An outbox the loop has not caught up with is bounded by the hard
// limit: past it the connection is closed without waiting for the loop.
// Under the keyspace lock.
func (c *conn) pushPubSub(frame []byte) {
	o := &c.ps
	lim := c.s.pubsubLimit.Load()
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return
	}
	if lim.Hard > 0 && uint64(len(o.buf)+len(frame)) >= lim.Hard {
		o.closed = true
		o.buf = nil
		o.mu.Unlock()
		c.s.log.Warningf("Client id=%d addr=%s closed for overcoming of output buffer limits.", c.cl.ID, c.cl.Addr)
		c.closeNow()
		return
	}
	o.buf = append(o.buf, frame...)
	submit := !o.scheduled
	o.scheduled = true
	o.mu.Unlock()
	if submit {
		c.loop.Submit(c.flushPubSub)
	}
}

// takePubSub moves the messages waiting in the outbox into the reply
// buffer, ahead of the reply of the command about to run: the client
// sees messages and replies in the order the server produced them, even
// when its batch runs in several acquisitions of the lock or on its
// worker. Under the keyspace lock, on the connection's own goroutine.
func (c *conn) takePubSub() {
	o := &c.ps
	o.mu.Lock()
	if len(o.buf) > 0 {
		c.cl.W.Raw(o.buf)
		o.buf = o.buf[:0]
	}
	o.mu.Unlock()
}

// flushPubSub writes the outbox to the socket and applies the output
// limits to what the socket has not taken. While the connection is
// suspended (a batch finishing on its worker) the messages wait, so that
// they follow the replies of the commands that ran before them. On the
// loop.
func (c *conn) flushPubSub() {
	o := &c.ps
	if c.lc == nil || c.lc.IsClosed() {
		o.mu.Lock()
		o.closed, o.buf, o.scheduled = true, nil, false
		o.mu.Unlock()
		return
	}
	if c.suspended {
		return // resumed by the suspension's end, which calls flushPubSub
	}
	o.mu.Lock()
	b := o.buf
	o.buf, o.spare = o.spare[:0], nil // the spare must never alias b
	o.scheduled = false
	o.mu.Unlock()
	if len(b) == 0 {
		return
	}
	c.lc.Write(b)
	st := &c.s.stats
	st.NetOut.Add(int64(len(b)))
	st.WritesProcessed.Add(1)
	c.cl.NetOut.Add(int64(len(b)))
	if cap(b) <= 64<<10 { // a burst's buffer is not kept
		o.mu.Lock()
		o.spare = b[:0]
		o.mu.Unlock()
	}

	lim := c.s.pubsubLimit.Load()
	pending := uint64(c.lc.Pending())
	switch {
	case lim.Hard > 0 && pending >= lim.Hard:
		c.closeOverLimit()
	case lim.Soft > 0 && pending >= lim.Soft:
		now := time.Now()
		if o.softSince.IsZero() {
			o.softSince = now
		} else if int64(now.Sub(o.softSince)/time.Second) > lim.SoftSeconds {
			// Whole seconds, as Redis compares its unixtime.
			c.closeOverLimit()
		}
	default:
		o.softSince = time.Time{}
	}
}

// closeOverLimit closes a subscriber past its output limit. On the loop.
func (c *conn) closeOverLimit() {
	o := &c.ps
	o.mu.Lock()
	o.closed, o.buf = true, nil
	o.mu.Unlock()
	c.s.log.Warningf("Client id=%d addr=%s closed for overcoming of output buffer limits.", c.cl.ID, c.cl.Addr)
	c.lc.Close()
}
