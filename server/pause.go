package server

import (
	"math"
	"time"

	"github.com/zredis/zredis/engine"
)

// pauseState is CLIENT PAUSE: until end (Unix ms on the keyspace clock)
// clients' commands wait before running, all of them or only those that
// may write. Guarded by the keyspace lock.
//
// As Redis 7.0 keeps one pause per purpose (pauseClients with
// PAUSE_BY_CLIENT_COMMAND, PAUSE_DURING_SHUTDOWN) and applies the widest,
// a shutdown waiting for its replicas has a pause of its own, writes:
// CLIENT PAUSE and CLIENT UNPAUSE do not change it.
type pauseState struct {
	end  int64
	all  bool
	wake chan struct{} // closed and replaced when a pause is lifted

	// writes holds back, with no end, the commands that may write while
	// a shutdown waits for its replicas (replshutdown.go), so that the
	// offset they are to reach stays still; lifted when the shutdown is
	// cancelled.
	writes bool

	// shutdown holds every command while the final save of a shutdown
	// runs, as Redis runs it without serving anybody: a write acknowledged
	// after the save's snapshot would be lost by the exit. A failed save
	// lifts it (unhold) and the server goes on serving.
	shutdown bool
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

// pauseWrites starts or ends the shutdown's pause of writes; ending it
// wakes the clients it held (a CLIENT PAUSE in force goes on).
func (p *pauseState) pauseWrites(on bool) {
	p.writes = on
	if !on {
		close(p.wake)
		p.wake = make(chan struct{})
	}
}

// none reports that no pause of any kind is in force or pending, the
// per-command path's test: it reads no clock.
func (p *pauseState) none() bool { return p.end == 0 && !p.shutdown && !p.writes }

// expiryUntil is when expiry resumes (Unix ms; 0: it is not paused):
// nothing expires while clients are paused, as in Redis 7.0.
func (p *pauseState) expiryUntil() int64 {
	if p.writes {
		return math.MaxInt64
	}
	return p.end
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
	if p.writes && writes {
		return true
	}
	if now >= p.end {
		return false
	}
	return p.all || writes
}

// active reports whether a pause is in force at time now (Redis's
// areClientsPaused), the final save's hold aside.
func (p *pauseState) active(now int64) bool { return p.writes || now < p.end }

// pausable returns the flags that decide whether a pause holds a request
// back, ok=false when the dispatcher will reject it (unknown, wrong arity,
// unknown subcommand, not authenticated): Redis rejects those at once,
// paused or not. An EXEC carries the flags of the commands it will run.
func (s *Server) pausable(cl *engine.Client, args [][]byte) (flags engine.Flag, ok bool) {
	cmd, rejected := s.disp.Resolve(cl, args)
	if cmd == nil || rejected != "" {
		return 0, false
	}
	flags = cmd.Flags
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

// pauseCheck decides, under the lock, what a pause means for args. With
// mayBlock it waits in place (see waitPause) instead of answering
// pauseWait.
func (s *Server) pauseCheck(c *conn, args [][]byte, mayBlock bool) pauseVerdict {
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
		if s.waitPause(c, args) {
			return pauseRun
		}
		return pauseStop
	}
	if s.pause.shutdown {
		return pauseWait
	}
	now := s.ks.Clock().NowMs()
	if !s.pause.active(now) {
		return pauseRun
	}
	if flags, ok := s.pausable(c.cl, args); !ok || !s.pause.holds(flags, now) {
		return pauseRun
	}
	return pauseWait
}

// waitPause holds a request back while a pause applies to it, releasing
// the keyspace lock (held on entry and on return) while it waits. It
// reports false when the connection must run nothing more: the server is
// shutting down or the client was killed. MONITOR clients, like Redis's
// replicas, are never paused.
func (s *Server) waitPause(c *conn, args [][]byte) bool {
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
			c.paused = true
			s.ks.Unlock()
			select {
			case <-wake:
			case <-c.gone:
			}
			s.ks.Lock()
			s.disp.BeginBatch(c.cl)
			c.paused = false
			continue
		}
		now := s.ks.Clock().NowMs()
		if now >= s.pause.end {
			s.pause.end, s.pause.all = 0, false // expired
			if !s.pause.writes {
				return true
			}
		}
		flags, ok := s.pausable(c.cl, args)
		if !ok || !s.pause.holds(flags, now) {
			return true
		}
		// A write held by a shutdown's pause waits for it to be lifted,
		// whatever CLIENT PAUSE does meanwhile; anything else until the
		// CLIENT PAUSE ends.
		wake := s.pause.wake
		var t *time.Timer
		var expired <-chan time.Time
		if !s.pause.writes || flags&(engine.Write|engine.MayReplicate) == 0 {
			t = time.NewTimer(time.Duration(s.pause.end-now) * time.Millisecond)
			expired = t.C
		}
		c.paused = true
		s.ks.Unlock()
		select {
		case <-wake:
		case <-expired:
		case <-c.gone:
		}
		if t != nil {
			t.Stop()
		}
		s.ks.Lock()
		s.disp.BeginBatch(c.cl)
		c.paused = false
	}
}
