package tests

import (
	"testing"
	"time"
)

// Waiting in the end-to-end tests: a test waits for a condition with a
// generous deadline, never for a fixed time that a busy machine may not
// honour. A deadline costs nothing when the condition holds early.

// pollUntil polls cond every 10 ms until it holds (true) or timeout
// passes (false). It does not fail the test: the assertion that follows
// reports the state it finds, with its own message.
func pollUntil(timeout time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(timeout); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// parallelReplication runs a test beside the others of its kind: tests
// that start their own masters, replicas and sentinels and spend most of
// their time waiting on them (syncs, failovers, timeouts), never the
// shared differential pair. Go runs them once the sequential tests are
// done, -parallel at a time (make integration: 4); the CPU-bound tests
// (floods, crashes under load, large values) stay sequential.
func parallelReplication(t *testing.T) {
	t.Parallel()
}
