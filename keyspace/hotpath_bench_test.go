package keyspace

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// BenchmarkSetexOverwrite is SETEX's keyspace work under redis-benchmark
// -r 100000: a random key of 100,000, each given the same TTL, the clock
// moving one millisecond per 300 writes (about 300k SETEX a second), so
// each write moves a key from an old deadline to the current one.
func BenchmarkSetexOverwrite(b *testing.B) {
	clock := NewManualClock(epoch)
	ks := New(16, clock)
	keys := make([][]byte, 100_000)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("key:%012d", i))
	}
	db := ks.DB(0)
	val := []byte("xxx")
	// The key arrives in a request buffer, as in the server: its bytes
	// are in cache, the keyspace's are not.
	req := make([]byte, 0, 64)
	set := func(i int) {
		if i%300 == 0 {
			clock.Advance(time.Millisecond)
			ks.setNow(clock.NowMs())
		}
		req = append(req[:0], keys[(i*7919)%len(keys)]...)
		db.SetString(req, val, false, ks.Now()+100_000)
	}
	for i := 0; i < 2*len(keys); i++ {
		set(i)
	}
	b.ResetTimer()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		set(i)
	}
}

// BenchmarkExpireDistinct gives each of 1M keys its own deadline (a
// queue whose messages carry their own TTLs), then moves them.
func BenchmarkExpireDistinct(b *testing.B) {
	clock := NewManualClock(epoch)
	ks := New(16, clock)
	const n = 1_000_000
	keys := make([][]byte, n)
	db := ks.DB(0)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("msg:%012d", i))
		db.SetString(keys[i], []byte("body"), false, epoch+int64(i)*7+100_000)
	}
	req := make([]byte, 0, 64)
	b.ResetTimer()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		j := (i * 7919) % n
		req = append(req[:0], keys[j]...)
		db.SetExpire(req, epoch+int64(j)*7+200_000+int64(i/n))
	}
}

// BenchmarkIncr is INCR's keyspace work on 100,000 counters.
func BenchmarkIncr(b *testing.B) {
	ks := New(16, NewManualClock(epoch))
	keys := make([][]byte, 100_000)
	db := ks.DB(0)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("counter:%012d", i))
		db.SetString(keys[i], []byte("0"), false, 0)
	}
	req := make([]byte, 0, 64)
	b.ResetTimer()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		req = append(req[:0], keys[(i*7919)%len(keys)]...)
		e := db.LookupWrite(req)
		v, _ := strconv.ParseInt(string(e.Str()), 10, 64)
		e.SetInt(v + 1)
		ks.EndCommand(true)
	}
}

// BenchmarkHeapPerKey reports the live heap a string key with a 10-byte
// value costs among 1M, with no deadline, with deadlines 1,000 keys share
// (a bulk load of SETEX) and with a deadline each: the layout's cost,
// which RSS adds the collector's headroom to.
func BenchmarkHeapPerKey(b *testing.B) {
	const n = 1_000_000
	for _, c := range []struct {
		name string
		at   func(i int) int64
	}{
		{"persistent", func(int) int64 { return 0 }},
		{"shared-deadlines", func(i int) int64 { return epoch + 1_000_000 + int64(i/1000) }},
		{"own-deadlines", func(i int) int64 { return epoch + 1_000_000 + int64(i)*3 }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				var m0, m1 runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&m0)
				ks := New(16, NewManualClock(epoch))
				db := ks.DB(0)
				for i := 0; i < n; i++ {
					db.SetString([]byte(fmt.Sprintf("key:%012d", i)), []byte(fmt.Sprintf("v%09d", i)), false, c.at(i))
				}
				runtime.GC()
				runtime.ReadMemStats(&m1)
				b.ReportMetric(float64(m1.HeapAlloc-m0.HeapAlloc)/n, "heap-B/key")
				runtime.KeepAlive(ks)
			}
		})
	}
}

// BenchmarkPipelinedLookup looks up 1M keys at random, 16 at a time as a
// pipelined batch arrives, with and without Prefetch of the batch first;
// one op is one key.
func BenchmarkPipelinedLookup(b *testing.B) {
	ks := New(16, NewManualClock(epoch))
	db := ks.DB(0)
	const n = 1_000_000
	for i := 0; i < n; i++ {
		db.SetString([]byte(fmt.Sprintf("key:%012d", i)), []byte("xxx"), false, 0)
	}
	batch := make([][]byte, 16)
	for i := range batch {
		batch[i] = make([]byte, 0, 32)
	}
	for _, pre := range []bool{false, true} {
		b.Run(fmt.Sprintf("prefetch=%v", pre), func(b *testing.B) {
			found := 0
			for i := 0; i < b.N; i += len(batch) {
				for j := range batch {
					batch[j] = fmt.Appendf(batch[j][:0], "key:%012d", ((i+j)*7919)%n)
				}
				if pre {
					db.Prefetch(batch)
				}
				for _, k := range batch {
					if _, ok := db.Deadline(k); ok {
						found++
					}
				}
			}
			if found == 0 {
				b.Fatal("no key found")
			}
		})
	}
}

// BenchmarkNewKeys is SET of keys the keyspace does not hold, 2M of
// them into a keyspace that starts empty: the insertions and the shard
// tables' growths they cause, each of which moves every entry of its
// shard (a load, a queue taking new messages).
func BenchmarkNewKeys(b *testing.B) {
	const n = 2_000_000
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("key:%d", i))
	}
	val := []byte("v000000000")
	var db *DB
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%n == 0 {
			b.StopTimer()
			db = New(16, NewManualClock(epoch)).DB(0)
			runtime.GC()
			b.StartTimer()
		}
		db.SetString(keys[i%n], val, false, 0)
	}
}
