// Package keyspace holds the databases and their typed values. It knows
// nothing of networking or RESP. It owns the one lock that makes commands
// serializable and the snapshots that let long readers (KEYS, BGSAVE,
// AOF rewrite, full resync) run without holding it.
package keyspace

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Expired describes a key removed because its deadline passed. Entry is
// detached from the keyspace and never changes again; a sink that keeps
// it past the call may read it from any goroutine.
type Expired struct {
	DB    int
	Key   string
	Entry *Entry
	// Replica: a writable replica expired a key a client wrote there
	// (ExpireDue), which is not its master's: no expiry message.
	Replica bool
}

// Deadline decides what becomes of a key whose deadline passed
// (Keyspace.SetDeadlineHook).
type Deadline int

const (
	// Remove it: the expiry funnel removes the key and hands it to the
	// expiry sinks, as without a hook.
	Remove Deadline = iota
	// Keep it without a deadline: the keyspace removes the deadline; no
	// sink sees the key, which stays live.
	Keep
	// Rewritten: the hook has itself given the key a new value and a
	// deadline still to come (DB.OverwriteString); the key stays live.
	Rewritten
)

// DeadlineHook is asked about every key whose deadline passed, before the
// expiry funnel removes it, under the keyspace lock. It may write other
// keys, and the key itself only with DB.OverwriteString (then answering
// Rewritten), but must not look keys up for write in db's database past
// their deadline: it runs inside the funnel.
type DeadlineHook func(db *DB, key string, e *Entry) Deadline

// ExpiredSink receives every expired key. Sinks run with the keyspace
// lock held, so they must not block and must not call back into the
// keyspace.
type ExpiredSink func(Expired)

// Stats are counters the keyspace keeps for INFO.
type Stats struct {
	ExpiredKeys  int64
	KeyspaceHits int64
	KeyspaceMiss int64
	// ExpiredSubkeys is 7.4's expired_subkeys: hash fields expired.
	ExpiredSubkeys int64
	// LazyfreedObjects is INFO's lazyfreed_objects: what Redis's
	// background thread would have freed (lazyfree.go).
	LazyfreedObjects int64
}

// Keyspace is the set of numbered databases.
type Keyspace struct {
	mu    sync.Mutex
	dbs   []*DB
	clock Clock
	sinks []ExpiredSink
	// fieldSinks hear of expired hash fields (hashfields.go).
	fieldSinks []ExpiredFieldsSink
	// deadlineHook, when set, decides about each key whose deadline
	// passed before it is removed (SetDeadlineHook).
	deadlineHook DeadlineHook

	// Per-command state, set by BeginCommand under the lock.
	now     int64  // time snapshot of the running command, Unix ms
	lru     uint32 // now in lruUnitMs units, stored as entries' access time
	noTouch bool   // the running command must not update access times

	onFreed func(bytes int64) // see SetFreedHook
	lazy    lazyState         // see SetLazyFree

	replica bool // see DB.live for the replica rule
	// localVolatile: on a writable replica, the keys clients gave a
	// deadline (writtenHere).
	localVolatile map[localKey]struct{}
	// obeying: the running command is the master's, applied by a
	// replica: keys past their deadline are there until its DEL.
	obeying bool
	// expiryPausedUntil: while CLIENT PAUSE holds (Unix ms), nothing
	// expires; a key past its deadline reads as gone but stays.
	expiryPausedUntil int64
	loading           bool // replaying AOF or loading RDB, see SetLoading
	// noActiveExpiry: DEBUG SET-ACTIVE-EXPIRE 0, see SetActiveExpiry.
	noActiveExpiry bool

	// LFU tracking (maxmemory-policy *-lfu), see SetLFU.
	lfu          bool
	lfuLogFactor int
	lfuDecayTime int

	// Snapshot bookkeeping: gen is stamped on new entries; an entry whose
	// gen is at most liveMax may be read by a live snapshot.
	gen     uint32
	live    map[uint32]int
	liveMax uint32

	wake func(at int64) // the expiry timer's hook, see SetWakeup

	onMiss func(db int, key []byte) // see SetMissHook
	// onAdded hears of every key created (dbAdd's signalKeyAsReady).
	onAdded func(db int, key []byte)

	// The latency monitor's view of expiry (SetLatencyMonitor).
	latencyMs int64
	onLatency func(event string, ms int64)

	snapExtra func() any // see SetSnapshotExtra

	stats Stats

	watch watchRegistry // WATCHed keys, see watch.go
	// tracker hears of every change WATCH hears of (client-side
	// caching); nil until a client first turns tracking on.
	tracker Tracker

	scanBuf []scanItem // scratch of DB.Scan, used under the lock

	// Memory accounting (memory.go) and eviction (evict.go).
	dirty    []dirtyEntry
	overhead int64
	evict    evictState

	// Snapshots released without the lock, applied by the next holder
	// (see Snapshot.Release).
	relMu      sync.Mutex
	released   []*Snapshot
	relPending atomic.Bool

	// yielding is closed when the holder that yields the lock (Yield)
	// ends its run; nil when none does.
	yielding chan struct{}
}

