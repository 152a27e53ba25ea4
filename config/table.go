package config

import (
	"math"
	"strings"

	"github.com/zredis/zredis/zmqpub/z85"
)

// Kind is how a directive's arguments are parsed, printed and rewritten.
type Kind int

const (
	// KindBool takes yes or no (case-insensitive); CONFIG GET prints yes/no.
	KindBool Kind = iota
	// KindInt is an integer (strict Redis string2ll syntax) checked against Min/Max.
	KindInt
	// KindMemory is a byte count with optional unit (b, k, kb, m, mb, g, gb);
	// with Percent set, "N%" is accepted too and stored as -N.
	KindMemory
	// KindOctal is an octal integer (unixsocketperm), printed in octal.
	KindOctal
	// KindEnum takes exactly one of Enum (case-insensitive).
	KindEnum
	// KindFlags takes one or more of Enum, OR-ed together (shutdown-on-sig*).
	KindFlags
	// KindString is a free string, optionally validated.
	KindString
	// KindSave is "save <seconds> <changes> ..." (accumulating across file lines).
	KindSave
	// KindClientOutputBufferLimit is "<class> <hard> <soft> <seconds>" groups.
	KindClientOutputBufferLimit
	// KindOOMScoreAdjValues is three integers in [-2000, 2000].
	KindOOMScoreAdjValues
	// KindNotifyKeyspaceEvents is the keyspace-notification class string.
	KindNotifyKeyspaceEvents
	// KindBind is a list of up to 16 addresses.
	KindBind
	// KindDir is the working directory, printed as an absolute path.
	KindDir
	// KindReplicaOf is "<host> <port>" or "no one".
	KindReplicaOf
	// KindPercentiles is a list of floats in [0, 100].
	KindPercentiles
	// KindList is a zredis multi-value directive: every file line appends
	// its arguments; CONFIG SET replaces the whole list.
	KindList
)

