package netloop

import (
	"testing"
	"time"
)

// load feeds p rounds of a steady load, as Run would: conns connections
// taking turns, one event a round, rate events a millisecond, every
// round's first poll finding events when hot, for span of time from
// *now. It returns whether the last poll that found nothing napped.
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

func TestNapperNapsOnlyForManyBusyConnections(t *testing.T) {
	conns := make([]*Conn, 100)
	for i := range conns {
		conns[i] = &Conn{}
	}
	now := time.Unix(1000, 0)
	var p napper

	// 50 connections at 90 requests a millisecond: each waits about
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

func TestNapStretchedCountsBounded(t *testing.T) {
	var p napper
	p.took = napTypical
	p.nap()
	if p.took <= 0 || p.took > 4*napTypical {
		t.Fatalf("took %v", p.took)
	}
}
