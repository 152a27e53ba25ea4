package netloop

import (
	"testing"
	"time"
)

// load feeds p a steady load for span from *now, as Run would: conns
// connections taking turns, rate events a millisecond, each round one
// event, and every round's first poll finding events when hot. It
// returns whether the last poll that found nothing would have napped.
func load(p *napper, now *time.Time, conns []*Conn, rate int, hot bool, span time.Duration) bool {
	step := time.Millisecond / time.Duration(rate)
	napped := false
	for end, i := now.Add(span), 0; now.Before(end); i++ {
		p.polled(hot)
		p.served(conns[i%len(conns)])
		*now = now.Add(step)
		napped = p.due(*now)
	}
	return napped
}

func newConns(n int) []*Conn {
	conns := make([]*Conn, n)
	for i := range conns {
		conns[i] = &Conn{}
	}
	return conns
}

func TestNapperNapsOnlyForManyBusyConnections(t *testing.T) {
	conns := newConns(100)
	now := time.Unix(1000, 0)
	var p napper

	// 50 connections at 90 events a millisecond: each waits about
	// 550 µs between its requests, more than six naps.
	if !load(&p, &now, conns[:50], 90, true, 5*time.Millisecond) {
		t.Fatal("50 busy connections: no nap")
	}
	// The same connections, the loop's polls finding nothing at once
	// (the load is light for it): no nap.
	if load(&p, &now, conns[:50], 90, false, 5*time.Millisecond) {
		t.Fatal("a loop that is not busy naps")
	}
	// 5 connections at the same rate: a connection's turn is 55 µs, a
	// nap would leave its client waiting.
	if load(&p, &now, conns[:5], 90, true, 5*time.Millisecond) {
		t.Fatal("5 connections: napped")
	}
	// 10 connections: a turn of 110 µs, under six naps.
	if load(&p, &now, conns[:10], 90, true, 5*time.Millisecond) {
		t.Fatal("10 connections: napped")
	}
	// And back to many.
	if !load(&p, &now, conns, 90, true, 5*time.Millisecond) {
		t.Fatal("100 busy connections: no nap")
	}
}

// A few fast connections among many slow ones: the mean turn is long,
// but the fast ones would wait on every nap.
func TestNapperSparesFastConnectionsAmongSlowOnes(t *testing.T) {
	fast, slow := newConns(5), newConns(30)
	now := time.Unix(1000, 0)
	var p napper
	napped := false
	// Each millisecond: the 5 fast connections 18 events each (a turn
	// of 55 µs), the 30 slow ones one each: a mean turn of about 290 µs.
	for ms := 0; ms < 10; ms++ {
		step := time.Millisecond / 120
		for i := 0; i < 120; i++ {
			c := fast[i%5]
			if i%4 == 3 {
				c = slow[i/4]
			}
			p.polled(true)
			p.served(c)
			now = now.Add(step)
			napped = p.due(now) || napped
		}
	}
	if napped {
		t.Fatal("napped with 5 fast connections")
	}
}

// After a long idle spell the first window, which holds the idle time,
// allows no nap, however busy the loop was before.
func TestNapperIdleWindowAllowsNoNap(t *testing.T) {
	conns := newConns(50)
	now := time.Unix(1000, 0)
	var p napper
	if !load(&p, &now, conns, 90, true, 5*time.Millisecond) {
		t.Fatal("50 busy connections: no nap")
	}
	now = now.Add(time.Hour)
	p.polled(true)
	p.served(conns[0])
	if p.due(now) {
		t.Fatal("napped after an hour idle")
	}
	if p.due(now.Add(time.Microsecond)) {
		t.Fatal("napped in the window after an idle hour")
	}
}
