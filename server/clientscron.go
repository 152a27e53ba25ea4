package server

import "time"

// The clients' periodic work (query buffer peaks and release, the idle
// timeout, the output limits' soft seconds, the clients' memory) visits
// each client once a second, a tenth of them at each tick of the cron,
// as Redis's clientsCron processes numclients/hz clients per call: with
// 10,000 connections, walking all of them at every tick held the
// keyspace lock for 15-30 ms of every 100, and other clients' PING p99
// was 10 ms where redis-server's was 2.
//
// The clients' memory, which used_memory's overhead and maxmemory need
// at every tick, is kept as a running total of what each client weighed
// at its last visit (Redis's clientsCronTrackClientsMemUsage and
// last_memory_usage); maxmemory-clients, which must see a client that
// grew at once, still sums them all (clientevict.go).

// clientRing is the clients in the order the cron visits them. Lock.
type clientRing struct {
	all  []*conn
	next int   // the next to visit
	mem  int64 // the sum of the clients' memCounted
}

// add puts c in the ring.
func (r *clientRing) add(c *conn) {
	c.ringAt = len(r.all)
	r.all = append(r.all, c)
}

// remove takes c out of the ring, with the memory it was counted for.
// The last client takes its place: it may be visited twice in a round,
// or skipped once, which the periodic checks allow.
func (r *clientRing) remove(c *conn) {
	i := c.ringAt
	if i < 0 || i >= len(r.all) || r.all[i] != c {
		return
	}
	last := len(r.all) - 1
	r.all[i] = r.all[last]
	r.all[i].ringAt = i
	r.all[last] = nil
	r.all = r.all[:last]
	c.ringAt = -1
	r.mem -= c.memCounted
	c.memCounted = 0
	if len(r.all) < cap(r.all)/4 && cap(r.all) > 1024 {
		r.all = append([]*conn(nil), r.all...) // a burst of connections is over
	}
}

// clientsPerTick is how many clients one tick visits: a tenth, so that
// every client is visited once a second, and at least 5
// (CLIENTS_CRON_MIN_ITERATIONS).
func clientsPerTick(n int) int {
	return max(min(n, 5), (n+9)/10)
}

// visitClients runs one tick of the clients' periodic work. Under the
// lock.
func (s *Server) visitClients(now time.Time) {
	r := &s.ring
	nowMs := now.UnixMilli()
	timeout := s.idleTimeout.Load()
	s.peaks.rotate(now.Unix())
	for n := clientsPerTick(len(r.all)); n > 0 && len(r.all) > 0; n-- {
		if r.next >= len(r.all) {
			r.next = 0
		}
		c := r.all[r.next]
		r.next++
		s.peaks.sample(c)
		s.resizeQueryBuffer(c, nowMs)
		if timeout > 0 && s.closeIfIdle(c, nowMs, timeout) {
			continue // dropped: out of the ring
		}
		s.checkOutputLimit(c)
		if c.killed {
			continue
		}
		m := c.cl.MemoryUsage()
		r.mem += m - c.memCounted
		c.memCounted = m
	}
}
