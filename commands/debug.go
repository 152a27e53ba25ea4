package commands

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/maphash"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/persistence/rdb"
	"github.com/zredis/zredis/resp"
	"github.com/zredis/zredis/sds"
)

// DEBUG (debug.c): the subcommands tools and Redis's own test suite use.
// Redis registers DEBUG as one command, not a container: its handler
// reads the subcommand and checks each one's argument count itself, so
// COMMAND shows no subcommands and every mismatch answers
// addReplySubcommandSyntaxError. It is refused unless
// enable-debug-command allows it (the dispatcher's CMD_PROTECTED check,
// before authentication).
//
// The subcommands that crash or restart the server (SEGFAULT, PANIC,
// ASSERT, OOM, RESTART, CRASH-AND-RECOVER) and those that report C
// structures zredis does not have (SDSLEN, STRUCTSIZE, CLIENT-EVICTION
// with maxmemory-clients set), CONFIG-REWRITE-FORCE-ALL and REPLICATE
// answer that zredis does not support them.
func init() {
	register(&engine.Command{Name: "debug", Arity: -2,
		Flags:     engine.Admin | engine.NoScript | engine.Loading | engine.Stale,
		ACL:       "@admin @slow @dangerous",
		Group:     "server",
		Protected: "enable-debug-command",
		Run:       debugCommand})
}

// debugSub is one subcommand: argsOK tells whether the argument count
// (DEBUG and the subcommand included) is one Redis's handler accepts.
type debugSub struct {
	argsOK func(n int) bool
	run    func(c *engine.Ctx)
}

func argsEq(k int) func(int) bool      { return func(n int) bool { return n == k } }
func argsAtLeast(k int) func(int) bool { return func(n int) bool { return n >= k } }
func argsAny(int) bool                 { return true }

// debugSubs are the subcommands, by lower-case name.
var debugSubs = map[string]debugSub{
	"help":                         {argsEq(2), func(c *engine.Ctx) { c.ReplyHelp(debugHelp) }},
	"log":                          {argsEq(3), debugLog},
	"leak":                         {argsEq(3), debugOK},
	"reload":                       {argsAny, debugReload},
	"loadaof":                      {argsAny, debugLoadAOF},
	"drop-cluster-packet-filter":   {argsEq(3), debugDropClusterPacketFilter},
	"object":                       {argsEq(3), debugObject},
	"listpack":                     {argsEq(3), debugListpack},
	"quicklist":                    {func(n int) bool { return n == 3 || n == 4 }, debugQuicklist},
	"populate":                     {func(n int) bool { return n >= 3 && n <= 5 }, debugPopulate},
	"digest":                       {argsEq(2), debugDigest},
	"digest-value":                 {argsAtLeast(2), debugDigestValue},
	"protocol":                     {argsEq(3), debugProtocol},
	"sleep":                        {argsEq(3), debugSleep},
	"set-active-expire":            {argsEq(3), debugSetActiveExpire},
	"quicklist-packed-threshold":   {argsEq(3), debugPackedThreshold},
	"set-skip-checksum-validation": {argsEq(3), debugSkipChecksum},
	"aof-flush-sleep":              {argsEq(3), debugOK},
	"error":                        {argsEq(3), debugError},
	"htstats":                      {argsEq(3), debugHTStats},
	"htstats-key":                  {argsEq(3), debugHTStatsKey},
	"change-repl-id":               {argsEq(2), debugChangeReplID},
	"stringmatch-test":             {argsEq(2), debugStringmatchTest},
	"set-disable-deny-scripts":     {argsEq(3), debugDisableDenyScripts},
	"client-eviction":              {argsEq(2), debugClientEviction},
	"mallctl":                      {argsAtLeast(3), debugMallctl},
	"mallctl-str":                  {argsAtLeast(3), debugMallctlStr},
	"pause-cron":                   {argsEq(3), debugPauseCron},
	"replybuffer":                  {argsEq(4), debugReplyBuffer},
	"clusterlink":                  {argsEq(5), debugClusterLink},
	"segfault":                     {argsAny, debugUnsupported},
	"panic":                        {argsAny, debugUnsupported},
	"assert":                       {argsAny, debugUnsupported},
	"oom":                          {argsAny, debugUnsupported},
	"restart":                      {argsAny, debugUnsupported},
	"crash-and-recover":            {argsAny, debugUnsupported},
	"sdslen":                       {argsEq(3), debugUnsupported},
	"structsize":                   {argsEq(2), debugUnsupported},
	"replicate":                    {argsAtLeast(3), debugUnsupported},
	"config-rewrite-force-all":     {argsEq(2), debugUnsupported},
}

