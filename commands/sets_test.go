package commands

import (
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// decodeBulks decodes a flat array or RESP3 set of bulk strings.
func decodeBulks(t *testing.T, raw string) []string {
	t.Helper()
	lines := strings.Split(raw, "\r\n")
	require.True(t, lines[0][0] == '*' || lines[0][0] == '~', raw)
	n, err := strconv.Atoi(lines[0][1:])
	require.NoError(t, err)
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, lines[2+2*i])
	}
	return out
}

func sortedBulks(t *testing.T, raw string) []string {
	out := decodeBulks(t, raw)
	sort.Strings(out)
	return out
}

func TestSetCommands(t *testing.T) {
	wrongArgs := func(name string) string { return replyErr(engine.ErrWrongArgs(name)) }
	tests := []struct {
		name  string
		steps []step
	}{
		{"sadd srem scard sismember", []step{
			{argv("SADD", "s", "3", "1", "2", "1"), replyInt(3)},
			{argv("SMEMBERS", "s"), replyBulks("1", "2", "3")},
			{argv("OBJECT", "ENCODING", "s"), replyBulk("intset")},
			{argv("SCARD", "s"), replyInt(3)},
			{argv("SISMEMBER", "s", "2"), replyInt(1)},
			{argv("SISMEMBER", "s", "02"), replyInt(0)},
			{argv("SMISMEMBER", "s", "1", "x", "3"), replyArray(replyInt(1), replyInt(0), replyInt(1))},
			{argv("SMISMEMBER", "none", "1"), replyArray(replyInt(0))},
			{argv("SREM", "s", "1", "x", "1"), replyInt(1)},
			{argv("SREM", "none", "1"), replyInt(0)},
			{argv("SREM", "s", "2", "3"), replyInt(2)},
			{argv("EXISTS", "s"), replyInt(0)},
			{argv("SCARD", "s"), replyInt(0)},
			{argv("SADD", "s"), wrongArgs("sadd")},
			{argv("SADD", "h", "a", ""), replyInt(2)},
			{argv("SISMEMBER", "h", ""), replyInt(1)},
			{argv("OBJECT", "ENCODING", "h"), replyBulk("hashtable")},
		}},
		{"smove", []step{
			{argv("SADD", "a", "1", "x"), replyInt(2)},
			{argv("SMOVE", "a", "b", "1"), replyInt(1)},
			{argv("OBJECT", "ENCODING", "b"), replyBulk("intset")},
			{argv("SMOVE", "a", "b", "nope"), replyInt(0)},
			{argv("SMOVE", "a", "a", "x"), replyInt(1)},
			{argv("SMOVE", "a", "a", "nope"), replyInt(0)},
			{argv("SMOVE", "none", "b", "x"), replyInt(0)},
			{argv("SMOVE", "a", "b", "x"), replyInt(1)},
			{argv("EXISTS", "a"), replyInt(0)},
			{argv("OBJECT", "ENCODING", "b"), replyBulk("hashtable")},
			{argv("SCARD", "b"), replyInt(2)},
		}},
		{"spop srandmember intset", []step{
			{argv("SPOP", "none"), replyNull},
			{argv("SPOP", "none", "2"), "*0\r\n"},
			{argv("SPOP", "s", "-1"), replyErr(engine.ErrCountPositive)},
			{argv("SPOP", "s", "x"), replyErr(engine.ErrCountPositive)},
			{argv("SPOP", "s", "1", "2"), replyErr(engine.ErrSyntax)},
			{argv("SRANDMEMBER", "none"), replyNull},
			{argv("SRANDMEMBER", "none", "-2"), "*0\r\n"},
			{argv("SRANDMEMBER", "s", "x"), replyErr(engine.ErrNotInteger)},
			{argv("SRANDMEMBER", "s", "-9223372036854775808"), replyErr(engine.ErrLongRange)},
			{argv("SRANDMEMBER", "s", "1", "2"), replyErr(engine.ErrSyntax)},
			{argv("SADD", "s", "5", "4", "6"), replyInt(3)},
			{argv("SRANDMEMBER", "s", "10"), replyBulks("4", "5", "6")},
			{argv("SRANDMEMBER", "s", "0"), "*0\r\n"},
			{argv("SPOP", "s", "0"), "*0\r\n"},
			{argv("SPOP", "s", "3"), replyBulks("4", "5", "6")},
			{argv("EXISTS", "s"), replyInt(0)},
		}},
		{"sinter sintercard sinterstore", []step{
			{argv("SADD", "a", "1", "2", "3", "4"), replyInt(4)},
			{argv("SADD", "b", "4", "3", "9"), replyInt(3)},
			{argv("SINTER", "a", "b"), replyBulks("3", "4")},
			{argv("SINTER", "a", "none"), "*0\r\n"},
			{argv("SINTERCARD", "2", "a", "b"), replyInt(2)},
			{argv("SINTERCARD", "2", "a", "b", "LIMIT", "1"), replyInt(1)},
			{argv("SINTERCARD", "1", "a", "limit", "0"), replyInt(4)},
			{argv("SINTERCARD", "2", "a", "none"), replyInt(0)},
			{argv("SINTERCARD", "0", "a"), replyErr(engine.ErrNumkeysPositive)},
			{argv("SINTERCARD", "x", "a"), replyErr(engine.ErrNumkeysPositive)},
			{argv("SINTERCARD", "3", "a", "b"), replyErr(engine.ErrNumkeysTooMany)},
			{argv("SINTERCARD", "1", "a", "LIMIT", "-1"), replyErr(engine.ErrLimitNegative)},
			{argv("SINTERCARD", "1", "a", "LIMIT"), replyErr(engine.ErrSyntax)},
			{argv("SINTERSTORE", "d", "a", "b"), replyInt(2)},
			{argv("SMEMBERS", "d"), replyBulks("3", "4")},
			{argv("SINTERSTORE", "d", "a", "none"), replyInt(0)},
			{argv("EXISTS", "d"), replyInt(0)},
		}},
		{"sunion sdiff store", []step{
			{argv("SADD", "a", "1", "2", "3"), replyInt(3)},
			{argv("SADD", "b", "3", "4"), replyInt(2)},
			{argv("SUNION", "a", "b", "none"), replyBulks("1", "2", "3", "4")},
			{argv("SDIFF", "a", "b"), replyBulks("1", "2")},
			{argv("SDIFF", "a", "a"), "*0\r\n"},
			{argv("SDIFF", "none", "a"), "*0\r\n"},
			{argv("SUNIONSTORE", "d", "a", "b"), replyInt(4)},
			{argv("OBJECT", "ENCODING", "d"), replyBulk("intset")},
			{argv("SDIFFSTORE", "d", "b", "a"), replyInt(1)},
			{argv("SMEMBERS", "d"), replyBulks("4")},
			{argv("SDIFFSTORE", "d", "a", "a"), replyInt(0)},
			{argv("EXISTS", "d"), replyInt(0)},
		}},
		{"sscan", []step{
			{argv("SSCAN", "none", "0", "COUNT", "0"), "*2\r\n$1\r\n0\r\n*0\r\n"},
			{argv("SSCAN", "none", "x"), replyErr(engine.ErrInvalidCursor)},
			{argv("SADD", "s", "2", "10", "1"), replyInt(3)},
			{argv("SSCAN", "s", "99", "COUNT", "1"), "*2\r\n$1\r\n0\r\n" + replyBulks("1", "2", "10")},
			{argv("SSCAN", "s", "0", "MATCH", "1*"), "*2\r\n$1\r\n0\r\n" + replyBulks("1", "10")},
			{argv("SSCAN", "s", "0", "COUNT", "0"), replyErr(engine.ErrSyntax)},
			{argv("SSCAN", "s", "0", "COUNT", "x"), replyErr(engine.ErrNotInteger)},
			{argv("SSCAN", "s", "0", "TYPE", "set"), replyErr(engine.ErrSyntax)},
			{argv("SSCAN", "s", "0", "MATCH"), replyErr(engine.ErrSyntax)},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { runSteps(t, tc.steps) })
	}
}

func TestSetWrongType(t *testing.T) {
	e := newTestEnv(t)
	e.run("SET", "str", "x")
	e.run("SADD", "s", "a")
	for _, args := range [][]string{
		{"SADD", "str", "a"}, {"SREM", "str", "a"}, {"SISMEMBER", "str", "a"},
		{"SMISMEMBER", "str", "a"}, {"SCARD", "str"}, {"SPOP", "str"}, {"SPOP", "str", "1"},
		{"SRANDMEMBER", "str"}, {"SRANDMEMBER", "str", "1"}, {"SMEMBERS", "str"},
		{"SINTER", "none", "str"}, {"SINTERCARD", "2", "none", "str"},
		{"SINTERSTORE", "d", "none", "str"}, {"SUNION", "s", "str"},
		{"SUNIONSTORE", "d", "str"}, {"SDIFF", "none", "str"}, {"SDIFFSTORE", "d", "s", "str"},
		{"SSCAN", "str", "0"}, {"SMOVE", "str", "s", "a"}, {"SMOVE", "s", "str", "a"},
	} {
		assert.Equal(t, replyErr(engine.ErrWrongType), e.run(args...), "%q", args)
	}
	assert.Equal(t, replyInt(0), e.run("SMOVE", "none", "str", "a"))
	assert.Equal(t, replyBulk("x"), e.run("GET", "str"))
	assert.Equal(t, replyBulks("a"), e.run("SMEMBERS", "s"))
}

func TestSetDirty(t *testing.T) {
	e := newTestEnv(t)
	for _, tc := range []struct {
		cmd   []string
		dirty int
	}{
		{argv("SADD", "s", "a", "b", "a"), 2},
		{argv("SADD", "s", "a"), 0},
		{argv("SREM", "s", "a", "x"), 1},
		{argv("SMOVE", "s", "t", "b"), 2},
		{argv("SADD", "s", "b"), 1},
		{argv("SMOVE", "s", "t", "b"), 1},
		{argv("SADD", "p", "1", "2", "3", "4"), 4},
		{argv("SPOP", "p"), 1},
		{argv("SPOP", "p", "2"), 2},
		{argv("SPOP", "p", "9"), 1},
		{argv("SUNIONSTORE", "d", "t"), 1},
		{argv("SINTERSTORE", "d", "none"), 1},
		{argv("SINTERSTORE", "d", "none"), 0},
		{argv("SINTER", "t"), 0},
	} {
		e.run(tc.cmd...)
		assert.Equal(t, tc.dirty, e.dirty(), "%q", tc.cmd)
	}
}

func TestSetResp3Replies(t *testing.T) {
	e := newTestEnv(t)
	e.resp3()
	e.run("SADD", "s", "1", "2")
	assert.Equal(t, "~2\r\n$1\r\n1\r\n$1\r\n2\r\n", e.run("SMEMBERS", "s"))
	assert.Equal(t, "~0\r\n", e.run("SMEMBERS", "none"))
	assert.Equal(t, "~0\r\n", e.run("SPOP", "none", "1"))
	assert.Equal(t, "_\r\n", e.run("SPOP", "none"))
	assert.Equal(t, "*0\r\n", e.run("SRANDMEMBER", "none", "1"))
	assert.Equal(t, "*2\r\n$1\r\n1\r\n$1\r\n2\r\n", e.run("SRANDMEMBER", "s", "5"))
	assert.Equal(t, "~2\r\n$1\r\n1\r\n$1\r\n2\r\n", e.run("SUNION", "s", "none"))
	assert.Equal(t, "~2\r\n$1\r\n1\r\n$1\r\n2\r\n", e.run("SPOP", "s", "2"))
}

// The random commands on a hashtable set: sizes, distinctness,
// membership, and SPOP's two strategies.
func TestSetRandomCommands(t *testing.T) {
	e := newTestEnv(t)
	args := []string{"SADD", "s"}
	for i := 0; i < 200; i++ {
		args = append(args, "m"+strconv.Itoa(i))
	}
	e.run(args...)
	for _, n := range []int{1, 2, 50, 150, 199, 200, 500} {
		got := decodeBulks(t, e.run("SRANDMEMBER", "s", strconv.Itoa(n)))
		assert.Len(t, got, min(n, 200))
		seen := map[string]bool{}
		for _, m := range got {
			assert.False(t, seen[m], "SRANDMEMBER %d: %q twice", n, m)
			seen[m] = true
			assert.Equal(t, replyInt(1), e.run("SISMEMBER", "s", m))
		}
	}
	got := decodeBulks(t, e.run("SRANDMEMBER", "s", "-1000"))
	assert.Len(t, got, 1000)
	// SPOP: few (draws), then many (rebuild of the survivors).
	popped := map[string]bool{}
	for _, n := range []string{"10", "170"} {
		for _, m := range decodeBulks(t, e.run("SPOP", "s", n)) {
			assert.False(t, popped[m])
			popped[m] = true
			assert.Equal(t, replyInt(0), e.run("SISMEMBER", "s", m))
		}
	}
	assert.Len(t, popped, 180)
	assert.Equal(t, replyInt(20), e.run("SCARD", "s"))
	rest := sortedBulks(t, e.run("SMEMBERS", "s"))
	for _, m := range rest {
		assert.False(t, popped[m])
	}
	assert.Len(t, rest, 20)
}

// A set shared with a live snapshot is copied before a change: the
// snapshot keeps seeing the old members.
func TestSetSnapshotIsolation(t *testing.T) {
	e := newTestEnv(t)
	e.run("SADD", "s", "a", "b")
	e.KS.Lock()
	snap := e.KS.Snapshot()
	e.KS.Unlock()
	defer snap.Release()
	e.run("SADD", "s", "c")
	e.run("SREM", "s", "a")
	e.run("SPOP", "s")
	var members []string
	snap.ForEach(e.Client.DB, func(key string, en *keyspace.Entry) bool {
		if key == "s" {
			en.Obj().(*keyspace.Set).Each(func(m keyspace.Member) bool {
				members = append(members, m.String())
				return true
			})
		}
		return true
	})
	sort.Strings(members)
	assert.Equal(t, []string{"a", "b"}, members)
}

func TestSintercardKeys(t *testing.T) {
	b := func(s ...string) [][]byte {
		out := make([][]byte, len(s))
		for i, x := range s {
			out[i] = []byte(x)
		}
		return out
	}
	assert.Equal(t, []int{2, 3}, sintercardKeys(b("sintercard", "2", "a", "b", "LIMIT", "1")))
	assert.Nil(t, sintercardKeys(b("sintercard", "0", "a")))
	assert.Nil(t, sintercardKeys(b("sintercard", "3", "a")))
	assert.Nil(t, sintercardKeys(b("sintercard", "x", "a")))
}

// SSCAN over a hashtable: a full scan returns every member once.
func TestSscanHashtable(t *testing.T) {
	e := newTestEnv(t)
	args := []string{"SADD", "s"}
	for i := 0; i < 3000; i++ {
		args = append(args, "m"+strconv.Itoa(i))
	}
	e.run(args...)
	seen := map[string]int{}
	for _, m := range scanWalk(t, e, []string{"SSCAN", "s"}, "COUNT", "25") {
		seen[m]++
	}
	assert.Len(t, seen, 3000)
	for m, n := range seen {
		require.Equal(t, 1, n, m)
	}
}
