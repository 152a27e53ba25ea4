package tests

import (
	"strconv"
	"strings"
	"testing"
)

// Keyspace notifications of the hash, set, sorted-set and list commands
// and of the blocking pops, compared with redis-server 7.0: the same
// events (keyspace and keyevent channels), in the same order, including
// the "del" that follows a command that empties its key and the "new" of
// a key a command creates.

// notifyCase is one differential run: cmds on both servers with
// notify-keyspace-events set to flags.
type notifyCase struct {
	name  string
	flags string
	cmds  [][]string
}

func runNotifyCases(t *testing.T, cases []notifyCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			diffNotifications(t, tc.flags, tc.cmds...)
		})
	}
}

// nl groups command lines into a case's commands.
func nl(cmds ...[]string) [][]string { return cmds }

func TestNotifyHashes(t *testing.T) {
	runNotifyCases(t, []notifyCase{
		{"hset", "KEA", nl(
			nc("HSET", "h", "a", "1", "b", "2"),
			nc("HSET", "h", "a", "1"), // nothing new: still "hset"
			nc("HMSET", "h", "c", "3"),
			nc("HMSET", "h2", "x", "y"),
		)},
		{"hsetnx", "KEA", nl(
			nc("HSETNX", "h", "a", "1"),
			nc("HSETNX", "h", "a", "2"), // exists: no event
			nc("HSETNX", "h", "b", "2"),
		)},
		{"hincrby", "KEA", nl(
			nc("HINCRBY", "h", "n", "5"),
			nc("HINCRBY", "h", "n", "0"),
			nc("HINCRBY", "h", "n", "-10"),
			nc("HSET", "h", "s", "text"),
			nc("HINCRBY", "h", "s", "1"), // not an integer: no event
			nc("HINCRBY", "h", "n", "x"), // bad increment: no event
			nc("HSET", "h", "big", "9223372036854775807"),
			nc("HINCRBY", "h", "big", "1"), // overflow: no event
		)},
		{"hincrbyfloat", "KEA", nl(
			nc("HINCRBYFLOAT", "h", "f", "1.5"),
			nc("HINCRBYFLOAT", "h", "f", "0"),
			nc("HINCRBYFLOAT", "h", "f", "-2.5e3"),
			nc("HSET", "h", "s", "text"),
			nc("HINCRBYFLOAT", "h", "s", "1"),     // not a float: no event
			nc("HINCRBYFLOAT", "h", "f", "inf"),   // no event
			nc("HINCRBYFLOAT", "h2", "f", "nope"), // no key created
		)},
		{"hdel", "KEA", nl(
			nc("HDEL", "missing", "a"),
			nc("HSET", "h", "a", "1", "b", "2", "c", "3"),
			nc("HDEL", "h", "zz"),           // nothing deleted: no event
			nc("HDEL", "h", "a", "zz"),      // "hdel"
			nc("HDEL", "h", "b", "c", "zz"), // "hdel" then "del"
			nc("EXISTS", "h"),
		)},
		{"hdel hashtable", "KEA", nl(
			nc("CONFIG", "SET", "hash-max-listpack-entries", "2"),
			nc("HSET", "h", "a", "1", "b", "2", "c", "3"),
			nc("HDEL", "h", "a", "b", "c"),
			nc("CONFIG", "SET", "hash-max-listpack-entries", "128"),
		)},
		{"reads send nothing", "KEA", nl(
			nc("HSET", "h", "a", "1"),
			nc("HGET", "h", "a"),
			nc("HMGET", "h", "a", "b"),
			nc("HGETALL", "h"),
			nc("HKEYS", "h"),
			nc("HVALS", "h"),
			nc("HLEN", "h"),
			nc("HEXISTS", "h", "a"),
			nc("HSTRLEN", "h", "a"),
			nc("HRANDFIELD", "h"),
			nc("HRANDFIELD", "h", "5", "WITHVALUES"),
			nc("HRANDFIELD", "h", "-3"),
			nc("HSCAN", "h", "0"),
			nc("HGET", "missing", "a"),
		)},
		{"wrong type", "KEA", nl(
			nc("RPUSH", "l", "x"),
			nc("HSET", "l", "a", "1"),
			nc("HSETNX", "l", "a", "1"),
			nc("HINCRBY", "l", "a", "1"),
			nc("HINCRBYFLOAT", "l", "a", "1"),
			nc("HDEL", "l", "a"),
		)},
	})
}

