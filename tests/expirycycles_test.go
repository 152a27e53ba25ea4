package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/zmqpub"
)

// The hash expire cycles of the original 0MQ-expiry Redis, end to end
// with a real libzmq listener: an expiring hash in the main database is
// sent, kept, and sent again per cycle until a listener deletes it or the
// last cycle deletes it.

// cycleArgs are the directives of a server with short cycles: 1 to
// 1.1 s apart, so that a test reacting to a message (a DEL, a read of
// the counter) does so before the next cycle even on a busy machine.
func cycleArgs(ep string, cycles int, extra ...string) []string {
	return append([]string{"--expiry-zmq-endpoints", ep,
		"--expiry-zmq-hash-max-expire-cycles", strconv.Itoa(cycles),
		"--expiry-zmq-hash-delay", "1000", "--expiry-zmq-hash-delay-jitter", "100"}, extra...)
}

// pastCycle is longer than a cycle of cycleArgs: a quiet period that
// would see the next cycle's message.
const pastCycle = 1500 * time.Millisecond

// hashMsg is the message of hash key in db with one field.
func hashMsg(db int, key, field, value string) string {
	return msgKey(zmqpub.Decoded{DB: db, Type: zmqpub.TypeHash, Key: []byte(key), Parts: [][]byte{[]byte(field), []byte(value)}})
}

// keysOf renders messages for comparison.
func keysOf(msgs []zmqpub.Decoded) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = msgKey(m)
	}
	return out
}

func TestExpiryHashCyclesUntilExhausted(t *testing.T) {
	ep := zmqEndpoint(t)
	z := StartZredis(t, cycleArgs(ep, 3)...)
	ctl := Dial(t, z.Addr)
	l := startListener(t, []string{ep})
	waitInfo(t, ctl, "expiry_zmq_listeners", "1", 30*time.Second)

	require.Equal(t, ":1\r\n", ctl.Do("HSET", "mail:1", "body", "hello"))
	require.Equal(t, ":1\r\n", ctl.Do("PEXPIRE", "mail:1", "50"))
	first := l.recv(t, 1, 30*time.Second)
	want := hashMsg(0, "mail:1", "body", "hello")
	require.Equal(t, []string{want}, keysOf(first))
	// Kept without a deadline; its counter waits in database 1.
	assert.Equal(t, ":-1\r\n", ctl.Do("PTTL", "mail:1"))
	loop := Dial(t, z.Addr)
	require.Equal(t, "+OK\r\n", loop.Do("SELECT", "1"))
	assert.Equal(t, "$1\r\n1\r\n", loop.Do("GET", "mail:1"))

	// Three cycles: four messages in all, byte-identical, then gone.
	again := l.recv(t, 3, 30*time.Second)
	assert.Equal(t, []string{want, want, want}, keysOf(again))
	waitInfo(t, ctl, "expiry_hash_cycles_exhausted", "1", 30*time.Second)
	assert.Equal(t, ":0\r\n", ctl.Do("EXISTS", "mail:1"))
	assert.Equal(t, ":0\r\n", loop.Do("EXISTS", "mail:1"))
	assert.Empty(t, l.quiet(600*time.Millisecond))
	info := infoExpiry(t, ctl)
	assert.Equal(t, "3", info["expiry_messages_resent"])
	assert.Equal(t, "4", info["expiry_messages_sent"])
}

