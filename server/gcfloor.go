package server

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
)

// Go collects when the heap has grown by GOGC percent (100) over what
// the last collection found live, but at 4 MB at the least. A server
// holding a few megabytes thus collects for every few megabytes it
// allocates, and a single 10 MB value arriving starts a collection in
// the middle of its read: measured with 10 MB SETs, 16-28 ms each
// against 10.6 ms with the collector off (redis-server: 10.4 ms). So
// while the live heap is small the collection percentage is raised to
// let the heap grow by gcHeapFloor: garbage then costs at most that much
// more resident memory, which an idle server hands back (idleRelease),
// and a heap above it is collected at GOGC's usual 100 percent. The
// Go memory limit tied to maxmemory (memlimit.go) still bounds the heap.
// A GOGC set in the environment is left alone.
//
// Go's minimum heap (4 MB) scales with the percentage too, so below
// 4 MB live the heap may grow further than gcHeapFloor: to 128 MB
// divided by the live megabytes. Capping the percentage at
// 25 * (live + gcHeapFloor) / MiB would hold it to the floor.
const gcHeapFloor = 32 << 20

// gcTuner sets the collection percentage from the live heap; tick is
// called by the cron, outside the lock.
type gcTuner struct {
	off    bool // GOGC is the operator's
	pct    int
	sample [1]metrics.Sample
}

func newGCTuner() *gcTuner {
	t := &gcTuner{off: os.Getenv("GOGC") != "", pct: 100}
	t.sample[0].Name = "/gc/heap/live:bytes"
	return t
}

func (t *gcTuner) tick() {
	if t.off {
		return
	}
	metrics.Read(t.sample[:])
	if t.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	pct := gcPercentFor(t.sample[0].Value.Uint64())
	// Change it only for a real difference: the pacer recomputes its
	// goal on every change.
	if pct*8 < t.pct*7 || pct*7 > t.pct*8 {
		t.pct = pct
		debug.SetGCPercent(pct)
	}
}

// gcPercentFor is the percentage that lets a heap of live bytes grow by
// gcHeapFloor, and never less than GOGC's default.
func gcPercentFor(live uint64) int {
	live = max(live, 1<<20)
	return max(100, int(gcHeapFloor*100/live))
}