func TestNotifySets(t *testing.T) {
	runNotifyCases(t, []notifyCase{
		{"sadd srem", "KEA", nl(
			nc("SADD", "s", "a", "b", "c"),
			nc("SADD", "s", "a"), // nothing added: no event
			nc("SADD", "s", "a", "d"),
			nc("SREM", "s", "zz"), // nothing removed: no event
			nc("SREM", "missing", "a"),
			nc("SREM", "s", "a", "zz"),
			nc("SREM", "s", "b", "c", "d", "zz"), // "srem" then "del"
			nc("EXISTS", "s"),
			nc("SADD", "i", "1", "2", "3"), // intset
			nc("SREM", "i", "1", "2", "3"),
		)},
		{"smove", "KEA", nl(
			nc("SADD", "src", "a", "b"),
			nc("SMOVE", "src", "dst", "a"),  // "srem" src, "sadd" dst
			nc("SMOVE", "src", "dst", "zz"), // not a member: no event
			nc("SMOVE", "missing", "dst", "a"),
			nc("SMOVE", "dst", "dst", "a"), // same key: no event
			nc("SADD", "dst", "b"),
			nc("SMOVE", "src", "dst", "b"), // already in dst: "srem", "del", no "sadd"
			nc("SMOVE", "dst", "other", "a"),
			nc("SMOVE", "dst", "other", "b"), // "srem", "del", "sadd"
			nc("RPUSH", "l", "x"),
			nc("SMOVE", "other", "l", "a"), // wrong type: no event
		)},
		{"spop", "KEA", nl(
			nc("SPOP", "missing"),
			nc("SPOP", "missing", "3"),
			nc("SADD", "s", "only"),
			nc("SPOP", "s"),           // "spop" then "del"
			nc("SADD", "s", "1", "2"), // an intset: the reply's order is fixed
			nc("SPOP", "s", "0"),      // no event
			nc("SPOP", "s", "5"),      // whole set: "spop" then "del"
			nc("SADD", "i", "1", "2", "3"),
			nc("SPOP", "i", "3"),
		)},
		{"stores", "KEA", nl(
			nc("SADD", "x", "1", "2", "3"),
			nc("SADD", "y", "2", "3", "4"),
			nc("SINTERSTORE", "out", "x", "y"),       // "sinterstore"
			nc("SINTERSTORE", "out", "x", "y"),       // overwrite: "sinterstore"
			nc("SINTERSTORE", "out", "x", "missing"), // "del"
			nc("SINTERSTORE", "out", "x", "missing"), // nothing to delete: no event
			nc("SUNIONSTORE", "out", "x", "y"),
			nc("SUNIONSTORE", "out", "missing", "missing2"), // "del"
			nc("SDIFFSTORE", "out", "x", "y"),
			nc("SDIFFSTORE", "out", "x", "x"), // empty: "del"
			nc("SDIFFSTORE", "out", "x", "x"),
			nc("SINTERSTORE", "x", "x", "y"), // destination among the sources
			nc("SUNIONSTORE", "y", "y"),
			nc("SET", "str", "v"),
			nc("SINTERSTORE", "str", "x", "missing"), // deletes a string: "del"
		)},
		{"stores of hashtables", "KEA", nl(
			nc("SADD", "x", "a", "b", "c", "d"),
			nc("SADD", "y", "c", "d", "e"),
			nc("SINTERSTORE", "out", "x", "y"),
			nc("SUNIONSTORE", "out", "x", "y"),
			nc("SDIFFSTORE", "out", "y", "x"),
			nc("SDIFFSTORE", "out", "y", "y"),
		)},
		{"reads send nothing", "KEA", nl(
			nc("SADD", "s", "a"),
			nc("SADD", "t", "a", "b"),
			nc("SISMEMBER", "s", "a"),
			nc("SMISMEMBER", "s", "a", "b"),
			nc("SCARD", "s"),
			nc("SMEMBERS", "s"),
			nc("SRANDMEMBER", "s"),
			nc("SRANDMEMBER", "s", "-2"),
			nc("SRANDMEMBER", "s", "5"),
			nc("SINTER", "s", "t"),
			nc("SINTERCARD", "2", "s", "t"),
			nc("SUNION", "s", "missing"),
			nc("SDIFF", "t", "s"),
			nc("SSCAN", "s", "0"),
		)},
		{"wrong type", "KEA", nl(
			nc("RPUSH", "l", "x"),
			nc("SADD", "l", "a"),
			nc("SREM", "l", "a"),
			nc("SPOP", "l"),
			nc("SPOP", "l", "2"),
			nc("SADD", "s", "a"),
			nc("SINTERSTORE", "out", "s", "l"),
			nc("SUNIONSTORE", "out", "s", "l"),
		)},
	})
}

