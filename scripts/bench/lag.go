package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zredis/zredis/zmqpub"
	"github.com/zredis/zredis/zmqpub/pull"
)

// The expiry-lag benchmark: how late a listener learns that a key
// expired. lagKeys keys get deadlines spread evenly over lagSpread, next
// to lagVolatile keys with a one-hour TTL (the keys an expiry scan must
// not be slowed by). zredis is measured at a 0MQ PULL listener, redis at
// a subscriber of its "expired" keyspace notification; the lag of a key
// is its receive time minus its deadline. PING's p99 is measured idle and
// while the keys expire, with and without a listener.
const (
	lagKeys     = 100000
	lagVolatile = 1000000
	lagSpread   = 2 * time.Second
	lagLead     = time.Second // from the end of loading to the first deadline
	pingSamples = 2000
	lagWait     = 30 * time.Second // after the last deadline
	notReceived = time.Duration(1<<63 - 1)
)

type lagResult struct {
	received              int
	p50, p99, max         time.Duration
	pingIdle              time.Duration
	pingListener, pingOff time.Duration
}

// lagBench runs the benchmark on a fresh pair of servers and prints the
// table.
func lagBench(ctx context.Context, o options, w io.Writer) error {
	zport, err := freePort()
	if err != nil {
		return err
	}
	endpoint := "tcp://127.0.0.1:" + strconv.Itoa(zport)
	// A redis-server in zredis's place (-against-self) is listened to as
	// redis is.
	zargs := noSave("--expiry-zmq-endpoints", endpoint)
	if o.self {
		zargs = noSave("--notify-keyspace-events", "Ex")
	}
	z, err := startServer(ctx, "zredis", o.zredisBin, zargs...)
	if err != nil {
		return err
	}
	defer z.stop()
	r, err := startServer(ctx, "redis", o.redisBin, noSave("--notify-keyspace-events", "Ex")...)
	if err != nil {
		return err
	}
	defer r.stop()
	fmt.Fprintf(w, "expiry lag: zredis 127.0.0.1:%d (listener on %s)  redis 127.0.0.1:%d\n", z.port, endpoint, r.port)

	zl := func() (*keyFeed, error) { return dialZMQListener(endpoint), nil }
	if o.self {
		zl = func() (*keyFeed, error) { return dialNotificationListener(z) }
	}
	rl := func() (*keyFeed, error) { return dialNotificationListener(r) }
	zres, err := lagRun(z, zl, keyLayout)
	if err != nil {
		return fmt.Errorf("zredis: %w", err)
	}
	rres, err := lagRun(r, rl, keyLayout)
	if err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	fmt.Fprintf(w, "%d keys with deadlines spread over %v, next to %d keys with a 1-hour TTL\n", lagKeys, lagSpread, lagVolatile)
	fmt.Fprintln(w, "lag = receive time at the listener - the key's deadline; zredis: 0MQ PULL listener, redis: 'expired' keyspace notification")
	fmt.Fprintf(w, "a key not received %v after the last deadline counts as later than that\n", lagWait)
	fmt.Fprintf(w, "%-40s %14s %14s\n", "", "zredis", "redis")
	fmt.Fprintf(w, "%-40s %14d %14d\n", "messages received", zres.received, rres.received)
	fmt.Fprintf(w, "%-40s %14s %14s\n", "lag p50 ms", lagMS(zres.p50), lagMS(rres.p50))
	fmt.Fprintf(w, "%-40s %14s %14s\n", "lag p99 ms", lagMS(zres.p99), lagMS(rres.p99))
	fmt.Fprintf(w, "%-40s %14s %14s\n", "lag max ms", lagMS(zres.max), lagMS(rres.max))
	fmt.Fprintf(w, "%-40s %14s %14s\n", "PING p99 ms, idle", lagMS(zres.pingIdle), lagMS(rres.pingIdle))
	fmt.Fprintf(w, "%-40s %14s %14s\n", "PING p99 ms, expiring, listener", lagMS(zres.pingListener), lagMS(rres.pingListener))
	fmt.Fprintf(w, "%-40s %14s %14s\n", "PING p99 ms, expiring, no listener", lagMS(zres.pingOff), lagMS(rres.pingOff))
	fmt.Fprintln(w)
	for _, f := range lagFigures("expiry lag", "messages received", "keys", zres, &rres) {
		o.sum.add(f)
	}
	return nil
}

// keyFeed yields the names of expired keys as a listener receives them,
// with the time each arrived.
type keyFeed struct {
	msgs chan keyAt
	stop func() // makes the producer close msgs
}

