package engine

import (
	"math"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
)

// MemoryStats is the process's memory as INFO memory and MEMORY STATS
// report it: the Go heap stands for Redis's allocator.
type MemoryStats struct {
	Heap      int64 // live and not yet collected heap objects (allocator_allocated)
	Active    int64 // heap spans in use (allocator_active)
	Resident  int64 // heap memory obtained and not released (allocator_resident)
	RSS       int64 // resident set size of the process
	Sys       int64 // everything obtained from the OS
	NumGC     uint32
	GCPauseNs uint64
}

// memMetrics are the runtime/metrics ReadMemory reads, in this order.
var memMetrics = [...]string{
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/total:bytes",
	"/gc/cycles/total:gc-cycles",
	"/sched/pauses/total/gc:seconds",
}

// ReadMemory measures the process's memory through runtime/metrics,
// which, unlike runtime.ReadMemStats, does not stop the world. used_memory
// is not among these figures: it is the keyspace's count
// (Keyspace.UsedMemory).
func ReadMemory() MemoryStats {
	var samples [len(memMetrics)]metrics.Sample
	for i, name := range memMetrics {
		samples[i].Name = name
	}
	metrics.Read(samples[:])
	u := func(i int) int64 {
		if samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return int64(samples[i].Value.Uint64())
	}
	m := MemoryStats{
		Heap:     u(0),
		Active:   u(0) + u(1),
		Resident: u(0) + u(1) + u(2),
		Sys:      u(3),
		NumGC:    uint32(u(4)),
	}
	if h := samples[5]; h.Value.Kind() == metrics.KindFloat64Histogram {
		hist := h.Value.Float64Histogram()
		var sec float64
		for i, n := range hist.Counts {
			lo, hi := hist.Buckets[i], hist.Buckets[i+1]
			if math.IsInf(lo, -1) {
				lo = 0
			}
			if math.IsInf(hi, 1) {
				hi = lo
			}
			sec += float64(n) * (lo + hi) / 2
		}
		m.GCPauseNs = uint64(sec * 1e9)
	}
	m.RSS = processRSS()
	if m.RSS == 0 {
		m.RSS = m.Resident
	}
	return m
}

// processRSS reads the resident set size from /proc (0 where there is
// none).
func processRSS() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}
