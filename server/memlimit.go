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
// under every policy and maxmemory 64mb (tests/maxmemory_test.go), RSS
// stays at 84-85 MB (1.3 x). The price is collector time: with
// maxmemory 32mb, SET under eviction runs at 26,000 rps against 47,000
// with the limit lifted, which then peaks at 100 MB RSS (3 x).
//
// The limit is the process's: with two servers in one process (tests),
// the last one configured sets it. A GOMEMLIMIT from the environment is
// the limit while maxmemory is 0, and caps it otherwise.
const memLimitSlack = 4 << 20

// startMemLimit is the limit the process started with (GOMEMLIMIT, or
// none), read before any server changes it; it is never written again.
var startMemLimit = debug.SetMemoryLimit(-1)

func (s *Server) setMemoryLimit(maxmemory int64) {
	limit := startMemLimit
	if maxmemory > 0 {
		want := maxmemory + maxmemory/4 + memLimitSlack
		if want < 0 || maxmemory > math.MaxInt64/2 {
			want = math.MaxInt64
		}
		limit = min(limit, want)
	}
	debug.SetMemoryLimit(limit)
}