func TestNotifySortedSets(t *testing.T) {
	runNotifyCases(t, []notifyCase{
		{"zadd", "KEA", nl(
			nc("ZADD", "z", "1", "a", "2", "b"),
			nc("ZADD", "z", "1", "a"),             // same score: no event
			nc("ZADD", "z", "3", "a"),             // updated: "zadd"
			nc("ZADD", "z", "NX", "5", "a"),       // refused: no event
			nc("ZADD", "z", "XX", "5", "c"),       // refused: no event
			nc("ZADD", "missing", "XX", "1", "a"), // no key made
			nc("ZADD", "z", "GT", "1", "a"),
			nc("ZADD", "z", "LT", "1", "a"),
			nc("ZADD", "z", "CH", "7", "a", "8", "d"),
			nc("ZADD", "z", "INCR", "1", "a"), // "zincr"
			nc("ZADD", "z", "INCR", "0", "a"), // score unchanged: no event
			nc("ZADD", "z", "NX", "INCR", "1", "a"),
			nc("ZADD", "z", "1", "x", "nan", "y"), // not a float: no event
			nc("ZADD", "inf", "inf", "a"),
			nc("ZADD", "inf", "INCR", "-inf", "a"), // NaN: no event
		)},
		{"zincrby", "KEA", nl(
			nc("ZINCRBY", "z", "1", "a"),
			nc("ZINCRBY", "z", "0", "a"), // unchanged: no event
			nc("ZINCRBY", "z", "-2.5", "a"),
			nc("ZINCRBY", "z", "x", "a"),
		)},
		{"zrem", "KEA", nl(
			nc("ZREM", "missing", "a"),
			nc("ZADD", "z", "1", "a", "2", "b", "3", "c"),
			nc("ZREM", "z", "zz"),
			nc("ZREM", "z", "a", "zz"),
			nc("ZREM", "z", "b", "c"), // "zrem" then "del"
			nc("EXISTS", "z"),
		)},
		{"zremrange", "KEA", nl(
			nc("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"),
			nc("ZREMRANGEBYRANK", "z", "10", "20"), // nothing: no event
			nc("ZREMRANGEBYRANK", "z", "0", "0"),
			nc("ZREMRANGEBYSCORE", "z", "100", "200"),
			nc("ZREMRANGEBYSCORE", "z", "2", "(4"),
			nc("ZREMRANGEBYLEX", "z", "[zz", "[zzz"),
			nc("ZREMRANGEBYRANK", "missing", "0", "-1"),
			nc("ZREMRANGEBYSCORE", "z", "-inf", "+inf"), // "zremrangebyscore", "del"
			nc("ZADD", "lex", "0", "a", "0", "b", "0", "c"),
			nc("ZREMRANGEBYLEX", "lex", "[a", "[b"),
			nc("ZREMRANGEBYLEX", "lex", "-", "+"),
			nc("ZADD", "r", "0", "a", "0", "b"),
			nc("ZREMRANGEBYRANK", "r", "0", "-1"),
		)},
		{"zpop", "KEA", nl(
			nc("ZPOPMIN", "missing"),
			nc("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"),
			nc("ZPOPMIN", "z"),
			nc("ZPOPMAX", "z"),
			nc("ZPOPMIN", "z", "0"),  // no event
			nc("ZPOPMAX", "z", "2"),  // one "zpopmax"
			nc("ZPOPMIN", "z", "10"), // "zpopmin" then "del"
			nc("ZADD", "z", "1", "a", "2", "b", "3", "c"),
			nc("ZMPOP", "2", "missing", "z", "MIN"),
			nc("ZMPOP", "1", "z", "MAX", "COUNT", "10"),
			nc("ZMPOP", "1", "z", "MAX"),
		)},
		{"zpop skiplist", "KEA", nl(
			nc("CONFIG", "SET", "zset-max-listpack-entries", "2"),
			nc("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"),
			nc("ZPOPMAX", "z", "3"),
			nc("ZREM", "z", "a"),
			nc("CONFIG", "SET", "zset-max-listpack-entries", "128"),
		)},
		{"zrangestore", "KEA", nl(
			nc("ZADD", "z", "1", "a", "2", "b", "3", "c"),
			nc("ZRANGESTORE", "dst", "z", "0", "-1"),
			nc("ZRANGESTORE", "dst", "z", "0", "0"), // overwrite
			nc("ZRANGESTORE", "dst", "z", "5", "6"), // empty: "del"
			nc("ZRANGESTORE", "dst", "z", "5", "6"), // nothing to delete
			nc("ZRANGESTORE", "dst", "missing", "0", "-1"),
			nc("ZRANGESTORE", "dst", "z", "(1", "+inf", "BYSCORE", "LIMIT", "0", "1"),
			nc("ZRANGESTORE", "dst", "z", "[c", "-", "BYLEX", "REV"),
			nc("ZRANGESTORE", "z", "z", "0", "0"), // destination is the source
		)},
		{"set operation stores", "KEA", nl(
			nc("ZADD", "a", "1", "x", "2", "y"),
			nc("ZADD", "b", "2", "y", "3", "z"),
			nc("SADD", "s", "y", "w"),
			nc("ZUNIONSTORE", "u", "2", "a", "b"),
			nc("ZUNIONSTORE", "u", "2", "a", "s", "WEIGHTS", "1", "2"),
			nc("ZINTERSTORE", "i", "2", "a", "b", "AGGREGATE", "MAX"),
			nc("ZINTERSTORE", "i", "2", "a", "missing"), // empty: "del"
			nc("ZDIFFSTORE", "d", "2", "a", "b"),
			nc("ZDIFFSTORE", "d", "2", "a", "a"), // empty: "del"
			nc("ZUNIONSTORE", "u", "2", "missing", "missing2"),
			nc("ZUNIONSTORE", "a", "2", "a", "b"), // destination among the sources
			nc("ZINTERSTORE", "i", "1", "s"),
		)},
		{"reads send nothing", "KEA", nl(
			nc("ZADD", "z", "1", "a", "2", "b"),
			nc("ZSCORE", "z", "a"),
			nc("ZMSCORE", "z", "a", "x"),
			nc("ZCARD", "z"),
			nc("ZCOUNT", "z", "-inf", "+inf"),
			nc("ZLEXCOUNT", "z", "-", "+"),
			nc("ZRANK", "z", "b"),
			nc("ZREVRANK", "z", "b"),
			nc("ZRANGE", "z", "0", "-1", "WITHSCORES"),
			nc("ZREVRANGE", "z", "0", "-1"),
			nc("ZRANGEBYSCORE", "z", "-inf", "+inf"),
			nc("ZREVRANGEBYSCORE", "z", "+inf", "-inf"),
			nc("ZRANGEBYLEX", "z", "-", "+"),
			nc("ZREVRANGEBYLEX", "z", "+", "-"),
			nc("ZUNION", "2", "z", "missing"),
			nc("ZINTER", "1", "z"),
			nc("ZDIFF", "1", "z"),
			nc("ZINTERCARD", "1", "z"),
			nc("ZRANDMEMBER", "z", "5"),
			nc("ZSCAN", "z", "0"),
		)},
		{"wrong type", "KEA", nl(
			nc("RPUSH", "l", "x"),
			nc("ZADD", "l", "1", "a"),
			nc("ZINCRBY", "l", "1", "a"),
			nc("ZREM", "l", "a"),
			nc("ZREMRANGEBYRANK", "l", "0", "-1"),
			nc("ZPOPMIN", "l"),
			nc("ZADD", "z", "1", "a"),
			nc("ZUNIONSTORE", "out", "2", "z", "l"),
			nc("ZRANGESTORE", "out", "l", "0", "-1"),
		)},
	})
}

