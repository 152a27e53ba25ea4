package tests

// Faults under stock Sentinel 7.0, each run on a zredis group and, for
// comparison, on a redis-server group:
//
//   - split brain: a master cut off from the sentinels and its replica
//     by a TCP proxy on loopback, but not from its writing client and
//     its 0MQ listener, while Sentinel promotes the replica; then the
//     partition heals and Sentinel turns the old master into a replica.
//     With and without min-replicas-to-write.
//   - the leader sentinel killed (kill -9) in the middle of the failover
//     it leads;
//   - the killed master restarted while the failover is under way.
//
// The counts and times are logged (README, "The expiry stream across an
// unplanned failover"); the tests assert only what holds in every run.

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/internal/testsupport"
)

// ---- a TCP proxy that can be partitioned -----------------------------------

// tcpProxy forwards connections from its loopback port to a target.
// partition cuts it: new connections are refused (the listener is
// closed) and the open ones are either closed (cut) or frozen (nothing
// passes either way, as when packets are dropped); heal listens again on
// the same port and lets frozen connections go on.
type tcpProxy struct {
	Port int
	Addr string

	mu     sync.Mutex
	target string
	ln     net.Listener
	gate   chan struct{} // closed while the link is up
	conns  map[net.Conn]struct{}
	stop   chan struct{}
	closed bool
}

func startProxy(t *testing.T) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &tcpProxy{Port: ln.Addr().(*net.TCPAddr).Port, Addr: ln.Addr().String(), ln: ln,
		gate: make(chan struct{}), conns: map[net.Conn]struct{}{}, stop: make(chan struct{})}
	close(p.gate)
	go p.accept(ln)
	t.Cleanup(p.close)
	return p
}

// setTarget sets the address connections are forwarded to.
func (p *tcpProxy) setTarget(addr string) {
	p.mu.Lock()
	p.target = addr
	p.mu.Unlock()
}

func (p *tcpProxy) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go p.serve(c)
	}
}

func (p *tcpProxy) serve(c net.Conn) {
	p.mu.Lock()
	target := p.target
	p.mu.Unlock()
	s, err := net.DialTimeout("tcp", target, 2*time.Second)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.Close()
		s.Close()
		return
	}
	p.conns[c], p.conns[s] = struct{}{}, struct{}{}
	p.mu.Unlock()
	go p.pump(c, s)
	go p.pump(s, c)
}

// pass waits while the proxy is partitioned; false when it is closed.
func (p *tcpProxy) pass() bool {
	p.mu.Lock()
	gate := p.gate
	p.mu.Unlock()
	select {
	case <-gate:
		return true
	case <-p.stop:
		return false
	}
}

func (p *tcpProxy) pump(src, dst net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.pass() {
				break
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	p.pass() // a close seen while frozen passes when the link heals
	src.Close()
	dst.Close()
	p.mu.Lock()
	delete(p.conns, src)
	delete(p.conns, dst)
	p.mu.Unlock()
}

// partition refuses new connections and closes (freeze false) or
// freezes (freeze true) the open ones.
func (p *tcpProxy) partition(freeze bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gate = make(chan struct{})
	p.ln.Close()
	if !freeze {
		for c := range p.conns {
			c.Close()
		}
	}
}

// heal listens again on the same port and lets frozen connections go on.
func (p *tcpProxy) heal(t *testing.T) {
	t.Helper()
	var ln net.Listener
	var err error
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if ln, err = net.Listen("tcp", p.Addr); err == nil || time.Now().After(deadline) {
			break
		}
	}
	require.NoError(t, err, "the proxy listens again on its port")
	p.mu.Lock()
	p.ln = ln
	close(p.gate)
	p.mu.Unlock()
	go p.accept(ln)
}

func (p *tcpProxy) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	close(p.stop)
	p.ln.Close()
	for c := range p.conns {
		c.Close()
	}
}

// proxyNode stands for the master as the sentinels know it: the proxy's
// address (for waitDiscovered and waitSwitch, which read only Addr and
// Port).
func proxyNode(p *tcpProxy) *groupNode {
	return &groupNode{Proc: &testsupport.Proc{Name: "proxy", Port: p.Port, Addr: p.Addr}}
}

// ---- Sentinel events -------------------------------------------------------

