package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The stress part: four cases, each on a fresh server of every kind
// (zredis, redis-server and any other listed by stressTargets), that
// abuse the server the way a misbehaving or hostile client does. For
// each case and server it reports the server's peak RSS (VmRSS sampled
// every stressRSSEvery), its RSS once the case is over, the latency of
// one well-behaved client that sends PING every stressPingEvery and
// waits for +PONG (p99, max, and how many PINGs timed out after
// stressPingTimeout), and whether the server still answers PING after
// the case. The cases:
//
//   - abusive: stressAbuseConns connections for stressAbuseDur, each in
//     a loop sending one of abusePatterns (malformed or abusive RESP),
//     then draining what the server sends for up to abuseHold before
//     disconnecting and reconnecting;
//   - huge multibulk: one RPUSH of stressHugeArgs arguments of 10 bytes
//     (18 MB), written as fast as the socket takes it;
//   - non-reading subscriber: with client-output-buffer-limit "pubsub 0
//     0 0", a subscriber that never reads and a publisher sending 1 kB
//     messages pipelined for stressPubDur (at most stressPubMax
//     messages, so that a fast server does not take the machine's
//     memory); then the subscriber disconnects;
//   - idle connections: stressIdleConns connections that each send one
//     PING and stay open, then all close.
const (
	stressAbuseDur    = 15 * time.Second
	stressAbuseConns  = 20
	abuseHold         = 200 * time.Millisecond // per abusive connection, waiting for the server to close it
	abuseMinCycle     = 10 * time.Millisecond  // per abusive connection: at most 100 connections a second each
	stressHugeArgs    = 1 << 20
	stressPubDur      = 10 * time.Second
	stressPubBatch    = 100
	stressPubSize     = 1024
	stressPubMax      = 1000000         // messages: about 1 GB pending
	stressPubRest     = 2 * time.Second // publishing stopped, the subscriber still connected
	stressIdleConns   = 10000
	stressIdleHold    = time.Second // all connections open, before the RSS reading
	stressRSSEvery    = 20 * time.Millisecond
	stressPingEvery   = time.Millisecond
	stressPingTimeout = 5 * time.Second
	stressMaxClients  = "20000"
)

// stressTarget is one kind of server the stress part runs.
type stressTarget struct{ name, bin string }

// stressTargets are the servers every case runs on, zredis first (the
// ratios are zredis over each of the others): Valkey too with -valkey.
func stressTargets(o options) []stressTarget {
	ts := []stressTarget{{"zredis", o.zredisBin}, {"redis", o.redisBin}}
	if o.valkeyBin != "" {
		ts = append(ts, stressTarget{"valkey", o.valkeyBin})
	}
	return ts
}

// stressCol is a column of a case's own: a figure its run returns.
type stressCol struct {
	name  string
	ratio bool // whether the zredis/other ratio means something
}

// stressOut is what a case's run returns: one value per column (NaN
// where it was not measured) and notes (errors the case met: the server
// closing on the client, an error reply), which are reported, not fatal.
type stressOut struct {
	vals  []float64
	notes []string
}

type stressCase struct {
	name   string // in the summary
	title  string
	settle time.Duration // from the end of the run to the "RSS after" reading
	cols   []stressCol
	run    func(ctx context.Context, s *server, cs *connSet, m *stressMeter) stressOut
}