func TestNotifyLists(t *testing.T) {
	runNotifyCases(t, []notifyCase{
		{"push", "KEA", nl(
			nc("LPUSH", "l", "a", "b", "c"), // one "lpush"
			nc("RPUSH", "l", "d", "e"),
			nc("LPUSHX", "missing", "a"), // no event
			nc("RPUSHX", "missing", "a"),
			nc("LPUSHX", "l", "x"),
			nc("RPUSHX", "l", "y", "z"),
		)},
		{"pop", "KEA", nl(
			nc("LPOP", "missing"),
			nc("RPOP", "missing", "2"),
			nc("RPUSH", "l", "a", "b", "c", "d", "e"),
			nc("LPOP", "l"),
			nc("RPOP", "l"),
			nc("LPOP", "l", "0"), // no event
			nc("LPOP", "l", "2"), // one "lpop"
			nc("RPOP", "l", "5"), // "rpop" then "del"
			nc("RPUSH", "l", "only"),
			nc("LPOP", "l"),
		)},
		{"lmpop", "KEA", nl(
			nc("LMPOP", "1", "missing", "LEFT"),
			nc("RPUSH", "l", "a", "b", "c"),
			nc("LMPOP", "2", "missing", "l", "LEFT"),
			nc("LMPOP", "1", "l", "RIGHT", "COUNT", "1"),
			nc("LMPOP", "1", "l", "LEFT", "COUNT", "10"),
		)},
		{"lset linsert", "KEA", nl(
			nc("LSET", "missing", "0", "x"),
			nc("RPUSH", "l", "a", "b"),
			nc("LSET", "l", "0", "x"),
			nc("LSET", "l", "-1", "y"),
			nc("LSET", "l", "9", "z"), // out of range: no event
			nc("LINSERT", "l", "BEFORE", "x", "w"),
			nc("LINSERT", "l", "AFTER", "y", "v"),
			nc("LINSERT", "l", "AFTER", "nothere", "v"), // no event
			nc("LINSERT", "missing", "BEFORE", "x", "v"),
		)},
		{"lrem", "KEA", nl(
			nc("LREM", "missing", "0", "a"),
			nc("RPUSH", "l", "a", "b", "a", "c", "a"),
			nc("LREM", "l", "0", "zz"), // no event
			nc("LREM", "l", "1", "a"),
			nc("LREM", "l", "-1", "a"),
			nc("LREM", "l", "0", "a"),
			nc("LREM", "l", "0", "b"),
			nc("LREM", "l", "0", "c"), // "lrem" then "del"
		)},
		{"ltrim", "KEA", nl(
			nc("LTRIM", "missing", "0", "1"),
			nc("RPUSH", "l", "a", "b", "c", "d"),
			nc("LTRIM", "l", "0", "100"), // nothing trimmed: still "ltrim"
			nc("LTRIM", "l", "1", "2"),
			nc("LTRIM", "l", "5", "10"), // "ltrim" then "del"
			nc("EXISTS", "l"),
		)},
		{"lmove", "KEA", nl(
			nc("LMOVE", "missing", "dst", "LEFT", "RIGHT"),
			nc("RPUSH", "src", "a", "b", "c"),
			nc("LMOVE", "src", "dst", "LEFT", "RIGHT"), // "rpush" dst, "lpop" src
			nc("LMOVE", "src", "dst", "RIGHT", "LEFT"),
			nc("LMOVE", "dst", "dst", "LEFT", "RIGHT"), // rotation
			nc("RPOPLPUSH", "src", "dst"),              // src emptied: "del" last
			nc("RPOPLPUSH", "dst", "dst"),
			nc("SET", "str", "v"),
			nc("LMOVE", "dst", "str", "LEFT", "LEFT"), // wrong type: no event
			nc("RPUSH", "one", "x"),
			nc("LMOVE", "one", "one", "LEFT", "RIGHT"), // one element onto itself
			nc("RPOPLPUSH", "one", "two"),
		)},
		{"reads send nothing", "KEA", nl(
			nc("RPUSH", "l", "a", "b"),
			nc("LLEN", "l"),
			nc("LRANGE", "l", "0", "-1"),
			nc("LINDEX", "l", "0"),
			nc("LPOS", "l", "b"),
			nc("LLEN", "missing"),
		)},
		{"wrong type", "KEA", nl(
			nc("SADD", "s", "x"),
			nc("LPUSH", "s", "a"),
			nc("RPUSHX", "s", "a"),
			nc("LPOP", "s"),
			nc("LSET", "s", "0", "a"),
			nc("LTRIM", "s", "0", "1"),
			nc("RPOPLPUSH", "s", "l"),
		)},
	})
}