// sentinelEvent is one message a sentinel published on its own pub/sub
// (+sdown, +elected-leader, +switch-master...).
type sentinelEvent struct {
	from    int // index of the sentinel
	channel string
	payload string
	at      time.Time
}

// eventLog collects the events of a set of sentinels.
type eventLog struct {
	mu  sync.Mutex
	all []sentinelEvent
	ch  chan sentinelEvent
}

// watchSentinels subscribes to every event of each sentinel (PSUBSCRIBE
// *) and returns once the subscriptions are confirmed.
func watchSentinels(t *testing.T, ss []*sentinelProc) *eventLog {
	t.Helper()
	l := &eventLog{ch: make(chan sentinelEvent, 1<<14)}
	for i, s := range ss {
		c := redis.NewClient(&redis.Options{Addr: s.Addr, Protocol: 2, DisableIdentity: true})
		ps := c.PSubscribe(context.Background(), "*")
		_, err := ps.Receive(context.Background())
		require.NoError(t, err)
		msgs := ps.Channel()
		t.Cleanup(func() { ps.Close(); c.Close() })
		go func() {
			for m := range msgs {
				if m.Channel == "__sentinel__:hello" {
					continue
				}
				e := sentinelEvent{from: i, channel: m.Channel, payload: m.Payload, at: time.Now()}
				l.mu.Lock()
				l.all = append(l.all, e)
				l.mu.Unlock()
				select {
				case l.ch <- e:
				default:
				}
			}
		}()
	}
	return l
}

// wait returns the first event to come for which match holds, failing
// the test after timeout.
func (l *eventLog) wait(t *testing.T, timeout time.Duration, what string, match func(sentinelEvent) bool) sentinelEvent {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case e := <-l.ch:
			if match(e) {
				return e
			}
		case <-deadline:
			t.Fatalf("sentinel event %s: none in %v", what, timeout)
		}
	}
}

// events returns what was collected so far.
func (l *eventLog) events() []sentinelEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]sentinelEvent(nil), l.all...)
}

// summary is the events since start, one line each, relative times.
func (l *eventLog) summary(start time.Time, skip func(sentinelEvent) bool) string {
	var b strings.Builder
	for _, e := range l.events() {
		if e.at.Before(start) || (skip != nil && skip(e)) {
			continue
		}
		fmt.Fprintf(&b, "  %7.3fs s%d %s %s\n", e.at.Sub(start).Seconds(), e.from, e.channel, e.payload)
	}
	return b.String()
}

// instanceAddr is "ip:port" of the instance an event names ("slave
// 127.0.0.1:6380 127.0.0.1 6380 @ mymaster ..." or "master mymaster
// 127.0.0.1 6379").
func (e sentinelEvent) instanceAddr() string {
	f := strings.Fields(e.payload)
	switch {
	case len(f) >= 4 && f[0] == "master":
		return f[2] + ":" + f[3]
	case len(f) >= 4:
		return f[2] + ":" + f[3]
	}
	return ""
}

// ---- a writing client that records every reply -----------------------------

// writeOp is one command a writer sent and what came back.
type writeOp struct {
	key   string
	ttl   bool      // SETEX key 1 (else SET key)
	sent  time.Time // just before it was written to the socket
	reply string    // the raw reply, or "conn: <error>"
}

// recordingWriter sends, every 10 ms, SET <prefix>:<i> or (every other
// command, when setex) SETEX k:<base+i> 1, on one connection, redialled
// when the server closes it, until stop; it records every reply.
type recordingWriter struct {
	mu   sync.Mutex
	ops  []writeOp
	stop chan struct{}
	done chan struct{}
}

