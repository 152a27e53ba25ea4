package tests

// Migration with no downtime, as docs/replication.md "Migrating from
// redis-server" describes it: zredis replicates a running redis-server,
// is promoted while the old master becomes its replica, and the same
// steps in the other direction bring the data back, with a client
// writing all along and no acknowledged write lost.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ackWriter writes continuously to the current primary, in db 0, and
// counts what was acknowledged: each step is INCR migr:counter then
// RPUSH migr:seq <step>. INCR must answer one more than the INCRs
// acknowledged before it and RPUSH the step number, so a lost or doubled
// write shows at the next reply. A write answered -READONLY (the server
// it was sent to has become a replica) was not applied: it is sent again
// to the current target. Any other error stops the writer.
type ackWriter struct {
	target atomic.Pointer[string]
	mu     sync.Mutex // held around each write: hold() waits for the writer to be between writes
	incrs  atomic.Int64
	pushes atomic.Int64 // the last step whose RPUSH was acknowledged
	ro     atomic.Int64 // -READONLY replies
	stop   chan struct{}
	done   chan error
	once   sync.Once
	err    error // set by finish
}

func startAckWriter(addr string) *ackWriter {
	w := &ackWriter{stop: make(chan struct{}), done: make(chan error, 1)}
	w.point(addr)
	go w.run()
	return w
}

// point sends the next writes to addr.
func (w *ackWriter) point(addr string) { w.target.Store(&addr) }

// hold waits until the writer is between two writes and keeps it there
// until resume: the counts are then exact.
func (w *ackWriter) hold()   { w.mu.Lock() }
func (w *ackWriter) resume() { w.mu.Unlock() }

// finish stops the writer and returns its error, nil when none.
func (w *ackWriter) finish() error {
	w.once.Do(func() {
		close(w.stop)
		w.err = <-w.done
	})
	return w.err
}

func (w *ackWriter) run() {
	ctx := context.Background()
	var rdb *redis.Client
	addr := ""
	defer func() {
		if rdb != nil {
			rdb.Close()
		}
	}()
	for step := int64(1); ; step++ {
		for _, push := range []bool{false, true} {
			for {
				select {
				case <-w.stop:
					w.done <- nil
					return
				default:
				}
				w.mu.Lock()
				if a := *w.target.Load(); a != addr {
					if rdb != nil {
						rdb.Close()
					}
					addr = a
					// One connection; a paused server may hold a write for
					// the whole pause.
					rdb = redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, PoolSize: 1,
						ReadTimeout: 30 * time.Second, WriteTimeout: 10 * time.Second})
				}
				var err error
				if push {
					var n int64
					if n, err = rdb.RPush(ctx, "migr:seq", step).Result(); err == nil {
						if n != step {
							err = fmt.Errorf("RPUSH of step %d on %s answered length %d", step, addr, n)
						} else {
							w.pushes.Store(step)
						}
					}
				} else {
					var n int64
					if n, err = rdb.Incr(ctx, "migr:counter").Result(); err == nil {
						if want := w.incrs.Load() + 1; n != want {
							err = fmt.Errorf("INCR on %s answered %d after %d acknowledged INCRs", addr, n, want-1)
						} else {
							w.incrs.Add(1)
						}
					}
				}
				w.mu.Unlock()
				if err == nil {
					break
				}
				if strings.HasPrefix(err.Error(), "READONLY ") {
					w.ro.Add(1)
					time.Sleep(5 * time.Millisecond)
					continue
				}
				w.done <- fmt.Errorf("step %d on %s: %w", step, addr, err)
				return
			}
		}
		time.Sleep(time.Millisecond) // continuous, not flat out
	}
}

// checkAcked requires, with the writer held, that p holds every
// acknowledged write and nothing more.
func (w *ackWriter) checkAcked(t *testing.T, p *Proc) {
	t.Helper()
	c := Dial(t, p.Addr)
	require.Equal(t, "+OK\r\n", c.Do("SELECT", "0"))
	require.Equal(t, fmt.Sprintf("$%d\r\n%d\r\n", len(strconv.FormatInt(w.incrs.Load(), 10)), w.incrs.Load()),
		c.Do("GET", "migr:counter"), "the counter on %s is the acknowledged INCRs", p.Name)
	n := w.pushes.Load()
	seq := bulkElems(c.Do("LRANGE", "migr:seq", "0", "-1"))
	require.Len(t, seq, int(n), "the list on %s holds the acknowledged RPUSHes", p.Name)
	for i, v := range seq {
		if v != strconv.Itoa(i+1) {
			t.Fatalf("migr:seq[%d] on %s is %q", i, p.Name, v)
		}
	}
}

