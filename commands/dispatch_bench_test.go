package commands

import (
	"fmt"
	"testing"

	"github.com/zredis/zredis/keyspace"
)

// benchKeys runs cmd over a keyspace of n keys, as redis-benchmark -r n
// does, through the dispatcher (lookup, checks, handler, stats).
func benchKeys(b *testing.B, n int, cmd func(key []byte) [][]byte) {
	e := newTestEnv(b)
	e.KS = keyspace.New(16, keyspace.SystemClock{})
	e.D.KS = e.KS
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("key:%012d", i))
	}
	e.KS.Lock()
	defer e.KS.Unlock()
	for _, k := range keys {
		e.D.Exec(e.Client, [][]byte{[]byte("SET"), k, []byte("1")})
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
