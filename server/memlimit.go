package server

import (
	"math"
	"runtime/debug"
)

// The Go runtime's memory limit follows maxmemory, so that the garbage
// collector works harder as the heap nears what the operator allowed
// rather than letting garbage double it (GOGC's default). used_memory is
// kept at most maxmemory by eviction; the limit adds headroom for the
// garbage between collections and for what used_memory does not count
// (the runtime itself, goroutine stacks, buffers in flight): a quarter of
// maxmemory plus memLimitSlack. Measured with a SET flood of 1 kB values
// under allkeys-lru and maxmemory 64mb (tests/maxmemory_test.go), RSS
// stays near 1.2 x maxmemory; without a limit it reached 2 x.
//
// The limit is the process's: with two servers in one process (tests),
// the last one configured sets it. A GOMEMLIMIT from the environment is
// the limit while maxmemory is 0, and caps it otherwise.
const memLimitSlack = 4 << 20

func (s *Server) setMemoryLimit(maxmemory int64) {
	if s.envMemLimit == 0 {
		s.envMemLimit = debug.SetMemoryLimit(-1)
	}
	limit := s.envMemLimit
	if maxmemory > 0 {
		want := maxmemory + maxmemory/4 + memLimitSlack
		if want < 0 || maxmemory > math.MaxInt64/2 {
			want = math.MaxInt64
		}
		limit = min(limit, want)
	}
	debug.SetMemoryLimit(limit)
}
