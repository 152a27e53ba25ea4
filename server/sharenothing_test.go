package server

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two servers in one process share nothing: blocked clients, the
// propagation stream, pub/sub, transactions and the command counters are
// each server's own. Both run the same workload at once, so that the race
// detector (make test runs this package under -race) sees any state the
// engine still keeps at package level.
func TestTwoServersShareNothing(t *testing.T) {
	a := startServer(t, "appendonly yes", "appendfsync always", "save \"\"")
	b := startServer(t, "save \"\"")

	// Blocked clients: a push on one server serves nobody on the other.
	waitA, waitB := dial(t, a.addr), dial(t, b.addr)
	waitA.send("BLPOP", "q", "5")
	waitB.send("BLPOP", "q", "5")
	waitUntil(t, func() bool { return a.BlockedClients() == 1 && b.BlockedClients() == 1 })
	require.Equal(t, ":1", dial(t, b.addr).do("RPUSH", "q", "from-b"))
	assert.Equal(t, "*2", waitB.read())
	assert.Equal(t, "q", waitB.read())
	assert.Equal(t, "from-b", waitB.read())
	_, err := waitA.line(200 * time.Millisecond)
	require.Error(t, err, "a's blocked client was served by b's push")
	require.Equal(t, ":1", dial(t, a.addr).do("RPUSH", "q", "from-a"))
	assert.Equal(t, "*2", waitA.read())
	assert.Equal(t, "q", waitA.read())
	assert.Equal(t, "from-a", waitA.read())

	// Pub/sub: a message published on one server reaches no subscriber of
	// the other.
	sub := dial(t, a.addr)
	sub.send("SUBSCRIBE", "ch")
	for range 3 {
		sub.read()
	}
	assert.Equal(t, ":0", dial(t, b.addr).do("PUBLISH", "ch", "m"))
	assert.Equal(t, ":1", dial(t, a.addr).do("PUBLISH", "ch", "m"))

	// The same workload on both at once: transactions, writes that
	// propagate (a has an AOF), blocking pops that time out, reads.
	var wg sync.WaitGroup
	workers := map[*testServer]int{a: 3, b: 2}
	for s, n := range workers {
		for w := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := dial(t, s.addr)
				for i := range 100 {
					key := "k:" + strconv.Itoa(w) + ":" + strconv.Itoa(i)
					c.send("MULTI")
					c.send("SET", key, "v", "PX", "50")
					c.send("INCR", "counter")
					c.send("EXEC")
					for range 3 {
						c.read()
					}
					c.read() // *2
					c.read() // +OK
					c.read() // :n
					c.do("GET", key)
				}
				c.do("BLPOP", "empty", "0.01")
			}()
		}
	}
	wg.Wait()
	assert.Equal(t, "300", dial(t, a.addr).do("GET", "counter"))
	assert.Equal(t, "200", dial(t, b.addr).do("GET", "counter"))

	// A write on b never reaches a's AOF.
	require.Equal(t, "+OK", dial(t, b.addr).do("SET", "only-on-b", "1"))
	require.Equal(t, "+OK", dial(t, a.addr).do("SET", "only-on-a", "1"))
	aof := readAOFDir(t, a.cfg.String("dir"))
	assert.Contains(t, aof, "only-on-a")
	assert.NotContains(t, aof, "only-on-b")

	// Command counters: each counts its own calls.
	statsA := infoField(t, dial(t, a.addr), "commandstats", "cmdstat_incr")
	statsB := infoField(t, dial(t, b.addr), "commandstats", "cmdstat_incr")
	assert.True(t, strings.HasPrefix(statsA, "calls=300,"), statsA)
	assert.True(t, strings.HasPrefix(statsB, "calls=200,"), statsB)
}

// BlockedClients is the number of clients waiting in a blocking command.
func (s *Server) BlockedClients() int {
	n := 0
	s.ks.Exec(func() { n = s.disp.BlockedClients() })
	return n
}

// waitUntil polls cond for up to five seconds.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// readAOFDir returns the contents of every file of the AOF directory.
func readAOFDir(t *testing.T, dir string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "appendonlydir", "*"))
	require.NoError(t, err)
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		b.Write(data)
	}
	return b.String()
}

// infoField returns the value of field in an INFO section, "" when absent.
func infoField(t *testing.T, c *client, section, field string) string {
	t.Helper()
	info := c.do("INFO", section)
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	return ""
}
