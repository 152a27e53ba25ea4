package tests

// SHUTDOWN waiting for lagging replicas (shutdown-timeout), as Redis
// 7.0's prepareForShutdown/finishShutdown: each case runs with a zredis
// master and with a real redis-server master, and compares the replies
// and log lines.

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shutdownMasters are the masters each case runs against.
var shutdownMasters = []string{"zredis", "redis"}

// stoppableReplica starts a real redis-server replica of master that the
// test may SIGSTOP: it is resumed (SIGCONT) before it is stopped at the
// end of the test.
func stoppableReplica(t *testing.T, master *Proc) *Proc {
	t.Helper()
	r := startReplica(t, master)
	t.Cleanup(func() { r.Signal(syscall.SIGCONT) })
	return r
}

// waitShutdown waits for p to exit after a shutdown, failing the test
// after timeout.
func waitShutdown(t *testing.T, p *Proc, timeout time.Duration) {
	t.Helper()
	if _, ok := p.Wait(timeout); !ok {
		t.Fatalf("%s did not exit within %v\n%s", p.Name, timeout, p.Output())
	}
}

// blockedOnShutdown counts the clients blocked (flag b) in SHUTDOWN.
func blockedOnShutdown(c *Conn) int {
	n := 0
	for _, line := range strings.Split(c.Do("CLIENT", "LIST"), "\n") {
		if strings.Contains(line, " flags=b ") && strings.Contains(line, " cmd=shutdown ") {
			n++
		}
	}
	return n
}

// TestShutdownWaitsForReplicas: writes pipelined right before SHUTDOWN
// reach every replica (a stock redis-server and a zredis one) before the
// master exits: the master waits until they acknowledged its offset.
func TestShutdownWaitsForReplicas(t *testing.T) {
	parallelReplication(t)
	for _, name := range shutdownMasters {
		t.Run(name, func(t *testing.T) {
			m := StartServer(t, name, "--repl-diskless-sync-delay", "0", "--shutdown-timeout", "20")
			fillDataset(t, m.Addr)
			rr := startReplica(t, m)
			zr := StartZredis(t, "--replicaof", "127.0.0.1", strconv.Itoa(m.Port))
			waitConverged(t, m, rr, zr)

			// The writes and SHUTDOWN in one pipeline: the replicas
			// cannot have acknowledged the writes when SHUTDOWN runs.
			want := dataset(t, m.Addr)
			var pipe []byte
			const n = 3000
			for i := range n {
				pipe = append(pipe, Encode("SET", fmt.Sprintf("final:%d", i), strings.Repeat("v", i%100))...)
				pipe = append(pipe, Encode("INCR", "final:counter")...)
				want[fmt.Sprintf("0/%q", fmt.Sprintf("final:%d", i))] = "string " + strconv.Quote(strings.Repeat("v", i%100)) + " ttl:none"
			}
			want[`0/"final:counter"`] = "string " + strconv.Quote(strconv.Itoa(n)) + " ttl:none"
			c := Dial(t, m.Addr)
			c.Send(append(pipe, Encode("SHUTDOWN")...))
			for range 2 * n {
				c.Read()
			}
			reply, err := c.ReadErr(30 * time.Second)
			assert.Equal(t, "", reply, "SHUTDOWN has no reply: the connection closes")
			assert.Error(t, err)
			waitShutdown(t, m, 30*time.Second)

			out := m.Output()
			assert.Contains(t, out, "User requested shutdown...")
			assert.Contains(t, out, "Waiting for replicas before shutting down.")
			assert.Contains(t, out, "2 of 2 replicas are in sync when shutting down.")
			assert.NotContains(t, out, "Lagging replica")
			requireSameDataset(t, want, dataset(t, rr.Addr))
			requireSameDataset(t, want, dataset(t, zr.Addr))
		})
	}
}

// TestShutdownTimeoutLaggingReplica: a replica that stopped (SIGSTOP)
// makes SHUTDOWN wait shutdown-timeout seconds, writes held and reads
// served meanwhile, then the master logs the lagging replica and exits.
func TestShutdownTimeoutLaggingReplica(t *testing.T) {
	parallelReplication(t)
	for _, name := range shutdownMasters {
		t.Run(name, func(t *testing.T) {
			// Long enough for the checks made during the wait on a busy
			// machine.
			const timeout = 10 * time.Second
			m := StartServer(t, name, "--repl-diskless-sync-delay", "0", "--shutdown-timeout", "10")
			r := stoppableReplica(t, m)
			waitConverged(t, m, r)
			c := Dial(t, m.Addr)
			require.Equal(t, "+OK\r\n", c.Do("SET", "before", "1"))
			require.NoError(t, r.Signal(syscall.SIGSTOP))
			require.Equal(t, "+OK\r\n", c.Do("SET", "lagging", "1"))

			start := time.Now()
			c.Send(Encode("SHUTDOWN"))
			waitLog(t, m, "Waiting for replicas before shutting down.")

			// Meanwhile: reads are served, writes wait, the SHUTDOWN
			// client shows as blocked.
			other := Dial(t, m.Addr)
			assert.Equal(t, "$1\r\n1\r\n", other.Do("GET", "before"))
			assert.Equal(t, 1, blockedOnShutdown(other))
			assert.Equal(t, "1", infoField(t, other, "clients", "blocked_clients"))
			writer := Dial(t, m.Addr)
			writer.Send(Encode("SET", "during", "1"))
			_, err := writer.ReadErr(300 * time.Millisecond)
			require.Error(t, err, "a write waits while the shutdown waits for the replicas")

			waitShutdown(t, m, 40*time.Second)
			waited := time.Since(start)
			assert.GreaterOrEqual(t, waited, timeout*2/3, "SHUTDOWN waited for the lagging replica")
			reply, err := c.ReadErr(5 * time.Second)
			assert.Equal(t, "", reply)
			assert.Error(t, err)

			out := m.Output()
			assert.Contains(t, out, fmt.Sprintf("Lagging replica 127.0.0.1:%d reported offset ", r.Port))
			assert.Contains(t, out, "0 of 1 replicas are in sync when shutting down.")
		})
	}
}

