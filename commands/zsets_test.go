package commands

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

func TestZaddAndReads(t *testing.T) {
	runSteps(t, []step{
		{argv("ZADD", "z", "1", "a", "2", "b", "3", "c"), replyInt(3)},
		{argv("ZADD", "z", "CH", "GT", "0", "a", "5", "b"), replyInt(1)},
		{argv("ZADD", "z", "NX", "XX", "1", "a"), replyErr(engine.ErrZAddXXNX)},
		{argv("ZADD", "z", "GT", "LT", "1", "a"), replyErr(engine.ErrZAddGTLTNX)},
		{argv("ZADD", "z", "INCR", "1", "a", "1", "b"), replyErr(engine.ErrZAddIncrPair)},
		{argv("ZADD", "z", "1", "a", "1"), replyErr(engine.ErrSyntax)},
		{argv("ZADD", "z", "nan", "a"), replyErr(engine.ErrNotFloat)},
		{argv("ZADD", "z", "1e400", "a"), replyErr(engine.ErrNotFloat)},
		{argv("ZADD", "z", "0x10", "h"), replyInt(1)},
		{argv("ZSCORE", "z", "h"), replyBulk("16")},
		{argv("ZADD", "z", "inf", "i"), replyInt(1)},
		{argv("ZADD", "z", "INCR", "-inf", "i"), replyErr(engine.ErrZScoreNaN)},
		{argv("ZINCRBY", "z", "0.1", "a"), replyBulk("1.1000000000000001")},
		{argv("ZSCORE", "z", "b"), replyBulk("5")},
		{argv("ZSCORE", "z", "x"), replyNull},
		{argv("ZMSCORE", "z", "b", "x"), replyArray(replyBulk("5"), replyNull)},
		{argv("ZCARD", "z"), replyInt(5)},
		{argv("ZRANK", "z", "c"), replyInt(1)},
		{argv("ZREVRANK", "z", "c"), replyInt(3)},
		{argv("ZCOUNT", "z", "(1.1", "inf"), replyInt(4)},
		{argv("ZCOUNT", "z", "x", "inf"), replyErr(engine.ErrZMinMaxFloat)},
		{argv("ZRANGE", "z", "0", "1", "WITHSCORES"), replyBulks("a", "1.1000000000000001", "c", "3")},
		{argv("ZRANGE", "z", "0", "1", "LIMIT", "0", "1"), replyErr(engine.ErrZLimitRank)},
		{argv("ZRANGE", "z", "-", "+", "BYLEX", "WITHSCORES"), replyErr(engine.ErrZWithscoresLex)},
		{argv("ZREVRANGEBYSCORE", "z", "inf", "2", "LIMIT", "1", "2"), replyBulks("h", "b")},
		{argv("ZRANGEBYLEX", "z", "x", "+"), replyErr(engine.ErrZMinMaxLex)},
	})
}

func TestZsetResp3(t *testing.T) {
	e := newTestEnv(t)
	e.run("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d")
	e.resp3()
	for _, s := range []step{
		{argv("ZSCORE", "z", "a"), ",1\r\n"},
		{argv("ZSCORE", "z", "x"), "_\r\n"},
		{argv("ZRANGE", "z", "0", "0", "WITHSCORES"), "*1\r\n*2\r\n$1\r\na\r\n,1\r\n"},
		{argv("ZPOPMIN", "z"), "*2\r\n$1\r\na\r\n,1\r\n"},
		{argv("ZPOPMIN", "z", "1"), "*1\r\n*2\r\n$1\r\nb\r\n,2\r\n"},
		{argv("ZMPOP", "1", "z", "MIN"), "*2\r\n$1\r\nz\r\n*1\r\n*2\r\n$1\r\nc\r\n,3\r\n"},
		{argv("ZMPOP", "1", "nokey", "MIN"), "_\r\n"},
		{argv("ZADD", "z", "INCR", "NX", "1", "d"), "_\r\n"},
		{argv("ZSCAN", "z", "0"), "*2\r\n$1\r\n0\r\n*2\r\n$1\r\nd\r\n$1\r\n4\r\n"},
	} {
		require.Equal(t, s.want, e.run(s.cmd...), "%q", s.cmd)
	}
}

