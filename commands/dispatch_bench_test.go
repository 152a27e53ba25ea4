package commands

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"

	"github.com/zredis/zredis/cluster"
	"github.com/zredis/zredis/keyspace"
)

// benchKeys runs cmd over a keyspace of n keys, as redis-benchmark -r n
// does, through the dispatcher (lookup, checks, handler, stats).
func benchKeys(b *testing.B, n int, cmd func(key []byte) [][]byte) {
	benchPrepared(b, "key:%012d", n, func(k []byte) [][][]byte { return [][][]byte{{[]byte("SET"), k, []byte("1")}} }, cmd)
}

// benchPrepared runs cmd over n keys named by format, each first given
// the commands setup returns.
func benchPrepared(b *testing.B, format string, n int, setup func(key []byte) [][][]byte, cmd func(key []byte) [][]byte) {
	benchPreparedWith(b, nil, format, n, setup, cmd)
}

// benchPreparedWith is benchPrepared with the environment first changed
// by env, when not nil.
func benchPreparedWith(b *testing.B, env func(e *testEnv), format string, n int, setup func(key []byte) [][][]byte, cmd func(key []byte) [][]byte) {
	e := newTestEnv(b)
	if env != nil {
		env(e)
	}
	e.KS = keyspace.New(16, keyspace.SystemClock{})
	e.D.KS = e.KS
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf(format, i))
	}
	e.KS.Lock()
	defer e.KS.Unlock()
	for _, k := range keys {
		for _, argv := range setup(k) {
			e.D.Exec(e.Client, argv)
		}
	}
	e.Client.W.Reset()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.D.Exec(e.Client, cmd(keys[(i*7919)%n]))
		if i%64 == 0 {
			e.Client.W.Reset()
		}
	}
}

// newLockedBenchEnv is a test environment on a keyspace of its own
// whose lock the benchmark holds, as the event loop holds it around a
// batch of commands, until it ends.
func newLockedBenchEnv(b *testing.B) *testEnv {
	e := newTestEnv(b)
	e.KS = keyspace.New(16, keyspace.SystemClock{})
	e.D.KS = e.KS
	e.KS.Lock()
	b.Cleanup(e.KS.Unlock)
	return e
}

func BenchmarkDispatchGet(b *testing.B) {
	get := []byte("GET")
	benchKeys(b, 100000, func(k []byte) [][]byte { return [][]byte{get, k} })
}

func BenchmarkDispatchIncr(b *testing.B) {
	incr := []byte("INCR")
	benchKeys(b, 100000, func(k []byte) [][]byte { return [][]byte{incr, k} })
}

func BenchmarkDispatchSetex(b *testing.B) {
	setex, ttl, v := []byte("SETEX"), []byte("100"), []byte("xxx")
	benchKeys(b, 100000, func(k []byte) [][]byte { return [][]byte{setex, k, ttl, v} })
}

func BenchmarkDispatchSet(b *testing.B) {
	set, v := []byte("SET"), []byte("xxx")
	benchKeys(b, 100000, func(k []byte) [][]byte { return [][]byte{set, k, v} })
}

// BenchmarkDispatchHsetNew makes small hashes of five fields (a
// message's metadata), as the memory benchmark's small-hash shape does:
// a new key each time, the database emptied every 100,000.
func BenchmarkDispatchHsetNew(b *testing.B) {
	e := newTestEnv(b)
	const n = 100000
	cmds := make([][][]byte, n)
	for i := range cmds {
		a := [][]byte{[]byte("HSET"), []byte(fmt.Sprintf("hash:%d", i))}
		for j := 0; j < 5; j++ {
			a = append(a, []byte(fmt.Sprintf("field%d", j+1)), []byte(fmt.Sprintf("v%09d", i*5+j)))
		}
		cmds[i] = a
	}
	e.KS.Lock()
	defer e.KS.Unlock()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%n == 0 {
			b.StopTimer()
			e.KS.DB(0).Flush()
			b.StartTimer()
		}
		e.D.Exec(e.Client, cmds[i%n])
		if i%64 == 0 {
			e.Client.W.Reset()
		}
	}
}

// BenchmarkDispatchGeoSearch searches 10,000 points on a 2 km grid for
// the ten nearest within 50 km (make bench's GEOSEARCH shape, wider):
// most of the cost is the distance of each candidate.
func BenchmarkDispatchGeoSearch(b *testing.B) {
	e := newLockedBenchEnv(b)
	for j := 0; j < 10000; j++ {
		lon := strconv.FormatFloat(12.36+float64(j%100)*0.02, 'f', 4, 64)
		lat := strconv.FormatFloat(37.11+float64(j/100)*0.02, 'f', 4, 64)
		e.D.Exec(e.Client, [][]byte{[]byte("GEOADD"), []byte("mygeo"), []byte(lon), []byte(lat), []byte("place:" + strconv.Itoa(j))})
	}
	cmd := [][]byte{[]byte("GEOSEARCH"), []byte("mygeo"), []byte("FROMLONLAT"), []byte("13.36"), []byte("38.11"),
		[]byte("BYRADIUS"), []byte("50"), []byte("km"), []byte("ASC"), []byte("COUNT"), []byte("10")}
	e.Client.W.Reset()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.D.Exec(e.Client, cmd)
		e.Client.W.Reset()
	}
}

// BenchmarkDispatchXReadGroup reads one new entry at a time through a
// consumer group (make bench's XREADGROUP COUNT 1) from a stream of
// 3-byte values, whose nodes hold 100 entries each: the cost is finding
// the group's position in a node.
func BenchmarkDispatchXReadGroup(b *testing.B) { benchXReadGroup(b, 3) }