func TestExpiryHashCyclesEnd(t *testing.T) {
	ep := zmqEndpoint(t)
	z := StartZredis(t, cycleArgs(ep, 5)...)
	ctl := Dial(t, z.Addr)
	l := startListener(t, []string{ep})
	waitInfo(t, ctl, "expiry_zmq_listeners", "1", 30*time.Second)

	// A listener that archived the hash deletes it: sent once.
	ctl.Do("HSET", "acked", "f", "v")
	ctl.Do("PEXPIRE", "acked", "20")
	require.Equal(t, []string{hashMsg(0, "acked", "f", "v")}, keysOf(l.recv(t, 1, 30*time.Second)))
	require.Equal(t, ":1\r\n", ctl.Do("DEL", "acked"))

	// A hash rewritten with a deadline between cycles stops cycling.
	ctl.Do("HSET", "rewritten", "f", "v")
	ctl.Do("PEXPIRE", "rewritten", "20")
	require.Equal(t, []string{hashMsg(0, "rewritten", "f", "v")}, keysOf(l.recv(t, 1, 30*time.Second)))
	require.Equal(t, ":1\r\n", ctl.Do("EXPIRE", "rewritten", "1000"))

	// A hash that became another type stops cycling.
	ctl.Do("HSET", "retyped", "f", "v")
	ctl.Do("PEXPIRE", "retyped", "20")
	require.Equal(t, []string{hashMsg(0, "retyped", "f", "v")}, keysOf(l.recv(t, 1, 30*time.Second)))
	require.Equal(t, "+OK\r\n", ctl.Do("SET", "retyped", "now a string"))

	assert.Empty(t, l.quiet(pastCycle), "no cycle after an acknowledgement or a rewrite")
	assert.Equal(t, ":1\r\n", ctl.Do("EXISTS", "rewritten"))
	loop := Dial(t, z.Addr)
	loop.Do("SELECT", "1")
	assert.Equal(t, ":0\r\n", loop.Do("EXISTS", "acked", "rewritten", "retyped"), "the counters expired")
	assert.Equal(t, "0", infoExpiry(t, ctl)["expiry_messages_resent"])

	// Strings, other types and hashes in other databases expire as
	// before: sent once, gone.
	ctl.Do("SET", "s", "v", "PX", "20")
	other := Dial(t, z.Addr)
	other.Do("SELECT", "2")
	other.Do("HSET", "h2", "f", "v")
	other.Do("PEXPIRE", "h2", "20")
	got := keysOf(l.recv(t, 2, 30*time.Second))
	assert.ElementsMatch(t, []string{
		msgKey(zmqpub.Decoded{DB: 0, Type: zmqpub.TypeString, Key: []byte("s"), Parts: [][]byte{[]byte("v")}}),
		hashMsg(2, "h2", "f", "v"),
	}, got)
	assert.Empty(t, l.quiet(pastCycle))
	assert.Equal(t, ":0\r\n", other.Do("EXISTS", "h2"))

	// A counter that is not a number is dropped, with a warning.
	loop.Do("SET", "junk", "not-a-number", "PX", "20")
	assert.Empty(t, l.quiet(300*time.Millisecond))
	waitOutput(t, z, "Found non-integer value in expire loop db 1 for key 'junk'")
}

// The cycles are ordinary writes in the AOF: a server killed in the middle
// of them and restarted on its AOF goes on where it was.
func TestExpiryHashCyclesSurviveRestart(t *testing.T) {
	ep := zmqEndpoint(t)
	dir := t.TempDir()
	args := append(cycleArgs(ep, 3, "--appendonly", "yes", "--appendfsync", "always", "--dir", dir),
		"--expiry-zmq-hash-delay", "1000", "--expiry-zmq-hash-delay-jitter", "0")
	z := StartZredis(t, args...)
	ctl := Dial(t, z.Addr)
	l := startListener(t, []string{ep})
	waitInfo(t, ctl, "expiry_zmq_listeners", "1", 30*time.Second)

	ctl.Do("HSET", "mail:2", "body", "kept")
	ctl.Do("PEXPIRE", "mail:2", "20")
	want := hashMsg(0, "mail:2", "body", "kept")
	require.Equal(t, []string{want}, keysOf(l.recv(t, 1, 30*time.Second)))
	// The expiry engine's writes reach the file with the next group
	// commit, not before the message.
	var aof []byte
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		aof, _ = os.ReadFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.1.incr.aof"))
		if strings.Contains(string(aof), "PXAT") {
			break
		}
	}
	assert.Contains(t, string(aof), "PERSIST\r\n$6\r\nmail:2\r\n")
	assert.Contains(t, string(aof), "SET\r\n$6\r\nmail:2\r\n$1\r\n1\r\n$4\r\nPXAT\r\n")

	z.Kill()
	z2 := StartZredis(t, args...)
	ctl2 := Dial(t, z2.Addr)
	assert.Equal(t, ":-1\r\n", ctl2.Do("PTTL", "mail:2"))
	again := l.recv(t, 3, 30*time.Second)
	assert.Equal(t, []string{want, want, want}, keysOf(again))
	waitInfo(t, ctl2, "expiry_hash_cycles_exhausted", "1", 30*time.Second)
	assert.Equal(t, ":0\r\n", ctl2.Do("EXISTS", "mail:2"))
}

