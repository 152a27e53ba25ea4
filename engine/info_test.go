package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/zredis/zredis/keyspace"
)

func TestAvgTTLSamplesSpreadKeys(t *testing.T) {
	const now = 1_700_000_000_000
	ks := keyspace.New(16, keyspace.NewManualClock(now))
	var avg int64
	ks.Exec(func() {
		db := ks.DB(0)
		for i := 0; i < 2000; i++ {
			ttl := int64(10000)
			if i%2 == 1 {
				ttl = 30000
			}
			key := "key:" + strings.Repeat("k", i%7) + string(rune('a'+i%26)) + time.Duration(i).String()
			db.SetString([]byte(key), []byte("v"), false, now+ttl)
		}
		avg = avgTTL(db, now)
	})
	assert.InDelta(t, 20000, avg, 3000)
}
