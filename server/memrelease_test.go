package server

import (
	"runtime"
	"testing"
	"time"
)

func TestQuietSpellCountsBytesReceivedAsActivity(t *testing.T) {
	var q quietSpell
	at := time.Unix(1000, 0)
	tick := func(ms int, commands, received int64) bool {
		return q.observe(at.Add(time.Duration(ms)*time.Millisecond), commands, received)
	}
	if tick(0, 5, 100) {
		t.Fatal("idle at the first observation")
	}
	// A slow upload: bytes arrive, no command completes.
	for ms := 100; ms <= 1000; ms += 100 {
		if tick(ms, 5, 100+int64(ms)) {
			t.Fatalf("idle at %d ms while bytes arrive", ms)
		}
	}
	if tick(1200, 5, 1100) {
		t.Fatal("idle 200 ms after the last byte")
	}
	if !tick(1300, 5, 1100) {
		t.Fatal("not idle 300 ms after the last byte")
	}
	if tick(1400, 5, 1100) {
		t.Fatal("idle reported twice in one quiet spell")
	}
	// A command with no new bytes (an argument read before) ends it too.
	if tick(1500, 6, 1100) || tick(1700, 6, 1100) {
		t.Fatal("idle within 300 ms of a command")
	}
	if !tick(1800, 6, 1100) {
		t.Fatal("not idle 300 ms after the last command")
	}
}

// Freed big values are collected at once and released at the next idle
// wake-up; every release starts the idle releases' baseline over from
// the heap it leaves.
func TestReleaserResetsTheBaselineAfterEveryRelease(t *testing.T) {
	var used int64
	r := newReleaser(func() int64 { return used })
	// Big values freed beyond the GC floor: released at once.
	r.low = 1
	r.pending.Store(1 << 50)
	r.wake()
	if r.pending.Load() != 0 || r.low <= 1 {
		t.Fatalf("freed values: pending %d, baseline %d; want 0 and the heap the release left", r.pending.Load(), r.low)
	}
	// Within the floor: collected at once, returned at the next idle
	// wake-up.
	r.low = 1
	r.pending.Store(gcHeapFloor)
	r.wake()
	if r.pending.Load() != 0 || r.collected != gcHeapFloor || r.low != 1 {
		t.Fatalf("freed values: pending %d, collected %d, baseline %d; want 0, all, unchanged", r.pending.Load(), r.collected, r.low)
	}
	r.idleNow.Store(true)
	r.wake()
	if r.collected != 0 {
		t.Fatal("freed values not released when idle")
	}
	if r.low <= 1 {
		t.Fatalf("baseline %d after a release, not the heap it left", r.low)
	}
	// Idle with no growth and a little freed: no release, and the
	// baseline stays.
	_, r.low = r.heap()
	low := r.low
	r.pending.Store(releaseMinBytes - 1)
	r.idleNow.Store(true)
	r.wake()
	if r.pending.Load() != releaseMinBytes-1 {
		t.Fatal("released for less than releaseMinBytes freed")
	}
	if r.low > low {
		t.Fatalf("baseline rose from %d to %d without a release", low, r.low)
	}
	r.pending.Store(0)
}

// An idle wake-up releases for the heap's growth beyond the data's: not
// for a heap grown by data, nor for data deleted (the heap did not grow),
// and for garbage.
func TestReleaserCountsTheHeapBeyondTheData(t *testing.T) {
	var used int64
	r := newReleaser(func() int64 { return used })
	// released reports whether an idle wake-up released: a release
	// clears the byte of freed values it is given.
	released := func() bool {
		r.pending.Store(1)
		r.idleNow.Store(true)
		r.wake()
		return r.pending.Load() == 0
	}
	data := make([]byte, 4*releaseMinBytes)
	used = int64(len(data))
	r.release()
	// More data, the heap grown by as much: no release.
	more := make([]byte, 4*releaseMinBytes)
	used += int64(len(more))
	if released() {
		t.Fatal("released for a heap grown by data")
	}
	runtime.KeepAlive(more)
	more = nil
	used -= 4 * releaseMinBytes
	r.release()
	// Data deleted, the heap as it was: no release.
	used -= 2 * releaseMinBytes
	if released() {
		t.Fatal("released for deleted data")
	}
	// The heap grew beyond the data: released.
	garbage := make([]byte, 4*releaseMinBytes)
	if !released() {
		t.Fatal("not released for a heap grown beyond the data")
	}
	runtime.KeepAlive(garbage)
	runtime.KeepAlive(data)
}
