package server

import (
	"cmp"
	"slices"
	"time"

	"github.com/zredis/zredis/engine"
)

// Client eviction (maxmemory-clients, Redis 7.0's evictClients): when the
// memory of all normal and pub/sub clients reaches the limit, the clients
// holding the most are disconnected, largest first, until the total is
// under it. Clients with CLIENT NO-EVICT on are counted but never
// evicted. The check runs in the server's cron (ten times a second),
// where Redis runs it before each command and in beforeSleep.
//
// The clients' memory is also what used_memory adds to the dataset and
// the startup heap (as Redis counts client buffers in used_memory), so a
// client that stops reading its replies can cause key eviction, as in
// Redis, unless maxmemory-clients disconnects it first.

// clientEvictionLimit is maxmemory-clients in bytes, 0 when off: a
// percentage applies to maxmemory (and is off without it), and a limit
// under 128 kB is raised to it, as getClientEvictionLimit does.
func (s *Server) clientEvictionLimit() int64 {
	v := s.cfg.Int("maxmemory-clients")
	var limit int64
	switch {
	case v < 0:
		maxmem := s.cfg.Int("maxmemory")
		if maxmem <= 0 {
			return 0
		}
		limit = int64(float64(maxmem) * float64(-v) / 100)
	case v > 0:
		limit = v
	default:
		return 0
	}
	return max(limit, 128<<10)
}

// clientsMemory is the memory of the connected clients. Under the lock.
func (s *Server) clientsMemory() int64 {
	var total int64
	for _, c := range s.clients {
		total += c.cl.MemoryUsage()
	}
	return total
}

// accountClients sets the keyspace's overhead to the startup heap plus
// the clients' memory (the ring's running total, see clientscron.go;
// with maxmemory-clients, every client's now), then evicts clients over
// maxmemory-clients. Under the lock.
func (s *Server) accountClients(now time.Time) {
	total := s.ring.mem
	limit := s.clientEvictionLimit()
	if limit > 0 {
		total = s.clientsMemory() // a client that just grew counts now
	}
	if limit > 0 && total >= limit {
		type sized struct {
			c   *conn
			mem int64
		}
		var cands []sized
		for _, c := range s.clients {
			if !c.cl.NoEvict && !c.cl.Replica {
				cands = append(cands, sized{c, c.cl.MemoryUsage()})
			}
		}
		slices.SortFunc(cands, func(a, b sized) int { return cmp.Compare(b.mem, a.mem) })
		for _, x := range cands {
			if total < limit {
				break
			}
			s.log.Noticef("Evicting client: %s", engine.ClientInfoString(x.c.cl, now.UnixMilli(), 0))
			total -= x.mem
			s.drop(x.c)
			s.stats.EvictedClients++
		}
		if total >= limit {
			s.log.Warningf("Over client maxmemory after evicting all evictable clients")
		}
	}
	s.ks.SetOverhead(s.stats.StartupMemory + total)
}