func debugCommand(c *engine.Ctx) {
	name := strings.ToLower(string(c.Args[1]))
	sub, ok := debugSubs[name]
	if !ok || !sub.argsOK(len(c.Args)) {
		subcommandSyntax(c)
		return
	}
	sub.run(c)
}

func debugOK(c *engine.Ctx) { c.W.OK() }

// debugError is DEBUG ERROR string: the string as an error reply, as is
// (no "ERR " added, newlines made spaces). Redis writes it as raw
// protocol, so it counts in no error statistics and the call does not
// fail.
func debugError(c *engine.Ctx) { c.W.Error(string(c.Args[2])) }

// The switches: Redis reads their 0|1 with atoi, so anything but a
// number is 0 and any number but 0 turns the switch on.

func debugSetActiveExpire(c *engine.Ctx) {
	c.Srv.Debug().SetActiveExpire(atoi(c.Args[2]) != 0)
	c.W.OK()
}

func debugSkipChecksum(c *engine.Ctx) {
	c.D.Debug.SkipChecksum.Store(atoi(c.Args[2]) != 0)
	c.W.OK()
}

func debugDisableDenyScripts(c *engine.Ctx) {
	c.D.Debug.DenyScriptsDisabled = atoi(c.Args[2]) != 0
	c.W.OK()
}

func debugPauseCron(c *engine.Ctx) {
	c.Srv.Debug().PauseCron(atoi(c.Args[2]) != 0)
	c.W.OK()
}

func debugChangeReplID(c *engine.Ctx) {
	c.Srv.Debug().ChangeReplID()
	c.W.OK()
}

// debugClusterLink is DEBUG CLUSTERLINK KILL to|from|all node-id: there
// is no cluster.
func debugClusterLink(c *engine.Ctx) {
	if !engine.EqualFold(c.Args[2], "kill") {
		subcommandSyntax(c)
		return
	}
	c.Error("ERR Debug option only available for cluster mode enabled setup!")
}

// debugUnsupported answers a subcommand zredis does not implement: one
// that would crash or restart the server, or report C structures it does
// not have.
func debugUnsupported(c *engine.Ctx) {
	c.Error("ERR DEBUG " + strings.ToUpper(string(c.Args[1])) + " is not supported by zredis")
}

// strtodPrefix is C's strtod as DEBUG SLEEP reads its argument, with no
// check of what follows: leading blanks skipped, then the longest prefix
// that is a number (strtod), 0 when none is.
func strtodPrefix(b []byte) float64 {
	i := 0
	for i < len(b) && sds.IsSpace(b[i]) {
		i++
	}
	b = b[i:]
	// A number strtod reads is short; a long argument is its first bytes.
	if len(b) > 400 {
		b = b[:400]
	}
	for n := len(b); n > 0; n-- {
		if f, _, ok := strtod(b[:n]); ok {
			return f
		}
	}
	return 0
}

// ---- HELP ------------------------------------------------------------------

