package tests

// The server family end to end: DBSIZE FLUSHDB FLUSHALL SWAPDB TIME CONFIG
// SLOWLOG LATENCY MEMORY INFO MONITOR SHUTDOWN, and the server's own
// behaviour (idle timeout, maxclients, signals, run-time limits).

import (
	"bufio"
	"context"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestServerDBCommandsDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("DBSIZE")
	d.Do("DBSIZE", "x")
	d.Do("MSET", "a", "1", "b", "2", "c", "3")
	d.Do("DBSIZE")
	for _, args := range [][]string{{"FLUSHDB", "foo"}, {"FLUSHDB", "async", "sync"}, {"FLUSHALL", "x"}, {"FLUSHALL", "SYNC", "x"}} {
		d.Do(args...)
	}
	d.Do("DBSIZE")
	d.Do("FLUSHDB", "ASYNC")
	d.Do("DBSIZE")
	d.Do("SET", "a", "1")
	d.Do("FLUSHDB", "sync")
	d.Do("FLUSHDB")
	d.Do("DBSIZE")

	d.Do("SET", "a", "0")
	d.Do("SELECT", "9")
	d.Do("SET", "a", "9")
	d.Do("FLUSHALL", "async")
	d.Do("DBSIZE")
	d.Do("SELECT", "0")
	d.Do("GET", "a")

	for _, args := range [][]string{{"SWAPDB"}, {"SWAPDB", "0"}, {"SWAPDB", "0", "abc"}, {"SWAPDB", "abc", "0"},
		{"SWAPDB", "0", "16"}, {"SWAPDB", "-1", "0"}, {"SWAPDB", "4294967296", "0"}, {"SWAPDB", "0", "1.0"}} {
		d.Do(args...)
	}
	d.Do("SET", "k", "in0")
	d.Do("SWAPDB", "0", "0")
	d.Do("GET", "k")
	d.Do("SWAPDB", "0", "4")
	d.Do("GET", "k")
	d.Do("DBSIZE")
	d.Do("SELECT", "4")
	d.Do("GET", "k")
	d.Do("SWAPDB", "4", "0")
	d.Do("GET", "k")
	d.Do("SELECT", "0")
	d.Do("GET", "k")
	d.Do("FLUSHALL")
}

func TestServerTimeShape(t *testing.T) {
	d := NewDiff(t)
	d.Do("TIME", "x")
	d.DoLen("TIME")
	raw := d.Z.Do("TIME")
	m := regexp.MustCompile(`^\*2\r\n\$\d+\r\n(\d+)\r\n\$\d+\r\n(\d+)\r\n$`).FindStringSubmatch(raw)
	require.NotNil(t, m, raw)
	sec, _ := strconv.ParseInt(m[1], 10, 64)
	usec, _ := strconv.ParseInt(m[2], 10, 64)
	assert.InDelta(t, time.Now().Unix(), sec, 5)
	assert.Less(t, usec, int64(1_000_000))
}

func TestServerConfigDiff(t *testing.T) {
	d := NewDiff(t)
	for _, name := range []string{"maxclients", "timeout", "databases", "hz", "slowlog-log-slower-than",
		"slowlog-max-len", "latency-monitor-threshold", "latency-tracking", "proto-max-bulk-len",
		"client-query-buffer-limit", "loglevel", "maxmemory", "maxmemory-policy", "requirepass", "MAXCLIENTS", "nosuch"} {
		d.Do("CONFIG", "GET", name)
	}
	d.DoSorted("CONFIG", "GET", "slowlog-*")
	for _, args := range [][]string{
		{"CONFIG"}, {"CONFIG", "FOO"}, {"CONFIG", "HELP"}, {"config", "help"}, {"CONFIG", "HELP", "x"},
		{"CONFIG", "GET"}, {"CONFIG", "SET"}, {"CONFIG", "SET", "maxclients"}, {"CONFIG", "SET", "nosuch", "1"},
		{"CONFIG", "SET", "maxclients", "abc"}, {"CONFIG", "SET", "a", "b", "c"},
		{"CONFIG", "SET", "hz", "10", "hz", "10"}, {"CONFIG", "SET", "loglevel", "loud"},
		{"CONFIG", "REWRITE", "x"}, {"CONFIG", "RESETSTAT", "x"},
	} {
		d.Do(args...)
	}
	// Run-time directives take and show their new values.
	d.Do("CONFIG", "SET", "slowlog-max-len", "64", "latency-monitor-threshold", "0")
	d.Do("CONFIG", "GET", "slowlog-max-len")
	d.Do("CONFIG", "SET", "slowlog-max-len", "128")
	d.Do("CONFIG", "RESETSTAT")
}

