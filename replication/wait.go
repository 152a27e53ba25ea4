package replication

import (
	"time"

	"github.com/zredis/zredis/engine"
)

// ackWaiter is one client blocked in WAIT.
type ackWaiter struct {
	cl       *engine.Client
	offset   int64
	n        int64
	done     chan struct{}
	finished bool
}

// countAcks is replicationCountAcksByOffset: the online replicas that
// acknowledged offset.
func (m *Master) countAcks(offset int64) int64 {
	var n int64
	for _, r := range m.replicas {
		if r.state == replOnline && r.ackOff >= offset {
			n++
		}
	}
	return n
}

// RefreshGood is refreshGoodSlavesCount: the online replicas whose last
// ACK is at most min-replicas-max-lag seconds old, for
// min-replicas-to-write. Under the lock.
func (m *Master) RefreshGood() { m.refreshGood() }

func (m *Master) refreshGood() {
	lag := m.cfg.Int("min-replicas-max-lag")
	if m.cfg.Int("min-replicas-to-write") == 0 || lag == 0 {
		m.host.SetGoodReplicas(0)
		return
	}
	now := time.Now().Unix()
	var good int64
	for _, r := range m.replicas {
		if r.state == replOnline && now-r.ackTime <= lag {
			good++
		}
	}
	m.host.SetGoodReplicas(good)
}

// Wait implements engine.Replication (waitCommand): the client blocks
// until numReplicas replicas acknowledged its last write, or the timeout
// passes (0: never), and is answered the count. The replicas are asked
// for an ACK at once (REPLCONF GETACK).
func (m *Master) Wait(c *engine.Ctx, numReplicas int64, timeout time.Duration) {
	cl := c.Client
	acks := m.countAcks(cl.WOff)
	if acks >= numReplicas || cl.InMulti {
		c.W.Int(acks)
		return
	}
	w := &ackWaiter{cl: cl, offset: cl.WOff, n: numReplicas, done: make(chan struct{})}
	m.waiters = append(m.waiters, w)
	cl.Blocked, cl.BlockedTimeout = true, timeout > 0
	cl.Unblock = func(errMsg string) bool {
		if w.finished {
			return false
		}
		if errMsg != "" {
			cl.W.Error(errMsg)
		} else {
			cl.W.Int(m.countAcks(w.offset))
		}
		m.finishWaiter(w)
		return true
	}
	m.askAcks()
	ks := m.ks
	c.Offload(func() {
		var expired <-chan time.Time
		if timeout > 0 {
			t := time.NewTimer(timeout)
			defer t.Stop()
			expired = t.C
		}
		hangup := time.NewTicker(100 * time.Millisecond)
		defer hangup.Stop()
		for {
			select {
			case <-w.done:
				return
			case <-expired:
				ks.Exec(func() {
					if !w.finished {
						cl.W.Int(m.countAcks(w.offset))
						m.finishWaiter(w)
					}
				})
				return
			case <-hangup.C:
				ks.Exec(func() {
					if !w.finished && cl.PeerClosed != nil && cl.PeerClosed() && cl.Kill != nil {
						cl.Kill()
					}
				})
			}
		}
	})
}

// serveWaiters answers the WAIT clients whose replicas now acknowledged
// enough (processClientsWaitingReplicas). Under the lock.
func (m *Master) serveWaiters() {
	for _, w := range append([]*ackWaiter(nil), m.waiters...) {
		if w.finished {
			continue
		}
		if n := m.countAcks(w.offset); n >= w.n {
			w.cl.W.Int(n)
			m.finishWaiter(w)
		}
	}
}

// finishWaiter unblocks a WAIT client. Under the lock.
func (m *Master) finishWaiter(w *ackWaiter) {
	if w.finished {
		return
	}
	w.finished = true
	for i, x := range m.waiters {
		if x == w {
			m.waiters = append(m.waiters[:i:i], m.waiters[i+1:]...)
			break
		}
	}
	w.cl.Blocked, w.cl.BlockedTimeout = false, false
	w.cl.Unblock = nil
	close(w.done)
}

// ReleaseWaiter forgets the WAIT of a client that is gone. Under the
// lock.
func (m *Master) ReleaseWaiter(cl *engine.Client) {
	for _, w := range m.waiters {
		if w.cl == cl {
			m.finishWaiter(w)
			return
		}
	}
}

// askAcks asks the replicas for an ACK (REPLCONF GETACK), for WAIT; not
// while clients are paused, when it would move the offset a FAILOVER or a
// shutdown waits for, but once the pause ends (the cron), as Redis's
// beforeSleep. Under the lock.
func (m *Master) askAcks() {
	if m.host.Paused(m.ks.Clock().NowMs()) {
		m.getAckPending = true
		return
	}
	m.getAckPending = false
	m.feedCommand([]byte("REPLCONF"), []byte("GETACK"), []byte("*"))
}
