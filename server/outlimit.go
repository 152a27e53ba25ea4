package server

import (
	"time"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
)

// Output buffer limits (client-output-buffer-limit), one mechanism for
// every client class, as Redis 7.0's checkClientOutputBufferLimits and
// closeClientOnOutputBufferLimitReached apply them.
//
// A connection's output is what the server holds for it and the socket
// has not taken: the replies of the batch being run (the reply writer),
// the messages and MONITOR lines on their way to it (the outbox), and
// what the event loop keeps for the socket (netloop's pending output).
// Redis keeps the first 16 KB of a client's output in the client's
// static reply buffer and counts only the rest (its reply list) against
// the limits and in CLIENT LIST's omem; the same 16 KB are set apart
// here (replyStaticBytes), so that a limit closes a client at the figure
// it would close it in Redis.
//
// The limits are checked, under the keyspace lock, wherever output is
// added: after each command of a batch, and for every Pub/Sub message or
// MONITOR line queued for the connection. A connection past the hard
// limit, or past the soft limit for longer than its seconds, is closed
// at once with its pending output dropped: nothing more is buffered for
// it, and the rest of its batch does not run, as Redis stops processing
// a client scheduled to close (CLIENT_CLOSE_ASAP).
//
// A connection whose class has a limit is read while its output waits,
// as Redis reads it, so that a client that never reads its replies
// reaches the limit and is closed as in Redis. Without a limit (normal's
// default, 0 0 0) it is not read until its output is written: where
// Redis would buffer without bound, such a client waits.

// replyStaticBytes is the part of a client's output that Redis keeps in
// its static reply buffer (PROTO_REPLY_CHUNK_BYTES): CLIENT LIST's obl.
const replyStaticBytes = 16 << 10

// outputLimits holds the limits of client-output-buffer-limit, indexed
// by config.ClientNormal, ClientReplica and ClientPubSub.
type outputLimits [3]config.BufferLimit

// watchOutputLimits keeps client-output-buffer-limit where every loop
// reads it; CONFIG SET applies to the next output added.
func (s *Server) watchOutputLimits() {
	load := func(string) error {
		l := outputLimits(s.cfg.ClientOutputBufferLimits())
		s.outLimits.Store(&l)
		return nil
	}
	load("")
	s.cfg.OnChange("client-output-buffer-limit", load)
}

// outputClass is the class whose limits apply to cl, as getClientType
// decides it: a replica is replica, a subscriber pubsub, and a MONITOR client is normal
// (Redis 7.0 flags monitors as replicas but classifies them as normal,
// for the limits as for CLIENT LIST TYPE). Under the lock.
func outputClass(cl *engine.Client) int {
	if cl.Replica && !cl.Monitor {
		return config.ClientReplica
	}
	if cl.Subs+cl.PSubs+cl.SSubs > 0 {
		return config.ClientPubSub
	}
	return config.ClientNormal
}

// limited reports whether a class has any output limit.
func limited(l *config.BufferLimit) bool { return l.Hard > 0 || l.Soft > 0 }

// pendingOutput is the output the server holds for the connection outside
// its reply writer: the outbox and the loop's pending output. Safe from
// any goroutine.
func (c *conn) pendingOutput() int {
	n := 0
	if c.lc != nil {
		n = c.lc.Pending()
	}
	return n + c.ps.len()
}

// checkOutput applies the output limits to the connection holding total
// bytes of output, writer of them in its reply writer (0 when the caller
// is not the connection's own goroutine); past them it closes the
// connection (closeOverLimit) and reports true. Callers call it only when
// total passes replyStaticBytes, which keeps the common path to one
// comparison. Under the lock.
func (c *conn) checkOutput(total, writer int) bool {
	return c.checkOutputFrom(total, writer, true)
}

// checkOutputFrom is checkOutput; async tells which of Redis's two log
// lines to write: the one of a check as output is added (the client is
// scheduled to be closed) or the one of the periodic check (closed).
func (c *conn) checkOutputFrom(total, writer int, async bool) bool {
	if c.overLimit.Load() || c.killed {
		return c.overLimit.Load()
	}
	if total <= replyStaticBytes {
		return false // Redis checks nothing while its reply list is empty
	}
	used := uint64(total - replyStaticBytes)
	l := &c.s.outLimits.Load()[outputClass(c.cl)]
	if reached(l, used, &c.softSince, time.Now) {
		c.closeOverLimit(writer, async)
		return true
	}
	return false
}

