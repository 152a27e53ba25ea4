package keyspace

import (
	"sync/atomic"
	"time"
)

// Clock tells the time that every deadline comparison reads. The server
// uses the system clock; tests use a ManualClock and move it forward
// instead of sleeping.
type Clock interface {
	// NowMs is the current Unix time in milliseconds.
	NowMs() int64
}

// SystemClock reads the wall clock.
type SystemClock struct{}

// NowMs implements Clock.
func (SystemClock) NowMs() int64 { return time.Now().UnixMilli() }

// ManualClock is a Clock that only moves when told to. Safe for
// concurrent use.
type ManualClock struct{ ms atomic.Int64 }

// NewManualClock starts a manual clock at ms.
func NewManualClock(ms int64) *ManualClock {
	c := &ManualClock{}
	c.ms.Store(ms)
	return c
}

// NowMs implements Clock.
func (c *ManualClock) NowMs() int64 { return c.ms.Load() }

// Advance moves the clock forward by d.
func (c *ManualClock) Advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }

// Set moves the clock to ms.
func (c *ManualClock) Set(ms int64) { c.ms.Store(ms) }