var stressCases = []stressCase{
	{
		name: "abusive clients",
		title: fmt.Sprintf("abusive clients: %d connections for %v, each looping over %d kinds of malformed or abusive RESP (huge counts, a 512 MB bulk, garbage, long inline lines, unterminated headers, unread pipelines), reconnecting after the server closes or %v",
			stressAbuseConns, stressAbuseDur, len(abusePatterns), abuseHold),
		settle: time.Second,
		cols:   []stressCol{{"conns", false}, {"srv closed", false}, {"MB sent", false}},
		run:    stressAbusive,
	},
	{
		name:   "huge multibulk",
		title:  fmt.Sprintf("huge multibulk: one RPUSH of %d arguments of 10 bytes, written as fast as the socket takes it; reply = s from the first byte, after write = s from the last", stressHugeArgs),
		settle: time.Second,
		cols:   []stressCol{{"write s", true}, {"reply s", true}, {"after write", true}},
		run:    stressHuge,
	},
	{
		name: "non-reading subscriber",
		title: fmt.Sprintf("non-reading subscriber: client-output-buffer-limit \"pubsub 0 0 0\", one subscriber that never reads, %d B messages published in pipelines of %d for %v (at most %d); PING while publishing; growth and B/msg = RSS growth when publishing stops, per message published; omem from CLIENT LIST; B/msg +2s = the same %v later, the subscriber still connected; RSS after = %v after the subscriber closed",
			stressPubSize, stressPubBatch, stressPubDur, stressPubMax, stressPubRest, 2*time.Second),
		settle: 2 * time.Second,
		cols:   []stressCol{{"published", false}, {"msg/s", true}, {"growth MB", true}, {"B/msg", true}, {"omem MB", true}, {"B/msg +2s", true}},
		run:    stressPubsub,
	},
	{
		name: "idle connections",
		title: fmt.Sprintf("idle connections: %d connections, each one PING, held open %v; then all closed; RSS after = 10 s after the close",
			stressIdleConns, stressIdleHold),
		cols: []stressCol{{"opened", false}, {"open s", true}, {"RSS open", true}, {"KB/conn", true}, {"RSS +3s", true}},
		run:  stressIdle,
	},
}

// stressResult is one case on one server.
type stressResult struct {
	server          string
	peak, after     int64 // bytes; 0 where not read
	pings           int
	p99, max        time.Duration
	timeouts, perrs int // PINGs that timed out, and that failed otherwise
	alive           bool
	out             stressOut
}