// reached is checkClientOutputBufferLimits: whether used bytes pass the
// hard limit, or have stayed past the soft limit for more than its
// seconds. softSince is the Unix second the output went past the soft
// limit (0: it is not past it); the first time it is seen past, the
// soft limit is not reached yet. Seconds are whole, as Redis compares
// its unixtime.
func reached(l *config.BufferLimit, used uint64, softSince *int64, now func() time.Time) bool {
	if l.Hard > 0 && used >= l.Hard {
		return true
	}
	if l.Soft == 0 || used < l.Soft {
		*softSince = 0
		return false
	}
	t := now().Unix()
	if *softSince == 0 {
		*softSince = t
		return false
	}
	return t-*softSince > l.SoftSeconds
}

// closeOverLimit closes a connection past its output limits, with
// Redis's log line: nothing more is queued for it, and its loop closes
// it, dropping its pending output, as soon as it runs (Redis's
// freeClientAsync); the client leaves the client list and its
// subscriptions then, not here, where a PUBLISH may be walking them.
// Under the lock.
func (c *conn) closeOverLimit(writer int, async bool) {
	c.overLimit.Store(true)
	c.ps.close()
	info := engine.ClientInfoString(c.cl, time.Now().UnixMilli(), writer)
	if async {
		c.s.log.Warningf("Client %s scheduled to be closed ASAP for overcoming of output buffer limits.", info)
	} else {
		c.s.log.Warningf("Client %s closed for overcoming of output buffer limits.", info)
	}
	c.closeNow()
}

// checkOutputLimit is the periodic check of clientsCron: a client that
// stays past the soft limit without being sent anything more (a client
// that stopped sending commands, a subscriber whose channels went quiet)
// is closed once soft-seconds have passed. At the client's visit, once a
// second (clientscron.go), under the lock.
func (s *Server) checkOutputLimit(c *conn) {
	if c.cl.Output == nil {
		return // not on its loop yet (attach sets Output)
	}
	if n := c.pendingOutput(); n > replyStaticBytes {
		c.checkOutputFrom(n, 0, false)
	}
}

// outputFigures is engine.Client.Output: the client's output as CLIENT
// LIST shows it, writer being the bytes of its reply writer when the
// caller may read them (the client itself, or its own connection).
func (c *conn) outputFigures(writer int) engine.OutputFigures {
	f := outputFigures(writer + c.pendingOutput())
	f.Writing = c.lc.Pending() > 0
	return f
}

// outputFigures splits total bytes of output as Redis's CLIENT LIST shows
// a client's: the first 16 KB in the static buffer (obl), the rest in
// the reply list (omem), which here is one block (oll).
func outputFigures(total int) engine.OutputFigures {
	var f engine.OutputFigures
	f.Buf = int64(min(total, replyStaticBytes))
	if total > replyStaticBytes {
		f.Mem = int64(total - replyStaticBytes)
		f.Blocks = 1
	}
	return f
}

// peakSlots is how many seconds INFO's client_recent_max_input_buffer
// and client_recent_max_output_buffer look back
// (CLIENTS_PEAK_MEM_USAGE_SLOTS).
const peakSlots = 8

// clientPeaks keeps, per second of the last peakSlots, the largest query
// buffer and output (as omem counts it) seen on any client, as Redis's
// clientsCronTrackExpansiveClients does.
type clientPeaks struct {
	in, out [peakSlots]int64
	cur     int // the slot of this tick (rotate)
}

// rotate starts the slot of the Unix second now for this tick's
// samples, as Redis's clientsCron does at each run: the slot after it,
// the oldest, is cleared.
func (p *clientPeaks) rotate(now int64) {
	p.cur = int(now % peakSlots)
	next := (p.cur + 1) % peakSlots
	p.in[next], p.out[next] = 0, 0
}

// sample records c's buffers in the current slot: the input is the
// memory of the query buffer (its largest since the last sample, as
// Redis would allocate it: engine.QueryBufFigures). At the client's
// visit, under the lock.
func (p *clientPeaks) sample(c *conn) {
	_, in := engine.QueryBufFigures(c.rd.TakePeak())
	p.in[p.cur] = max(p.in[p.cur], in)
	if c.cl.Output != nil {
		p.out[p.cur] = max(p.out[p.cur], c.cl.Output(0).Mem)
	}
}

// max reports the largest query buffer and output of the last seconds.
func (p *clientPeaks) max() (in, out int64) {
	for i := range peakSlots {
		in, out = max(in, p.in[i]), max(out, p.out[i])
	}
	return in, out
}
