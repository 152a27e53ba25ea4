// Package expiry runs active expiry: one goroutine that sleeps until the
// earliest deadline in the keyspace and expires keys as their time comes.
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

// Engine expires keys at their deadlines.
type Engine struct {
	ks   *keyspace.Keyspace
	wake chan struct{}

	mu   sync.Mutex
	next int64 // deadline the engine sleeps towards, 0 = none
}

// New makes an engine for ks and registers its wake-up hook. Call before
// serving clients.
func New(ks *keyspace.Keyspace) *Engine {
	e := &Engine{ks: ks, wake: make(chan struct{}, 1)}
	ks.SetWakeup(e.scheduled)
	return e
}

// scheduled runs under the keyspace lock for every new deadline; it wakes
// the engine only when the new deadline is earlier than its plan.
func (e *Engine) scheduled(at int64) {
	e.mu.Lock()
	earlier := e.next == 0 || at < e.next
	if earlier {
		e.next = at
	}
	e.mu.Unlock()
	if earlier {
		select {
		case e.wake <- struct{}{}:
		default:
		}
	}
}

// Run expires keys until ctx is done. The caller owns the goroutine.
func (e *Engine) Run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		var expired int
		var next int64
		e.ks.Exec(func() {
			expired = e.ks.ExpireDue(SliceKeys)
			next = e.ks.NextDeadline()
			// Under the keyspace lock, like scheduled: a deadline added
			// after this pass is compared with this plan, never with a
			// stale one, so its wake-up is not lost.
			e.mu.Lock()
			e.next = next
			e.mu.Unlock()
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
			if d := time.Duration(next-e.ks.Clock().NowMs()) * time.Millisecond; d < sleep {
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
		timer.Reset(sleep)
		select {
		case <-ctx.Done():
			return
		case <-e.wake:
			if !timer.Stop() {
				<-timer.C
			}
		case <-timer.C:
		}
	}
}
