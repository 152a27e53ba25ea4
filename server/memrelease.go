package server

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
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
// of the server runs a collection at once, concurrently with the
// commands, when what was freed is worth a full collection:
// releaseMinBytes, and a quarter of the heap the last collection found
// live, so that the collections' cost stays proportional to the memory
// they free (as a GOGC of 25 would, and only while large values come and
// go). The next big values are then allocated in that memory. Up to
// gcHeapFloor of it goes back to the system (debug.FreeOSMemory) only at
// the next idle release (see idleRelease), not at once: a client that
// deleted a 10 MB value and set the next one at once had its SET run
// against the return of the pages and then fault in fresh ones, and the
// SET took 7.8-9.1 ms (median of 15) where redis-server's took 6.2-6.4.
// Beyond gcHeapFloor it goes back at once: kept, 100 MB values were
// allocated beside the free memory of the last one, never in it (its
// pages had gone to smaller allocations), and the process's peak RSS
// reached three values.
const releaseMinBytes = 8 << 20

// The same goes for the garbage a burst of writes leaves: up to GOGC
// percent of the live heap stays in the process's resident set until the
// next collection, which an idle server does not reach for two minutes.
// Redis's allocator reuses freed memory at once, and jemalloc returns
// what stays free within seconds. So once the server has run no command
// and received no bytes (from clients, replicas or its master) for
// idleRelease, if its heap (live objects, garbage, free pages not yet
// returned) grew by releaseMinBytes and an eighth since the last release,
// beyond what its data grew by, or big values of as much were freed
// since, a collection runs and returns what is free: a loaded data set
// then costs about what it holds. The cost is one collection per burst
// that left garbage, in idle time. Bytes count because a command's
// arguments arrive before it runs: a slow upload of a big value is no
// idle time.
//
// The data's growth is that of used_memory, the keyspace's own measure
// of its data and of the clients' buffers, since the last release. A
// burst that only added data then leaves no collection to run. It did
// when the heap's growth alone counted, and found little to free: in a
// grid of pipeline-1 runs of 1 KiB writes, each leaving a larger data
// set, the collection that followed each run took 48-72 ms of CPU,
// 0.5-0.9 µs a request of the run, and freed 2-17 MB of heaps of 105-400
// MB; and a data set that grows by an eighth between quiet spells would
// be collected at each, at a cost that grows with it. used_memory is an
// estimate, a few percent off the heap its data takes (by 4-18 percent
// after loading make bench's memory shapes), so that it counts only
// against a baseline taken when a release has just left the heap
// holding little but data: before the first release, all growth counts.
// A burst that grows the data by about as much as the heap held at the
// last release may still be followed by a collection, for the estimate's
// error alone.
const idleRelease = 300 * time.Millisecond

// quietSpell tells the cron when the server has been idle for
// idleRelease, once per quiet spell. The cron's.
type quietSpell struct {
	commands int64     // commands run, as of the last activity seen
	received int64     // bytes received, likewise
	since    time.Time // when that activity was seen
	told     bool      // idle was reported for this spell
}

// again lets the current quiet spell be reported once more: memory
// became garbage in it after its report (the cron finished a big
// table's resize), which an idle release may hand back.
func (q *quietSpell) again() { q.told = false }

// observe takes the server's counters of commands run and bytes received
// at now, and reports true when the spell they end or continue has just
// lasted idleRelease.
func (q *quietSpell) observe(now time.Time, commands, received int64) bool {
	if commands != q.commands || received != q.received || q.since.IsZero() {
		*q = quietSpell{commands: commands, received: received, since: now}
		return false
	}
	if q.told || now.Sub(q.since) < idleRelease {
		return false
	}
	q.told = true
	return true
}

// releaser hands freed memory back. freed and idle are called from any
// goroutine and never block; run is a goroutine owned by the server's
// background work.
type releaser struct {
	pending atomic.Int64 // bytes of big values freed since the last release
	idleNow atomic.Bool  // the server is idle: see idleRelease
	kick    chan struct{}
	sample  [4]metrics.Sample
	// used reads used_memory (Keyspace.UsedMemory), taking the
	// keyspace's lock.
	used func() int64
	// low and lowUsed are the heap's size and used_memory after the last
	// release, or the lowest seen at an idle wake-up since; 0 before the
	// first release (run's).
	low     uint64
	lowUsed int64
	// collected is what collections for freed big values made free since
	// the last release, to be returned (run's).
	collected int64
}

func newReleaser(used func() int64) *releaser {
	r := &releaser{kick: make(chan struct{}, 1), used: used}
	r.sample[0].Name = "/gc/heap/live:bytes"
	r.sample[1].Name = "/memory/classes/heap/objects:bytes"
	r.sample[2].Name = "/memory/classes/heap/free:bytes"
	r.sample[3].Name = "/memory/classes/heap/unused:bytes"
	return r
}

// idle tells the releaser that the server has been idle for idleRelease
// (quietSpell); it never blocks.
func (r *releaser) idle() {
	r.idleNow.Store(true)
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// heap reads the live heap as of the last collection, and the heap's
// resident size: objects live or not yet collected, free pages not yet
// returned, unused parts of spans.
func (r *releaser) heap() (live, size uint64) {
	metrics.Read(r.sample[:])
	for _, s := range r.sample {
		if s.Value.Kind() != metrics.KindUint64 {
			return 0, 0
		}
	}
	return r.sample[0].Value.Uint64(), r.sample[1].Value.Uint64() + r.sample[2].Value.Uint64() + r.sample[3].Value.Uint64()
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
		r.wake()
	}
}

// wake releases memory if the server is idle and its heap grew beyond
// its data or big values were freed, or else collects if big values
// worth a collection were freed (releaseMinBytes and a quarter of the
// live heap; an idle wake-up may come with less). Run's.
func (r *releaser) wake() {
	live, size := r.heap()
	if r.idleNow.Swap(false) {
		used := r.used()
		var data uint64 // what the data grew by, if there is a baseline
		if r.low > 0 {
			data = uint64(max(0, used-r.lowUsed))
		}
		if need := max(releaseMinBytes, r.low/8); size >= r.low+data+need || uint64(r.collected+r.pending.Load()) >= need {
			r.release()
			return
		}
		r.low, r.lowUsed = min(r.low, size), min(r.lowUsed, used)
	}
	p := r.pending.Load()
	if p < releaseMinBytes || p < int64(live/4) {
		return // woken again once more is freed
	}
	if p > gcHeapFloor {
		// More than the heap may hold as garbage anyway (gcfloor.go): a
		// new value of that size would not fit in it again, and would be
		// allocated beside it.
		r.release()
		return
	}
	r.collected += r.pending.Swap(0)
	runtime.GC()
}

// release runs a collection, returns the free memory, and starts the
// idle releases' baseline over from the heap that leaves, whichever
// release it was: a baseline from before it would count the freed
// values' memory as growth, or not count the growth since.
func (r *releaser) release() {
	r.pending.Store(0)
	r.collected = 0
	debug.FreeOSMemory()
	r.lowUsed = r.used()
	_, r.low = r.heap()
}