// waitProgress waits until the writer has had n more steps acknowledged.
func (w *ackWriter) waitProgress(t *testing.T, n int64) {
	t.Helper()
	from := w.pushes.Load()
	require.Eventually(t, func() bool {
		select {
		case err := <-w.done:
			w.done <- err
			return true
		default:
		}
		return w.pushes.Load() >= from+n
	}, 20*time.Second, 10*time.Millisecond, "the writer made no progress from step %d", from)
	select {
	case err := <-w.done:
		require.NoError(t, err)
		t.Fatal("the writer stopped")
	default:
	}
}

// logSync logs what each node says about its synchronisations: partial
// or full resyncs are recorded here, not asserted.
func logSync(t *testing.T, when string, nodes ...*Proc) {
	t.Helper()
	for _, p := range nodes {
		c := Dial(t, p.Addr)
		r := replicaInfo(t, c)
		t.Logf("%s: %s (%s) role=%s sync_full=%d sync_partial_ok=%d sync_partial_err=%d master_replid=%s master_replid2=%s master_repl_offset=%s second_repl_offset=%s",
			when, p.Name, p.Addr, r["role"], statInt(t, c, "sync_full"), statInt(t, c, "sync_partial_ok"), statInt(t, c, "sync_partial_err"),
			r["master_replid"], r["master_replid2"], r["master_repl_offset"], r["second_repl_offset"])
	}
}

// logSyncLines logs the lines of each node's log about how its
// replicas or its link synchronised.
func logSyncLines(t *testing.T, nodes ...*Proc) {
	t.Helper()
	for _, p := range nodes {
		for _, line := range strings.Split(p.Output(), "\n") {
			l := strings.ToLower(line)
			if strings.Contains(l, "resync") || strings.Contains(l, "psync") || strings.Contains(l, "backlog") || strings.Contains(l, "replication id") {
				t.Logf("%s log: %s", p.Name, line)
			}
		}
	}
}

// setTTLKeys writes n keys prefix:i in db with deadlines spread from
// 1.5 s on.
func setTTLKeys(t *testing.T, c *Conn, db int, prefix string, n int) {
	t.Helper()
	require.Equal(t, "+OK\r\n", c.Do("SELECT", strconv.Itoa(db)))
	for i := range n {
		require.Equal(t, "+OK\r\n", c.Do("SET", prefix+strconv.Itoa(i), "v"+strconv.Itoa(i), "PX", strconv.Itoa(1500+i*100)))
	}
	require.Equal(t, "+OK\r\n", c.Do("SELECT", "0"))
}

// dbSize is DBSIZE of db: the keys held, those past their deadline
// included.
func dbSize(t *testing.T, c *Conn, db int) string {
	t.Helper()
	require.Equal(t, "+OK\r\n", c.Do("SELECT", strconv.Itoa(db)))
	n := c.Do("DBSIZE")
	require.Equal(t, "+OK\r\n", c.Do("SELECT", "0"))
	return n
}