// New makes a keyspace of n databases reading time from clock.
func New(n int, clock Clock) *Keyspace {
	ks := &Keyspace{clock: clock, gen: 1, live: map[uint32]int{}}
	ks.dbs = make([]*DB, n)
	for i := range ks.dbs {
		ks.dbs[i] = newDB(ks, i)
	}
	ks.setNow(clock.NowMs())
	ks.SetLazyFree(defaultLazyFree)
	return ks
}

// Exec runs fn with the keyspace lock held. Everything that reads or
// writes a database happens inside fn; fn must not block on I/O.
func (ks *Keyspace) Exec(fn func()) {
	ks.Lock()
	defer ks.mu.Unlock()
	fn()
}

// Lock and Unlock bracket a batch of commands explicitly, for the
// dispatcher's hot path where a closure per batch is not wanted. While a
// holder yields the lock (Yield), Lock waits for the end of its run.
func (ks *Keyspace) Lock() {
	ks.mu.Lock()
	for ks.yielding != nil {
		end := ks.yielding
		ks.mu.Unlock()
		<-end
		ks.mu.Lock()
	}
	if ks.relPending.Load() {
		ks.drainReleased()
	}
}

// LockOrBusy takes the lock as Lock does, but also while a holder yields
// it, and then reports busy: the holder (a script past
// busy-reply-threshold) is paused mid-run, and the caller may only do
// what a busy server does (answer -BUSY, take in a client), not touch
// the databases.
func (ks *Keyspace) LockOrBusy() (busy bool) {
	ks.mu.Lock()
	if ks.yielding != nil {
		return true
	}
	if ks.relPending.Load() {
		ks.drainReleased()
	}
	return false
}

// Yield lets the goroutines waiting for the lock take it in turn, while
// the holder runs long (a script past busy-reply-threshold): those that
// took it with LockOrBusy do their work, the others wait for EndYield.
// The lock is held again when Yield returns. Under the lock.
func (ks *Keyspace) Yield() {
	if ks.yielding == nil {
		ks.yielding = make(chan struct{})
	}
	ks.mu.Unlock()
	// The waiters queued for seconds: the mutex, starving, hands itself
	// to each of them before this goroutine has it back.
	runtime.Gosched()
	ks.mu.Lock()
}

// EndYield ends what Yield began: the waiters of Lock go on. Under the
// lock.
func (ks *Keyspace) EndYield() {
	if ks.yielding != nil {
		close(ks.yielding)
		ks.yielding = nil
	}
}

// Unlock releases the lock taken by Lock.
func (ks *Keyspace) Unlock() { ks.mu.Unlock() }

// drainReleased applies the snapshot releases queued by Release. Called
// with the lock held.
func (ks *Keyspace) drainReleased() {
	ks.relMu.Lock()
	rel := ks.released
	ks.released = nil
	ks.relPending.Store(false)
	ks.relMu.Unlock()
	for _, s := range rel {
		s.release()
	}
}

// BeginCommand freezes the time for one command (as Redis's
// commandTimeSnapshot does: a command sees one instant, so a key cannot
// expire halfway through it). noTouch suppresses access-time updates
// (CLIENT NO-TOUCH, OBJECT, TYPE-like introspection).
func (ks *Keyspace) BeginCommand(noTouch bool) {
	ks.setNow(ks.clock.NowMs())
	ks.noTouch = noTouch
}

// BeginCommandAt is BeginCommand with the wall-clock time already read by
// the caller: the dispatcher reads the clock once per command for both
// the time snapshot and the command's duration. A keyspace on another
// clock than the system's (tests) reads its own clock instead.
// PauseExpiry stops expiry until untilMs (Unix ms; 0 ends it now), as
// Redis 7.0 pauses it under CLIENT PAUSE: the data set stays as it is,
// and what falls due meanwhile expires, in deadline order, after.
func (ks *Keyspace) PauseExpiry(untilMs int64) { ks.expiryPausedUntil = untilMs }

