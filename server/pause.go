package server

import (
	"math"
	"time"

	"github.com/zredis/zredis/engine"
)

// pauseState is CLIENT PAUSE: until end (Unix ms on the keyspace clock)
// clients' commands wait before running, all of them or only those that
// may write. Guarded by the keyspace lock.
type pauseState struct {
	end  int64
	all  bool
	wake chan struct{} // closed and replaced when a pause is lifted

	// shutdown holds every command while the final save of a shutdown
	// runs, as Redis runs it without serving anybody: a write acknowledged
	// after the save's snapshot would be lost by the exit. A failed save
	// lifts it (unhold) and the server goes on serving.
	shutdown bool

	// writesHeld holds, with no end, the commands that may write, for
	// each purpose set (Redis 7.0's pause purposes, the widest applying):
	// CLIENT PAUSE and UNPAUSE do not change them.
	writesHeld uint8
}

// The purposes of writesHeld.
const (
	pauseFailover        uint8 = 1 << iota // FAILOVER, until it ends
	pauseShutdown                          // a shutdown waiting for its replicas (replication.Master.StartShutdownWait), until cancelled
	pauseClusterFailover                   // a cluster replica's manual failover (CLUSTER FAILOVER), until it ends or times out
)

// holdWrites sets or clears one purpose of writesHeld; clearing wakes
// the clients held (those another pause holds wait on).
func (p *pauseState) holdWrites(purpose uint8, on bool) {
	if on {
		p.writesHeld |= purpose
		return
	}
	p.writesHeld &^= purpose
	close(p.wake)
	p.wake = make(chan struct{})
}

// none reports that no pause of any kind is in force or pending, the
// per-command path's test: it reads no clock.
func (p *pauseState) none() bool { return p.end == 0 && !p.shutdown && p.writesHeld == 0 }

// expiryUntil is until when expiry is paused (Unix ms; 0: it is not):
// nothing expires while clients are paused, as in Redis 7.0.
func (p *pauseState) expiryUntil() int64 {
	if p.writesHeld != 0 {
		return math.MaxInt64
	}
	return p.end
}

// hold starts the shutdown hold.
func (p *pauseState) hold() { p.shutdown = true }

// unhold ends the shutdown hold and wakes the clients it held; a CLIENT
// PAUSE in force goes on.
func (p *pauseState) unhold() {
	p.shutdown = false
	close(p.wake)
	p.wake = make(chan struct{})
}

// set starts or extends a pause: like Redis, a pause already in force
// keeps the later end and the wider mode; an expired one is replaced.
func (p *pauseState) set(now, end int64, all bool) {
	if p.end <= now {
		p.end, p.all = 0, false
	}
	p.end = max(p.end, end)
	p.all = p.all || all
}

// release lifts the pause and wakes the clients it holds.
func (p *pauseState) release() {
	p.end, p.all = 0, false
	close(p.wake)
	p.wake = make(chan struct{})
}

// holds reports whether the pause holds back, at time now, a command
// with these flags.
func (p *pauseState) holds(flags engine.Flag, now int64) bool {
	writes := flags&(engine.Write|engine.MayReplicate) != 0
	if p.writesHeld != 0 && writes {
		return true
	}
	if now >= p.end {
		return false
	}
	return p.all || writes
}

// active reports whether a pause is in force at time now (Redis's
// areClientsPaused), the final save's hold aside.
func (p *pauseState) active(now int64) bool { return p.writesHeld != 0 || now < p.end }

// pausable returns the flags that decide whether a pause holds a request
// back, ok=false when the dispatcher will reject it (unknown, wrong arity,
// unknown subcommand, not authenticated): Redis rejects those at once,
// paused or not. An EXEC carries the flags of the commands it will run.
func (s *Server) pausable(cl *engine.Client, args [][]byte) (flags engine.Flag, ok bool) {
	cmd, rejected := s.disp.Resolve(cl, args)
	if cmd == nil || rejected != "" || s.disp.RefusesAtOnce(cl, cmd) {
		return 0, false
	}
	flags = s.disp.CallFlags(cmd, args)
	if cmd.Name == "exec" {
		flags |= cl.QueuedFlags()
	}
	return flags, true
}

