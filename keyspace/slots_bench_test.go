package keyspace

import (
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkSlotIndexHeapPerKey reports the live heap of 1M string keys
// with a 10-byte value, with the slot index off and on (cluster mode),
// and what the index adds a key.
func BenchmarkSlotIndexHeapPerKey(b *testing.B) {
	const n = 1_000_000
	heap := func(index bool) float64 {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		ks := New(16, NewManualClock(epoch))
		if index {
			ks.EnableSlotIndex()
		}
		db := ks.DB(0)
		for i := 0; i < n; i++ {
			db.SetString([]byte(fmt.Sprintf("key:%012d", i)), []byte(fmt.Sprintf("v%09d", i)), false, 0)
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		runtime.KeepAlive(ks)
		return float64(m1.HeapAlloc-m0.HeapAlloc) / n
	}
	for range b.N {
		off, on := heap(false), heap(true)
		b.ReportMetric(off, "off-B/key")
		b.ReportMetric(on, "on-B/key")
		b.ReportMetric(on-off, "index-B/key")
	}
}

// BenchmarkSlotIndexAddDel is a key's creation and deletion among 100,000
// keys, with the slot index off and on: what cluster mode adds to the
// writes that change the set of keys.
func BenchmarkSlotIndexAddDel(b *testing.B) {
	for _, index := range []bool{false, true} {
		b.Run(fmt.Sprint("index=", index), func(b *testing.B) {
			ks := New(16, NewManualClock(epoch))
			if index {
				ks.EnableSlotIndex()
			}
			db := ks.DB(0)
			keys := make([][]byte, 100_000)
			for i := range keys {
				keys[i] = []byte(fmt.Sprintf("key:%012d", i))
				db.SetString(keys[i], []byte("xxx"), false, 0)
			}
			val := []byte("xxx")
			b.ResetTimer()
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				k := keys[(i*7919)%len(keys)]
				db.Delete(k)
				db.SetString(k, val, false, 0)
			}
		})
	}
}

// BenchmarkKeysInSlot is GETKEYSINSLOT's walk of 10 keys of a slot of
// 1M keys (about 61 a slot).
func BenchmarkKeysInSlot(b *testing.B) {
	ks := New(16, NewManualClock(epoch))
	ks.EnableSlotIndex()
	db := ks.DB(0)
	for i := 0; i < 1_000_000; i++ {
		db.SetString([]byte(fmt.Sprintf("key:%012d", i)), []byte("xxx"), false, 0)
	}
	b.ResetTimer()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if len(db.KeysInSlot(i&16383, 10)) != 10 {
			b.Fatal("short slot")
		}
	}
}
