package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/internal/testsupport"
	"github.com/zredis/zredis/zmqpub"
)

// End-to-end tests of the expiry stream: a real zredis-server publishing
// to real libzmq PULL listeners (python3-zmq), decoded byte for byte
// against what was stored.

const pythonBin = testsupport.PythonBin

// requirePythonZMQ ends the test (testsupport.Require) when Debian's
// python3-zmq is missing.
func requirePythonZMQ(t *testing.T) {
	t.Helper()
	testsupport.RequirePython(t, "zmq")
}

// zmqEndpoint returns a tcp endpoint on a free loopback port.
func zmqEndpoint(t *testing.T) string {
	return "tcp://127.0.0.1:" + strconv.Itoa(FreePort(t))
}

// pyListener is a libzmq PULL listener in a python process
// (testdata/pull_listener.py); its messages arrive on msgs.
type pyListener struct {
	cmd  *exec.Cmd
	msgs chan zmqpub.Decoded
	done chan struct{}
	mu   sync.Mutex
	err  string
}

func startListener(t *testing.T, endpoints []string, extra ...string) *pyListener {
	t.Helper()
	requirePythonZMQ(t)
	args := append([]string{"testdata/pull_listener.py"}, endpoints...)
	args = append(args, extra...)
	l := &pyListener{cmd: exec.Command(pythonBin, args...), msgs: make(chan zmqpub.Decoded, 1<<20), done: make(chan struct{})}
	out, err := l.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	l.cmd.Stderr = &stderr
	if err := l.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(l.done)
		rd := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				break
			}
			var frames [][]byte
			for _, h := range strings.Fields(line) {
				b, err := hex.DecodeString(h)
				if err != nil {
					l.fail("bad hex from listener: " + err.Error())
					return
				}
				frames = append(frames, b)
			}
			if len(frames) == 2 { // an empty frame 3 prints as nothing
				frames = append(frames, nil)
			}
			d, err := zmqpub.Decode(frames)
			if err != nil {
				l.fail("undecodable message: " + err.Error())
				continue
			}
			l.msgs <- d
		}
		l.cmd.Wait()
		if stderr.Len() > 0 {
			l.fail("listener stderr: " + stderr.String())
		}
	}()
	t.Cleanup(func() {
		l.kill()
		// A listener that died early (a refused option, a missing
		// module) shows why only here.
		l.mu.Lock()
		defer l.mu.Unlock()
		if t.Failed() && l.err != "" {
			t.Logf("listener %v: %s", args, l.err)
		}
	})
	return l
}

func (l *pyListener) fail(s string) {
	l.mu.Lock()
	l.err += s + "\n"
	l.mu.Unlock()
}

// kill stops the listener at once (SIGKILL: what it had not read is lost).
func (l *pyListener) kill() {
	l.cmd.Process.Kill()
	<-l.done
}

// recv returns the next n messages, failing after timeout.
func (l *pyListener) recv(t *testing.T, n int, timeout time.Duration) []zmqpub.Decoded {
	t.Helper()
	var got []zmqpub.Decoded
	deadline := time.After(timeout)
	for len(got) < n {
		select {
		case d := <-l.msgs:
			got = append(got, d)
		case <-deadline:
			l.mu.Lock()
			defer l.mu.Unlock()
			t.Fatalf("received %d of %d messages in %v; %s", len(got), n, timeout, l.err)
		}
	}
	return got
}

// quiet reports the messages that arrive within d (expected: none).
func (l *pyListener) quiet(d time.Duration) []zmqpub.Decoded {
	var got []zmqpub.Decoded
	deadline := time.After(d)
	for {
		select {
		case m := <-l.msgs:
			got = append(got, m)
		case <-deadline:
			return got
		}
	}
}