// debugHelp is 7.0's, from a redis-server built with jemalloc (MALLCTL
// and MALLCTL-STR listed), as Linux packages build it.
var debugHelp = []string{
	"AOF-FLUSH-SLEEP <microsec>",
	"    Server will sleep before flushing the AOF, this is used for testing.",
	"ASSERT",
	"    Crash by assertion failed.",
	"CHANGE-REPL-ID",
	"    Change the replication IDs of the instance.",
	"    Dangerous: should be used only for testing the replication subsystem.",
	"CONFIG-REWRITE-FORCE-ALL",
	"    Like CONFIG REWRITE but writes all configuration options, including",
	"    keywords not listed in original configuration file or default values.",
	"CRASH-AND-RECOVER [<milliseconds>]",
	"    Hard crash and restart after a <milliseconds> delay (default 0).",
	"DIGEST",
	"    Output a hex signature representing the current DB content.",
	"DIGEST-VALUE <key> [<key> ...]",
	"    Output a hex signature of the values of all the specified keys.",
	"ERROR <string>",
	"    Return a Redis protocol error with <string> as message. Useful for clients",
	"    unit tests to simulate Redis errors.",
	"LEAK <string>",
	"    Create a memory leak of the input string.",
	"LOG <message>",
	"    Write <message> to the server log.",
	"HTSTATS <dbid>",
	"    Return hash table statistics of the specified Redis database.",
	"HTSTATS-KEY <key>",
	"    Like HTSTATS but for the hash table stored at <key>'s value.",
	"LOADAOF",
	"    Flush the AOF buffers on disk and reload the AOF in memory.",
	"REPLICATE <string>",
	"    Replicates the provided string to replicas, allowing data divergence.",
	"MALLCTL <key> [<val>]",
	"    Get or set a malloc tuning integer.",
	"MALLCTL-STR <key> [<val>]",
	"    Get or set a malloc tuning string.",
	"OBJECT <key>",
	"    Show low level info about `key` and associated value.",
	"DROP-CLUSTER-PACKET-FILTER <packet-type>",
	"    Drop all packets that match the filtered type. Set to -1 allow all packets.",
	"OOM",
	"    Crash the server simulating an out-of-memory error.",
	"PANIC",
	"    Crash the server simulating a panic.",
	"POPULATE <count> [<prefix>] [<size>]",
	"    Create <count> string keys named key:<num>. If <prefix> is specified then",
	"    it is used instead of the 'key' prefix. These are not propagated to",
	"    replicas. Cluster slots are not respected so keys not belonging to the",
	"    current node can be created in cluster mode.",
	"PROTOCOL <type>",
	"    Reply with a test value of the specified type. <type> can be: string,",
	"    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
	"    true, false.",
	"RELOAD [option ...]",
	"    Save the RDB on disk and reload it back to memory. Valid <option> values:",
	"    * MERGE: conflicting keys will be loaded from RDB.",
	"    * NOFLUSH: the existing database will not be removed before load, but",
	"      conflicting keys will generate an exception and kill the server.",
	"    * NOSAVE: the database will be loaded from an existing RDB file.",
	"    Examples:",
	"    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
	"      the database.",
	"    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
	"      existing RDB file.",
	"    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
	"      file to the database.",
	"RESTART [<milliseconds>]",
	"    Graceful restart: save config, db, restart after a <milliseconds> delay (default 0).",
	"SDSLEN <key>",
	"    Show low level SDS string info representing `key` and value.",
	"SEGFAULT",
	"    Crash the server with sigsegv.",
	"SET-ACTIVE-EXPIRE <0|1>",
	"    Setting it to 0 disables expiring keys in background when they are not",
	"    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
	"    default.",
	"QUICKLIST-PACKED-THRESHOLD <size>",
	"    Sets the threshold for elements to be inserted as plain vs packed nodes",
	"    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
	"SET-SKIP-CHECKSUM-VALIDATION <0|1>",
	"    Enables or disables checksum checks for RDB files and RESTORE's payload.",
	"SLEEP <seconds>",
	"    Stop the server for <seconds>. Decimals allowed.",
	"STRINGMATCH-TEST",
	"    Run a fuzz tester against the stringmatchlen() function.",
	"STRUCTSIZE",
	"    Return the size of different Redis core C structures.",
	"LISTPACK <key>",
	"    Show low level info about the listpack encoding of <key>.",
	"QUICKLIST <key> [<0|1>]",
	"    Show low level info about the quicklist encoding of <key>.",
	"    The optional argument (0 by default) sets the level of detail",
	"CLIENT-EVICTION",
	"    Show low level client eviction pools info (maxmemory-clients).",
	"PAUSE-CRON <0|1>",
	"    Stop periodic cron job processing.",
	"REPLYBUFFER PEAK-RESET-TIME <NEVER||RESET|time>",
	"    Sets the time (in milliseconds) to wait between client reply buffer peak resets.",
	"    In case NEVER is provided the last observed peak will never be reset",
	"    In case RESET is provided the peak reset time will be restored to the default value",
	"REPLYBUFFER RESIZING <0|1>",
	"    Enable or disable the reply buffer resize cron job",
	"CLUSTERLINK KILL <to|from|all> <node-id>",
	"    Kills the link based on the direction to/from (both) with the provided node.",
}

