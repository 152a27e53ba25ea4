package expiry

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/keyspace"
)

const epoch = int64(1_700_000_000_000)

// recorder collects expiry events; the sink runs under the keyspace lock
// and the test reads from its own goroutine.
type recorder struct {
	mu   sync.Mutex
	keys []string
}

func (r *recorder) sink(ev keyspace.Expired) {
	r.mu.Lock()
	r.keys = append(r.keys, ev.Key)
	r.mu.Unlock()
}

func (r *recorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.keys...)
}

// start runs a timer on ks until the test ends.
func start(t *testing.T, ks *keyspace.Keyspace) *Timer {
	tm := NewTimer(ks)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tm.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return tm
}

func set(ks *keyspace.Keyspace, db int, key string, at int64) {
	ks.Exec(func() {
		ks.BeginCommand(false)
		ks.DB(db).SetString([]byte(key), []byte("v"), false, at)
	})
}

func dbLen(ks *keyspace.Keyspace, db int) int {
	var n int
	ks.Exec(func() { n = ks.DB(db).Len() })
	return n
}

// With a manual clock nothing expires until the clock reaches the
// deadline; then the timer expires the key without any read of it.
func TestTimerFiresAtDeadlineManualClock(t *testing.T) {
	clock := keyspace.NewManualClock(epoch)
	ks := keyspace.New(2, clock)
	rec := &recorder{}
	ks.AddExpiredSink(rec.sink)
	start(t, ks)

	set(ks, 0, "soon", epoch+1000)
	set(ks, 1, "later", epoch+5000)
	set(ks, 0, "never", 0)

	// The timer polls at least every maxSleep: give it several periods
	// of real time during which the manual clock does not move.
	time.Sleep(3 * maxSleep)
	assert.Empty(t, rec.get(), "nothing is due while the clock stands still")

	clock.Advance(1000 * time.Millisecond)
	require.Eventually(t, func() bool { return len(rec.get()) == 1 }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, []string{"soon"}, rec.get())
	assert.Equal(t, 1, dbLen(ks, 0))
	assert.Equal(t, 1, dbLen(ks, 1))

	clock.Advance(4 * time.Second)
	require.Eventually(t, func() bool { return len(rec.get()) == 2 }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, []string{"soon", "later"}, rec.get())
	assert.Equal(t, 0, dbLen(ks, 1))
}

// With the system clock a short deadline fires without any access to
// the key: the timer wakes for a deadline earlier than its plan.
func TestTimerFiresAtDeadlineRealClock(t *testing.T) {
	ks := keyspace.New(1, keyspace.SystemClock{})
	rec := &recorder{}
	ks.AddExpiredSink(rec.sink)
	start(t, ks)

	set(ks, 0, "far", time.Now().Add(time.Hour).UnixMilli())
	time.Sleep(20 * time.Millisecond) // the timer now plans for "far"
	set(ks, 0, "near", time.Now().Add(30*time.Millisecond).UnixMilli())
	require.Eventually(t, func() bool { return len(rec.get()) == 1 }, 5*time.Second, 2*time.Millisecond)
	assert.Equal(t, []string{"near"}, rec.get())
	assert.Equal(t, 1, dbLen(ks, 0))
}

// A burst of deadlines is worked off in slices of SliceKeys with the lock
// released in between: other goroutines get the lock during the burst.
func TestTimerBoundedSlices(t *testing.T) {
	clock := keyspace.NewManualClock(epoch)
	ks := keyspace.New(1, clock)
	const n = 500 * SliceKeys // some milliseconds of work: Go's mutex hands over after 1 ms

	var mu sync.Mutex
	var sliceSizes []int
	current := 0
	ks.AddExpiredSink(func(keyspace.Expired) { current++ })
	ks.Exec(func() {
		ks.BeginCommand(false)
		for i := 0; i < n; i++ {
			ks.DB(0).SetString([]byte(fmt.Sprintf("k%d", i)), []byte("v"), false, epoch+1)
		}
	})

	// Observe, under the lock, how many keys expired between two of our
	// acquisitions: never more than one slice, since the timer expires
	// at most SliceKeys per acquisition and we interleave.
	clock.Advance(time.Second)
	start(t, ks)
	for {
		var left int
		ks.Exec(func() {
			left = ks.DB(0).Len()
			mu.Lock()
			sliceSizes = append(sliceSizes, current)
			mu.Unlock()
			current = 0
		})
		if left == 0 {
			break
		}
		// Back at once: a sleep lets the timer work off the whole
		// burst, a slice per acquisition, before this goroutine wakes.
		runtime.Gosched()
	}
	mu.Lock()
	defer mu.Unlock()
	total := 0
	interleaved := 0
	for _, s := range sliceSizes {
		total += s
		if s > 0 {
			interleaved++
		}
	}
	assert.Equal(t, n, total)
	assert.Greater(t, interleaved, 1, "the burst was not expired in one hold of the lock: %v", sliceSizes)
}

