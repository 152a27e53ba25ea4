package config

import (
	"fmt"
	"sort"
	"strings"
)

// Effect is what zredis does with a directive, measured against what Redis
// 7.0 does with it. Every directive has one (TestEveryDirectiveHasAnEffect);
// The lists in docs/configuration.md of directives that have no effect,
// that are refused and that are still to be built are generated from them
// (DocBlocks).
type Effect int

const (
	// EffectUnset is the zero value: a directive nobody classified.
	EffectUnset Effect = iota
	// EffectWorks: zredis does what Redis does with every accepted value.
	EffectWorks
	// EffectRefuses: zredis honours some values and refuses the others,
	// which a user would rely on for safety (cluster-enabled yes): a
	// configuration that asks for them stops the start with a clear
	// message, and CONFIG SET refuses them where the directive is
	// settable. The values it accepts work.
	EffectRefuses
	// EffectNone: accepted, stored and shown by CONFIG GET, but it
	// changes nothing in zredis, and having no effect cannot weaken
	// protection or data safety (it tunes Redis internals zredis does not
	// have, or a feature zredis refuses or does not serve).
	EffectNone
	// EffectPending: the feature it configures is built by another part
	// of the work (access control, replication, memory limits, output
	// buffer limits, shutdown signals); until then it behaves as described
	// by the directive's Note.
	EffectPending
)

var effectNames = [...]string{"unset", "works", "refuses", "none", "pending"}

func (e Effect) String() string {
	if int(e) < len(effectNames) {
		return effectNames[e]
	}
	return "unknown"
}

// effectSpec is one directive's classification: its Effect, a Note that
// says why (shown in docs/configuration.md for every class but
// EffectWorks), and for EffectRefuses the function that refuses the
// values zredis does not honour (returning the message, or "" when the
// value is accepted).
type effectSpec struct {
	effect Effect
	note   string
	refuse func(v *value) string
}

func works(note string) effectSpec { return effectSpec{effect: EffectWorks, note: note} }
func none(note string) effectSpec  { return effectSpec{effect: EffectNone, note: note} }
func pending(note string) effectSpec {
	return effectSpec{effect: EffectPending, note: note}
}
func refuses(note string, fn func(v *value) string) effectSpec {
	return effectSpec{effect: EffectRefuses, note: note, refuse: fn}
}

// refuseNonEmpty refuses any value but the empty one, with reason.
func refuseNonEmpty(reason string) func(v *value) string {
	return func(v *value) string {
		if v.s != "" {
			return reason
		}
		return ""
	}
}

// refuseYes refuses "yes" for a bool directive with the given reason.
func refuseYes(name, reason string) func(v *value) string {
	return func(v *value) string {
		if v.n != 0 {
			return name + " yes is not supported: " + reason
		}
		return ""
	}
}

// Notes shared by families of directives.
const (
	noteDefrag   = "memory is managed by Go's allocator and garbage collector; there is no jemalloc defragmentation to tune"
	noteEncoding = "tunes an internal encoding zredis does not use; replies are the same"
	noteCPUList  = "CPU affinity of Redis's threads; zredis lets the Go scheduler place its threads"
	noteTesting  = "a hidden Redis test hook"
	noteLazyFree = "frees memory through the garbage collector either way; INFO's lazyfreed_objects counts what Redis's background thread would free under it"
)