func TestServerSlowlogDiff(t *testing.T) {
	d := NewDiff(t)
	for _, args := range [][]string{
		{"SLOWLOG"}, {"SLOWLOG", "FOO"}, {"SLOWLOG", "HELP"}, {"slowlog", "help"}, {"SLOWLOG", "GET", "abc"},
		{"SLOWLOG", "GET", "-2"}, {"SLOWLOG", "GET", "1", "2"}, {"slowlog", "get", "1", "2"}, {"SLOWLOG", "LEN", "x"},
		{"SLOWLOG", "RESET", "x"}, {"SLOWLOG", "RESET"}, {"SLOWLOG", "GET", "0"},
	} {
		d.Do(args...)
	}
}

// slowlogEntry is one parsed SLOWLOG GET entry.
type slowlogEntry struct {
	id, ts, dur int64
	args        []string
	addr, name  string
}

// parseSlowlog parses a SLOWLOG GET reply.
func parseSlowlog(t *testing.T, raw string) []slowlogEntry {
	t.Helper()
	rd := bufio.NewReader(strings.NewReader(raw))
	line := func() string {
		l, err := rd.ReadString('\n')
		require.NoError(t, err, raw)
		return strings.TrimSuffix(l, "\r\n")
	}
	num := func(prefix byte) int64 {
		l := line()
		require.Equal(t, prefix, l[0], raw)
		n, err := strconv.ParseInt(l[1:], 10, 64)
		require.NoError(t, err)
		return n
	}
	bulk := func() string {
		n := num('$')
		buf := make([]byte, n+2)
		_, err := ioReadFull(rd, buf)
		require.NoError(t, err)
		return string(buf[:n])
	}
	var out []slowlogEntry
	for n := num('*'); n > 0; n-- {
		require.Equal(t, int64(6), num('*'))
		e := slowlogEntry{id: num(':'), ts: num(':'), dur: num(':')}
		for a := num('*'); a > 0; a-- {
			e.args = append(e.args, bulk())
		}
		e.addr, e.name = bulk(), bulk()
		out = append(out, e)
	}
	return out
}

func TestServerSlowlogEntries(t *testing.T) {
	long := strings.Repeat("v", 300)
	many := []string{"MSET"}
	for i := 0; i < 20; i++ {
		many = append(many, "k"+strconv.Itoa(i), "v")
	}
	results := map[string][]slowlogEntry{}
	onBothConfigured(t, []string{"--slowlog-log-slower-than", "0", "--slowlog-max-len", "3"}, func(t *testing.T, p *Proc) {
		c := Dial(t, p.Addr)
		require.Equal(t, "+OK\r\n", c.Do("CLIENT", "SETNAME", "slow"))
		require.Equal(t, "+OK\r\n", c.Do("SLOWLOG", "RESET"))
		c.Do("SET", "k", long)
		c.Do(many...)
		c.Do("AUTH", "default", "secret")
		entries := parseSlowlog(t, c.Do("SLOWLOG", "GET"))
		require.Len(t, entries, 3)
		assert.Equal(t, ":3\r\n", c.Do("SLOWLOG", "LEN"), "trimmed to slowlog-max-len")
		for i, e := range entries {
			assert.Equal(t, "slow", e.name)
			assert.Regexp(t, `^127\.0\.0\.1:\d+$`, e.addr)
			assert.InDelta(t, time.Now().Unix(), e.ts, 10)
			assert.GreaterOrEqual(t, e.dur, int64(0))
			if i > 0 {
				assert.Equal(t, entries[i-1].id-1, e.id, "newest first")
			}
		}
		all := parseSlowlog(t, c.Do("SLOWLOG", "GET", "-1"))
		assert.Len(t, all, 3)
		assert.Len(t, parseSlowlog(t, c.Do("SLOWLOG", "GET", "1")), 1)
		results[p.Name] = entries
	})
	z, r := results["zredis"], results["redis"]
	if r == nil {
		return
	}
	require.Len(t, z, 3)
	for i := range r {
		diffCases.Add(1)
		assert.Equal(t, r[i].args, z[i].args, "entry %d: arguments as Redis logs them (truncated, redacted)", i)
	}
}