// expiryPaused reports whether expiry is paused at ms.
func (ks *Keyspace) expiryPaused(ms int64) bool { return ms < ks.expiryPausedUntil }

// SetObeying marks the commands that follow as the master's (or not):
// on a replica they see keys past their deadline, which only the
// master's DEL removes.
func (ks *Keyspace) SetObeying(on bool) { ks.obeying = on }

func (ks *Keyspace) BeginCommandAt(systemMs int64, noTouch bool) {
	if _, sys := ks.clock.(SystemClock); sys {
		ks.setNow(systemMs)
	} else {
		ks.setNow(ks.clock.NowMs())
	}
	ks.noTouch = noTouch
}

func (ks *Keyspace) setNow(ms int64) {
	ks.now = ms
	ks.lru = uint32(ms / lruUnitMs)
}

// Now is the running command's time snapshot, Unix ms.
func (ks *Keyspace) Now() int64 { return ks.now }

// Clock is the keyspace's clock.
func (ks *Keyspace) Clock() Clock { return ks.clock }

// DB returns database i; the caller checks the range with NumDBs.
func (ks *Keyspace) DB(i int) *DB { return ks.dbs[i] }

// NumDBs is the number of databases.
func (ks *Keyspace) NumDBs() int { return len(ks.dbs) }

// AddExpiredSink registers a sink for expired keys. Register sinks before
// serving clients.
func (ks *Keyspace) AddExpiredSink(s ExpiredSink) { ks.sinks = append(ks.sinks, s) }

// SetDeadlineHook makes h decide about every key whose deadline passes
// (nil: every such key is removed). Set it before serving clients.
func (ks *Keyspace) SetDeadlineHook(h DeadlineHook) { ks.deadlineHook = h }

// SetReplica switches the replica rule on or off (see DB.live).
func (ks *Keyspace) SetReplica(on bool) {
	ks.replica = on
	if !on {
		ks.localVolatile = nil // a master expires every key
	}
}

// localKey is a key of database db.
type localKey struct {
	db  int
	key string
}

// writtenHere remembers a key a client (not the master) gave a deadline
// on a writable replica: the replica expires it itself, as Redis's
// rememberSlaveKeyWithExpire, since no master will send its DEL.
func (ks *Keyspace) writtenHere(db int, key string) {
	if ks.localVolatile == nil {
		ks.localVolatile = make(map[localKey]struct{})
	}
	ks.localVolatile[localKey{db, key}] = struct{}{}
}

// expireWrittenHere expires, at most max, the keys written here on a
// writable replica whose deadline passed (expireSlaveKeys), forgetting
// those gone or no longer volatile. A key the master wrote since is
// expired too, as Redis does. It returns how many it expired.
func (ks *Keyspace) expireWrittenHere(max int) int {
	n := 0
	for k := range ks.localVolatile {
		if n >= max {
			break
		}
		db := ks.dbs[k.db]
		e := db.get(k.key, keyHash(k.key))
		switch {
		case e == nil || e.ExpireAt() == 0:
			delete(ks.localVolatile, k)
		case e.ExpireAt() <= ks.now:
			db.expireKey(k.key, e)
			delete(ks.localVolatile, k)
			n++
		}
	}
	return n
}

// IsReplica reports whether the replica rule is on.
func (ks *Keyspace) IsReplica() bool { return ks.replica }

// SetLoading marks the keyspace as loading a data set (AOF replay, RDB
// load). While loading, EXPIRE and friends store a deadline in the past
// as given instead of deleting the key, as Redis's checkAlreadyExpired
// does, so the key later expires normally.
func (ks *Keyspace) SetLoading(on bool) { ks.loading = on }

// Loading reports whether a data set is being loaded.
func (ks *Keyspace) Loading() bool { return ks.loading }

// SetLFU switches access-frequency tracking on (an LFU maxmemory-policy)
// or off, with Redis's lfu-log-factor and lfu-decay-time (minutes).
// With it on, reads update each key's logarithmic counter (OBJECT FREQ)
// instead of its access time.
func (ks *Keyspace) SetLFU(on bool, logFactor, decayTime int) {
	ks.lfu = on
	ks.lfuLogFactor = logFactor
	ks.lfuDecayTime = decayTime
}

// LFU reports whether access-frequency tracking is on.
func (ks *Keyspace) LFU() bool { return ks.lfu }

