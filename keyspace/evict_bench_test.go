package keyspace

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkSetUnderEviction: one SET of a new 1 kB value, then the
// eviction it makes due, on a database held at about 30,000 keys.
func BenchmarkSetUnderEviction(b *testing.B) {
	for _, pol := range []Policy{AllKeysLRU, AllKeysLFU, AllKeysRandom, VolatileLRU, VolatileTTL} {
		b.Run(pol.String(), func(b *testing.B) {
			ks := New(16, NewManualClock(epoch))
			ks.SetLFU(pol.lfu(), 10, 1)
			val := []byte(strings.Repeat("v", 1000))
			db := ks.DB(0)
			ks.BeginCommand(false)
			for i := 0; i < 30000; i++ {
				db.SetString(fmt.Appendf(nil, "key:%d", i), val, false, epoch+1e9+int64(i))
			}
			lim := EvictLimits{MaxMemory: ks.UsedMemory(), Policy: pol, Samples: 5, TimeLimit: -1}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ks.BeginCommand(false)
				db.SetString(fmt.Appendf(nil, "new:%d", i), val, false, epoch+2e9+int64(i))
				if ks.Evict(lim, nil) != EvictOK {
					b.Fatal("eviction failed")
				}
			}
		})
	}
}