// infoExpiry reads INFO expiry (and expired_keys) as a map.
func infoExpiry(t *testing.T, c *Conn) map[string]string {
	t.Helper()
	m := map[string]string{}
	raw := c.Do("INFO", "everything", "expiry")
	for _, line := range strings.Split(raw, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// waitInfo polls INFO until field has value want.
func waitInfo(t *testing.T, c *Conn, field, want string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := infoExpiry(t, c)[field]
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("INFO %s is %q, want %q", field, got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func goRedis(t *testing.T, addr string, db int) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, DB: db, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second})
	t.Cleanup(func() { c.Close() })
	return c
}

// msgKey renders a decoded message for comparisons.
func msgKey(d zmqpub.Decoded) string {
	var b strings.Builder
	fmt.Fprintf(&b, "db=%d type=%s key=%q", d.DB, d.Type, d.Key)
	for _, p := range d.Parts {
		fmt.Fprintf(&b, " %q", p)
	}
	return b.String()
}

func TestExpiryStreamExact(t *testing.T) {
	ep := zmqEndpoint(t)
	z := StartZredis(t, "--expiry-zmq-endpoints", ep)
	ctl := Dial(t, z.Addr)
	l := startListener(t, []string{ep})
	waitInfo(t, ctl, "expiry_zmq_listeners", "1", 30*time.Second)

	ctx := context.Background()
	c0, c15 := goRedis(t, z.Addr, 0), goRedis(t, z.Addr, 15)
	big := make([]byte, 10<<20)
	for i := range big {
		big[i] = byte(i % 251)
	}
	want := map[string]bool{}
	add := func(db int, typ zmqpub.Type, key string, parts ...[]byte) {
		want[msgKey(zmqpub.Decoded{DB: db, Type: typ, Key: []byte(key), Parts: parts})] = true
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c0.Set(ctx, "empty", "", 0).Err())
	add(0, zmqpub.TypeString, "empty", []byte{})
	must(c0.Set(ctx, "bin\x00\xffkey", "v\x00\xff\r\nx", 0).Err())
	add(0, zmqpub.TypeString, "bin\x00\xffkey", []byte("v\x00\xff\r\nx"))
	must(c0.Set(ctx, "big", big, 0).Err())
	add(0, zmqpub.TypeString, "big", big)
	must(c0.Set(ctx, "int", 12345, 0).Err())
	add(0, zmqpub.TypeString, "int", []byte("12345"))
	must(c0.HSet(ctx, "h1", "field", "value\x00").Err())
	add(0, zmqpub.TypeHash, "h1", []byte("field"), []byte("value\x00"))
	// A 10,000-field hash: fields arrive in the hash's order, so compare
	// it as a set of pairs below.
	hargs := []any{}
	hwant := map[string]string{}
	for i := 0; i < 10000; i++ {
		f, v := "field:"+strconv.Itoa(i), "value:"+strconv.Itoa(i)
		hargs = append(hargs, f, v)
		hwant[f] = v
	}
	must(c0.HSet(ctx, "h10k", hargs...).Err())
	must(c15.Set(ctx, "in15", "fifteen", 0).Err())
	add(15, zmqpub.TypeString, "in15", []byte("fifteen"))
	// Not sent by default: other types.
	must(c0.RPush(ctx, "list", "a").Err())

	for _, k := range []string{"empty", "bin\x00\xffkey", "big", "int", "h1", "h10k", "list"} {
		must(c0.PExpire(ctx, k, 100*time.Millisecond).Err())
	}
	must(c15.PExpire(ctx, "in15", 100*time.Millisecond).Err())

	got := l.recv(t, 7, 30*time.Second)
	for _, d := range got {
		if string(d.Key) == "h10k" {
			if d.DB != 0 || d.Type != zmqpub.TypeHash || len(d.Parts) != 20000 {
				t.Fatalf("h10k: db %d type %v parts %d", d.DB, d.Type, len(d.Parts))
			}
			for i := 0; i < len(d.Parts); i += 2 {
				if hwant[string(d.Parts[i])] != string(d.Parts[i+1]) {
					t.Fatalf("h10k field %q = %q", d.Parts[i], d.Parts[i+1])
				}
				delete(hwant, string(d.Parts[i]))
			}
			if len(hwant) != 0 {
				t.Fatalf("h10k: %d fields missing", len(hwant))
			}
			continue
		}
		k := msgKey(d)
		if !want[k] {
			t.Fatalf("unexpected or repeated message %.200s", k)
		}
		delete(want, k)
	}
	if len(want) != 0 {
		t.Fatalf("messages not received: %d", len(want))
	}
	// The list expires without a message.
	waitInfo(t, ctl, "expired_keys", "8", 30*time.Second)
	if extra := l.quiet(300 * time.Millisecond); len(extra) > 0 {
		t.Fatalf("unexpected message %s", msgKey(extra[0]))
	}
	info := infoExpiry(t, ctl)
	if info["expiry_messages_sent"] != "7" || info["expiry_messages_dropped"] != "0" || info["expiry_messages_queued"] != "0" {
		t.Fatalf("INFO expiry: %v", info)
	}
}

// Lazy expiry (a read of a key past its deadline) sends the message too;
// DEL, overwrite, RENAME and FLUSHDB send nothing; CONFIG SET
// expiry-zmq-types opts in to lists, sets and sorted sets.
func TestExpiryStreamWhichKeys(t *testing.T) {
	ep := zmqEndpoint(t)
	z := StartZredis(t, "--expiry-zmq-endpoints", ep)
	ctl := Dial(t, z.Addr)
	l := startListener(t, []string{ep})
	waitInfo(t, ctl, "expiry_zmq_listeners", "1", 30*time.Second)

	// Keys with a deadline that go away by other means.
	for _, k := range []string{"del", "over", "ren"} {
		ctl.Do("SET", k, "v", "PX", "300")
	}
	ctl.Do("DEL", "del")
	ctl.Do("SET", "over", "new")
	ctl.Do("RENAME", "ren", "renamed")
	ctl.Do("PERSIST", "renamed")
	ctl.Do("SELECT", "3")
	ctl.Do("SET", "flushed", "v", "PX", "300")
	ctl.Do("FLUSHDB")
	ctl.Do("SELECT", "0")

	// Opt in to the other types.
	if got := ctl.Do("CONFIG", "SET", "expiry-zmq-types", "string hash list set zset"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET expiry-zmq-types: %q", got)
	}
	ctl.Do("RPUSH", "l", "a", "", "c\x00")
	ctl.Do("SADD", "s", "only")
	ctl.Do("ZADD", "z", "1.5", "m1", "inf", "m2", "-3", "m0")
	for _, k := range []string{"l", "s", "z"} {
		ctl.Do("PEXPIRE", k, "50")
	}
	got := l.recv(t, 3, 30*time.Second)
	want := map[string]bool{
		msgKey(zmqpub.Decoded{Type: zmqpub.TypeList, Key: []byte("l"), Parts: [][]byte{[]byte("a"), {}, []byte("c\x00")}}): true,
		msgKey(zmqpub.Decoded{Type: zmqpub.TypeSet, Key: []byte("s"), Parts: [][]byte{[]byte("only")}}):                    true,
		msgKey(zmqpub.Decoded{Type: zmqpub.TypeZSet, Key: []byte("z"), Parts: [][]byte{
			[]byte("m0"), []byte("-3"), []byte("m1"), []byte("1.5"), []byte("m2"), []byte("inf")}}): true,
	}
	for _, d := range got {
		if !want[msgKey(d)] {
			t.Fatalf("unexpected message %s", msgKey(d))
		}
	}

	// Lazy expiry: a key read after its deadline, before the engine's
	// turn, is expired by the read and sent all the same. The engine may
	// win the race; either way exactly one message.
	ctl.Do("SET", "lazy", "value", "PX", "1")
	time.Sleep(5 * time.Millisecond)
	ctl.Do("GET", "lazy")
	got = l.recv(t, 1, 30*time.Second)
	if msgKey(got[0]) != msgKey(zmqpub.Decoded{Key: []byte("lazy"), Parts: [][]byte{[]byte("value")}}) {
		t.Fatalf("lazy: %s", msgKey(got[0]))
	}
	if extra := l.quiet(500 * time.Millisecond); len(extra) > 0 {
		t.Fatalf("unexpected message %s", msgKey(extra[0]))
	}
}

// Two listeners on two endpoints share the messages, each message going
// to exactly one of them.
func TestExpiryStreamTwoEndpoints(t *testing.T) {
	ep1, ep2 := zmqEndpoint(t), zmqEndpoint(t)
	z := StartZredis(t, "--expiry-zmq-endpoints", ep1, ep2)
	ctl := Dial(t, z.Addr)
	a := startListener(t, []string{ep1})
	b := startListener(t, []string{ep2})
	waitInfo(t, ctl, "expiry_zmq_listeners", "2", 30*time.Second)
	const n = 2000
	setExpiring(t, z.Addr, n, 200*time.Millisecond, 0)
	seen := map[string]int{}
	var fromA, fromB int
	deadline := time.After(30 * time.Second)
	for fromA+fromB < n {
		select {
		case d := <-a.msgs:
			seen[string(d.Key)]++
			fromA++
		case d := <-b.msgs:
			seen[string(d.Key)]++
			fromB++
		case <-deadline:
			t.Fatalf("received %d+%d of %d", fromA, fromB, n)
		}
	}
	if len(seen) != n {
		t.Fatalf("%d distinct keys of %d", len(seen), n)
	}
	if fromA == 0 || fromB == 0 {
		t.Fatalf("one listener got nothing: %d / %d", fromA, fromB)
	}
	t.Logf("listener shares: %d / %d", fromA, fromB)
}

// setExpiring stores n string keys k:<i> whose deadlines are spread
// evenly over spread, starting delay from now, in order of i.
func setExpiring(t *testing.T, addr string, n int, spread, delay time.Duration) int64 {
	t.Helper()
	c := goRedis(t, addr, 0)
	base := time.Now().Add(delay).Add(50 * time.Millisecond).UnixMilli()
	ctx := context.Background()
	for start := 0; start < n; start += 10000 {
		p := c.Pipeline()
		for i := start; i < min(n, start+10000); i++ {
			at := base + int64(spread/time.Millisecond)*int64(i)/int64(n)
			p.Do(ctx, "SET", "k:"+strconv.Itoa(i), "value-"+strconv.Itoa(i), "PXAT", at)
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatalf("SET pipeline: %v\nthe server then:\n%s", err, serverState(addr))
		}
	}
	return base
}

// serverState is what a new connection learns of a server that left a
// request unanswered: its clients (which one waits, on what) and its AOF,
// or that it does not answer either.
func serverState(addr string) string {
	nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return "no connection: " + err.Error()
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(2 * time.Second))
	nc.Write(append(Encode("CLIENT", "LIST"), Encode("INFO", "persistence")...))
	rd := bufio.NewReader(nc)
	var b bytes.Buffer
	for range 2 {
		if err := readRaw(rd, &b); err != nil {
			fmt.Fprintf(&b, "\n(no more within 2 s: %v)", err)
			break
		}
	}
	return b.String()
}