// ExpireDue itself never expires more than asked.
func TestExpireDueBound(t *testing.T) {
	clock := keyspace.NewManualClock(epoch)
	ks := keyspace.New(3, clock)
	for db := 0; db < 3; db++ {
		for i := 0; i < 50; i++ {
			set(ks, db, fmt.Sprintf("k%d", i), epoch+1)
		}
	}
	clock.Advance(time.Second)
	ks.Exec(func() {
		assert.Equal(t, SliceKeys/2, ks.ExpireDue(SliceKeys/2))
		assert.Equal(t, 50, ks.ExpireDue(50))
		assert.Equal(t, 150-SliceKeys/2-50, ks.ExpireDue(1000))
		assert.Equal(t, 0, ks.ExpireDue(1000))
	})
}

// A replica's timer expires nothing: the master's DEL will come.
func TestTimerReplicaDoesNotExpire(t *testing.T) {
	clock := keyspace.NewManualClock(epoch)
	ks := keyspace.New(1, clock)
	ks.SetReplica(true)
	rec := &recorder{}
	ks.AddExpiredSink(rec.sink)
	ks.Exec(func() { ks.SetObeying(true) }) // the master's write
	set(ks, 0, "k", epoch+1)
	ks.Exec(func() { ks.SetObeying(false) })
	clock.Advance(time.Second)
	start(t, ks)
	time.Sleep(3 * maxSleep)
	assert.Empty(t, rec.get())
	assert.Equal(t, 1, dbLen(ks, 0))

	ks.Exec(func() { ks.SetReplica(false) })
	require.Eventually(t, func() bool { return len(rec.get()) == 1 }, 5*time.Second, 5*time.Millisecond)
}

// A writable replica expires the keys its clients wrote (not its
// master's), marked as the replica's.
func TestTimerReplicaExpiresKeysWrittenHere(t *testing.T) {
	clock := keyspace.NewManualClock(epoch)
	ks := keyspace.New(1, clock)
	ks.SetReplica(true)
	var evs []keyspace.Expired
	ks.AddExpiredSink(func(e keyspace.Expired) { evs = append(evs, e) })
	ks.Exec(func() { ks.SetObeying(true) })
	set(ks, 0, "master", epoch+1)
	ks.Exec(func() { ks.SetObeying(false) })
	set(ks, 0, "local", epoch+1)
	clock.Advance(time.Second)
	ks.Exec(func() {
		assert.Equal(t, 1, ks.ExpireDue(100))
		assert.Equal(t, 0, ks.ExpireDue(100))
		require.Len(t, evs, 1)
		assert.Equal(t, "local", evs[0].Key)
		assert.True(t, evs[0].Replica)
	})
	assert.Equal(t, 1, dbLen(ks, 0))
}

// Run returns once its context is cancelled, whatever it waits for.
func TestTimerStopsOnCancel(t *testing.T) {
	for _, name := range []string{"idle", "deadline pending", "busy"} {
		t.Run(name, func(t *testing.T) {
			clock := keyspace.NewManualClock(epoch)
			ks := keyspace.New(1, clock)
			switch name {
			case "deadline pending":
				set(ks, 0, "k", epoch+3_600_000)
			case "busy":
				for i := 0; i < 50*SliceKeys; i++ {
					set(ks, 0, fmt.Sprintf("k%d", i), epoch+1)
				}
				clock.Advance(time.Second)
			}
			tm := NewTimer(ks)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				tm.Run(ctx)
			}()
			time.Sleep(10 * time.Millisecond)
			cancel()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("Run did not return after cancel")
			}
		})
	}
}
