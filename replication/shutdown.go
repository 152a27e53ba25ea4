package replication

import "time"

// What a shutdown that waits for its replicas asks of the master side
// (Redis 7.0's isReadyToShutdown, finishShutdown); the wait itself is
// the server's.

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
