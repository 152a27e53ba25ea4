package commands

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/engine"
)

func TestServerCommands(t *testing.T) {
	wrongArgs := func(name string) string { return replyErr(engine.ErrWrongArgs(name)) }
	tests := []struct {
		name  string
		steps []step
	}{
		{"dbsize flushdb flushall", []step{
			{argv("DBSIZE"), replyInt(0)},
			{argv("SET", "a", "1"), replyOK},
			{argv("SET", "b", "1"), replyOK},
			{argv("DBSIZE"), replyInt(2)},
			{argv("FLUSHDB", "foo"), replyErr(engine.ErrSyntax)},
			{argv("FLUSHDB", "async", "sync"), replyErr(engine.ErrSyntax)},
			{argv("FLUSHDB", "SYNC"), replyOK},
			{argv("DBSIZE"), replyInt(0)},
			{argv("SET", "a", "1"), replyOK},
			{argv("SELECT", "1"), replyOK},
			{argv("SET", "a", "1"), replyOK},
			{argv("FLUSHALL", "x"), replyErr(engine.ErrSyntax)},
			{argv("FLUSHALL", "ASYNC"), replyOK},
			{argv("DBSIZE"), replyInt(0)},
			{argv("SELECT", "0"), replyOK},
			{argv("DBSIZE"), replyInt(0)},
			{argv("DBSIZE", "x"), wrongArgs("dbsize")},
		}},
		{"swapdb", []step{
			{argv("SET", "a", "1"), replyOK},
			{argv("SWAPDB", "0", "abc"), replyErr(engine.ErrSecondDBIndex)},
			{argv("SWAPDB", "abc", "0"), replyErr(engine.ErrFirstDBIndex)},
			{argv("SWAPDB", "4294967296", "0"), replyErr(engine.ErrFirstDBIndex)},
			{argv("SWAPDB", "0", "16"), replyErr(engine.ErrDBIndex)},
			{argv("SWAPDB", "-1", "0"), replyErr(engine.ErrDBIndex)},
			{argv("SWAPDB", "0", "0"), replyOK},
			{argv("SWAPDB", "0", "5"), replyOK},
			{argv("DBSIZE"), replyInt(0)},
			{argv("SELECT", "5"), replyOK},
			{argv("GET", "a"), replyBulk("1")},
		}},
		{"time", []step{
			{argv("TIME"), replyBulks("1700000000", "0")},
			{argv("TIME", "x"), wrongArgs("time")},
		}},
		{"shutdown parsing", []step{
			{argv("SHUTDOWN", "foo"), replyErr(engine.ErrSyntax)},
			{argv("SHUTDOWN", "NOSAVE", "SAVE"), replyErr(engine.ErrSyntax)},
			{argv("SHUTDOWN", "ABORT", "NOW"), replyErr(engine.ErrSyntax)},
			{argv("SHUTDOWN", "ABORT"), replyErr(engine.ErrNoShutdown)},
		}},
		{"config", []step{
			{argv("CONFIG", "GET", "maxclients"), replyBulks("maxclients", "10000")},
			{argv("CONFIG", "GET", "nosuch"), replyArray()},
			{argv("CONFIG", "SET", "maxclients", "abc"), replyErr("ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument couldn't be parsed into an integer")},
			{argv("CONFIG", "SET", "nosuch", "1"), replyErr("ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'")},
			{argv("CONFIG", "SET", "a", "b", "c"), replyErr(engine.ErrSyntax)},
			{argv("CONFIG", "SET", "maxclients", "100"), replyOK},
			{argv("CONFIG", "GET", "maxclients"), replyBulks("maxclients", "100")},
			{argv("CONFIG", "GET"), wrongArgs("config|get")},
			{argv("CONFIG", "FOO"), replyErr("ERR unknown subcommand 'FOO'. Try CONFIG HELP.")},
			{argv("CONFIG", "REWRITE"), replyErr("ERR The server is running without a config file")},
		}},
		{"slowlog errors", []step{
			{argv("SLOWLOG", "GET", "abc"), replyErr(engine.ErrSlowlogCount)},
			{argv("SLOWLOG", "GET", "-2"), replyErr(engine.ErrSlowlogCount)},
			{argv("SLOWLOG", "GET", "1", "2"), replyErr("ERR unknown subcommand or wrong number of arguments for 'GET'. Try SLOWLOG HELP.")},
			{argv("SLOWLOG", "GET"), replyArray()},
			{argv("SLOWLOG", "LEN"), replyInt(0)},
			{argv("SLOWLOG", "RESET"), replyOK},
			{argv("SLOWLOG", "LEN", "x"), wrongArgs("slowlog|len")},
		}},
		{"latency", []step{
			{argv("LATENCY", "LATEST"), replyArray()},
			{argv("LATENCY", "HISTORY", "command"), replyArray()},
			{argv("LATENCY", "RESET"), replyInt(0)},
			{argv("LATENCY", "RESET", "a", "b"), replyInt(0)},
			{argv("LATENCY", "GRAPH", "foo"), replyErr("ERR No samples available for event 'foo'")},
			{argv("LATENCY", "HISTOGRAM", "nosuch"), replyArray()},
		}},
		{"memory", []step{
			{argv("MEMORY", "USAGE", "nokey"), replyNull},
			{argv("MEMORY", "USAGE", "nokey", "SAMPLES"), replyErr(engine.ErrSyntax)},
			{argv("MEMORY", "USAGE", "nokey", "SAMPLES", "abc"), replyErr(engine.ErrNotInteger)},
			{argv("MEMORY", "USAGE", "nokey", "SAMPLES", "-1"), replyErr(engine.ErrSyntax)},
			{argv("MEMORY", "USAGE", "nokey", "foo", "1"), replyErr(engine.ErrSyntax)},
			{argv("MEMORY", "USAGE", "nokey", "samples", "1", "samples", "0"), replyNull},
			// The sizes redis-server 7.0 reports for these keys.
			{argv("SET", "k", "v"), replyOK},
			{argv("MEMORY", "USAGE", "k"), replyInt(64)},
			{argv("SET", "kk", strings.Repeat("a", 100)), replyOK},
			{argv("MEMORY", "USAGE", "kk"), replyInt(160)},
			{argv("SET", "n", "12345"), replyOK},
			{argv("MEMORY", "USAGE", "n"), replyInt(48)},
			{argv("MEMORY", "MALLOC-STATS"), replyBulk("Stats not supported for the current allocator")},
			{argv("MEMORY", "DOCTOR", "x"), wrongArgs("memory|doctor")},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { runSteps(t, tc.steps) })
	}
}

func TestFlushCountsChanges(t *testing.T) {
	e := newTestEnv(t)
	e.run("FLUSHALL")
	assert.Equal(t, 1, e.dirty(), "an empty FLUSHALL still propagates")
	e.run("SET", "a", "1")
	e.run("SET", "b", "1")
	e.run("FLUSHDB")
	assert.Equal(t, 2, e.dirty())
}

func TestShutdownReachesServer(t *testing.T) {
	e := newTestEnv(t)
	assert.Equal(t, replyErr(engine.ErrSyntax), e.run("SHUTDOWN", "NOSAVE", "SAVE"))
	assert.Empty(t, e.Srv.shutdowns)
	assert.Equal(t, "", e.run("SHUTDOWN", "NOSAVE", "now", "FORCE"), "no reply: the connection closes")
	assert.True(t, e.Client.CloseAfterReply)
	require.Len(t, e.Srv.shutdowns, 1)
	assert.Equal(t, engine.ShutdownOptions{NoSave: true, Now: true, Force: true}, e.Srv.shutdowns[0])
	assert.False(t, e.Client.Blocked, "unblocked once the shutdown's outcome is known")
}

func TestShutdownAbortReachesServer(t *testing.T) {
	e := newTestEnv(t)
	assert.Equal(t, replyErr(engine.ErrNoShutdown), e.run("SHUTDOWN", "ABORT"))
	e.Srv.waiting = true
	assert.Equal(t, replyOK, e.run("shutdown", "abort"))
	assert.False(t, e.Srv.waiting)
	assert.Equal(t, replyErr(engine.ErrNoShutdown), e.run("SHUTDOWN", "ABORT"))
	assert.Empty(t, e.Srv.shutdowns)
}

func TestMonitorCommand(t *testing.T) {
	e := newTestEnv(t)
	assert.Equal(t, replyOK, e.run("MONITOR"))
	assert.True(t, e.Client.Monitor)
	assert.Equal(t, "", e.run("MONITOR"), "a second MONITOR is ignored without a reply")
	assert.Len(t, e.Srv.monitors, 1)
}

// recordCalls makes the test environment record calls as the server
// does (slow log, latency monitor, histograms).
func recordCalls(e *testEnv) {
	e.D.AfterCall = append(e.D.AfterCall, e.Srv.stats.AfterCall)
}

func TestSlowlogRecordsCalls(t *testing.T) {
	e := newTestEnv(t)
	recordCalls(e)
	st := &e.Srv.stats
	st.SlowLog.SlowerThan, st.SlowLog.MaxLen = 0, 128
	e.run("CLIENT", "SETNAME", "me")
	e.run("SET", "k", strings.Repeat("x", 200))
	args := []string{"DEL"}
	for i := 0; i < 40; i++ {
		args = append(args, "key"+strconv.Itoa(i))
	}
	e.run(args...)
	require.Equal(t, replyInt(3), e.run("SLOWLOG", "LEN"))

	entries := st.SlowLog.Newest(-1)
	require.Len(t, entries, 4, "SLOWLOG LEN itself was logged")
	del, set := entries[1], entries[2]
	assert.Equal(t, int64(2), del.ID)
	assert.Len(t, del.Args, 32)
	assert.Equal(t, "key29", string(del.Args[30]))
	assert.Equal(t, "... (10 more arguments)", string(del.Args[31]))
	assert.Equal(t, strings.Repeat("x", 128)+"... (72 more bytes)", string(set.Args[2]))
	assert.Equal(t, "127.0.0.1:50000", set.Addr)
	assert.Equal(t, "me", set.Name)

	out := e.run("SLOWLOG", "GET", "1")
	assert.True(t, strings.HasPrefix(out, "*1\r\n*6\r\n:3\r\n:"), out)
	assert.True(t, strings.HasSuffix(out, "*2\r\n$7\r\nSLOWLOG\r\n$3\r\nLEN\r\n$15\r\n127.0.0.1:50000\r\n$2\r\nme\r\n"), out)
	assert.Equal(t, replyOK, e.run("SLOWLOG", "RESET"))
	assert.Equal(t, replyInt(1), e.run("SLOWLOG", "LEN"), "SLOWLOG RESET was logged after the reset")

	st.SlowLog.SlowerThan = -1
	e.run("SLOWLOG", "RESET")
	e.run("PING")
	assert.Equal(t, replyInt(0), e.run("SLOWLOG", "LEN"), "disabled")
}

func TestSlowLogRing(t *testing.T) {
	l := engine.SlowLog{MaxLen: 3}
	for i := 0; i < 5; i++ {
		l.Push([][]byte{[]byte("cmd" + strconv.Itoa(i))}, 100, int64(i), "a:1", "")
	}
	require.Equal(t, 3, l.Len())
	got := l.Newest(-1)
	assert.Equal(t, []int64{4, 3, 2}, []int64{got[0].ID, got[1].ID, got[2].ID})
	assert.Equal(t, "cmd4", string(got[0].Args[0]))
	assert.Len(t, l.Newest(2), 2)
	assert.Len(t, l.Newest(0), 0)

	// A smaller maximum applies from the next entry, as in Redis.
	l.MaxLen = 1
	assert.Equal(t, 3, l.Len())
	l.Push([][]byte{[]byte("x")}, 100, 1, "a:1", "")
	assert.Equal(t, 1, l.Len())
	assert.Equal(t, int64(5), l.Newest(1)[0].ID)

	l.MaxLen = 0
	l.Push([][]byte{[]byte("y")}, 100, 1, "a:1", "")
	assert.Equal(t, 0, l.Len())
	l.MaxLen = 5
	l.Reset()
	l.Push([][]byte{[]byte("z")}, 100, 1, "a:1", "")
	assert.Equal(t, int64(7), l.Newest(1)[0].ID, "IDs survive a reset")
}

// The slow log copies arguments: they alias the connection's buffer.
func TestSlowLogCopiesArgs(t *testing.T) {
	var l engine.SlowLog
	l.MaxLen = 10
	buf := []byte("GETkey")
	l.Push([][]byte{buf[:3], buf[3:]}, 1, 1, "a:1", "")
	copy(buf, "######")
	assert.Equal(t, "GET", string(l.Newest(1)[0].Args[0]))
	assert.Equal(t, "key", string(l.Newest(1)[0].Args[1]))
}

func TestLatencyMonitor(t *testing.T) {
	var m engine.LatencyMonitor
	m.AddIfNeeded("command", 50, 1000)
	assert.Empty(t, m.Events(), "disabled at threshold 0")
	m.Threshold = 10
	m.AddIfNeeded("command", 5, 1000)
	assert.Empty(t, m.Events(), "below the threshold")
	m.AddIfNeeded("command", 20, 1000)
	m.AddIfNeeded("command", 40, 1000)
	m.AddIfNeeded("command", 30, 1000)
	m.AddIfNeeded("command", 15, 1002)
	m.AddIfNeeded("fast-command", 12, 1003)
	assert.Equal(t, []string{"command", "fast-command"}, m.Events())
	assert.Equal(t, []engine.LatencySample{{Time: 1000, Latency: 40}, {Time: 1002, Latency: 15}}, m.History("command"), "one sample per second, its worst")
	last, worst := m.Latest("command")
	assert.Equal(t, engine.LatencySample{Time: 1002, Latency: 15}, last)
	assert.Equal(t, int64(40), worst)
	for i := int64(0); i < engine.LatencySeriesLen+10; i++ {
		m.Add("fast-command", i+1, 2000+i)
	}
	h := m.History("fast-command")
	require.Len(t, h, engine.LatencySeriesLen)
	assert.Equal(t, int64(2010), h[0].Time, "oldest kept first")
	assert.Equal(t, 1, m.Reset("fast-command", "nosuch"))
	assert.Equal(t, 1, m.Reset())
	assert.Empty(t, m.Events())
}

func TestLatencyCommands(t *testing.T) {
	e := newTestEnv(t)
	st := &e.Srv.stats
	out := e.run("LATENCY", "DOCTOR")
	assert.Contains(t, out, "I'm sorry, Dave, I can't do that. Latency monitoring is disabled")
	st.Latency.Threshold = 100
	assert.Contains(t, e.run("LATENCY", "DOCTOR"), "Dave, no latency spike was observed")
	now := time.Now().Unix()
	st.Latency.Add("command", 250, now-5)
	st.Latency.Add("command", 150, now)
	assert.Equal(t, replyArray(replyArray(replyBulk("command"), replyInt(now), replyInt(150), replyInt(250))), e.run("LATENCY", "LATEST"))
	assert.Equal(t, replyArray(replyArray(replyInt(now-5), replyInt(250)), replyArray(replyInt(now), replyInt(150))),
		e.run("LATENCY", "HISTORY", "command"))
	doc := e.run("LATENCY", "DOCTOR")
	assert.Contains(t, doc, "1. command: 2 latency spikes (average 200ms, mean deviation 50ms, period 2.50 sec). Worst all time event 250ms.")
	graph := e.run("LATENCY", "GRAPH", "command")
	assert.Contains(t, graph, "command - high 250 ms, low 150 ms (all time high 250 ms)\n"+strings.Repeat("-", 80)+"\n")
	assert.Contains(t, graph, "# \n| \n| \n|_\n", "the high sample fills the column, the low one the bottom")
	assert.Equal(t, replyInt(1), e.run("LATENCY", "RESET"))
}

func TestLatencyGraphLabels(t *testing.T) {
	g := latencyGraph("e", []engine.LatencySample{{Time: 100, Latency: 1}, {Time: 160, Latency: 5}, {Time: 200, Latency: 9}}, 9, 220)
	lines := strings.Split(g, "\n")
	require.GreaterOrEqual(t, len(lines), 9)
	assert.Equal(t, "e - high 9 ms, low 1 ms (all time high 9 ms)", lines[0])
	assert.Equal(t, "  #", lines[2])
	assert.Equal(t, "_||", lines[5])
	assert.Equal(t, "   ", lines[6], "blank line above the labels")
	assert.Equal(t, "212", lines[7], "labels read downwards: 2m, 1m, 20s")
	assert.Equal(t, "mm0", lines[8])
	assert.Equal(t, "  s", lines[9])
}

func TestHistogram(t *testing.T) {
	var h engine.Histogram
	for i := 0; i < 3; i++ {
		h.Record(500)
	}
	h.Record(3000)
	h.Record(3000)
	assert.Equal(t, int64(5), h.Total())
	assert.Equal(t, [][2]int64{{1, 3}, {4, 5}}, h.CDF())
	assert.Equal(t, int64(501), h.ValueAtPercentile(50), "the highest value equivalent to 500")
	assert.Equal(t, int64(3007), h.ValueAtPercentile(99))

	var u engine.Histogram
	for us := int64(1); us <= 100; us++ {
		u.Record(us * 1000)
	}
	p50 := u.ValueAtPercentile(50)
	assert.InDelta(t, 50_000, p50, 500, "2 significant digits")
	cdf := u.CDF()
	assert.Equal(t, []int64{1, 2, 4, 8, 16, 33, 66, 132}, func() []int64 {
		var b []int64
		for _, p := range cdf {
			b = append(b, p[0])
		}
		return b
	}(), "Redis's bucket labels")
	assert.Equal(t, int64(100), cdf[len(cdf)-1][1])

	var big engine.Histogram
	big.Record(5e9)
	big.Record(0)
	assert.Equal(t, int64(2), big.Total(), "values outside 1 ns..1 s are clamped")
}

func TestLatencyHistogramCommand(t *testing.T) {
	e := newTestEnv(t)
	recordCalls(e)
	e.Srv.stats.LatencyTracking = true
	e.run("PING")
	e.run("PING")
	e.run("CONFIG", "GET", "port")
	out := e.run("LATENCY", "HISTOGRAM", "ping", "config", "nosuch")
	assert.True(t, strings.HasPrefix(out, "*4\r\n$4\r\nping\r\n*4\r\n$5\r\ncalls\r\n:2\r\n$14\r\nhistogram_usec\r\n"), out)
	assert.Contains(t, out, "$10\r\nconfig|get\r\n*4\r\n$5\r\ncalls\r\n:1\r\n")
	all := e.run("LATENCY", "HISTOGRAM")
	assert.Contains(t, all, "$4\r\nping\r\n")
	assert.Equal(t, replyOK, e.run("CONFIG", "RESETSTAT"))
	assert.Equal(t, "*2\r\n$16\r\nconfig|resetstat\r\n", e.run("LATENCY", "HISTOGRAM")[:27], "only calls since the reset")
}

func TestAllocSize(t *testing.T) {
	for _, c := range [][2]int64{{1, 8}, {8, 8}, {9, 16}, {17, 32}, {21, 32}, {33, 48}, {104, 112}, {128, 128},
		{129, 160}, {200, 224}, {257, 320}, {1025, 1280}} {
		assert.Equal(t, c[1], allocSize(c[0]), "allocSize(%d)", c[0])
	}
}

func TestMemoryStatsShape(t *testing.T) {
	e := newTestEnv(t)
	e.run("SET", "a", "1")
	out := e.run("MEMORY", "STATS")
	require.True(t, strings.HasPrefix(out, "*56\r\n$14\r\npeak.allocated\r\n:"), out)
	assert.Contains(t, out, "$4\r\ndb.0\r\n*6\r\n$23\r\noverhead.hashtable.main\r\n")
	assert.Contains(t, out, "$10\r\nkeys.count\r\n:1\r\n")
	assert.Contains(t, out, "$19\r\nfragmentation.bytes\r\n:")
}
