package server

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// Go's garbage collector frees a deleted value only at its next cycle,
// which comes when the heap has grown by GOGC percent since the last one
// (or after two minutes), and hands freed pages back to the operating
// system gradually after that. With values of 100 MB a DEL then gives
// nothing back for minutes, and the next SET is allocated on top of the
// garbage: the process holds a multiple of its data. Redis's allocator
// returns the memory of a big value at once. So when large values leave
// the keyspace (keyspace.SetFreedHook), or big arguments that no command
// kept were read (a hash's value is copied into its record), a goroutine
// of the server runs a collection and returns the free memory
// (debug.FreeOSMemory) at once, concurrently with the commands, when what
// was freed is worth a full collection: releaseMinBytes, and a quarter of
// the heap the last collection found live, so that the collections' cost
// stays proportional to the memory they give back (as a GOGC of 25
// would, and only while large values come and go).
const releaseMinBytes = 8 << 20

// releaser hands freed memory back. freed is called from any goroutine
// and never blocks; run is a goroutine owned by the server's background
// work.
type releaser struct {
	pending atomic.Int64 // bytes of big values freed since the last release
	kick    chan struct{}
	sample  [1]metrics.Sample
}

func newReleaser() *releaser {
	r := &releaser{kick: make(chan struct{}, 1)}
	r.sample[0].Name = "/gc/heap/live:bytes"
	return r
}

// freed notes n bytes of a large value that left the keyspace and wakes
// run once they add up to releaseMinBytes; it never blocks.
func (r *releaser) freed(n int64) {
	if r.pending.Add(n) >= releaseMinBytes {
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
}

// run releases memory when woken, until ctx is done.
func (r *releaser) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
		}
		metrics.Read(r.sample[:])
		if s := r.sample[0]; s.Value.Kind() == metrics.KindUint64 && r.pending.Load() < int64(s.Value.Uint64()/4) {
			continue // woken again once more is freed
		}
		r.pending.Store(0)
		debug.FreeOSMemory()
	}
}
