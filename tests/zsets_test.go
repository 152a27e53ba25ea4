package tests

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// Differential tests of the sorted set family (t_zset.c), compared byte
// for byte with redis-server 7.0.

func zscript(t *testing.T, cmds ...[]string) *Diff {
	t.Helper()
	d := NewDiff(t)
	doScript(d, cmds)
	return d
}

func zc(args ...string) []string { return args }

func TestZSetZadd(t *testing.T) {
	zscript(t,
		zc("ZADD", "z", "1", "a"),
		zc("ZADD", "z", "2", "b", "3", "c", "1", "a"),
		zc("ZADD", "z", "CH", "5", "a", "2", "b", "7", "d"),
		zc("ZADD", "z", "NX", "10", "a", "11", "e"),
		zc("ZADD", "z", "XX", "10", "a", "11", "f"),
		zc("ZADD", "z", "XX", "CH", "12", "a", "11", "f"),
		zc("ZADD", "z", "GT", "CH", "1", "a", "20", "b"),
		zc("ZADD", "z", "LT", "CH", "1", "a", "30", "b"),
		zc("ZADD", "z", "XX", "GT", "CH", "100", "a", "1", "zz"),
		zc("ZADD", "z", "GT", "LT", "1", "a"),
		zc("ZADD", "z", "NX", "GT", "1", "a"),
		zc("ZADD", "z", "NX", "LT", "1", "a"),
		zc("ZADD", "z", "NX", "XX", "1", "a"),
		zc("ZADD", "z", "nx", "xx", "gt", "1", "a"),
		zc("ZADD", "z", "INCR", "1", "a", "2", "b"),
		zc("ZADD", "z", "INCR", "1.5", "a"),
		zc("ZADD", "z", "INCR", "NX", "1.5", "a"),
		zc("ZADD", "z", "INCR", "XX", "1.5", "nosuch"),
		zc("ZADD", "z", "INCR", "GT", "-1", "a"),
		zc("ZADD", "z", "INCR", "LT", "-1", "a"),
		zc("ZADD", "z", "1"),
		zc("ZADD", "z", "1", "a", "2"),
		zc("ZADD", "z", "CH"),
		zc("ZADD", "z", "x", "a"),
		zc("ZADD", "z", "1", "a", "nan", "b"),
		zc("ZADD", "z", " 1", "a"),
		zc("ZADD", "z", "1 ", "a"),
		zc("ZADD", "z", "", "a"),
		zc("ZADD", "z", "1e400", "a"),
		zc("ZADD", "z", "1e-400", "a"),
		zc("ZADD", "z", "0x10", "hex"),
		zc("ZADD", "z", "inf", "i", "-inf", "ni", "+inf", "pi", "infinity", "ii"),
		zc("ZADD", "z", "INCR", "-inf", "i"),
		zc("ZADD", "z", "INCR", "inf", "ni"),
		zc("ZRANGE", "z", "0", "-1", "WITHSCORES"),
		zc("ZADD", "nokey", "XX", "1", "a"),
		zc("ZADD", "nokey", "XX", "INCR", "1", "a"),
		zc("EXISTS", "nokey"),
		zc("ZADD", "f", "1.1", "a", "0.30000000000000004", "b", "1e20", "c", "-0.0", "d", "3.0", "e", "1e-5", "g", "123456789012345678", "h"),
		zc("ZRANGE", "f", "0", "-1", "WITHSCORES"),
		zc("ZSCORE", "f", "d"), zc("ZADD", "f", "INCR", "-0.0", "neg"), zc("ZSCORE", "f", "neg"),
		zc("ZINCRBY", "f", "0.1", "a"),
		zc("ZINCRBY", "f", "2", "new"),
		zc("ZINCRBY", "f", "x", "a"),
		zc("ZINCRBY", "f", "nx", "a"),
		zc("ZINCRBY", "f", "incr", "a"),
		zc("SET", "s", "x"),
		zc("ZADD", "s", "1", "a"),
		zc("ZADD", "s", "x", "a"),
		zc("ZINCRBY", "s", "1", "a"),
		zc("ZADD", "z"),
		zc("ZINCRBY", "z", "1"),
	)
}