// TestNotifyClassFilters runs families with only some classes enabled:
// a type's own events are published only with its class, "del" only
// with g, "new" only with n, and K or E picks the channel.
// Bitmap commands are string events: setbit for SETBIT and a BITFIELD
// that changed bits, set or del for BITOP's destination, new for a key
// they create.
func TestNotifyBitmaps(t *testing.T) {
	runNotifyCases(t, []notifyCase{
		{"bitmaps", "KEAn", nl(
			nc("SETBIT", "b", "3", "1"),
			nc("SETBIT", "b", "3", "1"),  // unchanged: no event
			nc("SETBIT", "b", "30", "0"), // grows the string: an event
			nc("BITFIELD", "b", "SET", "u8", "0", "0"),
			nc("BITFIELD", "b", "SET", "u8", "0", "0"), // unchanged
			nc("BITFIELD", "f", "INCRBY", "i5", "100", "1", "GET", "u8", "0"),
			nc("BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "9"),
			nc("BITFIELD_RO", "f", "GET", "u8", "0"),
			nc("BITOP", "OR", "d", "b", "f"),
			nc("BITOP", "AND", "d", "missing"),
			nc("BITOP", "AND", "d", "missing"),
			nc("SETBIT", "b", "-1", "1"),
		)},
	})
}

// SORT ... STORE: sortstore on the destination (new when it is created),
// del when the result is empty.
func TestNotifySortStore(t *testing.T) {
	runNotifyCases(t, []notifyCase{
		{"sort store", "KEAn", nl(
			nc("RPUSH", "l", "2", "1"),
			nc("SORT", "l", "STORE", "d"),
			nc("SORT", "l", "STORE", "d"),
			nc("SORT", "l", "LIMIT", "0", "0", "STORE", "d"),
			nc("SORT", "missing", "STORE", "d"),
			nc("SORT", "l"),
		)},
	})
}

// HyperLogLog: pfadd for PFADD that changed a register (new for a key it
// created) and for PFMERGE; PFCOUNT none, though it writes its cache.
func TestNotifyHyperLogLog(t *testing.T) {
	runNotifyCases(t, []notifyCase{
		{"hll", "KEAn", nl(
			nc("PFADD", "h", "a"),
			nc("PFADD", "h", "a"),
			nc("PFADD", "h2"),
			nc("PFCOUNT", "h"),
			nc("PFMERGE", "m", "h", "h2"),
			nc("PFMERGE", "m"),
			nc("PFDEBUG", "TODENSE", "h"),
		)},
	})
}

// Geo: GEOADD is ZADD (its zadd event), the searches that store send
// georadiusstore or geosearchstore (new for a key created, del for an
// empty result).
func TestNotifyGeo(t *testing.T) {
	runNotifyCases(t, []notifyCase{
		{"geo", "KEAn", nl(
			nc("GEOADD", "g", "13.361389", "38.115556", "Palermo"),
			nc("GEOADD", "g", "13.361389", "38.115556", "Palermo"),
			nc("GEORADIUS", "g", "13", "38", "100", "km", "STORE", "d"),
			nc("GEOSEARCHSTORE", "d2", "g", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km"),
			nc("GEORADIUS", "g", "0", "0", "1", "km", "STORE", "d"),
		)},
	})
}

func TestNotifyClassFilters(t *testing.T) {
	mixed := nl(
		nc("HSET", "h", "a", "1"),
		nc("HDEL", "h", "a"),
		nc("SADD", "s", "a"),
		nc("SMOVE", "s", "s2", "a"),
		nc("SPOP", "s2"),
		nc("ZADD", "z", "1", "a"),
		nc("ZINCRBY", "z", "1", "a"),
		nc("ZPOPMIN", "z"),
		nc("RPUSH", "l", "a", "b"),
		nc("LMOVE", "l", "l2", "LEFT", "LEFT"),
		nc("LPOP", "l"),
		nc("SADD", "x", "1"),
		nc("SUNIONSTORE", "u", "x"),
		nc("ZUNIONSTORE", "zu", "1", "x"),
		nc("SINTERSTORE", "u", "missing"),
	)
	var cases []notifyCase
	for _, flags := range []string{"Kh", "Eh", "El", "Kl", "Ez", "Kz", "Es", "Ks", "Eg", "Kgl", "Eszh", "En", "Kn", "KEn", "KEAn", "Elg$", "KA"} {
		cases = append(cases, notifyCase{flags, flags, mixed})
	}
	runNotifyCases(t, cases)
}

// TestNotifyOtherDB checks that events name the client's database.
func TestNotifyOtherDB(t *testing.T) {
	runNotifyCases(t, []notifyCase{
		{"db 5", "KEA", nl(
			nc("SELECT", "5"),
			nc("HSET", "h", "a", "1"),
			nc("HDEL", "h", "a"),
			nc("SADD", "s", "a"),
			nc("SPOP", "s"),
			nc("ZADD", "z", "1", "a"),
			nc("ZPOPMAX", "z"),
			nc("RPUSH", "l", "a"),
			nc("RPOPLPUSH", "l", "l2"),
			nc("SELECT", "0"),
		)},
	})
}

// TestNotifyTransaction checks the events of commands run by EXEC: each
// command's in order, as if sent one by one.
func TestNotifyTransaction(t *testing.T) {
	runNotifyCases(t, []notifyCase{
		{"exec", "KEA", nl(
			nc("MULTI"),
			nc("RPUSH", "l", "a", "b"),
			nc("LPOP", "l"),
			nc("SADD", "s", "a"),
			nc("SREM", "s", "a"),
			nc("HSET", "h", "f", "v"),
			nc("ZADD", "z", "1", "m"),
			nc("ZREM", "z", "m"),
			nc("RPOP", "l"),
			nc("EXEC"),
		)},
	})
}

// ---- blocking pops --------------------------------------------------------

// notifyStep is one step of diffNotifySteps: a command on the control
// connections (replies compared, or only their shape when random), or a
// blocking command sent on a connection of its own in database db, which
// must block.
type notifyStep struct {
	cmd    []string
	random bool
	block  bool
	db     int
}

func step(args ...string) notifyStep              { return notifyStep{cmd: args} }
func stepRandom(args ...string) notifyStep        { return notifyStep{cmd: args, random: true} }
func stepBlock(db int, args ...string) notifyStep { return notifyStep{cmd: args, block: true, db: db} }

// diffNotifySteps is diffNotifications for runs that need more than one
// client or whose replies are random by nature. Each blocking step opens
// a connection on both servers, sends its command there and waits until
// the server counts it as blocked (so that the waiters' order is the
// same on both); once every step ran, the blocked connections' replies
// are read (every one must have been served) and compared, then the
// published events are.
func diffNotifySteps(t *testing.T, flags string, steps ...notifyStep) {
	t.Helper()
	d := NewDiff(t)
	t.Cleanup(func() {
		d.Z.Do("CONFIG", "SET", "notify-keyspace-events", "")
		d.R.Do("CONFIG", "SET", "notify-keyspace-events", "")
	})
	// Blocked clients of an earlier test may still be leaving.
	waitBlocked(t, d.Z, 0)
	waitBlocked(t, d.R, 0)
	d.Do("CONFIG", "SET", "notify-keyspace-events", flags)
	zsub, rsub := Dial(t, shared.z.Addr), Dial(t, shared.r.Addr)
	for _, sub := range []*Conn{zsub, rsub} {
		if got, want := sub.Do("PSUBSCRIBE", "*"), "*3\r\n$10\r\npsubscribe\r\n$1\r\n*\r\n:1\r\n"; got != want {
			t.Fatalf("PSUBSCRIBE *: %q, want %q", got, want)
		}
	}
	var blocked [][2]*Conn
	var blockedCmds [][]string
	for _, s := range steps {
		switch {
		case s.block:
			pair := [2]*Conn{Dial(t, shared.z.Addr), Dial(t, shared.r.Addr)}
			db := strconv.Itoa(s.db)
			for i, c := range pair {
				if got := c.Do("SELECT", db); got != "+OK\r\n" {
					t.Fatalf("SELECT %s on %d: %q", db, i, got)
				}
				c.Send(Encode(s.cmd...))
			}
			blocked = append(blocked, pair)
			blockedCmds = append(blockedCmds, s.cmd)
			waitBlocked(t, d.Z, len(blocked))
			waitBlocked(t, d.R, len(blocked))
		case s.random:
			d.DoLen(s.cmd...)
		default:
			d.Do(s.cmd...)
		}
	}
	for i, pair := range blocked {
		z, r := pair[0].Read(), pair[1].Read()
		diffCases.Add(1)
		if z != r {
			t.Errorf("blocked %q served:\n zredis: %q\n  redis: %q", blockedCmds[i], z, r)
		}
	}
	d.DoBoth("PUBLISH", notifySentinel, "end")
	z, r := readNotifications(t, zsub), readNotifications(t, rsub)
	diffCases.Add(1)
	if strings.Join(z, "\n") != strings.Join(r, "\n") {
		t.Errorf("notifications differ (flags %q):\n zredis:\n  %s\n  redis:\n  %s",
			flags, strings.Join(z, "\n  "), strings.Join(r, "\n  "))
	}
}

func TestNotifyBlockingImmediate(t *testing.T) {
	// Keys holding data: the blocking pops answer at once, with the
	// events of their non-blocking twins.
	runNotifyCases(t, []notifyCase{
		{"lists", "KEA", nl(
			nc("RPUSH", "l", "a", "b", "c"),
			nc("BLPOP", "missing", "l", "0"),
			nc("BRPOP", "l", "0"),
			nc("BLMPOP", "0", "1", "l", "LEFT", "COUNT", "5"), // "lpop", "del"
			nc("RPUSH", "src", "1", "2"),
			nc("BLMOVE", "src", "dst", "LEFT", "RIGHT", "0"),
			nc("BRPOPLPUSH", "src", "dst", "0"),
			nc("BRPOPLPUSH", "dst", "dst", "0"),
		)},
		{"sorted sets", "KEA", nl(
			nc("ZADD", "z", "1", "a", "2", "b", "3", "c"),
			nc("BZPOPMIN", "missing", "z", "0"),
			nc("BZPOPMAX", "z", "0"),
			nc("BZMPOP", "0", "1", "z", "MAX", "COUNT", "5"),
		)},
		{"in MULTI", "KEA", nl(
			nc("MULTI"),
			nc("BLPOP", "missing", "0"),
			nc("RPUSH", "l", "a"),
			nc("BRPOP", "l", "0"),
			nc("EXEC"),
		)},
	})
}

func TestNotifyBlockingServed(t *testing.T) {
	cases := []struct {
		name  string
		flags string
		steps []notifyStep
	}{
		{"blpop brpop", "KEA", []notifyStep{
			stepBlock(0, "BLPOP", "l1", "l2", "0"),
			stepBlock(0, "BRPOP", "l2", "0"),
			step("RPUSH", "l2", "a", "b", "c"), // "rpush", then "lpop", "rpop"
			step("LRANGE", "l2", "0", "-1"),
		}},
		{"served pop empties the list", "KEA", []notifyStep{
			stepBlock(0, "BRPOP", "q", "0"),
			step("LPUSH", "q", "x"), // "lpush", "rpop", "del"
			step("EXISTS", "q"),
		}},
		{"blmove", "KEA", []notifyStep{
			stepBlock(0, "BLMOVE", "src", "dst", "RIGHT", "LEFT", "0"),
			step("LPUSH", "src", "x"),
			step("LRANGE", "dst", "0", "-1"),
		}},
		{"blmove onto itself", "KEA", []notifyStep{
			stepBlock(0, "BLMOVE", "q", "q", "LEFT", "RIGHT", "0"),
			step("RPUSH", "q", "a"), // "rpush", then the served "rpush", "lpop"
		}},
		{"blmove to a key of another type", "KEA", []notifyStep{
			step("SET", "dst", "v"),
			stepBlock(0, "BLMOVE", "src", "dst", "LEFT", "RIGHT", "0"),
			step("RPUSH", "src", "a"), // the waiter gets WRONGTYPE: nothing moves
			step("LRANGE", "src", "0", "-1"),
		}},
		{"brpoplpush chain", "KEA", []notifyStep{
			stepBlock(0, "BRPOPLPUSH", "q", "dq", "0"),
			stepBlock(0, "BRPOPLPUSH", "dq", "ddq", "0"),
			step("RPUSH", "q", "v"),
			step("LRANGE", "ddq", "0", "-1"),
		}},
		{"blmpop", "KEA", []notifyStep{
			stepBlock(0, "BLMPOP", "0", "2", "m1", "m2", "LEFT", "COUNT", "5"),
			stepBlock(0, "BLMPOP", "0", "1", "m2", "RIGHT"),
			step("RPUSH", "m2", "a", "b"), // the first takes both: "lpop", "del"
			step("RPUSH", "m2", "c", "d"),
		}},
		{"bzpopmin bzpopmax", "KEA", []notifyStep{
			stepBlock(0, "BZPOPMIN", "z", "0"),
			stepBlock(0, "BZPOPMAX", "z", "0"),
			step("ZADD", "z", "1", "a", "2", "b", "3", "c"),
			step("ZRANGE", "z", "0", "-1"),
		}},
		{"bzmpop", "KEA", []notifyStep{
			stepBlock(0, "BZMPOP", "0", "1", "z", "MAX", "COUNT", "5"),
			step("ZADD", "z", "1", "a", "2", "b"), // "zadd", "zpopmax", "del"
		}},
		{"served after exec", "KEA", []notifyStep{
			stepBlock(0, "BLPOP", "q", "0"),
			step("MULTI"),
			step("RPUSH", "q", "a"),
			step("LPOP", "q"),
			step("RPUSH", "q", "b", "c"),
			step("EXEC"),
			step("LRANGE", "q", "0", "-1"),
		}},
		{"served by a store", "KEA", []notifyStep{
			stepBlock(0, "BZPOPMIN", "dst", "0"),
			step("ZADD", "src", "1", "a", "2", "b"),
			step("ZUNIONSTORE", "dst", "1", "src"), // "zunionstore", then "zpopmin"
			step("ZRANGESTORE", "dst2", "src", "0", "0"),
		}},
		{"other database", "KEA", []notifyStep{
			stepBlock(3, "BLPOP", "q", "0"),
			stepBlock(3, "BZPOPMIN", "z", "0"),
			step("SELECT", "3"),
			step("RPUSH", "q", "a"),
			step("ZADD", "z", "1", "a"),
			step("SELECT", "0"),
		}},
		{"class filter list", "El", []notifyStep{
			stepBlock(0, "BLMOVE", "src", "dst", "LEFT", "LEFT", "0"),
			step("RPUSH", "src", "x", "y"),
		}},
		{"class filter generic", "Kg", []notifyStep{
			stepBlock(0, "BLPOP", "q", "0"),
			step("RPUSH", "q", "x"),
		}},
		{"new keys", "KEn", []notifyStep{
			stepBlock(0, "BLMOVE", "src", "dst", "LEFT", "LEFT", "0"),
			step("RPUSH", "src", "x"),
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			diffNotifySteps(t, tc.flags, tc.steps...)
		})
	}
}

// TestNotifyRandomReplies covers the commands whose reply is random:
// only the reply's shape is compared, the events fully.
func TestNotifyRandomReplies(t *testing.T) {
	diffNotifySteps(t, "KEA",
		step("SADD", "s", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j"),
		stepRandom("SPOP", "s"),
		stepRandom("SPOP", "s", "2"), // one "spop"
		stepRandom("SPOP", "s", "6"), // survivors kept instead: one "spop"
		stepRandom("SPOP", "s", "1"),
		stepRandom("SPOP", "s", "100"), // "spop" then "del"
		step("SADD", "i", "1", "2", "3", "4", "5"),
		stepRandom("SPOP", "i", "4"),
		stepRandom("SRANDMEMBER", "i", "-5"),
		step("HSET", "h", "a", "1", "b", "2", "c", "3"),
		stepRandom("HRANDFIELD", "h", "-5", "WITHVALUES"),
		stepRandom("HRANDFIELD", "h", "2"),
		step("ZADD", "z", "1", "a", "2", "b", "3", "c"),
		stepRandom("ZRANDMEMBER", "z", "-5", "WITHSCORES"),
	)
}

// TestNotifyNewAfterExpiry checks a command that recreates a key whose
// deadline passed: "expired", then "new", then the command's event.
func TestNotifyNewAfterExpiry(t *testing.T) {
	var cmds [][]string
	for _, create := range [][]string{
		nc("HSET", "k", "a", "1"),
		nc("SADD", "k", "a"),
		nc("ZADD", "k", "1", "a"),
		nc("RPUSH", "k", "a"),
		nc("SUNIONSTORE", "k", "x"),
		nc("ZUNIONSTORE", "k", "1", "x"),
		nc("ZRANGESTORE", "k", "z", "0", "-1"),
	} {
		// Each creation leaves k for the next round to expire.
		cmds = append(cmds, nc("PEXPIRE", "k", "20"), sleepMs(60), create)
	}
	diffNotifications(t, "KEAn", append(nl(
		nc("SADD", "x", "1"),
		nc("ZADD", "z", "1", "a"),
		nc("RPUSH", "k", "v"),
	), cmds...)...)
}