// stressBench runs every case on fresh servers, prints a table per case
// and adds PING's p99 and the peak RSS of each to the summary. A server
// that died during a case is reported in its table and, once every case
// has run, makes the part fail.
func stressBench(ctx context.Context, o options, w io.Writer) error {
	targets := stressTargets(o)
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < lim.Max {
		// Set explicitly, so the servers started from here inherit it
		// (Go's own raise at start-up is undone in child processes).
		lim.Cur = lim.Max
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	fmt.Fprintf(w, "\nstress: each case on a fresh server of each kind (--maxclients %s; open files limit %d, inherited by the servers)\n", stressMaxClients, lim.Cur)
	for _, t := range targets {
		fmt.Fprintf(w, "  %-7s %s (%s)\n", t.name, firstLine(t.bin, "--version"), t.bin)
	}
	fmt.Fprintf(w, "peak RSS: VmRSS sampled every %v; PING: one client, a PING every %v, %v timeout; MB = 2^20 bytes\n",
		stressRSSEvery, stressPingEvery, stressPingTimeout)
	var died []string
	for i, c := range stressCases {
		if o.stressCases != "" && !slices.Contains(strings.Split(o.stressCases, ","), strings.Fields(c.name)[0]) {
			continue
		}
		fmt.Fprintf(w, "\nstress %d/%d, %s\n", i+1, len(stressCases), c.title)
		var res []stressResult
		for _, t := range targets {
			r, err := stressRun(ctx, c, t)
			if err != nil {
				return fmt.Errorf("stress, %s, %s: %w", c.name, t.name, err)
			}
			if !r.alive {
				died = append(died, t.name+" in "+c.name)
			}
			res = append(res, r)
		}
		stressTable(w, c, res)
		for _, f := range stressFigures(c, res) {
			o.sum.add(f)
		}
	}
	fmt.Fprintln(w)
	if len(died) > 0 {
		return fmt.Errorf("stress: server did not survive: %s", strings.Join(died, ", "))
	}
	return nil
}

// stressRun runs case c on a fresh server of target t. It returns an
// error only when the server could not start or ctx was cancelled.
func stressRun(ctx context.Context, c stressCase, t stressTarget) (stressResult, error) {
	res := stressResult{server: t.name}
	s, err := startServer(ctx, t.name, t.bin, noSave("--maxclients", stressMaxClients)...)
	if err != nil {
		return res, err
	}
	defer s.stop()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cs := newConnSet()
	defer cs.closeAll()
	defer context.AfterFunc(cctx, cs.closeAll)()

	m := startMeter(cctx, s, cs)
	defer m.stop()
	res.out = c.run(cctx, s, cs, m)
	m.stopPing()
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if !sleepCtx(ctx, c.settle) {
		return res, ctx.Err()
	}
	res.after, _ = procStatus(s.cmd.Process.Pid, "VmRSS:")
	m.stop()
	res.peak = max(m.peak.Load(), res.after)
	res.pings = len(m.lat)
	res.p99, res.max = percentile(m.lat, 0.99), percentile(m.lat, 1)
	res.timeouts, res.perrs = m.timeouts, m.errs
	if len(res.out.vals) != len(c.cols) {
		panic(fmt.Sprintf("stress case %s returned %d values for %d columns", c.name, len(res.out.vals), len(c.cols)))
	}
	res.alive = serverAnswers(s)
	if !res.alive {
		// Its output is complete once it has exited.
		tail := "(still running, not answering)"
		if s.exited() {
			tail = lastLines(s.out.String(), 15)
		}
		res.out.notes = append(res.out.notes, "server did not answer PING after the case; its output ends:\n"+tail)
	}
	return res, nil
}

func stressTable(w io.Writer, c stressCase, res []stressResult) {
	head := []string{"server", "peak MB", "after MB", "p99 ms", "max ms", "pings", "timeouts", "errors", "alive"}
	for _, col := range c.cols {
		head = append(head, col.name)
	}
	rows := [][]string{head}
	mb := func(b int64) float64 {
		if b == 0 {
			return math.NaN()
		}
		return float64(b) / (1 << 20)
	}
	type numeric struct {
		vals  []float64
		ratio []bool
	}
	nums := make([]numeric, len(res))
	for i, r := range res {
		n := numeric{
			vals:  []float64{mb(r.peak), mb(r.after), ms(r.p99), ms(r.max), float64(r.pings), float64(r.timeouts), float64(r.perrs)},
			ratio: []bool{true, true, true, true, false, false, false},
		}
		alive := "yes"
		if !r.alive {
			alive = "NO"
		}
		row := []string{r.server}
		for _, v := range n.vals {
			row = append(row, num(v))
		}
		row = append(row, alive)
		for j, v := range r.out.vals {
			row = append(row, num(v))
			n.vals = append(n.vals, v)
			n.ratio = append(n.ratio, c.cols[j].ratio)
		}
		nums[i] = n
		rows = append(rows, row)
	}
	for i := 1; i < len(res); i++ {
		row := []string{res[0].server + "/" + res[i].server}
		for j, v := range nums[0].vals {
			cellText := "-"
			if nums[0].ratio[j] {
				if q := ratioOf(v, nums[i].vals[j]); !math.IsNaN(q) && !math.IsInf(q, 0) {
					cellText = strconv.FormatFloat(q, 'f', 2, 64)
				}
			}
			row = append(row, cellText)
			if j == 6 {
				row = append(row, "") // alive
			}
		}
		rows = append(rows, row)
	}
	width := make([]int, len(head))
	for _, row := range rows {
		for j, cellText := range row {
			width[j] = max(width[j], len(cellText))
		}
	}
	for _, row := range rows {
		var b strings.Builder
		for j, cellText := range row {
			if j == 0 {
				fmt.Fprintf(&b, "%-*s", width[j], cellText)
			} else {
				fmt.Fprintf(&b, "  %*s", width[j], cellText)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	for _, r := range res {
		for _, n := range r.out.notes {
			fmt.Fprintf(w, "  %s: %s\n", r.server, n)
		}
	}
}

// stressFigures are the summary's figures of one case: PING's p99 and
// the peak RSS, zredis against redis.
func stressFigures(c stressCase, res []stressResult) []figure {
	var z, r *stressResult
	for i := range res {
		switch res[i].server {
		case "zredis":
			z = &res[i]
		case "redis":
			r = &res[i]
		}
	}
	if z == nil || r == nil {
		return nil
	}
	mb := func(b int64) float64 { return float64(b) / (1 << 20) }
	zp, rp := ms(z.p99), ms(r.p99)
	zm, rm := mb(z.peak), mb(r.peak)
	return []figure{
		{section: "stress: PING p99", name: c.name, unit: "ms", z: zp, r: rp, ratio: ratioOf(zp, rp), better: lower},
		{section: "stress: peak RSS", name: c.name, unit: "MB", z: zm, r: rm, ratio: ratioOf(zm, rm), better: lower},
	}
}

// ---- measuring -------------------------------------------------------------

// stressMeter samples a server's RSS and its PING latency from a client
// of its own while a case runs.
type stressMeter struct {
	pid      int
	peak     atomic.Int64
	pingStop chan struct{}
	rssStop  chan struct{}
	pingDone chan struct{}
	rssDone  chan struct{}
	pingOnce sync.Once
	rssOnce  sync.Once
	// Written by the PING goroutine, read once it is done.
	lat            []time.Duration
	timeouts, errs int
}

func startMeter(ctx context.Context, s *server, cs *connSet) *stressMeter {
	m := &stressMeter{pid: s.cmd.Process.Pid, pingStop: make(chan struct{}), rssStop: make(chan struct{}),
		pingDone: make(chan struct{}), rssDone: make(chan struct{})}
	go m.sampleRSS()
	go m.ping(ctx, s.port, cs)
	return m
}

func (m *stressMeter) sampleRSS() {
	defer close(m.rssDone)
	t := time.NewTicker(stressRSSEvery)
	defer t.Stop()
	for {
		if v, err := procStatus(m.pid, "VmRSS:"); err == nil && v > m.peak.Load() {
			m.peak.Store(v)
		}
		select {
		case <-m.rssStop:
			return
		case <-t.C:
		}
	}
}

// ping sends PING and waits for +PONG, then sleeps stressPingEvery,
// until stopped. A PING that times out counts as one of stressPingTimeout
// and a timeout; any other failure (the server closing the connection,
// another reply) as an error; the client reconnects after either.
func (m *stressMeter) ping(ctx context.Context, port int, cs *connSet) {
	defer close(m.pingDone)
	var c net.Conn
	defer func() {
		if c != nil {
			cs.close(c)
		}
	}()
	buf := make([]byte, 7)
	for {
		select {
		case <-m.pingStop:
			return
		case <-ctx.Done():
			return
		default:
		}
		if c == nil {
			nc, err := cs.dial(ctx, port, time.Second)
			if err != nil {
				m.errs++
				sleepCtx(ctx, 10*time.Millisecond)
				continue
			}
			c = nc
		}
		start := time.Now()
		c.SetDeadline(start.Add(stressPingTimeout))
		err := pingOnce(c, buf)
		d := time.Since(start)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				m.timeouts++
				m.lat = append(m.lat, d)
			} else if ctx.Err() == nil {
				m.errs++
			}
			cs.close(c)
			c = nil
			continue
		}
		m.lat = append(m.lat, d)
		time.Sleep(stressPingEvery)
	}
}

// stopPing ends the PING client (waiting for a PING in flight).
func (m *stressMeter) stopPing() {
	m.pingOnce.Do(func() { close(m.pingStop) })
	<-m.pingDone
}

// stop ends both the PING client and the RSS sampling.
func (m *stressMeter) stop() {
	m.stopPing()
	m.rssOnce.Do(func() { close(m.rssStop) })
	<-m.rssDone
}

var pingCmd = []byte("PING\r\n")

// pingOnce sends PING on c and reads +PONG, into buf (7 bytes).
func pingOnce(c net.Conn, buf []byte) error {
	if _, err := c.Write(pingCmd); err != nil {
		return err
	}
	if _, err := io.ReadFull(c, buf[:7]); err != nil {
		return err
	}
	if string(buf[:7]) != "+PONG\r\n" {
		return fmt.Errorf("PING: got %q", buf[:7])
	}
	return nil
}

// serverAnswers reports whether s is running and answers PING on a new
// connection within stressPingTimeout.
func serverAnswers(s *server) bool {
	if s.exited() {
		return false
	}
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.port), stressPingTimeout)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(stressPingTimeout))
	return pingOnce(c, make([]byte, 7)) == nil
}

