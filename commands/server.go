package commands

import (
	"fmt"
	"math/bits"
	"net"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// Server commands (server.c, db.c, config.c, slowlog.c, latency.c,
// object.c). INFO is in info.go; COMMAND in cmd_command.go.
func init() {
	const adm = engine.Admin | engine.NoScript | engine.Loading | engine.Stale
	const slowlog = engine.Admin | engine.Loading | engine.Stale
	register(
		&engine.Command{Name: "dbsize", Arity: 1, Flags: engine.ReadOnly | engine.Fast, ACL: "@keyspace", Group: "server", Run: dbsizeCommand},
		&engine.Command{Name: "flushdb", Arity: -1, Flags: engine.Write, ACL: "@keyspace @dangerous", Group: "server", Run: flushdbCommand},
		&engine.Command{Name: "flushall", Arity: -1, Flags: engine.Write, ACL: "@keyspace @dangerous", Group: "server", Run: flushallCommand},
		&engine.Command{Name: "swapdb", Arity: 3, Flags: engine.Write | engine.Fast, ACL: "@keyspace @dangerous", Group: "server", Run: swapdbCommand},
		&engine.Command{Name: "info", Arity: -1, Flags: engine.Loading | engine.Stale, ACL: "@dangerous", Group: "server", Run: infoCommand},
		&engine.Command{Name: "time", Arity: 1, Flags: engine.Loading | engine.Stale | engine.Fast, Group: "server", Run: timeCommand},
		&engine.Command{Name: "monitor", Arity: 1, Flags: adm, Group: "server", Run: monitorCommand},
		&engine.Command{Name: "shutdown", Arity: -1, Flags: adm | engine.NoMulti | engine.AllowBusy, Group: "server", Run: shutdownCommand},

		&engine.Command{Name: "config", Arity: -2, Group: "server"},
		&engine.Command{Name: "config|get", Arity: -3, Flags: adm, Run: configGetCommand},
		&engine.Command{Name: "config|help", Arity: 2, Flags: engine.Loading | engine.Stale, Run: configHelpCommand},
		&engine.Command{Name: "config|resetstat", Arity: 2, Flags: adm, Run: configResetstatCommand},
		&engine.Command{Name: "config|rewrite", Arity: 2, Flags: adm, Run: configRewriteCommand},
		&engine.Command{Name: "config|set", Arity: -4, Flags: adm, Run: configSetCommand},

		&engine.Command{Name: "slowlog", Arity: -2, Group: "server"},
		&engine.Command{Name: "slowlog|get", Arity: -2, Flags: slowlog, Run: slowlogGetCommand},
		&engine.Command{Name: "slowlog|help", Arity: 2, Flags: engine.Loading | engine.Stale, Run: slowlogHelpCommand},
		&engine.Command{Name: "slowlog|len", Arity: 2, Flags: slowlog, Run: slowlogLenCommand},
		&engine.Command{Name: "slowlog|reset", Arity: 2, Flags: slowlog, Run: slowlogResetCommand},

		&engine.Command{Name: "latency", Arity: -2, Group: "server"},
		&engine.Command{Name: "latency|doctor", Arity: 2, Flags: adm, Run: latencyDoctorCommand},
		&engine.Command{Name: "latency|graph", Arity: 3, Flags: adm, Run: latencyGraphCommand},
		&engine.Command{Name: "latency|help", Arity: 2, Flags: engine.Loading | engine.Stale, Run: latencyHelpCommand},
		&engine.Command{Name: "latency|histogram", Arity: -2, Flags: adm, Run: latencyHistogramCommand},
		&engine.Command{Name: "latency|history", Arity: 3, Flags: adm, Run: latencyHistoryCommand},
		&engine.Command{Name: "latency|latest", Arity: 2, Flags: adm, Run: latencyLatestCommand},
		&engine.Command{Name: "latency|reset", Arity: -2, Flags: adm, Run: latencyResetCommand},

		&engine.Command{Name: "memory", Arity: -2, Group: "server"},
		&engine.Command{Name: "memory|doctor", Arity: 2, Run: memoryDoctorCommand},
		&engine.Command{Name: "memory|help", Arity: 2, Flags: engine.Loading | engine.Stale, Run: memoryHelpCommand},
		&engine.Command{Name: "memory|malloc-stats", Arity: 2, Run: memoryMallocStatsCommand},
		&engine.Command{Name: "memory|purge", Arity: 2, Run: memoryPurgeCommand},
		&engine.Command{Name: "memory|stats", Arity: 2, Run: memoryStatsCommand},
		&engine.Command{Name: "memory|usage", Arity: -3, Flags: engine.ReadOnly, FirstKey: 2, LastKey: 2, KeyStep: 1, Run: memoryUsageCommand},
	)
}

// subcommandSyntax replies addReplySubcommandSyntaxError's error.
func subcommandSyntax(c *engine.Ctx) {
	c.Error(engine.ErrSubcommandSyntax(string(c.Args[1]), strings.ToUpper(string(c.Args[0]))))
}

// ---- DBSIZE FLUSHDB FLUSHALL SWAPDB TIME -----------------------------------

func dbsizeCommand(c *engine.Ctx) { c.W.Int(int64(c.DB.Len())) }

// parseFlushFlags accepts FLUSHDB/FLUSHALL's optional ASYNC or SYNC. Both
// flush at once: dropping a database's shards is O(shards), and the
// memory is reclaimed by the collector in the background either way.
// What Redis would free in the background is counted (flushFreed).
func parseFlushFlags(c *engine.Ctx) bool {
	switch {
	case len(c.Args) == 1:
		return true
	case len(c.Args) == 2 && (engine.EqualFold(c.Args[1], "sync") || engine.EqualFold(c.Args[1], "async")):
		return true
	}
	c.Error(engine.ErrSyntax)
	return false
}

// flushdbCommand empties the selected database. It always counts as a
// change, so that it is propagated even when the database was empty.
func flushdbCommand(c *engine.Ctx) {
	if !parseFlushFlags(c) {
		return
	}
	n := c.DB.Len()
	flushFreed(c, n)
	c.DB.Flush()
	c.Dirty(max(n, 1))
	c.W.OK()
}

// flushFreed counts in lazyfreed_objects what a FLUSHDB or FLUSHALL of n
// keys frees in Redis's background thread when it is asynchronous: each
// database's keys (emptyDbAsync), and the tracking table when large
// (trackingInvalidateKeysOnFlush). Before the flush.
func flushFreed(c *engine.Ctx, n int) {
	if !flushAsync(c, 1) {
		return
	}
	c.KS.LazyFreed(int64(n))
	if t := c.D.Tracking; t != nil {
		c.KS.LazyFreed(int64(t.FlushFreed()))
	}
}

func flushallCommand(c *engine.Ctx) {
	if !parseFlushFlags(c) {
		return
	}
	n := 0
	for i := 0; i < c.KS.NumDBs(); i++ {
		n += c.KS.DB(i).Len()
	}
	flushFreed(c, n)
	c.KS.FlushAll()
	c.Dirty(max(n, 1))
	c.W.OK()
}

// parseDBIndex parses a database number as a C int (getIntFromObject).
func parseDBIndex(b []byte) (int64, bool) {
	n, ok := engine.ParseInt(b)
	return n, ok && n == int64(int32(n))
}

func swapdbCommand(c *engine.Ctx) {
	if c.D.Cluster != nil {
		c.Error("ERR SWAPDB is not allowed in cluster mode")
		return
	}
	a, ok := parseDBIndex(c.Args[1])
	if !ok {
		c.Error(engine.ErrFirstDBIndex)
		return
	}
	b, ok := parseDBIndex(c.Args[2])
	if !ok {
		c.Error(engine.ErrSecondDBIndex)
		return
	}
	n := int64(c.KS.NumDBs())
	if a < 0 || a >= n || b < 0 || b >= n {
		c.Error(engine.ErrDBIndex)
		return
	}
	if a != b {
		c.KS.SwapDB(int(a), int(b))
		// Clients blocked in either database wake to its new keys.
		c.DBReady(int(a))
		c.DBReady(int(b))
	}
	c.Dirty(1)
	c.W.OK()
}

// infoCommand is INFO [section ...] (the engine assembles it).
func infoCommand(c *engine.Ctx) {
	c.W.Verbatim(string(engine.AppendInfo(nil, c, engine.ParseInfoSelection(c.Args[1:]))))
}

// timeCommand replies the server time as [seconds, microseconds], from the
// keyspace's clock so that a test clock governs TIME as it governs expiry.
func timeCommand(c *engine.Ctx) {
	var sec, usec int64
	if _, system := c.KS.Clock().(keyspace.SystemClock); system {
		now := time.Now()
		sec, usec = now.Unix(), int64(now.Nanosecond()/1000)
	} else {
		ms := c.KS.Clock().NowMs()
		sec, usec = ms/1000, ms%1000*1000
	}
	c.W.Array(2)
	c.W.BulkInt(sec)
	c.W.BulkInt(usec)
}

// ---- MONITOR SHUTDOWN -------------------------------------------------------

// monitorCommand turns the connection into a MONITOR stream. A second
// MONITOR is ignored without a reply, as in Redis.
func monitorCommand(c *engine.Ctx) {
	if c.Client.Monitor {
		return
	}
	c.W.OK()
	c.Client.Monitor = true
	c.Srv.Monitor(c.Client)
}

// shutdownCommand is SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]. The
// client is blocked (flag b), off the lock, while the server waits for
// lagging replicas and makes the final save: on success it gets no reply
// (the server closes every connection and exits); a failed save or a
// SHUTDOWN ABORT answers an error and the server goes on serving.
func shutdownCommand(c *engine.Ctx) {
	var o engine.ShutdownOptions
	for _, a := range c.Args[1:] {
		switch {
		case engine.EqualFold(a, "nosave"):
			o.NoSave = true
		case engine.EqualFold(a, "save"):
			o.Save = true
		case engine.EqualFold(a, "now"):
			o.Now = true
		case engine.EqualFold(a, "force"):
			o.Force = true
		case engine.EqualFold(a, "abort"):
			o.Abort = true
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	if (o.Abort && (o.NoSave || o.Save || o.Now || o.Force)) || (o.NoSave && o.Save) {
		c.Error(engine.ErrSyntax)
		return
	}
	if o.Abort {
		if c.Srv.AbortShutdown() {
			c.W.OK()
		} else {
			c.Error(engine.ErrNoShutdown)
		}
		return
	}
	if busy := c.D.BusyScript(); busy != "" {
		// A script past busy-reply-threshold: only NOSAVE stops the
		// server, and the script with it, its writes not kept.
		if !o.NoSave {
			c.Error(busy)
			return
		}
		// At once: no wait for the replicas that SHUTDOWN ABORT could
		// cancel after the script's writes were dropped.
		o.Now = true
		c.D.StopScriptForShutdown()
	}
	wait := c.Srv.Shutdown(o)
	c.Client.Blocked = true
	c.Offload(func() {
		err := wait()
		c.KS.Exec(func() {
			c.Client.Blocked = false
			if err != "" {
				c.Error(err)
				return
			}
			c.Client.CloseAfterReply = true
		})
	})
}

// ---- CONFIG ---------------------------------------------------------------

var configHelp = []string{
	"GET <pattern>",
	"    Return parameters matching the glob-like <pattern> and their values.",
	"SET <directive> <value>",
	"    Set the configuration <directive> to <value>.",
	"RESETSTAT",
	"    Reset statistics reported by the INFO command.",
	"REWRITE",
	"    Rewrite the configuration file.",
}

func configHelpCommand(c *engine.Ctx) { c.ReplyHelp(configHelp) }

// configGetCommand is CONFIG GET pattern [pattern ...]: a map of every
// matching directive, each once.
func configGetCommand(c *engine.Ctx) {
	patterns := make([]string, len(c.Args)-2)
	for i, a := range c.Args[2:] {
		patterns[i] = string(a)
	}
	pairs := c.Config().GetMulti(patterns)
	c.W.Map(len(pairs))
	for _, p := range pairs {
		c.W.BulkString(p.Name)
		c.W.BulkString(p.Value)
	}
}

// configSetCommand is CONFIG SET directive value [directive value ...],
// applied atomically by the configuration; the server's change hooks
// apply run-time directives.
func configSetCommand(c *engine.Ctx) {
	args := make([]string, len(c.Args)-2)
	for i, a := range c.Args[2:] {
		args[i] = string(a)
	}
	redactSensitiveConfigs(c, args)
	if err := c.Config().SetAs(isLocalAddr(c.Client.Addr), args); err != nil {
		c.Error(configError(err))
		return
	}
	c.W.OK()
}

// redactSensitiveConfigs hides, from MONITOR and the slow log, the value of
// every sensitive directive (requirepass, masterauth, masteruser) that a
// CONFIG SET names, as Redis's configSetCommand does: each recognised
// name's value is redacted whatever else is wrong with the command (an
// unknown or immutable directive beside it, a malformed value), but an
// argument list of odd length is refused before any redaction, as Redis
// refuses it. args are c.Args[2:] as strings, copied before redaction.
func redactSensitiveConfigs(c *engine.Ctx, args []string) {
	if len(args)%2 != 0 {
		return
	}
	for i := 0; i+1 < len(args); i += 2 {
		if d, ok := config.Lookup(args[i]); ok && d.Sensitive {
			c.Redact(2 + i + 1)
		}
	}
}

// isLocalAddr reports whether a client's peer address is a loopback or
// unix socket one (enable-protected-configs local).
func isLocalAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return true // a unix socket peer has no host:port
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func configRewriteCommand(c *engine.Ctx) {
	if err := c.Config().Rewrite(); err != nil {
		c.Error(configError(err))
		return
	}
	c.W.OK()
}

// configError is the reply text of a configuration error: the package's
// text, given Redis's "ERR " code when it carries none.
func configError(err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, "ERR ") {
		return msg
	}
	return "ERR " + msg
}

// configResetstatCommand resets what Redis's CONFIG RESETSTAT resets: the
// INFO stats counters, command and error statistics and latency
// histograms. The slow log and latency events are kept.
func configResetstatCommand(c *engine.Ctx) {
	st := c.Srv.Stats()
	st.TotalCommands = 0
	st.TotalErrorReplies = 0
	st.UnexpectedErrors = 0
	st.ErrorCounts = nil
	st.RejectedConnections = 0
	st.TotalConnections = 0
	st.EvictedKeys = 0
	st.EvictedClients = 0
	st.SyncFull, st.SyncPartialOK, st.SyncPartialErr = 0, 0, 0
	if ev := c.KS.EvictStats(); ev.ExceededSince.IsZero() {
		ev.ExceededTotal = 0
	} else {
		ev.ExceededTotal, ev.ExceededSince = 0, time.Now()
	}
	st.NetIn.Store(0)
	st.NetOut.Store(0)
	st.ReplNetIn.Store(0)
	st.ReplNetOut.Store(0)
	st.ReadsProcessed.Store(0)
	st.WritesProcessed.Store(0)
	st.PeakMemory = 0
	st.Histograms = nil
	*c.KS.Stats() = keyspace.Stats{}
	c.D.ResetCommandStats()
	c.W.OK()
}

var slowlogHelp = []string{
	"GET [<count>]",
	"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
	"    Entries are made of:",
	"    id, timestamp, time in microseconds, arguments array, client IP and port,",
	"    client name",
	"LEN",
	"    Return the length of the slowlog.",
	"RESET",
	"    Reset the slowlog.",
}

func slowlogHelpCommand(c *engine.Ctx) { c.ReplyHelp(slowlogHelp) }

func slowlogGetCommand(c *engine.Ctx) {
	if len(c.Args) > 3 {
		subcommandSyntax(c)
		return
	}
	count := int64(10)
	if len(c.Args) == 3 {
		n, ok := engine.ParseInt(c.Args[2])
		if !ok || n < -1 {
			c.Error(engine.ErrSlowlogCount)
			return
		}
		count = n
	}
	if count > 1<<31 {
		count = -1
	}
	entries := c.Srv.Stats().SlowLog.Newest(int(count))
	c.W.Array(len(entries))
	for _, e := range entries {
		c.W.Array(6)
		c.W.Int(e.ID)
		c.W.Int(e.Time)
		c.W.Int(e.Duration)
		c.W.Array(len(e.Args))
		for _, a := range e.Args {
			c.W.Bulk(a)
		}
		c.W.BulkString(e.Addr)
		c.W.BulkString(e.Name)
	}
}

func slowlogLenCommand(c *engine.Ctx) { c.W.Int(int64(c.Srv.Stats().SlowLog.Len())) }

func slowlogResetCommand(c *engine.Ctx) {
	c.Srv.Stats().SlowLog.Reset()
	c.W.OK()
}

var latencyHelp = []string{
	"DOCTOR",
	"    Return a human readable latency analysis report.",
	"GRAPH <event>",
	"    Return an ASCII latency graph for the <event> class.",
	"HISTORY <event>",
	"    Return time-latency samples for the <event> class.",
	"LATEST",
	"    Return the latest latency samples for all events.",
	"RESET [<event> ...]",
	"    Reset latency data of one or more <event> classes.",
	"    (default: reset all data for all event classes)",
	"HISTOGRAM [COMMAND ...]",
	"    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
	"    If no commands are specified then all histograms are replied.",
}

func latencyHelpCommand(c *engine.Ctx) { c.ReplyHelp(latencyHelp) }

func latencyLatestCommand(c *engine.Ctx) {
	m := &c.Srv.Stats().Latency
	events := m.Events()
	c.W.Array(len(events))
	for _, e := range events {
		last, mx := m.Latest(e)
		c.W.Array(4)
		c.W.BulkString(e)
		c.W.Int(last.Time)
		c.W.Int(last.Latency)
		c.W.Int(mx)
	}
}

func latencyHistoryCommand(c *engine.Ctx) {
	samples := c.Srv.Stats().Latency.History(string(c.Args[2]))
	c.W.Array(len(samples))
	for _, s := range samples {
		c.W.Array(2)
		c.W.Int(s.Time)
		c.W.Int(s.Latency)
	}
}

func latencyResetCommand(c *engine.Ctx) {
	events := make([]string, len(c.Args)-2)
	for i, a := range c.Args[2:] {
		events[i] = string(a)
	}
	c.W.Int(int64(c.Srv.Stats().Latency.Reset(events...)))
}

// latencyGraphCommand draws an event's samples as Redis's sparkline.
func latencyGraphCommand(c *engine.Ctx) {
	event := string(c.Args[2])
	m := &c.Srv.Stats().Latency
	samples := m.History(event)
	if samples == nil {
		c.Error("ERR No samples available for event '" + event + "'")
		return
	}
	_, allTime := m.Latest(event)
	c.W.Verbatim(latencyGraph(event, samples, allTime, time.Now().Unix()))
}

// latencyGraph renders latencyCommandGenSparkeline's graph: a title, a
// rule, then the samples as a filled sparkline of 4 rows, 80 columns per
// block, each column labelled with how long ago its sample was taken.
func latencyGraph(event string, samples []engine.LatencySample, allTime, now int64) string {
	const cols, rows = 80, 4
	lo, hi := samples[0].Latency, samples[0].Latency
	labels := make([]string, len(samples))
	for i, s := range samples {
		lo, hi = min(lo, s.Latency), max(hi, s.Latency)
		switch el := now - s.Time; {
		case el < 60:
			labels[i] = fmt.Sprintf("%ds", el)
		case el < 3600:
			labels[i] = fmt.Sprintf("%dm", el/60)
		case el < 86400:
			labels[i] = fmt.Sprintf("%dh", el/3600)
		default:
			labels[i] = fmt.Sprintf("%dd", el/86400)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s - high %d ms, low %d ms (all time high %d ms)\n", event, hi, lo, allTime)
	b.WriteString(strings.Repeat("-", cols))
	b.WriteByte('\n')
	const charset = "_o#"
	steps := len(charset) * rows
	rel := float64(hi - lo)
	if rel == 0 {
		rel = 1
	}
	for off := 0; off < len(samples); off += cols {
		if off != 0 {
			b.WriteByte('\n')
		}
		n := min(cols, len(samples)-off)
		line := make([]byte, n)
		for row := 0; ; row++ {
			more := false
			for j := range line {
				line[j] = ' '
			}
			for j := 0; j < n; j++ {
				s := samples[off+j]
				step := int(float64(s.Latency-lo) * float64(steps) / rel)
				step = max(0, min(step, steps-1))
				if row < rows {
					more = true
					ci := step - (rows-row-1)*len(charset)
					if ci >= 0 && ci < len(charset) {
						line[j] = charset[ci]
					} else if ci >= len(charset) {
						line[j] = '|'
					}
					continue
				}
				if row == rows { // the blank line above the labels
					more = true
					break
				}
				if lc := row - rows - 1; lc < len(labels[off+j]) {
					more = true
					line[j] = labels[off+j][lc]
				}
			}
			if !more {
				break
			}
			b.Write(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// latencyDoctorCommand is a short form of Redis's latency report: the
// spikes per event and the advice that applies to command latency.
func latencyDoctorCommand(c *engine.Ctx) {
	st := c.Srv.Stats()
	m := &st.Latency
	events := m.Events()
	if len(events) == 0 && m.Threshold == 0 {
		c.W.Verbatim("I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n")
		return
	}
	if len(events) == 0 {
		c.W.Verbatim("Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sleep tonight.\n")
		return
	}
	var b strings.Builder
	b.WriteString("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n")
	now := time.Now().Unix()
	slowCommands, fastCommands := false, false
	for i, e := range events {
		samples := m.History(e)
		_, worst := m.Latest(e)
		var sum int64
		oldest := samples[0].Time
		for _, s := range samples {
			sum += s.Latency
			oldest = min(oldest, s.Time)
		}
		avg := sum / int64(len(samples))
		var dev int64
		for _, s := range samples {
			d := avg - s.Latency
			dev += max(d, -d)
		}
		period := max(now-oldest, 1)
		fmt.Fprintf(&b, "%d. %s: %d latency spikes (average %dms, mean deviation %dms, period %.2f sec). Worst all time event %dms.\n",
			i+1, e, len(samples), avg, dev/int64(len(samples)), float64(period)/float64(len(samples)), worst)
		slowCommands = slowCommands || e == "command"
		fastCommands = fastCommands || e == "fast-command"
	}
	if !slowCommands && !fastCommands {
		b.WriteString("\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use the Redis community to get some help, providing this report in your help request.\n")
		c.W.Verbatim(b.String())
		return
	}
	b.WriteString("\nI have a few advices for you:\n\n")
	if slowCommands {
		switch {
		case st.SlowLog.SlowerThan < 0 || st.SlowLog.MaxLen == 0:
			fmt.Fprintf(&b, "- There are latency issues with potentially slow commands you are using. Try to enable the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than %d'. If the Slow log is disabled Redis is not able to log slow commands execution for you.\n", m.Threshold*1000)
		case st.SlowLog.SlowerThan/1000 > m.Threshold:
			fmt.Fprintf(&b, "- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than %d'.\n", m.Threshold*1000)
		}
		b.WriteString("- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n")
	}
	if fastCommands {
		b.WriteString("- The system is slow to execute Redis code paths not containing system calls. This usually means the system does not provide Redis CPU time to run for long periods. You should try to:\n" +
			"  1) Lower the system load.\n" +
			"  2) Use a computer / VM just for Redis if you are running other software in the same system.\n" +
			"  3) Check if you have a \"noisy neighbour\" problem.\n" +
			"  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your system.\n")
	}
	if slowCommands {
		b.WriteString("- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n")
	}
	c.W.Verbatim(b.String())
}

// latencyHistogramCommand is LATENCY HISTOGRAM [command ...]: for each
// command (and each subcommand of a named container) that has a
// histogram, its calls and cumulative distribution in power-of-two
// microsecond buckets.
func latencyHistogramCommand(c *engine.Ctx) {
	st := c.Srv.Stats()
	var cmds []*engine.Command
	if len(c.Args) == 2 {
		c.D.Table.Each(func(cmd *engine.Command) { cmds = append(cmds, cmd) })
	} else {
		for _, a := range c.Args[2:] {
			cmd := lookupFullName(c.D.Table, a)
			if cmd == nil {
				continue
			}
			cmds = append(cmds, cmd)
			cmds = append(cmds, cmd.AllSubs()...)
		}
	}
	n := 0
	for _, cmd := range cmds {
		if st.Histograms[cmd] != nil {
			cmds[n] = cmd
			n++
		}
	}
	cmds = cmds[:n]
	c.W.Map(len(cmds))
	for _, cmd := range cmds {
		h := st.Histograms[cmd]
		c.W.BulkString(cmd.Name)
		c.W.Map(2)
		c.W.BulkString("calls")
		c.W.Int(h.Total())
		c.W.BulkString("histogram_usec")
		cdf := h.CDF()
		c.W.Map(len(cdf))
		for _, p := range cdf {
			c.W.Int(p[0])
			c.W.Int(p[1])
		}
	}
}

// ---- MEMORY -----------------------------------------------------------------

var memoryHelp = []string{
	"DOCTOR",
	"    Return memory problems reports.",
	"MALLOC-STATS",
	"    Return internal statistics report from the memory allocator.",
	"PURGE",
	"    Attempt to purge dirty pages for reclamation by the allocator.",
	"STATS",
	"    Return information about the memory usage of the server.",
	"USAGE <key> [SAMPLES <count>]",
	"    Return memory in bytes used by <key> and its value. Nested values are",
	"    sampled up to <count> times (default: 5, 0 means sample all).",
}

func memoryHelpCommand(c *engine.Ctx) { c.ReplyHelp(memoryHelp) }

// MemoryUser is implemented by collection values that can estimate their
// own memory use (MEMORY USAGE), looking at up to samples elements
// (samples <= 0: all of them).
type MemoryUser interface {
	MemoryUsage(samples int) int64
}

// allocSize rounds a request up to jemalloc's size class, as Redis's
// zmalloc_size reports it: estimates then read like Redis's.
func allocSize(n int64) int64 {
	switch {
	case n <= 8:
		return 8
	case n <= 128:
		return (n + 15) &^ 15
	}
	// Four classes per doubling above 128.
	step := int64(1) << (bits.Len64(uint64(n-1)) - 3)
	return (n + step - 1) &^ (step - 1)
}

// sdsAlloc is the allocation of an sds string of n bytes (header, bytes,
// terminator).
func sdsAlloc(n int64) int64 {
	hdr := int64(9)
	switch {
	case n < 32:
		hdr = 1
	case n < 256:
		hdr = 3
	case n < 65536:
		hdr = 5
	}
	return allocSize(hdr + n + 1)
}

// entryMemoryUsage estimates a key's memory as Redis's MEMORY USAGE does:
// the value object, the key string and the hash table entry.
func entryMemoryUsage(key []byte, e *keyspace.Entry, samples int) int64 {
	const robj, dictEntry = 16, 24
	var v int64
	switch {
	case e.Type() == keyspace.TypeString:
		s := e.Str()
		if _, isInt := engine.ParseInt(s); isInt {
			v = robj
		} else if len(s) <= 44 {
			v = allocSize(robj + 3 + int64(len(s)) + 1) // embedded string
		} else {
			v = robj + sdsAlloc(int64(len(s)))
		}
	default:
		if mu, ok := e.Obj().(MemoryUser); ok {
			v = robj + mu.MemoryUsage(samples)
		} else {
			v = robj + 64 + int64(e.Obj().Len())*32
		}
	}
	return v + sdsAlloc(int64(len(key))) + dictEntry
}

// memoryUsageCommand is MEMORY USAGE key [SAMPLES count]: options are
// checked before the key is looked up.
func memoryUsageCommand(c *engine.Ctx) {
	samples := int64(5)
	for j := 3; j < len(c.Args); j++ {
		if !engine.EqualFold(c.Args[j], "samples") || j+1 >= len(c.Args) {
			c.Error(engine.ErrSyntax)
			return
		}
		n, ok := c.IntArg(j + 1)
		if !ok {
			return
		}
		if n < 0 {
			c.Error(engine.ErrSyntax)
			return
		}
		samples = n
		j++
	}
	e := c.DB.Peek(c.Args[2]) // Redis reads the dictionary: no expiry, no stats, no event
	if e == nil {
		c.W.Null()
		return
	}
	if samples > 1<<30 {
		samples = 0
	}
	c.W.Int(entryMemoryUsage(c.Args[2], e, int(samples)))
}

// ratio is a/b, 0 when b is 0 (MEMORY STATS divides with floats).
func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(float32(float64(a) / float64(b)))
}

// memoryStatsCommand is MEMORY STATS with Redis's fields, measured on the
// Go heap; per database, the main and expires tables' overhead is
// estimated from their sizes.
func memoryStatsCommand(c *engine.Ctx) {
	st := c.Srv.Stats()
	m := engine.ReadMemory()
	used := c.KS.UsedMemory()
	st.PeakMemory = max(st.PeakMemory, used)
	type dbInfo struct {
		id          int
		main, expir int64
	}
	var dbs []dbInfo
	var keys, overhead int64
	for i := 0; i < c.KS.NumDBs(); i++ {
		db := c.KS.DB(i)
		if db.Len() == 0 && db.Volatile() == 0 {
			continue
		}
		main, expir := db.IndexOverhead()
		d := dbInfo{id: i, main: main, expir: expir}
		dbs = append(dbs, d)
		keys += int64(db.Len())
		overhead += d.main + d.expir
	}
	startup := c.KS.Overhead()
	overhead += startup
	net := used - startup
	dataset := max(used-overhead, 0)
	perKey := int64(0)
	if keys > 0 {
		perKey = net / keys
	}
	c.W.Map(27 + len(dbs))
	kv := func(name string, v int64) {
		c.W.BulkString(name)
		c.W.Int(v)
	}
	kf := func(name string, v float64) {
		c.W.BulkString(name)
		c.W.Double(v)
	}
	kv("peak.allocated", st.PeakMemory)
	kv("total.allocated", used)
	kv("startup.allocated", startup)
	kv("replication.backlog", 0)
	kv("clients.slaves", 0)
	var clientsMem int64
	for _, cl := range c.Srv.Clients() {
		clientsMem += cl.MemoryUsage()
	}
	kv("clients.normal", clientsMem)
	kv("cluster.links", 0)
	kv("aof.buffer", 0)
	kv("lua.caches", c.D.ScriptMemory().ScriptsEval)
	kv("functions.caches", 0)
	for _, d := range dbs {
		c.W.BulkString("db." + strconv.Itoa(d.id))
		c.W.Map(3)
		kv("overhead.hashtable.main", d.main)
		kv("overhead.hashtable.expires", d.expir)
		kv("overhead.hashtable.slot-to-keys", 0)
	}
	kv("overhead.total", overhead)
	kv("keys.count", keys)
	kv("keys.bytes-per-key", perKey)
	kv("dataset.bytes", dataset)
	kf("dataset.percentage", ratio(dataset*100, net))
	kf("peak.percentage", ratio(used*100, st.PeakMemory))
	kv("allocator.allocated", m.Heap)
	kv("allocator.active", m.Active)
	kv("allocator.resident", m.Resident)
	kf("allocator-fragmentation.ratio", ratio(m.Active, m.Heap))
	kv("allocator-fragmentation.bytes", m.Active-m.Heap)
	kf("allocator-rss.ratio", ratio(m.Resident, m.Active))
	kv("allocator-rss.bytes", m.Resident-m.Active)
	kf("rss-overhead.ratio", ratio(m.RSS, m.Resident))
	kv("rss-overhead.bytes", m.RSS-m.Resident)
	kf("fragmentation", ratio(m.RSS, used))
	kv("fragmentation.bytes", m.RSS-used)
}

// memoryDoctorCommand gives Redis's verdicts for an empty or small
// instance and for one without problems; the allocator checks Redis
// makes do not apply to the Go heap.
func memoryDoctorCommand(c *engine.Ctx) {
	keys := 0
	for i := 0; i < c.KS.NumDBs(); i++ {
		keys += c.KS.DB(i).Len()
	}
	if keys == 0 || c.KS.UsedMemory() < 5<<20 {
		c.W.Verbatim("Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n")
		return
	}
	c.W.Verbatim("Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n")
}

func memoryMallocStatsCommand(c *engine.Ctx) {
	c.W.Verbatim("Stats not supported for the current allocator")
}

// memoryPurgeCommand returns freed memory to the OS, after releasing the
// lock: it runs a full garbage collection.
func memoryPurgeCommand(c *engine.Ctx) {
	w := c.W
	c.Offload(func() {
		debug.FreeOSMemory()
		w.OK()
	})
}