// ---- LOG, RELOAD, LOADAOF ----------------------------------------------------

func debugLog(c *engine.Ctx) {
	c.Srv.Warning("DEBUG LOG: " + cString(c.Args[2]))
	c.W.OK()
}

// debugReload is DEBUG RELOAD [MERGE|NOFLUSH|NOSAVE ...]: the server
// saves, empties and loads while the command runs (engine.Debug). It
// changes nothing to propagate: the dataset is the same, or, with
// NOSAVE, the file's, as in Redis.
func debugReload(c *engine.Ctx) {
	var opts engine.ReloadOptions
	for _, a := range c.Args[2:] {
		switch {
		case engine.EqualFold(a, "merge"):
			opts.Merge = true
		case engine.EqualFold(a, "noflush"):
			opts.NoFlush = true
		case engine.EqualFold(a, "nosave"):
			opts.NoSave = true
		default:
			c.Error("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.")
			return
		}
	}
	if msg := c.Srv.Debug().Reload(opts); msg != "" {
		c.Error(msg)
		return
	}
	c.W.OK()
}

// debugLoadAOF is DEBUG LOADAOF; Redis ignores any argument after it.
func debugLoadAOF(c *engine.Ctx) {
	if msg := c.Srv.Debug().LoadAOF(); msg != "" {
		c.Error(msg)
		return
	}
	c.W.OK()
}

func debugDropClusterPacketFilter(c *engine.Ctx) {
	if _, ok := c.IntArg(2); ok {
		c.W.OK() // no cluster bus: nothing to filter
	}
}

// ---- OBJECT, LISTPACK, QUICKLIST -------------------------------------------

// debugObject is DEBUG OBJECT key: the key as stored (dictFind: past its
// deadline or not, no access recorded), described in Redis's words. The
// address is the entry's, lru is the LRU clock (seconds, 24 bits) of the
// last access, serializedlength the length of the value's RDB encoding,
// and a list, which is a quicklist, adds the nodes Redis would give it
// (quicklistShape).
func debugObject(c *engine.Ctx) {
	e := c.DB.Peek(c.Args[2])
	if e == nil {
		c.Error(engine.ErrNoSuchKey)
		return
	}
	nowMs := c.KS.Now()
	idle := e.IdleSeconds(nowMs)
	lru := (nowMs/1000 - idle) & (1<<24 - 1)
	var extra string
	if l, ok := e.Obj().(*keyspace.List); ok {
		// zredis's lists are chunked their own way; a list Redis built
		// otherwise (pushes at the head, removals) may have other nodes.
		nodes, size := l.QuicklistShape(c.Config().Int("list-max-listpack-size"))
		avg := math.NaN()
		if nodes > 0 {
			avg = float64(l.Len()) / float64(nodes)
		}
		compressed := 0
		if c.Config().Int("list-compress-depth") != 0 {
			compressed = 1
		}
		extra = fmt.Sprintf(" ql_nodes:%d ql_avg_node:%.2f ql_listpack_max:%d ql_compressed:%d ql_uncompressed_size:%d",
			nodes, avg, c.Config().Int("list-max-listpack-size"), compressed, size)
	}
	c.W.Simple(fmt.Sprintf("Value at:%p refcount:%d encoding:%s serializedlength:%d lru:%d lru_seconds_idle:%d%s",
		e, e.Refcount(sharesIntegers(c)), e.Encoding(), len(rdb.Dump(e))-11, lru, idle, extra))
}

// debugLookup is objectCommandLookupOrReply: the live key, read without
// touching it, or "no such key".
func debugLookup(c *engine.Ctx) *keyspace.Entry {
	e := c.DB.LookupNoNotify(c.Args[2])
	if e == nil {
		c.Error(engine.ErrNoSuchKey)
	}
	return e
}

// debugListpack is DEBUG LISTPACK key. Redis prints the listpack on its
// standard output; zredis has no such dump to print.
func debugListpack(c *engine.Ctx) {
	e := debugLookup(c)
	if e == nil {
		return
	}
	if e.Encoding() != "listpack" {
		c.Error("ERR Not a listpack encoded object.")
		return
	}
	c.W.Simple("Listpack structure printed on stdout")
}

