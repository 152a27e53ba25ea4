package keyspace

// prefetch asks the processor to start loading the cache line at addr
// into its caches, without waiting for it (PREFETCHT0). It never faults.
//
//go:noescape
func prefetch(addr uintptr)