func TestZSetReads(t *testing.T) {
	zscript(t,
		zc("ZADD", "z", "1", "a", "2", "b", "3", "c", "3", "d", "5", "e"),
		zc("ZSCORE", "z", "c"), zc("ZSCORE", "z", "x"), zc("ZSCORE", "nokey", "x"),
		zc("ZMSCORE", "z", "a", "x", "e"), zc("ZMSCORE", "nokey", "a", "b"),
		zc("ZCARD", "z"), zc("ZCARD", "nokey"),
		zc("ZRANK", "z", "a"), zc("ZRANK", "z", "d"), zc("ZRANK", "z", "x"), zc("ZRANK", "nokey", "x"),
		zc("ZREVRANK", "z", "a"), zc("ZREVRANK", "z", "e"), zc("ZREVRANK", "z", "x"),
		zc("ZCOUNT", "z", "-inf", "+inf"), zc("ZCOUNT", "z", "(1", "3"), zc("ZCOUNT", "z", "(1", "(3"),
		zc("ZCOUNT", "z", "3", "3"), zc("ZCOUNT", "z", "(3", "3"), zc("ZCOUNT", "z", "5", "1"),
		zc("ZCOUNT", "z", "x", "1"), zc("ZCOUNT", "z", "1", "nan"), zc("ZCOUNT", "nokey", "1", "2"),
		zc("ZCOUNT", "nokey", "x", "2"), zc("ZCOUNT", "z", "", ""), zc("ZCOUNT", "z", "(", "10"),
		zc("ZCOUNT", "z", " 2", "10"), zc("ZCOUNT", "z", "2 ", "10"), zc("ZCOUNT", "z", "1e400", "inf"),
		zc("ZCOUNT", "z", "-1e400", "0x3"),
		zc("SET", "s", "x"),
		zc("ZSCORE", "s", "a"), zc("ZMSCORE", "s", "a"), zc("ZCARD", "s"), zc("ZRANK", "s", "a"),
		zc("ZREVRANK", "s", "a"), zc("ZCOUNT", "s", "1", "2"), zc("ZCOUNT", "s", "x", "2"),
		zc("ZSCORE", "z"), zc("ZMSCORE", "z"), zc("ZRANK", "z"),
	)
}