// debugQuicklist is DEBUG QUICKLIST key [0|1], as DEBUG LISTPACK.
func debugQuicklist(c *engine.Ctx) {
	e := debugLookup(c)
	if e == nil {
		return
	}
	if e.Encoding() != "quicklist" {
		c.Error("ERR Not a quicklist encoded object.")
		return
	}
	c.W.Simple("Quicklist structure printed on stdout")
}

// ---- POPULATE ----------------------------------------------------------------

// positiveLong is getPositiveLongFromObjectOrReply: a 64-bit integer, 0
// or more; anything else answers "value is out of range, must be
// positive".
func positiveLong(c *engine.Ctx, b []byte) (int64, bool) {
	n, ok := engine.ParseInt(b)
	if !ok || n < 0 {
		c.Error(engine.ErrCountPositive)
		return 0, false
	}
	return n, true
}

// debugPopulate is DEBUG POPULATE count [prefix] [size]: string keys
// prefix:N (key:N by default, the name cut at 127 bytes as Redis's
// buffer cuts it) holding value:N, or with size, value:N cut or padded
// with zero bytes to size bytes. A key that exists is left as it is.
// Nothing is propagated or counted as a change, as in Redis; WATCH sees
// the keys created.
func debugPopulate(c *engine.Ctx) {
	count, ok := positiveLong(c, c.Args[2])
	if !ok {
		return
	}
	var size int64
	if len(c.Args) == 5 {
		if size, ok = positiveLong(c, c.Args[4]); !ok {
			return
		}
		// Redis would try to allocate it and die of OOM; a Go
		// allocation that fails ends the process the same way.
		if size > c.Config().Int("proto-max-bulk-len") {
			c.Error(engine.ErrStringTooLong)
			return
		}
	}
	prefix := "key"
	if len(c.Args) >= 4 {
		prefix = cString(c.Args[3])
	}
	c.DB.Reserve(int(min(count, 1<<24)))
	key := make([]byte, 0, 128)
	val := make([]byte, 0, 32)
	var padded []byte
	if size > 0 {
		padded = make([]byte, size)
	}
	for j := int64(0); j < count; j++ {
		key = append(append(append(key[:0], prefix...), ':'), strconv.FormatInt(j, 10)...)
		if len(key) > 127 {
			key = key[:127] // snprintf into char buf[128]
		}
		if c.DB.Exists(key) {
			continue
		}
		val = strconv.AppendInt(append(val[:0], "value:"...), j, 10)
		if size > 0 {
			clear(padded)
			copy(padded, val)
			c.DB.SetString(key, padded, false, 0)
			continue
		}
		c.DB.SetString(key, val, false, 0)
	}
	c.W.OK()
}

// ---- DIGEST, DIGEST-VALUE ----------------------------------------------------

// digest is a 20-byte SHA-1 accumulator of debug.c.
type digest [20]byte

// xor is xorDigest: d ^= SHA1(b). Order does not matter.
func (d *digest) xor(b []byte) {
	h := sha1.Sum(b)
	for i := range d {
		d[i] ^= h[i]
	}
}

// mix is mixDigest: d = SHA1(d ^ SHA1(b)). Order matters.
func (d *digest) mix(b []byte) {
	d.xor(b)
	*d = sha1.Sum(d[:])
}

func (d *digest) hex() string { return hex.EncodeToString(d[:]) }

// redisTypeCode is the value's OBJ_* code in Redis (server.h).
func redisTypeCode(t keyspace.Type) uint32 {
	switch t {
	case keyspace.TypeList:
		return 1
	case keyspace.TypeSet:
		return 2
	case keyspace.TypeZSet:
		return 3
	case keyspace.TypeHash:
		return 4
	case keyspace.TypeStream:
		return 6
	}
	return 0 // OBJ_STRING
}

