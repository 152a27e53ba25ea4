package commands

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/internal/testsupport"
	"github.com/zredis/zredis/keyspace"
)

// propRecorder is a Propagator that keeps what it is handed, as given:
// the lines are formatted only when read, so that a command propagated
// with arguments that alias a buffer reused later shows up corrupted.
type propRecorder struct {
	ops []recordedOp
}

type recordedOp struct {
	db   int
	argv [][]byte
}

func (r *propRecorder) Propagate(db int, argv [][]byte) {
	r.ops = append(r.ops, recordedOp{db, argv})
}

// take returns what was propagated since the last call, one "db:argv"
// line per command.
func (r *propRecorder) take() []string {
	out := []string{}
	for _, op := range r.ops {
		out = append(out, strconv.Itoa(op.db)+":"+joinArgv(op.argv))
	}
	r.ops = nil
	return out
}

func joinArgv(argv [][]byte) string {
	s := make([]string, len(argv))
	for i, a := range argv {
		s[i] = string(a)
	}
	return strings.Join(s, " ")
}

// newPropEnv is a test environment whose dispatcher propagates to a
// recorder; the propagator is removed when the test ends.
func newPropEnv(t *testing.T) (*testEnv, *propRecorder) {
	t.Helper()
	e := newTestEnv(t)
	r := &propRecorder{}
	e.KS.Lock()
	e.D.Attach(r)
	e.KS.Unlock()
	t.Cleanup(func() {
		e.KS.Lock()
		e.D.Detach(r)
		e.KS.Unlock()
	})
	return e, r
}

// at is the test clock's start plus ms, as a propagated deadline.
func at(ms int64) string { return strconv.FormatInt(testEpochMs+ms, 10) }

// runScript runs commands; "@advance ms" moves the clock instead.
func (e *testEnv) runScript(cmds [][]string) {
	e.t.Helper()
	for _, c := range cmds {
		if c[0] == "@advance" {
			ms, _ := strconv.Atoi(c[1])
			e.advance(time.Duration(ms) * time.Millisecond)
			continue
		}
		e.run(c...)
	}
}

