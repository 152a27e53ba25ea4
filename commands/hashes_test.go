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

func TestHashCommands(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
	}{
		{"hset and reads", []step{
			{argv("HSET", "h", "a", "1", "b", "2"), replyInt(2)},
			{argv("HSET", "h", "a", "10", "c", "3"), replyInt(1)},
			{argv("HGET", "h", "a"), replyBulk("10")},
			{argv("HGET", "h", "x"), replyNull},
			{argv("HGET", "nokey", "x"), replyNull},
			{argv("HMGET", "h", "a", "x", "c"), replyArray(replyBulk("10"), replyNull, replyBulk("3"))},
			{argv("HMGET", "nokey", "a"), replyArray(replyNull)},
			{argv("HGETALL", "h"), replyBulks("a", "10", "b", "2", "c", "3")},
			{argv("HKEYS", "h"), replyBulks("a", "b", "c")},
			{argv("HVALS", "h"), replyBulks("10", "2", "3")},
			{argv("HGETALL", "nokey"), replyArray()},
			{argv("HLEN", "h"), replyInt(3)},
			{argv("HLEN", "nokey"), replyInt(0)},
			{argv("HEXISTS", "h", "b"), replyInt(1)},
			{argv("HEXISTS", "h", "x"), replyInt(0)},
			{argv("HSTRLEN", "h", "a"), replyInt(2)},
			{argv("HSTRLEN", "h", "x"), replyInt(0)},
			{argv("HSET", "h", "a"), replyErr(engine.ErrWrongArgs("hset"))},
			{argv("HMSET", "h", "a", "1", "b"), replyErr(engine.ErrWrongArgs("hmset"))},
			{argv("HMSET", "h", "d", "4"), replyOK},
			{argv("OBJECT", "ENCODING", "h"), replyBulk("listpack")},
		}},
		{"hsetnx and hdel", []step{
			{argv("HSETNX", "h", "a", "1"), replyInt(1)},
			{argv("HSETNX", "h", "a", "2"), replyInt(0)},
			{argv("HGET", "h", "a"), replyBulk("1")},
			{argv("HDEL", "h", "x"), replyInt(0)},
			{argv("HDEL", "nokey", "x"), replyInt(0)},
			{argv("HDEL", "h", "a", "a"), replyInt(1)},
			{argv("EXISTS", "h"), replyInt(0)},
		}},
		{"hincrby", []step{
			{argv("HINCRBY", "h", "n", "5"), replyInt(5)},
			{argv("HINCRBY", "h", "n", "-7"), replyInt(-2)},
			{argv("HINCRBY", "h", "n", "x"), replyErr(engine.ErrNotInteger)},
			{argv("HSET", "h", "s", "abc", "m", "9223372036854775807"), replyInt(2)},
			{argv("HINCRBY", "h", "s", "1"), replyErr(engine.ErrHashNotInteger)},
			{argv("HINCRBY", "h", "m", "1"), replyErr(engine.ErrOverflow)},
			{argv("HINCRBY", "h", "m", "-1"), replyInt(9223372036854775806)},
		}},
		{"hincrbyfloat", []step{
			{argv("HINCRBYFLOAT", "h", "f", "10.5"), replyBulk("10.5")},
			{argv("HINCRBYFLOAT", "h", "f", "0.1"), replyBulk("10.6")},
			{argv("HINCRBYFLOAT", "h", "f", "-10.6"), replyBulk("0")},
			{argv("HINCRBYFLOAT", "h", "f", "x"), replyErr(engine.ErrNotFloat)},
			{argv("HINCRBYFLOAT", "h", "f", "inf"), replyErr(engine.ErrHashNaNOrInf)},
			{argv("HSET", "h", "s", "abc", "i", "inf"), replyInt(2)},
			{argv("HINCRBYFLOAT", "h", "s", "1"), replyErr(engine.ErrHashNotFloat)},
			{argv("HINCRBYFLOAT", "h", "i", "1"), replyErr(engine.ErrIncrFloatNaN)},
			{argv("HGET", "h", "f"), replyBulk("0")},
		}},
		{"hrandfield", []step{
			{argv("HRANDFIELD", "nokey"), replyNull},
			{argv("HRANDFIELD", "nokey", "2"), replyArray()},
			{argv("HRANDFIELD", "nokey", "x"), replyErr(engine.ErrNotInteger)},
			{argv("HSET", "h", "a", "1", "b", "2"), replyInt(2)},
			{argv("HRANDFIELD", "h", "0"), replyArray()},
			{argv("HRANDFIELD", "h", "5"), replyBulks("a", "b")},
			{argv("HRANDFIELD", "h", "5", "WITHVALUES"), replyBulks("a", "1", "b", "2")},
			{argv("HRANDFIELD", "h", "1", "bad"), replyErr(engine.ErrSyntax)},
			{argv("HRANDFIELD", "h", "1", "WITHVALUES", "x"), replyErr(engine.ErrSyntax)},
			{argv("HRANDFIELD", "h", "-9223372036854775808"), replyErr("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")},
			{argv("HRANDFIELD", "h", "4611686018427387904", "WITHVALUES"), replyErr(engine.ErrValueOutOfRange)},
		}},
		{"hscan", []step{
			{argv("HSCAN", "nokey", "0", "COUNT", "0"), replyArray(replyBulk("0"), replyArray())},
			{argv("HSCAN", "h", "x"), replyErr(engine.ErrInvalidCursor)},
			{argv("HSET", "h", "a1", "1", "b", "2", "a2", "3"), replyInt(3)},
			{argv("HSCAN", "h", "7"), replyArray(replyBulk("0"), replyBulks("a1", "1", "b", "2", "a2", "3"))},
			{argv("HSCAN", "h", "0", "MATCH", "a*"), replyArray(replyBulk("0"), replyBulks("a1", "1", "a2", "3"))},
			{argv("HSCAN", "h", "0", "COUNT", "0"), replyErr(engine.ErrSyntax)},
			{argv("HSCAN", "h", "0", "COUNT", "x"), replyErr(engine.ErrNotInteger)},
			{argv("HSCAN", "h", "0", "TYPE", "hash"), replyErr(engine.ErrSyntax)},
			{argv("HSCAN", "h", "0", "COUNT"), replyErr(engine.ErrSyntax)},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { runSteps(t, tc.steps) })
	}
}