func TestZsetWrongType(t *testing.T) {
	e := newTestEnv(t)
	e.putObject("h", keyspace.TypeHash, 1)
	for _, cmd := range [][]string{
		{"ZADD", "h", "1", "a"}, {"ZINCRBY", "h", "1", "a"}, {"ZREM", "h", "a"}, {"ZSCORE", "h", "a"},
		{"ZMSCORE", "h", "a"}, {"ZCARD", "h"}, {"ZCOUNT", "h", "1", "2"}, {"ZLEXCOUNT", "h", "-", "+"},
		{"ZRANGE", "h", "0", "1"}, {"ZRANGESTORE", "d", "h", "0", "1"}, {"ZRANK", "h", "a"},
		{"ZREMRANGEBYRANK", "h", "0", "1"}, {"ZPOPMIN", "h"}, {"ZMPOP", "1", "h", "MIN"}, {"ZSCAN", "h", "0"},
	} {
		assert.Equal(t, replyErr(engine.ErrWrongType), e.run(cmd...), "%q", cmd)
	}
}

func TestZsetDirtyAndDeletion(t *testing.T) {
	e := newTestEnv(t)
	e.run("ZADD", "z", "1", "a", "2", "b", "3", "c")
	assert.Equal(t, 3, e.dirty())
	e.run("ZADD", "z", "1", "a", "5", "b")
	assert.Equal(t, 1, e.dirty())
	assert.Equal(t, replyInt(2), e.run("ZREMRANGEBYSCORE", "z", "-inf", "3"))
	assert.Equal(t, 2, e.dirty())
	assert.Equal(t, replyBulks("b", "5"), e.run("ZPOPMAX", "z"))
	assert.Equal(t, replyInt(0), e.run("EXISTS", "z"))
}

func TestZsetStoreDoesNotAliasArgs(t *testing.T) {
	e := newTestEnv(t)
	for i := 0; i < 200; i++ {
		e.run("ZADD", "z", strconv.Itoa(i), "member-"+strconv.Itoa(i))
	}
	require.Equal(t, replyBulk("skiplist"), e.run("OBJECT", "ENCODING", "z"))
	require.Equal(t, replyInt(200), e.run("ZCARD", "z"))
	require.Equal(t, replyBulks("member-42"), e.run("ZRANGE", "z", "42", "42"))
	require.Equal(t, replyInt(150), e.run("ZRANK", "z", "member-150"))
	require.Equal(t, replyInt(10), e.run("ZRANGESTORE", "d", "z", "0", "9"))
	require.Equal(t, replyBulks("member-9"), e.run("ZRANGE", "d", "-1", "-1"))
	require.Equal(t, replyBulk("listpack"), e.run("OBJECT", "ENCODING", "d"))
}

// TestZscanWalk checks that a cursor walk over a large set returns every
// member exactly once, COUNT at a time.
func TestZscanWalk(t *testing.T) {
	e := newTestEnv(t)
	for i := 0; i < 300; i++ {
		e.run("ZADD", "z", strconv.Itoa(i%7), "m"+strconv.Itoa(i))
	}
	seen := map[string]int{}
	elems := scanWalk(t, e, []string{"ZSCAN", "z"}, "COUNT", "25")
	for i := 0; i < len(elems); i += 2 {
		seen[elems[i]]++
	}
	require.Len(t, seen, 300)
	for m, n := range seen {
		require.Equal(t, 1, n, m)
	}
	out := e.run("ZSCAN", "z", "0", "MATCH", "m1?", "COUNT", "1000")
	assert.Equal(t, 2*10, strings.Count(out, "$")-1) // m10..m19, minus the cursor
}
