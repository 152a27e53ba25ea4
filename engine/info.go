package engine

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/zredis/zredis/keyspace"
)

// INFO assembly (server.c genRedisInfoString).

// infoSections are INFO's sections in the order Redis prints them; def
// marks those of the default selection. The server fills the sections it
// owns (Server.Info); the others are built here.
var infoSections = []struct {
	name, title string
	def         bool
}{
	{"server", "Server", true},
	{"clients", "Clients", true},
	{"memory", "Memory", true},
	{"persistence", "Persistence", true},
	{"stats", "Stats", true},
	{"replication", "Replication", true},
	{"cpu", "CPU", true},
	{"modules", "Modules", true},
	{"commandstats", "Commandstats", false},
	{"errorstats", "Errorstats", true},
	{"latencystats", "Latencystats", false},
	{"cluster", "Cluster", true},
	{"keyspace", "Keyspace", true},
	// zredis's own: the 0MQ expiry stream. Only when named (INFO expiry),
	// so that INFO, INFO all and INFO everything list Redis's sections
	// and nothing else, for the tools that parse them.
	{"expiry", "Expiry", false},
}

// ownSection reports whether a section is zredis's own, shown only when
// named.
func ownSection(name string) bool { return name == "expiry" }

// InfoSelection is the set of sections an INFO request names.
type InfoSelection struct {
	All   bool
	names map[string]bool
}

// ParseInfoSelection reads INFO's arguments as genInfoSectionDict does:
// none or "default" for the default sections, "all" and "everything" for
// all of them, other names case-insensitively; unknown names select
// nothing.
func ParseInfoSelection(args [][]byte) InfoSelection {
	sel := InfoSelection{names: map[string]bool{}}
	addDefaults := func() {
		for _, s := range infoSections {
			if s.def {
				sel.names[s.name] = true
			}
		}
	}
	if len(args) == 0 {
		addDefaults()
	}
	for _, a := range args {
		switch name := strings.ToLower(string(a)); name {
		case "default":
			addDefaults()
		case "all", "everything":
			sel.All = true
		case "module_list":
			sel.names["modules"] = true
		default:
			sel.names[name] = true
		}
	}
	return sel
}

// Has reports whether the section is selected.
func (s InfoSelection) Has(section string) bool {
	return s.names[section] || s.All && !ownSection(section)
}

// AppendInfo appends the selected sections, each under its "# Title"
// line, separated by blank lines.
func AppendInfo(b []byte, c *Ctx, sel InfoSelection) []byte {
	n := 0
	for _, s := range infoSections {
		if !sel.Has(s.name) {
			continue
		}
		if n > 0 {
			b = append(b, "\r\n"...)
		}
		n++
		b = append(b, "# "...)
		b = append(b, s.title...)
		b = append(b, "\r\n"...)
		switch s.name {
		case "stats":
			b = appendInfoStats(b, c)
		case "modules":
		case "commandstats":
			b = appendInfoCommandstats(b, c)
		case "errorstats":
			b = appendInfoErrorstats(b, c.Srv.Stats())
		case "latencystats":
			b = appendInfoLatencystats(b, c)
		case "cluster":
			if c.D.Cluster != nil {
				b = append(b, "cluster_enabled:1\r\n"...)
			} else {
				b = append(b, "cluster_enabled:0\r\n"...)
			}
		case "keyspace":
			b = appendInfoKeyspace(b, c.KS)
		default:
			b = c.Srv.Info(s.name, b)
		}
	}
	return b
}

// InfoInt, InfoStr and InfoFloat append one "name:value" line: the one
// set of field writers of every INFO section, the engine's and the
// server's.
func InfoInt(b []byte, name string, v int64) []byte {
	b = append(b, name...)
	b = append(b, ':')
	b = strconv.AppendInt(b, v, 10)
	return append(b, '\r', '\n')
}

func InfoStr(b []byte, name, v string) []byte {
	b = append(b, name...)
	b = append(b, ':')
	b = append(b, v...)
	return append(b, '\r', '\n')
}

func InfoFloat(b []byte, name string, v float64, prec int) []byte {
	b = append(b, name...)
	b = append(b, ':')
	b = strconv.AppendFloat(b, v, 'f', prec, 64)
	return append(b, '\r', '\n')
}