// Evicted keys go to the listeners, as the original's eviction went
// through its expiry path; expiry-zmq-evictions no turns it off.
func TestExpiryStreamEvictions(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run("evictions="+strconv.FormatBool(on), func(t *testing.T) {
			ep := zmqEndpoint(t)
			flag := "yes"
			if !on {
				flag = "no"
			}
			z := StartZredis(t, cycleArgs(ep, 3, "--expiry-zmq-evictions", flag, "--maxmemory-policy", "allkeys-random")...)
			ctl := Dial(t, z.Addr)
			l := startListener(t, []string{ep})
			waitInfo(t, ctl, "expiry_zmq_listeners", "1", 30*time.Second)

			c := goRedis(t, z.Addr, 0)
			ctx := context.Background()
			value := strings.Repeat("v", 4096)
			for i := 0; i < 300; i++ {
				k := "k" + strconv.Itoa(i)
				if i%2 == 0 {
					require.NoError(t, c.Set(ctx, k, value, 0).Err())
				} else {
					require.NoError(t, c.HSet(ctx, k, "f", value).Err())
				}
			}
			used, err := strconv.ParseInt(infoField(t, ctl, "memory", "used_memory"), 10, 64)
			require.NoError(t, err)
			require.Equal(t, "+OK\r\n", ctl.Do("CONFIG", "SET", "maxmemory", strconv.FormatInt(used-400*1024, 10)))
			// Evictions run before commands and in the cron: wait until
			// they stop.
			evicted := -1
			for {
				time.Sleep(300 * time.Millisecond)
				n, _ := strconv.Atoi(infoField(t, ctl, "stats", "evicted_keys"))
				if n == evicted {
					break
				}
				evicted = n
			}
			require.Positive(t, evicted)
			if !on {
				assert.Empty(t, l.quiet(500*time.Millisecond))
				assert.Equal(t, "0", infoExpiry(t, ctl)["expiry_messages_evicted"])
				return
			}
			got := l.recv(t, evicted, 30*time.Second)
			seen := map[string]bool{}
			for _, m := range got {
				k := string(m.Key)
				assert.False(t, seen[k], "%s sent twice", k)
				seen[k] = true
				assert.Equal(t, ":0\r\n", ctl.Do("EXISTS", k), "an evicted key is gone, never kept for cycles")
				assert.Equal(t, value, string(m.Parts[len(m.Parts)-1]))
			}
			assert.Empty(t, l.quiet(300*time.Millisecond))
			assert.Equal(t, strconv.Itoa(evicted), infoExpiry(t, ctl)["expiry_messages_evicted"])
		})
	}
}

// The directives: defaults, CONFIG SET checks, the databases refused, and
// the original's configuration lines accepted as they are.
func TestExpiryHashCyclesDirectives(t *testing.T) {
	z := StartZredis(t)
	c := Dial(t, z.Addr)
	for name, def := range map[string]string{
		"expiry-zmq-hash-max-expire-cycles": "0", "expiry-zmq-hash-delay": "10000",
		"expiry-zmq-hash-delay-jitter": "10000", "expiry-zmq-hash-main-db": "0",
		"expiry-zmq-hash-loop-db": "1", "expiry-zmq-evictions": "yes",
	} {
		assert.Equal(t, "*2\r\n$"+strconv.Itoa(len(name))+"\r\n"+name+"\r\n$"+strconv.Itoa(len(def))+"\r\n"+def+"\r\n", c.Do("CONFIG", "GET", name))
	}
	assert.True(t, strings.HasPrefix(c.Do("CONFIG", "SET", "expiry-zmq-hash-delay", "-1"), "-ERR CONFIG SET failed (possibly related to argument 'expiry-zmq-hash-delay')"))
	assert.True(t, strings.HasPrefix(c.Do("CONFIG", "SET", "expiry-zmq-hash-max-expire-cycles", "many"), "-ERR CONFIG SET failed (possibly related to argument 'expiry-zmq-hash-max-expire-cycles')"))
	// With the cycles on, their databases must be two of the databases.
	require.Equal(t, "+OK\r\n", c.Do("CONFIG", "SET", "expiry-zmq-hash-max-expire-cycles", "3"))
	assert.Contains(t, c.Do("CONFIG", "SET", "expiry-zmq-hash-loop-db", "0"), "both 0")
	assert.Contains(t, c.Do("CONFIG", "SET", "expiry-zmq-hash-main-db", "16"), "out of range")
	assert.Equal(t, "+OK\r\n", c.Do("CONFIG", "SET", "expiry-zmq-hash-main-db", "3", "expiry-zmq-hash-loop-db", "4"))

	// Refused at start: equal or out of range.
	for _, args := range [][]string{
		{"--expiry-zmq-hash-max-expire-cycles", "3", "--expiry-zmq-hash-main-db", "2", "--expiry-zmq-hash-loop-db", "2"},
		{"--expiry-zmq-hash-max-expire-cycles", "3", "--expiry-zmq-hash-loop-db", "16"},
	} {
		out, errOut, code := runToExit(t, zredisBin, append(args, "--port", strconv.Itoa(FreePort(t)), "--bind", "127.0.0.1")...)
		assert.NotZero(t, code)
		assert.Contains(t, out+errOut, "expiry-zmq-hash-")
	}

	// With the cycles off, their databases are not checked: one database
	// is a valid configuration.
	z1 := StartZredis(t, "--databases", "1")
	assert.Equal(t, "+PONG\r\n", Dial(t, z1.Addr).Do("PING"))
	_, errOut, code := runToExit(t, zredisBin, "--databases", "1", "--expiry-zmq-hash-max-expire-cycles", "3", "--port", strconv.Itoa(FreePort(t)), "--bind", "127.0.0.1")
	assert.NotZero(t, code)
	assert.Contains(t, errOut, "expiry-zmq-hash-loop-db 1 is out of range")

	// The original's block, as its redis.conf and README write it.
	ep := zmqEndpoint(t)
	path := filepath.Join(t.TempDir(), "redis.conf")
	conf := "expiry-zmq-endpoints " + ep + "\n#expiry-zmq-hwm 0\n" +
		"expiry-zmq-hash-max-expire-cycles 3\nexpiry-zmq-hash-delay 10000\nexpiry-zmq-hash-delay-jitter 10000\n"
	require.NoError(t, os.WriteFile(path, []byte(conf), 0o644))
	z2 := StartZredis(t, path)
	assert.Contains(t, Dial(t, z2.Addr).Do("CONFIG", "GET", "expiry-zmq-hash-max-expire-cycles"), "\r\n3\r\n")
}