// keyIndex is i of a key k:<i>.
func keyIndex(t *testing.T, d zmqpub.Decoded) int {
	i, err := strconv.Atoi(strings.TrimPrefix(string(d.Key), "k:"))
	if err != nil {
		t.Fatalf("unexpected key %q", d.Key)
	}
	return i
}

// No listener for a burst of 100,000 expirations: the server keeps
// answering, the messages wait (spilling to the spool past the memory
// bound), and a listener that connects afterwards gets all of them in
// deadline order; INFO's counters add up exactly.
func TestExpiryStreamOutage(t *testing.T) {
	requirePythonZMQ(t)
	ep := zmqEndpoint(t)
	z := StartZredis(t, "--expiry-zmq-endpoints", ep, "--expiry-zmq-hwm", "1000")
	ctl := Dial(t, z.Addr)
	const n = 100000
	setExpiring(t, z.Addr, n, 2*time.Second, 0)
	// Answering while the keys expire.
	for i := 0; i < 50; i++ {
		if got := ctl.Do("PING"); got != "+PONG\r\n" {
			t.Fatalf("PING: %q", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitInfo(t, ctl, "expired_keys", strconv.Itoa(n), 30*time.Second)
	info := infoExpiry(t, ctl)
	queued, _ := strconv.Atoi(info["expiry_messages_queued"])
	spooled, _ := strconv.Atoi(info["expiry_messages_spooled"])
	if info["expiry_messages_sent"] != "0" || info["expiry_messages_dropped"] != "0" || queued+spooled != n || spooled == 0 {
		t.Fatalf("INFO before a listener: %v", info)
	}
	l := startListener(t, []string{ep}, "--count", strconv.Itoa(n))
	got := l.recv(t, n, 60*time.Second)
	checkDeadlineOrder(t, got, n, 2*time.Second)
	waitInfo(t, ctl, "expiry_messages_sent", strconv.Itoa(n), 30*time.Second)
	info = infoExpiry(t, ctl)
	if info["expiry_messages_queued"] != "0" || info["expiry_messages_spooled"] != "0" || info["expiry_messages_dropped"] != "0" {
		t.Fatalf("INFO after delivery: %v", info)
	}
}

// checkDeadlineOrder checks that every key k:<i> of 0..n-1 arrived once
// and in deadline order: keys of a later millisecond never before those
// of an earlier one (within one millisecond the order is the engine's).
func checkDeadlineOrder(t *testing.T, got []zmqpub.Decoded, n int, spread time.Duration) {
	t.Helper()
	seen := make([]bool, n)
	last := int64(-1)
	perMs := int64(n) / int64(spread/time.Millisecond)
	for j, d := range got {
		i := keyIndex(t, d)
		if seen[i] {
			t.Fatalf("k:%d received twice", i)
		}
		seen[i] = true
		ms := int64(i) / max(perMs, 1)
		if ms < last-1 {
			t.Fatalf("message %d (k:%d, ms %d) after one of ms %d", j, i, ms, last)
		}
		last = max(last, ms)
	}
}

// The spool survives a restart: messages that no listener took before a
// shutdown are sent by the next run, in order.
func TestExpiryStreamSpoolSurvivesRestart(t *testing.T) {
	requirePythonZMQ(t)
	dir := t.TempDir()
	ep := zmqEndpoint(t)
	args := []string{"--dir", dir, "--save", "", "--expiry-zmq-endpoints", ep, "--expiry-zmq-hwm", "10"}
	z := StartZredis(t, args...)
	ctl := Dial(t, z.Addr)
	const n = 500
	setExpiring(t, z.Addr, n, 100*time.Millisecond, 0)
	waitInfo(t, ctl, "expired_keys", strconv.Itoa(n), 30*time.Second)
	z.Stop()
	if _, err := os.Stat(filepath.Join(dir, "zredis-expiry.spool")); err != nil {
		t.Fatalf("no spool after shutdown: %v", err)
	}
	z2 := StartZredis(t, args...)
	ctl2 := Dial(t, z2.Addr)
	info := infoExpiry(t, ctl2)
	if info["expiry_messages_spooled"] != strconv.Itoa(n) && info["expiry_messages_queued"] != strconv.Itoa(n) {
		spooled, _ := strconv.Atoi(info["expiry_messages_spooled"])
		queued, _ := strconv.Atoi(info["expiry_messages_queued"])
		if spooled+queued != n {
			t.Fatalf("after restart: %v", info)
		}
	}
	l := startListener(t, []string{ep}, "--count", strconv.Itoa(n))
	got := l.recv(t, n, 30*time.Second)
	checkDeadlineOrder(t, got, n, 100*time.Millisecond)
}

// A listener killed mid-stream and another started: what the dead one had
// not been handed goes to the new one. The loss (what sat in the dead
// listener's socket buffers) is counted and logged.
func TestExpiryStreamListenerRestart(t *testing.T) {
	ep := zmqEndpoint(t)
	z := StartZredis(t, "--expiry-zmq-endpoints", ep)
	ctl := Dial(t, z.Addr)
	a := startListener(t, []string{ep}, "--hwm", "100")
	waitInfo(t, ctl, "expiry_zmq_listeners", "1", 30*time.Second)
	const n = 20000
	setExpiring(t, z.Addr, n, 2*time.Second, 0)
	fromA := a.recv(t, n/4, 30*time.Second)
	a.kill()
	for len(a.msgs) > 0 {
		fromA = append(fromA, <-a.msgs)
	}
	b := startListener(t, []string{ep})
	seen := map[int]bool{}
	for _, d := range fromA {
		seen[keyIndex(t, d)] = true
	}
	waitInfo(t, ctl, "expired_keys", strconv.Itoa(n), 30*time.Second)
	sent := func() int {
		v, _ := strconv.Atoi(infoExpiry(t, ctl)["expiry_messages_sent"])
		return v
	}
	// Everything left is handed to b; wait until b has all that was sent
	// after a died.
	fromB := 0
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case d := <-b.msgs:
			i := keyIndex(t, d)
			if seen[i] {
				t.Fatalf("k:%d received twice", i)
			}
			seen[i] = true
			fromB++
			continue
		case <-time.After(200 * time.Millisecond):
		}
		if len(seen) == n || (sent() >= n && len(b.msgs) == 0 && fromB > 0) {
			break
		}
	}
	lost := n - len(seen)
	t.Logf("listener killed after %d messages; the next one got %d; lost %d (sent %d)", len(fromA), fromB, lost, sent())
	if fromB == 0 {
		t.Fatal("the second listener got nothing")
	}
}

// An idle TCP client that never completes the ZMTP handshake does not
// hold up a real listener, and a libzmq listener with heartbeats stays
// connected while idle.
func TestExpiryStreamIdleClientAndHeartbeat(t *testing.T) {
	ep := zmqEndpoint(t)
	z := StartZredis(t, "--expiry-zmq-endpoints", ep)
	ctl := Dial(t, z.Addr)
	idle, err := net.Dial("tcp", strings.TrimPrefix(ep, "tcp://"))
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	l := startListener(t, []string{ep}, "--heartbeat", "100")
	waitInfo(t, ctl, "expiry_zmq_listeners", "1", 30*time.Second)
	time.Sleep(1500 * time.Millisecond) // several heartbeat intervals, idle
	if got := infoExpiry(t, ctl)["expiry_zmq_listeners"]; got != "1" {
		t.Fatalf("heartbeating listener dropped: listeners %s", got)
	}
	ctl.Do("SET", "hb", "x", "PX", "10")
	got := l.recv(t, 1, 30*time.Second)
	if string(got[0].Key) != "hb" {
		t.Fatalf("got %s", msgKey(got[0]))
	}
}

// A replica never expires keys itself, so it sends nothing.
func TestExpiryStreamReplicaSendsNothing(t *testing.T) {
	ep := zmqEndpoint(t)
	z := StartZredis(t, "--expiry-zmq-endpoints", ep, "--replicaof", "127.0.0.1", strconv.Itoa(FreePort(t)), "--replica-read-only", "no")
	ctl := Dial(t, z.Addr)
	l := startListener(t, []string{ep})
	waitInfo(t, ctl, "expiry_zmq_listeners", "1", 30*time.Second)
	if got := ctl.Do("SET", "k", "v", "PX", "10"); got != "+OK\r\n" {
		t.Fatalf("replica-read-only no, yet the replica refuses a write: %q", got)
	}
	time.Sleep(100 * time.Millisecond)
	if got := ctl.Do("GET", "k"); got != "$-1\r\n" {
		t.Fatalf("a replica answers a key past its deadline: %q", got)
	}
	if extra := l.quiet(300 * time.Millisecond); len(extra) > 0 {
		t.Fatalf("a replica sent %s", msgKey(extra[0]))
	}
	if got := infoExpiry(t, ctl)["expiry_messages_sent"]; got != "0" {
		t.Fatalf("expiry_messages_sent %s", got)
	}
}

// With expiry-zmq-message-id yes every message carries frame 4, the id
// of the event: the deadline that fell due (a key's, or a hash's
// fields') and the hash of frames 1 and 2. CONFIG SET turns it off.
func TestExpiryStreamMessageID(t *testing.T) {
	ep := zmqEndpoint(t)
	z := StartZredis(t, "--expiry-zmq-endpoints", ep, "--expiry-zmq-message-id", "yes",
		"--expiry-zmq-types", "string", "hash", "hash-fields")
	ctl := Dial(t, z.Addr)
	l := startListener(t, []string{ep})
	waitInfo(t, ctl, "expiry_zmq_listeners", "1", 30*time.Second)

	at := time.Now().Add(300 * time.Millisecond).UnixMilli()
	atStr := strconv.FormatInt(at, 10)
	ctl.Do("SELECT", "3")
	ctl.Do("SET", "k", "v", "PXAT", atStr)
	ctl.Do("HSET", "h", "f1", "v1", "f2", "v2")
	ctl.Do("HPEXPIREAT", "h", atStr, "FIELDS", "1", "f1")
	got := l.recv(t, 2, 10*time.Second)
	for _, d := range got {
		frames := zmqpub.Encode(d.DB, d.Type, d.Key, d.Parts)
		require.Equal(t, string(zmqpub.AppendMessageID(nil, at, frames[0], frames[1])), string(d.ID), "%s %s", d.Type, d.Key)
	}

	ctl.Do("CONFIG", "SET", "expiry-zmq-message-id", "no")
	ctl.Do("SET", "k2", "v", "PX", "1")
	d := l.recv(t, 1, 10*time.Second)[0]
	require.Equal(t, "k2", string(d.Key))
	require.Nil(t, d.ID, "three frames once turned off")
}