// effects classifies every directive by name.
var effects = map[string]effectSpec{
	// Persistence.
	"rdbchecksum":                   works(""),
	"rdbcompression":                works(""),
	"dbfilename":                    works(""),
	"dir":                           works(""),
	"save":                          works(""),
	"stop-writes-on-bgsave-error":   works(""),
	"appendonly":                    works(""),
	"appendfilename":                works(""),
	"appenddirname":                 works(""),
	"appendfsync":                   works(""),
	"aof-load-truncated":            works(""),
	"aof-use-rdb-preamble":          works(""),
	"aof-timestamp-enabled":         works(""),
	"auto-aof-rewrite-percentage":   works(""),
	"auto-aof-rewrite-min-size":     works(""),
	"no-appendfsync-on-rewrite":     none("zredis keeps fsyncing the AOF during a rewrite, as `no` does; ignoring `yes`, which lets Redis skip those fsyncs, can only keep more data"),
	"aof-rewrite-incremental-fsync": none("a rewritten base file is fsynced before the manifest names it, whatever the value; the value only spreads Redis's fsyncs over the write"),
	"rdb-save-incremental-fsync":    none("an RDB file is fsynced before it is renamed into place, whatever the value; the value only spreads Redis's fsyncs over the write"),
	"rdb-del-sync-files":            none("the RDB file written to synchronise a replica is a temporary file, deleted once sent, whatever the value"),
	"aof-disable-auto-gc":           works(""),

	// Process and logging.
	"daemonize":              works("zredis starts itself again detached (setsid, standard streams on /dev/null) and the first process exits, as Redis's fork does"),
	"pidfile":                works(""),
	"supervised":             works("`systemd` (or `auto` with NOTIFY_SOCKET) sends READY=1 over $NOTIFY_SOCKET once the server accepts connections; `upstart` stops itself with SIGSTOP then"),
	"logfile":                works(""),
	"loglevel":               works(""),
	"oom-score-adj":          works(""),
	"oom-score-adj-values":   works(""),
	"syslog-enabled":         works("every log line also goes to /dev/log, as Redis's syslog() sends it"),
	"syslog-ident":           works(""),
	"syslog-facility":        works(""),
	"always-show-logo":       none("zredis prints no logo"),
	"set-proc-title":         none("zredis keeps its process title"),
	"proc-title-template":    none("zredis keeps its process title"),
	"crash-log-enabled":      none("a Go panic prints its own stack trace to the log"),
	"crash-memcheck-enabled": none("there is no Redis allocator to check after a crash"),
	"use-exit-on-panic":      none(noteTesting),
	"watchdog-period":        none(noteTesting),
	"ignore-warnings":        none("zredis does not make Redis's start-up kernel checks that it silences"),
	"disable-thp":            none("zredis never forks, which is why Redis disables transparent huge pages"),
	"jemalloc-bg-thread":     none(noteDefrag),
	"server_cpulist":         none(noteCPUList),
	"bio_cpulist":            none(noteCPUList),
	"aof_rewrite_cpulist":    none(noteCPUList),
	"bgsave_cpulist":         none(noteCPUList),
	"io-threads":             works("the number of event loops that serve the client connections"),
	"io-threads-do-reads":    none("zredis's event loops always read and parse as well as write"),

	// Network and clients.
	"port":                       works(""),
	"tcp-keepalive":              works(""),
	"tcp-backlog":                none("the listen backlog is the kernel's somaxconn, never smaller than what Redis gets (it takes the smaller of the two)"),
	"timeout":                    works(""),
	"maxclients":                 works(""),
	"client-query-buffer-limit":  works(""),
	"proto-max-bulk-len":         works(""),
	"socket-mark-id":             works("SO_MARK on the listening sockets, inherited by the connections they accept"),
	"client-output-buffer-limit": works("the normal, replica and pubsub classes (MONITOR clients are normal, as in Redis 7.0); a replica's stream counts during its synchronisation as after it"),
	"maxmemory-clients":          works(""),

	// Server behaviour.
	"databases":                             works("at most 65536 while the expiry stream is on: an expiry message carries the database in 16 bits"),
	"hz":                                    none("zredis's periodic work runs every 100 ms (Redis's default hz 10) and keys expire at their deadline; no safety depends on it"),
	"dynamic-hz":                            none("zredis's periodic work runs every 100 ms whatever the number of clients; no safety depends on it"),
	"active-expire-effort":                  none("keys expire at their deadline from an index ordered by deadline; there is no sampling to tune"),
	"activerehashing":                       works("the cron spends up to a millisecond a run (every 100 ms) finishing the resizes of big hashes' and sorted sets' member tables that their writes left under way; the databases' own tables (1024 shards each) grow a shard at a time and need no help"),
	"slowlog-log-slower-than":               works(""),
	"slowlog-max-len":                       works(""),
	"latency-monitor-threshold":             works(""),
	"latency-tracking":                      works(""),
	"latency-tracking-info-percentiles":     works(""),
	"notify-keyspace-events":                works(""),
	"lazyfree-lazy-expire":                  works(""),
	"lazyfree-lazy-user-del":                works(""),
	"lazyfree-lazy-server-del":              works(noteLazyFree),
	"lazyfree-lazy-user-flush":              works(noteLazyFree),
	"lazyfree-lazy-eviction":                works("an evicted key is propagated to the AOF as UNLINK with yes, DEL with no, as in Redis; memory is freed by the garbage collector either way"),
	"busy-reply-threshold":                  works("past it a script's other clients get -BUSY and SCRIPT KILL or SHUTDOWN NOSAVE reach it, as in Redis; SIGTERM and SIGINT also stop a running script and shut down"),
	"enable-protected-configs":              works(""),
	"enable-debug-command":                  works("DEBUG is refused unless it allows it (`local`: from the unix socket, 127.0.0.1 or ::1), with Redis's error, as in Redis"),
	"enable-module-command":                 works("MODULE LOAD, LOADEX and UNLOAD are refused unless it allows them, as in Redis; when it does, they fail: zredis loads no modules"),
	"sanitize-dump-payload":                 none("RESTORE and RDB loading always validate a payload fully (lengths, encodings, ordering, duplicates), as `yes` does, whatever the value"),
	"shutdown-on-sigint":                    works(""),
	"shutdown-on-sigterm":                   works(""),
	"shutdown-timeout":                      works(""),
	"hll-sparse-max-bytes":                  works(""),
	"key-load-delay":                        none(noteTesting),
	"rdb-key-save-delay":                    none(noteTesting),
	"loading-process-events-interval-bytes": none(noteTesting),
	"propagation-error-behavior":            works("an error from a replayed AOF command or from the master's stream is logged as CRITICAL and counted; panic stops the AOF load; panic and panic-on-replicas abort a read-only replica"),

	// Encodings.
	"hash-max-listpack-entries": works("OBJECT ENCODING and DUMP payloads follow it"),
	"hash-max-listpack-value":   works("OBJECT ENCODING and DUMP payloads follow it"),
	"set-max-intset-entries":    works("OBJECT ENCODING and DUMP payloads follow it"),
	"zset-max-listpack-entries": works("OBJECT ENCODING and DUMP payloads follow it"),
	"zset-max-listpack-value":   works("OBJECT ENCODING and DUMP payloads follow it"),
	"list-max-listpack-size":    works("zredis's lists are chunked their own way; the value shapes the quicklist that DEBUG OBJECT reports and whose nodes decide whether Redis frees a list in the background (lazyfreed_objects)"),
	"list-compress-depth":       none(noteEncoding),
	"stream-node-max-bytes":     works("a stream node (a listpack, as Redis's) starts anew once it would reach this many bytes"),
	"tracking-table-max-keys":   works("the tracking table of client-side caching holds at most this many keys: past it, keys picked at random are invalidated (0: no limit)"),
	"stream-node-max-entries":   works("a stream node starts anew once it holds this many entries, deleted ones included"),

	// Memory limits and eviction.
	"maxmemory":                   works(""),
	"maxmemory-policy":            works(""),
	"maxmemory-samples":           works(""),
	"maxmemory-eviction-tenacity": works(""),
	"lfu-log-factor":              works(""),
	"lfu-decay-time":              works(""),

	// Defragmentation.
	"activedefrag":                  none(noteDefrag),
	"active-defrag-cycle-min":       none(noteDefrag),
	"active-defrag-cycle-max":       none(noteDefrag),
	"active-defrag-threshold-lower": none(noteDefrag),
	"active-defrag-threshold-upper": none(noteDefrag),
	"active-defrag-ignore-bytes":    none(noteDefrag),
	"active-defrag-max-scan-fields": none(noteDefrag),

	// Cluster.
	"cluster-enabled":                     works(""),
	"cluster-config-file":                 works(""),
	"cluster-node-timeout":                works(""),
	"cluster-port":                        works(""),
	"cluster-announce-ip":                 works(""),
	"cluster-announce-hostname":           works(""),
	"cluster-announce-port":               works(""),
	"cluster-announce-bus-port":           works(""),
	"cluster-announce-tls-port":           works("with tls-cluster yes, the TLS port the node announces"),
	"cluster-replica-validity-factor":     works("a zredis cluster replica cut off from its master for longer does not fail over"),
	"cluster-migration-barrier":           works(""),
	"cluster-require-full-coverage":       works(""),
	"cluster-replica-no-failover":         works(""),
	"cluster-allow-reads-when-down":       works(""),
	"cluster-allow-pubsubshard-when-down": works(""),
	"cluster-allow-replica-migration":     works(""),
	"cluster-link-sendbuf-limit":          none("a link's queue is bounded at 1024 messages whatever the value (0, Redis's default, is no bound): a peer that does not read has its link freed and remade, as past Redis's limit"),
	"cluster-preferred-endpoint-type":     works(""),
	"tls-cluster":                         works("the bus speaks TLS, asking every connecting node for its certificate as Redis does; nodes announce their TLS port, and plaintext clients are shown the plaintext ones; cluster mode needs a tls-port with it"),

	// Replication: zredis is a master of stock replicas and a replica of a
	// stock master.
	"min-replicas-to-write":            works("counts the online replicas that acknowledged within min-replicas-max-lag seconds; with fewer, writes are refused with -NOREPLICAS"),
	"min-replicas-max-lag":             works("read with min-replicas-to-write"),
	"replicaof":                        works("zredis replicates a stock master (the link: replication/link.go)"),
	"masterauth":                       works(""),
	"masteruser":                       works(""),
	"repl-diskless-sync":               works("for replicas that declare `capa eof`; the others get a disk-based payload"),
	"repl-diskless-sync-delay":         works(""),
	"repl-diskless-sync-max-replicas":  works(""),
	"repl-diskless-load":               none("a replica always writes the master's payload to a file in dir and loads it from there, as `disabled` (the default) does"),
	"repl-disable-tcp-nodelay":         works(""),
	"repl-ping-replica-period":         works(""),
	"repl-timeout":                     works("a master disconnects replicas silent for longer; a replica drops a silent master's link"),
	"repl-backlog-size":                works(""),
	"repl-backlog-ttl":                 works(""),
	"replica-serve-stale-data":         works(""),
	"replica-read-only":                works(""),
	"replica-ignore-maxmemory":         works(""),
	"replica-lazy-flush":               works(noteLazyFree),
	"replica-priority":                 works("shown as slave_priority; Sentinel reads it"),
	"replica-announced":                works("shown as replica_announced; Sentinel reads it"),
	"replica-announce-ip":              works(""),
	"replica-announce-port":            works(""),
	"replica-ignore-disk-write-errors": works("no (the default): a replica whose writes are refused for a disk error (MISCONF) panics on its master's next write, as Redis does; yes: it applies it and logs so every 10 seconds at most"),
	"bind-source-addr":                 works("the address the link to a master is made from"),

	// Access control.
	"requirepass":              works(""),
	"bind":                     works(""),
	"protected-mode":           works(""),
	"aclfile":                  works(""),
	"acllog-max-len":           works(""),
	"acl-pubsub-default":       works(""),
	"unixsocket":               works(""),
	"unixsocketperm":           works(""),
	"tls-port":                 works("clients over TLS with Go's crypto/tls, bridged to the event loops"),
	"tls-cert-file":            works(""),
	"tls-key-file":             works(""),
	"tls-key-file-pass":        works("for keys encrypted the traditional OpenSSL way; an encrypted PKCS#8 key is refused at start"),
	"tls-client-cert-file":     works("the certificate of the link to a master (tls-replication yes), with tls-client-key-file; without both, tls-cert-file's"),
	"tls-client-key-file":      works(""),
	"tls-client-key-file-pass": works("for keys encrypted the traditional OpenSSL way, as tls-key-file-pass"),
	"tls-dh-params-file":       none("Go's TLS offers no DHE cipher suites, the only ones the parameters serve"),
	"tls-ca-cert-file":         works(""),
	"tls-ca-cert-dir":          works("every certificate in the directory's files"),
	"tls-protocols":            works("a contiguous range of versions (Go has a minimum and a maximum); another set is refused"),
	"tls-ciphers": refuses("Go chooses its TLS 1.2 cipher suites itself (ECDHE with AES-GCM or ChaCha20-Poly1305)",
		refuseNonEmpty("tls-ciphers cannot be applied: zredis's TLS (Go's crypto/tls) uses its own TLS 1.2 suites, ECDHE with AES-GCM or ChaCha20-Poly1305 only; remove the line")),
	"tls-ciphersuites": refuses("Go's TLS 1.3 cipher suites cannot be chosen (all three are AEAD)",
		refuseNonEmpty("tls-ciphersuites cannot be applied: Go's crypto/tls does not let the TLS 1.3 suites be chosen (all three are AEAD suites); remove the line")),
	"tls-auth-clients":          works(""),
	"tls-replication":           works("the link to a master is TLS, verifying the master's certificate chain but not its host name, as Redis"),
	"tls-prefer-server-ciphers": none("Go's TLS server always applies its own order of cipher suites; a client cannot make it choose a weaker one"),
	"tls-session-caching":       works("session tickets; no turns them off"),
	"tls-session-cache-size":    none("Go resumes TLS sessions with tickets, not a server-side cache to size"),
	"tls-session-cache-timeout": none("Go resumes TLS sessions with tickets, not a server-side cache to size"),

	// zredis's own.
	"expiry-zmq-endpoints":              works(""),
	"expiry-zmq-hwm":                    works(""),
	"expiry-zmq-hwm-bytes":              works(""),
	"expiry-zmq-spool-max-bytes":        works(""),
	"expiry-zmq-types":                  works(""),
	"expiry-zmq-max-listeners":          works(""),
	"expiry-zmq-curve-secret-key":       works(""),
	"expiry-zmq-curve-allowed-keys":     works(""),
	"expiry-zmq-hash-max-expire-cycles": works(""),
	"expiry-zmq-hash-delay":             works(""),
	"expiry-zmq-hash-delay-jitter":      works(""),
	"expiry-zmq-hash-main-db":           works(""),
	"expiry-zmq-hash-loop-db":           works(""),
	"expiry-zmq-evictions":              works(""),
	"expiry-zmq-message-id":             works(""),
	"expiry-zmq-journal":                works(""),
	"expiry-stream-key":                 works(""),
	"expiry-stream-maxlen":              works(""),
}

