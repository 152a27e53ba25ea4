package server

import (
	"context"
	"time"

	"github.com/zredis/zredis/engine"
)

// A shutdown that waits for its replicas, as Redis 7.0's
// prepareForShutdown / isReadyToShutdown / finishShutdown / abortShutdown.
//
// Unless NOW is given (or shutdown-timeout is 0), a master whose
// replicas have not all acknowledged master_repl_offset does not save
// and exit at once: it pauses writes (a pause of its own, which CLIENT
// UNPAUSE does not lift), asks the replicas for an ACK (REPLCONF GETACK,
// unless CLIENT PAUSE is in force: the offset stays as it is), and waits
// until every replica acknowledged the offset or shutdown-timeout seconds
// passed. Reads are served meanwhile. The clients that sent SHUTDOWN are
// blocked until the end: on exit they get no reply, on SHUTDOWN ABORT (or
// a failed final save) "Errors trying to SHUTDOWN. Check logs.", as
// replyToClientsBlockedOnShutdown answers them. A SHUTDOWN sent during
// the wait, whatever its modifiers, joins the one under way, and a signal
// changes nothing, as Redis's prepareForShutdown returns at once while a
// shutdown is initiated.

// shutdownState is the shutdown under way. Under the keyspace lock.
type shutdownState struct {
	// results are the SHUTDOWN commands blocked until the outcome of the
	// shutdown requested or under way: "" when the server exits, else
	// the error to reply.
	results []chan string
	// waiting: the shutdown waits for the replicas until deadline
	// (isShutdownInitiated, shutdown_mstime).
	waiting  bool
	deadline time.Time
	// wake tells Run's wait that an ACK came or that the wait was
	// cancelled; one pending token is enough.
	wake chan struct{}
}

// awaits reports whether result is one of the SHUTDOWN commands still
// waiting for an outcome. Under the lock.
func (st *shutdownState) awaits(result chan string) bool {
	for _, r := range st.results {
		if r == result {
			return true
		}
	}
	return false
}

// answer gives every blocked SHUTDOWN command its outcome. Under the lock.
func (st *shutdownState) answer(outcome string) {
	for _, r := range st.results {
		r <- outcome
	}
	st.results = nil
}

// startShutdownWait initiates the wait for the replicas, timeout from
// now. Under the lock.
func (s *Server) startShutdownWait(timeout time.Duration) {
	st := &s.shut
	st.waiting = true
	st.deadline = time.Now().Add(timeout)
	st.wake = make(chan struct{}, 1)
	if !s.pause.active(s.ks.Clock().NowMs()) {
		s.repl.AskAcks()
	}
	s.pauseWritesFor(pauseShutdown, true)
	s.log.Noticef("Waiting for replicas before shutting down.")
}

// shutdownAcked wakes a shutdown waiting for its replicas when one of
// them acknowledged an offset (REPLCONF ACK). Under the lock.
func (s *Server) shutdownAcked() {
	if s.shut.waiting {
		s.shut.wakeUp()
	}
}

func (st *shutdownState) wakeUp() {
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

// waitReplicas is the wait itself, on Run's goroutine: it checks on every
// ACK, and every cron period, whether the replicas caught up or the
// deadline passed (serverCron's check of isShutdownInitiated). It
// reports false when the shutdown was cancelled meanwhile (SHUTDOWN
// ABORT), true when it is to finish; then the wait is over and every
// client is held for the final save, in the same acquisition of the lock
// (a SHUTDOWN ABORT comes too late from then on). Cancelling ctx (the
// program embedding the server stops it) finishes at once, forced.
func (s *Server) waitReplicas(ctx context.Context) (finish, forced bool) {
	var wake chan struct{}
	s.ks.Exec(func() { wake = s.shut.wake })
	tick := time.NewTicker(cronPeriod)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			forced = true
		case <-wake:
		case <-tick.C:
		}
		done := false
		s.ks.Exec(func() {
			if !s.shut.waiting {
				done = true // cancelled
				return
			}
			if forced || !time.Now().Before(s.shut.deadline) || s.repl.AllAcked() {
				s.shut.waiting = false
				s.pause.hold()
				done, finish = true, true
			}
		})
		if done {
			return finish, forced
		}
	}
}

// cancelShutdown is Redis's cancelShutdown: the blocked SHUTDOWN commands
// get their error, writes resume, a signal's request is forgotten, and a
// wait in progress ends. Under the lock.
func (s *Server) cancelShutdown() {
	s.signalled.Store(false) // shutdown_asap
	s.shut.answer(engine.ErrShutdownFailed)
	if s.shut.waiting {
		s.shut.waiting = false
		s.shut.wakeUp()
	}
	if s.pause.writesHeld&pauseShutdown != 0 {
		s.pauseWritesFor(pauseShutdown, false)
	}
}

// AbortShutdown implements engine.Server (abortShutdown): it cancels a
// shutdown waiting for its replicas, or a signal's shutdown not started
// yet, and reports whether there was one.
func (s *Server) AbortShutdown() bool {
	switch {
	case s.shut.waiting:
		s.cancelShutdown()
	case s.signalled.CompareAndSwap(true, false):
		// Run skips the signal's request when it comes to it.
	default:
		return false
	}
	s.log.Noticef("Shutdown manually aborted.")
	return true
}