func startWriter(addr, prefix string, setex bool, base int) *recordingWriter {
	w := &recordingWriter{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		var nc net.Conn
		var rd *bufio.Reader
		for i := 0; ; i++ {
			select {
			case <-w.stop:
				if nc != nil {
					nc.Close()
				}
				return
			case <-time.After(10 * time.Millisecond):
			}
			op := writeOp{key: prefix + ":" + strconv.Itoa(i)}
			cmd := Encode("SET", op.key, "v"+strconv.Itoa(i))
			if setex && i%2 == 1 {
				op.key, op.ttl = "k:"+strconv.Itoa(base+i), true
				cmd = Encode("SETEX", op.key, "1", "v"+strconv.Itoa(i))
			}
			if nc == nil {
				c, err := net.DialTimeout("tcp", addr, time.Second)
				if err != nil {
					continue
				}
				nc, rd = c, bufio.NewReader(c)
			}
			op.sent = time.Now()
			nc.SetDeadline(time.Now().Add(5 * time.Second))
			var b strings.Builder
			_, err := nc.Write(cmd)
			if err == nil {
				line, rerr := rd.ReadString('\n')
				b.WriteString(line)
				err = rerr
			}
			if err != nil {
				op.reply = "conn: " + err.Error()
				nc.Close()
				nc = nil
			} else {
				op.reply = b.String()
			}
			w.mu.Lock()
			w.ops = append(w.ops, op)
			w.mu.Unlock()
		}
	}()
	return w
}

// finish stops the writer and returns what it recorded.
func (w *recordingWriter) finish() []writeOp {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
	return w.ops
}

// window sums up the replies to the commands sent at or after from:
// how many were acknowledged (+OK), the last one acknowledged, the
// first refusal with prefix refusal, and the replies counted by kind.
func window(ops []writeOp, from time.Time, refusal string) (acked int, lastAck, firstRefusal time.Time, kinds map[string]int) {
	kinds = map[string]int{}
	for _, op := range ops {
		if op.sent.Before(from) {
			continue
		}
		kind := strings.TrimSpace(op.reply)
		if k, _, ok := strings.Cut(kind, " "); ok {
			kind = k
		}
		kinds[kind]++
		switch {
		case op.reply == "+OK\r\n":
			acked++
			lastAck = op.sent
		case strings.HasPrefix(op.reply, refusal) && firstRefusal.IsZero():
			firstRefusal = op.sent
		}
	}
	return
}

// present returns which of keys exist on the server at addr.
func present(t *testing.T, addr string, keys []string) map[string]bool {
	t.Helper()
	c := Dial(t, addr)
	out := map[string]bool{}
	for _, k := range keys {
		c.Send(Encode("EXISTS", k))
	}
	for _, k := range keys {
		out[k] = c.Read() == ":1\r\n"
	}
	return out
}

// collectExpiry reads the listeners until they have been quiet for
// 300 ms and counts the messages each received per key index.
func collectExpiry(t *testing.T, ls ...*pyListener) []map[int]int {
	t.Helper()
	out := make([]map[int]int, len(ls))
	for i := range out {
		out[i] = map[int]int{}
	}
	for {
		got := 0
		for i, l := range ls {
			for _, d := range l.quiet(300 * time.Millisecond) {
				out[i][keyIndex(t, d)]++
				got++
			}
		}
		if got == 0 {
			return out
		}
	}
}

// since is d as seconds after t0, for the logs.
func since(t0, t1 time.Time) string {
	if t1.IsZero() {
		return "never"
	}
	return fmt.Sprintf("%.2fs", t1.Sub(t0).Seconds())
}

// ---- split brain -------------------------------------------------------------

// sbMaxLag is min-replicas-max-lag in the runs with min-replicas-to-write.
const sbMaxLag = 3

// TestSentinelSplitBrain partitions a master from the sentinels and its
// replica (both reach it only through a proxy, which freezes: nothing
// passes, new connections are refused) while a client keeps writing to
// it directly and a 0MQ listener stays connected to it; Sentinel
// promotes the replica; the proxy heals and Sentinel converts the old
// master into a replica of the new one. Logged: what the old master
// acknowledged after the cut and lost, how long it accepted writes, the
// expiry messages sent by both masters and by none. With
// min-replicas-to-write 1 (min-replicas-max-lag 3) the old master
// refuses writes with -NOREPLICAS once its replica's last ACK is too
// old. zredis and redis-server masters, the same way.
func TestSentinelSplitBrain(t *testing.T) {
	t.Parallel()
	if RedisServerPath() == "" {
		t.Skip("redis-server is not installed: Sentinel tests skipped (make test installs it)")
	}
	for _, kind := range []string{"zredis", "redis"} {
		for _, minReplicas := range []bool{false, true} {
			name := kind + " master"
			if minReplicas {
				name += ", min-replicas-to-write 1"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				splitBrain(t, kind, minReplicas)
			})
		}
	}
}