type keyAt struct {
	key string
	at  time.Time
}

func (f *keyFeed) next(timeout time.Duration) (string, time.Time, error) {
	select {
	case m, ok := <-f.msgs:
		if !ok {
			return "", time.Time{}, errors.New("listener closed")
		}
		return m.key, m.at, nil
	case <-time.After(timeout):
		return "", time.Time{}, errors.New("timeout")
	}
}

func (f *keyFeed) close() {
	f.stop()
	for range f.msgs {
	}
}

// lagLayout is what a lag run stores and how it reads a deadline back
// out of what the listener hears: keys here, hash fields in fieldlag.go.
type lagLayout struct {
	// volatile loads the entries with a one-hour TTL.
	volatile func(rc *rconn) error
	// deadlines loads lagKeys entries named after prefix with deadlines
	// spread over lagSpread, and returns the first deadline.
	deadlines func(rc *rconn, prefix string) (time.Time, error)
	// deadlineOf reads the deadline out of a name the listener yields.
	deadlineOf func(name string) (time.Time, bool)
	// prefixes name the entries of the run with a listener, then of the
	// one without.
	prefixes [2]string
}

// keyLayout is the key-expiry benchmark's: lagVolatile string keys with a
// one-hour TTL, lagKeys keys with a deadline each (loadDeadlines).
var keyLayout = lagLayout{
	volatile: func(rc *rconn) error {
		return rc.load(lagVolatile, func(b []byte, i int) []byte {
			b = appendArray(b, 5)
			b = appendBulk(b, "SET")
			b = appendBulkNum(b, "vol:", i)
			b = appendBulk(b, "v")
			b = appendBulk(b, "EX")
			return appendBulk(b, "3600")
		})
	},
	deadlines:  loadDeadlines,
	deadlineOf: deadlineOf,
	prefixes:   [2]string{"lag", "off"},
}

// lagRun measures s in layout lay: loads the volatile entries, PING idle,
// then the entries with deadlines heard through listen, then again with
// no listener.
func lagRun(s *server, listen func() (*keyFeed, error), lay lagLayout) (lagResult, error) {
	var res lagResult
	rc, err := dialServer(s)
	if err != nil {
		return res, err
	}
	defer rc.Close()
	if err := lay.volatile(rc); err != nil {
		return res, err
	}
	ping, err := dialServer(s)
	if err != nil {
		return res, err
	}
	defer ping.Close()
	if res.pingIdle, err = pingP99(ping, pingSamples, time.Time{}); err != nil {
		return res, err
	}

	l, err := listen()
	if err != nil {
		return res, err
	}
	// Give the listener time to connect before the first deadline.
	time.Sleep(200 * time.Millisecond)
	first, err := lay.deadlines(rc, lay.prefixes[0])
	if err != nil {
		l.close()
		return res, err
	}
	var wg sync.WaitGroup
	var pingErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		res.pingListener, pingErr = pingWindow(ping, first)
	}()
	// Keys not received lagWait after the last deadline count as lagging
	// forever (redis's sampling expiry can take hours for them).
	got := receiveLags(l, lagKeys, first.Add(lagSpread+lagWait), lay.deadlineOf)
	res.received, res.p50, res.p99, res.max = got.received, got.p50, got.p99, got.max
	l.close()
	wg.Wait()
	if pingErr != nil {
		return res, pingErr
	}

	// Again with no listener connected.
	if first, err = lay.deadlines(rc, lay.prefixes[1]); err != nil {
		return res, err
	}
	res.pingOff, err = pingWindow(ping, first)
	return res, err
}

// loadDeadlines stores lagKeys keys <prefix>:<deadline ms>:<i>, their
// deadlines spread over lagSpread from lagLead after now, and returns
// the first deadline.
func loadDeadlines(rc *rconn, prefix string) (time.Time, error) {
	return loadSpread(rc, prefix, lagKeys, lagSpread, lagLead)
}

// loadSpread stores n keys <prefix>:<deadline ms>:<i>, their deadlines
// spread over spread (0: all due at once) from lead after now, and
// returns the first deadline.
func loadSpread(rc *rconn, prefix string, n int, spread, lead time.Duration) (time.Time, error) {
	first := time.Now().Add(lead).Truncate(time.Millisecond)
	base := first.UnixMilli()
	span := spread.Milliseconds()
	err := rc.load(n, func(b []byte, i int) []byte {
		at := strconv.FormatInt(base+span*int64(i)/int64(n), 10)
		b = appendArray(b, 5)
		b = appendBulk(b, "SET")
		b = appendBulk(b, prefix+":"+at+":"+strconv.Itoa(i))
		b = appendBulk(b, "v")
		b = appendBulk(b, "PXAT")
		return appendBulk(b, at)
	})
	if time.Now().After(first) {
		return first, errors.New("loading the keys took longer than the lead before the first deadline")
	}
	return first, err
}

