package expiry

import (
	"context"
	"sync"
	"time"

	"github.com/zredis/zredis/keyspace"
)

// SliceKeys bounds how many keys one pass expires while holding the
// keyspace lock: clients queue behind a pass, so a burst of deadlines is
// worked off in slices with the lock released between them.
const SliceKeys = 200

// maxSleep caps a sleep so that a clock that jumps (tests' manual clocks,
// wall-clock adjustments) is noticed within this period.
const maxSleep = 100 * time.Millisecond

// Timer expires keys at their deadlines: one goroutine (Run) sleeps
// until the earliest deadline in the keyspace and expires keys as their
// time comes, through the keyspace's funnel.
type Timer struct {
	ks   *keyspace.Keyspace
	wake chan struct{}

	mu   sync.Mutex
	next int64 // deadline the timer sleeps towards, 0 = none

	// afterPass, when set, runs under the keyspace lock after every pass
	// that expired keys (SetAfterPass).
	afterPass func()
}

// NewTimer makes a timer for ks and registers its wake-up hook. Call
// before serving clients.
func NewTimer(ks *keyspace.Keyspace) *Timer {
	t := &Timer{ks: ks, wake: make(chan struct{}, 1)}
	ks.SetWakeup(t.scheduled)
	return t
}

// scheduled runs under the keyspace lock for every new deadline; it wakes
// the timer only when the new deadline is earlier than its plan.
func (t *Timer) scheduled(at int64) {
	t.mu.Lock()
	earlier := t.next == 0 || at < t.next
	if earlier {
		t.next = at
	}
	t.mu.Unlock()
	if earlier {
		select {
		case t.wake <- struct{}{}:
		default:
		}
	}
}

// SetAfterPass makes fn run under the keyspace lock after every pass
// that expired keys. Call before Run.
func (t *Timer) SetAfterPass(fn func()) { t.afterPass = fn }

// Run expires keys until ctx is done. The caller owns the goroutine.
func (t *Timer) Run(ctx context.Context) {
	alarm := time.NewTimer(time.Hour)
	defer alarm.Stop()
	for {
		var expired int
		var next int64
		t.ks.Exec(func() {
			expired = t.ks.ExpireDue(SliceKeys)
			if expired > 0 && t.afterPass != nil {
				t.afterPass()
			}
			next = t.ks.NextDeadline()
			// Under the keyspace lock, like scheduled: a deadline added
			// after this pass is compared with this plan, never with a
			// stale one, so its wake-up is not lost.
			t.mu.Lock()
			t.next = next
			t.mu.Unlock()
		})
		if expired == SliceKeys {
			// More may be due: give waiting clients the lock, then go on.
			select {
			case <-ctx.Done():
				return
			default:
			}
			continue
		}
		sleep := maxSleep
		if next != 0 {
			if d := time.Duration(next-t.ks.Clock().NowMs()) * time.Millisecond; d < sleep {
				sleep = d
			}
		}
		if sleep <= 0 {
			if expired > 0 {
				continue
			}
			// Due but nothing expired: a replica waits for its master's
			// DEL. Do not spin.
			sleep = maxSleep
		}
		alarm.Reset(sleep)
		select {
		case <-ctx.Done():
			return
		case <-t.wake:
			if !alarm.Stop() {
				<-alarm.C
			}
		case <-alarm.C:
		}
	}
}