func TestHashWrongType(t *testing.T) {
	e := newTestEnv(t)
	e.putObject("l", keyspace.TypeList, 3)
	for _, c := range [][]string{
		{"HSET", "l", "f", "v"}, {"HMSET", "l", "f", "v"}, {"HSETNX", "l", "f", "v"},
		{"HGET", "l", "f"}, {"HMGET", "l", "f"}, {"HGETALL", "l"}, {"HKEYS", "l"}, {"HVALS", "l"},
		{"HDEL", "l", "f"}, {"HEXISTS", "l", "f"}, {"HLEN", "l"}, {"HSTRLEN", "l", "f"},
		{"HINCRBY", "l", "f", "1"}, {"HINCRBYFLOAT", "l", "f", "1"}, {"HRANDFIELD", "l"},
		{"HRANDFIELD", "l", "1"}, {"HSCAN", "l", "0"},
	} {
		assert.Equal(t, replyErr(engine.ErrWrongType), e.run(c...), "%q", c)
	}
	// The argument is checked before the type.
	assert.Equal(t, replyErr(engine.ErrNotInteger), e.run("HINCRBY", "l", "f", "x"))
	assert.Equal(t, replyErr(engine.ErrNotFloat), e.run("HINCRBYFLOAT", "l", "f", "x"))
	assert.Equal(t, replyErr(engine.ErrNotInteger), e.run("HRANDFIELD", "l", "x"))
}

func TestHashDirty(t *testing.T) {
	e := newTestEnv(t)
	cases := []struct {
		cmd   []string
		dirty int
	}{
		{argv("HSET", "h", "a", "1", "b", "2"), 2},
		{argv("HSET", "h", "a", "1"), 1},
		{argv("HMSET", "h", "c", "1", "d", "2", "e", "3"), 3},
		{argv("HSETNX", "h", "a", "9"), 0},
		{argv("HSETNX", "h", "z", "9"), 1},
		{argv("HDEL", "h", "a", "nope", "b"), 2},
		{argv("HINCRBY", "h", "n", "1"), 1},
		{argv("HINCRBYFLOAT", "h", "n", "1.5"), 1},
		{argv("HINCRBY", "h", "n", "1"), 0}, // error: 2.5 is not an integer
		{argv("HGET", "h", "a"), 0},
	}
	for _, c := range cases {
		e.run(c.cmd...)
		assert.Equal(t, c.dirty, e.dirty(), "%q", c.cmd)
	}
}