// applyEffects copies the classification into the table. A name the
// table does not know is a programming error. NoEffect is set from it so
// that the flag and the classification cannot disagree.
func applyEffects() {
	for name, spec := range effects {
		e := byName[name]
		if e == nil || e.alias {
			panic("config: effect for unknown directive " + name)
		}
		d := &directives[e.index]
		if d.NoEffect != (spec.effect == EffectNone) {
			panic(fmt.Sprintf("config: %s: the table's NoEffect flag and its effect %q disagree", name, spec.effect))
		}
		d.Effect, d.EffectNote, d.refuse = spec.effect, spec.note, spec.refuse
	}
}

// refused returns the reason zredis refuses v for d, or "".
func refused(d *Directive, v *value) string {
	if d.refuse == nil || v == nil {
		return ""
	}
	return d.refuse(v)
}

// MaxExpiryDatabases is the number of databases an expiry message can
// name: its header carries the database number as a uint16 (0-65535).
const MaxExpiryDatabases = 1 << 16

// checkExpiryDatabases refuses more databases than an expiry message can
// number while the expiry stream is on (expiry-zmq-endpoints set).
func checkExpiryDatabases(st *state) string {
	n := st.get("databases").n
	if n <= MaxExpiryDatabases || len(st.get("expiry-zmq-endpoints").list) == 0 {
		return ""
	}
	return fmt.Sprintf("databases %d is more than the expiry stream can carry: an expiry message names its database in 16 bits, so with expiry-zmq-endpoints set databases must be at most %d", n, MaxExpiryDatabases)
}