// deadlineOf reads the deadline out of a key made by loadDeadlines.
func deadlineOf(key string) (time.Time, bool) {
	parts := strings.Split(key, ":")
	if len(parts) != 3 {
		return time.Time{}, false
	}
	ms, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.UnixMilli(ms), true
}

// pingWindow waits for first, then measures PING over the expiry window.
func pingWindow(rc *rconn, first time.Time) (time.Duration, error) {
	time.Sleep(time.Until(first))
	return pingP99(rc, 0, first.Add(lagSpread))
}

// pingP99 sends PINGs one at a time, n of them or until the time end,
// and returns the 99th percentile of their round trips.
func pingP99(rc *rconn, n int, end time.Time) (time.Duration, error) {
	var rtts []time.Duration
	for i := 0; (n > 0 && i < n) || (n == 0 && time.Now().Before(end)); i++ {
		start := time.Now()
		if _, err := rc.do("PING"); err != nil {
			return 0, err
		}
		rtts = append(rtts, time.Since(start))
	}
	if len(rtts) == 0 {
		return 0, nil
	}
	slices.Sort(rtts)
	return rtts[min(len(rtts)-1, len(rtts)*99/100)], nil
}

// dialZMQListener is zredis's side: a PULL socket on the expiry
// endpoint.
func dialZMQListener(endpoint string) *keyFeed {
	sock := pull.Dial([]string{endpoint}, pull.Options{HWM: 10000})
	f := &keyFeed{msgs: make(chan keyAt, lagKeys), stop: func() { sock.Close() }}
	go func() {
		defer close(f.msgs)
		for {
			frames, err := sock.Recv()
			if err != nil {
				return
			}
			at := time.Now()
			if d, err := zmqpub.Decode(frames); err == nil {
				deliver(f.msgs, keyAt{string(d.Key), at})
			}
		}
	}()
	return f
}

// deliver hands m on; the channel holds every key of a run, so it never
// fills unless a server sends more than asked, which is dropped.
func deliver(msgs chan keyAt, m keyAt) {
	select {
	case msgs <- m:
	default:
	}
}

// dialNotificationListener is redis's side: a subscriber of
// __keyevent@0__:expired.
func dialNotificationListener(s *server) (*keyFeed, error) {
	return dialEventListener(s, "expired")
}

// dialEventListener subscribes to the keyspace event event in database 0
// (__keyevent@0__:<event>) and yields the key of each.
func dialEventListener(s *server, event string) (*keyFeed, error) {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.port), 5*time.Second)
	if err != nil {
		return nil, err
	}
	r := bufio.NewReaderSize(c, 1<<16)
	if _, err := c.Write(appendCmd(nil, "SUBSCRIBE", "__keyevent@0__:"+event)); err != nil {
		c.Close()
		return nil, err
	}
	if _, err := readPush(r); err != nil { // the subscribe confirmation
		c.Close()
		return nil, err
	}
	f := &keyFeed{msgs: make(chan keyAt, lagKeys), stop: func() { c.Close() }}
	go func() {
		defer close(f.msgs)
		for {
			items, err := readPush(r)
			if err != nil {
				return
			}
			if len(items) == 3 && items[0] == "message" {
				deliver(f.msgs, keyAt{items[2], time.Now()})
			}
		}
	}()
	return f, nil
}

// readPush reads one array of bulk strings or integers.
func readPush(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 4 || line[0] != '*' {
		return nil, fmt.Errorf("unexpected %q", line)
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil {
		return nil, err
	}
	items := make([]string, n)
	for i := range items {
		h, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		switch h[0] {
		case ':':
			items[i] = strings.TrimSpace(h[1:])
		case '$':
			size, err := strconv.Atoi(strings.TrimSpace(h[1:]))
			if err != nil || size < 0 || size > 1<<20 {
				return nil, fmt.Errorf("bad bulk %q", h)
			}
			b := make([]byte, size+2)
			if _, err := io.ReadFull(r, b); err != nil {
				return nil, err
			}
			items[i] = string(b[:size])
		default:
			return nil, fmt.Errorf("unexpected %q", h)
		}
	}
	return items, nil
}
