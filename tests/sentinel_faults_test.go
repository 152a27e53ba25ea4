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
// The counts and times are logged (docs/replication.md, "The expiry
// stream across an unplanned failover"); the tests assert only what holds in every run.

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
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
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
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

// finish stops the writer and returns what it recorded (again when
// called again).
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

// collectExpiry reads the listeners until each has been quiet for a
// second (the last keys' messages may lag their deadlines on a busy
// machine) and counts the messages each received per key index (keys
// k:<index>; others are not counted).
func collectExpiry(t *testing.T, ls ...*pyListener) []map[int]int {
	t.Helper()
	out := make([]map[int]int, len(ls))
	for i := range out {
		out[i] = map[int]int{}
	}
	for {
		got := 0
		for i, l := range ls {
			for _, d := range l.quiet(time.Second) {
				got++
				if k, ok := strings.CutPrefix(string(d.Key), "k:"); ok {
					j, err := strconv.Atoi(k)
					require.NoError(t, err, "key %q", d.Key)
					out[i][j]++
				}
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
	RequireRedis(t)
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
		waitInfo(t, Dial(t, m.Addr), "expiry_zmq_listeners", "1", 30*time.Second)
		waitInfo(t, Dial(t, r.Addr), "expiry_zmq_listeners", "1", 30*time.Second)
	}
	waitLinkUp(t, r.Proc)
	waitConverged(t, m.Proc, r.Proc)
	via := proxyNode(proxy)
	ss := startSentinelsOn(t, proxy.Port, 10000)
	waitDiscovered(t, ss, via, r)
	ev := watchSentinels(t, ss)

	// Keys that exist before the partition, due every 50 ms from 1 s
	// after now (about when the cut comes) to past the conversion.
	const npre = 320
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
	t.Cleanup(func() { w.finish() })
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

// ---- a sentinel that disappears mid-failover ---------------------------------

// leaderFailoverTimeout is the failover-timeout of the leader tests: the
// two sentinels left may start a failover of their own 2 × this after
// they voted for the dead leader.
const leaderFailoverTimeout = 4000

// TestSentinelLeaderKilledMidFailover kills (kill -9) the zredis master
// of a three-node group, then the sentinel elected to lead the
// failover: as soon as it is elected (+elected-leader, before it sent
// anything to the replicas), or once the replica it chose applied its
// SLAVEOF NO ONE (ROLE answers master), before the leader saw it
// (+promoted-slave) and told the others. The two sentinels left must
// redo the failover: a replica promoted that takes writes, the other
// following it, as in a redis-server group run the same way.
func TestSentinelLeaderKilledMidFailover(t *testing.T) {
	t.Parallel()
	RequireRedis(t)
	for _, kind := range []string{"zredis", "redis"} {
		for _, at := range []string{"+elected-leader", "promoted"} {
			t.Run(kind+" at "+at, func(t *testing.T) {
				t.Parallel()
				leaderKilled(t, kind, at)
			})
		}
	}
}

func leaderKilled(t *testing.T, kind, at string) {
	m := startGroupNode(t, kind)
	r1 := startGroupNode(t, kind, replicaOfLine(m))
	r2 := startGroupNode(t, kind, replicaOfLine(m))
	fillReplData(t, Dial(t, m.Addr), "pre")
	waitFollows(t, m, r1)
	waitFollows(t, m, r2)
	ss := startSentinelsOn(t, m.Port, leaderFailoverTimeout)
	waitDiscovered(t, ss, m, r1, r2)
	ev := watchSentinels(t, ss)

	start := time.Now()
	m.Kill()
	e := ev.wait(t, 60*time.Second, "+elected-leader", func(e sentinelEvent) bool { return e.channel == "+elected-leader" })
	leader := e.from
	chosen := ""
	if at == "promoted" {
		e = ev.wait(t, 30*time.Second, "+selected-slave", func(e sentinelEvent) bool {
			return e.from == leader && e.channel == "+selected-slave"
		})
		chosen = e.instanceAddr()
		waitUntil(t, 30*time.Second, "the chosen replica promoted", func() bool { return roleOf(chosen) == "master" })
	}
	ss[leader].Kill()
	killedAt := time.Now()
	sawPromotion := false
	for _, x := range ev.events() {
		sawPromotion = sawPromotion || x.from == leader && x.channel == "+promoted-slave"
	}
	assert.False(t, sawPromotion, "the leader was killed before it saw the promotion")
	var rest []*sentinelProc
	for i, s := range ss {
		if i != e.from {
			rest = append(rest, s)
		}
	}
	addr, first, last := waitSwitchWithin(t, rest, m, start, 60*time.Second)
	var nm, other *groupNode
	for _, r := range []*groupNode{r1, r2} {
		if r.Addr == addr {
			nm = r
		} else {
			other = r
		}
	}
	require.NotNil(t, nm, "the new master %s is one of the replicas", addr)
	nc := Dial(t, nm.Addr)
	waitUntil(t, 30*time.Second, "new master writable", func() bool {
		return nc.Do("SET", "after:failover", "1") == "+OK\r\n"
	})
	fillReplData(t, nc, "post")
	time.Sleep(400 * time.Millisecond) // its keys set with PX 300 are gone on both sides
	waitFollows(t, nm, other)
	compareDatasets(t, nm.Proc, other.Proc)
	waitUntil(t, 30*time.Second, "the sentinels left see the other replica as a replica of the new master", func() bool {
		for _, s := range rest {
			if rs := sentinelReplicas(s); rs[other.Addr]["flags"] != "slave" || rs[other.Addr]["master-port"] != strconv.Itoa(nm.Port) {
				return false
			}
		}
		return true
	})
	b, _ := os.ReadFile(other.conf)
	assert.Equal(t, []string{replicaOfLine(nm)}, replicaOfDirectives(t, other), "the rewritten file of the other replica:\n%s", b)
	t.Logf("%s group, leader sentinel killed at %s %s after the master: its chosen replica %q; the two sentinels left name %s (the chosen one: %v) after %s and %s",
		kind, at, since(start, killedAt), chosen, addr, chosen == addr, since(start, start.Add(first)), since(start, start.Add(last)))
	t.Logf("events:\n%s", ev.summary(start, func(e sentinelEvent) bool {
		return e.channel == "+sentinel" || e.channel == "+reboot" || e.channel == "+sdown" && strings.HasPrefix(e.payload, "sentinel")
	}))
}

// roleOf is the first element of ROLE at addr, read on a new connection
// ("" on an error).
func roleOf(addr string) string {
	nc, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return ""
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(time.Second))
	if _, err := nc.Write(Encode("ROLE")); err != nil {
		return ""
	}
	rd := bufio.NewReader(nc)
	rd.ReadString('\n')
	rd.ReadString('\n')
	role, _ := rd.ReadString('\n')
	return strings.TrimSpace(role)
}

// ---- a master that comes back during the failover ----------------------------

// TestSentinelMasterReturnsMidFailover kills (kill -9) the master of a
// three-node group and restarts it (same file, same port, its AOF kept)
// as soon as the leader has chosen the replica to promote
// (+selected-slave): the failover goes on, and the sentinels convert
// the old master (+convert-to-slave) into a replica of the new one.
// Writes acknowledged by the new master survive on every node, the
// offsets converge. With zredis nodes and listeners on all three, the
// expiry stream of keys due from the kill on: the new master sends each
// once, the restarted old master each once at most and none due after
// its conversion, the other replica none, and no key goes without a
// message (docs/replication.md, "The old master restarted before
// Sentinel converts it"). The same with redis-server nodes, but for the stream.
func TestSentinelMasterReturnsMidFailover(t *testing.T) {
	t.Parallel()
	RequireRedis(t)
	for _, kind := range []string{"zredis", "redis"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			masterReturns(t, kind)
		})
	}
}