func TestServerLatencyDiff(t *testing.T) {
	d := NewDiff(t)
	for _, args := range [][]string{
		{"LATENCY"}, {"LATENCY", "FOO"}, {"LATENCY", "HELP"}, {"latency", "help"}, {"LATENCY", "LATEST", "x"},
		{"LATENCY", "HISTORY"}, {"LATENCY", "HISTORY", "a", "b"}, {"LATENCY", "HISTORY", "nosuch"},
		{"LATENCY", "GRAPH"}, {"LATENCY", "GRAPH", "nosuch"}, {"LATENCY", "RESET", "nosuch", "other"},
		{"LATENCY", "DOCTOR", "x"}, {"LATENCY", "HISTOGRAM", "nosuch"}, {"LATENCY", "HISTOGRAM", "nosuch|x"},
	} {
		d.Do(args...)
	}
	// With the monitor off and nothing recorded, DOCTOR says so.
	d.DoBoth("LATENCY", "RESET")
	d.Do("LATENCY", "LATEST")
	d.Do("LATENCY", "DOCTOR")
	// Histograms: the same commands, the same shape.
	d.DoBoth("CONFIG", "RESETSTAT")
	d.DoBoth("PING")
	d.DoBoth("ECHO", "x")
	for _, args := range [][]string{{"LATENCY", "HISTOGRAM", "ping", "echo"}, {"LATENCY", "HISTOGRAM", "PING"}} {
		z, r := d.Z.Do(args...), d.R.Do(args...)
		diffCases.Add(1)
		strip := regexp.MustCompile(`(histogram_usec\r\n)[*%]\d+\r\n(:\d+\r\n)*`)
		assert.Equal(t, strip.ReplaceAllString(r, "$1"), strip.ReplaceAllString(z, "$1"), "%q", args)
	}
}

func TestServerLatencyMonitor(t *testing.T) {
	onBothConfigured(t, []string{"--latency-monitor-threshold", "1"}, func(t *testing.T, p *Proc) {
		c := Dial(t, p.Addr)
		// zredis has no DEBUG SLEEP: a long MSET is the slow command,
		// repeated until one takes a millisecond.
		args := []string{"MSET"}
		for i := 0; i < 200000; i++ {
			args = append(args, "k"+strconv.Itoa(i), "v")
		}
		var latest string
		for try := 0; try < 20; try++ {
			c.Do(args...)
			if latest = c.Do("LATENCY", "LATEST"); latest != "*0\r\n" {
				break
			}
		}
		require.NotEqual(t, "*0\r\n", latest, "no spike recorded")
		// A busy machine may add a fast-command event of its own.
		assert.Regexp(t, `^\*[12]\r\n(\*4\r\n\$12\r\nfast-command\r\n(:\d+\r\n){3})?\*4\r\n\$7\r\ncommand\r\n(:\d+\r\n){3}(\*4\r\n\$12\r\nfast-command\r\n(:\d+\r\n){3})?$`, latest)
		assert.Regexp(t, `^\*\d+\r\n\*2\r\n:\d+\r\n:\d+\r\n`, c.Do("LATENCY", "HISTORY", "command"))
		assert.Contains(t, c.Do("LATENCY", "DOCTOR"), "1. command: ")
		assert.Contains(t, c.Do("LATENCY", "GRAPH", "command"), "command - high ")
		assert.Equal(t, ":1\r\n", c.Do("LATENCY", "RESET", "command"))
	})
}

func TestServerMemoryDiff(t *testing.T) {
	d := NewDiff(t)
	for _, args := range [][]string{
		{"MEMORY"}, {"MEMORY", "FOO"}, {"MEMORY", "HELP"}, {"memory", "help"}, {"MEMORY", "USAGE"},
		{"MEMORY", "USAGE", "nokey"}, {"MEMORY", "USAGE", "nokey", "SAMPLES"}, {"MEMORY", "USAGE", "nokey", "SAMPLES", "abc"},
		{"MEMORY", "USAGE", "nokey", "SAMPLES", "-1"}, {"MEMORY", "USAGE", "nokey", "foo", "1"},
		{"MEMORY", "USAGE", "nokey", "samples", "1", "samples", "0"}, {"MEMORY", "STATS", "x"}, {"MEMORY", "DOCTOR", "x"},
		{"MEMORY", "DOCTOR"}, {"MEMORY", "PURGE"},
	} {
		d.Do(args...)
	}
	d.Do("SET", "k", "v")
	d.Do("SET", "kk", strings.Repeat("a", 100))
	d.Do("SET", "n", "12345")
	d.Do("MEMORY", "USAGE", "k")
	d.Do("MEMORY", "USAGE", "kk")
	d.Do("MEMORY", "USAGE", "n")
	d.Do("MEMORY", "USAGE", "n", "SAMPLES", "0")
	z := d.Z.Do("MEMORY", "STATS")
	r := d.R.Do("MEMORY", "STATS")
	keys := func(raw string) []string {
		return regexp.MustCompile(`\$\d+\r\n([a-z][a-z0-9.\-]*)\r\n`).FindAllString(raw, -1)
	}
	names := func(raw string) []string {
		var out []string
		for _, k := range keys(raw) {
			out = append(out, strings.Split(k, "\r\n")[1])
		}
		return out
	}
	diffCases.Add(1)
	assert.Equal(t, names(r), names(z), "MEMORY STATS fields")
}