func TestPropagateRewrites(t *testing.T) {
	cases := []struct {
		name  string
		cfg   []string   // CONFIG SET pairs applied first
		setup [][]string // run before recording
		run   [][]string
		want  []string
	}{
		// ---- strings
		{name: "set as is",
			run:  [][]string{{"set", "k", "v"}, {"set", "k", "v", "keepttl"}, {"set", "k", "v", "xx"}},
			want: []string{"0:set k v", "0:set k v keepttl", "0:set k v xx"}},
		{name: "set ex becomes pxat",
			run:  [][]string{{"set", "k", "v", "ex", "100"}},
			want: []string{"0:SET k v PXAT " + at(100000)}},
		{name: "set options dropped with an expire",
			run:  [][]string{{"set", "k", "v", "nx", "get", "px", "5000"}},
			want: []string{"0:SET k v PXAT " + at(5000)}},
		{name: "set pxat rewritten too",
			run:  [][]string{{"set", "k", "v", "PXAT", "99999999999999", "xx"}, {"set", "k", "v", "pxat", "99999999999999"}},
			want: []string{"0:SET k v PXAT 99999999999999"}},
		{name: "set exat, past",
			run:  [][]string{{"set", "k", "v", "exat", "1"}},
			want: []string{"0:SET k v PXAT 1000"}},
		{name: "set get dropped",
			setup: [][]string{{"set", "k", "old"}},
			run:   [][]string{{"set", "k", "v", "keepttl", "GET", "get"}, {"set", "k", "get", "get"}},
			want:  []string{"0:set k v keepttl", "0:set k get"}},
		{name: "set nx refused",
			setup: [][]string{{"set", "k", "v"}},
			run:   [][]string{{"set", "k", "w", "nx", "ex", "10"}, {"set", "x", "w", "xx", "get"}},
			want:  []string{}},
		{name: "setnx",
			run:  [][]string{{"setnx", "k", "v"}, {"setnx", "k", "w"}},
			want: []string{"0:setnx k v"}},
		{name: "setex psetex",
			run:  [][]string{{"setex", "k", "10", "v"}, {"psetex", "k", "500", "w"}, {"setex", "k", "0", "v"}},
			want: []string{"0:SET k v PXAT " + at(10000), "0:SET k w PXAT " + at(500)}},
		{name: "getset",
			setup: [][]string{{"set", "k", "v", "ex", "10"}},
			run:   [][]string{{"getset", "k", "w"}, {"getset", "n", "x"}},
			want:  []string{"0:SET k w", "0:SET n x"}},
		{name: "getdel",
			setup: [][]string{{"set", "k", "v"}},
			run:   [][]string{{"getdel", "k"}, {"getdel", "k"}},
			want:  []string{"0:DEL k"}},
		{name: "getdel lazyfree-lazy-user-del", cfg: []string{"lazyfree-lazy-user-del", "yes"},
			setup: [][]string{{"set", "k", "v"}},
			run:   [][]string{{"getdel", "k"}},
			want:  []string{"0:UNLINK k"}},
		{name: "getex",
			setup: [][]string{{"set", "k", "v"}},
			run: [][]string{{"getex", "k"}, {"getex", "k", "ex", "10"}, {"getex", "k", "persist"},
				{"getex", "k", "persist"}, {"getex", "k", "pxat", "99999999999999"}, {"getex", "k", "px", "20"},
				{"getex", "k", "exat", "1"}, {"getex", "k", "ex", "10"}},
			want: []string{"0:PEXPIREAT k " + at(10000), "0:PERSIST k", "0:PEXPIREAT k 99999999999999",
				"0:PEXPIREAT k " + at(20), "0:DEL k"}},
		{name: "getex past lazyfree-lazy-expire", cfg: []string{"lazyfree-lazy-expire", "yes"},
			setup: [][]string{{"set", "k", "v"}},
			run:   [][]string{{"getex", "k", "pxat", "1"}},
			want:  []string{"0:UNLINK k"}},
		{name: "incrbyfloat",
			run:  [][]string{{"incrbyfloat", "f", "1.5"}, {"incrbyfloat", "f", "1e3"}, {"incrbyfloat", "f", "x"}},
			want: []string{"0:SET f 1.5 KEEPTTL", "0:SET f 1001.5 KEEPTTL"}},
		{name: "other string writes as is",
			setup: [][]string{{"set", "s", "abc"}},
			run: [][]string{{"incr", "n"}, {"incrby", "n", "5"}, {"decr", "n"}, {"append", "s", "d"},
				{"mset", "a", "1", "b", "2"}, {"msetnx", "a", "1", "c", "3"}, {"msetnx", "c", "3"},
				{"setrange", "s", "1", ""}, {"setrange", "s", "1", "X"}, {"get", "s"}},
			want: []string{"0:incr n", "0:incrby n 5", "0:decr n", "0:append s d", "0:mset a 1 b 2",
				"0:msetnx c 3", "0:setrange s 1 X"}},

		// ---- keys
		{name: "expire family becomes pexpireat",
			setup: [][]string{{"set", "k", "v"}},
			run: [][]string{{"expire", "k", "100"}, {"expire", "k", "100", "nx"}, {"expire", "k", "200", "gt"},
				{"pexpire", "k", "300000", "XX"}, {"expireat", "k", "2000000000"},
				{"pexpireat", "k", "2000000000001", "gt"}, {"persist", "k"}, {"persist", "k"},
				{"expire", "none", "10"}},
			want: []string{"0:PEXPIREAT k " + at(100000), "0:PEXPIREAT k " + at(200000) + " gt",
				"0:PEXPIREAT k " + at(300000) + " XX", "0:PEXPIREAT k 2000000000000",
				"0:pexpireat k 2000000000001 gt", "0:persist k"}},
		{name: "expire in the past deletes",
			setup: [][]string{{"set", "a", "1"}, {"set", "b", "1"}, {"set", "c", "1"}},
			run:   [][]string{{"expire", "a", "-1"}, {"pexpireat", "b", "1"}, {"expireat", "c", "0"}},
			want:  []string{"0:DEL a", "0:DEL b", "0:DEL c"}},
		{name: "expire in the past lazyfree-lazy-expire", cfg: []string{"lazyfree-lazy-expire", "yes"},
			setup: [][]string{{"set", "a", "1"}},
			run:   [][]string{{"pexpire", "a", "0"}},
			want:  []string{"0:UNLINK a"}},
		{name: "generic writes as is, in their database",
			setup: [][]string{{"set", "a", "1"}},
			run: [][]string{{"del", "a", "none"}, {"del", "none"}, {"set", "m", "1"}, {"move", "m", "2"},
				{"select", "2"}, {"copy", "m", "m2", "db", "5"}, {"rename", "m", "m3"}, {"renamenx", "m3", "m4"},
				{"unlink", "m4"}, {"unlink", "m4"}, {"swapdb", "0", "1"}, {"flushdb"}, {"flushall"}},
			want: []string{"0:del a none", "0:set m 1", "0:move m 2", "2:copy m m2 db 5", "2:rename m m3",
				"2:renamenx m3 m4", "2:unlink m4", "2:swapdb 0 1", "2:flushdb", "2:flushall"}},

		// ---- hashes
		{name: "hincrbyfloat becomes hset",
			run: [][]string{{"hincrbyfloat", "h", "x", "2.5"}, {"hincrbyfloat", "h", "x", "0.1"},
				{"hset", "h", "a", "1"}, {"hsetnx", "h", "a", "2"}, {"hdel", "h", "zz"}, {"hincrby", "h", "a", "2"}},
			want: []string{"0:HSET h x 2.5", "0:HSET h x 2.6", "0:hset h a 1", "0:hincrby h a 2"}},

		// ---- sets
		{name: "spop becomes srem",
			setup: [][]string{{"sadd", "s", "a"}, {"sadd", "i", "7"}},
			run:   [][]string{{"spop", "s"}, {"spop", "s"}, {"spop", "i"}, {"spop", "none", "3"}},
			want:  []string{"0:SREM s a", "0:SREM i 7"}},
		{name: "spop of the whole set becomes del",
			setup: [][]string{{"sadd", "s", "a", "b", "c"}},
			run:   [][]string{{"spop", "s", "0"}, {"spop", "s", "3"}, {"srandmember", "s"}},
			want:  []string{"0:DEL s"}},
		{name: "spop whole set is del whatever lazyfree says", cfg: []string{"lazyfree-lazy-server-del", "yes"},
			setup: [][]string{{"sadd", "s", "a", "b"}},
			run:   [][]string{{"spop", "s", "5"}},
			want:  []string{"0:DEL s"}},

		// ---- lists
		{name: "lmpop becomes pop with count",
			setup: [][]string{{"rpush", "l", "a", "b", "c", "d", "e"}},
			run: [][]string{{"lmpop", "1", "l", "left"}, {"lmpop", "2", "x", "l", "RIGHT", "count", "2"},
				{"lpop", "l", "0"}, {"lmpop", "1", "l", "left", "count", "100"}, {"lmpop", "1", "l", "left"}},
			want: []string{"0:LPOP l 1", "0:RPOP l 2", "0:LPOP l 2"}},
		{name: "blocking commands served at once",
			setup: [][]string{{"rpush", "l", "a", "b", "c", "d", "e", "f"}},
			run: [][]string{{"blpop", "l", "0"}, {"brpop", "x", "l", "0"}, {"blmove", "l", "d", "LEFT", "right", "0"},
				{"brpoplpush", "l", "d", "0"}, {"blmpop", "0", "1", "l", "right", "count", "5"}},
			want: []string{"0:LPOP l", "0:RPOP l", "0:LMOVE l d LEFT right", "0:RPOPLPUSH l d", "0:RPOP l 2"}},
		{name: "other list writes as is",
			setup: [][]string{{"rpush", "l", "a", "b"}},
			run: [][]string{{"lpushx", "none", "a"}, {"lpop", "l", "1"}, {"linsert", "l", "before", "zz", "x"},
				{"lrem", "l", "0", "zz"}, {"lmove", "l", "m", "left", "left"}, {"rpop", "none"}},
			want: []string{"0:lpop l 1", "0:lmove l m left left"}},
		{name: "blocking commands inside a transaction",
			run:  [][]string{{"multi"}, {"blpop", "l", "0"}, {"bzpopmin", "z", "0"}, {"exec"}},
			want: []string{}},

		// ---- sorted sets
		{name: "zset pops",
			setup: [][]string{{"zadd", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"}},
			run: [][]string{{"zmpop", "1", "z", "min"}, {"bzpopmax", "z", "0"}, {"zpopmin", "z", "0"},
				{"bzmpop", "0", "1", "z", "max", "count", "10"}, {"zpopmin", "z"}, {"zmpop", "1", "z", "min"}},
			want: []string{"0:ZPOPMIN z 1", "0:ZPOPMAX z", "0:ZPOPMAX z 3"}},

		// ---- transactions
		{name: "transaction of one write",
			run:  [][]string{{"multi"}, {"set", "a", "1"}, {"get", "a"}, {"exec"}},
			want: []string{"0:set a 1"}},
		{name: "transaction of several writes",
			run:  [][]string{{"multi"}, {"set", "a", "1"}, {"incr", "a"}, {"spop", "none"}, {"exec"}},
			want: []string{"0:MULTI", "0:set a 1", "0:incr a", "0:EXEC"}},
		{name: "transaction across databases",
			run: [][]string{{"multi"}, {"select", "3"}, {"set", "x", "1"}, {"select", "0"}, {"set", "y", "2"},
				{"exec"}},
			want: []string{"3:MULTI", "3:set x 1", "0:set y 2", "0:EXEC"}},
		{name: "transactions that write nothing",
			setup: [][]string{{"set", "w", "1"}},
			run: [][]string{{"multi"}, {"get", "a"}, {"exec"}, {"multi"}, {"set", "a", "1"}, {"discard"},
				{"multi"}, {"set", "a"}, {"set", "a", "1"}, {"exec"}},
			want: []string{}},
		{name: "values are copied when handed over",
			run:  [][]string{{"multi"}, {"incrbyfloat", "f", "1"}, {"setrange", "f", "0", "9"}, {"exec"}},
			want: []string{"0:MULTI", "0:SET f 1 KEEPTTL", "0:setrange f 0 9", "0:EXEC"}},

		// ---- expired keys
		{name: "lazy expiry by a read",
			setup: [][]string{{"set", "k", "v", "px", "100"}, {"@advance", "200"}},
			run:   [][]string{{"get", "k"}, {"get", "k"}},
			want:  []string{"0:DEL k"}},
		{name: "lazy expiry before the command that met it",
			setup: [][]string{{"set", "k", "v", "px", "100"}, {"@advance", "200"}},
			run:   [][]string{{"set", "k", "w"}},
			want:  []string{"0:MULTI", "0:DEL k", "0:set k w", "0:EXEC"}},
		{name: "lazy expiry inside a transaction",
			setup: [][]string{{"select", "4"}, {"set", "k", "v", "px", "100"}, {"@advance", "200"}},
			run:   [][]string{{"multi"}, {"exists", "k"}, {"set", "j", "1"}, {"exec"}},
			want:  []string{"4:MULTI", "4:DEL k", "4:set j 1", "4:EXEC"}},
		{name: "lazy expiry of a key the command then fails on",
			setup: [][]string{{"set", "k", "v", "px", "100"}, {"@advance", "200"}},
			run:   [][]string{{"rename", "k", "j"}},
			want:  []string{"0:DEL k"}},
		{name: "lazy expiry by SCAN is not wrapped",
			setup: [][]string{{"set", "a", "v", "px", "100"}, {"set", "b", "v", "px", "100"}, {"@advance", "200"}},
			run:   [][]string{{"scan", "0", "match", "a"}, {"scan", "0", "match", "b"}, {"scan", "0"}},
			want:  []string{"0:DEL a", "0:DEL b"}},
		{name: "lazy expiry by RANDOMKEY is not wrapped",
			setup: [][]string{{"set", "a", "v", "px", "100"}, {"@advance", "200"}},
			run:   [][]string{{"randomkey"}},
			want:  []string{"0:DEL a"}},
		{name: "lazy expiry by SCAN inside a transaction is wrapped",
			setup: [][]string{{"set", "a", "v", "px", "100"}, {"@advance", "200"}},
			run:   [][]string{{"multi"}, {"scan", "0"}, {"set", "c", "1"}, {"exec"}},
			want:  []string{"0:MULTI", "0:DEL a", "0:set c 1", "0:EXEC"}},
		{name: "lazy expiry lazyfree-lazy-expire", cfg: []string{"lazyfree-lazy-expire", "yes"},
			setup: [][]string{{"set", "k", "v", "px", "100"}, {"@advance", "200"}},
			run:   [][]string{{"del", "k"}},
			want:  []string{"0:UNLINK k"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, r := newPropEnv(t)
			for i := 0; i+1 < len(tc.cfg); i += 2 {
				require.NoError(t, e.Srv.cfg.Set([]string{tc.cfg[i], tc.cfg[i+1]}))
			}
			e.runScript(tc.setup)
			r.take()
			e.runScript(tc.run)
			require.Equal(t, tc.want, r.take())
		})
	}
}

// SPOP with a count propagates one SREM per member popped, in the order
// of the reply, as one unit (MULTI ... EXEC): both ways of popping.
func TestPropagateSpopCount(t *testing.T) {
	for _, tc := range []struct {
		name  string
		size  int
		count int
	}{
		{"draw members", 10, 3},        // remaining*5 > count: members drawn one by one
		{"keep the remainder", 20, 19}, // the few members left are moved to a new set
	} {
		for _, ints := range []bool{true, false} {
			enc := " hashtable"
			if ints {
				enc = " intset"
			}
			t.Run(tc.name+enc, func(t *testing.T) {
				e, r := newPropEnv(t)
				args := []string{"sadd", "s"}
				for i := 0; i < tc.size; i++ {
					m := strconv.Itoa(i)
					if !ints {
						m = "m" + m
					}
					args = append(args, m)
				}
				e.run(args...)
				r.take()
				reply := e.run("spop", "s", strconv.Itoa(tc.count))
				v, err := tblRead(bufio.NewReader(strings.NewReader(reply)))
				require.NoError(t, err)
				members := v.([]any)
				require.Len(t, members, tc.count)
				want := []string{"0:MULTI"}
				for _, m := range members {
					want = append(want, "0:SREM s "+m.(string))
				}
				want = append(want, "0:EXEC")
				require.Equal(t, want, r.take())
			})
		}
	}
}

// A blocked client served later propagates the non-blocking form, after
// the command that served it and as a unit of its own, in the database
// it blocked in.
func TestPropagateServedLater(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup [][]string
		block []string
		push  [][]string
		want  []string
	}{
		{name: "blpop", block: []string{"BLPOP", "l", "0"}, push: [][]string{{"rpush", "l", "x", "y"}},
			want: []string{"0:rpush l x y", "0:LPOP l"}},
		{name: "brpop", block: []string{"BRPOP", "l", "0"}, push: [][]string{{"rpush", "l", "x", "y"}},
			want: []string{"0:rpush l x y", "0:RPOP l"}},
		{name: "blmove", block: []string{"BLMOVE", "l", "d", "LEFT", "Right", "0"}, push: [][]string{{"rpush", "l", "x"}},
			want: []string{"0:rpush l x", "0:LMOVE l d left right"}},
		{name: "brpoplpush", block: []string{"BRPOPLPUSH", "l", "d", "0"}, push: [][]string{{"rpush", "l", "x"}},
			want: []string{"0:rpush l x", "0:RPOPLPUSH l d"}},
		{name: "blmpop", block: []string{"BLMPOP", "0", "2", "a", "l", "RIGHT", "COUNT", "3"}, push: [][]string{{"rpush", "l", "x", "y"}},
			want: []string{"0:rpush l x y", "0:RPOP l 2"}},
		{name: "blmpop default count", block: []string{"BLMPOP", "0", "1", "l", "left"}, push: [][]string{{"rpush", "l", "x", "y"}},
			want: []string{"0:rpush l x y", "0:LPOP l 1"}},
		{name: "bzpopmin", block: []string{"BZPOPMIN", "z", "0"}, push: [][]string{{"zadd", "z", "1", "a", "2", "b"}},
			want: []string{"0:zadd z 1 a 2 b", "0:ZPOPMIN z"}},
		{name: "bzmpop", block: []string{"BZMPOP", "0", "1", "z", "MAX", "COUNT", "5"}, push: [][]string{{"zadd", "z", "1", "a", "2", "b"}},
			want: []string{"0:zadd z 1 a 2 b", "0:ZPOPMAX z 2"}},
		{name: "served after a transaction",
			block: []string{"BLPOP", "l", "0"},
			push:  [][]string{{"multi"}, {"rpush", "l", "x"}, {"set", "a", "1"}, {"exec"}},
			want:  []string{"0:MULTI", "0:rpush l x", "0:set a 1", "0:EXEC", "0:LPOP l"}},
		{name: "destination expired when served",
			setup: [][]string{{"rpush", "d", "old"}, {"pexpire", "d", "100"}, {"@advance", "200"}},
			block: []string{"BLMOVE", "l", "d", "RIGHT", "LEFT", "0"},
			push:  [][]string{{"rpush", "l", "x"}},
			want:  []string{"0:rpush l x", "0:MULTI", "0:DEL d", "0:LMOVE l d right left", "0:EXEC"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, r := newPropEnv(t)
			e.runScript(tc.setup)
			r.take()
			cl := newBlockClient(e, 2)
			reply := blockOn(t, e, cl, tc.block...)
			e.runScript(tc.push)
			recv(t, reply)
			require.Equal(t, tc.want, r.take())
		})
	}

	t.Run("in the database it blocked in", func(t *testing.T) {
		e, r := newPropEnv(t)
		cl := newBlockClient(e, 2)
		cl.DB = 6
		reply := blockOn(t, e, cl, "BLPOP", "l", "0")
		e.run("select", "6")
		e.run("lpush", "l", "x")
		recv(t, reply)
		require.Equal(t, []string{"6:lpush l x", "6:LPOP l"}, r.take())
	})
}

// The expiry engine's deletions, outside any command, are handed over at
// once, one DEL each, in their databases.
func TestPropagateActiveExpiry(t *testing.T) {
	e, r := newPropEnv(t)
	e.runScript([][]string{{"set", "a", "1", "px", "100"}, {"select", "2"}, {"set", "b", "1", "px", "50"}})
	r.take()
	e.advance(time.Second)
	e.KS.Lock()
	require.Equal(t, 2, e.KS.ExpireDue(10))
	require.Equal(t, []string{"0:DEL a", "2:DEL b"}, r.take())
	e.KS.Unlock()
}

// Without a propagator nothing is recorded and nothing breaks; a
// propagator removed stops receiving.
func TestPropagatorOff(t *testing.T) {
	e, r := newPropEnv(t)
	e.run("set", "a", "1")
	require.Equal(t, []string{"0:set a 1"}, r.take())
	e.KS.Lock()
	e.D.Detach(r)
	e.KS.Unlock()
	e.runScript([][]string{{"set", "k", "v", "ex", "10", "get"}, {"spop", "none"}, {"sadd", "s", "a", "b"},
		{"spop", "s", "1"}, {"set", "x", "1", "px", "10"}, {"@advance", "20"}, {"get", "x"}})
	require.Empty(t, r.take())
	require.False(t, e.Client.Ctx().Propagating())

	e.KS.Lock()
	e.D.Attach(r)
	e.KS.Unlock()
	e.run("getset", "a", "2")
	require.Equal(t, []string{"0:SET a 2"}, r.take())
}

// Any number of consumers get the same stream, each from the moment it is
// attached until it is detached; the stream stops with the last one.
func TestPropagateToSeveralConsumers(t *testing.T) {
	e, first := newPropEnv(t)
	second := &propRecorder{}
	e.run("set", "a", "1")
	e.KS.Lock()
	e.D.Attach(second)
	e.D.Attach(second) // twice: still one consumer
	e.KS.Unlock()
	e.runScript([][]string{{"multi"}, {"set", "b", "2"}, {"select", "3"}, {"incr", "c"}, {"exec"},
		{"set", "x", "1", "px", "10"}, {"@advance", "20"}, {"get", "x"}})
	want := []string{"0:MULTI", "0:set b 2", "3:incr c", "3:EXEC", "3:SET x 1 PXAT " + at(10), "3:DEL x"}
	require.Equal(t, append([]string{"0:set a 1"}, want...), first.take())
	require.Equal(t, want, second.take())

	e.KS.Lock()
	e.D.Detach(first)
	e.KS.Unlock()
	e.run("set", "y", "1")
	require.Empty(t, first.take())
	require.Equal(t, []string{"3:set y 1"}, second.take())
	require.True(t, e.Client.Ctx().Propagating())

	e.KS.Lock()
	e.D.Detach(second)
	e.KS.Unlock()
	e.run("set", "z", "1")
	require.Empty(t, second.take())
	require.False(t, e.Client.Ctx().Propagating())
}

// ---- differential: what redis-server 7.0 writes to its AOF ----------------

// propDiffScript is run on a redis-server 7.0 writing its AOF with
// appendfsync always and on a dispatcher propagating to a recorder; after
// every step, the commands the step added to the AOF must be those the
// dispatcher propagated (with SELECT where the database changes, as
// Redis's AOF has them). Deadlines may differ by the few milliseconds
// between the two executions; SREM members after a SPOP with a count are
// random. Pseudo-steps: "@block cmd..." sends a blocking command from a
// second client, "@served" reads its reply once a later step served it,
// "@random cmd..." runs a command whose reply is random, "@sleep ms"
// waits (for a key to expire on both sides: active expiry is off in
// redis-server, and zredis's clock is the wall clock at every step).
var propDiffScript = [][]string{
	// strings
	{"set", "k", "v"}, {"set", "k", "v", "ex", "100"}, {"set", "k", "v", "nx", "get", "px", "5000"},
	{"set", "k2", "v", "nx", "get", "px", "500000"}, {"set", "k", "v", "PXAT", "99999999999999", "xx"},
	{"set", "k", "v", "keepttl", "GET", "get"}, {"set", "k", "get", "get"}, {"set", "k", "v", "exat", "2000000000"},
	{"set", "x", "v", "xx", "get"}, {"setnx", "k", "v"}, {"setnx", "n1", "v"},
	{"setex", "k", "1000", "v"}, {"psetex", "k", "500000", "w"}, {"setex", "k", "0", "v"},
	{"getset", "k", "w"}, {"getset", "gs", "x"}, {"getdel", "k"}, {"getdel", "k"},
	{"set", "k", "v"}, {"getex", "k"}, {"getex", "k", "ex", "1000"}, {"getex", "k", "persist"},
	{"getex", "k", "persist"}, {"getex", "k", "pxat", "99999999999999"}, {"getex", "k", "px", "20000"},
	{"getex", "k", "exat", "1"}, {"getex", "k", "ex", "10"},
	{"incrbyfloat", "f", "1.5"}, {"incrbyfloat", "f", "1e3"}, {"incrbyfloat", "f", "x"},
	{"incr", "n"}, {"incrby", "n", "5"}, {"decr", "n"}, {"decrby", "n", "2"},
	{"append", "s", "abc"}, {"append", "s", "d"}, {"mset", "a", "1", "b", "2"},
	{"msetnx", "a", "1", "c", "3"}, {"msetnx", "c", "3"},
	{"setrange", "s", "1", ""}, {"setrange", "s", "1", "X"}, {"setrange", "s", "10", "Y"},

	// generic
	{"set", "e", "v"}, {"expire", "e", "100"}, {"expire", "e", "100", "nx"}, {"expire", "e", "200", "gt"},
	{"pexpire", "e", "300000", "XX"}, {"expireat", "e", "2000000000"}, {"pexpireat", "e", "2000000000001", "gt"},
	{"persist", "e"}, {"persist", "e"}, {"expire", "none", "10"},
	{"set", "a", "1"}, {"expire", "a", "-1"}, {"set", "b", "1"}, {"pexpireat", "b", "1"},
	{"set", "c", "1"}, {"expireat", "c", "0"},
	{"del", "s", "none"}, {"del", "none"}, {"set", "m", "1"}, {"move", "m", "2"}, {"select", "2"},
	{"copy", "m", "m2", "db", "5"}, {"copy", "m", "m2"}, {"copy", "m", "m2"}, {"copy", "m", "m2", "replace"},
	{"rename", "m", "m3"}, {"renamenx", "m3", "m4"}, {"renamenx", "m2", "m4"}, {"unlink", "m4"},
	{"unlink", "m4"}, {"select", "0"}, {"swapdb", "0", "1"}, {"swapdb", "0", "1"}, {"publish", "ch", "hi"},

	// hashes
	{"hset", "h", "a", "1", "b", "2"}, {"hmset", "h", "c", "3"}, {"hsetnx", "h", "a", "2"},
	{"hsetnx", "h", "z", "2"}, {"hdel", "h", "zz"}, {"hdel", "h", "z"}, {"hincrby", "h", "a", "2"},
	{"hincrbyfloat", "h", "x", "2.5"}, {"hincrbyfloat", "h", "x", "0.1"},

	// sets
	{"sadd", "s1", "a"}, {"sadd", "s1", "a"}, {"spop", "s1"}, {"sadd", "s1", "7"}, {"spop", "s1"},
	{"sadd", "s2", "a", "b", "c"}, {"spop", "s2", "0"}, {"@random", "spop", "s2", "3"}, {"spop", "none", "3"},
	{"sadd", "s2", "a"}, {"srandmember", "s2"},
	{"sadd", "s3", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"},
	{"@random", "spop", "s3", "3"}, {"@random", "spop", "s3", "2"}, {"@random", "spop", "s3"},
	{"sadd", "s4", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r", "s", "t"},
	{"@random", "spop", "s4", "18"},
	{"sadd", "x1", "a", "b", "c"}, {"sadd", "x2", "b", "c", "d"}, {"srem", "x1", "zz"}, {"srem", "x1", "a"},
	{"smove", "x1", "x2", "b"}, {"smove", "x1", "x2", "zz"}, {"sinterstore", "x3", "x1", "x2"},
	{"sunionstore", "x3", "x1", "x2"}, {"sdiffstore", "x3", "x2", "x1"},

	// lists
	{"rpush", "l", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}, {"lpushx", "none", "a"},
	{"rpushx", "l", "k"}, {"lpop", "l"}, {"rpop", "l", "2"}, {"lpop", "l", "0"}, {"lmpop", "1", "l", "left"},
	{"lmpop", "2", "none", "l", "RIGHT", "count", "2"}, {"lset", "l", "0", "Z"},
	{"linsert", "l", "before", "zz", "x"}, {"linsert", "l", "before", "Z", "y"}, {"lrem", "l", "0", "zz"},
	{"lrem", "l", "1", "Z"}, {"ltrim", "l", "0", "100"}, {"ltrim", "l", "1", "-1"},
	{"lmove", "l", "l2", "left", "left"}, {"rpoplpush", "l", "l2"}, {"lmpop", "1", "l", "left", "count", "100"},
	{"lmpop", "1", "l", "left"},
	{"rpush", "l", "a", "b", "c", "d", "e", "f"}, {"blpop", "l", "0"}, {"brpop", "x", "l", "0"},
	{"blmove", "l", "d", "LEFT", "right", "0"}, {"brpoplpush", "l", "d", "0"},
	{"blmpop", "0", "1", "l", "right", "count", "5"},

	// served later
	{"@block", "blpop", "q1", "5"}, {"rpush", "q1", "x", "y"}, {"@served"},
	{"@block", "brpop", "q2", "5"}, {"rpush", "q2", "x", "y"}, {"@served"},
	{"@block", "blmove", "q3", "d3", "LEFT", "Right", "5"}, {"rpush", "q3", "x"}, {"@served"},
	{"@block", "brpoplpush", "q4", "d4", "5"}, {"rpush", "q4", "x"}, {"@served"},
	{"@block", "blmpop", "5", "2", "a", "q5", "RIGHT", "COUNT", "3"}, {"rpush", "q5", "x", "y"}, {"@served"},
	{"@block", "blmpop", "5", "1", "q6", "left"}, {"rpush", "q6", "x", "y"}, {"@served"},
	{"@block", "bzpopmin", "z1", "5"}, {"zadd", "z1", "1", "a", "2", "b"}, {"@served"},
	{"@block", "bzpopmax", "z2", "5"}, {"zadd", "z2", "1", "a", "2", "b"}, {"@served"},
	{"@block", "bzmpop", "5", "1", "z3", "MAX", "COUNT", "5"}, {"zadd", "z3", "1", "a", "2", "b"}, {"@served"},
	{"@block", "bzmpop", "5", "1", "z4", "min"}, {"zadd", "z4", "1", "a", "2", "b"}, {"@served"},
	{"@block", "blpop", "q7", "5"}, {"multi"}, {"rpush", "q7", "x"}, {"set", "ab", "1"}, {"exec"}, {"@served"},
	{"rpush", "d8", "old"}, {"pexpire", "d8", "100"}, {"@sleep", "150"},
	{"@block", "blmove", "q8", "d8", "RIGHT", "LEFT", "5"}, {"rpush", "q8", "x"}, {"@served"},

	// sorted sets
	{"zadd", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"}, {"zadd", "z", "nx", "1", "a"},
	{"zadd", "z", "xx", "ch", "9", "a"}, {"zadd", "z", "gt", "1", "b"}, {"zadd", "z", "incr", "2", "c"},
	{"zincrby", "z", "2", "a"}, {"zrem", "z", "zz"}, {"zrem", "z", "e"}, {"zrangestore", "zd", "z", "0", "-1"},
	{"zremrangebyscore", "z", "100", "200"}, {"zremrangebyrank", "z", "0", "0"},
	{"zremrangebylex", "zd", "-", "+"}, {"zpopmin", "z"}, {"zpopmax", "z", "2"}, {"zpopmin", "z", "0"},
	{"zmpop", "1", "z", "min"}, {"zadd", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"},
	{"bzpopmax", "z", "0"}, {"bzmpop", "0", "1", "z", "max", "count", "2"}, {"zmpop", "1", "z", "min", "count", "5"},
	{"zadd", "z", "1", "a", "2", "b"}, {"zadd", "zd", "3", "a", "4", "c"}, {"zunionstore", "zu", "2", "zd", "z"},
	{"zinterstore", "zi", "2", "zd", "zu"}, {"zdiffstore", "zf", "2", "zu", "zd"},

	// transactions
	{"multi"}, {"set", "t", "1"}, {"get", "t"}, {"exec"},
	{"multi"}, {"set", "t", "1"}, {"incr", "t"}, {"spop", "none"}, {"exec"},
	{"multi"}, {"select", "3"}, {"set", "x", "1"}, {"select", "0"}, {"set", "y", "2"}, {"exec"},
	{"multi"}, {"get", "t"}, {"exec"}, {"multi"}, {"set", "t", "2"}, {"discard"},
	{"multi"}, {"set", "t"}, {"set", "t", "1"}, {"exec"},
	{"watch", "t"}, {"set", "t", "3"}, {"multi"}, {"set", "t", "4"}, {"exec"},
	{"multi"}, {"incrbyfloat", "ff", "1"}, {"setrange", "ff", "0", "9"}, {"exec"},
	{"multi"}, {"blpop", "l", "0"}, {"bzpopmin", "z", "0"}, {"exec"},

	// expired keys
	{"set", "lz", "v", "pxat", "1"}, {"get", "lz"}, {"get", "lz"},
	{"set", "lz", "v", "pxat", "1"}, {"set", "lz", "w"},
	{"set", "lz2", "v", "pxat", "1"}, {"multi"}, {"exists", "lz2"}, {"set", "j", "1"}, {"exec"},
	{"set", "lz3", "v", "pxat", "1"}, {"rename", "lz3", "j2"},
	{"set", "lz4", "v", "pxat", "1"}, {"del", "lz4"},
	{"set", "lz5", "v", "pxat", "1"}, {"incr", "lz5"},
	{"select", "5"}, {"set", "lz6", "v", "pxat", "1"}, {"type", "lz6"}, {"select", "0"},

	// errors and no-ops propagate nothing
	{"hset", "wt", "f", "v"}, {"set", "wt", "v", "get"}, {"getex", "wt", "ex", "10"}, {"getdel", "wt"},
	{"incrbyfloat", "wt", "1"}, {"spop", "wt"}, {"lmpop", "1", "wt", "left"}, {"zmpop", "1", "wt", "min"},
	{"expire", "wt", "10", "zz"}, {"set", "ren", "1"}, {"rename", "ren", "ren"}, {"renamenx", "ren", "ren"},
	{"hincrbyfloat", "newh", "f", "1.25"}, {"lpush", "wt", "x"}, {"sadd", "wt", "x"},

	// deletions made lazily (lazyfree-*) propagate as UNLINK
	{"config", "set", "lazyfree-lazy-expire", "yes"}, {"set", "lz7", "v", "pxat", "1"}, {"get", "lz7"},
	{"set", "u", "1"}, {"expire", "u", "-5"}, {"set", "u", "1"}, {"getex", "u", "exat", "1"},
	{"config", "set", "lazyfree-lazy-expire", "no", "lazyfree-lazy-user-del", "yes"},
	{"set", "u", "1"}, {"getdel", "u"}, {"set", "u", "1"}, {"del", "u"},
	{"config", "set", "lazyfree-lazy-user-del", "no", "lazyfree-lazy-server-del", "yes"},
	{"sadd", "u", "a", "b"}, {"@random", "spop", "u", "2"},
	{"config", "set", "lazyfree-lazy-server-del", "no"},

	// flushes
	{"select", "2"}, {"flushdb"}, {"flushdb", "async"}, {"select", "0"}, {"flushall", "sync"}, {"flushall"},
}

func TestPropagateMatchesRedis(t *testing.T) {
	rs := propStartRedis(t)
	e, rec := newPropEnv(t)
	blocker := newBlockClient(e, 2)
	zDB := -1 // the database of zredis's last propagated command
	var zBlocked <-chan string
	for i, step := range propDiffScript {
		name := fmt.Sprintf("step %d %q", i, step)
		random := false
		switch step[0] {
		case "@sleep":
			ms, _ := strconv.Atoi(step[1])
			time.Sleep(time.Duration(ms) * time.Millisecond)
			continue
		case "@block":
			rs.block(step[1:])
			e.Clock.Set(time.Now().UnixMilli())
			zBlocked = blockOn(t, e, blocker, step[1:]...)
			continue
		case "@served":
			require.Equal(t, rs.served(), recv(t, zBlocked), name)
			continue
		case "@random":
			random = true
			step = step[1:]
		}
		rReply := rs.do(step)
		e.Clock.Set(time.Now().UnixMilli())
		zReply := e.run(step...)
		if !random {
			require.Equal(t, rReply, zReply, "%s: replies differ", name)
		}
		var zProp []string
		for _, op := range rec.ops {
			if op.db != zDB {
				zProp = append(zProp, "SELECT "+strconv.Itoa(op.db))
				zDB = op.db
			}
			zProp = append(zProp, joinArgv(op.argv))
		}
		rec.ops = nil
		rProp := rs.appended()
		require.True(t, testsupport.SamePropagation(rProp, zProp), "%s:\nredis-server AOF: %q\nzredis:           %q", name, rProp, zProp)
	}
}

// propRedis is a redis-server 7.0 with an AOF written with appendfsync
// always, a client, and a second client for blocking commands.
type propRedis struct {
	t        *testing.T
	main     *propConn
	blocker  *propConn
	aof      string // the incremental AOF file
	consumed int    // bytes of it already parsed
}

type propConn struct {
	nc net.Conn
	rd *bufio.Reader
}

func (c *propConn) send(args []string) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	_, err := c.nc.Write(b.Bytes())
	return err
}

// read reads one RESP2 reply and returns its bytes.
func (c *propConn) read() (string, error) {
	c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	var b strings.Builder
	err := propReadRaw(c.rd, &b)
	return b.String(), err
}

func propReadRaw(rd *bufio.Reader, b *strings.Builder) error {
	line, err := rd.ReadString('\n')
	if err != nil {
		return err
	}
	b.WriteString(line)
	if len(line) < 3 {
		return fmt.Errorf("short reply line %q", line)
	}
	n, _ := strconv.Atoi(line[1 : len(line)-2])
	switch line[0] {
	case '$':
		if n >= 0 {
			buf := make([]byte, n+2)
			if _, err := io.ReadFull(rd, buf); err != nil {
				return err
			}
			b.Write(buf)
		}
	case '*':
		for ; n > 0; n-- {
			if err := propReadRaw(rd, b); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *propRedis) dial(addr string) *propConn {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(r.t, err)
	r.t.Cleanup(func() { nc.Close() })
	return &propConn{nc: nc, rd: bufio.NewReader(nc)}
}

// do runs a command on the main client and returns the raw reply.
func (r *propRedis) do(args []string) string {
	r.t.Helper()
	require.NoError(r.t, r.main.send(args))
	reply, err := r.main.read()
	require.NoError(r.t, err, "%q", args)
	return reply
}

// block sends a blocking command from the second client and waits until
// the server counts it blocked.
func (r *propRedis) block(args []string) {
	r.t.Helper()
	require.NoError(r.t, r.blocker.send(args))
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if strings.Contains(r.do([]string{"INFO", "clients"}), "blocked_clients:1\r\n") {
			return
		}
		require.True(r.t, time.Now().Before(deadline), "%q never blocked", args)
	}
}

// served reads the reply of the blocked client.
func (r *propRedis) served() string {
	r.t.Helper()
	reply, err := r.blocker.read()
	require.NoError(r.t, err)
	return reply
}

// appended parses the commands added to the AOF since the last call.
func (r *propRedis) appended() []string {
	r.t.Helper()
	data, err := os.ReadFile(r.aof)
	require.NoError(r.t, err)
	rd := bufio.NewReader(bytes.NewReader(data[r.consumed:]))
	out := []string{}
	for {
		v, err := tblRead(rd)
		if err == io.EOF {
			break
		}
		require.NoError(r.t, err)
		args := v.([]any)
		s := make([]string, len(args))
		for i, a := range args {
			s[i] = a.(string)
		}
		out = append(out, strings.Join(s, " "))
	}
	r.consumed = len(data)
	return out
}

// propStartRedis starts redis-server 7.0 with an AOF in a temporary
// directory, active expiry off, or ends the test as
// testsupport.RequireRedis does.
func propStartRedis(t *testing.T) *propRedis {
	t.Helper()
	p := testsupport.StartRedis(t, "--save", "", "--appendonly", "yes", "--appendfsync", "always", "--enable-debug-command", "yes")
	dir := p.Dir
	r := &propRedis{t: t}
	addr := p.Addr
	r.main, r.blocker = r.dial(addr), r.dial(addr)
	require.Equal(t, "+OK\r\n", r.do([]string{"DEBUG", "SET-ACTIVE-EXPIRE", "0"}))
	manifest, err := os.ReadFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest"))
	require.NoError(t, err)
	for _, line := range strings.Split(string(manifest), "\n") {
		if f := strings.Fields(line); len(f) == 6 && f[0] == "file" && f[5] == "i" {
			r.aof = filepath.Join(dir, "appendonlydir", f[1])
		}
	}
	require.NotEmpty(t, r.aof, "no incremental file in the manifest:\n%s", manifest)
	return r
}

// RESTORE's propagated form, as propagateRestore builds it from inside
// the command (restoreCommand calls it once the key is stored).
func TestPropagateRestoreForm(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		deadline int64
		abs      bool
		want     []string
	}{
		{"relative ttl", []string{"RESTORE", "k", "5000", "payload", "IDLETIME", "5"}, testEpochMs + 5000, false,
			[]string{"0:RESTORE k " + at(5000) + " payload IDLETIME 5 ABSTTL"}},
		{"absolute ttl", []string{"RESTORE", "k", "99999999999999", "payload", "ABSTTL"}, 99999999999999, true,
			[]string{"0:RESTORE k 99999999999999 payload ABSTTL"}},
		{"no ttl", []string{"RESTORE", "k", "0", "payload"}, 0, false, []string{"0:RESTORE k 0 payload"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A table whose RESTORE only propagates, as the real one
			// does once the payload is restored.
			real := table.Lookup([]byte("restore"))
			restore := &engine.Command{Name: real.Name, Arity: real.Arity, Flags: real.Flags, FirstKey: real.FirstKey,
				LastKey: real.LastKey, KeyStep: real.KeyStep, Run: func(c *engine.Ctx) {
					propagateRestore(c, tc.deadline, tc.abs)
					c.Dirty(1)
				}}
			tbl := engine.NewTable()
			tbl.Register(restore)
			e := newTestEnvWith(t, tbl)
			r := &propRecorder{}
			e.KS.Lock()
			e.D.Attach(r)
			e.KS.Unlock()
			e.run(tc.args...)
			require.Equal(t, tc.want, r.take())
		})
	}
}

func argvBytes(args []string) [][]byte {
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	return b
}

// PUBLISH and SPUBLISH go to the replication stream only, not to the
// AOF; MULTI and EXEC go to both (Redis 7.0's propagatePendingCommands),
// so a transaction of a PUBLISH and a SET reaches the AOF as MULTI, SET,
// EXEC. Without a replication stream, or on a replica, a PUBLISH
// propagates nothing and a transaction of it and one write propagates
// that write alone.
func TestPropagatePublishToReplicasOnly(t *testing.T) {
	e, aofRec := newPropEnv(t)
	repl := &propRecorder{}
	e.KS.Lock()
	e.D.AttachReplicas(repl)
	e.KS.Unlock()
	t.Cleanup(func() {
		e.KS.Lock()
		e.D.Detach(repl)
		e.KS.Unlock()
	})
	e.runScript([][]string{{"publish", "ch", "hello"}, {"select", "2"}, {"spublish", "sch", "m"},
		{"multi"}, {"publish", "ch", "a"}, {"set", "k", "v"}, {"exec"},
		{"multi"}, {"publish", "ch", "a"}, {"publish", "ch", "b"}, {"exec"}})
	require.Equal(t, []string{"0:publish ch hello", "2:spublish sch m",
		"2:MULTI", "2:publish ch a", "2:set k v", "2:EXEC",
		"2:MULTI", "2:publish ch a", "2:publish ch b", "2:EXEC"}, repl.take())
	require.Equal(t, []string{"2:MULTI", "2:set k v", "2:EXEC", "2:MULTI", "2:EXEC"}, aofRec.take())

	// On a replica (it passes on its master's stream, not what it runs).
	e.KS.Lock()
	e.KS.SetReplica(true)
	e.KS.Unlock()
	e.runScript([][]string{{"publish", "ch", "x"}})
	e.KS.Lock()
	e.KS.SetReplica(false)
	e.KS.Unlock()
	require.Empty(t, repl.take())

	// Without a replication stream.
	e.KS.Lock()
	e.D.Detach(repl)
	e.KS.Unlock()
	e.runScript([][]string{{"publish", "ch", "x"}, {"multi"}, {"publish", "ch", "a"}, {"set", "k", "w"}, {"exec"}})
	require.Equal(t, []string{"2:set k w"}, aofRec.take())
}

// ---- cost ---------------------------------------------------------------------

// propDiscard is a Propagator that drops everything.
type propDiscard struct{ n int }

func (p *propDiscard) Propagate(db int, argv [][]byte) { p.n++ }

// benchPropagated is benchKeys (dispatch_bench_test.go) with a
// propagator set.
func benchPropagated(b *testing.B, cmd func(key []byte) [][]byte) {
	e := newTestEnv(b)
	e.KS = keyspace.New(16, keyspace.SystemClock{})
	e.D.KS = e.KS
	keys := make([][]byte, 100000)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("key:%012d", i))
	}
	e.KS.Lock()
	defer e.KS.Unlock()
	p := &propDiscard{}
	e.D.Attach(p)
	defer e.D.Detach(p)
	for _, k := range keys {
		e.D.Exec(e.Client, [][]byte{[]byte("SET"), k, []byte("1")})
	}
	e.Client.W.Reset()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.D.Exec(e.Client, cmd(keys[(i*7919)%len(keys)]))
		if i%64 == 0 {
			e.Client.W.Reset()
		}
	}
}

func BenchmarkDispatchSetPropagated(b *testing.B) {
	set, v := []byte("SET"), []byte("xxx")
	benchPropagated(b, func(k []byte) [][]byte { return [][]byte{set, k, v} })
}

func BenchmarkDispatchSetexPropagated(b *testing.B) {
	setex, ttl, v := []byte("SETEX"), []byte("100"), []byte("xxx")
	benchPropagated(b, func(k []byte) [][]byte { return [][]byte{setex, k, ttl, v} })
}

func BenchmarkDispatchGetPropagated(b *testing.B) {
	get := []byte("GET")
	benchPropagated(b, func(k []byte) [][]byte { return [][]byte{get, k} })
}
