package server

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/zredis/zredis/keyspace"
)

// pacerGoal is the Go pacer's heap goal at percentage pct (mgcpacer.go,
// commit), without the memory limit and the sweep and runway margins.
func pacerGoal(live, roots uint64, pct int) uint64 {
	p := uint64(pct)
	return max(live+(live+roots)*p/100, goMinHeap*p/100)
}

func TestGCPercentForCapsTheHeapGoal(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		live, roots uint64
		want        int
	}{
		{0, 0, 800},             // minimum heap only: 4 MB * 8 = 32 MB
		{1 * mb, 0, 825},        // minimum heap: 4 MB * 8.25 = 33 MB, not 128 MB
		{1 * mb, 3 * mb, 800},   // roots count as live for the growth
		{4 * mb, 0, 800},        // growth: 4 + 4*8 = 36 MB
		{4 * mb, 4 * mb, 400},   // growth with roots: 4 + 8*4 = 36 MB
		{16 * mb, 0, 200},       // growth: 16 + 16*2 = 48 MB
		{64 * mb, 0, 50},        // above the floor: under 100, which tick keeps
		{1 << 30, 0, 3},         // likewise
		{1 << 62, 1 << 30, 0},   // no overflow
		{30 * mb, 100 * mb, 24}, // roots count
	} {
		got := gcPercentFor(tc.live, tc.roots, gcHeapFloor)
		if got != tc.want {
			t.Errorf("gcPercentFor(%d MB, %d MB roots) = %d, want %d", tc.live/mb, tc.roots/mb, got, tc.want)
		}
		if got > 0 {
			if goal := pacerGoal(tc.live, tc.roots, got); goal > tc.live+gcHeapFloor {
				t.Errorf("live %d MB, %d MB roots: goal at %d%% is %d bytes, over live + %d MB", tc.live/mb, tc.roots/mb, got, goal, gcHeapFloor/mb)
			}
			// The largest such percentage: one more point breaks a bound.
			if goal := pacerGoal(tc.live, tc.roots, got+1); goal <= tc.live+gcHeapFloor {
				t.Errorf("live %d MB, %d MB roots: %d%% is not the largest within the floor", tc.live/mb, tc.roots/mb, got)
			}
		}
	}
}

func gcPercentNow() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(int64(s[0].Value.Uint64()))
}

// Tuners share the process's percentage: none sets it below what the
// first found, and the last to stop restores that, in whatever order
// they stop.
func TestGCTunersRestoreThePercentage(t *testing.T) {
	t.Setenv("GOGC", "")
	defer debug.SetGCPercent(debug.SetGCPercent(150))
	gcShared.Lock()
	running := gcShared.tuners
	gcShared.Unlock()
	if running != 0 {
		t.Fatalf("%d tuners running before the test", running)
	}
	a, b := startGCTuner(), startGCTuner()
	a.tick()
	if p := gcPercentNow(); p < 150 {
		t.Fatalf("percentage %d after a tick, below the starting 150", p)
	}
	a.stop()
	debug.SetGCPercent(120) // no tuner sets less than the start
	b.tick()
	if p := gcPercentNow(); p < 150 {
		t.Fatalf("percentage %d after the other's tick, below the starting 150", p)
	}
	b.stop()
	if p := gcPercentNow(); p != 150 {
		t.Fatalf("percentage %d after the last tuner stopped, want the starting 150", p)
	}
}