// touch records an access to e (an entry no snapshot may read): its
// access time, or under LFU its frequency counter (evictionPoolPopulate's
// updateLFU: decay by the idle periods, then a logarithmic increment).
func (ks *Keyspace) touch(e *Entry) {
	if ks.lfu {
		c := ks.lfuDecr(e)
		if c < 255 {
			base := float64(int(c) - lfuInitVal)
			if base < 0 {
				base = 0
			}
			if rand.Float64() < 1/(base*float64(ks.lfuLogFactor)+1) {
				c++
			}
		}
		e.freq = c
	}
	e.atime = ks.lru
}

// lfuDecr is e's counter decayed by the minutes since its last access
// (Redis's LFUDecrAndReturn).
func (ks *Keyspace) lfuDecr(e *Entry) uint8 {
	c := e.freq
	if ks.lfuDecayTime <= 0 {
		return c
	}
	// Minutes elapsed as Redis counts them (LFUTimeElapsed): between the
	// minute clock's readings at the access and now.
	nowUnits := ks.now / lruUnitMs
	at := nowUnits - int64(int32(ks.lru-e.atime))
	elapsed := nowUnits/lruUnitsPerMinute - at/lruUnitsPerMinute
	if elapsed < 0 {
		elapsed = 0
	}
	periods := elapsed / int64(ks.lfuDecayTime)
	if periods >= int64(c) {
		return 0
	}
	return c - uint8(periods)
}

// Freq is the key's LFU counter as OBJECT FREQ reports it, decayed to
// the current command's time. It is meaningful only with LFU on.
func (ks *Keyspace) Freq(e *Entry) int64 { return int64(ks.lfuDecr(e)) }

// SetMissHook registers the function told of every read that finds no
// key (what keyspace_misses counts), after any lazy expiry, for the
// "keymiss" keyspace notification. It runs under the lock and must not
// call back into the keyspace. Set it before serving clients.
func (ks *Keyspace) SetMissHook(fn func(db int, key []byte)) { ks.onMiss = fn }

// SetAddedHook makes fn hear of every key a write creates, under the
// lock, after the change: Redis's dbAdd signals such a key as ready for
// the clients blocked on it, whatever command made it (SORT ... STORE,
// RESTORE, COPY, a push).
func (ks *Keyspace) SetAddedHook(fn func(db int, key []byte)) { ks.onAdded = fn }

// SetLatencyMonitor makes expiry report its latency spikes, as Redis's
// latency monitor records them with latency-monitor-threshold at
// thresholdMs (0: not timed, no clock read): "expire-cycle" for a pass
// of ExpireDue (the timer's slice, Redis's active expire cycle) of at
// least thresholdMs, "expire-del" for one expired key whose removal took
// that long (Redis times deleteExpiredKeyAndPropagate's deletion, which
// frees the value; here the value is the collector's to free, and what
// an expiry costs under the lock is its removal and its sinks: the
// keyspace event, the DEL propagated, the expiry stream's message that
// encodes the value). report runs under the lock and must not call back
// into the keyspace. Under the lock.
func (ks *Keyspace) SetLatencyMonitor(thresholdMs int64, report func(event string, ms int64)) {
	ks.latencyMs, ks.onLatency = thresholdMs, report
	if report == nil {
		ks.latencyMs = 0
	}
}

// latencySince reports event when the time since start reaches the
// latency monitor's threshold (SetLatencyMonitor).
func (ks *Keyspace) latencySince(event string, start time.Time) {
	if ms := time.Since(start).Milliseconds(); ms >= ks.latencyMs {
		ks.onLatency(event, ms)
	}
}

// SetWakeup registers the expiry timer's hook, called (under the lock)
// with every new deadline so the timer can wake earlier than planned.
func (ks *Keyspace) SetWakeup(fn func(at int64)) { ks.wake = fn }

func (ks *Keyspace) scheduled(at int64) {
	if ks.wake != nil {
		ks.wake(at)
	}
}

// Stats returns a pointer to the counters; read and reset under the lock.
func (ks *Keyspace) Stats() *Stats { return &ks.stats }

// NextDeadline is the earliest deadline over all databases, 0 if none.
func (ks *Keyspace) NextDeadline() int64 {
	var next int64
	for _, db := range ks.dbs {
		if d := db.NextDeadline(); d != 0 && (next == 0 || d < next) {
			next = d
		}
	}
	return next
}

// SetActiveExpiry turns the expiry timer's work (ExpireDue) off or on,
// as DEBUG SET-ACTIVE-EXPIRE sets Redis's active_expire_enabled: while
// it is off a key past its deadline stays until a command meets it (and
// expires it then) or the switch is turned on again. Under the lock.
func (ks *Keyspace) SetActiveExpiry(on bool) { ks.noActiveExpiry = !on }