// The expiry stream's modes that cluster mode cannot have, refused at
// start and by CONFIG SET.
const (
	ExpiryCyclesInCluster    = "the hash expire cycles keep their counter in a second database (expiry-zmq-hash-loop-db), which cluster mode does not have: set expiry-zmq-hash-max-expire-cycles 0 with cluster-enabled yes"
	ExpiryStreamKeyInCluster = "the expiry stream key is one key, in one slot that one master serves, while every master appends the expiries of its own keys: in cluster mode listeners take the PUSH socket of every node (expiry-zmq-endpoints); set expiry-stream-key \"\" with cluster-enabled yes"
)

// checkExpiryStreamKey refuses expiry-stream-key in cluster mode.
func checkExpiryStreamKey(st *state) string {
	if st.get("cluster-enabled").n != 0 && st.get("expiry-stream-key").s != "" {
		return ExpiryStreamKeyInCluster
	}
	return ""
}

// checkExpiryCycles is CheckExpiryCycleDBs for a configuration that turns
// the hash expire cycles on; with them off the databases are not used.
func checkExpiryCycles(st *state) string {
	if st.get("expiry-zmq-hash-max-expire-cycles").n == 0 {
		return ""
	}
	if st.get("cluster-enabled").n != 0 {
		return ExpiryCyclesInCluster
	}
	return CheckExpiryCycleDBs(st.get("databases").n, st.get("expiry-zmq-hash-main-db").n, st.get("expiry-zmq-hash-loop-db").n)
}

