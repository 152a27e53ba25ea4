package replication

import (
	"context"
	"time"
)

// A shutdown that waits for its replicas, as Redis 7.0's
// prepareForShutdown / isReadyToShutdown / finishShutdown.
//
// Unless NOW is given (or shutdown-timeout is 0), a master whose
// replicas have not all acknowledged master_repl_offset does not save
// and exit at once: it asks the replicas for an ACK (REPLCONF GETACK,
// unless writes are paused: the offset stays as it is) and waits until
// every replica acknowledged the offset or shutdown-timeout seconds
// passed. The wait is the master's, because only the master knows when
// an ACK comes; what surrounds it is the server's: the pause of writes
// during the wait, the SHUTDOWN clients blocked on its outcome, the
// final save.

// shutdownWait is the wait under way (isShutdownInitiated,
// shutdown_mstime). Under the keyspace lock.
type shutdownWait struct {
	waiting  bool
	deadline time.Time
	// wake tells WaitForShutdown that an ACK came or that the wait was
	// cancelled; one pending token is enough.
	wake chan struct{}
}

func (w *shutdownWait) wakeUp() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// StartShutdownWait initiates the wait for the replicas, timeout from
// now; paused says writes are paused already (CLIENT PAUSE), so no ACK
// is asked: the offset stays. Under the lock.
func (m *Master) StartShutdownWait(timeout time.Duration, paused bool) {
	w := &m.shutdown
	w.waiting = true
	w.deadline = time.Now().Add(timeout)
	w.wake = make(chan struct{}, 1)
	if !paused {
		m.AskAcks()
	}
	m.log.Noticef("Waiting for replicas before shutting down.")
}

// ShutdownWaiting reports whether a shutdown waits for its replicas.
// Under the lock.
func (m *Master) ShutdownWaiting() bool { return m.shutdown.waiting }

// CancelShutdownWait ends a wait in progress (SHUTDOWN ABORT, a failed
// save), and reports whether there was one. Under the lock.
func (m *Master) CancelShutdownWait() bool {
	if !m.shutdown.waiting {
		return false
	}
	m.shutdown.waiting = false
	m.shutdown.wakeUp()
	return true
}

// WaitForShutdown is the wait itself, without the lock: it checks on
// every ACK, and every period, whether the replicas caught up or the
// deadline passed (serverCron's check of isShutdownInitiated). It
// reports false when the wait was cancelled meanwhile, true when the
// shutdown is to finish; then finishing runs under the lock in the same
// acquisition that ends the wait (the server holds every client there,
// so a SHUTDOWN ABORT comes too late from then on). Cancelling ctx
// finishes at once, forced.
func (m *Master) WaitForShutdown(ctx context.Context, period time.Duration, finishing func()) (finish, forced bool) {
	var wake chan struct{}
	m.ks.Exec(func() { wake = m.shutdown.wake })
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			forced = true
		case <-wake:
		case <-tick.C:
		}
		done := false
		m.ks.Exec(func() {
			w := &m.shutdown
			if !w.waiting {
				done = true // cancelled
				return
			}
			if forced || !time.Now().Before(w.deadline) || m.AllAcked() {
				w.waiting = false
				finishing()
				done, finish = true, true
			}
		})
		if done {
			return finish, forced
		}
	}
}

// AllAcked is isReadyToShutdown: true when no replica lags, each having
// acknowledged the whole stream (whatever its state: one still
// synchronising has not). Under the lock.
func (m *Master) AllAcked() bool {
	off := m.stream.Offset()
	for _, r := range m.replicas {
		if r.ackOff != off {
			return false
		}
	}
	return true
}

// AskAcks asks the replicas for an ACK at once (REPLCONF GETACK), for a
// shutdown starting its wait while writes are not paused. Under the lock.
func (m *Master) AskAcks() {
	m.feedCommand([]byte("REPLCONF"), []byte("GETACK"), []byte("*"))
}

// LogAtShutdown is finishShutdown's report: a line for each replica that
// lags, then how many are in sync. Under the lock.
func (m *Master) LogAtShutdown() {
	rs := m.replicas
	if len(rs) == 0 {
		return
	}
	off, now, lagging := m.stream.Offset(), time.Now().Unix(), 0
	for _, r := range rs {
		if r.ackOff == off {
			continue
		}
		lagging++
		var lag int64
		if r.state == replOnline {
			lag = now - r.ackTime
		}
		m.log.Warningf("Lagging replica %s reported offset %d behind master, lag=%d, state=%s.",
			r.name(), off-r.ackOff, lag, r.stateName())
	}
	m.log.Noticef("%d of %d replicas are in sync when shutting down.", len(rs)-lagging, len(rs))
}