func splitBrain(t *testing.T, kind string, minReplicas bool) {
	zmq := kind == "zredis"
	proxy := startProxy(t)
	// The old master announces the proxy's port once a replica, so that
	// the sentinels know it under one address.
	mlines := []string{"replica-announce-port " + strconv.Itoa(proxy.Port)}
	rlines := []string{"replicaof 127.0.0.1 " + strconv.Itoa(proxy.Port)}
	var eps [2]string
	if zmq {
		requirePythonZMQ(t)
		eps = [2]string{zmqEndpoint(t), zmqEndpoint(t)}
		mlines = append(mlines, "expiry-zmq-endpoints "+eps[0])
		rlines = append(rlines, "expiry-zmq-endpoints "+eps[1])
	}
	if minReplicas {
		mlines = append(mlines, "min-replicas-to-write 1", fmt.Sprintf("min-replicas-max-lag %d", sbMaxLag))
	}
	m := startGroupNode(t, kind, mlines...)
	proxy.setTarget(m.Addr)
	r := startGroupNode(t, kind, rlines...)
	var lm, lr *pyListener
	if zmq {
		lm = startListener(t, []string{eps[0]}, "--idle", "120")
		lr = startListener(t, []string{eps[1]}, "--idle", "120")
		waitInfo(t, Dial(t, m.Addr), "expiry_zmq_listeners", "1", 10*time.Second)
		waitInfo(t, Dial(t, r.Addr), "expiry_zmq_listeners", "1", 10*time.Second)
	}
	waitLinkUp(t, r.Proc)
	waitConverged(t, m.Proc, r.Proc)
	via := proxyNode(proxy)
	ss := startSentinelsOn(t, proxy.Port, 10000)
	waitDiscovered(t, ss, via, r)
	ev := watchSentinels(t, ss)

	// Keys that exist before the partition, due every 50 ms from 1 s
	// after now (about when the cut comes) to past the conversion.
	const npre = 340
	base := time.Now().Add(time.Second).UnixMilli()
	due := func(i int) time.Time { return time.UnixMilli(base + int64(i)*50) }
	if zmq {
		mc := Dial(t, m.Addr)
		for i := range npre {
			mc.Send(Encode("SET", "k:"+strconv.Itoa(i), "v", "PXAT", strconv.FormatInt(due(i).UnixMilli(), 10)))
		}
		for range npre {
			require.Equal(t, "+OK\r\n", mc.Read())
		}
	}
	w := startWriter(m.Addr, "sb", zmq, 100000)
	time.Sleep(300 * time.Millisecond)
	waitConverged(t, m.Proc, r.Proc)

	proxy.partition(true)
	cut := time.Now()
	addr, _, named := waitSwitch(t, ss, via, cut)
	require.Equal(t, r.Addr, addr, "the replica is promoted")
	proxy.heal(t)
	healed := time.Now()
	waitUntil(t, 30*time.Second, "the old master converted", func() bool {
		info := nodeReplInfo(m.Addr)
		return info["role"] == "slave" && info["master_port"] == strconv.Itoa(r.Port)
	})
	converted := time.Now()
	waitFollows(t, r, m)
	ops := w.finish()

	// Writes: what the old master acknowledged, and what of it the new
	// master has.
	refusal := "-READONLY"
	if minReplicas {
		refusal = "-NOREPLICAS"
	}
	acked, lastAck, firstRefusal, kinds := window(ops, cut, refusal)
	var setKeys []string
	for _, op := range ops {
		if !op.ttl && op.reply == "+OK\r\n" {
			setKeys = append(setKeys, op.key)
		}
	}
	on := present(t, r.Addr, setKeys)
	var before, lostBefore, during, lostDuring, afterHeal, lostAfterHeal int
	for _, op := range ops {
		if op.ttl || op.reply != "+OK\r\n" {
			continue
		}
		switch {
		case op.sent.Before(cut):
			before++
			if !on[op.key] {
				lostBefore++
			}
		case op.sent.Before(healed):
			during++
			if !on[op.key] {
				lostDuring++
			}
		default:
			afterHeal++
			if !on[op.key] {
				lostAfterHeal++
			}
		}
	}
	t.Logf("%s master, min-replicas-to-write %v: from the cut, all sentinels name the new master after %s, the proxy heals at %s, the old master is a replica at %s",
		kind, minReplicas, since(cut, cut.Add(named)), since(cut, healed), since(cut, converted))
	t.Logf("writes (SET, SETEX, one each 10 ms) sent from the cut on: %d acknowledged by the old master, the last sent at %s, first %s at %s; replies %v",
		acked, since(cut, lastAck), refusal, since(cut, firstRefusal), kinds)
	t.Logf("SETs acknowledged and lost (not on the new master): sent before the cut %d of %d, during the partition %d of %d, after the heal %d of %d",
		lostBefore, before, lostDuring, during, lostAfterHeal, afterHeal)
	assert.Equal(t, during, lostDuring, "no write acknowledged by the old master during the partition reaches the new master")
	assert.Equal(t, afterHeal, lostAfterHeal, "nor after the heal")
	if minReplicas {
		require.False(t, firstRefusal.IsZero(), "the old master refuses writes with -NOREPLICAS")
		assert.True(t, lastAck.Before(cut.Add((sbMaxLag+4)*time.Second)),
			"no write acknowledged later than min-replicas-max-lag (+4 s) after the cut: last at %s", since(cut, lastAck))
	} else {
		assert.Greater(t, afterHeal, 0, "without min-replicas the old master accepts writes until converted")
	}
	t.Logf("sentinel events:\n%s", ev.summary(cut, func(e sentinelEvent) bool {
		return e.from != 0 || strings.HasPrefix(e.channel, "+slave") || e.channel == "+sentinel" || e.channel == "+reboot"
	}))

	if !zmq {
		return
	}
	time.Sleep(time.Until(due(npre - 1).Add(500 * time.Millisecond)))
	counts := collectExpiry(t, lm, lr)
	fromM, fromR := counts[0], counts[1]
	type tally struct{ keys, both, oldOnly, newOnly, none int }
	var preCut, partition, afterHealT, afterConv tally
	for i := range npre {
		var tl *tally
		switch d := due(i); {
		case d.Before(cut):
			tl = &preCut
		case d.Before(healed):
			tl = &partition
		case d.Before(converted):
			tl = &afterHealT
		default:
			tl = &afterConv
		}
		tl.keys++
		switch {
		case fromM[i] > 0 && fromR[i] > 0:
			tl.both++
		case fromM[i] > 0:
			tl.oldOnly++
		case fromR[i] > 0:
			tl.newOnly++
		default:
			tl.none++
		}
		assert.LessOrEqual(t, fromM[i], 1, "k:%d: the old master sends a key once at most", i)
		if due(i).After(cut) {
			assert.Equal(t, 1, fromR[i], "k:%d, due after the cut: the new master sends it once", i)
		} else {
			assert.LessOrEqual(t, fromR[i], 1, "k:%d", i)
		}
		if due(i).After(converted.Add(5 * time.Millisecond)) {
			assert.Zero(t, fromM[i], "k:%d, due after the conversion: the old master, a replica, sends nothing", i)
		}
		assert.Positive(t, fromM[i]+fromR[i], "k:%d, a key of before the partition, has a message", i)
	}
	var setex, setexSent, setexLost, setexFromNew int
	for _, op := range ops {
		if !op.ttl || op.reply != "+OK\r\n" || op.sent.Before(cut) {
			continue
		}
		i, _ := strconv.Atoi(strings.TrimPrefix(op.key, "k:"))
		setex++
		switch {
		case fromM[i] > 0:
			setexSent++
		default:
			setexLost++
		}
		setexFromNew += fromR[i]
	}
	assert.Zero(t, setexFromNew, "keys written to the old master after the cut never reach the new master")
	t.Logf("expiry stream, keys of before the cut (one due every 50 ms), by deadline: before the cut %+v; during the partition %+v; between the heal and the conversion %+v; after the conversion %+v",
		preCut, partition, afterHealT, afterConv)
	t.Logf("expiry stream, SETEX 1 s keys the old master acknowledged after the cut: %d, sent by the old master %d, never sent %d",
		setex, setexSent, setexLost)
	compareDatasets(t, r.Proc, m.Proc)
}