func TestHashResp3(t *testing.T) {
	e := newTestEnv(t)
	e.resp3()
	e.run("HSET", "h", "a", "1", "b", "2")
	assert.Equal(t, "%2\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n", e.run("HGETALL", "h"))
	assert.Equal(t, "%0\r\n", e.run("HGETALL", "nokey"))
	assert.Equal(t, "*2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n", e.run("HRANDFIELD", "h", "2", "WITHVALUES"))
	r := e.run("HRANDFIELD", "h", "-3", "WITHVALUES")
	assert.True(t, strings.HasPrefix(r, "*3\r\n*2\r\n"), r)
	assert.Equal(t, "_\r\n", e.run("HRANDFIELD", "nokey"))
}

// TestHashArgsCopied checks that stored fields and values do not alias
// the request buffer (runArgs overwrites it after each command).
func TestHashArgsCopied(t *testing.T) {
	e := newTestEnv(t)
	e.run("HSET", "h", "field", "value")
	e.run("HSETNX", "h", "f2", "v2")
	e.run("HINCRBY", "h", "n", "42")
	long := strings.Repeat("x", 100)
	e.run("HSET", "big", "f", long)
	assert.Equal(t, replyBulks("field", "value", "f2", "v2", "n", "42"), e.run("HGETALL", "h"))
	assert.Equal(t, replyBulk(long), e.run("HGET", "big", "f"))
	assert.Equal(t, replyBulk("hashtable"), e.run("OBJECT", "ENCODING", "big"))
}

func TestHashLarge(t *testing.T) {
	e := newTestEnv(t)
	args := []string{"HSET", "h"}
	for i := 0; i < 1000; i++ {
		args = append(args, "f"+strconv.Itoa(i), "v"+strconv.Itoa(i))
	}
	require.Equal(t, replyInt(1000), e.run(args...))
	assert.Equal(t, replyBulk("hashtable"), e.run("OBJECT", "ENCODING", "h"))
	assert.Equal(t, replyBulk("v777"), e.run("HGET", "h", "f777"))
	// A full HSCAN returns every field once at least.
	seen := map[string]bool{}
	elems := scanWalk(t, e, []string{"HSCAN", "h"}, "COUNT", "25")
	for i := 0; i < len(elems); i += 2 {
		seen[elems[i]] = true
	}
	assert.Len(t, seen, 1000)
	r := e.run("MEMORY", "USAGE", "h")
	n, err := strconv.Atoi(strings.TrimSuffix(r[1:], "\r\n"))
	require.NoError(t, err, r)
	assert.Greater(t, n, 1000*20)
	assert.Less(t, n, 1000*200)
	del := []string{"HDEL", "h"}
	for i := 0; i < 1000; i++ {
		del = append(del, "f"+strconv.Itoa(i))
	}
	assert.Equal(t, replyInt(1000), e.run(del...))
	assert.Equal(t, replyInt(0), e.run("EXISTS", "h"))
}

// TestHashSnapshotIsolation changes a hash while a snapshot holds it: the
// snapshot keeps the old contents.
func TestHashSnapshotIsolation(t *testing.T) {
	e := newTestEnv(t)
	e.run("HSET", "h", "a", "1")
	var snapEntry *keyspace.Entry
	e.withDB(func(db *keyspace.DB) { snapEntry = db.Lookup([]byte("h")) })
	var snap *keyspace.Snapshot
	e.KS.Lock()
	snap = e.KS.Snapshot()
	e.KS.Unlock()
	defer snap.Release()
	e.run("HSET", "h", "a", "2", "b", "3")
	v, _ := snapEntry.Obj().(*keyspace.Hash).Get([]byte("a"))
	assert.Equal(t, "1", string(v))
	assert.Equal(t, 1, snapEntry.Obj().Len())
	assert.Equal(t, replyBulk("2"), e.run("HGET", "h", "a"))
}
