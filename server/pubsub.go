package server

import (
	"sync"

	"github.com/zredis/zredis/engine"
)

// Pub/Sub delivery. PUBLISH (and every keyspace notification) runs under
// the keyspace lock, on the publisher's loop; the subscriber's socket
// belongs to the subscriber's loop. A message is therefore appended to
// the subscriber's outbox and the outbox is handed to its loop, which
// writes it in order with the subscriber's own replies. MONITOR lines take
// the same way. The publisher never waits: a subscriber that does not
// read is closed once its output passes client-output-buffer-limit
// pubsub (outlimit.go), as Redis closes it.

// pubsubOutbox holds the messages on their way to one connection.
type pubsubOutbox struct {
	mu        sync.Mutex
	buf       []byte // frames not yet handed to the socket
	spare     []byte // the previous buf, reused
	scheduled bool   // a flush is submitted to the loop and has not run
	closed    bool   // the connection is closing: buffer nothing more
}

// len is the number of bytes queued. Safe from any goroutine.
func (o *pubsubOutbox) len() int {
	o.mu.Lock()
	n := len(o.buf)
	o.mu.Unlock()
	return n
}

// close drops what is queued and makes the outbox take nothing more.
func (o *pubsubOutbox) close() {
	o.mu.Lock()
	o.closed, o.buf, o.spare = true, nil, nil
	o.mu.Unlock()
}

// PubSub implements engine.Server.
func (s *Server) PubSub() *engine.Subscriptions { return s.pubsub }

// deliverPubSub is the registry's delivery function: it queues frame for
// cl's connection. Under the keyspace lock.
//
// A message is pushed (Redis's CLIENT_PUSHING): a client with CLIENT
// REPLY OFF gets it too, as pubsub.tcl's keyspace notification tests
// check. The registry encodes a frame once, as the RESP2 array; a RESP3
// subscriber gets it as a push, which differs in the first byte only.
func (s *Server) deliverPubSub(cl *engine.Client, frame []byte) {
	if c := s.clients[cl.ID]; c != nil && !c.killed {
		c.pushOut(frame, cl.W.Proto() == 3)
	}
}

// clientByID is the client of a connection by its ID, nil when there is
// none (lookupClientByID). Under the keyspace lock.
func (s *Server) clientByID(id int64) *engine.Client {
	if c := s.clients[id]; c != nil && !c.killed {
		return c.cl
	}
	return nil
}

// pushOut appends frame (a message, a MONITOR line) to the outbox, asks
// the loop to write it and applies the output limits to what the
// connection now holds. With push, frame is an array sent as a RESP3
// push ('>' for '*'). Under the keyspace lock.
func (c *conn) pushOut(frame []byte, push bool) {
	o := &c.ps
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return
	}
	at := len(o.buf)
	o.buf = append(o.buf, frame...)
	if push {
		o.buf[at] = '>'
	}
	queued := len(o.buf)
	submit := !o.scheduled
	o.scheduled = true
	o.mu.Unlock()
	if total := queued + c.lc.Pending(); total > replyStaticBytes && c.checkOutput(total, 0) {
		return
	}
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

// flushPubSub writes the outbox to the socket. While the connection is
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
	c.countOut(int64(len(b)))
	c.s.stats.WritesProcessed.Add(1)
	if cap(b) <= 64<<10 { // a burst's buffer is not kept
		o.mu.Lock()
		if !o.closed {
			o.spare = b[:0]
		}
		o.mu.Unlock()
	}
}