func TestZSetRanges(t *testing.T) {
	zscript(t,
		zc("ZADD", "z", "1", "a", "2", "b", "3", "c", "3", "d", "5", "e", "-1", "m"),
		zc("ZRANGE", "z", "0", "-1"), zc("ZRANGE", "z", "0", "-1", "WITHSCORES"),
		zc("ZRANGE", "z", "1", "2"), zc("ZRANGE", "z", "-2", "-1", "withscores"),
		zc("ZRANGE", "z", "-100", "100"), zc("ZRANGE", "z", "3", "1"), zc("ZRANGE", "z", "6", "10"),
		zc("ZRANGE", "z", "0", "-1", "REV"), zc("ZRANGE", "z", "0", "1", "REV", "WITHSCORES"),
		zc("ZRANGE", "z", "x", "1"), zc("ZRANGE", "z", "0", "1", "LIMIT", "0", "1"),
		zc("ZRANGE", "z", "0", "1", "foo"), zc("ZRANGE", "z", "0", "1", "REV", "REV"),
		zc("ZRANGE", "z", "1", "3", "BYSCORE"), zc("ZRANGE", "z", "(1", "3", "BYSCORE", "WITHSCORES"),
		zc("ZRANGE", "z", "3", "1", "BYSCORE", "REV"), zc("ZRANGE", "z", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", "1", "2"),
		zc("ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "1", "2", "WITHSCORES"),
		zc("ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "-1", "2"),
		zc("ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "2", "-1"),
		zc("ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "2", "0"),
		zc("ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "10", "1"),
		zc("ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "1"),
		zc("ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "x", "1"),
		zc("ZRANGE", "z", "-inf", "+inf", "BYSCORE", "BYLEX"),
		zc("ZRANGE", "z", "x", "+inf", "BYSCORE"),
		zc("ZRANGE", "z", "-", "+", "BYLEX"), zc("ZRANGE", "z", "-", "+", "BYLEX", "WITHSCORES"),
		zc("ZRANGE", "z", "x", "+", "BYLEX"),
		zc("ZRANGEBYSCORE", "z", "-inf", "+inf"), zc("ZRANGEBYSCORE", "z", "(1", "(5", "WITHSCORES"),
		zc("ZRANGEBYSCORE", "z", "3", "3"), zc("ZRANGEBYSCORE", "z", "0", "10", "LIMIT", "1", "3"),
		zc("ZRANGEBYSCORE", "z", "0", "10", "LIMIT", "1", "3", "WITHSCORES"),
		zc("ZRANGEBYSCORE", "z", "x", "10"), zc("ZRANGEBYSCORE", "z", "0", "10", "REV"),
		zc("ZRANGEBYSCORE", "z", "0", "10", "BYSCORE"), zc("ZRANGEBYSCORE", "nokey", "0", "1"),
		zc("ZRANGEBYSCORE", "nokey", "x", "1"), zc("ZRANGEBYSCORE", "z", "0", "10", "LIMIT", "0"),
		zc("ZREVRANGEBYSCORE", "z", "+inf", "-inf"), zc("ZREVRANGEBYSCORE", "z", "5", "(1", "WITHSCORES"),
		zc("ZREVRANGEBYSCORE", "z", "10", "0", "LIMIT", "1", "2"), zc("ZREVRANGEBYSCORE", "z", "0", "10"),
		zc("ZREVRANGEBYSCORE", "z", "10", "0", "LIMIT", "5", "10", "WITHSCORES"),
		zc("ZREVRANGE", "z", "0", "-1"), zc("ZREVRANGE", "z", "0", "2", "WITHSCORES"),
		zc("ZREVRANGE", "z", "0", "2", "REV"), zc("ZREVRANGE", "z", "0", "2", "BYSCORE"),
		zc("ZREVRANGE", "nokey", "0", "1"),
		zc("SET", "s", "x"),
		zc("ZRANGE", "s", "0", "1"), zc("ZRANGE", "s", "x", "1"), zc("ZRANGEBYSCORE", "s", "0", "1"),
		zc("ZREVRANGEBYSCORE", "s", "0", "1"), zc("ZREVRANGE", "s", "0", "1"),
	)
}

func TestZSetLex(t *testing.T) {
	zscript(t,
		zc("ZADD", "l", "0", "a", "0", "b", "0", "c", "0", "d", "0", "e", "0", "ab", "0", ""),
		zc("ZRANGEBYLEX", "l", "-", "+"), zc("ZRANGEBYLEX", "l", "[b", "(d"), zc("ZRANGEBYLEX", "l", "(a", "[c"),
		zc("ZRANGEBYLEX", "l", "+", "-"), zc("ZRANGEBYLEX", "l", "-", "+", "LIMIT", "2", "3"),
		zc("ZRANGEBYLEX", "l", "[", "(b"), zc("ZRANGEBYLEX", "l", "a", "b"), zc("ZRANGEBYLEX", "l", "", "+"),
		zc("ZRANGEBYLEX", "l", "-x", "+"), zc("ZRANGEBYLEX", "l", "-", "+", "WITHSCORES"),
		zc("ZREVRANGEBYLEX", "l", "+", "-"), zc("ZREVRANGEBYLEX", "l", "(d", "[b"),
		zc("ZREVRANGEBYLEX", "l", "+", "-", "LIMIT", "1", "2"),
		zc("ZLEXCOUNT", "l", "-", "+"), zc("ZLEXCOUNT", "l", "[b", "[d"), zc("ZLEXCOUNT", "l", "(b", "(b"),
		zc("ZLEXCOUNT", "l", "b", "d"), zc("ZLEXCOUNT", "nokey", "-", "+"), zc("ZLEXCOUNT", "nokey", "x", "+"),
		zc("ZREMRANGEBYLEX", "l", "[b", "(d"), zc("ZRANGE", "l", "0", "-1"),
		zc("ZREMRANGEBYLEX", "l", "x", "(d"), zc("ZREMRANGEBYLEX", "nokey", "-", "+"),
		zc("ZREMRANGEBYLEX", "l", "-", "+"), zc("EXISTS", "l"),
		zc("SET", "s", "x"),
		zc("ZRANGEBYLEX", "s", "-", "+"), zc("ZREVRANGEBYLEX", "s", "-", "+"), zc("ZLEXCOUNT", "s", "-", "+"),
		zc("ZREMRANGEBYLEX", "s", "-", "+"), zc("ZLEXCOUNT", "s", "x", "+"),
	)
}

func TestZSetRemoval(t *testing.T) {
	zscript(t,
		zc("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f"),
		zc("ZREM", "z", "a", "x", "a"), zc("ZREM", "nokey", "a"),
		zc("ZREMRANGEBYSCORE", "z", "(2", "3"), zc("ZREMRANGEBYSCORE", "z", "x", "3"),
		zc("ZREMRANGEBYSCORE", "nokey", "1", "3"), zc("ZRANGE", "z", "0", "-1"),
		zc("ZREMRANGEBYRANK", "z", "-1", "-1"), zc("ZREMRANGEBYRANK", "z", "5", "10"),
		zc("ZREMRANGEBYRANK", "z", "2", "1"), zc("ZREMRANGEBYRANK", "z", "x", "1"),
		zc("ZREMRANGEBYRANK", "nokey", "0", "1"), zc("ZRANGE", "z", "0", "-1", "WITHSCORES"),
		zc("ZREMRANGEBYRANK", "z", "0", "-1"), zc("EXISTS", "z"),
		zc("ZADD", "z", "1", "a"), zc("ZREM", "z", "a"), zc("EXISTS", "z"),
		zc("ZADD", "z", "1", "a", "2", "b"), zc("ZREMRANGEBYSCORE", "z", "-inf", "+inf"), zc("EXISTS", "z"),
		zc("SET", "s", "x"),
		zc("ZREM", "s", "a"), zc("ZREMRANGEBYSCORE", "s", "1", "2"), zc("ZREMRANGEBYRANK", "s", "0", "1"),
		zc("ZREMRANGEBYRANK", "s", "x", "1"),
	)
}

func TestZSetPop(t *testing.T) {
	zscript(t,
		zc("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"),
		zc("ZPOPMIN", "z"), zc("ZPOPMAX", "z"), zc("ZPOPMIN", "z", "2"), zc("ZPOPMAX", "z", "0"),
		zc("ZPOPMIN", "z", "-1"), zc("ZPOPMIN", "z", "x"), zc("ZPOPMIN", "z", "99999999999999999999"), zc("ZPOPMIN", "z", "1", "2"),
		zc("ZPOPMAX", "z", "10"), zc("EXISTS", "z"), zc("ZPOPMIN", "nokey"), zc("ZPOPMIN", "nokey", "3"),
		zc("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"),
		zc("ZMPOP", "2", "nokey", "z", "MIN"), zc("ZMPOP", "1", "z", "MAX", "COUNT", "2"),
		zc("ZMPOP", "1", "nokey", "MAX"), zc("ZMPOP", "0", "z", "MIN"), zc("ZMPOP", "x", "z", "MIN"),
		zc("ZMPOP", "-1", "z", "MIN"), zc("ZMPOP", "9223372036854775807", "z", "MIN"), zc("ZMPOP", "9223372036854775806", "z", "MIN"), zc("ZMPOP", "3", "z", "MIN"), zc("ZMPOP", "1", "z", "FOO"),
		zc("ZMPOP", "1", "z", "MIN", "COUNT", "0"), zc("ZMPOP", "1", "z", "MIN", "COUNT", "x"),
		zc("ZMPOP", "1", "z", "MIN", "COUNT"), zc("ZMPOP", "1", "z", "MIN", "COUNT", "1", "COUNT", "1"),
		zc("ZMPOP", "1", "z", "MIN", "FOO"), zc("ZMPOP", "1", "z", "min", "count", "100"), zc("EXISTS", "z"),
		zc("SET", "s", "x"),
		zc("ZPOPMIN", "s"), zc("ZPOPMAX", "s", "0"), zc("ZPOPMIN", "s", "-1"), zc("ZMPOP", "2", "nokey", "s", "MIN"),
		zc("ZADD", "z", "1", "a"), zc("ZMPOP", "2", "z", "s", "MIN"),
	)
}

// The RESP3 shapes of the pops and of the scored replies.
func TestZSetResp3Diff(t *testing.T) {
	d := NewDiff(t)
	d.Resp3()
	doScript(d, [][]string{
		zc("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f"),
		zc("ZPOPMIN", "z"), zc("ZPOPMIN", "z", "1"), zc("ZPOPMAX", "z", "2"),
		zc("ZMPOP", "1", "z", "MIN"), zc("ZMPOP", "1", "nokey", "MIN"),
		zc("ZSCORE", "z", "e"), zc("ZSCORE", "z", "x"), zc("ZMSCORE", "z", "e", "x"),
		zc("ZRANGE", "z", "0", "-1", "WITHSCORES"), zc("ZRANGEBYSCORE", "z", "-inf", "inf", "WITHSCORES"),
		zc("ZRANGE", "z", "0", "-1"), zc("ZRANK", "z", "x"), zc("ZINCRBY", "z", "1", "e"),
		zc("ZADD", "z", "INCR", "1", "e"), zc("ZADD", "z", "INCR", "NX", "1", "e"),
		zc("ZSCAN", "z", "0"),
	})
}

func TestZSetRangestore(t *testing.T) {
	zscript(t,
		zc("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"),
		zc("ZRANGESTORE", "d", "z", "0", "2"), zc("ZRANGE", "d", "0", "-1", "WITHSCORES"),
		zc("ZRANGESTORE", "d", "z", "(1", "4", "BYSCORE", "LIMIT", "1", "2"), zc("ZRANGE", "d", "0", "-1", "WITHSCORES"),
		zc("ZRANGESTORE", "d", "z", "4", "1", "BYSCORE", "REV", "LIMIT", "0", "2"), zc("ZRANGE", "d", "0", "-1", "WITHSCORES"),
		zc("ZRANGESTORE", "d", "z", "0", "-1", "REV"), zc("ZRANGE", "d", "0", "-1", "WITHSCORES"),
		zc("ZRANGESTORE", "d", "z", "-", "[c", "BYLEX"), zc("ZRANGE", "d", "0", "-1"),
		zc("ZRANGESTORE", "d", "z", "0", "-1", "WITHSCORES"), zc("ZRANGESTORE", "d", "z", "0", "-1", "LIMIT", "0", "1"),
		zc("ZRANGESTORE", "d", "z", "x", "1"),
		zc("ZRANGESTORE", "d", "z", "10", "20"), zc("EXISTS", "d"),
		zc("SET", "d", "x"), zc("EXPIRE", "d", "100"),
		zc("ZRANGESTORE", "d", "z", "0", "0"), zc("TYPE", "d"), zc("TTL", "d"),
		zc("ZRANGESTORE", "d", "nokey", "0", "-1"), zc("EXISTS", "d"),
		zc("SET", "s", "x"), zc("ZRANGESTORE", "d", "s", "0", "-1"), zc("ZRANGESTORE", "z", "z", "0", "1"),
		zc("ZRANGE", "z", "0", "-1"),
	)
}

func TestZSetScanAndEncoding(t *testing.T) {
	d := zscript(t,
		zc("ZADD", "z", "1", "a", "2.5", "b", "3", "c", "1.1", "ab"),
		zc("ZSCAN", "z", "0"), zc("ZSCAN", "z", "0", "MATCH", "a*"), zc("ZSCAN", "z", "0", "COUNT", "1"),
		zc("ZSCAN", "z", "0", "COUNT", "0"), zc("ZSCAN", "z", "0", "COUNT", "x"), zc("ZSCAN", "z", "0", "FOO", "x"),
		zc("ZSCAN", "z", "0", "MATCH"), zc("ZSCAN", "z", "x"), zc("ZSCAN", "z", "0", "TYPE", "zset"),
		zc("ZSCAN", "nokey", "0"), zc("ZSCAN", "nokey", "0", "FOO"), zc("ZSCAN", "nokey", "x"),
		zc("SET", "s", "x"), zc("ZSCAN", "s", "0"), zc("ZSCAN", "s", "x"),
		zc("OBJECT", "ENCODING", "z"),
	)
	big := []string{"ZADD", "big"}
	for i := 0; i < 128; i++ {
		big = append(big, strconv.Itoa(i), "m"+strconv.Itoa(i))
	}
	d.Do(big...)
	d.Do("OBJECT", "ENCODING", "big")
	d.Do("ZADD", "big", "1", "one-more")
	d.Do("OBJECT", "ENCODING", "big")
	d.Do("ZREMRANGEBYRANK", "big", "0", "100")
	d.Do("OBJECT", "ENCODING", "big")
	d.Do("ZRANGESTORE", "small", "big", "0", "10")
	d.Do("OBJECT", "ENCODING", "small")
	d.Do("ZADD", "long", "1", string(make([]byte, 65)))
	d.Do("OBJECT", "ENCODING", "long")
	d.Do("ZADD", "long", "-0.0", "negz")
	d.Do("ZSCORE", "long", "negz")
	d.Do("ZRANGESTORE", "long2", "long", "0", "-1")
	d.Do("OBJECT", "ENCODING", "long2")
	d.Do("ZSCORE", "long2", "negz")
	d.Do("ZADD", "z", "1", string(make([]byte, 65)))
	d.Do("OBJECT", "ENCODING", "z")
	d.DoLen("ZSCAN", "z", "0", "COUNT", "1000")
	d.Do("ZCARD", "big")
}

// TestZSetLarge checks ranks, ranges and removal on a set beyond the
// small encoding.
func TestZSetLarge(t *testing.T) {
	d := NewDiff(t)
	args := []string{"ZADD", "z"}
	for i := 0; i < 1000; i++ {
		args = append(args, strconv.Itoa(i%97), "m"+strconv.Itoa(i))
	}
	d.Do(args...)
	doScript(d, [][]string{
		zc("ZRANK", "z", "m500"), zc("ZREVRANK", "z", "m17"), zc("ZCOUNT", "z", "(10", "50"),
		zc("ZRANGE", "z", "100", "120", "WITHSCORES"), zc("ZRANGE", "z", "-20", "-1", "REV"),
		zc("ZRANGEBYSCORE", "z", "5", "6", "LIMIT", "3", "7"), zc("ZREVRANGEBYSCORE", "z", "(90", "80", "LIMIT", "2", "5", "WITHSCORES"),
		zc("ZREMRANGEBYSCORE", "z", "10", "(20"), zc("ZREMRANGEBYRANK", "z", "100", "199"), zc("ZCARD", "z"),
		zc("ZPOPMIN", "z", "5"), zc("ZPOPMAX", "z", "5"), zc("ZRANK", "z", "m999"),
		zc("ZREMRANGEBYSCORE", "z", "30", "70"), zc("ZCARD", "z"), zc("ZRANK", "z", "m999"),
		zc("ZRANGE", "z", "0", "-1", "WITHSCORES"), zc("ZREMRANGEBYRANK", "z", "1", "-2"),
		zc("ZRANGE", "z", "0", "-1", "WITHSCORES"), zc("OBJECT", "ENCODING", "z"),
	})
	// A full ZSCAN walk returns every member once.
	d.DoBoth("DEL", "z")
}

func TestZSetAlgebra(t *testing.T) {
	d := zscript(t,
		zc("ZADD", "a", "1", "x", "2", "y", "3", "z"),
		zc("ZADD", "b", "10", "y", "20", "z", "30", "w"),
		zc("ZADD", "c", "inf", "x", "-inf", "y", "0", "z"),
		zc("ZUNION", "2", "a", "b"), zc("ZUNION", "2", "a", "b", "WITHSCORES"),
		zc("ZUNION", "3", "a", "b", "nokey", "WEIGHTS", "2", "0.5", "3", "WITHSCORES"),
		zc("ZUNION", "2", "a", "b", "AGGREGATE", "MIN", "WITHSCORES"),
		zc("ZUNION", "2", "a", "b", "aggregate", "max", "withscores"),
		zc("ZUNION", "2", "a", "c", "WITHSCORES"), zc("ZUNION", "2", "a", "c", "WEIGHTS", "0", "0", "WITHSCORES"),
		zc("ZUNION", "3", "a", "c", "c", "WEIGHTS", "1", "1", "-1", "WITHSCORES"),
		zc("ZINTER", "2", "a", "b"), zc("ZINTER", "2", "a", "b", "WITHSCORES"),
		zc("ZINTER", "2", "a", "b", "WEIGHTS", "-1", "1", "AGGREGATE", "MAX", "WITHSCORES"),
		zc("ZINTER", "2", "a", "c", "WITHSCORES"), zc("ZINTER", "2", "c", "c", "WEIGHTS", "1", "-1", "WITHSCORES"),
		zc("ZINTER", "2", "a", "nokey"), zc("ZINTER", "1", "a", "WITHSCORES"),
		zc("ZDIFF", "2", "a", "b"), zc("ZDIFF", "2", "a", "b", "WITHSCORES"), zc("ZDIFF", "1", "nokey"),
		zc("ZDIFF", "3", "b", "a", "c", "WITHSCORES"), zc("ZDIFF", "2", "a", "b", "WEIGHTS", "1", "1"),
		zc("ZDIFF", "2", "a", "b", "AGGREGATE", "SUM"),
		zc("ZINTERCARD", "2", "a", "b"), zc("ZINTERCARD", "2", "a", "b", "LIMIT", "1"),
		zc("ZINTERCARD", "2", "a", "b", "LIMIT", "0"), zc("ZINTERCARD", "2", "a", "b", "LIMIT", "-1"),
		zc("ZINTERCARD", "2", "a", "b", "LIMIT", "x"), zc("ZINTERCARD", "2", "a", "b", "WITHSCORES"),
		zc("ZINTERCARD", "2", "a", "b", "WEIGHTS", "1", "1"), zc("ZINTERCARD", "0", "a"),
		zc("ZINTERCARD", "x", "a"), zc("ZINTERCARD", "3", "a", "b"), zc("ZINTERCARD", "1", "nokey"),
		zc("ZUNION", "0", "a"), zc("ZUNION", "-1", "a"), zc("ZUNION", "x", "a"), zc("ZUNION", "3", "a", "b"), zc("ZUNION", "9223372036854775807", "a"), zc("ZINTERCARD", "9223372036854775807", "a"),
		zc("ZUNION", "2", "a", "b", "WEIGHTS", "1"), zc("ZUNION", "2", "a", "b", "WEIGHTS", "1", "x"),
		zc("ZUNION", "2", "a", "b", "WEIGHTS", "1", "nan"), zc("ZUNION", "2", "a", "b", "AGGREGATE", "AVG"),
		zc("ZUNION", "2", "a", "b", "AGGREGATE"), zc("ZUNION", "2", "a", "b", "FOO"),
		zc("ZUNIONSTORE", "d", "2", "a", "b"), zc("ZRANGE", "d", "0", "-1", "WITHSCORES"), zc("OBJECT", "ENCODING", "d"),
		zc("ZUNIONSTORE", "d", "2", "a", "b", "WITHSCORES"),
		zc("ZINTERSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "2", "AGGREGATE", "MIN"), zc("ZRANGE", "d", "0", "-1", "WITHSCORES"),
		zc("ZINTERSTORE", "d", "2", "a", "nokey"), zc("EXISTS", "d"),
		zc("ZDIFFSTORE", "d", "2", "b", "a"), zc("ZRANGE", "d", "0", "-1", "WITHSCORES"),
		zc("ZDIFFSTORE", "d", "1", "nokey"), zc("EXISTS", "d"), zc("ZDIFFSTORE", "d", "0", "a"),
		zc("ZUNIONSTORE", "d", "2", "a", "c", "WEIGHTS", "-1", "0"), zc("ZRANGE", "d", "0", "-1", "WITHSCORES"),
		zc("ZUNION", "2", "a", "c", "WEIGHTS", "-1", "0", "WITHSCORES"),
		zc("ZUNIONSTORE", "a", "2", "a", "b"), zc("ZRANGE", "a", "0", "-1", "WITHSCORES"),
		zc("SET", "s", "x"),
		zc("ZUNION", "2", "a", "s"), zc("ZINTER", "2", "nokey", "s"), zc("ZDIFF", "2", "a", "s"),
		zc("ZINTERCARD", "2", "a", "s"), zc("ZUNIONSTORE", "d", "2", "a", "s"), zc("ZUNION", "1", "s", "FOO"),
		zc("ZUNIONSTORE", "s", "1", "a"), zc("TYPE", "s"),
	)
	doScript(d, [][]string{
		zc("SADD", "set", "x", "y", "q"),
		zc("ZUNION", "2", "b", "set", "WITHSCORES"), zc("ZINTER", "2", "b", "set", "WEIGHTS", "1", "5", "WITHSCORES"),
		zc("ZDIFF", "2", "set", "b", "WITHSCORES"), zc("ZINTERCARD", "2", "set", "b"),
		zc("ZUNIONSTORE", "d", "1", "set"), zc("ZRANGE", "d", "0", "-1", "WITHSCORES"),
	})
	big := []string{"ZADD", "big"}
	for i := 0; i < 200; i++ {
		big = append(big, strconv.Itoa(i), "m"+strconv.Itoa(i))
	}
	d.Do(big...)
	doScript(d, [][]string{
		zc("ZUNIONSTORE", "d", "1", "big"), zc("OBJECT", "ENCODING", "d"),
		zc("ZINTERSTORE", "d", "2", "big", "b"), zc("OBJECT", "ENCODING", "d"),
		zc("ZINTERSTORE", "d", "2", "big", "big", "WEIGHTS", "1", "-1"), zc("ZRANGE", "d", "0", "3", "WITHSCORES"),
		zc("ZINTER", "2", "big", "big", "WEIGHTS", "1", "-1", "WITHSCORES"),
	})
}

func TestZSetRandmember(t *testing.T) {
	d := zscript(t,
		zc("ZADD", "z", "1", "a", "2", "b", "3", "c"),
		zc("ZRANDMEMBER", "z", "3"), zc("ZRANDMEMBER", "z", "10", "WITHSCORES"), zc("ZRANDMEMBER", "z", "0"),
		zc("ZRANDMEMBER", "nokey"), zc("ZRANDMEMBER", "nokey", "5"), zc("ZRANDMEMBER", "nokey", "x"),
		zc("ZRANDMEMBER", "z", "x"), zc("ZRANDMEMBER", "z", "1", "foo"), zc("ZRANDMEMBER", "z", "1", "withscores", "x"),
		zc("ZRANDMEMBER", "z", "-9223372036854775808"), zc("ZRANDMEMBER", "z", "4611686018427387904", "WITHSCORES"),
		zc("ZRANDMEMBER", "z", "-4611686018427387904", "WITHSCORES"),
		zc("ZADD", "one", "5", "only"), zc("ZRANDMEMBER", "one"), zc("ZRANDMEMBER", "one", "-3", "WITHSCORES"),
		zc("ZRANDMEMBER", "one", "1", "WITHSCORES"),
		zc("SET", "s", "x"), zc("ZRANDMEMBER", "s"), zc("ZRANDMEMBER", "s", "1"), zc("ZRANDMEMBER", "s", "x"),
	)
	d.DoLen("ZRANDMEMBER", "z")
	d.DoLen("ZRANDMEMBER", "z", "-5")
	d.DoLen("ZRANDMEMBER", "z", "2", "WITHSCORES")
	for _, cnt := range []string{"2", "-7", "1"} {
		z, r := d.Z.Do("ZRANDMEMBER", "z", cnt), d.R.Do("ZRANDMEMBER", "z", cnt)
		if len(z) != len(r) {
			t.Errorf("ZRANDMEMBER z %s: %q vs %q", cnt, z, r)
		}
	}
}

func TestZSetGetKeys(t *testing.T) {
	zscript(t,
		zc("COMMAND", "GETKEYS", "ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "2"),
		zc("COMMAND", "GETKEYS", "ZDIFFSTORE", "d", "1", "a"),
		zc("COMMAND", "GETKEYS", "ZINTER", "2", "a", "b", "WITHSCORES"),
		zc("COMMAND", "GETKEYS", "ZINTERCARD", "3", "a", "b", "c", "LIMIT", "1"),
		zc("COMMAND", "GETKEYS", "ZMPOP", "2", "a", "b", "MIN", "COUNT", "2"),
		zc("COMMAND", "GETKEYS", "ZRANGESTORE", "d", "s", "0", "1"),
		zc("COMMAND", "GETKEYS", "ZADD", "z", "1", "a"),
	)
}

// TestZSetRandomOps runs a seeded random mix of sorted set commands on
// both servers, across the small and the large encoding.
func TestZSetRandomOps(t *testing.T) {
	d := NewDiff(t)
	rng := rand.New(rand.NewPCG(7, 11))
	member := func() string { return "m" + strconv.Itoa(rng.IntN(300)) }
	score := func() string {
		switch rng.IntN(6) {
		case 0:
			return "(" + strconv.Itoa(rng.IntN(40))
		case 1:
			return strconv.FormatFloat(float64(rng.IntN(400))/10, 'f', -1, 64)
		case 2:
			return []string{"-inf", "+inf", "inf"}[rng.IntN(3)]
		}
		return strconv.Itoa(rng.IntN(40))
	}
	num := func() string { return strconv.Itoa(rng.IntN(30) - 10) }
	lex := func() string {
		switch rng.IntN(5) {
		case 0:
			return "-"
		case 1:
			return "+"
		case 2:
			return "(" + member()
		}
		return "[" + member()
	}
	for i := 0; i < 600; i++ {
		key := []string{"r1", "r2"}[rng.IntN(2)]
		var cmd []string
		switch rng.IntN(16) {
		case 0, 1, 2:
			cmd = []string{"ZADD", key}
			for _, o := range []string{"NX", "XX", "GT", "LT", "CH"} {
				if rng.IntN(8) == 0 {
					cmd = append(cmd, o)
				}
			}
			for n := rng.IntN(8) + 1; n > 0; n-- {
				cmd = append(cmd, strconv.Itoa(rng.IntN(40)), member())
			}
		case 3:
			cmd = []string{"ZINCRBY", key, strconv.Itoa(rng.IntN(10) - 5), member()}
		case 4:
			cmd = []string{"ZREM", key, member(), member()}
		case 5:
			cmd = []string{"ZRANGEBYSCORE", key, score(), score(), "WITHSCORES", "LIMIT", num(), num()}
		case 6:
			cmd = []string{"ZREVRANGEBYSCORE", key, score(), score(), "LIMIT", num(), num()}
		case 7:
			cmd = []string{"ZRANGE", key, num(), num(), "WITHSCORES"}
		case 8:
			cmd = []string{"ZRANGE", key, num(), num(), "REV"}
		case 9:
			cmd = []string{"ZRANK", key, member()}
		case 10:
			cmd = []string{"ZREVRANK", key, member()}
		case 11:
			cmd = []string{"ZCOUNT", key, score(), score()}
		case 12:
			cmd = []string{"ZREMRANGEBYSCORE", key, score(), score()}
		case 13:
			cmd = []string{"ZREMRANGEBYRANK", key, num(), num()}
		case 14:
			cmd = []string{"ZPOPMIN", key, strconv.Itoa(rng.IntN(3))}
		case 15:
			cmd = []string{"ZUNIONSTORE", "r3", "2", "r1", "r2", "WEIGHTS", "1", "2"}
		}
		d.Do(cmd...)
		if i%50 == 0 {
			d.Do("ZRANGE", key, "0", "-1", "WITHSCORES")
			d.Do("OBJECT", "ENCODING", key)
		}
	}
	// Lexicographic commands need equal scores.
	for i := 0; i < 100; i++ {
		d.Do("ZADD", "lx", "0", member())
	}
	for i := 0; i < 150; i++ {
		switch rng.IntN(5) {
		case 0:
			d.Do("ZRANGEBYLEX", "lx", lex(), lex(), "LIMIT", num(), num())
		case 1:
			d.Do("ZREVRANGEBYLEX", "lx", lex(), lex())
		case 2:
			d.Do("ZLEXCOUNT", "lx", lex(), lex())
		case 3:
			d.Do("ZRANGESTORE", "lx2", "lx", lex(), lex(), "BYLEX", "REV", "LIMIT", num(), num())
		case 4:
			if rng.IntN(4) == 0 {
				d.Do("ZREMRANGEBYLEX", "lx", lex(), lex())
			}
		}
	}
	d.Do("ZRANGE", "lx", "0", "-1")
}

// ZSCAN's guarantee: a member present for the whole scan is returned at
// least once while the set grows and shrinks between the calls, and
// whatever happens to the members' ranks (removals below the cursor).
func TestZSetZscanGuarantee(t *testing.T) {
	z := Dial(t, StartZredis(t).Addr)
	args := []string{"ZADD", "z"}
	for i := 0; i < 3000; i++ {
		args = append(args, strconv.Itoa(1000+i), "keep"+strconv.Itoa(i))
	}
	z.Do(args...)
	seen := map[string]bool{}
	scanPages(t, z, []string{"ZSCAN", "z"}, []string{"COUNT", "20"}, func(step int, elems []string) {
		for i := 0; i < len(elems); i += 2 {
			seen[elems[i]] = true
		}
		// Members below every kept one come and go (ranks shift), and the
		// table grows and shrinks.
		add := []string{"ZADD", "z"}
		for i := 0; i < 200; i++ {
			add = append(add, strconv.Itoa(i), "tmp"+strconv.Itoa(step)+"-"+strconv.Itoa(i))
		}
		z.Do(add...)
		if step%3 == 2 {
			z.Do("ZREMRANGEBYSCORE", "z", "-inf", "(1000")
		}
	})
	for i := 0; i < 3000; i++ {
		if !seen["keep"+strconv.Itoa(i)] {
			t.Fatalf("keep%d missed by ZSCAN", i)
		}
	}
}