// TestShutdownAbort: SHUTDOWN ABORT from another client cancels a
// shutdown waiting for a stopped replica, whether SHUTDOWN or SIGTERM
// started it; the blocked SHUTDOWN clients get Redis's error, held
// writes run, and the server goes on serving. SHUTDOWN NOW then exits
// without waiting.
func TestShutdownAbort(t *testing.T) {
	for _, name := range shutdownMasters {
		t.Run(name, func(t *testing.T) {
			m := StartServer(t, name, "--repl-diskless-sync-delay", "0", "--shutdown-timeout", "60")
			r := stoppableReplica(t, m)
			waitConverged(t, m, r)
			c := Dial(t, m.Addr)
			assert.Equal(t, "-ERR No shutdown in progress.\r\n", c.Do("SHUTDOWN", "ABORT"))
			assert.Equal(t, "-ERR syntax error\r\n", c.Do("SHUTDOWN", "ABORT", "NOW"))
			require.NoError(t, r.Signal(syscall.SIGSTOP))
			require.Equal(t, "+OK\r\n", c.Do("SET", "k", "1"))

			first, second, writer := Dial(t, m.Addr), Dial(t, m.Addr), Dial(t, m.Addr)
			first.Send(Encode("SHUTDOWN", "SAVE"))
			waitLog(t, m, "Waiting for replicas before shutting down.")
			// A second SHUTDOWN, even NOW, joins the one under way.
			second.Send(Encode("SHUTDOWN", "NOW"))
			writer.Send(Encode("SET", "k", "2"))
			waitFor(t, func() bool { return blockedOnShutdown(c) == 2 })
			assert.Equal(t, "$1\r\n1\r\n", c.Do("GET", "k"))

			assert.Equal(t, "+OK\r\n", c.Do("SHUTDOWN", "ABORT"))
			assert.Equal(t, "-ERR Errors trying to SHUTDOWN. Check logs.\r\n", first.Read())
			assert.Equal(t, "-ERR Errors trying to SHUTDOWN. Check logs.\r\n", second.Read())
			assert.Equal(t, "+OK\r\n", writer.Read(), "the held write runs once the shutdown is aborted")
			assert.Equal(t, "-ERR No shutdown in progress.\r\n", c.Do("SHUTDOWN", "ABORT"))
			assert.Equal(t, "$1\r\n2\r\n", c.Do("GET", "k"))
			assert.Equal(t, "+OK\r\n", c.Do("SET", "k", "3"))
			assert.Equal(t, "0", infoField(t, c, "clients", "blocked_clients"))
			waitLog(t, m, "Shutdown manually aborted.")
			assert.False(t, m.Exited())

			// A signal's shutdown waits too, and is aborted the same way.
			require.NoError(t, m.Signal(syscall.SIGTERM))
			waitFor(t, func() bool { return strings.Count(m.Output(), "Waiting for replicas before shutting down.") == 2 })
			waitOutput(t, m, "Received SIGTERM scheduling shutdown...")
			assert.Equal(t, "+OK\r\n", c.Do("SHUTDOWN", "ABORT"))
			waitFor(t, func() bool { return strings.Count(m.Output(), "Shutdown manually aborted.") == 2 })
			assert.Equal(t, "+OK\r\n", c.Do("SET", "k", "4"))
			assert.False(t, m.Exited())

			// NOW does not wait for the stopped replica, and still
			// reports it.
			c.Send(Encode("SHUTDOWN", "NOW"))
			waitShutdown(t, m, 30*time.Second) // well under the 60 s timeout
			out := m.Output()
			assert.Equal(t, 2, strings.Count(out, "Waiting for replicas before shutting down."))
			assert.Contains(t, out, fmt.Sprintf("Lagging replica 127.0.0.1:%d reported offset ", r.Port))
			assert.Contains(t, out, "0 of 1 replicas are in sync when shutting down.")
		})
	}
}

// TestShutdownTimeoutZero: shutdown-timeout 0 does not wait for a
// stopped replica.
func TestShutdownTimeoutZero(t *testing.T) {
	for _, name := range shutdownMasters {
		t.Run(name, func(t *testing.T) {
			m := StartServer(t, name, "--repl-diskless-sync-delay", "0", "--shutdown-timeout", "0")
			r := stoppableReplica(t, m)
			waitConverged(t, m, r)
			require.NoError(t, r.Signal(syscall.SIGSTOP))
			c := Dial(t, m.Addr)
			require.Equal(t, "+OK\r\n", c.Do("SET", "k", "1"))
			c.Send(Encode("SHUTDOWN"))
			waitShutdown(t, m, 30*time.Second)
			out := m.Output()
			assert.NotContains(t, out, "Waiting for replicas before shutting down.")
			assert.Contains(t, out, "0 of 1 replicas are in sync when shutting down.")
		})
	}
}