// appendInfoStats is the stats section with every field of Redis 7.0;
// those of features zredis lacks (forks, defrag, tracking, I/O threads)
// are zero. The network totals include the replication traffic, which
// the repl fields give apart.
func appendInfoStats(b []byte, c *Ctx) []byte {
	st := c.Srv.Stats()
	ks := c.KS.Stats()
	b = InfoInt(b, "total_connections_received", st.TotalConnections)
	b = InfoInt(b, "total_commands_processed", st.TotalCommands)
	b = InfoInt(b, "instantaneous_ops_per_sec", st.InstOpsPerSec)
	replIn, replOut := st.ReplNetIn.Load(), st.ReplNetOut.Load()
	b = InfoInt(b, "total_net_input_bytes", st.NetIn.Load()+replIn)
	b = InfoInt(b, "total_net_output_bytes", st.NetOut.Load()+replOut)
	b = InfoInt(b, "total_net_repl_input_bytes", replIn)
	b = InfoInt(b, "total_net_repl_output_bytes", replOut)
	b = InfoFloat(b, "instantaneous_input_kbps", st.InstInputKbps, 2)
	b = InfoFloat(b, "instantaneous_output_kbps", st.InstOutputKbps, 2)
	b = InfoFloat(b, "instantaneous_input_repl_kbps", st.InstReplInputKbps, 2)
	b = InfoFloat(b, "instantaneous_output_repl_kbps", st.InstReplOutputKbps, 2)
	b = InfoInt(b, "rejected_connections", st.RejectedConnections)
	b = InfoInt(b, "sync_full", st.SyncFull)
	b = InfoInt(b, "sync_partial_ok", st.SyncPartialOK)
	b = InfoInt(b, "sync_partial_err", st.SyncPartialErr)
	b = InfoInt(b, "expired_subkeys", ks.ExpiredSubkeys) // 7.4's: hash fields
	b = InfoInt(b, "expired_keys", ks.ExpiredKeys)
	b = InfoStr(b, "expired_stale_perc", "0.00")
	b = InfoInt(b, "expired_time_cap_reached_count", 0)
	b = InfoInt(b, "expire_cycle_cpu_milliseconds", 0)
	b = InfoInt(b, "evicted_keys", st.EvictedKeys)
	b = InfoInt(b, "evicted_clients", st.EvictedClients)
	ev := c.KS.EvictStats()
	var current time.Duration
	if !ev.ExceededSince.IsZero() {
		current = time.Since(ev.ExceededSince)
	}
	b = InfoInt(b, "total_eviction_exceeded_time", (ev.ExceededTotal + current).Milliseconds())
	b = InfoInt(b, "current_eviction_exceeded_time", current.Milliseconds())
	b = InfoInt(b, "keyspace_hits", ks.KeyspaceHits)
	b = InfoInt(b, "keyspace_misses", ks.KeyspaceMiss)
	b = InfoInt(b, "pubsub_channels", st.PubSubChannels)
	b = InfoInt(b, "pubsub_patterns", st.PubSubPatterns)
	b = InfoInt(b, "pubsubshard_channels", st.PubSubShardChannels)
	b = InfoInt(b, "latest_fork_usec", 0)
	b = InfoInt(b, "total_forks", 0)
	b = InfoInt(b, "migrate_cached_sockets", int64(c.D.Migrate.Len()))
	b = InfoInt(b, "slave_expires_tracked_keys", 0)
	b = InfoInt(b, "active_defrag_hits", 0)
	b = InfoInt(b, "active_defrag_misses", 0)
	b = InfoInt(b, "active_defrag_key_hits", 0)
	b = InfoInt(b, "active_defrag_key_misses", 0)
	b = InfoInt(b, "total_active_defrag_time", 0)
	b = InfoInt(b, "current_active_defrag_time", 0)
	var tkeys, titems, tprefixes int
	if t := c.D.Tracking; t != nil {
		tkeys, titems, tprefixes = t.Keys(), t.Items(), t.Prefixes()
	}
	b = InfoInt(b, "tracking_total_keys", int64(tkeys))
	b = InfoInt(b, "tracking_total_items", int64(titems))
	b = InfoInt(b, "tracking_total_prefixes", int64(tprefixes))
	b = InfoInt(b, "unexpected_error_replies", st.UnexpectedErrors)
	b = InfoInt(b, "total_error_replies", st.TotalErrorReplies)
	b = InfoInt(b, "dump_payload_sanitizations", 0)
	b = InfoInt(b, "total_reads_processed", st.ReadsProcessed.Load())
	b = InfoInt(b, "total_writes_processed", st.WritesProcessed.Load())
	b = InfoInt(b, "io_threaded_reads_processed", 0)
	b = InfoInt(b, "io_threaded_writes_processed", 0)
	b = InfoInt(b, "reply_buffer_shrinks", 0)
	b = InfoInt(b, "reply_buffer_expands", 0)
	return b
}