func masterReturns(t *testing.T, kind string) {
	zmq := kind == "zredis"
	mlines := []string{"appendonly yes", "appendfsync always"}
	var eps [3]string
	var rl [2][]string
	if zmq {
		requirePythonZMQ(t)
		eps = [3]string{zmqEndpoint(t), zmqEndpoint(t), zmqEndpoint(t)}
		mlines = append(mlines, "expiry-zmq-endpoints "+eps[0])
		rl = [2][]string{{"expiry-zmq-endpoints " + eps[1]}, {"expiry-zmq-endpoints " + eps[2]}}
	}
	m := startGroupNode(t, kind, mlines...)
	r1 := startGroupNode(t, kind, append(rl[0], replicaOfLine(m))...)
	r2 := startGroupNode(t, kind, append(rl[1], replicaOfLine(m))...)
	nodes := [3]*groupNode{m, r1, r2}
	var ls []*pyListener
	if zmq {
		for i, n := range nodes {
			ls = append(ls, startListener(t, []string{eps[i]}, "--idle", "120"))
			waitInfo(t, Dial(t, n.Addr), "expiry_zmq_listeners", "1", 30*time.Second)
		}
	}
	fillReplData(t, Dial(t, m.Addr), "pre")
	waitFollows(t, m, r1)
	waitFollows(t, m, r2)
	ss := startSentinels(t, m)
	waitDiscovered(t, ss, m, r1, r2)
	ev := watchSentinels(t, ss)

	// Keys due every 40 ms from 500 ms after the kill to past the old
	// master's conversion.
	const n = 370
	start := time.Now()
	base := start.Add(500 * time.Millisecond).UnixMilli()
	due := func(i int) time.Time { return time.UnixMilli(base + int64(i)*40) }
	if zmq {
		mc := Dial(t, m.Addr)
		for i := range n {
			mc.Send(Encode("SET", "k:"+strconv.Itoa(i), "v", "PXAT", strconv.FormatInt(due(i).UnixMilli(), 10)))
		}
		for range n {
			require.Equal(t, "+OK\r\n", mc.Read())
		}
		waitConverged(t, m.Proc, r1.Proc, r2.Proc)
		require.True(t, time.Now().Before(due(0)), "the keys were set and replicated before the first is due")
	}
	killed := time.Now()
	m.Kill()
	e := ev.wait(t, 90*time.Second, "+selected-slave", func(e sentinelEvent) bool { return e.channel == "+selected-slave" })
	m.restart(t)
	restarted := time.Now()
	addr, _, named := waitSwitch(t, ss, m, killed)
	var nm, other *groupNode
	for _, r := range []*groupNode{r1, r2} {
		if r.Addr == addr {
			nm = r
		} else {
			other = r
		}
	}
	require.NotNil(t, nm, "the new master %s is one of the replicas", addr)
	w := startWriter(nm.Addr, "post", false, 0)
	t.Cleanup(func() { w.finish() })
	conv := ev.wait(t, 60*time.Second, "+convert-to-slave of the old master", func(e sentinelEvent) bool {
		return e.channel == "+convert-to-slave" && e.instanceAddr() == m.Addr
	})
	waitUntil(t, 30*time.Second, "the old master a replica", func() bool { return roleOf(m.Addr) == "slave" })
	converted := time.Now()
	waitFollows(t, nm, m)
	waitFollows(t, nm, other)
	ops := w.finish()
	var acked []string
	for _, op := range ops {
		if op.reply == "+OK\r\n" {
			acked = append(acked, op.key)
		}
	}
	require.NotEmpty(t, acked)
	waitConverged(t, nm.Proc, m.Proc, other.Proc)
	for _, nd := range []*groupNode{nm, m, other} {
		on := present(t, nd.Addr, acked)
		missing := 0
		for _, k := range acked {
			if !on[k] {
				missing++
			}
		}
		assert.Zero(t, missing, "%s: writes acknowledged by the new master missing", nd.Addr)
	}
	t.Logf("%s group: master killed, restarted %s later (at +selected-slave of %s), all sentinels name the new master at %s, +convert-to-slave of the old master at %s, a replica at %s; %d writes acknowledged by the new master, all on the three nodes",
		kind, since(killed, restarted), e.instanceAddr(), since(killed, killed.Add(named)), since(killed, conv.at), since(killed, converted), len(acked))
	t.Logf("events:\n%s", ev.summary(killed, func(e sentinelEvent) bool {
		return e.from != conv.from || e.channel == "+sentinel" || e.channel == "+reboot" || strings.HasPrefix(e.channel, "+slave ")
	}))

	// Stopped here, the sentinels first, then the replicas: a
	// redis-server master stopped before its replica may wait for it
	// (shutdown-timeout, 10 s).
	defer func() {
		for _, sp := range ss {
			sp.Stop()
		}
		m.Stop()
		other.Stop()
		nm.Stop()
	}()
	if !zmq {
		return
	}
	time.Sleep(time.Until(due(n - 1).Add(500 * time.Millisecond)))
	counts := collectExpiry(t, ls...)
	byNode := map[*groupNode]map[int]int{}
	for i, nd := range nodes {
		byNode[nd] = counts[i]
	}
	fromOld, fromNew, fromOther := byNode[m], byNode[nm], byNode[other]
	var lost, dup, oldSent, oldTwice int
	for i := range n {
		assert.Equal(t, 1, fromNew[i], "k:%d: the new master sends it once", i)
		assert.LessOrEqual(t, fromOld[i], 1, "k:%d: the old master once at most", i)
		if due(i).After(converted.Add(5 * time.Millisecond)) {
			assert.Zero(t, fromOld[i], "k:%d, due after the conversion: nothing from the old master", i)
		}
		if fromOld[i] > 1 {
			oldTwice++
		}
		if fromOld[i] > 0 {
			oldSent++
		}
		if fromOld[i]+fromNew[i] == 0 {
			lost++
		}
		if fromOld[i]+fromNew[i]+fromOther[i] > 1 {
			dup += fromOld[i] + fromNew[i] + fromOther[i] - 1
		}
	}
	assert.Empty(t, fromOther, "the replica that stayed one sends nothing")
	assert.Zero(t, lost, "no key without a message")
	dueWhileOld := 0
	for i := range n {
		if !due(i).Before(restarted) && due(i).Before(converted) {
			dueWhileOld++
		}
	}
	t.Logf("expiry stream, %d keys due from 0.5 s after the kill, one every 40 ms: the new master sent %d, the restarted old master %d (%d keys were due between its restart and its conversion), the other replica %d; keys without a message %d, duplicate messages %d",
		n, len(fromNew), oldSent, dueWhileOld, len(fromOther), lost, dup)
}