// TestMigrationFromRedisAndBack: a redis-server master M with data and
// a writing client; zredis Z replicates it; the switch-over (M's writes
// paused, Z caught up, Z promoted, the writer moved to Z, M made Z's
// replica) loses no acknowledged write; keys expiring after it come from
// Z's expiry stream once each; then the same steps back to M.
func TestMigrationFromRedisAndBack(t *testing.T) {
	parallelReplication(t)
	RequireRedis(t)
	requirePythonZMQ(t)
	const ttlKeys = 20

	m := StartRedis(t, "--repl-diskless-sync-delay", "0")
	m.Name = "M (redis-server)"
	mc := Dial(t, m.Addr)
	fillReplData(t, mc, "before")
	w := startAckWriter(m.Addr)
	t.Cleanup(func() { w.finish() })
	w.waitProgress(t, 50)

	ep := zmqEndpoint(t)
	z := StartZredis(t, "--repl-diskless-sync-delay", "0", "--expiry-zmq-endpoints", ep)
	z.Name = "Z (zredis)"
	zc := Dial(t, z.Addr)
	l := startListener(t, []string{ep})
	waitInfo(t, zc, "expiry_zmq_listeners", "1", 30*time.Second)

	// ---- Z replicates M while M is written to ----
	require.Equal(t, "+OK\r\n", zc.Do("REPLICAOF", "127.0.0.1", strconv.Itoa(m.Port)))
	fillReplData(t, mc, "during")
	waitLinkUp(t, z)
	fillReplData(t, mc, "after")
	time.Sleep(400 * time.Millisecond) // the short TTLs pass: M's DELs go to Z
	w.hold()
	waitConverged(t, m, z)
	compareDatasets(t, m, z)
	w.checkAcked(t, z)
	w.resume()
	assert.Empty(t, l.quiet(300*time.Millisecond), "Z, a replica, sends no expiry message")
	logSync(t, "Z replicating M", m, z)

	// ---- switch-over: M to Z ----
	setTTLKeys(t, mc, 5, "over:", ttlKeys)
	require.Equal(t, "+OK\r\n", mc.Do("CLIENT", "PAUSE", "60000", "WRITE")) // until UNPAUSE
	waitConverged(t, m, z)
	require.Equal(t, "up", replicaInfo(t, zc)["master_link_status"])
	t.Logf("M paused: M master_repl_offset=%s, Z slave_repl_offset=%s", replInfo(t, m, "master_repl_offset"), replInfo(t, z, "slave_repl_offset"))
	require.Equal(t, fmt.Sprintf(":%d\r\n", ttlKeys), dbSize(t, zc, 5), "Z holds the keys that will expire after the switch")
	pushesAtSwitch := w.pushes.Load()
	require.Equal(t, "+OK\r\n", zc.Do("REPLICAOF", "NO", "ONE"))
	w.point(z.Addr)
	require.Equal(t, "+OK\r\n", mc.Do("REPLICAOF", "127.0.0.1", strconv.Itoa(z.Port)))
	require.Equal(t, "+OK\r\n", mc.Do("CLIENT", "UNPAUSE"))
	w.waitProgress(t, 200)
	t.Logf("switched to Z at step %d; -READONLY replies so far: %d", pushesAtSwitch, w.ro.Load())

	// Keys with a TTL expire on Z, each sent once from Z's stream.
	seen := map[string]bool{}
	for _, d := range l.recv(t, ttlKeys, 30*time.Second) {
		k := string(d.Key)
		assert.True(t, strings.HasPrefix(k, "over:"), "unexpected expiry message for %q", k)
		assert.Equal(t, 5, d.DB, k)
		assert.False(t, seen[k], "%s sent twice", k)
		seen[k] = true
	}
	assert.Empty(t, l.quiet(300*time.Millisecond), "one message each")

	w.hold()
	waitConverged(t, z, m)
	require.Equal(t, "up", replicaInfo(t, mc)["master_link_status"])
	w.checkAcked(t, z)
	compareDatasets(t, z, m)
	assert.Equal(t, ":0\r\n", dbSize(t, mc, 5), "Z's DELs of its expired keys reached M")
	w.resume()
	logSync(t, "after the switch to Z (M replica of Z)", m, z)
	// M had nothing Z lacked: it continued Z's history, which continues
	// its own.
	assert.Equal(t, 1, statInt(t, zc, "sync_partial_ok"), "M continued with a partial resync")
	assert.Equal(t, 0, statInt(t, zc, "sync_full"))

	// ---- and back: Z to M ----
	w.waitProgress(t, 200)
	setTTLKeys(t, zc, 6, "back:", ttlKeys)
	require.Equal(t, "+OK\r\n", zc.Do("CLIENT", "PAUSE", "60000", "WRITE")) // until UNPAUSE
	waitConverged(t, z, m)
	require.Equal(t, "up", replicaInfo(t, mc)["master_link_status"])
	t.Logf("Z paused: Z master_repl_offset=%s, M slave_repl_offset=%s", replInfo(t, z, "master_repl_offset"), replInfo(t, m, "slave_repl_offset"))
	require.Equal(t, fmt.Sprintf(":%d\r\n", ttlKeys), dbSize(t, mc, 6))
	pushesAtSwitch = w.pushes.Load()
	roBefore := w.ro.Load()
	require.Equal(t, "+OK\r\n", mc.Do("REPLICAOF", "NO", "ONE"))
	w.point(m.Addr)
	require.Equal(t, "+OK\r\n", zc.Do("REPLICAOF", "127.0.0.1", strconv.Itoa(m.Port)))
	require.Equal(t, "+OK\r\n", zc.Do("CLIENT", "UNPAUSE"))
	w.waitProgress(t, 200)
	t.Logf("switched back to M at step %d; -READONLY replies: %d", pushesAtSwitch, w.ro.Load()-roBefore)

	// The keys written on Z expire on M now: Z, a replica, sends nothing.
	require.Eventually(t, func() bool { return dbSize(t, mc, 6) == ":0\r\n" }, 30*time.Second, 20*time.Millisecond)
	w.hold()
	waitConverged(t, m, z)
	require.Equal(t, "up", replicaInfo(t, zc)["master_link_status"])
	w.checkAcked(t, m)
	compareDatasets(t, m, z)
	assert.Equal(t, ":0\r\n", dbSize(t, zc, 6))
	w.resume()
	assert.Empty(t, l.quiet(300*time.Millisecond), "Z, a replica again, sends no expiry message")
	logSync(t, "after the switch back to M (Z replica of M)", m, z)
	assert.Equal(t, 1, statInt(t, mc, "sync_partial_ok"), "Z offered its own history and continued")
	assert.Equal(t, 1, statInt(t, mc, "sync_full"), "only Z's first synchronisation was full")

	logSyncLines(t, m, z)
	require.NoError(t, w.finish())
	w.checkAcked(t, m)
	t.Logf("acknowledged: %d INCRs, %d RPUSHes; -READONLY replies retried: %d", w.incrs.Load(), w.pushes.Load(), w.ro.Load())
}
