package commands

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

func TestListPushPopCommands(t *testing.T) {
	e := runSteps(t, []step{
		{argv("LPUSH", "l", "a", "b"), replyInt(2)},
		{argv("RPUSH", "l", "c"), replyInt(3)},
		{argv("LRANGE", "l", "0", "-1"), replyBulks("b", "a", "c")},
		{argv("LPUSHX", "nokey", "a"), replyInt(0)},
		{argv("RPUSHX", "l", "d", "e"), replyInt(5)},
		{argv("LPOP", "l"), replyBulk("b")},
		{argv("RPOP", "l", "2"), replyBulks("e", "d")},
		{argv("LPOP", "l", "0"), replyArray()},
		{argv("LPOP", "nokey"), replyNull},
		{argv("LPOP", "nokey", "0"), replyNullArray},
		{argv("LPOP", "l", "-1"), replyErr(engine.ErrCountPositive)},
		{argv("LPOP", "l", "x"), replyErr(engine.ErrCountPositive)},
		{argv("LPOP", "l", "1", "2"), replyErr(engine.ErrWrongArgs("lpop"))},
		{argv("LPOP", "l", "10"), replyBulks("a", "c")},
		{argv("EXISTS", "l"), replyInt(0)},
	})
	_ = e
}

func TestListDirty(t *testing.T) {
	e := newTestEnv(t)
	for _, tc := range []struct {
		cmd   []string
		dirty int
	}{
		{argv("RPUSH", "l", "a", "b", "a", "c"), 4},
		{argv("LPUSHX", "nokey", "a"), 0},
		{argv("LSET", "l", "0", "z"), 1},
		{argv("LINSERT", "l", "BEFORE", "nothere", "x"), 0},
		{argv("LINSERT", "l", "AFTER", "a", "x"), 1},
		{argv("LREM", "l", "0", "x"), 1},
		{argv("LTRIM", "l", "0", "-1"), 1},
		{argv("LMOVE", "l", "m", "LEFT", "LEFT"), 1},
		{argv("RPOP", "l", "2"), 2},
		{argv("LMPOP", "2", "l", "m", "LEFT", "COUNT", "5"), 1},
		{argv("LPOP", "nokey"), 0},
	} {
		e.run(tc.cmd...)
		assert.Equal(t, tc.dirty, e.dirty(), "%q", tc.cmd)
	}
}

func TestListWrongType(t *testing.T) {
	e := newTestEnv(t)
	e.putObject("h", keyspace.TypeHash, 1)
	e.run("SET", "s", "v")
	e.run("RPUSH", "l", "a")
	wrong := replyErr(engine.ErrWrongType)
	for _, k := range []string{"h", "s"} {
		for _, cmd := range [][]string{
			{"LPUSH", k, "a"}, {"RPUSH", k, "a"}, {"LPUSHX", k, "a"}, {"RPUSHX", k, "a"},
			{"LPOP", k}, {"RPOP", k, "1"}, {"LLEN", k}, {"LRANGE", k, "0", "1"}, {"LINDEX", k, "0"},
			{"LSET", k, "0", "v"}, {"LINSERT", k, "BEFORE", "a", "b"}, {"LREM", k, "0", "a"},
			{"LTRIM", k, "0", "1"}, {"LPOS", k, "a"}, {"LMOVE", k, "l", "LEFT", "LEFT"},
			{"LMOVE", "l", k, "LEFT", "LEFT"}, {"RPOPLPUSH", k, "l"}, {"LMPOP", "1", k, "LEFT"},
		} {
			assert.Equal(t, wrong, e.run(cmd...), "%q", cmd)
		}
	}
	// Nothing moved when the destination had the wrong type.
	assert.Equal(t, replyBulks("a"), e.run("LRANGE", "l", "0", "-1"))
}