// infoField returns one field of an INFO section, "" when absent.
func infoField(t *testing.T, c *Conn, section, field string) string {
	t.Helper()
	for _, line := range strings.Split(c.Do("INFO", section), "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	return ""
}

// bin/zredis-expiry-listen --ack deletes each hash once printed: the
// acknowledgement that ends its cycles after one message.
func TestExpiryListenAck(t *testing.T) {
	ep := zmqEndpoint(t)
	z := StartZredis(t, cycleArgs(ep, 3)...)
	ctl := Dial(t, z.Addr)
	require.Equal(t, "+OK\r\n", ctl.Do("CONFIG", "SET", "requirepass", "pw"))
	require.Equal(t, "+OK\r\n", ctl.Do("AUTH", "pw"))
	cmd := exec.Command(listenBin, "--endpoint", ep, "--count", "2", "--ack", z.Addr, "--ack-password", "pw")
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	waitInfo(t, ctl, "expiry_zmq_listeners", "1", 30*time.Second)

	other := Dial(t, z.Addr)
	other.Do("AUTH", "pw")
	other.Do("SELECT", "2")
	require.Equal(t, ":1\r\n", other.Do("HSET", "mail:9", "body", "b")) // not cycling: another database
	other.Do("PEXPIRE", "mail:9", "20")
	ctl.Do("HSET", "mail:9", "body", "a")
	ctl.Do("PEXPIRE", "mail:9", "20")
	select {
	case <-done:
		require.NoError(t, waitErr, errOut.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("the listener did not print 2 messages: %q %q", out.String(), errOut.String())
	}
	assert.Equal(t, 2, strings.Count(out.String(), "\n"))
	assert.Empty(t, errOut.String())
	assert.Equal(t, ":0\r\n", ctl.Do("EXISTS", "mail:9"), "acknowledged: deleted")
	time.Sleep(pastCycle) // past the first cycle's delay
	info := infoExpiry(t, ctl)
	assert.Equal(t, "0", info["expiry_messages_resent"])
	assert.Equal(t, "2", info["expiry_messages_sent"])
}

// expiry-zmq-max-listeners bounds the connections to the PUSH socket: a
// libzmq listener past it is refused (and retries), and gets in once a
// place is free.
func TestExpiryMaxListeners(t *testing.T) {
	ep := zmqEndpoint(t)
	z := StartZredis(t, "--expiry-zmq-endpoints", ep, "--expiry-zmq-max-listeners", "1")
	ctl := Dial(t, z.Addr)
	first := startListener(t, []string{ep})
	waitInfo(t, ctl, "expiry_zmq_listeners", "1", 30*time.Second)
	second := startListener(t, []string{ep})
	deadline := time.Now().Add(30 * time.Second)
	for infoExpiry(t, ctl)["expiry_zmq_listeners_refused"] == "0" {
		require.True(t, time.Now().Before(deadline), "the second listener was never refused")
		time.Sleep(20 * time.Millisecond)
	}
	assert.Equal(t, "1", infoExpiry(t, ctl)["expiry_zmq_listeners"])
	connects := infoExpiry(t, ctl)["expiry_zmq_listener_connects"]
	first.kill()
	// The message is set once the second is in: one written before the
	// server saw the first go would go to the dead connection, which
	// PUSH (libzmq's too) cannot tell from a live one.
	deadline = time.Now().Add(20 * time.Second)
	for infoExpiry(t, ctl)["expiry_zmq_listener_connects"] == connects {
		require.True(t, time.Now().Before(deadline), "the second listener never got in")
		time.Sleep(20 * time.Millisecond)
	}
	ctl.Do("SET", "k", "v", "PX", "1")
	assert.Len(t, second.recv(t, 1, 30*time.Second), 1, "the second listener got in once the first left")
}