// appendInfoCommandstats lists every command and subcommand that was
// called, rejected or failed since the last reset.
func appendInfoCommandstats(b []byte, c *Ctx) []byte {
	line := func(cmd *Command) {
		s := *c.D.CommandStats(cmd)
		if s.Calls == 0 && s.FailedCalls == 0 && s.RejectedCalls == 0 {
			return
		}
		perCall := float32(0)
		if s.Calls > 0 {
			perCall = float32(s.Usec) / float32(s.Calls)
		}
		b = append(b, "cmdstat_"...)
		b = append(b, cmd.Name...)
		b = append(b, ":calls="...)
		b = strconv.AppendInt(b, s.Calls, 10)
		b = append(b, ",usec="...)
		b = strconv.AppendInt(b, s.Usec, 10)
		b = append(b, ",usec_per_call="...)
		b = strconv.AppendFloat(b, float64(perCall), 'f', 2, 64)
		b = append(b, ",rejected_calls="...)
		b = strconv.AppendInt(b, s.RejectedCalls, 10)
		b = append(b, ",failed_calls="...)
		b = strconv.AppendInt(b, s.FailedCalls, 10)
		b = append(b, "\r\n"...)
	}
	c.D.Table.Each(line)
	return b
}

// appendInfoErrorstats lists error replies by code, in byte order as
// Redis's radix tree yields them.
func appendInfoErrorstats(b []byte, st *ServerStats) []byte {
	codes := make([]string, 0, len(st.ErrorCounts))
	for code := range st.ErrorCounts {
		codes = append(codes, code)
	}
	sort.Strings(codes)
	for _, code := range codes {
		b = append(b, "errorstat_"...)
		b = append(b, code...)
		b = append(b, ":count="...)
		b = strconv.AppendInt(b, st.ErrorCounts[code], 10)
		b = append(b, "\r\n"...)
	}
	return b
}

// appendInfoLatencystats prints each tracked command's latency
// percentiles in microseconds.
func appendInfoLatencystats(b []byte, c *Ctx) []byte {
	st := c.Srv.Stats()
	if len(st.Histograms) == 0 {
		return b
	}
	ps := c.Config().Percentiles()
	line := func(cmd *Command) {
		h := st.Histograms[cmd]
		if h == nil {
			return
		}
		b = append(b, "latency_percentiles_usec_"...)
		b = append(b, cmd.Name...)
		b = append(b, ':')
		for i, p := range ps {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, 'p')
			b = strconv.AppendFloat(b, p, 'f', -1, 64)
			b = append(b, '=')
			b = strconv.AppendFloat(b, float64(h.ValueAtPercentile(p))/1000, 'f', 3, 64)
		}
		b = append(b, "\r\n"...)
	}
	c.D.Table.Each(line)
	return b
}

// appendInfoKeyspace prints "dbN:keys=..,expires=..,avg_ttl=..,subexpiry=.."
// for each database that holds keys: subexpiry, 7.4's, counts the hashes
// with a volatile field.
func appendInfoKeyspace(b []byte, ks *keyspace.Keyspace) []byte {
	for i := 0; i < ks.NumDBs(); i++ {
		db := ks.DB(i)
		if db.Len() == 0 {
			continue
		}
		b = append(b, "db"...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, ":keys="...)
		b = strconv.AppendInt(b, int64(db.Len()), 10)
		b = append(b, ",expires="...)
		b = strconv.AppendInt(b, int64(db.Volatile()), 10)
		b = append(b, ",avg_ttl="...)
		b = strconv.AppendInt(b, avgTTL(db, ks.Now()), 10)
		b = append(b, ",subexpiry="...)
		b = strconv.AppendInt(b, int64(db.VolatileHashes()), 10)
		b = append(b, "\r\n"...)
	}
	return b
}

// avgTTLSamples is how many volatile keys avg_ttl averages at most; like
// Redis's, the figure is an estimate.
const avgTTLSamples = 256

// avgTTL estimates the mean remaining time to live, in milliseconds, of a
// database's volatile keys. It visits shards spread across the table
// until it has enough samples, so a large database is not walked whole.
func avgTTL(db *keyspace.DB, now int64) int64 {
	if db.Volatile() == 0 {
		return 0
	}
	const stride = 64
	shards := keyspace.NumShards()
	var sum, n int64
	for off := 0; off < stride && n < avgTTLSamples; off++ {
		for i := off; i < shards; i += stride {
			db.ScanShard(i, func(_ string, e *keyspace.Entry) {
				if at := e.ExpireAt(); at > now {
					sum += at - now
					n++
				}
			})
		}
	}
	if n == 0 {
		return 0
	}
	return sum / n
}