// infoFields maps each INFO section title to its field names in order.
func infoFields(raw string) map[string][]string {
	out := map[string][]string{}
	section := ""
	for _, l := range strings.Split(raw, "\r\n") {
		switch {
		case strings.HasPrefix(l, "# "):
			section = l[2:]
			out[section] = []string{}
		case strings.Contains(l, ":"):
			name := l[:strings.Index(l, ":")]
			out[section] = append(out[section], name)
		}
	}
	return out
}

// TestInfoFieldsLikeRedis: every field redis-server prints in INFO
// everything, zredis prints too, in the same order (zredis may add its
// own after them).
func TestInfoFieldsLikeRedis(t *testing.T) {
	d := NewDiff(t)
	d.DoBoth("SET", "k", "v")
	d.DoBoth("GET", "k")
	d.DoBoth("GET")
	z, r := infoFields(d.Z.Do("INFO", "everything")), infoFields(d.R.Do("INFO", "everything"))
	for section, want := range r {
		diffCases.Add(1)
		got, ok := z[section]
		if !assert.True(t, ok, "section %s missing", section) {
			continue
		}
		var fixed, gotFixed []string
		for _, f := range want {
			if !regexp.MustCompile(`^(cmdstat_|errorstat_|latency_percentiles_usec_|db\d+$)`).MatchString(f) {
				fixed = append(fixed, f)
			}
		}
		for _, f := range got {
			// expired_subkeys: 7.4's, for hash fields (docs/commands.md).
			if !regexp.MustCompile(`^(cmdstat_|errorstat_|latency_percentiles_usec_|db\d+$|expired_subkeys$)`).MatchString(f) {
				gotFixed = append(gotFixed, f)
			}
		}
		require.GreaterOrEqual(t, len(gotFixed), len(fixed), "section %s", section)
		assert.Equal(t, fixed, gotFixed[:len(fixed)], "section %s: Redis's fields in Redis's order", section)
	}
	assert.Equal(t, len(r), len(z), "the same sections")
	assert.Contains(t, z["Commandstats"], "cmdstat_get")
	assert.Contains(t, z["Errorstats"], "errorstat_ERR")
	assert.Contains(t, z["Keyspace"], "db0")
}

// The fields redis_exporter and redis-cli --stat read.
var exporterFields = []string{"redis_version", "redis_mode", "os", "arch_bits", "process_id", "run_id", "tcp_port",
	"uptime_in_seconds", "connected_clients", "blocked_clients", "maxclients", "used_memory", "used_memory_rss",
	"used_memory_peak", "used_memory_lua", "total_system_memory", "maxmemory", "mem_fragmentation_ratio",
	"loading", "rdb_changes_since_last_save", "rdb_bgsave_in_progress", "rdb_last_save_time",
	"rdb_last_bgsave_status", "aof_enabled", "total_connections_received", "total_commands_processed",
	"instantaneous_ops_per_sec", "total_net_input_bytes", "total_net_output_bytes", "instantaneous_input_kbps",
	"instantaneous_output_kbps", "rejected_connections", "expired_keys", "evicted_keys", "keyspace_hits",
	"keyspace_misses", "pubsub_channels", "pubsub_patterns", "latest_fork_usec", "total_error_replies",
	"role", "connected_slaves", "master_repl_offset", "repl_backlog_size", "used_cpu_sys", "used_cpu_user",
	"used_cpu_sys_children", "used_cpu_user_children", "cluster_enabled"}

func TestInfoExporterFields(t *testing.T) {
	d := NewDiff(t)
	info := d.Z.Do("INFO", "all")
	for _, f := range exporterFields {
		assert.Regexp(t, "\r\n"+regexp.QuoteMeta(f)+":[^\r\n]*\r\n", info, f)
	}
}

func TestInfoSectionsDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("INFO", "foo")
	d.Do("INFO", "foo", "bar")
	d.Do("INFO", "modules")
	d.Do("INFO", "MODULES")
	d.Do("INFO", "cluster")
	d.Do("INFO", "keyspace")
	d.Do("INFO", "cluster", "keyspace", "nosuch")
	d.Do("MSET", "a", "1", "b", "2")
	d.Do("SELECT", "5")
	d.Do("SET", "c", "3")
	d.Do("SELECT", "0")
	// Each keyspace line ends with 7.4's subexpiry (hashes with field
	// TTLs), which 7.0 does not print.
	diffCases.Add(1)
	assert.Equal(t, d.R.Do("INFO", "keyspace"), withoutSubexpiry(d.Z.Do("INFO", "keyspace")))
	assert.Contains(t, d.Z.Do("INFO", "keyspace"), "db5:keys=1,expires=0,avg_ttl=0,subexpiry=0\r\n")
	for _, args := range [][]string{{"INFO"}, {"INFO", "default"}, {"INFO", "all"}, {"INFO", "everything"},
		{"INFO", "server", "CLIENTS"}, {"INFO", "commandstats", "keyspace"}} {
		diffCases.Add(1)
		titles := func(raw string) string { return strings.Join(regexp.MustCompile(`# \w+`).FindAllString(raw, -1), ",") }
		assert.Equal(t, titles(d.R.Do(args...)), titles(d.Z.Do(args...)), "%q", args)
	}
	// Errors by code, counted from a reset.
	d.DoBoth("CONFIG", "RESETSTAT")
	d.DoBoth("NOSUCH")
	d.DoBoth("GET")
	d.DoBoth("SET", "s", "x")
	d.DoBoth("INCR", "s")
	d.DoBoth("SELECT", "99")
	d.DoBoth("HELLO", "4")
	d.Do("INFO", "errorstats")
	d.DoBoth("CONFIG", "RESETSTAT")
	d.Do("INFO", "errorstats")
}

func TestInfoStatsCounters(t *testing.T) {
	p := StartZredis(t, "--maxclients", "3")
	c := Dial(t, p.Addr)
	stat := func(name string) int64 {
		m := regexp.MustCompile(`\r\n` + name + `:(\d+)\r\n`).FindStringSubmatch(c.Do("INFO", "all"))
		require.NotNil(t, m, name)
		n, _ := strconv.ParseInt(m[1], 10, 64)
		return n
	}
	// The readiness probe may have seen -LOADING on a busy machine: an
	// error reply that counts.
	errorsBefore := stat("total_error_replies")
	before := stat("total_commands_processed")
	c.Do("SET", "k", "v")
	c.Do("GET", "k")
	c.Do("GET", "nokey")
	c.Do("SET", "e", "v", "PX", "1")
	time.Sleep(50 * time.Millisecond)
	c.Do("GET", "e")
	c.Do("NOSUCH")
	assert.Equal(t, before+6, stat("total_commands_processed"), "the first INFO and five commands: neither the unknown one nor the running INFO count")
	assert.Equal(t, int64(1), stat("keyspace_hits"))
	assert.Equal(t, int64(2), stat("keyspace_misses"))
	assert.Equal(t, int64(1), stat("expired_keys"))
	assert.Equal(t, errorsBefore+1, stat("total_error_replies"))
	assert.Greater(t, stat("total_net_input_bytes"), int64(100))
	assert.Greater(t, stat("total_net_output_bytes"), int64(100))

	// maxclients: the readiness probe and c, then one more, then refusals.
	Dial(t, p.Addr).Do("PING")
	var refused int
	for i := 0; i < 3; i++ {
		nc := Dial(t, p.Addr)
		// A refused connection gets the error at once (on a busy machine,
		// soon); an accepted one gets nothing for this long.
		out, _ := nc.ReadErr(5 * time.Second)
		if out == "-ERR max number of clients reached\r\n" {
			refused++
		}
	}
	assert.GreaterOrEqual(t, refused, 1)
	assert.Equal(t, int64(refused), stat("rejected_connections"))
	assert.Contains(t, c.Do("INFO", "clients"), "\r\nmaxclients:3\r\n")

	// Instantaneous ops under load.
	stop := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(stop) {
		c.Do("PING")
	}
	assert.Greater(t, stat("instantaneous_ops_per_sec"), int64(0))
}

