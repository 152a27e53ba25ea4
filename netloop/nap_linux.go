package netloop

import (
	"syscall"
	"time"
)

// napper decides whether the loop, finding nothing ready after a round,
// first sleeps a little and polls again (a nap) instead of blocking in
// epoll_wait at once: interrupt coalescing, as a network card's adaptive
// moderation does it, applied to the loop's wake-ups.
//
// Why: a loop asleep in epoll_wait is woken by the client's own write,
// in the client's system call (sendto -> tcp_v4_rcv -> sock_def_readable
// -> the scheduler's wake-up), once for every few requests, because the
// loop answers a round faster than many clients send the next. perf put
// about 10% of redis-benchmark's samples in that wake-up at pipeline 1
// with 50 connections (docs/performance.md, "Pipeline 1"). A loop in
// nanosleep is on no socket's wait queue, so the clients' writes queue
// their requests without waking anything, and the loop takes them in
// one round when the nap ends: fewer, larger rounds, less work a request
// on both sides. Spinning instead of sleeping removed the wake-ups too,
// but the loop paid more CPU than the client saved.
//
// A nap delays the requests that arrive during it, which costs nothing
// only while each connection has other work meanwhile. So the loop naps
// only when both hold:
//   - it is busy: most of its recent rounds found events at once
//     (hot), so requests arrive while it works, not one at a time;
//   - its connections are many for the load: the mean time between two
//     requests of one connection (Little's law: the connections seen in
//     the last window, times the window, over the requests in it) is at
//     least napCycles naps. Then a nap adds a small share to each
//     connection's turn, and its client has the other connections'
//     replies to work on. With few connections, each waiting for its
//     reply, a nap would idle the client: at 5 connections, naps of
//     about 80 µs taken whenever the loop was busy halved throughput.
//
// A lightly loaded loop, or one serving a few connections, never naps
// and blocks in epoll_wait as before.
type napper struct {
	// hot is a moving average, in 256ths, of the rounds whose first
	// poll found events.
	hot int

	// The current window: when it started, the connection events
	// served and the distinct connections served in it (a Conn seen in
	// window w carries seen == w).
	start  time.Time
	events int
	active int
	window uint32

	// cycle is the last full window's mean time between two requests of
	// one connection; took, a moving average of a nap's actual length
	// (the timer slack and the wake-up make a nap longer than asked).
	cycle time.Duration
	took  time.Duration
}

const (
	// napAsk is the sleep a nap asks for. The loop's thread runs with a
	// timer slack of napSlack (Loop.Run sets it) instead of the 50 µs
	// an ordinary thread has; with the wake-up, a nap lasted 41-50 µs
	// on the 2-core VM of docs/performance.md (napTypical, the estimate
	// until naps are measured), against 80 µs for 10 µs asked with the
	// default slack, which gained less throughput at 50 clients.
	napAsk     = 20 * time.Microsecond
	napSlack   = 2 * time.Microsecond
	napTypical = 45 * time.Microsecond
	// napHot: at least half the recent rounds found events at once.
	napHot = 128
	// napCycles: a connection's turn is at least this many naps long.
	napCycles = 6
	// napWindow is how long the load is measured over before cycle is
	// taken again.
	napWindow = time.Millisecond
)

// setNapSlack gives the calling thread (the loop's, locked to it) the
// timer slack naps are measured with.
func setNapSlack() {
	syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_TIMERSLACK, uintptr(napSlack), 0)
}

// polled records whether a round's first poll found events.
func (p *napper) polled(found bool) {
	hit := 0
	if found {
		hit = 256
	}
	p.hot += (hit - p.hot) / 16
}

// served records one event of c.
func (p *napper) served(c *Conn) {
	p.events++
	if c.seen != p.window {
		c.seen = p.window
		p.active++
	}
}

// due is called when a poll found nothing, at now: it closes the
// window if it is over and says whether to nap.
func (p *napper) due(now time.Time) bool {
	if span := now.Sub(p.start); span >= napWindow {
		if p.events > 0 && !p.start.IsZero() {
			p.cycle = span * time.Duration(p.active) / time.Duration(p.events)
		} else {
			p.cycle = 0
		}
		p.start, p.events, p.active = now, 0, 0
		p.window++
	}
	if p.took == 0 {
		p.took = napTypical
	}
	return p.hot >= napHot && p.cycle >= napCycles*p.took
}

// nap sleeps for napAsk (and the timer slack) and measures how long.
func (p *napper) nap() {
	t0 := time.Now()
	ts := syscall.NsecToTimespec(int64(napAsk))
	syscall.Nanosleep(&ts, nil)
	// A nap the scheduler stretched (another thread ran on the core)
	// counts as four asked-for naps at most, so that one does not stop
	// the napping for long.
	p.took += (min(time.Since(t0), 4*napTypical) - p.took) / 8
}
