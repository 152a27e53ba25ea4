package tests

import "time"

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