// BenchmarkDispatchXReadGroup1K is BenchmarkDispatchXReadGroup with
// entries of 1 KiB (make bench's XREADGROUP at -d 1024).
func BenchmarkDispatchXReadGroup1K(b *testing.B) { benchXReadGroup(b, 1024) }

func benchXReadGroup(b *testing.B, size int) {
	e := newLockedBenchEnv(b)
	add := [][]byte{[]byte("XADD"), []byte("mystream"), []byte("*"), []byte("field"), bytes.Repeat([]byte("x"), size)}
	read := [][]byte{[]byte("XREADGROUP"), []byte("GROUP"), []byte("g"), []byte("c"), []byte("COUNT"), []byte("1"), []byte("STREAMS"), []byte("mystream"), []byte(">")}
	fill := func() {
		e.D.Exec(e.Client, [][]byte{[]byte("DEL"), []byte("mystream")})
		for i := 0; i < 100000; i++ {
			e.D.Exec(e.Client, add)
			if i%64 == 0 {
				e.Client.W.Reset()
			}
		}
		e.D.Exec(e.Client, [][]byte{[]byte("XGROUP"), []byte("CREATE"), []byte("mystream"), []byte("g"), []byte("0")})
		e.Client.W.Reset()
	}
	fill()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%100000 == 99999 {
			b.StopTimer()
			fill()
			b.StartTimer()
		}
		e.D.Exec(e.Client, read)
		e.Client.W.Reset()
	}
}

// BenchmarkDispatchXAdd appends entries of one 1 KiB field to one stream
// (make bench's XADD at -d 1024): a node fills up every few entries.
func BenchmarkDispatchXAdd(b *testing.B) {
	e := newLockedBenchEnv(b)
	add := [][]byte{[]byte("XADD"), []byte("mystream"), []byte("*"), []byte("field"), bytes.Repeat([]byte("x"), 1024)}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%200000 == 199999 {
			e.D.Exec(e.Client, [][]byte{[]byte("DEL"), []byte("mystream")})
		}
		e.D.Exec(e.Client, add)
		e.Client.W.Reset()
	}
}

// benchHashes runs cmd over n small hashes of five fields, two of them
// (f4, f5) with a one-hour TTL, as make bench's field TTL cells do.
func benchHashes(b *testing.B, n int, cmd func(key []byte) [][]byte) {
	v := []byte("v")
	benchPrepared(b, "hb:%012d", n, func(k []byte) [][][]byte {
		return [][][]byte{
			{[]byte("HSET"), k, []byte("f1"), v, []byte("f2"), v, []byte("f3"), v, []byte("f4"), v, []byte("f5"), v},
			{[]byte("HPEXPIRE"), k, []byte("3600000"), []byte("FIELDS"), []byte("2"), []byte("f4"), []byte("f5")},
		}
	}, cmd)
}

func BenchmarkDispatchHpexpire(b *testing.B) {
	name, ttl, fields, one, f1 := []byte("HPEXPIRE"), []byte("3600000"), []byte("FIELDS"), []byte("1"), []byte("f1")
	benchHashes(b, 10000, func(k []byte) [][]byte { return [][]byte{name, k, ttl, fields, one, f1} })
}

func BenchmarkDispatchHttl(b *testing.B) {
	name, fields, one, f4 := []byte("HTTL"), []byte("FIELDS"), []byte("1"), []byte("f4")
	benchHashes(b, 10000, func(k []byte) [][]byte { return [][]byte{name, k, fields, one, f4} })
}

func BenchmarkDispatchHsetVolatile(b *testing.B) {
	name, f3, v := []byte("HSET"), []byte("f3"), []byte("xxx")
	benchHashes(b, 10000, func(k []byte) [][]byte { return [][]byte{name, k, f3, v} })
}

// BenchmarkDispatchGetCluster is BenchmarkDispatchGet on a cluster node
// serving every slot: the redirection check's cost.
func BenchmarkDispatchGetCluster(b *testing.B) {
	st, err := cluster.New(cluster.Options{Logf: func(byte, string, ...any) {}})
	if err != nil {
		b.Fatal(err)
	}
	st.UpdateSlots(false, []cluster.SlotRange{{Start: 0, End: cluster.Slots - 1}})
	get := []byte("GET")
	benchPreparedWith(b, func(e *testEnv) { e.D.Cluster = st }, "key:%012d", 100000,
		func(k []byte) [][][]byte { return [][][]byte{{[]byte("SET"), k, []byte("1")}} },
		func(k []byte) [][]byte { return [][]byte{get, k} })
}

// BenchmarkDispatchHsetBig writes 1 KiB values into one hash of up to
// 100,000 fields, as redis-benchmark -t hset -r 100000 -d 1024 does
// (make bench's HSET at 1 KiB): after the first pass, each write
// replaces a field's value.
func BenchmarkDispatchHsetBig(b *testing.B) {
	hset, key, v := []byte("HSET"), []byte("myhash"), bytes.Repeat([]byte("x"), 1024)
	benchPrepared(b, "element:%012d", 100000, func([]byte) [][][]byte { return nil }, func(f []byte) [][]byte { return [][]byte{hset, key, f, v} })
}

// BenchmarkDispatchWindowSadd runs pipelined windows of 16 SADDs to one
// set as the server does: Prefetch over the window, then each command.
// SADD is a command Prefetch serves with one key: what it costs beyond
// that is what a window pays for nothing.
func BenchmarkDispatchWindowSadd(b *testing.B) {
	e := newLockedBenchEnv(b)
	window := make([][][]byte, 16)
	for i := range window {
		window[i] = [][]byte{[]byte("SADD"), []byte("myset"), []byte(fmt.Sprintf("element:%012d", i))}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.D.Prefetch(e.Client, window)
		for _, args := range window {
			e.D.Exec(e.Client, args)
		}
		e.Client.W.Reset()
	}
}
