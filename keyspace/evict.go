package keyspace

import (
	"math"
	"math/rand/v2"
	"time"
)

// Eviction, as Redis 7.0's evict.c: when the dataset passes maxmemory,
// keys chosen by the policy are deleted until it is back under it.

// Policy is a maxmemory-policy.
type Policy uint8

// The eight policies of Redis 7.0.
const (
	NoEviction Policy = iota
	AllKeysLRU
	AllKeysLFU
	AllKeysRandom
	VolatileLRU
	VolatileLFU
	VolatileRandom
	VolatileTTL
)

var policyNames = [...]string{"noeviction", "allkeys-lru", "allkeys-lfu", "allkeys-random",
	"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"}

// ParsePolicy reads a maxmemory-policy name (lower case, as the
// configuration stores it).
func ParsePolicy(name string) (Policy, bool) {
	for i, n := range policyNames {
		if n == name {
			return Policy(i), true
		}
	}
	return NoEviction, false
}

func (p Policy) String() string { return policyNames[p] }

func (p Policy) allKeys() bool { return p >= AllKeysLRU && p <= AllKeysRandom }
func (p Policy) lru() bool     { return p == AllKeysLRU || p == VolatileLRU }
func (p Policy) lfu() bool     { return p == AllKeysLFU || p == VolatileLFU }
func (p Policy) random() bool  { return p == AllKeysRandom || p == VolatileRandom }

// EvictResult is what Evict achieved (Redis's EVICT_OK, EVICT_RUNNING,
// EVICT_FAIL).
type EvictResult uint8

const (
	// EvictOK: memory is under the limit (or eviction does not apply).
	EvictOK EvictResult = iota
	// EvictRunning: keys were evicted but the time limit came first;
	// the caller goes on and eviction continues later.
	EvictRunning
	// EvictFail: over the limit and nothing (more) can be evicted.
	EvictFail
)

// Evicted describes a key removed by eviction. Entry is detached and
// never changes again.
type Evicted struct {
	DB    int
	Key   string
	Entry *Entry
}

// EvictLimits are the maxmemory settings Evict applies.
type EvictLimits struct {
	MaxMemory int64
	Policy    Policy
	Samples   int           // maxmemory-samples
	TimeLimit time.Duration // per call; < 0: none (tenacity 100)
}

// evpoolSize is the size of the eviction pool (EVPOOL_SIZE).
const evpoolSize = 16

// poolEntry is a candidate of the eviction pool: a key sampled earlier,
// with its score (higher: better to evict).
type poolEntry struct {
	key   string
	score uint64
	db    int
	set   bool
}

// evictState is what eviction keeps between calls: the pool of best
// candidates (sorted by ascending score) and the next database for the
// random policies.
type evictState struct {
	pool   [evpoolSize]poolEntry
	nextDB int
	stats  EvictStats
}

// EvictStats are eviction's counters for INFO.
type EvictStats struct {
	// ExceededSince is when memory was last found over the limit without
	// being brought back (0: it is not), and ExceededTotal the time spent
	// so: INFO's current_eviction_exceeded_time and
	// total_eviction_exceeded_time.
	ExceededSince time.Time
	ExceededTotal time.Duration
}

// EvictStats returns eviction's counters; read and reset under the lock.
func (ks *Keyspace) EvictStats() *EvictStats { return &ks.evict.stats }

// Evict deletes keys as the policy chooses until UsedMemory is at most
// lim.MaxMemory, calling onEvict after each removal (keyspace event,
// propagation; it must not call back into the keyspace). It checks the
// time every 16 keys and stops past lim.TimeLimit with EvictRunning, as
// performEvictions does. Nothing is evicted on a replica or while a data
// set loads (EvictOK). Under the lock, outside a command.
func (ks *Keyspace) Evict(lim EvictLimits, onEvict func(Evicted)) EvictResult {
	res := ks.evictLoop(lim, onEvict)
	st := &ks.evict.stats
	if res == EvictOK {
		if !st.ExceededSince.IsZero() {
			st.ExceededTotal += time.Since(st.ExceededSince)
			st.ExceededSince = time.Time{}
		}
	} else if st.ExceededSince.IsZero() {
		st.ExceededSince = time.Now()
	}
	return res
}

func (ks *Keyspace) evictLoop(lim EvictLimits, onEvict func(Evicted)) EvictResult {
	if lim.MaxMemory <= 0 || ks.replica || ks.loading || ks.UsedMemory() <= lim.MaxMemory {
		return EvictOK
	}
	if lim.Policy == NoEviction {
		return EvictFail
	}
	ks.setNow(ks.clock.NowMs())
	var start time.Time
	if lim.TimeLimit >= 0 {
		start = time.Now()
	}
	freed := 0
	for ks.UsedMemory() > lim.MaxMemory {
		db, key, e := ks.evictionCandidate(lim)
		if e == nil {
			return EvictFail
		}
		db.remove(keyHash(key), e)
		db.ks.dropped(e, FreeEviction) // a large value's memory is handed back, as on DEL
		if onEvict != nil {
			onEvict(Evicted{DB: db.id, Key: key, Entry: e})
		}
		freed++
		if freed%16 == 0 && lim.TimeLimit >= 0 && time.Since(start) > lim.TimeLimit {
			if ks.UsedMemory() > lim.MaxMemory {
				return EvictRunning
			}
			break
		}
	}
	return EvictOK
}