func TestListCommands(t *testing.T) {
	runSteps(t, []step{
		{argv("RPUSH", "l", "a", "b", "c", "a", "b", "c", "a"), replyInt(7)},
		{argv("LLEN", "l"), replyInt(7)},
		{argv("LINDEX", "l", "-1"), replyBulk("a")},
		{argv("LINDEX", "l", "7"), replyNull},
		{argv("LINDEX", "nokey", "x"), replyNull},
		{argv("LINDEX", "l", "x"), replyErr(engine.ErrNotInteger)},
		{argv("LRANGE", "l", "-2", "100"), replyBulks("c", "a")},
		{argv("LRANGE", "l", "5", "2"), replyArray()},
		{argv("LPOS", "l", "a", "RANK", "-1"), replyInt(6)},
		{argv("LPOS", "l", "a", "COUNT", "0"), replyArray(replyInt(0), replyInt(3), replyInt(6))},
		{argv("LPOS", "l", "a", "RANK", "2", "COUNT", "1"), replyArray(replyInt(3))},
		{argv("LPOS", "l", "a", "MAXLEN", "3", "COUNT", "0"), replyArray(replyInt(0))},
		{argv("LPOS", "l", "a", "RANK", "-9223372036854775808", "COUNT", "2"), replyArray(replyInt(6), replyInt(3), replyInt(0))},
		{argv("LPOS", "l", "z"), replyNull},
		{argv("LPOS", "nokey", "z", "COUNT", "1"), replyArray()},
		{argv("LPOS", "l", "a", "RANK", "0"), replyErr(engine.ErrLPosRankZero)},
		{argv("LPOS", "l", "a", "COUNT", "x"), replyErr(engine.ErrLPosCountNeg)},
		{argv("LPOS", "l", "a", "MAXLEN", "-1"), replyErr(engine.ErrLPosMaxlenNeg)},
		{argv("LPOS", "l", "a", "FOO"), replyErr(engine.ErrSyntax)},
		{argv("LSET", "nokey", "x", "v"), replyErr(engine.ErrNoSuchKey)},
		{argv("LSET", "l", "9", "v"), replyErr(engine.ErrIndexOutOfRange)},
		{argv("LSET", "l", "1", "B"), replyOK},
		{argv("LINSERT", "l", "AFTER", "B", "b2"), replyInt(8)},
		{argv("LINSERT", "l", "BEFORE", "zz", "x"), replyInt(-1)},
		{argv("LINSERT", "nokey", "BEFORE", "a", "x"), replyInt(0)},
		{argv("LINSERT", "l", "UP", "a", "x"), replyErr(engine.ErrSyntax)},
		{argv("LREM", "l", "-2", "a"), replyInt(2)},
		{argv("LRANGE", "l", "0", "-1"), replyBulks("a", "B", "b2", "c", "b", "c")},
		{argv("LREM", "l", "-9223372036854775808", "c"), replyInt(2)},
		{argv("LTRIM", "l", "1", "2"), replyOK},
		{argv("LRANGE", "l", "0", "-1"), replyBulks("B", "b2")},
		{argv("LTRIM", "l", "5", "1"), replyOK},
		{argv("EXISTS", "l"), replyInt(0)},
		{argv("LTRIM", "nokey", "x", "1"), replyErr(engine.ErrNotInteger)},
		{argv("OBJECT", "ENCODING", "nokey"), replyNull},
	})
}

