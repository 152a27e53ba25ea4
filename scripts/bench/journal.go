package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"time"
)

// The expiry journal's cost: zredis with the AOF on and a listener
// attached, the journal on (the default) against the journal off, under
// appendfsync always and everysec; with -journal-baseline, an earlier
// zredis build (one without the journal) too. Three figures: the expiry
// throughput (journalBurst keys due at one instant, counted from the
// deadline to the last message received), the lag of lagKeys keys due
// over lagSpread (as the expiry-lag part measures it), and the p99 of
// writers' SETs meanwhile (journalWriters connections, one SET at a time).
const (
	journalBurst     = 200000
	journalWriters   = 4
	journalBurstLead = 4 * time.Second // loading under appendfsync always is slower
)

type journalResult struct {
	burstRate     float64 // keys per second
	burstReceived int
	lag           lagResult
	setP99        time.Duration
	setRate       float64 // SETs per second, all writers
}

// journalBench runs every configuration on a fresh server and prints the
// table.
func journalBench(ctx context.Context, o options, w io.Writer) error {
	type config struct {
		label string
		bin   string
		extra []string
	}
	configs := []config{
		{"journal off", o.zredisBin, []string{"--expiry-zmq-journal", "no"}},
		{"journal on", o.zredisBin, nil},
	}
	if o.journalBaseline != "" {
		configs = append(configs, config{"baseline", o.journalBaseline, nil})
	}
	fmt.Fprintf(w, "expiry journal: appendonly yes, one 0MQ listener; burst: %d keys due at one instant; lag: %d keys over %v; %d writers' SETs meanwhile\n",
		journalBurst, lagKeys, lagSpread, journalWriters)
	if o.journalBaseline != "" {
		fmt.Fprintf(w, "baseline: %s\n", o.journalBaseline)
	}
	fmt.Fprintf(w, "%-10s %-12s %14s %9s %9s %9s %12s %11s\n", "appendfsync", "", "burst keys/s", "lag p50", "lag p99", "lag max", "SET p99 ms", "SET/s")
	for _, policy := range []string{"always", "everysec"} {
		results := make([]journalResult, len(configs))
		for i, c := range configs {
			res, err := journalRun(ctx, c.bin, policy, c.extra)
			if err != nil {
				return fmt.Errorf("%s, appendfsync %s: %w", c.label, policy, err)
			}
			results[i] = res
			fmt.Fprintf(w, "%-10s %-12s %14.0f %9s %9s %9s %12s %11.0f\n", policy, c.label, res.burstRate,
				lagMS(res.lag.p50), lagMS(res.lag.p99), lagMS(res.lag.max), lagMS(res.setP99), res.setRate)
			if res.burstReceived < journalBurst || res.lag.received < lagKeys {
				fmt.Fprintf(w, "%-10s %-12s received %d of %d burst keys, %d of %d lag keys\n", "", "",
					res.burstReceived, journalBurst, res.lag.received, lagKeys)
			}
		}
		on, off := results[1], results[0]
		fmt.Fprintf(w, "%-10s %-12s %14.2f %9.2f %9.2f %9.2f %12.2f %11.2f\n", policy, "on/off", on.burstRate/off.burstRate,
			ratioOf(dur(on.lag.p50), dur(off.lag.p50)), ratioOf(dur(on.lag.p99), dur(off.lag.p99)),
			ratioOf(dur(on.lag.max), dur(off.lag.max)), ratioOf(dur(on.setP99), dur(off.setP99)), on.setRate/off.setRate)
	}
	fmt.Fprintln(w)
	return nil
}

func dur(d time.Duration) float64 { return float64(d) }

// journalRun measures one configuration on a fresh server: the lag run
// with the writers, then the burst.
func journalRun(ctx context.Context, bin, policy string, extra []string) (journalResult, error) {
	var res journalResult
	port, err := freePort()
	if err != nil {
		return res, err
	}
	endpoint := "tcp://127.0.0.1:" + strconv.Itoa(port)
	args := append([]string{"--save", "", "--appendonly", "yes", "--appendfsync", policy,
		"--expiry-zmq-endpoints", endpoint}, extra...)
	s, err := startServer(ctx, "zredis", bin, args...)
	if err != nil {
		return res, err
	}
	defer s.stop()
	rc, err := dialServer(s)
	if err != nil {
		return res, err
	}
	defer rc.Close()
	l := dialZMQListener(endpoint)
	defer l.close()
	time.Sleep(200 * time.Millisecond) // the listener connects

	first, err := loadSpread(rc, "lag", lagKeys, lagSpread, lagLead)
	if err != nil {
		return res, err
	}
	end := first.Add(lagSpread)
	var wg sync.WaitGroup
	rtts := make([][]time.Duration, journalWriters)
	errs := make([]error, journalWriters)
	for i := range journalWriters {
		wc, err := dialServer(s)
		if err != nil {
			return res, err
		}
		wg.Go(func() {
			defer wc.Close()
			time.Sleep(time.Until(first))
			for n := 0; time.Now().Before(end); n++ {
				start := time.Now()
				if _, err := wc.do("SET", "w"+strconv.Itoa(i)+":"+strconv.Itoa(n%1000), "v"); err != nil {
					errs[i] = err
					return
				}
				rtts[i] = append(rtts[i], time.Since(start))
			}
		})
	}
	res.lag = receiveLags(l, lagKeys, first.Add(lagSpread+lagWait), deadlineOf)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return res, err
	}
	all := slices.Concat(rtts...)
	if len(all) > 0 {
		slices.Sort(all)
		res.setP99 = all[min(len(all)-1, len(all)*99/100)]
		res.setRate = float64(len(all)) / lagSpread.Seconds()
	}

	at, err := loadSpread(rc, "burst", journalBurst, 0, journalBurstLead)
	if err != nil {
		return res, err
	}
	var last time.Time
	giveUp := at.Add(lagWait)
	for res.burstReceived < journalBurst {
		_, t, err := l.next(time.Until(giveUp))
		if err != nil {
			break
		}
		res.burstReceived++
		last = t
	}
	if res.burstReceived > 0 {
		res.burstRate = float64(res.burstReceived) / last.Sub(at).Seconds()
	}
	return res, nil
}

// receiveLags reads n names from l, until giveUp, and returns their lags
// (receive time minus the deadline deadlineOf reads from the name) as
// percentiles; a name not received counts as later than any.
func receiveLags(l *keyFeed, n int, giveUp time.Time, deadlineOf func(string) (time.Time, bool)) lagResult {
	var res lagResult
	var lags []time.Duration
	for len(lags) < n {
		key, at, err := l.next(time.Until(giveUp))
		if err != nil {
			break
		}
		if d, ok := deadlineOf(key); ok {
			lags = append(lags, at.Sub(d))
		}
	}
	res.received = len(lags)
	for len(lags) < n {
		lags = append(lags, notReceived)
	}
	slices.Sort(lags)
	res.p50 = lags[len(lags)/2]
	res.p99 = lags[min(len(lags)-1, len(lags)*99/100)]
	res.max = lags[len(lags)-1]
	return res
}
