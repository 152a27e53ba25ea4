package server

import (
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zredis/zredis/keyspace"
)

// Go collects when the heap has grown by GOGC percent (100) over what
// the last collection found live, but at 4 MB at the least. A server
// holding a few megabytes thus collects for every few megabytes it
// allocates, and a single 10 MB value arriving starts a collection in
// the middle of its read: measured with 10 MB SETs, 16-28 ms each
// against 10.6 ms with the collector off (redis-server: 10.4 ms). So
// while the live heap is small the collection percentage is raised to
// let the heap grow by a floor: gcHeapFloor while big values arrive (an
// argument of resp.BigValue or more was allocated within bigValueSpell;
// the reader's hook raises the percentage before the first such
// allocation, bigValueArriving), gcSmallFloor otherwise. Garbage then
// costs at most that much more resident memory, which an idle server
// hands back (idleRelease), and a heap above it is collected at GOGC's
// usual 100 percent. The small floor is for clients that send small
// requests, well or badly formed, in a stream: with 32 MB for every
// kind of traffic, 20 abusive connections (make bench's stress part)
// took the process to 44 MB of RSS, 4-7 MB of it live, where
// redis-server stayed at 16. A big hash's or sorted set's new slot
// array (keyspace.BigTableHook) raises the floor to twice its size for
// as long, however large the live heap: allocated at once, the array
// could take the heap past the goal, and the collection that started
// then had the event loop mark in proportion to what it allocated until
// it ended (an HSET of 100 ms). The Go memory limit tied to maxmemory
// (memlimit.go) still bounds the heap. A GOGC set in the environment is
// left alone.
//
// The percentage follows the live heap at the cron's pace (cronPeriod):
// a collection that finds much more live than the one before sets the
// next goal with the old, higher percentage, and the heap overshoots
// live+floor by what is allocated until the next tick lowers it
// (lowering it recomputes the goal, and collects at once if the heap is
// already past it).
const (
	gcHeapFloor   = 32 << 20
	gcSmallFloor  = 8 << 20
	bigValueSpell = 10 * time.Second
)

// gcBigUntil is when the big values' floor ends (Unix ns): bigValueSpell
// after the last big argument was allocated.
var gcBigUntil atomic.Int64

func init() { keyspace.BigTableHook = bigTableArriving }

// goMinHeap is Go's minimum heap goal at a percentage of 100
// (runtime.defaultHeapMinimum); the runtime scales it by the percentage
// as it does the growth allowed over the live heap.
const goMinHeap = 4 << 20

// The percentage is the process's (debug.SetGCPercent) and several
// servers may run in one process (tests), so their tuners share this
// record of it rather than each caching what it set: the first tuner to
// start notes the percentage it finds, no tuner sets less, and the last
// to stop puts it back.
var gcShared struct {
	sync.Mutex
	tuners int // started and not stopped
	start  int // the percentage the first of them found; negative: off, or unknown, and left alone
	// tableFloor is the floor until tableUntil (Unix ns): twice the
	// largest slot array announced within bigValueSpell before it
	// (bigTableArriving).
	tableFloor uint64
	tableUntil int64
}

// gcTuner sets the collection percentage from the live heap. Its owner
// (the cron) calls tick periodically, outside the keyspace lock, and stop
// when it stops ticking.
type gcTuner struct {
	off    bool // GOGC is the operator's
	sample [5]metrics.Sample
}

// The samples a gcTuner reads, in this order.
const (
	gcSampleGOGC    = iota // the percentage in force
	gcSampleLive           // the live heap found by the last collection
	gcSampleStacks         // stack bytes it scanned
	gcSampleGlobals        // global bytes it scanned
	gcSampleHeap           // the heap's objects now, live or not yet swept
)

// newGCTuner is a tuner whose samples are named.
func newGCTuner() *gcTuner {
	t := &gcTuner{}
	t.sample[gcSampleGOGC].Name = "/gc/gogc:percent"
	t.sample[gcSampleLive].Name = "/gc/heap/live:bytes"
	t.sample[gcSampleStacks].Name = "/gc/scan/stack:bytes"
	t.sample[gcSampleGlobals].Name = "/gc/scan/globals:bytes"
	t.sample[gcSampleHeap].Name = "/memory/classes/heap/objects:bytes"
	return t
}

func startGCTuner() *gcTuner {
	if os.Getenv("GOGC") != "" {
		return &gcTuner{off: true}
	}
	t := newGCTuner()
	gcShared.Lock()
	defer gcShared.Unlock()
	if gcShared.tuners == 0 {
		gcShared.start = -1
		if t.read() {
			gcShared.start = t.percent()
		}
	}
	gcShared.tuners++
	return t
}

// read reads the samples and reports whether this Go has them all.
func (t *gcTuner) read() bool {
	metrics.Read(t.sample[:])
	for _, s := range t.sample {
		if s.Value.Kind() != metrics.KindUint64 {
			return false
		}
	}
	return true
}

// percent is the percentage in force as of the last read; the runtime
// reports "off" (-1) as the uint64 of that int32.
func (t *gcTuner) percent() int {
	return int(int64(t.sample[gcSampleGOGC].Value.Uint64()))
}

func (t *gcTuner) tick() {
	if t.off {
		return
	}
	gcShared.Lock()
	defer gcShared.Unlock()
	t.setLocked(time.Now().UnixNano())
}

