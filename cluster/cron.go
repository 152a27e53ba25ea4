package cluster

import (
	"math/rand/v2"
	"time"

	"github.com/zredis/zredis/cluster/bus"
)

// cronInterval is how often the cron runs: clusterCron runs ten times a
// second.
const cronInterval = 100 * time.Millisecond

func (s *State) cronLoop() {
	defer s.wg.Done()
	t := time.NewTicker(cronInterval)
	defer t.Stop()
	for iteration := uint64(1); ; iteration++ {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.mu.Lock()
		s.cron(iteration)
		save := s.todoSave
		votes := s.votes
		s.votes = nil
		role := s.needsRoleStep()
		s.unlock()
		if role {
			s.opt.Exec(func() { s.roleStep(true) })
			s.mu.Lock()
			save = s.todoSave
			s.mu.Unlock()
		}
		if save && s.saveConfig() != nil {
			continue // no vote leaves unless nodes.conf has it
		}
		if len(votes) > 0 {
			s.mu.Lock()
			s.sendVotes(votes)
			s.mu.Unlock()
		}
	}
}

// sendVotes sends the votes granted (voteIfNeeded) once nodes.conf has
// them. Under mu.
func (s *State) sendVotes(votes []*Node) {
	for _, n := range votes {
		if n.link != nil {
			n.link.send((&bus.Message{Header: s.header(bus.FailoverAuthAck)}).Append(nil))
		}
	}
}

// cron is one run of clusterCron: links made to the nodes without one,
// handshakes that took too long given up, pings, and failure detection.
// Under mu.
func (s *State) cron(iteration uint64) {
	s.updateMyselfFlags()
	now := nowMs()
	timeout := s.opt.NodeTimeout.Milliseconds()
	handshakeTimeout := max(timeout, 1000)
	for _, n := range append([]*Node(nil), s.cfg.Nodes...) {
		if n.Flags&(bus.FlagMyself|bus.FlagNoAddr) != 0 {
			continue
		}
		if n.Flags&bus.FlagHandshake != 0 && now-n.ctime > handshakeTimeout {
			s.delNode(n)
			continue
		}
		if n.link == nil && !n.dialing && !s.closed {
			conf, ok := s.busTLS(false)
			if !ok {
				// Counted as a ping sent, as a failed connection is.
				if n.PingSent == 0 {
					n.PingSent = nowMs()
				}
				continue
			}
			n.dialing = true
			s.wg.Add(1)
			go s.connect(n, n.IP, n.CPort, s.opt.NodeTimeout, conf)
		}
	}

	// Every second, a PING to one of five random nodes: the one whose
	// PONG is the oldest.
	if iteration%10 == 0 && len(s.cfg.Nodes) > 0 {
		var oldest *Node
		for range 5 {
			n := s.cfg.Nodes[rand.IntN(len(s.cfg.Nodes))]
			if n.link == nil || n.PingSent != 0 || n.Flags&(bus.FlagMyself|bus.FlagHandshake) != 0 {
				continue
			}
			if oldest == nil || n.PongReceived < oldest.PongReceived {
				oldest = n
			}
		}
		if oldest != nil {
			s.sendPing(oldest.link, bus.Ping)
		}
	}

	for _, n := range s.cfg.Nodes {
		if n.Flags&(bus.FlagMyself|bus.FlagNoAddr|bus.FlagHandshake) != 0 {
			continue
		}
		pingDelay := now - n.PingSent
		dataDelay := now - n.dataReceived
		// A link that got nothing back for half the timeout is remade,
		// in case the connection, not the node, is at fault.
		if n.link != nil && now-n.link.ctime > timeout && n.PingSent != 0 &&
			pingDelay > timeout/2 && dataDelay > timeout/2 {
			s.freeLink(n.link)
		}
		if n.link != nil && n.PingSent == 0 && now-n.PongReceived > timeout/2 {
			s.sendPing(n.link, bus.Ping)
			continue
		}
		// A master in a manual failover pings the replica taking over
		// at every turn: each PING gives the offset writes are held at.
		if s.fo.mfEnd != 0 && s.cfg.Myself.Flags&bus.FlagMaster != 0 && s.fo.mfReplica == n && n.link != nil {
			s.sendPing(n.link, bus.Ping)
			continue
		}
		if n.PingSent == 0 {
			continue
		}
		if min(pingDelay, dataDelay) > timeout && n.Flags&(bus.FlagPFail|bus.FlagFail) == 0 {
			s.opt.Logf('.', "*** NODE %.40s possibly failing", n.Name[:])
			n.Flags |= bus.FlagPFail
			s.stateChanged = true
		}
	}
	if s.stateChanged || s.state == stateFail {
		s.updateState()
	}
}

// randPerm is a random order of n indexes: the gossip picks nodes at
// random, as dictGetRandomKey does.
func randPerm(n int) []int { return rand.Perm(n) }