// objectDigest is xorObjectDigest: the value's type, then its content in
// a way that does not depend on the encoding (strings and list elements
// mixed in order; set members, hash pairs and sorted set pairs, each
// digested apart, xored in any order; a score as "%.17g"; stream entries
// in order as "ms.seq" and their fields and values), then the mark of a
// deadline.
func objectDigest(d *digest, e *keyspace.Entry) {
	var aux [4]byte
	binary.BigEndian.PutUint32(aux[:], redisTypeCode(e.Type()))
	d.mix(aux[:])
	if e.Type() == keyspace.TypeString {
		d.mix(e.Str())
	}
	var buf []byte
	switch o := e.Obj().(type) {
	case *keyspace.List:
		o.Each(0, false, func(_ int, v []byte) bool {
			d.mix(v)
			return true
		})
	case *keyspace.Set:
		o.Each(func(m keyspace.Member) bool {
			buf = m.Bytes(buf[:0])
			d.xor(buf)
			return true
		})
	case *keyspace.ZSet:
		o.Ascend(0, func(member string, score float64) bool {
			var ed digest
			ed.mix([]byte(member))
			buf = resp.AppendDouble(buf[:0], score)
			ed.mix(buf)
			d.xor(ed[:])
			return true
		})
	case *keyspace.Hash:
		o.Range(func(f, v []byte) bool {
			var ed digest
			ed.mix(f)
			ed.mix(v)
			d.xor(ed[:])
			return true
		})
	case *keyspace.Stream:
		o.Range(keyspace.StreamID{}, keyspace.MaxStreamID, false, func(se *keyspace.StreamEntry) bool {
			buf = strconv.AppendUint(buf[:0], se.ID.Ms, 10)
			buf = append(buf, '.')
			buf = strconv.AppendUint(buf, se.ID.Seq, 10)
			d.mix(buf)
			for _, fv := range se.FV {
				buf = fv.AppendTo(buf[:0])
				d.mix(buf)
			}
			return true
		})
	}
	if e.ExpireAt() != 0 {
		d.xor([]byte("!!expire!!"))
	}
}

// debugDigest is DEBUG DIGEST (computeDatasetDigest): per non-empty
// database, its number mixed in, then each key's digest (its name mixed
// with its value's) xored in; all zeros for an empty dataset. Keys past
// their deadline not yet expired count, as they do in Redis's dictionary.
func debugDigest(c *engine.Ctx) {
	var final digest
	for j := 0; j < c.KS.NumDBs(); j++ {
		db := c.KS.DB(j)
		if db.Len() == 0 {
			continue
		}
		var aux [4]byte
		binary.BigEndian.PutUint32(aux[:], uint32(j))
		final.mix(aux[:])
		db.EachEntry(func(key string, e *keyspace.Entry) bool {
			var kd digest
			kd.mix([]byte(key))
			objectDigest(&kd, e)
			final.xor(kd[:])
			return true
		})
	}
	c.W.Simple(final.hex())
}

// debugDigestValue is DEBUG DIGEST-VALUE key ...: each value's digest
// without its name, all zeros for a missing key; a key past its deadline
// still counts (no lookup that would expire it).
func debugDigestValue(c *engine.Ctx) {
	c.W.Array(len(c.Args) - 2)
	for _, k := range c.Args[2:] {
		var d digest
		if e := c.DB.Peek(k); e != nil {
			objectDigest(&d, e)
		}
		c.W.Simple(d.hex())
	}
}

// ---- PROTOCOL ------------------------------------------------------------------

// debugProtocol is DEBUG PROTOCOL type: a sample of each reply type,
// which a RESP2 connection gets in RESP2's forms (the attribute dropped,
// push refused).
func debugProtocol(c *engine.Ctx) {
	w := c.W
	switch t := c.Args[2]; {
	case engine.EqualFold(t, "string"):
		w.BulkString("Hello World")
	case engine.EqualFold(t, "integer"):
		w.Int(12345)
	case engine.EqualFold(t, "double"):
		w.Double(3.141)
	case engine.EqualFold(t, "bignum"):
		w.BigNumber("1234567999999999999999999999999999999")
	case engine.EqualFold(t, "null"):
		w.Null()
	case engine.EqualFold(t, "array"):
		w.Array(3)
		for j := range 3 {
			w.Int(int64(j))
		}
	case engine.EqualFold(t, "set"):
		w.Set(3)
		for j := range 3 {
			w.Int(int64(j))
		}
	case engine.EqualFold(t, "map"):
		w.Map(3)
		for j := range 3 {
			w.Int(int64(j))
			w.Bool(j == 1)
		}
	case engine.EqualFold(t, "attrib"):
		if w.Proto() >= 3 {
			w.Attribute(1)
			w.BulkString("key-popularity")
			w.Array(2)
			w.BulkString("key:123")
			w.Int(90)
		}
		// An attribute describes the reply that follows it.
		w.BulkString("Some real reply following the attribute")
	case engine.EqualFold(t, "push"):
		if w.Proto() < 3 {
			c.Error("ERR RESP2 is not supported by this command")
			return
		}
		w.Push(2)
		w.BulkString("server-cpu-usage")
		w.Int(42)
		// A push is not the reply: a client that skips it still gets one.
		w.BulkString("Some real reply following the push reply")
	case engine.EqualFold(t, "true"):
		w.Bool(true)
	case engine.EqualFold(t, "false"):
		w.Bool(false)
	case engine.EqualFold(t, "verbatim"):
		w.Verbatim("This is a verbatim\nstring")
	default:
		c.Error("ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false")
	}
}

