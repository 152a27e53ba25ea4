package keyspace

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// zbenchN is the size of the sets the benchmarks read: large enough that
// the tree and the table do not fit in the caches, as in the memory
// benchmark's one sorted set.
const zbenchN = 1 << 20

var (
	zbenchOnce    sync.Once
	zbenchMembers [][]byte
	zbenchSet     *ZSet
)

// zbenchData returns zbenchN members "m<9 digits>" and a set holding
// each with a random integer score, built once for all the benchmarks.
func zbenchData() ([][]byte, *ZSet) {
	zbenchOnce.Do(func() {
		rng := rand.New(rand.NewPCG(1, 2))
		zbenchMembers = make([][]byte, zbenchN)
		zbenchSet = NewZSet()
		zbenchSet.MarkBig()
		for i := range zbenchMembers {
			zbenchMembers[i] = fmt.Appendf(nil, "m%09d", i)
			zbenchSet.Set(zbenchMembers[i], float64(rng.IntN(zbenchN)), false)
		}
	})
	return zbenchMembers, zbenchSet
}

// BenchmarkZSetAdd adds new members, with ascending scores (seq, a time
// series) or random ones; the set starts afresh every zbenchN members.
func BenchmarkZSetAdd(b *testing.B) {
	members, _ := zbenchData()
	for _, order := range []string{"seq", "random"} {
		b.Run(order, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 4))
			var z *ZSet
			for i := 0; i < b.N; i++ {
				if i%zbenchN == 0 {
					b.StopTimer()
					z = NewZSet()
					z.MarkBig()
					b.StartTimer()
				}
				score := float64(i)
				if order == "random" {
					score = float64(rng.IntN(zbenchN))
				}
				z.Set(members[i%zbenchN], score, false)
			}
		})
	}
}

// BenchmarkZSetScore is ZSCORE of a random member.
func BenchmarkZSetScore(b *testing.B) {
	members, z := zbenchData()
	rng := rand.New(rand.NewPCG(5, 6))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok := z.Score(members[rng.IntN(zbenchN)]); !ok {
			b.Fatal("missing member")
		}
	}
}

// BenchmarkZSetRank is ZRANK of a random member.
func BenchmarkZSetRank(b *testing.B) {
	members, z := zbenchData()
	rng := rand.New(rand.NewPCG(7, 8))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok := z.Rank(members[rng.IntN(zbenchN)]); !ok {
			b.Fatal("missing member")
		}
	}
}

// BenchmarkZSetRangeByScore is ZRANGEBYSCORE key min +inf LIMIT 0 10
// from a random min, as the throughput benchmark runs it; the members
// are copied, as the reply is written.
func BenchmarkZSetRangeByScore(b *testing.B) {
	_, z := zbenchData()
	rng := rand.New(rand.NewPCG(9, 10))
	var out []byte
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := 0
		out = out[:0]
		r := ScoreRange{Min: float64(rng.IntN(zbenchN)), Max: zbenchN}
		z.AscendScores(r, func(m string, s float64) bool {
			out = append(out, m...)
			n++
			return n < 10
		})
	}
}
