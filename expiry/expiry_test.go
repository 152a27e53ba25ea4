package expiry

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/zmqpub"
	"github.com/zredis/zredis/zmqpub/pull"
)

// testLog is the Logger of the tests: it keeps the lines.
type testLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *testLog) Noticef(format string, args ...any)  { l.add("notice", format, args) }
func (l *testLog) Warningf(format string, args ...any) { l.add("warning", format, args) }

func (l *testLog) add(level, format string, args []any) {
	l.mu.Lock()
	l.lines = append(l.lines, level+": "+fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

func (l *testLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// units records what the cycles propagate, one slice of commands per
// unit (a PropagateWrite outside PropagateUnit is a unit of its own).
type units struct {
	got    [][]string
	inUnit bool
}

func (u *units) PropagateWrite(db int, argv ...[]byte) {
	cmd := "db" + strconv.Itoa(db)
	for _, a := range argv {
		cmd += " " + string(a)
	}
	if u.inUnit {
		u.got[len(u.got)-1] = append(u.got[len(u.got)-1], cmd)
		return
	}
	u.got = append(u.got, []string{cmd})
}

func (u *units) PropagateUnit(fn func()) {
	u.got = append(u.got, nil)
	u.inUnit = true
	fn()
	u.inUnit = false
}

// newService makes a Service on a fresh keyspace wired as the server
// wires it, with the directives given, a stream bound to a free
// loopback port, and the spool in a temporary directory; it is closed
// when the test ends.
func newService(t *testing.T, clock keyspace.Clock, directives ...string) (*Service, *keyspace.Keyspace, *units) {
	t.Helper()
	lines := append([]string{"dir " + t.TempDir(), "expiry-zmq-endpoints tcp://127.0.0.1:0"}, directives...)
	cfg, err := config.Load("", strings.Join(lines, "\n"))
	require.NoError(t, err)
	ks := keyspace.New(16, clock)
	prop := &units{}
	x := New(ks, cfg, &testLog{}, prop)
	ks.AddExpiredSink(x.Expired)
	require.NoError(t, x.Open())
	t.Cleanup(func() { assert.NoError(t, x.Close()) })
	return x, ks, prop
}

// info reads one field of INFO expiry.
func info(x *Service, ks *keyspace.Keyspace, name string) string {
	var b []byte
	ks.Exec(func() { b = x.Info(nil) })
	for _, line := range strings.Split(string(b), "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v
		}
	}
	return ""
}

func putHash(ks *keyspace.Keyspace, db int, key string, at int64, fv ...string) {
	ks.Exec(func() {
		ks.BeginCommand(false)
		h := keyspace.NewHash()
		for i := 0; i < len(fv); i += 2 {
			h.Set([]byte(fv[i]), []byte(fv[i+1]), keyspace.HashLimits{MaxEntries: 128, MaxValue: 64})
		}
		ks.DB(db).PutObject([]byte(key), h)
		ks.DB(db).SetExpire([]byte(key), at)
	})
}

// One expired key, from its deadline to a listener: the timer expires
// it, the keyspace hands it to Service.Expired, which sends it through
// zmqpub's outbox and publisher.
func TestServiceSendsAnExpiredKeyToAListener(t *testing.T) {
	clock := keyspace.NewManualClock(epoch)
	x, ks, _ := newService(t, clock)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		x.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	endpoints := x.stream.pub.Endpoints()
	assert.Equal(t, []string{"notice: Expiry messages are published on " + endpoints[0]}, x.log.(*testLog).get())
	l := pull.Dial(endpoints, pull.Options{})
	t.Cleanup(func() { l.Close() })

	putHash(ks, 3, "msg:1", epoch+1000, "to", "a@example.org")
	clock.Advance(time.Second)
	got := make(chan [][]byte, 1)
	go func() {
		m, _ := l.Recv() // nil once l is closed
		got <- m
	}()
	var frames [][]byte
	select {
	case frames = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the listener received nothing")
	}
	d, err := zmqpub.Decode(frames)
	require.NoError(t, err)
	assert.Equal(t, zmqpub.Decoded{DB: 3, Type: zmqpub.TypeHash, Key: []byte("msg:1"), Parts: bs("to", "a@example.org")}, d)
	require.Eventually(t, func() bool { return info(x, ks, "expiry_messages_sent") == "1" }, 5*time.Second, 5*time.Millisecond)
}

// What Service.Expired and Service.Evicted leave out: a key a writable
// replica expired itself, a type expiry-zmq-types does not send, an
// eviction with expiry-zmq-evictions off.
func TestServiceSendsWhatTheDirectivesSay(t *testing.T) {
	x, ks, _ := newService(t, keyspace.NewManualClock(epoch))
	str := func(v string) *keyspace.Entry {
		var e *keyspace.Entry
		ks.Exec(func() {
			ks.BeginCommand(false)
			ks.DB(0).SetString([]byte("k"), []byte(v), false, 0)
			e = ks.DB(0).Take([]byte("k"))
		})
		return e
	}
	a, b, c := str("1"), str("2"), str("3")
	ks.Exec(func() {
		x.Expired(keyspace.Expired{DB: 0, Key: "a", Entry: a})
		x.Expired(keyspace.Expired{DB: 0, Key: "b", Entry: b, Replica: true})
		x.Evicted(keyspace.Evicted{DB: 0, Key: "c", Entry: c})
	})
	assert.Equal(t, "2", info(x, ks, "expiry_messages_queued"))
	assert.Equal(t, "1", info(x, ks, "expiry_messages_evicted"))

	require.NoError(t, x.cfg.Set([]string{"expiry-zmq-evictions", "no"}))
	require.NoError(t, x.cfg.Set([]string{"expiry-zmq-types", "hash"}))
	d, e := str("4"), str("5")
	ks.Exec(func() {
		x.Expired(keyspace.Expired{DB: 0, Key: "d", Entry: d})
		x.Evicted(keyspace.Evicted{DB: 0, Key: "e", Entry: e})
	})
	assert.Equal(t, "2", info(x, ks, "expiry_messages_queued"))
	assert.Equal(t, "1", info(x, ks, "expiry_messages_evicted"))
}

// The hash expire cycles write through the host's Propagator: the first
// expiry's PERSIST and counter in one unit, each cycle's counter, the
// last cycle's DEL; INFO counts the hash sent again and exhausted.
func TestServiceCyclesPropagateTheirWrites(t *testing.T) {
	clock := keyspace.NewManualClock(epoch)
	x, ks, prop := newService(t, clock,
		"expiry-zmq-hash-max-expire-cycles 2", "expiry-zmq-hash-delay 100", "expiry-zmq-hash-delay-jitter 0")
	putHash(ks, 0, "h", epoch+10, "f", "v")

	step := func(ms int64) {
		clock.Advance(time.Duration(ms) * time.Millisecond)
		ks.Exec(func() { ks.ExpireDue(SliceKeys) })
	}
	step(10)
	ks.Exec(func() {
		h := ks.DB(0).Peek([]byte("h"))
		require.NotNil(t, h, "the hash is kept")
		assert.Zero(t, h.ExpireAt())
	})
	at := epoch + 10 + 100
	assert.Equal(t, [][]string{{"db0 PERSIST h", "db1 SET h 1 PXAT " + strconv.FormatInt(at, 10)}}, prop.got)

	step(100)
	at += 100
	assert.Equal(t, []string{"db1 SET h 2 PXAT " + strconv.FormatInt(at, 10)}, prop.got[1])
	step(100)
	assert.Equal(t, []string{"db0 DEL h"}, prop.got[2])
	assert.Len(t, prop.got, 3)
	ks.Exec(func() {
		assert.Nil(t, ks.DB(0).Peek([]byte("h")))
		assert.Nil(t, ks.DB(1).Peek([]byte("h")), "the counter expired with it")
	})
	assert.Equal(t, "3", info(x, ks, "expiry_messages_queued"), "sent N+1 times")
	assert.Equal(t, "2", info(x, ks, "expiry_messages_resent"))
	assert.Equal(t, "1", info(x, ks, "expiry_hash_cycles_exhausted"))
}

// Without endpoints there is no stream: nothing is sent, and INFO
// expiry says so.
func TestServiceWithoutEndpoints(t *testing.T) {
	cfg, err := config.Load("", "")
	require.NoError(t, err)
	ks := keyspace.New(1, keyspace.NewManualClock(epoch))
	x := New(ks, cfg, &testLog{}, &units{})
	ks.AddExpiredSink(x.Expired)
	require.NoError(t, x.Open())
	set(ks, 0, "k", epoch)
	ks.Exec(func() { assert.Equal(t, 1, ks.ExpireDue(SliceKeys)) })
	var b []byte
	ks.Exec(func() { b = x.Info(nil) })
	assert.Equal(t, "expiry_zmq_endpoints:\r\nexpiry_zmq_types:string,hash\r\nexpiry_zmq_listeners:0\r\n", string(b))
	assert.NoError(t, x.Close())
	assert.Empty(t, x.log.(*testLog).get())
}