// evictionCandidate picks the next key to evict, or returns a nil entry
// when no key qualifies.
func (ks *Keyspace) evictionCandidate(lim EvictLimits) (*DB, string, *Entry) {
	switch {
	case lim.Policy.random():
		for range ks.dbs {
			ks.evict.nextDB = (ks.evict.nextDB + 1) % len(ks.dbs)
			db := ks.dbs[ks.evict.nextDB]
			if lim.Policy.allKeys() {
				if db.keys > 0 {
					k, e := db.randomEntry()
					return db, k, e
				}
			} else if key, e := db.randomVolatile(); e != nil {
				return db, key, e
			}
		}
		return nil, "", nil
	case lim.Policy == VolatileTTL:
		// The deadline index is ordered: the nearest deadline is known
		// exactly, where Redis approximates it by sampling.
		var best *DB
		var bestAt int64
		for _, db := range ks.dbs {
			if d, ok := db.expires.min(); ok && (best == nil || d.at < bestAt) {
				best, bestAt = db, d.at
			}
		}
		if best == nil {
			return nil, "", nil
		}
		d, _ := best.expires.min()
		return best, d.key, best.get(d.key, keyHash(d.key))
	}
	pool := &ks.evict.pool
	for {
		total := 0
		for _, db := range ks.dbs {
			n := db.keys
			if !lim.Policy.allKeys() {
				n = db.expires.len()
			}
			if n > 0 {
				ks.poolPopulate(db, lim)
				total += n
			}
		}
		if total == 0 {
			return nil, "", nil
		}
		// From the best candidate down: the first that still exists (and,
		// for a volatile policy, still has a deadline) is the pick.
		for k := evpoolSize - 1; k >= 0; k-- {
			p := pool[k]
			if !p.set {
				continue
			}
			pool[k] = poolEntry{}
			db := ks.dbs[p.db]
			e := db.get(p.key, keyHash(p.key))
			if e == nil || !lim.Policy.allKeys() && e.ExpireAt() == 0 {
				continue // a ghost
			}
			return db, p.key, e
		}
	}
}

// poolPopulate samples keys of db and enters those that score better
// than the pool's worst (evictionPoolPopulate).
func (ks *Keyspace) poolPopulate(db *DB, lim EvictLimits) {
	// No more samples than keys to sample from, as dictGetSomeKeys.
	n := max(lim.Samples, 1)
	if lim.Policy.allKeys() {
		n = min(n, db.keys)
	} else {
		n = min(n, db.expires.len())
	}
	for j := 0; j < n; j++ {
		var key string
		var e *Entry
		if lim.Policy.allKeys() {
			key, e = db.sampleEntry()
		} else {
			key, e = db.randomVolatile()
		}
		if e == nil {
			continue
		}
		var score uint64
		if lim.Policy.lru() {
			score = uint64(max(int32(ks.lru-e.atime), 0))
		} else {
			score = 255 - uint64(ks.lfuDecr(e))
		}
		ks.poolInsert(db.id, key, score)
	}
}

// poolInsert puts a candidate in the pool, which is kept sorted by
// ascending score: when full, the worst candidate makes room, and a
// candidate worse than all of a full pool is not entered.
func (ks *Keyspace) poolInsert(dbid int, key string, score uint64) {
	pool := &ks.evict.pool
	for i := range pool {
		if pool[i].set && pool[i].db == dbid && pool[i].key == key {
			pool[i].score = score
			return
		}
	}
	k := 0
	for k < evpoolSize && pool[k].set && pool[k].score < score {
		k++
	}
	switch {
	case k == 0 && pool[evpoolSize-1].set:
		return
	case k < evpoolSize && !pool[k].set:
	default:
		if !pool[evpoolSize-1].set {
			copy(pool[k+1:], pool[k:evpoolSize-1])
		} else {
			k--
			copy(pool[:k], pool[1:k+1])
		}
	}
	pool[k] = poolEntry{key: key, score: score, db: dbid, set: true}
}

// sampleEntry draws a key for the eviction pool; the database must not
// be empty. A large database is sampled at the first entry from a random
// slot of a random shard: O(1), close enough to uniform for
// sampling (Redis's dictGetSomeKeys is not uniform either).
func (db *DB) sampleEntry() (string, *Entry) {
	if db.keys < 4*numShards {
		return db.randomEntry()
	}
	start := rand.IntN(numShards)
	for j := 0; ; j++ {
		t := db.shards[(start+j)&(numShards-1)]
		if t == nil || t.len() == 0 {
			continue
		}
		e := t.sample()
		return e.Key(), e
	}
}

// randomVolatile picks a key with a deadline at random, or returns a nil
// entry when there is none. Where most keys have deadlines (the usual
// case under a volatile policy) a few uniform picks from the table find
// one; otherwise the deadline index picks a random deadline and a key of
// it, which favours keys alone at their deadline over keys that share
// one (deadlines.random).
func (db *DB) randomVolatile() (string, *Entry) {
	if db.expires.len() == 0 {
		return "", nil
	}
	if 2*db.expires.len() >= db.keys {
		for range 8 {
			if k, e := db.sampleEntry(); e != nil && e.ExpireAt() != 0 {
				return k, e
			}
		}
	}
	d, _ := db.expires.random()
	return d.key, db.get(d.key, keyHash(d.key))
}

// EvictionTimeLimit is the time one eviction call may take for a
// maxmemory-eviction-tenacity (evictionTimeLimitUs): linear to 500 µs at
// 10, then +15% a step, no limit (-1) at 100.
func EvictionTimeLimit(tenacity int) time.Duration {
	switch {
	case tenacity <= 10:
		return time.Duration(50*max(tenacity, 0)) * time.Microsecond
	case tenacity < 100:
		return time.Duration(500*math.Pow(1.15, float64(tenacity-10))) * time.Microsecond
	}
	return -1
}