func TestInfoRedisCliStat(t *testing.T) {
	bin := requireRedisCLI(t)
	p := StartZredis(t)
	Dial(t, p.Addr).Do("SET", "k", "v")
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	// redis-cli buffers its output when it is not a terminal, and --stat
	// never ends: unbuffer it so that what it printed before the timeout
	// is there.
	stdbuf := RequireTool(t, "stdbuf")
	out, _ := exec.CommandContext(ctx, stdbuf, "-oL", bin, "-p", strconv.Itoa(p.Port), "--stat", "-i", "0.2").Output()
	s := string(out)
	assert.Contains(t, s, "------- data ------")
	assert.Regexp(t, `(?m)^1\s+\S+\s+\d+\s+\d+\s+\d+ \(\+\d+\)`, s, "keys, memory, clients, blocked, requests")
}

func TestMonitorDiff(t *testing.T) {
	lines := map[string][]string{}
	onBoth(t, func(t *testing.T, p *Proc) {
		m := Dial(t, p.Addr)
		require.Equal(t, "+OK\r\n", m.Do("MONITOR"))
		c := Dial(t, p.Addr)
		for _, args := range [][]string{
			{"SET", "k", "a\"b\\c\n\x01\xff "}, {"NOSUCH", "x"}, {"GET"}, {"AUTH", "pw"}, {"AUTH", "u", "pw"},
			{"HELLO", "2", "AUTH", "u", "pw"}, {"CLIENT", "LIST"}, {"CONFIG", "GET", "port"}, {"SELECT", "3"},
			{"ping"}, {"INFO", "server"}, {"SLOWLOG", "LEN"}, {"DBSIZE"},
		} {
			c.Do(args...)
		}
		var got []string
		for len(got) < 8 {
			l, err := m.ReadErr(10 * time.Second)
			require.NoError(t, err, "after %q", got)
			got = append(got, l)
		}
		re := regexp.MustCompile(`^\+\d+\.\d{6} \[(\d+) 127\.0\.0\.1:\d+\] (.*)\r\n$`)
		var norm []string
		for _, l := range got {
			mm := re.FindStringSubmatch(l)
			require.NotNil(t, mm, l)
			norm = append(norm, mm[1]+" "+mm[2])
		}
		lines[p.Name] = norm
		// MONITOR again: ignored without a reply; the stream goes on.
		m.Send(Encode("MONITOR"))
		c.Do("PING")
		l, err := m.ReadErr(10 * time.Second)
		require.NoError(t, err)
		assert.Contains(t, l, `"PING"`)
	})
	if lines["redis"] != nil {
		diffCases.Add(1)
		assert.Equal(t, lines["redis"], lines["zredis"])
	}
}

func TestShutdownErrorsDiff(t *testing.T) {
	d := NewDiff(t)
	for _, args := range [][]string{{"SHUTDOWN", "foo"}, {"SHUTDOWN", "ABORT"}, {"SHUTDOWN", "NOSAVE", "SAVE"},
		{"SHUTDOWN", "ABORT", "NOW"}, {"shutdown", "abort", "force"}, {"SHUTDOWN", "SAVE", "NOSAVE", "NOW"},
		{"MONITOR", "x"}} {
		d.Do(args...)
	}
}

func TestShutdownExitsZero(t *testing.T) {
	for _, args := range [][]string{{"SHUTDOWN"}, {"SHUTDOWN", "NOSAVE"}, {"shutdown", "save", "now", "force"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			p := StartZredis(t)
			other := Dial(t, p.Addr)
			require.Equal(t, "+PONG\r\n", other.Do("PING"))
			c := Dial(t, p.Addr)
			c.Send(Encode(args...))
			out, err := c.ReadErr(10 * time.Second)
			assert.Error(t, err, "the connection closes without a reply")
			assert.Equal(t, "", out)
			code, ok := p.Wait(15 * time.Second)
			require.True(t, ok, "no exit after %q", args)
			assert.Equal(t, 0, code, p.Output())
			_, err = other.ReadErr(5 * time.Second)
			assert.Error(t, err, "every connection closes")
			assert.Contains(t, p.Output(), "User requested shutdown...")
		})
	}
}

// SIGTERM and SIGINT stop the server with status 0 once the commands it
// was running are done: a pipeline in flight gets whole replies, never a
// partial one, and its writes are not half applied per command.
func TestServerSignalFinishesInFlight(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			p := StartZredis(t)
			c := Dial(t, p.Addr)
			var req []byte
			const n = 20000
			for i := 0; i < n; i++ {
				req = append(req, Encode("INCR", "counter")...)
			}
			go c.nc.Write(req)
			first, err := c.ReadErr(10 * time.Second)
			require.NoError(t, err)
			require.Equal(t, ":1\r\n", first)
			require.NoError(t, p.Signal(sig))
			got := 1
			for {
				out, err := c.ReadErr(10 * time.Second)
				if err != nil {
					require.Equal(t, "", out, "no partial reply")
					break
				}
				got++
				require.Equal(t, ":"+strconv.Itoa(got)+"\r\n", out)
			}
			assert.LessOrEqual(t, got, n)
			code, ok := p.Wait(15 * time.Second)
			require.True(t, ok)
			assert.Equal(t, 0, code, p.Output())
			assert.Contains(t, p.Output(), "Received "+map[syscall.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT"}[sig]+" scheduling shutdown...")
		})
	}
}