// ---- SLEEP, knobs ----------------------------------------------------------------

// debugSleep is DEBUG SLEEP seconds: the server stops, as Redis's does,
// since the keyspace lock is held meanwhile. The argument is read as
// strtod reads it (garbage is 0); a negative time, or one too large for
// Redis's microseconds, does not sleep.
func debugSleep(c *engine.Ctx) {
	us := strtodPrefix(c.Args[2]) * 1e6
	if !(us >= 1) || us >= math.MaxInt64 {
		c.W.OK()
		return
	}
	time.Sleep(time.Duration(int64(us)) * time.Microsecond)
	c.W.OK()
}

// debugPackedThreshold is DEBUG QUICKLIST-PACKED-THRESHOLD size: Redis's
// checks of the size (a memory value, at most 4 GB less 1 MB); zredis's
// lists store large elements alike, so it changes nothing.
func debugPackedThreshold(c *engine.Ctx) {
	sz, ok := config.Memtoull(string(c.Args[2]))
	if !ok || sz > 1<<32-1<<20 {
		c.Error("ERR argument must be a memory value bigger than 1 and smaller than 4gb")
		return
	}
	c.W.OK()
}

// debugReplyBuffer is DEBUG REPLYBUFFER PEAK-RESET-TIME never|reset|ms
// and REPLYBUFFER RESIZING 0|1: the arguments checked as Redis checks
// them; zredis's reply buffers are sized per batch, so they change
// nothing.
func debugReplyBuffer(c *engine.Ctx) {
	switch a := c.Args[2]; {
	case engine.EqualFold(a, "peak-reset-time"):
		if v := c.Args[3]; !engine.EqualFold(v, "never") && !engine.EqualFold(v, "reset") {
			if _, ok := c.IntArg(3); !ok {
				return
			}
		}
	case engine.EqualFold(a, "resizing"):
	default:
		subcommandSyntax(c)
		return
	}
	c.W.OK()
}

// debugClientEviction answers as Redis without maxmemory-clients; with
// it, zredis has no buckets of clients to show.
func debugClientEviction(c *engine.Ctx) {
	if c.Config().Int("maxmemory-clients") == 0 {
		c.Error("ERR maxmemory-clients is disabled.")
		return
	}
	debugUnsupported(c)
}

// debugMallctl is DEBUG MALLCTL key [value]: zredis has no jemalloc, so
// every key is one jemalloc does not know (ENOENT), after Redis's check
// of the value.
func debugMallctl(c *engine.Ctx) {
	if len(c.Args) > 3 {
		if _, ok := c.IntArg(3); !ok {
			return
		}
	}
	c.Error("ERR No such file or directory")
}

// debugMallctlStr is DEBUG MALLCTL-STR key [value], as DEBUG MALLCTL.
func debugMallctlStr(c *engine.Ctx) { c.Error("ERR No such file or directory") }

// stringmatchCycles is how many random patterns DEBUG STRINGMATCH-TEST
// tries (Redis tries ten million).
const stringmatchCycles = 1_000_000

// debugStringmatchTest is DEBUG STRINGMATCH-TEST: random patterns of
// random bytes against random strings, through the glob matcher every
// command uses, to show that none of them crashes it.
func debugStringmatchTest(c *engine.Ctx) {
	var str, pat [32]byte
	matches := 0
	for range stringmatchCycles {
		sl, pl := rand.IntN(len(str)), rand.IntN(len(pat))
		for j := range sl {
			str[j] = byte(rand.IntN(128))
		}
		for j := range pl {
			pat[j] = byte(rand.IntN(128))
		}
		if sds.Match(pat[:pl], str[:sl], false) {
			matches++
		}
	}
	c.W.Simple("Apparently Redis did not crash: test passed")
}