func TestListMoveAndMPop(t *testing.T) {
	runSteps(t, []step{
		{argv("RPUSH", "a", "1", "2", "3"), replyInt(3)},
		{argv("LMOVE", "a", "b", "LEFT", "RIGHT"), replyBulk("1")},
		{argv("RPOPLPUSH", "a", "b"), replyBulk("3")},
		{argv("LRANGE", "b", "0", "-1"), replyBulks("3", "1")},
		{argv("LMOVE", "b", "b", "LEFT", "RIGHT"), replyBulk("3")},
		{argv("LRANGE", "b", "0", "-1"), replyBulks("1", "3")},
		{argv("LMOVE", "nokey", "b", "LEFT", "UP"), replyErr(engine.ErrSyntax)},
		{argv("LMOVE", "nokey", "b", "LEFT", "LEFT"), replyNull},
		{argv("LMOVE", "a", "b", "RIGHT", "LEFT"), replyBulk("2")},
		{argv("EXISTS", "a"), replyInt(0)},
		{argv("OBJECT", "ENCODING", "b"), replyBulk("quicklist")},
		{argv("LMPOP", "2", "a", "b", "RIGHT", "COUNT", "2"), replyArray(replyBulk("b"), replyBulks("3", "1"))},
		{argv("LMPOP", "1", "b", "LEFT", "COUNT", "2"), replyArray(replyBulk("b"), replyBulks("2"))},
		{argv("LMPOP", "1", "b", "LEFT"), replyNullArray},
		{argv("LMPOP", "0", "b", "LEFT"), replyErr(engine.ErrNumkeysPositive)},
		{argv("LMPOP", "3", "b", "LEFT"), replyErr(engine.ErrSyntax)},
		{argv("LMPOP", "1", "b", "LEFT", "COUNT", "0"), replyErr(engine.ErrCountGreaterZero)},
		{argv("LMPOP", "1", "b", "LEFT", "COUNT", "1", "COUNT", "1"), replyErr(engine.ErrSyntax)},
		{argv("COMMAND", "GETKEYS", "LMPOP", "2", "x", "y", "LEFT"), replyBulks("x", "y")},
		{argv("COMMAND", "GETKEYS", "LMPOP", "2abc", "x", "y", "LEFT"), replyBulks("x", "y")},
		{argv("COMMAND", "GETKEYS", "LMPOP", "3", "x", "LEFT"), replyErr(engine.ErrGetKeysInvalidArgs)},
	})
}

// A list read by a snapshot is not changed by later writes: the write
// works on a private copy.
func TestListSnapshotIsolation(t *testing.T) {
	e := newTestEnv(t)
	e.run("RPUSH", "l", "a", "b", "c")
	var snapList *keyspace.List
	e.withDB(func(db *keyspace.DB) {
		snapList = db.Lookup([]byte("l")).Obj().(*keyspace.List)
	})
	e.KS.Lock()
	snap := e.KS.Snapshot()
	e.KS.Unlock()
	defer snap.Release()
	e.run("LPOP", "l")
	e.run("LSET", "l", "0", "X")
	e.run("RPUSH", "l", "d")
	require.Equal(t, 3, snapList.Len())
	assert.Equal(t, "a", string(snapList.At(0)))
	assert.Equal(t, "b", string(snapList.At(1)))
	assert.Equal(t, replyBulks("X", "c", "d"), e.run("LRANGE", "l", "0", "-1"))
}

func TestAtoi(t *testing.T) {
	for in, want := range map[string]int64{
		"": 0, "2": 2, "2abc": 2, " 3": 3, "+4": 4, "-5": -5, "x": 0, "007": 7, "4294967297": 1,
	} {
		assert.Equal(t, want, atoi([]byte(in)), in)
	}
}

// Under RESP3 the missing-key answers are the null type, whether Redis
// sends a null bulk or a null array in RESP2.
func TestListResp3Nulls(t *testing.T) {
	e := newTestEnv(t)
	e.resp3()
	for _, cmd := range [][]string{
		{"LPOP", "nokey"}, {"RPOP", "nokey", "2"}, {"LINDEX", "nokey", "0"}, {"LPOS", "nokey", "a"},
		{"LMOVE", "nokey", "d", "LEFT", "LEFT"}, {"RPOPLPUSH", "nokey", "d"}, {"LMPOP", "1", "nokey", "LEFT"},
	} {
		assert.Equal(t, "_\r\n", e.run(cmd...), "%q", cmd)
	}
}