// pauseVerdict tells the connection what CLIENT PAUSE means for a request.
type pauseVerdict int

const (
	pauseRun  pauseVerdict = iota // run it now
	pauseWait                     // held back: wait (off the event loop)
	pauseStop                     // run nothing more: shutdown or killed
)

// pauseCheck decides, under the lock, what a pause means for batch[i].
// With mayBlock it waits in place (see waitPause) instead of answering
// pauseWait.
func (s *Server) pauseCheck(c *conn, batch [][][]byte, i int, mayBlock bool) pauseVerdict {
	args := batch[i]
	if s.closing || c.killed {
		return pauseStop
	}
	if s.pause.none() {
		return pauseRun // no pause: the per-command path reads no clock here
	}
	if (c.cl.Monitor || c.cl.Replica) && !s.pause.shutdown {
		return pauseRun
	}
	if mayBlock {
		if s.waitPause(c, batch, i) {
			return pauseRun
		}
		return pauseStop
	}
	if s.pause.shutdown {
		return pauseWait
	}
	now := s.ks.Clock().NowMs()
	if now >= s.pause.end && s.pause.writesHeld == 0 {
		return pauseRun
	}
	if flags, ok := s.pausable(c.cl, args); !ok || !s.pause.holds(flags, now) {
		return pauseRun
	}
	return pauseWait
}

// waitPause holds batch[i] back while a pause applies to it, releasing
// the keyspace lock (held on entry and on return) while it waits. It
// reports false when the connection must run nothing more: the server is
// shutting down or the client was killed. MONITOR clients, like Redis's
// replicas, are never paused.
func (s *Server) waitPause(c *conn, batch [][][]byte, i int) bool {
	args := batch[i]
	defer c.unpaused()
	for {
		if s.closing || c.killed {
			return false
		}
		if s.pause.none() {
			return true // no pause: the per-command path reads no clock here
		}
		if c.cl.Monitor && !s.pause.shutdown {
			return true
		}
		if s.pause.shutdown {
			wake := s.pause.wake
			c.pausedOn(batch, i)
			s.ks.Unlock()
			select {
			case <-wake:
			case <-c.gone:
			}
			s.ks.Lock()
			s.disp.BeginBatch(c.cl)
			continue
		}
		now := s.ks.Clock().NowMs()
		if now >= s.pause.end {
			s.pause.end, s.pause.all = 0, false // expired
			if s.pause.writesHeld == 0 {
				return true
			}
		}
		if flags, ok := s.pausable(c.cl, args); !ok || !s.pause.holds(flags, now) {
			return true
		}
		wait := time.Duration(math.MaxInt64)
		if s.pause.end > now {
			wait = time.Duration(s.pause.end-now) * time.Millisecond
		}
		wake := s.pause.wake
		c.pausedOn(batch, i)
		s.ks.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-wake:
		case <-t.C:
		case <-c.gone:
		}
		t.Stop()
		s.ks.Lock()
		s.disp.BeginBatch(c.cl)
	}
}

// pausedOn marks c held back by a pause on batch[i], as Redis shows a
// client it blocked with BLOCKED_POSTPONE: flag b, counted in
// blocked_clients, the command's name as cmd= (processCommand set
// lastcmd before pausing it) and its arguments as argv-mem, and the
// query buffer holding only what follows it. Under the lock.
func (c *conn) pausedOn(batch [][][]byte, i int) {
	if c.paused {
		return
	}
	c.paused = true
	cl := c.cl
	cl.Paused, cl.PausedArgs = true, batch[i]
	if cmd, _ := c.s.disp.Resolve(cl, batch[i]); cmd != nil {
		cl.LastCmd = cmd.Name
	}
	c.noteQueryBuf(batchBytes(batch[i+1:]) + c.rd.Waiting())
}

// unpaused ends what pausedOn marked. Under the lock.
func (c *conn) unpaused() {
	c.paused = false
	c.cl.Paused, c.cl.PausedArgs = false, nil
}