// The floor is the small one until a big argument is announced, which
// raises the percentage before its allocation, not at the next tick; the
// spell's end lowers it again.
func TestBigValueRaisesThePercentageAtOnce(t *testing.T) {
	t.Setenv("GOGC", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer gcBigUntil.Store(gcBigUntil.Load())
	gcBigUntil.Store(0)
	tu := startGCTuner()
	defer tu.stop()
	runtime.GC() // the heap holds little garbage: no lowering is held back (lowerTo)
	tu.tick()
	small := gcPercentNow()
	bigValueArriving()
	big := gcPercentNow()
	if big <= small {
		t.Fatalf("percentage %d after a big value was announced, not above the small floor's %d", big, small)
	}
	tu.tick()
	if p := gcPercentNow(); p != big {
		t.Fatalf("percentage %d after a tick within the spell, want %d", p, big)
	}
	gcBigUntil.Store(time.Now().Add(-time.Second).UnixNano())
	runtime.GC()
	tu.tick()
	// The second collection moved the live heap the percentage follows
	// a little: the small floor's percentage is taken from it again.
	small = smallFloorPercent(t)
	if p := gcPercentNow(); p >= big || p != small {
		t.Fatalf("percentage %d after the spell, want the small floor's %d", p, small)
	}
}

// smallFloorPercent is the percentage the small floor gives the heap the
// last collection found, at the starting percentage of 100.
func smallFloorPercent(t *testing.T) int {
	t.Helper()
	s := newGCTuner()
	if !s.read() {
		t.Fatal("runtime metrics missing")
	}
	roots := s.sample[gcSampleStacks].Value.Uint64() + s.sample[gcSampleGlobals].Value.Uint64()
	return max(100, gcPercentFor(s.sample[gcSampleLive].Value.Uint64(), roots, gcSmallFloor))
}

// A big table announced (keyspace.BigTableHook) raises the floor to
// twice its size, above the big values' floor, at once; a smaller one
// within the spell leaves it.
func TestBigTableRaisesTheFloor(t *testing.T) {
	t.Setenv("GOGC", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer gcBigUntil.Store(gcBigUntil.Load())
	gcBigUntil.Store(0)
	tableFloor := func() uint64 {
		gcShared.Lock()
		defer gcShared.Unlock()
		return gcShared.tableFloor
	}
	tu := startGCTuner()
	defer tu.stop()
	defer func() {
		gcShared.Lock()
		gcShared.tableFloor, gcShared.tableUntil = 0, 0
		gcShared.Unlock()
	}()
	if keyspace.BigTableHook == nil {
		t.Fatal("the server does not set keyspace.BigTableHook")
	}
	bigValueArriving()
	values := gcPercentNow()
	keyspace.BigTableHook(4 * gcHeapFloor)
	table, floor := gcPercentNow(), tableFloor()
	// Twice the table, and what the heap grew by since the last
	// collection.
	if table <= values || floor < 8*gcHeapFloor {
		t.Fatalf("percentage %d (floor %d) after a table of %d bytes, not above the big values' %d", table, floor, 4*gcHeapFloor, values)
	}
	keyspace.BigTableHook(gcHeapFloor)
	if p := gcPercentNow(); p != table || tableFloor() != floor {
		t.Fatalf("percentage %d (floor %d) after a smaller table, want %d (floor %d)", p, tableFloor(), table, floor)
	}
	// A big value's spell starting again leaves the table's floor.
	gcBigUntil.Store(0)
	bigValueArriving()
	if p := gcPercentNow(); p != table {
		t.Fatalf("percentage %d after a big value, want the table's %d", p, table)
	}
}

// Lowering the percentage never puts the heap goal under the heap as it
// is, which would start a collection with no room to mark in.
func TestLowerToKeepsRoomAboveTheHeap(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		want, cur       int
		live, heap, out uint64
	}{
		{100, 200, 100 * mb, 150 * mb, 100}, // goal 200 MB: room enough
		{100, 200, 100 * mb, 250 * mb, 182}, // goal kept at 281.25 MB
		{100, 150, 100 * mb, 400 * mb, 150}, // never above cur
	} {
		got := lowerTo(c.want, c.cur, c.live, 0, c.heap)
		if uint64(got) != c.out {
			t.Errorf("lowerTo(%d, %d, live %d MB, heap %d MB) = %d, want %d", c.want, c.cur, c.live/mb, c.heap/mb, got, c.out)
		}
		if goal := c.live + c.live*uint64(got)/100; got < c.cur && goal < c.heap+c.heap/8 {
			t.Errorf("goal %d MB under the heap's %d MB and an eighth", goal/mb, c.heap/mb)
		}
	}
}