var kindNames = [...]string{"bool", "int", "memory", "octal", "enum", "flags", "string",
	"save", "client-output-buffer-limit", "oom-score-adj-values", "notify-keyspace-events",
	"bind", "dir", "replicaof", "percentiles", "list"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// EnumValue is one accepted word of an enum or flags directive. Several
// words may share a value; CONFIG GET prints the first one.
type EnumValue struct {
	Name  string
	Value int64
}

// Directive describes one configuration directive.
type Directive struct {
	Name    string // canonical name, as CONFIG GET * prints it
	Alias   string // second accepted name ("" if none); CONFIG GET * lists it too
	Kind    Kind
	Default string // value as CONFIG GET prints it on a default server

	// Min and Max bound KindInt, KindMemory and KindOctal values. Unsigned
	// marks directives backed by an unsigned C type: Redis compares their
	// bounds as unsigned, so a negative parse result is reported as out of
	// range instead of being accepted.
	Min      int64
	Max      uint64
	Unsigned bool
	Percent  bool // KindMemory also accepts "N%" (stored as -N)

	Enum []EnumValue // accepted words for KindEnum and KindFlags

	Multi     bool // takes several arguments on one line (MULTI_ARG_CONFIG)
	Immutable bool // CONFIG SET answers "can't set immutable config"
	Protected bool // CONFIG SET needs enable-protected-configs (PROTECTED_CONFIG)
	Sensitive bool // value must be redacted from logs, slowlog and MONITOR
	// Secret marks a value (a private key) that is never shown: CONFIG
	// GET answers "(redacted)" when it is set, and a configuration error
	// does not echo its line. CONFIG REWRITE still writes it. Implies
	// Sensitive.
	Secret      bool
	Hidden      bool // only matched by CONFIG GET when named exactly
	NullIfEmpty bool // empty string means "unset": CONFIG REWRITE drops the line
	// NoEffect marks directives zredis accepts, stores and reports but that
	// do not change its behaviour (encodings, defrag, threads, cluster, ...).
	// It must agree with Effect (EffectNone), which says why.
	NoEffect bool
	// Effect is what zredis does with the directive compared with Redis
	// (effects.go), and EffectNote why, as docs/configuration.md shows it.
	Effect     Effect
	EffectNote string
	// ZRedis marks directives that exist only in zredis.
	ZRedis bool
	// Help is a zredis directive's one-line meaning, as zredis-server
	// --help prints it (Redis's own are explained in redis.conf).
	Help string

	check func(st *state, v string) string // extra validation; returns the error text
	// refuse returns why zredis refuses a parsed value it does not honour
	// (EffectRefuses), or "".
	refuse func(v *value) string
}

// Enum values Redis uses for KindFlags directives (shutdown-on-sigint/sigterm).
const (
	ShutdownSave   = 1
	ShutdownNoSave = 2
	ShutdownNow    = 4
	ShutdownForce  = 8
)

// Keyspace notification classes as stored in notify-keyspace-events
// (Int("notify-keyspace-events") returns their OR); values match Redis.
const (
	NotifyKeyspace = 1 << 0  // K
	NotifyKeyevent = 1 << 1  // E
	NotifyGeneric  = 1 << 2  // g
	NotifyString   = 1 << 3  // $
	NotifyList     = 1 << 4  // l
	NotifySet      = 1 << 5  // s
	NotifyHash     = 1 << 6  // h
	NotifyZSet     = 1 << 7  // z
	NotifyExpired  = 1 << 8  // x
	NotifyEvicted  = 1 << 9  // e
	NotifyStream   = 1 << 10 // t
	NotifyKeyMiss  = 1 << 11 // m
	NotifyLoaded   = 1 << 12 // module-only event
	NotifyModule   = 1 << 13 // d
	NotifyNew      = 1 << 14 // n
	// NotifyAll is what the 'A' class expands to.
	NotifyAll = NotifyGeneric | NotifyString | NotifyList | NotifySet | NotifyHash |
		NotifyZSet | NotifyExpired | NotifyEvicted | NotifyStream | NotifyModule
)

const (
	intMax   = math.MaxInt32
	intMin   = math.MinInt32
	uintMax  = math.MaxUint32
	longMax  = math.MaxInt64
	llongMax = math.MaxInt64
	ullMax   = math.MaxUint64
)

// flag bits used to keep the table compact.
type dflag uint32

const (
	fImm dflag = 1 << iota
	fProt
	fSens
	fHidden
	fNoEff
	fMulti
	fUnsigned
	fNull
	fPercent
	fSecret
)

func mk(name, alias string, kind Kind, def string, f dflag) Directive {
	return Directive{
		Name: name, Alias: alias, Kind: kind, Default: def,
		Immutable:   f&fImm != 0,
		Protected:   f&fProt != 0,
		Sensitive:   f&(fSens|fSecret) != 0,
		Secret:      f&fSecret != 0,
		Hidden:      f&fHidden != 0,
		NoEffect:    f&fNoEff != 0,
		Multi:       f&fMulti != 0,
		Unsigned:    f&fUnsigned != 0,
		NullIfEmpty: f&fNull != 0,
		Percent:     f&fPercent != 0,
	}
}

func boolD(name, alias, def string, f dflag) Directive {
	return mk(name, alias, KindBool, def, f)
}

func intD(name, alias string, min int64, max uint64, def string, f dflag) Directive {
	d := mk(name, alias, KindInt, def, f)
	d.Min, d.Max = min, max
	return d
}

func memD(name, alias string, min int64, max uint64, def string, f dflag) Directive {
	d := mk(name, alias, KindMemory, def, f)
	d.Min, d.Max = min, max
	return d
}

func strD(name, alias, def string, f dflag) Directive {
	return mk(name, alias, KindString, def, f)
}

func enumD(name, def string, f dflag, values ...string) Directive {
	d := mk(name, "", KindEnum, def, f)
	for i, v := range values {
		d.Enum = append(d.Enum, EnumValue{v, int64(i)})
	}
	return d
}

// zr is one of zredis's own directives, with its meaning for --help.
func zr(d Directive, help string) Directive {
	d.ZRedis = true
	d.Help = help
	return d
}

func withCheck(d Directive, fn func(st *state, v string) string) Directive {
	d.check = fn
	return d
}

var protectedActionEnum = []string{"no", "yes", "local"}

// Redis's limits on bind and hz.
const (
	bindAddrMax = 16
	minHZ       = 1
	maxHZ       = 500
)

// directives is the table of every directive Redis 7.0 knows (CONFIG GET *
// plus the hidden ones reachable by exact name) followed by zredis's own.
// Order matters only for CONFIG GET output and for the order in which
// CONFIG REWRITE appends new lines.
var directives = []Directive{
	// Booleans.
	boolD("rdbchecksum", "", "yes", fImm),
	boolD("daemonize", "", "no", fImm),
	boolD("io-threads-do-reads", "", "no", fImm|fNoEff),
	boolD("always-show-logo", "", "no", fImm|fNoEff),
	boolD("protected-mode", "", "yes", 0),
	boolD("rdbcompression", "", "yes", 0),
	boolD("rdb-del-sync-files", "", "no", fNoEff),
	boolD("activerehashing", "", "yes", 0),
	boolD("stop-writes-on-bgsave-error", "", "yes", 0),
	boolD("set-proc-title", "", "yes", fImm|fNoEff),
	boolD("dynamic-hz", "", "yes", fNoEff),
	boolD("lazyfree-lazy-eviction", "", "no", 0),
	boolD("lazyfree-lazy-expire", "", "no", 0),
	boolD("lazyfree-lazy-server-del", "", "no", 0),
	boolD("lazyfree-lazy-user-del", "", "no", 0),
	boolD("lazyfree-lazy-user-flush", "", "no", 0),
	boolD("repl-disable-tcp-nodelay", "", "no", 0),
	boolD("repl-diskless-sync", "", "yes", 0),
	boolD("aof-rewrite-incremental-fsync", "", "yes", fNoEff),
	boolD("no-appendfsync-on-rewrite", "", "no", fNoEff),
	boolD("cluster-require-full-coverage", "", "yes", 0),
	boolD("rdb-save-incremental-fsync", "", "yes", fNoEff),
	boolD("aof-load-truncated", "", "yes", 0),
	boolD("aof-use-rdb-preamble", "", "yes", 0),
	boolD("aof-timestamp-enabled", "", "no", 0),
	boolD("cluster-replica-no-failover", "cluster-slave-no-failover", "no", 0),
	boolD("replica-lazy-flush", "slave-lazy-flush", "no", 0),
	boolD("replica-serve-stale-data", "slave-serve-stale-data", "yes", 0),
	boolD("replica-read-only", "slave-read-only", "yes", 0),
	boolD("replica-ignore-maxmemory", "slave-ignore-maxmemory", "yes", 0),
	boolD("jemalloc-bg-thread", "", "yes", fNoEff),
	boolD("activedefrag", "", "no", fNoEff),
	boolD("syslog-enabled", "", "no", fImm),
	boolD("cluster-enabled", "", "no", fImm),
	boolD("appendonly", "", "no", 0),
	boolD("cluster-allow-reads-when-down", "", "no", 0),
	boolD("cluster-allow-pubsubshard-when-down", "", "yes", 0),
	boolD("crash-log-enabled", "", "yes", fNoEff),
	boolD("crash-memcheck-enabled", "", "yes", fNoEff),
	boolD("use-exit-on-panic", "", "no", fHidden|fNoEff),
	boolD("disable-thp", "", "yes", fImm|fNoEff),
	boolD("cluster-allow-replica-migration", "", "yes", 0),
	boolD("replica-announced", "", "yes", 0),
	boolD("latency-tracking", "", "yes", 0),
	boolD("aof-disable-auto-gc", "", "no", 0),
	boolD("replica-ignore-disk-write-errors", "", "no", 0),

	// Strings.
	strD("aclfile", "", "", fImm),
	strD("unixsocket", "", "", fImm|fNull),
	strD("pidfile", "", "", fImm|fNull),
	strD("replica-announce-ip", "slave-announce-ip", "", fNull),
	strD("masteruser", "", "", fNull|fSens),
	strD("cluster-announce-ip", "", "", fNull),
	strD("cluster-config-file", "", "nodes.conf", fImm),
	withCheck(strD("cluster-announce-hostname", "", "", fNull), checkHostname),
	strD("syslog-ident", "", "redis", fImm),
	withCheck(strD("dbfilename", "", "dump.rdb", fProt), checkDBFilename),
	withCheck(strD("appendfilename", "", "appendonly.aof", fImm), checkAOFFilename),
	withCheck(strD("appenddirname", "", "appendonlydir", fImm), checkAOFDirname),
	strD("server_cpulist", "", "", fImm|fNull|fNoEff),
	strD("bio_cpulist", "", "", fImm|fNull|fNoEff),
	strD("aof_rewrite_cpulist", "", "", fImm|fNull|fNoEff),
	strD("bgsave_cpulist", "", "", fImm|fNull|fNoEff),
	strD("ignore-warnings", "", "", fNoEff),
	withCheck(strD("proc-title-template", "", "{title} {listen-addr} {server-mode}", fNoEff), checkProcTitleTemplate),
	strD("bind-source-addr", "", "", fNull),
	strD("logfile", "", "", fImm),
	strD("masterauth", "", "", fNull|fSens),
	strD("requirepass", "", "", fNull|fSens),
	strD("tls-cert-file", "", "", fNull),
	strD("tls-key-file", "", "", fNull),
	strD("tls-key-file-pass", "", "", fNull|fSens),
	strD("tls-client-cert-file", "", "", fNull),
	strD("tls-client-key-file", "", "", fNull),
	strD("tls-client-key-file-pass", "", "", fNull|fSens),
	strD("tls-dh-params-file", "", "", fNull|fNoEff),
	strD("tls-ca-cert-file", "", "", fNull),
	strD("tls-ca-cert-dir", "", "", fNull),
	strD("tls-protocols", "", "", fNull),
	strD("tls-ciphers", "", "", fNull),
	strD("tls-ciphersuites", "", "", fNull),

	// Enums.
	enumD("supervised", "no", fImm, "upstart", "systemd", "auto", "no"),
	enumD("syslog-facility", "local0", fImm, "user", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"),
	enumD("repl-diskless-load", "disabled", fNoEff, "disabled", "on-empty-db", "swapdb"),
	enumD("loglevel", "notice", 0, "debug", "verbose", "notice", "warning"),
	enumD("maxmemory-policy", "noeviction", 0, "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"),
	enumD("appendfsync", "everysec", 0, "everysec", "always", "no"),
	{Name: "oom-score-adj", Kind: KindEnum, Default: "no",
		Enum: []EnumValue{{"no", 0}, {"yes", 1}, {"relative", 1}, {"absolute", 2}}},
	enumD("acl-pubsub-default", "resetchannels", 0, "allchannels", "resetchannels"),
	enumD("sanitize-dump-payload", "no", fNoEff, "no", "yes", "clients"),
	enumD("enable-protected-configs", "no", fImm, protectedActionEnum...),
	enumD("enable-debug-command", "no", fImm, protectedActionEnum...),
	enumD("enable-module-command", "no", fImm, protectedActionEnum...),
	enumD("cluster-preferred-endpoint-type", "ip", 0, "ip", "hostname", "unknown-endpoint"),
	enumD("propagation-error-behavior", "ignore", 0, "ignore", "panic", "panic-on-replicas"),
	enumD("tls-auth-clients", "yes", 0, "no", "yes", "optional"),
	shutdownFlags("shutdown-on-sigint"),
	shutdownFlags("shutdown-on-sigterm"),

	// Integers.
	intD("databases", "", 1, intMax, "16", fImm),
	intD("port", "", 0, 65535, "6379", 0),
	intD("io-threads", "", 1, 128, "1", fImm),
	intD("auto-aof-rewrite-percentage", "", 0, intMax, "100", 0),
	intD("cluster-replica-validity-factor", "cluster-slave-validity-factor", 0, intMax, "10", 0),
	intD("list-max-listpack-size", "list-max-ziplist-size", intMin, intMax, "-2", 0),
	intD("tcp-keepalive", "", 0, intMax, "300", 0),
	intD("cluster-migration-barrier", "", 0, intMax, "1", 0),
	intD("active-defrag-cycle-min", "", 1, 99, "1", fNoEff),
	intD("active-defrag-cycle-max", "", 1, 99, "25", fNoEff),
	intD("active-defrag-threshold-lower", "", 0, 1000, "10", fNoEff),
	intD("active-defrag-threshold-upper", "", 0, 1000, "100", fNoEff),
	intD("lfu-log-factor", "", 0, intMax, "10", 0),
	intD("lfu-decay-time", "", 0, intMax, "1", 0),
	intD("replica-priority", "slave-priority", 0, intMax, "100", 0),
	intD("repl-diskless-sync-delay", "", 0, intMax, "5", 0),
	intD("maxmemory-samples", "", 1, intMax, "5", 0),
	intD("maxmemory-eviction-tenacity", "", 0, 100, "10", 0),
	intD("timeout", "", 0, intMax, "0", 0),
	intD("replica-announce-port", "slave-announce-port", 0, 65535, "0", 0),
	intD("tcp-backlog", "", 0, intMax, "511", fImm|fNoEff),
	intD("cluster-port", "", 0, 65535, "0", fImm),
	intD("cluster-announce-bus-port", "", 0, 65535, "0", 0),
	intD("cluster-announce-port", "", 0, 65535, "0", 0),
	intD("cluster-announce-tls-port", "", 0, 65535, "0", 0),
	intD("repl-timeout", "", 1, intMax, "60", 0),
	intD("repl-ping-replica-period", "repl-ping-slave-period", 1, intMax, "10", 0),
	intD("list-compress-depth", "", 0, intMax, "0", fNoEff),
	intD("rdb-key-save-delay", "", intMin, intMax, "0", fHidden|fNoEff),
	intD("key-load-delay", "", intMin, intMax, "0", fHidden|fNoEff),
	intD("active-expire-effort", "", 1, 10, "1", fNoEff),
	intD("hz", "", 0, intMax, "10", fNoEff),
	intD("min-replicas-to-write", "min-slaves-to-write", 0, intMax, "0", 0),
	intD("min-replicas-max-lag", "min-slaves-max-lag", 0, intMax, "10", 0),
	intD("watchdog-period", "", 0, intMax, "0", fHidden|fNoEff),
	intD("shutdown-timeout", "", 0, intMax, "10", 0),
	intD("repl-diskless-sync-max-replicas", "", 0, intMax, "0", 0),
	intD("maxclients", "", 1, uintMax, "10000", fUnsigned),
	{Name: "unixsocketperm", Kind: KindOctal, Default: "0", Min: 0, Max: 0o777, Unsigned: true, Immutable: true},
	intD("socket-mark-id", "", 0, uintMax, "0", fImm|fUnsigned),
	intD("active-defrag-max-scan-fields", "", 1, longMax, "1000", fNoEff),
	intD("slowlog-max-len", "", 0, longMax, "128", 0),
	intD("acllog-max-len", "", 0, longMax, "128", 0),
	intD("busy-reply-threshold", "lua-time-limit", 0, longMax, "5000", 0),
	intD("cluster-node-timeout", "", 0, llongMax, "15000", 0),
	intD("slowlog-log-slower-than", "", -1, llongMax, "10000", 0),
	intD("latency-monitor-threshold", "", 0, llongMax, "0", 0),
	memD("proto-max-bulk-len", "", 1024*1024, longMax, "536870912", 0),
	intD("stream-node-max-entries", "", 0, llongMax, "100", 0),
	memD("repl-backlog-size", "", 1, llongMax, "1048576", 0),
	memD("maxmemory", "", 0, ullMax, "0", fUnsigned),
	memD("cluster-link-sendbuf-limit", "", 0, ullMax, "0", fUnsigned|fNoEff),
	intD("hash-max-listpack-entries", "hash-max-ziplist-entries", 0, longMax, "512", fUnsigned),
	intD("set-max-intset-entries", "", 0, longMax, "512", fUnsigned),
	intD("zset-max-listpack-entries", "zset-max-ziplist-entries", 0, longMax, "128", fUnsigned),
	memD("active-defrag-ignore-bytes", "", 1, llongMax, "104857600", fUnsigned|fNoEff),
	memD("hash-max-listpack-value", "hash-max-ziplist-value", 0, longMax, "64", fUnsigned),
	memD("stream-node-max-bytes", "", 0, longMax, "4096", fUnsigned),
	memD("zset-max-listpack-value", "zset-max-ziplist-value", 0, longMax, "64", fUnsigned),
	memD("hll-sparse-max-bytes", "", 0, longMax, "3000", fUnsigned),
	intD("tracking-table-max-keys", "", 0, longMax, "1000000", fUnsigned),
	memD("client-query-buffer-limit", "", 1024*1024, longMax, "1073741824", fUnsigned),
	memD("maxmemory-clients", "", -100, llongMax, "0", fPercent),
	intD("repl-backlog-ttl", "", 0, longMax, "3600", 0),
	memD("auto-aof-rewrite-min-size", "", 0, llongMax, "67108864", 0),
	intD("loading-process-events-interval-bytes", "", 1024, intMax, "2097152", fHidden|fNoEff),
	intD("tls-port", "", 0, 65535, "0", 0),
	intD("tls-session-cache-size", "", 0, intMax, "20480", fNoEff),
	intD("tls-session-cache-timeout", "", 0, intMax, "300", fNoEff),
	boolD("tls-cluster", "", "no", 0),
	boolD("tls-replication", "", "no", 0),
	boolD("tls-prefer-server-ciphers", "", "no", fNoEff),
	boolD("tls-session-caching", "", "yes", 0),

	// Directives with their own syntax.
	mk("dir", "", KindDir, "", fProt),
	mk("save", "", KindSave, "3600 1 300 100 60 10000", fMulti),
	mk("client-output-buffer-limit", "", KindClientOutputBufferLimit,
		"normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60", fMulti),
	mk("oom-score-adj-values", "", KindOOMScoreAdjValues, "0 200 800", fMulti),
	mk("notify-keyspace-events", "", KindNotifyKeyspaceEvents, "", 0),
	mk("bind", "", KindBind, "127.0.0.1 -::1", fMulti),
	mk("replicaof", "slaveof", KindReplicaOf, "", fImm|fMulti),
	mk("latency-tracking-info-percentiles", "", KindPercentiles, "50 99 99.9", fMulti),

	// zredis's own directives. Adding one is a single line here; the value
	// is then available through the typed getters and CONFIG GET/SET/REWRITE.
	zr(mk("expiry-zmq-endpoints", "", KindList, "", fImm|fMulti),
		"endpoints the 0MQ PUSH socket binds (tcp://host:port, ipc:///path); lines accumulate; with none, nothing is sent"),
	zr(intD("expiry-zmq-hwm", "", 0, intMax, "100000", 0),
		"messages held in memory for absent or slow listeners before they spill to the spool (0: no count bound)"),
	zr(memD("expiry-zmq-hwm-bytes", "", 0, longMax, "268435456", 0),
		"bytes of messages held in memory before they spill to the spool"),
	zr(memD("expiry-zmq-spool-max-bytes", "", 0, longMax, "1073741824", 0),
		"size of the spool file zredis-expiry.spool in dir; past it messages are dropped and counted (0: no spool)"),
	zr(intD("expiry-zmq-max-listeners", "", 1, intMax, "64", 0),
		"listeners connected at once"),
	// CURVE on the expiry stream: the server's long-term secret key (its
	// public key is derived and shown in INFO expiry) and the listeners'
	// public keys, all in Z85.
	zr(withCheck(strD("expiry-zmq-curve-secret-key", "", "", fImm|fNull|fSecret), checkCurveKey),
		"the server's CURVE secret key (Z85): listeners must speak CURVE and the stream is encrypted"),
	zr(withCheck(mk("expiry-zmq-curve-allowed-keys", "", KindList, "", fMulti), checkCurveKey),
		"the CURVE public keys (Z85) of the listeners allowed to connect"),
	zr(expiryTypes(),
		"value types whose expiry is sent: string hash is the original protocol"),
	// The original 0MQ-expiry Redis's hash expire cycles (redis_zmq.c)
	// and where they keep their state.
	zr(intD("expiry-zmq-hash-max-expire-cycles", "", 0, intMax, "0", 0),
		"hash expire cycles: how many times an expired hash is sent again until a listener deletes it (0: off)"),
	zr(intD("expiry-zmq-hash-delay", "", 0, intMax, "10000", 0),
		"milliseconds before each hash expire cycle"),
	zr(intD("expiry-zmq-hash-delay-jitter", "", 0, intMax, "10000", 0),
		"plus a random 0 to this many milliseconds"),
	zr(intD("expiry-zmq-hash-main-db", "", 0, intMax, "0", 0),
		"the database whose hashes cycle"),
	zr(intD("expiry-zmq-hash-loop-db", "", 0, intMax, "1", 0),
		"the database that holds the cycle counters"),
	zr(boolD("expiry-zmq-evictions", "", "yes", 0),
		"send evicted keys too, as the original 0MQ-expiry Redis did"),
	zr(boolD("expiry-zmq-journal", "", "yes", fImm),
		"with the AOF on, keep every expiry message in the journal zredis-expiry.journal.N in dir, durable no later than its key's DEL"),
	zr(strD("expiry-stream-key", "", "", 0),
		"also append every expiry event to this Redis stream in database 0, for consumer groups (empty: off)"),
	zr(intD("expiry-stream-maxlen", "", 0, longMax, "0", 0),
		"cap the expiry-stream-key stream at this many entries, trimming the oldest (0: no cap)"),
	zr(boolD("expiry-zmq-message-id", "", "no", 0),
		"add a fourth frame naming the expiry event, for listeners that drop duplicates"),
}

// expiryTypes is expiry-zmq-types: the value types whose expiry is
// published. Bit i of the value stands for the message type code i
// (0 string, 1 hash, 2 list, 3 set, 4 zset, 5 stream, 6 hash-fields:
// the fields of a hash that expired on their own), as zmqpub numbers
// them.
func expiryTypes() Directive {
	d := mk("expiry-zmq-types", "", KindFlags, "string hash", fMulti)
	for i, name := range []string{"string", "hash", "list", "set", "zset", "stream", "hash-fields"} {
		d.Enum = append(d.Enum, EnumValue{name, 1 << i})
	}
	return d
}

func shutdownFlags(name string) Directive {
	d := mk(name, "", KindFlags, "default", fMulti)
	d.Enum = []EnumValue{{"default", 0}, {"save", ShutdownSave}, {"nosave", ShutdownNoSave},
		{"now", ShutdownNow}, {"force", ShutdownForce}}
	return d
}

// entry is one name (canonical or alias) under which a directive is
// registered; Redis 7.0 registers aliases as separate entries, which shows
// in CONFIG SET error texts and duplicate detection.
type entry struct {
	name  string
	index int // into directives
	alias bool
}

var (
	entries   []*entry          // canonical entries then aliases, in table order
	byName    map[string]*entry // lowercase name or alias -> entry
	canonical []*entry          // index -> canonical entry
)

func init() {
	byName = make(map[string]*entry, 2*len(directives))
	canonical = make([]*entry, len(directives))
	for i := range directives {
		d := &directives[i]
		e := &entry{name: d.Name, index: i}
		if _, dup := byName[d.Name]; dup {
			panic("config: duplicate directive " + d.Name)
		}
		byName[d.Name] = e
		canonical[i] = e
		entries = append(entries, e)
		if d.Alias != "" {
			a := &entry{name: d.Alias, index: i, alias: true}
			if _, dup := byName[d.Alias]; dup {
				panic("config: duplicate directive " + d.Alias)
			}
			byName[d.Alias] = a
			entries = append(entries, a)
		}
	}
	applyEffects()
}

// lookup finds a directive entry by name, case-insensitively.
func lookup(name string) *entry {
	if e, ok := byName[name]; ok {
		return e
	}
	return byName[strings.ToLower(name)]
}

// Directives returns a copy of the directive table.
func Directives() []Directive {
	out := make([]Directive, len(directives))
	copy(out, directives)
	return out
}

// Lookup returns the directive registered under name or alias.
func Lookup(name string) (Directive, bool) {
	e := lookup(name)
	if e == nil {
		return Directive{}, false
	}
	return directives[e.index], true
}

func pathIsBaseName(s string) bool {
	return !strings.ContainsAny(s, "/\\")
}

// checkCurveKey accepts a CURVE key in Z85 (40 characters), or nothing.
func checkCurveKey(_ *state, v string) string {
	if v == "" {
		return ""
	}
	if _, err := z85.DecodeKey(v); err != nil {
		return err.Error()
	}
	return ""
}

func checkDBFilename(_ *state, v string) string {
	if !pathIsBaseName(v) {
		return "dbfilename can't be a path, just a filename"
	}
	return ""
}

func checkAOFFilename(_ *state, v string) string {
	if v == "" {
		return "appendfilename can't be empty"
	}
	if !pathIsBaseName(v) {
		return "appendfilename can't be a path, just a filename"
	}
	return ""
}

func checkAOFDirname(_ *state, v string) string {
	if v == "" {
		return "appenddirname can't be empty"
	}
	if !pathIsBaseName(v) {
		return "appenddirname can't be a path, just a dirname"
	}
	return ""
}

func checkHostname(_ *state, v string) string {
	if len(v) >= 256 {
		return "Hostnames must be less than 256 characters"
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.') {
			return "Hostnames may only contain alphanumeric characters, hyphens or dots"
		}
	}
	return ""
}

// checkProcTitleTemplate expands the template against the current values,
// as Redis does, and rejects unknown variables, an unterminated '{' and
// templates that expand to nothing.
func checkProcTitleTemplate(st *state, v string) string {
	const bad = "template format is invalid or contains unknown variables"
	var b strings.Builder
	p := v
	for len(p) > 0 {
		i := strings.IndexByte(p, '{')
		if i < 0 {
			b.WriteString(p)
			break
		}
		b.WriteString(p[:i])
		p = p[i+1:]
		if len(p) == 0 {
			return bad
		}
		if p[0] == '{' {
			b.WriteByte('{')
			p = p[1:]
			continue
		}
		j := strings.IndexByte(p, '}')
		if j < 0 {
			return bad
		}
		val, ok := st.procTitleVar(p[:j])
		if !ok {
			return bad
		}
		b.WriteString(val)
		p = p[j+1:]
	}
	if strings.Trim(b.String(), " ") == "" {
		return bad
	}
	return ""
}
