package tests

// What SLOWLOG and MONITOR show of a call, against redis-server 7.0.15:
// the arguments the client sent, not the form the command is propagated
// as (GEOADD's ZADD, EXPIRE's PEXPIREAT, SPOP's SREM or DEL ...), and a
// blocked call once it is served (blocked.c updateStatsOnUnblock), with
// its command statistics and latency histogram.

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slowlogSteps run on one connection; "@block cmd..." sends a blocking
// command from a second connection and waits until it blocks, "@served"
// reads its reply.
var slowlogSteps = [][]string{
	// Rewritten for propagation: logged and monitored as sent.
	{"geoadd", "cool-cities", "-122.33207", "47.60621", "Seattle"},
	{"GEOADD", "cool-cities", "NX", "CH", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"},
	{"geoadd", "cool-cities", "1", "2"}, // a syntax error, after no rewrite
	{"sadd", "set", "a", "b", "c", "d", "e"}, {"spop", "set", "10"}, {"sadd", "set", "a"}, {"spop", "set"},
	{"set", "A", "5"}, {"getset", "a", "5"}, {"INCRBYFLOAT", "A", "1.0"}, {"hincrbyfloat", "h", "f", "1.5"},
	{"set", "k", "v", "EX", "100"}, {"setex", "k", "100", "v"}, {"psetex", "k", "100000", "v"},
	{"set", "k", "v", "PX", "100000", "GET"},
	{"expire", "k", "100"}, {"pexpire", "k", "100000", "gt"}, {"expireat", "k", "2000000000"},
	{"getex", "k", "EX", "100"}, {"getex", "k", "PERSIST"}, {"getdel", "k"}, {"set", "k", "v"}, {"expire", "k", "-1"},
	{"rpush", "l", "a", "b", "c", "d", "e"}, {"lmpop", "1", "l", "left"}, {"blpop", "l", "0"},
	{"blmove", "l", "d", "right", "left", "0"}, {"brpoplpush", "d", "l", "0"},
	{"blmpop", "0", "1", "l", "right", "count", "5"},
	{"zadd", "z", "1", "a", "2", "b", "3", "c"}, {"zmpop", "1", "z", "min"}, {"bzpopmin", "z", "0"},
	{"bzmpop", "0", "1", "z", "max"},
	{"xadd", "s", "1-1", "f", "v"}, {"xgroup", "create", "s", "g", "0"},
	{"xreadgroup", "group", "g", "c", "count", "1", "streams", "s", ">"},
	{"xclaim", "s", "g", "c2", "0", "1-1"}, {"xautoclaim", "s", "g", "c3", "0", "0"},
	// Blocked, then served: logged when served, after the command that
	// served them.
	{"@block", "blpop", "q", "0"}, {"lpush", "q", "foo"}, {"@served"},
	{"@block", "BLMOVE", "q2", "d2", "left", "right", "0"}, {"rpush", "q2", "x"}, {"@served"},
	{"@block", "bzpopmin", "zq", "0"}, {"zadd", "zq", "1", "a"}, {"@served"},
	{"@block", "xreadgroup", "group", "g", "c", "block", "0", "streams", "s", ">"}, {"xadd", "s", "2-1", "f", "v"},
	{"@served"},
	{"@block", "blpop", "q3", "0"}, {"multi"}, {"lpush", "q3", "foo"}, {"exec"}, {"@served"},
	// Timed out: never logged.
	{"@block", "blpop", "q4", "0.05"}, {"@served"},
}

func TestSlowlogMonitorOriginalArgsDiff(t *testing.T) {
	slow := map[string][][]string{}
	mon := map[string][]string{}
	onBothConfigured(t, []string{"--slowlog-log-slower-than", "0", "--slowlog-max-len", "1000"}, func(t *testing.T, p *Proc) {
		m := Dial(t, p.Addr)
		require.Equal(t, "+OK\r\n", m.Do("MONITOR"))
		c, blocker := Dial(t, p.Addr), Dial(t, p.Addr)
		require.Equal(t, "+OK\r\n", c.Do("SLOWLOG", "RESET"))
		for _, step := range slowlogSteps {
			switch step[0] {
			case "@block":
				blocker.Send(Encode(step[1:]...))
				waitBlocked(t, c, 1)
			case "@served":
				blocker.Read()
			default:
				c.Do(step...)
			}
		}
		slow[p.Name] = slowlogArgs(parseSlowlog(t, c.Do("SLOWLOG", "GET", "-1")))
		require.Equal(t, "$3\r\nend\r\n", c.Do("PING", "end"))
		mon[p.Name] = monitorLines(t, m, `"PING" "end"`)
	})
	if slow["redis"] == nil {
		return
	}
	diffCases.Add(2)
	assert.Equal(t, slow["redis"], slow["zredis"], "SLOWLOG GET arguments")
	assert.Equal(t, mon["redis"], mon["zredis"], "MONITOR lines")
}

// slowlogArgs are the arguments of SLOWLOG GET's entries, oldest first,
// but for INFO's (waitBlocked polls as many times as it takes) and with
// CLIENT UNBLOCK's client ID as <id>.
func slowlogArgs(entries []slowlogEntry) [][]string {
	var out [][]string
	for i := len(entries) - 1; i >= 0; i-- {
		args := entries[i].args
		switch {
		case len(args) > 0 && args[0] == "INFO":
			continue
		case len(args) > 2 && args[0] == "CLIENT" && args[1] == "UNBLOCK":
			args[2] = "<id>"
		}
		out = append(out, args)
	}
	return out
}

// monitorLines reads a MONITOR connection's lines, their arguments only,
// up to the one whose arguments are end, left out. INFO is left out too:
// the waits for a blocked client send it.
func monitorLines(t *testing.T, m *Conn, end string) []string {
	t.Helper()
	re := regexp.MustCompile(`^\+\d+\.\d{6} \[\d+ [^\]]+\] (.*)\r\n$`)
	var lines []string
	for {
		l, err := m.ReadErr(10 * time.Second)
		require.NoError(t, err, "after %q", lines)
		mm := re.FindStringSubmatch(l)
		require.NotNil(t, mm, l)
		switch {
		case mm[1] == end:
			return lines
		case !strings.HasPrefix(mm[1], `"INFO"`):
			lines = append(lines, mm[1])
		}
	}
}

// TestBlockedCallStatsDiff: a blocked call is counted once, when it
// blocks; when it is served, its time, histogram and slow log entry are
// recorded (updateStatsOnUnblock); when it times out, nothing more is.
// CLIENT UNBLOCK accounts for it as failed whatever the reason, with a
// slow log entry without arguments (Redis 7.0.15 has reset the client
// by then), and its ERROR reply counts in errorstats and as a failure of
// CLIENT UNBLOCK itself.
func TestBlockedCallStatsDiff(t *testing.T) {
	type result struct {
		stats map[string]string // command -> calls, failed and rejected calls
		hist  map[string]string // command -> LATENCY HISTOGRAM calls
		errs  string            // INFO errorstats
		slow  [][]string        // SLOWLOG GET arguments, oldest first
	}
	cmds := []string{"blpop", "brpop", "bzpopmin", "lpush", "zadd", "client|unblock"}
	results := map[string]result{}
	onBothConfigured(t, []string{"--slowlog-log-slower-than", "0", "--latency-tracking", "yes"}, func(t *testing.T, p *Proc) {
		c, blocker := Dial(t, p.Addr), Dial(t, p.Addr)
		id := strings.TrimSuffix(strings.TrimPrefix(blocker.Do("CLIENT", "ID"), ":"), "\r\n")
		require.Equal(t, "+OK\r\n", c.Do("CONFIG", "RESETSTAT"))
		require.Equal(t, "+OK\r\n", c.Do("SLOWLOG", "RESET"))
		block := func(args ...string) {
			blocker.Send(Encode(args...))
			waitBlocked(t, c, 1)
		}
		block("blpop", "q", "0")
		c.Do("lpush", "q", "x")
		blocker.Read()
		block("bzpopmin", "z", "0")
		c.Do("zadd", "z", "1", "a")
		blocker.Read()
		block("blpop", "q", "0.05") // times out
		blocker.Read()
		block("brpop", "q", "0")
		require.Equal(t, ":1\r\n", c.Do("CLIENT", "UNBLOCK", id, "ERROR"))
		blocker.Read()
		block("brpop", "q", "0")
		require.Equal(t, ":1\r\n", c.Do("CLIENT", "UNBLOCK", id, "TIMEOUT"))
		blocker.Read()
		block("blpop", "q", "0")
		require.Equal(t, ":1\r\n", c.Do("CLIENT", "UNBLOCK", id))
		blocker.Read()

		r := result{slow: slowlogArgs(parseSlowlog(t, c.Do("SLOWLOG", "GET", "-1")))}
		r.stats, r.hist = map[string]string{}, map[string]string{}
		statRe := regexp.MustCompile(`calls=(\d+),usec=(\d+),usec_per_call=[\d.]+,rejected_calls=(\d+),failed_calls=(\d+)`)
		for _, cmd := range cmds {
			line := infoField(t, c, "commandstats", "cmdstat_"+cmd)
			mm := statRe.FindStringSubmatch(line)
			require.NotNil(t, mm, "%s: %q", cmd, line)
			r.stats[cmd] = "calls=" + mm[1] + " rejected=" + mm[3] + " failed=" + mm[4]
			h := regexp.MustCompile(`calls\r\n:(\d+)\r\n`).FindStringSubmatch(c.Do("LATENCY", "HISTOGRAM", cmd))
			if h != nil {
				r.hist[cmd] = h[1]
			}
		}
		r.errs = c.Do("INFO", "errorstats")
		results[p.Name] = r
	})
	z, r := results["zredis"], results["redis"]
	if r.stats == nil {
		return
	}
	diffCases.Add(4)
	assert.Equal(t, r.stats, z.stats, "INFO commandstats")
	assert.Equal(t, r.hist, z.hist, "LATENCY HISTOGRAM calls")
	assert.Equal(t, r.errs, z.errs, "INFO errorstats")
	assert.Equal(t, r.slow, z.slow, "SLOWLOG GET arguments")
}