func TestServerIdleTimeoutDiff(t *testing.T) {
	onBothConfigured(t, []string{"--timeout", "1"}, func(t *testing.T, p *Proc) {
		idle := Dial(t, p.Addr)
		require.Equal(t, "+PONG\r\n", idle.Do("PING"))
		busy := Dial(t, p.Addr)
		mon := Dial(t, p.Addr)
		require.Equal(t, "+OK\r\n", mon.Do("MONITOR"))
		start := time.Now()
		closed := make(chan time.Duration, 1)
		go func() {
			idle.ReadErr(12 * time.Second)
			closed <- time.Since(start)
		}()
		for i := 0; i < 25; i++ {
			require.Equal(t, "+PONG\r\n", busy.Do("PING"), "an active client stays")
			time.Sleep(100 * time.Millisecond)
		}
		select {
		case d := <-closed:
			// timeout 1 and a cron at hz 10: closed about 1-2 s in; the
			// bound leaves room for a busy machine.
			assert.Less(t, d, 8*time.Second)
		case <-time.After(10 * time.Second):
			t.Fatal("idle client not closed")
		}
		mon.Send(Encode("PING"))
		for {
			l, err := mon.ReadErr(10 * time.Second)
			require.NoError(t, err, "a MONITOR client is exempt")
			if l == "+PONG\r\n" {
				break
			}
		}
	})
}

func TestServerRuntimeLimitsDiff(t *testing.T) {
	onBoth(t, func(t *testing.T, p *Proc) {
		admin := Dial(t, p.Addr)
		require.Equal(t, "+OK\r\n", admin.Do("CONFIG", "SET", "proto-max-bulk-len", "1mb"))
		ex := rawExchange(t, p.Addr, bigSet(2<<20, true)[:4096], false)
		assert.Equal(t, exchange{Out: protoErr("invalid bulk length"), Closed: true}, ex)
		require.Equal(t, "+OK\r\n", admin.Do("CONFIG", "SET", "proto-max-bulk-len", "512mb"))
		ex = rawExchange(t, p.Addr, bigSet(2<<20, true), true)
		assert.Equal(t, exchange{Out: "+OK\r\n"}, ex)
		require.Equal(t, "+OK\r\n", admin.Do("CONFIG", "SET", "client-query-buffer-limit", "1mb"))
		ex = rawExchange(t, p.Addr, bigSet(2<<20, false), false)
		assert.Equal(t, exchange{Out: "", Closed: true}, ex, "query buffer limit closes silently")
		assert.Equal(t, "+PONG\r\n", admin.Do("PING"))
	})
}

func TestServerMaxclientsAtRuntime(t *testing.T) {
	onBoth(t, func(t *testing.T, p *Proc) {
		admin := Dial(t, p.Addr)
		require.Equal(t, "+PONG\r\n", admin.Do("PING"))
		require.Equal(t, "+OK\r\n", admin.Do("CONFIG", "SET", "maxclients", "1"))
		ex := rawExchange(t, p.Addr, nil, false)
		assert.Equal(t, exchange{Out: "-ERR max number of clients reached\r\n", Closed: true}, ex)
		require.Equal(t, "+OK\r\n", admin.Do("CONFIG", "SET", "maxclients", "100"))
		assert.Equal(t, "+PONG\r\n", Dial(t, p.Addr).Do("PING"))
	})
}

// CLIENT PAUSE WRITE holds back an EXEC whose queue writes, and lets an
// EXEC of reads through, as redis-server 7.0 does.
func TestPauseWriteHoldsWritingExec(t *testing.T) {
	p := StartZredis(t)
	admin := Dial(t, p.Addr)
	reader, writer := Dial(t, p.Addr), Dial(t, p.Addr)
	require.Equal(t, "+OK\r\n", reader.Do("MULTI"))
	require.Equal(t, "+QUEUED\r\n", reader.Do("GET", "k"))
	require.Equal(t, "+OK\r\n", writer.Do("MULTI"))
	require.Equal(t, "+QUEUED\r\n", writer.Do("SET", "k", "v"))
	require.Equal(t, "+OK\r\n", admin.Do("CLIENT", "PAUSE", "100000", "WRITE"))
	require.Equal(t, "*1\r\n$-1\r\n", reader.Do("EXEC"), "a read-only EXEC runs during the pause")
	writer.Send(Encode("EXEC"))
	_, err := writer.ReadErr(300 * time.Millisecond)
	require.Error(t, err, "EXEC of a write must wait for the pause")
	require.Equal(t, "+OK\r\n", admin.Do("CLIENT", "UNPAUSE"))
	require.Equal(t, "*1\r\n+OK\r\n", writer.Read())
}

