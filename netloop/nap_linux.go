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
// only when all three hold, over the last window of a millisecond or
// more of polls (events, not requests: a pipelined batch is one event,
// which errs toward fewer naps):
//   - it is busy: at least half its recent rounds found a connection's
//     events at once (hot), so requests arrive while it works, not one
//     at a time;
//   - its connections are many for the load: the mean time between two
//     events of one connection (Little's law: the connections seen in
//     the window, times the window, over the events in it) is at least
//     napCycles naps. Then a nap adds a small share to each
//     connection's turn, and its client has the other connections'
//     replies to work on. With few connections, each waiting for its
//     reply, a nap would idle the client: at 5 connections, naps of
//     about 80 µs taken whenever the loop was busy halved throughput;
//   - few events came from fast connections, those whose own turn was
//     shorter than half that: a mean over many slow connections (an
//     idle pool) would otherwise let the loop nap on a few busy ones.
//
// A window much longer than napWindow means the loop slept in
// epoll_wait for most of it, and says nothing of the load: it allows no
// nap. A lightly loaded loop, or one serving a few connections, blocks
// in epoll_wait as before.
type napper struct {
	// hot is a moving average, in 256ths, of the rounds whose first
	// poll found a connection's events.
	hot int

	// The current window: when it started, the connection events
	// served in it, the distinct connections served (a Conn seen in
	// window w carries seen == w, and its events in it in seenEvents),
	// and the events of fast connections.
	start  time.Time
	events int
	active int
	fast   int
	window uint32

	// ok is the last full window's verdict: whether naps may be taken.
	ok bool
}

const (
	// napAsk is the sleep a nap asks for. The loop's thread runs with a
	// timer slack of napSlack (nap sets it) instead of the 50 µs
	// an ordinary thread has; with the wake-up, a nap lasted 41-50 µs
	// (napLength) on the 2-core VM of docs/performance.md, against 80
	// µs for 10 µs asked with the default slack, which gained less
	// throughput at 50 clients. The rule counts in napLength, not in
	// measured naps: a nap the scheduler stretched (a collection's
	// pause, the client on the core) would raise a measured length and,
	// with it, the bar no window would then pass again.
	napAsk    = 20 * time.Microsecond
	napSlack  = 2 * time.Microsecond
	napLength = 45 * time.Microsecond
	// napHot: at least half the recent rounds found events at once.
	napHot = 128
	// napCycles: a connection's turn is at least this many naps long.
	napCycles = 6
	// napWindow is how long the load is measured over before the
	// verdict is taken again; a window over napIdle long allows no nap.
	napWindow = time.Millisecond
	napIdle   = 4 * napWindow
	// napFast is the most events a connection has in a window of
	// napWindow while its turn is half of napCycles naps or longer;
	// more, and it is fast. Fast connections' events may be at most a
	// napFastShare-th of the window's. (At napCycles naps, a window a
	// little over napWindow long counted many connections of a loop
	// that gains from naps as fast: 30 connections have turns of about
	// 330 µs.)
	napFast      = int(2 * napWindow / (napCycles * napLength))
	napFastShare = 8
)

// setNapSlack gives the calling thread the timer slack naps are made
// for. Should prctl fail, naps only last longer. The thread keeps it: it
// serves the runtime's other goroutines too, whose sleeps then end
// nearer their deadline, at no cost worth a second prctl a nap.
func setNapSlack() {
	syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_TIMERSLACK, uintptr(napSlack), 0)
}

// polled records whether a round's first poll found a connection's
// events (not only the loop's own wake-up from Submit).
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
		c.seen, c.seenEvents = p.window, 0
		p.active++
	}
	c.seenEvents++
	switch {
	case c.seenEvents == napFast+1:
		p.fast += napFast + 1
	case c.seenEvents > napFast+1:
		p.fast++
	}
}

// due is called when a poll found nothing, at now: it closes the
// window if it is over and says whether to nap.
func (p *napper) due(now time.Time) bool {
	if span := now.Sub(p.start); span >= napWindow {
		p.ok = false
		if p.events > 0 && span <= napIdle && !p.start.IsZero() {
			cycle := span * time.Duration(p.active) / time.Duration(p.events)
			p.ok = cycle >= napCycles*napLength && p.fast*napFastShare <= p.events
		}
		p.start, p.events, p.active, p.fast = now, 0, 0, 0
		p.window++
		if p.window == 0 { // a new Conn's seen is 0
			p.window++
		}
	}
	return p.ok && p.hot >= napHot
}

// nap sleeps for napAsk (and the timer slack) on the calling thread,
// whichever it is now.
func (p *napper) nap() {
	setNapSlack()
	ts := syscall.NsecToTimespec(int64(napAsk))
	syscall.Nanosleep(&ts, nil)
}