// ExpireDue expires at most max keys whose deadline has passed, over all
// databases, using the current clock. It returns how many it expired.
// A replica expires nothing, and nothing expires while active expiry is
// off (SetActiveExpiry).
func (ks *Keyspace) ExpireDue(max int) int {
	if ks.noActiveExpiry {
		return 0
	}
	if ks.replica {
		if len(ks.localVolatile) == 0 {
			return 0
		}
		ks.setNow(ks.clock.NowMs())
		return ks.expireWrittenHere(max)
	}
	ks.setNow(ks.clock.NowMs())
	if ks.expiryPaused(ks.now) {
		return 0
	}
	if ks.latencyMs > 0 {
		defer ks.latencySince("expire-cycle", time.Now())
	}
	n := 0
	for _, db := range ks.dbs {
		n += db.ExpireDue(max - n)
		if n >= max {
			break
		}
	}
	return n
}

// SwapDB exchanges databases a and b.
func (ks *Keyspace) SwapDB(a, b int) {
	if len(ks.dirty) != 0 {
		ks.settle()
	}
	ks.watch.flushing(ks.dbs[a], ks.dbs[b])
	ks.watch.flushing(ks.dbs[b], ks.dbs[a])
	ks.dbs[a].swap(ks.dbs[b])
	ks.flushed()
	// The keys written here move with their databases.
	var moved []localKey
	for k := range ks.localVolatile {
		if k.db == a || k.db == b {
			delete(ks.localVolatile, k)
			moved = append(moved, localKey{a + b - k.db, k.key})
		}
	}
	for _, k := range moved {
		ks.localVolatile[k] = struct{}{}
	}
}

// FlushAll empties every database.
func (ks *Keyspace) FlushAll() {
	for _, db := range ks.dbs {
		db.flush()
	}
	ks.localVolatile = nil
	ks.flushed()
}

// bigStringValue is the length from which a string value that leaves the
// keyspace counts in FreedBigBytes.
const bigStringValue = 32 << 10

// dropped notes that e left the keyspace (deleted, expired, replaced) by
// a deletion of kind m: for lazyfreed_objects, and for the freed hook.
func (ks *Keyspace) dropped(e *Entry, m FreeMode) {
	ks.freed(e, m)
	if ks.onFreed == nil {
		return
	}
	var n int64
	switch e.typ {
	case TypeString:
		if e.vlen >= bigStringValue {
			n = int64(e.vcap)
		}
	case TypeHash:
		if h, ok := e.Obj().(*Hash); ok {
			n = h.largeValueBytes(bigStringValue, 64)
		}
	}
	if n > 0 {
		ks.onFreed(n)
	}
}

// SetFreedHook registers fn, told (under the lock, so it must not block)
// of the bytes of every large string value (32 KiB and more) that leaves
// the keyspace, and of the large values of a hash of at most 64 fields
// that does: deleted, expired or overwritten, not renamed or moved; and
// of the old slot array of a big hash's or sorted set's resize that the
// cron finishes (StepResizes). The memory it held is the garbage
// collector's to free; the server hands it back to the operating system
// promptly, as Redis's allocator does, instead of when the heap next
// grows. Set it before serving.
func (ks *Keyspace) SetFreedHook(fn func(bytes int64)) { ks.onFreed = fn }

// shared reports whether a live snapshot may read e.
func (ks *Keyspace) shared(e *Entry) bool {
	return ks.liveMax != 0 && e.gen() <= ks.liveMax
}

// SnapshotLive reports whether a snapshot is live: one may be reading,
// without the lock, values that entries changed since share with it.
func (db *DB) SnapshotLive() bool { return db.ks.liveMax != 0 }

// SetAccess applies RESTORE's IDLETIME and FREQ as Redis's
// objectSetLRUOrLFU does: with LFU tracking on, a frequency (when given,
// >= 0) becomes the entry's counter; otherwise an idle time in seconds
// (when given, >= 0) dates its last access back. Under the lock.
func (ks *Keyspace) SetAccess(e *Entry, idleSeconds, freq int64) {
	if ks.lfu {
		if freq >= 0 {
			e.freq = uint8(min(freq, 255))
			e.atime = ks.lru
		}
		return
	}
	if idleSeconds >= 0 {
		e.atime = ks.lru - uint32(min(idleSeconds, maxIdleSeconds)*lruUnitsPerSecond)
	}
}