// CheckExpiryCycleDBs refuses main and loop databases for the hash
// expire cycles that are the same database or not one of the databases:
// the cycles would then delete or overwrite keys they do not own.
func CheckExpiryCycleDBs(dbs, main, loop int64) string {
	switch {
	case main >= dbs:
		return fmt.Sprintf("expiry-zmq-hash-main-db %d is out of range: there are %d databases", main, dbs)
	case loop >= dbs:
		return fmt.Sprintf("expiry-zmq-hash-loop-db %d is out of range: there are %d databases", loop, dbs)
	case main == loop:
		return fmt.Sprintf("expiry-zmq-hash-main-db and expiry-zmq-hash-loop-db are both %d: the hash expire cycles need two databases", main)
	}
	return ""
}

// DocBlocks renders the generated lists of docs/configuration.md, by
// block name: "no-effect", "refused" and "pending". The page holds each
// between <!-- name:begin --> and <!-- name:end --> (checked by a test).
func DocBlocks() map[string]string {
	var none, ref, pend []string
	sorted := Directives()
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, d := range sorted {
		if d.Hidden {
			continue
		}
		line := "| `" + d.Name + "` | " + d.EffectNote + " |"
		switch d.Effect {
		case EffectNone:
			none = append(none, line)
		case EffectRefuses:
			ref = append(ref, line)
		case EffectPending:
			pend = append(pend, line)
		}
	}
	table := func(head string, rows []string) string {
		return "\n| directive | " + head + " |\n| --- | --- |\n" + strings.Join(rows, "\n") + "\n"
	}
	return map[string]string{
		"no-effect": table("why it has no effect, and why that is safe", none),
		"refused":   table("what zredis does instead", ref),
		"pending":   table("built by, and until then", pend),
	}
}