// setLocked sets the percentage for the floor in force at now (Unix ns).
// gcShared is locked.
func (t *gcTuner) setLocked(now int64) {
	if gcShared.start < 0 || !t.read() {
		return
	}
	floor := uint64(gcSmallFloor)
	if now < gcBigUntil.Load() {
		floor = gcHeapFloor
	}
	if now < gcShared.tableUntil {
		floor = max(floor, gcShared.tableFloor)
	}
	roots := t.sample[gcSampleStacks].Value.Uint64() + t.sample[gcSampleGlobals].Value.Uint64()
	live := t.sample[gcSampleLive].Value.Uint64()
	want := max(gcShared.start, gcPercentFor(live, roots, floor))
	cur := t.percent()
	if cur < 0 {
		return // switched off since the start: left so
	}
	// Lowered at once, so that the heap goal stays within the floor, but
	// never under the heap as it is: a goal the heap has passed starts a
	// collection with no room left to mark in, and the event loop then
	// marks in proportion to what it allocates until it ends (a floor's
	// spell ending while a big sorted set kept growing). The goal stays
	// an eighth above the heap, and the collection that comes there lowers
	// it the rest of the way. Raised only for a real difference, as the
	// pacer recomputes its goal on every change. The inputs move only
	// when a collection ends, and the heap only grows between two, so this
	// sets the percentage at most twice a collection.
	if want < cur {
		want = lowerTo(want, cur, live, roots, t.sample[gcSampleHeap].Value.Uint64())
	}
	if want < cur || want*7 > cur*8 {
		debug.SetGCPercent(want)
	}
}

// lowerTo is the percentage to lower cur to when want is due: want, or
// more if the heap goal at want (see gcPercentFor) would not lie an
// eighth above heap bytes, but never more than cur.
func lowerTo(want, cur int, live, roots, heap uint64) int {
	if room := heap + heap/8; live+(live+roots)*uint64(want)/100 < room {
		return min(cur, max(want, percentForGoal(room, live, roots)))
	}
	return want
}

// percentForGoal is the smallest percentage whose heap goal, after a
// collection that found live bytes of heap and scanned roots bytes of
// stacks and globals, is goal or more (see gcPercentFor).
func percentForGoal(goal, live, roots uint64) int {
	if goal <= live {
		return 0
	}
	scanned := max(live+roots, 1)
	return int(min((100*(goal-live)+scanned-1)/scanned, math.MaxInt32))
}

// bigValueArriving is the request readers' hook (resp.Reader.SetBigHook):
// an argument of resp.BigValue or more is about to be allocated. It
// starts or prolongs the big values' floor, and when that starts, sets
// the percentage at once rather than at the next tick, which would come
// after the allocation. On any goroutine.
func bigValueArriving() {
	now := time.Now().UnixNano()
	if gcBigUntil.Swap(now+int64(bigValueSpell)) > now {
		return
	}
	gcShared.Lock()
	defer gcShared.Unlock()
	if gcShared.tuners == 0 {
		return // GOGC is the operator's, or no server runs
	}
	t := newGCTuner()
	t.setLocked(now)
}

// bigTableArriving is keyspace.BigTableHook: a hash's or sorted set's
// slot array of bytes is about to be allocated. It starts or prolongs a
// spell of bigValueSpell whose floor is twice the largest such array
// within it, so that the allocation leaves the heap below the
// collector's goal, and sets the percentage at once when the floor
// rises. On the goroutine that allocates, holding the keyspace.
func bigTableArriving(bytes int) {
	now := time.Now().UnixNano()
	want := 2 * uint64(bytes)
	gcShared.Lock()
	defer gcShared.Unlock()
	if gcShared.tuners == 0 {
		return // GOGC is the operator's, or no server runs
	}
	// The floor is over the live heap, and the heap has grown since the
	// collection that measured it (by the data a growing table was given
	// meanwhile): counted too, or the array takes the heap to the goal.
	t := newGCTuner()
	if t.read() {
		if heap, live := t.sample[gcSampleHeap].Value.Uint64(), t.sample[gcSampleLive].Value.Uint64(); heap > live {
			want += heap - live
		}
	}
	raised := now >= gcShared.tableUntil || want > gcShared.tableFloor
	if now >= gcShared.tableUntil {
		gcShared.tableFloor = want
	} else {
		gcShared.tableFloor = max(gcShared.tableFloor, want)
	}
	gcShared.tableUntil = now + int64(bigValueSpell)
	if raised {
		t.setLocked(now)
	}
}

// stop ends the tuner's part: the last tuner of the process to stop
// restores the percentage the first one found.
func (t *gcTuner) stop() {
	if t.off {
		return
	}
	gcShared.Lock()
	defer gcShared.Unlock()
	gcShared.tuners--
	if gcShared.tuners == 0 && gcShared.start >= 0 {
		debug.SetGCPercent(gcShared.start)
	}
}

// gcPercentFor is the largest percentage at which the heap goal stays
// within live + floor (tick never sets less than the percentage found at
// the start, GOGC's default 100 unless set otherwise) when the last
// collection found live bytes of heap and scanned roots bytes of stacks
// and globals. The pacer's goal at a percentage p is
//
//	max(live + (live+roots)*p/100, goMinHeap*p/100)
//
// so p is bound twice: by 100*floor/(live+roots) for the growth over the
// live heap, and by 100*(live+floor)/goMinHeap, that is 25 *
// (live+floor) / MiB, for the minimum heap, which decides below about
// 3.6 MB live with the 32 MB floor: at 1 MB live the first bound alone
// (3200) would let the minimum heap reach 128 MB, the second (825) holds
// it to 33 MB.
func gcPercentFor(live, roots, floor uint64) int {
	if live >= floor {
		// The growth bound alone, under 100 (and no overflow).
		return int(100 * floor / (live + roots))
	}
	pct := 100 * (live + floor) / goMinHeap
	if scanned := live + roots; scanned > 0 {
		pct = min(pct, 100*floor/scanned)
	}
	return int(pct)
}