// ---- HTSTATS, HTSTATS-KEY ------------------------------------------------------------

// htStats is dictGetStats for a hash table of n elements, the keys given
// by each: zredis's tables are not Redis's, so the figures are those of
// Redis's table for the same elements, its size the power of two it would
// have grown to, the elements spread by a seeded hash (Redis's is seeded
// too).
func htStats(n int, each func(fn func(k []byte))) string {
	const vectLen = 50 // DICT_STATS_VECTLEN
	if n == 0 {
		return "Hash table 0 stats (main hash table):\nNo stats available for empty dictionaries\n"
	}
	size := 4
	for size < n {
		size *= 2
	}
	chains := make([]int, size)
	seed := maphash.MakeSeed()
	each(func(k []byte) { chains[maphash.Bytes(seed, k)&uint64(size-1)]++ })
	var clvector [vectLen]int
	slots, maxChain, total := 0, 0, 0
	for _, l := range chains {
		if l == 0 {
			clvector[0]++
			continue
		}
		slots++
		clvector[min(l, vectLen-1)]++
		maxChain = max(maxChain, l)
		total += l
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Hash table 0 stats (main hash table):\n table size: %d\n number of elements: %d\n different slots: %d\n max chain length: %d\n avg chain length (counted): %.02f\n avg chain length (computed): %.02f\n Chain length distribution:\n",
		size, n, slots, maxChain, float32(total)/float32(slots), float32(n)/float32(slots))
	for i := 0; i < vectLen-1; i++ {
		if clvector[i] != 0 {
			fmt.Fprintf(&b, "   %d: %d (%.02f%%)\n", i, clvector[i], float32(clvector[i])/float32(size)*100)
		}
	}
	return b.String()
}

// debugHTStats is DEBUG HTSTATS dbid: the statistics of a database's
// keys and of its keys with a deadline.
func debugHTStats(c *engine.Ctx) {
	id, ok := c.IntArg(2)
	if !ok {
		return
	}
	if id < 0 || id >= int64(c.KS.NumDBs()) {
		c.Error("ERR Out of range database")
		return
	}
	db := c.KS.DB(int(id))
	keys := func(volatile bool) func(fn func(k []byte)) {
		return func(fn func(k []byte)) {
			db.EachEntry(func(key string, e *keyspace.Entry) bool {
				if !volatile || e.ExpireAt() != 0 {
					fn([]byte(key))
				}
				return true
			})
		}
	}
	c.W.Verbatim("[Dictionary HT]\n" + htStats(db.Len(), keys(false)) + "[Expires HT]\n" + htStats(db.Volatile(), keys(true)))
}

// debugHTStatsKey is DEBUG HTSTATS-KEY key, for a value Redis keeps in a
// hash table: a set or hash of the hashtable encoding, a sorted set of
// the skiplist one.
func debugHTStatsKey(c *engine.Ctx) {
	e := debugLookup(c)
	if e == nil {
		return
	}
	var n int
	var each func(fn func(k []byte))
	switch o := e.Obj().(type) {
	case *keyspace.Set:
		if e.Encoding() == "hashtable" {
			n = o.Len()
			each = func(fn func(k []byte)) {
				var buf []byte
				o.Each(func(m keyspace.Member) bool {
					buf = m.Bytes(buf[:0])
					fn(buf)
					return true
				})
			}
		}
	case *keyspace.Hash:
		if e.Encoding() == "hashtable" {
			n = o.Len()
			each = func(fn func(k []byte)) {
				o.Range(func(f, _ []byte) bool {
					fn(f)
					return true
				})
			}
		}
	case *keyspace.ZSet:
		if e.Encoding() == "skiplist" {
			n = o.Len()
			each = func(fn func(k []byte)) {
				o.Ascend(0, func(m string, _ float64) bool {
					fn([]byte(m))
					return true
				})
			}
		}
	}
	if each == nil {
		c.Error("ERR The value stored at the specified key is not represented using an hash table")
		return
	}
	c.W.Verbatim(htStats(n, each))
}