// percentile is the q-quantile of ds (nearest rank; q 1 is the max), 0
// when there are none.
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// sleepCtx sleeps d, reporting false if ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// connSet holds the connections of a case, so that all are closed at
// its end or when its context is cancelled (closing unblocks any read or
// write on them).
type connSet struct {
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

func newConnSet() *connSet { return &connSet{conns: map[net.Conn]struct{}{}} }

// dial connects to the server on port and adds the connection to the set.
func (cs *connSet) dial(ctx context.Context, port int, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	c, err := d.DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return nil, err
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.closed {
		c.Close()
		return nil, net.ErrClosed
	}
	cs.conns[c] = struct{}{}
	return c, nil
}

func (cs *connSet) close(c net.Conn) {
	cs.mu.Lock()
	delete(cs.conns, c)
	cs.mu.Unlock()
	c.Close()
}

func (cs *connSet) closeAll() {
	cs.mu.Lock()
	conns := cs.conns
	cs.conns = map[net.Conn]struct{}{}
	cs.closed = true
	cs.mu.Unlock()
	for c := range conns {
		c.Close()
	}
}

// dialRconn is a RESP client on a connection of the set.
func dialRconn(ctx context.Context, s *server, cs *connSet) (*rconn, error) {
	c, err := cs.dial(ctx, s.port, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &rconn{c: c, r: bufio.NewReaderSize(c, 1<<16)}, nil
}

// ---- case 1: abusive clients -----------------------------------------------

// abusePattern is what one abusive connection sends before it waits for
// the server to close it (up to abuseHold) and disconnects.
type abusePattern struct {
	name    string
	payload []byte
	noRead  bool // never reads what the server sends (its replies pile up)
}

var abusePatterns = []abusePattern{
	// A multibulk announcing a million arguments, three given.
	{name: "huge count", payload: []byte("*1048576\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n")},
	// A bulk announced at 512 MB (proto-max-bulk-len itself), 256 kB given.
	{name: "512 MB bulk", payload: append([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$536870912\r\n"), bytes.Repeat([]byte("x"), 256<<10)...)},
	// The same header alone, as an inline line, then bytes.
	{name: "bare bulk header", payload: append([]byte("$536870912\r\n"), bytes.Repeat([]byte("y"), 16<<10)...)},
	// Bytes that are no command: high bytes with a line end now and then.
	{name: "garbage", payload: garbage(16<<10, 1)},
	// A multibulk count that is no number.
	{name: "bad count", payload: append([]byte("*12ab\r\n"), garbage(1<<10, 2)...)},
	// An inline line of 60 kB with no line end (under the 64 kB limit:
	// the server keeps it and waits).
	{name: "60 kB inline", payload: bytes.Repeat([]byte("A"), 60<<10)},
	// An inline line over the limit.
	{name: "100 kB inline", payload: bytes.Repeat([]byte("B"), 100<<10)},
	// Arrays nested in a request, which RESP2 requests cannot hold.
	{name: "nested arrays", payload: bytes.Repeat([]byte("*2\r\n"), 4096)},
	// A multibulk count line that never ends.
	{name: "unterminated count", payload: append([]byte("*"), bytes.Repeat([]byte("9"), 70<<10)...)},
	// A bulk length line that never ends.
	{name: "unterminated bulk length", payload: append([]byte("*2\r\n$"), bytes.Repeat([]byte("7"), 70<<10)...)},
	// Lengths out of range.
	{name: "bad lengths", payload: []byte("*2\r\n$3\r\nGET\r\n$99999999999999999999\r\n")},
	{name: "negative bulk", payload: []byte("*2\r\n$3\r\nGET\r\n$-7\r\nabc\r\n")},
	// A command cut short, then silence.
	{name: "partial command", payload: []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nab")},
	// 256 kB of pipelined PINGs whose replies are never read.
	{name: "unread pipeline", payload: bytes.Repeat([]byte("PING\r\n"), (256<<10)/6), noRead: true},
}

// garbage is n bytes with no ASCII letters (so no line can spell a
// command): bytes from 0x80 up, a line end about every 200 bytes.
func garbage(n int, seed int64) []byte {
	rng := rand.New(rand.NewSource(seed))
	b := make([]byte, n)
	for i := range b {
		if rng.Intn(200) == 0 {
			b[i] = '\n'
		} else {
			b[i] = byte(0x80 + rng.Intn(0x80))
		}
	}
	return b
}

func stressAbusive(ctx context.Context, s *server, cs *connSet, _ *stressMeter) stressOut {
	deadline := time.Now().Add(stressAbuseDur)
	var conns, closedBySrv, sent, dialErrs atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < stressAbuseConns; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			buf := make([]byte, 64<<10)
			for k := i; time.Now().Before(deadline) && ctx.Err() == nil; k++ {
				start := time.Now()
				p := abusePatterns[k%len(abusePatterns)]
				c, err := cs.dial(ctx, s.port, time.Second)
				if err != nil {
					dialErrs.Add(1)
					sleepCtx(ctx, abuseMinCycle)
					continue
				}
				conns.Add(1)
				c.SetWriteDeadline(time.Now().Add(time.Second))
				n, _ := c.Write(p.payload)
				sent.Add(int64(n))
				if p.noRead {
					sleepCtx(ctx, abuseHold)
				} else {
					c.SetReadDeadline(time.Now().Add(abuseHold))
					for {
						if _, err := c.Read(buf); err != nil {
							var ne net.Error
							if !(errors.As(err, &ne) && ne.Timeout()) {
								closedBySrv.Add(1)
							}
							break
						}
					}
				}
				cs.close(c)
				sleepCtx(ctx, abuseMinCycle-time.Since(start))
			}
		}(i)
	}
	wg.Wait()
	out := stressOut{vals: []float64{float64(conns.Load()), float64(closedBySrv.Load()), float64(sent.Load()) / (1 << 20)}}
	if n := dialErrs.Load(); n > 0 {
		out.notes = append(out.notes, fmt.Sprintf("%d connection attempts failed", n))
	}
	return out
}

// ---- case 2: a huge multibulk ----------------------------------------------

func stressHuge(ctx context.Context, s *server, cs *connSet, _ *stressMeter) stressOut {
	nan := math.NaN()
	out := stressOut{vals: []float64{nan, nan, nan}}
	c, err := cs.dial(ctx, s.port, 5*time.Second)
	if err != nil {
		out.notes = append(out.notes, err.Error())
		return out
	}
	defer cs.close(c)
	c.SetDeadline(time.Now().Add(replyTimeout))
	bw := bufio.NewWriterSize(c, 256<<10)
	start := time.Now()
	b := appendArray(nil, stressHugeArgs+2)
	b = appendBulk(b, "RPUSH")
	b = appendBulk(b, "hugelist")
	for i := 0; i < stressHugeArgs && err == nil; i++ {
		b = appendBulkNum(b, "v", 100000000+i) // 10 bytes
		if len(b) >= 32<<10 {
			_, err = bw.Write(b)
			b = b[:0]
		}
	}
	if err == nil {
		if _, err = bw.Write(b); err == nil {
			err = bw.Flush()
		}
	}
	wrote := time.Now()
	out.vals[0] = wrote.Sub(start).Seconds()
	if err != nil {
		out.notes = append(out.notes, fmt.Sprintf("writing the request: %v", err))
	}
	// Read the reply even after a failed write: the server may have
	// answered with an error before closing.
	line, rerr := bufio.NewReader(c).ReadString('\n')
	done := time.Now()
	want := ":" + strconv.Itoa(stressHugeArgs) + "\r\n"
	switch {
	case rerr != nil:
		out.notes = append(out.notes, fmt.Sprintf("reading the reply: %v", rerr))
	case line != want:
		out.notes = append(out.notes, fmt.Sprintf("reply %q, want %q", strings.TrimSpace(line), strings.TrimSpace(want)))
	default:
		out.vals[1] = done.Sub(start).Seconds()
		out.vals[2] = done.Sub(wrote).Seconds()
	}
	return out
}

// ---- case 3: a subscriber that does not read -------------------------------

var omemRE = regexp.MustCompile(`\bomem=(\d+)`)

// sumOmem adds up the omem= fields of a CLIENT LIST reply; false when
// there are none.
func sumOmem(list string) (int64, bool) {
	var sum int64
	found := omemRE.FindAllStringSubmatch(list, -1)
	for _, m := range found {
		v, _ := strconv.ParseInt(m[1], 10, 64)
		sum += v
	}
	return sum, len(found) > 0
}

func stressPubsub(ctx context.Context, s *server, cs *connSet, m *stressMeter) stressOut {
	nan := math.NaN()
	out := stressOut{vals: []float64{nan, nan, nan, nan, nan, nan}}
	fail := func(what string, err error) stressOut {
		out.notes = append(out.notes, fmt.Sprintf("%s: %v", what, err))
		return out
	}
	admin, err := dialRconn(ctx, s, cs)
	if err != nil {
		return fail("connecting", err)
	}
	if _, err := admin.do("CONFIG", "SET", "client-output-buffer-limit", "pubsub 0 0 0"); err != nil {
		return fail("CONFIG SET client-output-buffer-limit", err)
	}
	sub, err := dialRconn(ctx, s, cs)
	if err != nil {
		return fail("connecting the subscriber", err)
	}
	if _, err := sub.do("SUBSCRIBE", "stress"); err != nil {
		return fail("SUBSCRIBE", err)
	}
	pub, err := dialRconn(ctx, s, cs)
	if err != nil {
		return fail("connecting the publisher", err)
	}
	msg := strings.Repeat("m", stressPubSize)
	var batch []byte
	for i := 0; i < stressPubBatch; i++ {
		batch = appendCmd(batch, "PUBLISH", "stress", msg)
	}
	rss0, _ := procStatus(s.cmd.Process.Pid, "VmRSS:")
	start := time.Now()
	deadline := start.Add(stressPubDur)
	published, unheard := 0, 0
	for time.Now().Before(deadline) && published < stressPubMax && ctx.Err() == nil {
		pub.buf = append(pub.buf[:0], batch...)
		if err = pub.flush(); err != nil {
			break
		}
		for i := 0; i < stressPubBatch && err == nil; i++ {
			var r string
			if r, err = pub.readReply(); err == nil {
				published++
				if r != "1" {
					unheard++
				}
			}
		}
		if err != nil {
			break
		}
	}
	dur := time.Since(start)
	if err != nil {
		out.notes = append(out.notes, fmt.Sprintf("publishing: %v", err))
	}
	if unheard > 0 {
		out.notes = append(out.notes, fmt.Sprintf("%d of %d PUBLISHes reached no subscriber (the subscriber was dropped)", unheard, published))
	}
	rss1, _ := procStatus(s.cmd.Process.Pid, "VmRSS:")
	m.stopPing() // PING's figures are those under the publisher
	out.vals[0] = float64(published)
	out.vals[1] = float64(published) / dur.Seconds()
	perMsg := func(rss int64) float64 {
		if rss0 == 0 || rss == 0 || published == 0 {
			return math.NaN()
		}
		return float64(rss-rss0) / float64(published)
	}
	if rss0 > 0 && rss1 > 0 {
		out.vals[2] = float64(rss1-rss0) / (1 << 20)
	}
	out.vals[3] = perMsg(rss1)
	if list, err := admin.do("CLIENT", "LIST", "TYPE", "pubsub"); err != nil {
		out.notes = append(out.notes, fmt.Sprintf("CLIENT LIST TYPE pubsub: %v", err))
	} else if omem, ok := sumOmem(list); ok {
		out.vals[4] = float64(omem) / (1 << 20)
	}
	// The messages are still pending: what they hold once the garbage of
	// publishing them has been collected.
	if sleepCtx(ctx, stressPubRest) {
		rss2, _ := procStatus(s.cmd.Process.Pid, "VmRSS:")
		out.vals[5] = perMsg(rss2)
	}
	cs.close(sub.c)
	return out
}

// ---- case 4: idle connections ----------------------------------------------

func stressIdle(ctx context.Context, s *server, cs *connSet, m *stressMeter) stressOut {
	nan := math.NaN()
	out := stressOut{vals: []float64{0, nan, nan, nan, nan}}
	pid := s.cmd.Process.Pid
	rss0, _ := procStatus(pid, "VmRSS:")
	conns := make([]net.Conn, 0, stressIdleConns)
	buf := make([]byte, 7)
	start := time.Now()
	for i := 0; i < stressIdleConns && ctx.Err() == nil; i++ {
		c, err := cs.dial(ctx, s.port, stressPingTimeout)
		if err == nil {
			c.SetDeadline(time.Now().Add(stressPingTimeout))
			if err = pingOnce(c, buf); err != nil {
				cs.close(c)
			}
		}
		if err != nil {
			out.notes = append(out.notes, fmt.Sprintf("connection %d: %v", i+1, err))
			break
		}
		conns = append(conns, c)
	}
	out.vals[0] = float64(len(conns))
	out.vals[1] = time.Since(start).Seconds()
	if !sleepCtx(ctx, stressIdleHold) {
		return out
	}
	rssOpen, err := procStatus(pid, "VmRSS:")
	if err == nil {
		out.vals[2] = float64(rssOpen) / (1 << 20)
		if len(conns) > 0 && rss0 > 0 {
			out.vals[3] = float64(rssOpen-rss0) / 1024 / float64(len(conns))
		}
	}
	for _, c := range conns {
		cs.close(c)
	}
	closed := time.Now()
	sleepCtx(ctx, 200*time.Millisecond)
	m.stopPing()
	if !sleepCtx(ctx, 3*time.Second-time.Since(closed)) {
		return out
	}
	if v, err := procStatus(pid, "VmRSS:"); err == nil {
		out.vals[4] = float64(v) / (1 << 20)
	}
	sleepCtx(ctx, 10*time.Second-time.Since(closed))
	return out
}