// latencyEvents lists the events of a LATENCY LATEST reply, each
// checked for its shape: name, time, latest and all-time maximum.
func latencyEvents(t *testing.T, reply string) []string {
	t.Helper()
	entry := regexp.MustCompile(`\*4\r\n\$\d+\r\n([a-z-]+)\r\n:\d+\r\n:\d+\r\n:\d+\r\n`)
	body := reply[strings.Index(reply, "\r\n")+2:]
	var names []string
	for _, m := range entry.FindAllStringSubmatch(body, -1) {
		names = append(names, m[1])
	}
	assert.Equal(t, "", entry.ReplaceAllString(body, ""), "every entry has LATENCY LATEST's shape")
	sort.Strings(names)
	return names
}

// TestServerLatencyExpireEvents: with latency-monitor-threshold set, an
// active expiry that takes that long is recorded as "expire-cycle" (the
// pass, expire.c's activeExpireCycle) and "expire-del" (the key, db.c's
// deleteExpiredKeyAndPropagate), as in Redis's "LATENCY of expire events
// are correctly collected"; with the threshold at 0 nothing is. Freeing
// a 200,000-field hash takes Redis tens of milliseconds; zredis frees
// nothing under the lock, and the expensive part of its expiry is the
// expiry stream's message, which encodes the value: so zredis runs with
// a stream endpoint (nobody listening: the message waits in the outbox).
func TestServerLatencyExpireEvents(t *testing.T) {
	scenario := func(t *testing.T, p *Proc) []string {
		c := Dial(t, p.Addr)
		var obs []string
		for _, threshold := range []string{"10", "0"} {
			require.Equal(t, "+OK\r\n", c.Do("CONFIG", "SET", "latency-monitor-threshold", threshold))
			c.Do("LATENCY", "RESET")
			require.Equal(t, "$-1\r\n", c.Do("EVAL", "for i = 1, tonumber(ARGV[1]) do redis.call('HSET', KEYS[1], i, i) end", "1", "big", "200000"))
			require.Equal(t, ":1\r\n", c.Do("PEXPIRE", "big", "50"))
			for deadline := time.Now().Add(20 * time.Second); c.Do("DBSIZE") != ":0\r\n"; time.Sleep(20 * time.Millisecond) {
				require.True(t, time.Now().Before(deadline), "the key never expired")
			}
			var expiry []string
			for _, e := range latencyEvents(t, c.Do("LATENCY", "LATEST")) {
				if strings.HasPrefix(e, "expire-") {
					expiry = append(expiry, e)
				}
			}
			obs = append(obs, "threshold "+threshold+": "+strings.Join(expiry, " "))
			for _, e := range expiry {
				assert.Regexp(t, `^\*[1-9]\d*\r\n\*2\r\n:\d+\r\n:\d+\r\n`, c.Do("LATENCY", "HISTORY", e), e)
			}
		}
		return obs
	}
	want := []string{"threshold 10: expire-cycle expire-del", "threshold 0: "}
	t.Run("zredis", func(t *testing.T) {
		assert.Equal(t, want, scenario(t, StartZredis(t, "--expiry-zmq-endpoints", zmqEndpoint(t))))
	})
	t.Run("redis", func(t *testing.T) {
		diffCases.Add(1)
		assert.Equal(t, want, scenario(t, StartRedis(t)))
	})
}

// withoutSubexpiry is an INFO keyspace reply (a RESP2 bulk or a RESP3
// verbatim string) without 7.4's ",subexpiry=N" fields.
func withoutSubexpiry(raw string) string {
	_, body, ok := strings.Cut(raw, "\r\n")
	if !ok {
		return raw
	}
	body = regexp.MustCompile(`,subexpiry=\d+`).ReplaceAllString(strings.TrimSuffix(body, "\r\n"), "")
	return raw[:1] + strconv.Itoa(len(body)) + "\r\n" + body + "\r\n"
}
