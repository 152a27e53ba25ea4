package commands

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/resp"
)

const (
	replyQueued = "+QUEUED\r\n"
)

// otherClient adds a second authenticated client to e and returns a
// function running a command as it.
func otherClient(e *testEnv) func(args ...string) string {
	cl := &engine.Client{ID: 2, Addr: "127.0.0.1:50001", W: resp.NewWriter(), Authed: true}
	e.Srv.clients = append(e.Srv.clients, cl)
	return func(args ...string) string {
		e.t.Helper()
		saved := e.Client
		e.Client = cl
		defer func() { e.Client = saved }()
		return e.run(args...)
	}
}

func TestTransactionSteps(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
	}{
		{"queue and exec", []step{
			{argv("MULTI"), replyOK},
			{argv("SET", "a", "1"), replyQueued},
			{argv("INCR", "a"), replyQueued},
			{argv("GET", "a"), replyQueued},
			{argv("EXEC"), replyArray(replyOK, replyInt(2), replyBulk("2"))},
			{argv("GET", "a"), replyBulk("2")},
		}},
		{"empty exec", []step{
			{argv("MULTI"), replyOK},
			{argv("EXEC"), "*0\r\n"},
		}},
		{"nested multi is an error, not a flag", []step{
			{argv("MULTI"), replyOK},
			{argv("MULTI"), replyErr(engine.ErrMultiNested)},
			{argv("SET", "a", "1"), replyQueued},
			{argv("EXEC"), replyArray(replyOK)},
		}},
		{"without multi", []step{
			{argv("EXEC"), replyErr(engine.ErrExecWithoutMulti)},
			{argv("DISCARD"), replyErr(engine.ErrDiscardNoMulti)},
		}},
		{"watch inside multi", []step{
			{argv("MULTI"), replyOK},
			{argv("WATCH", "x"), replyErr(engine.ErrWatchInMulti)},
			{argv("PING"), replyQueued},
			{argv("EXEC"), replyArray(replySimple("PONG"))},
		}},
		{"unknown command aborts", []step{
			{argv("MULTI"), replyOK},
			{argv("NOSUCH"), replyErr("ERR unknown command 'NOSUCH', with args beginning with: ")},
			{argv("SET", "a", "1"), replyQueued},
			{argv("EXEC"), replyErr(engine.ErrExecAbort)},
			{argv("EXISTS", "a"), replyInt(0)},
		}},
		{"arity error aborts", []step{
			{argv("MULTI"), replyOK},
			{argv("GET"), replyErr(engine.ErrWrongArgs("get"))},
			{argv("EXEC"), replyErr(engine.ErrExecAbort)},
			{argv("EXEC"), replyErr(engine.ErrExecWithoutMulti)},
		}},
		{"no_multi command aborts", []step{
			{argv("MULTI"), replyOK},
			{argv("SHUTDOWN"), replyErr(engine.ErrNotInMulti)},
			{argv("EXEC"), replyErr(engine.ErrExecAbort)},
		}},
		{"run-time error is one element", []step{
			{argv("SET", "s", "x"), replyOK},
			{argv("MULTI"), replyOK},
			{argv("INCR", "s"), replyQueued},
			{argv("SET", "b", "1"), replyQueued},
			{argv("EXEC"), replyArray(replyErr(engine.ErrNotInteger), replyOK)},
			{argv("GET", "b"), replyBulk("1")},
		}},
		{"discard drops the queue", []step{
			{argv("MULTI"), replyOK},
			{argv("SET", "a", "1"), replyQueued},
			{argv("DISCARD"), replyOK},
			{argv("EXISTS", "a"), replyInt(0)},
			{argv("EXEC"), replyErr(engine.ErrExecWithoutMulti)},
		}},
		{"select inside multi", []step{
			{argv("MULTI"), replyOK},
			{argv("SELECT", "1"), replyQueued},
			{argv("SET", "a", "1"), replyQueued},
			{argv("SELECT", "2"), replyQueued},
			{argv("EXISTS", "a"), replyQueued},
			{argv("EXEC"), replyArray(replyOK, replyOK, replyOK, replyInt(0))},
			{argv("SET", "b", "1"), replyOK},
			{argv("SELECT", "1"), replyOK},
			{argv("GET", "a"), replyBulk("1")},
		}},
		{"own write before multi breaks the watch", []step{
			{argv("WATCH", "k"), replyOK},
			{argv("SET", "k", "1"), replyOK},
			{argv("MULTI"), replyOK},
			{argv("PING"), replyQueued},
			{argv("EXEC"), replyNullArray},
		}},
		{"unwatch forgets", []step{
			{argv("WATCH", "k"), replyOK},
			{argv("SET", "k", "1"), replyOK},
			{argv("UNWATCH"), replyOK},
			{argv("MULTI"), replyOK},
			{argv("PING"), replyQueued},
			{argv("EXEC"), replyArray(replySimple("PONG"))},
		}},
		{"failed write does not touch", []step{
			{argv("SET", "k", "abc"), replyOK},
			{argv("WATCH", "k"), replyOK},
			{argv("INCR", "k"), replyErr(engine.ErrNotInteger)},
			{argv("SETRANGE", "k", "0", ""), replyInt(3)},
			{argv("PERSIST", "k"), replyInt(0)},
			{argv("DEL", "nokey"), replyInt(0)},
			{argv("MULTI"), replyOK},
			{argv("GET", "k"), replyQueued},
			{argv("EXEC"), replyArray(replyBulk("abc"))},
		}},
		{"append touches", []step{
			{argv("SET", "k", "abc"), replyOK},
			{argv("WATCH", "k"), replyOK},
			{argv("APPEND", "k", ""), replyInt(3)},
			{argv("MULTI"), replyOK},
			{argv("EXEC"), replyNullArray},
		}},
		{"flushall of a missing watched key", []step{
			{argv("WATCH", "k"), replyOK},
			{argv("FLUSHALL"), replyOK},
			{argv("MULTI"), replyOK},
			{argv("EXEC"), "*0\r\n"},
		}},
		{"flushall of a watched key", []step{
			{argv("SET", "k", "1"), replyOK},
			{argv("WATCH", "k"), replyOK},
			{argv("FLUSHALL"), replyOK},
			{argv("MULTI"), replyOK},
			{argv("EXEC"), replyNullArray},
		}},
		{"swapdb brings a key", []step{
			{argv("SELECT", "1"), replyOK},
			{argv("SET", "k", "1"), replyOK},
			{argv("SELECT", "0"), replyOK},
			{argv("WATCH", "k"), replyOK},
			{argv("SWAPDB", "0", "1"), replyOK},
			{argv("MULTI"), replyOK},
			{argv("EXEC"), replyNullArray},
		}},
		{"rename onto a watched key", []step{
			{argv("SET", "src", "1"), replyOK},
			{argv("WATCH", "k"), replyOK},
			{argv("RENAME", "src", "k"), replyOK},
			{argv("MULTI"), replyOK},
			{argv("EXEC"), replyNullArray},
		}},
		{"reset leaves multi", []step{
			{argv("WATCH", "k"), replyOK},
			{argv("MULTI"), replyOK},
			{argv("RESET"), replySimple("RESET")},
			{argv("EXEC"), replyErr(engine.ErrExecWithoutMulti)},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := runSteps(t, tt.steps)
			assert.Zero(t, e.KS.WatchedKeys())
		})
	}
}

func TestWatchOtherClient(t *testing.T) {
	e := newTestEnv(t)
	other := otherClient(e)
	require.Equal(t, replyOK, e.run("SET", "id", "x"))
	require.Equal(t, replyOK, e.run("WATCH", "id"))
	require.Equal(t, replyInt(-1), e.run("TTL", "id"))
	require.Equal(t, replyOK, other("SETEX", "id", "120", "locked"))
	require.Equal(t, replyOK, e.run("MULTI"))
	require.Equal(t, replyQueued, e.run("SETEX", "id", "120", "mine"))
	require.Equal(t, replyNullArray, e.run("EXEC"))
	require.Equal(t, replyBulk("locked"), e.run("GET", "id"))
	require.Zero(t, e.KS.WatchedKeys())
}

func TestWatchExpiry(t *testing.T) {
	tests := []struct {
		name string
		run  func(e *testEnv, other func(...string) string)
		want string
	}{
		{"expires after watch, not yet removed", func(e *testEnv, _ func(...string) string) {
			e.run("SET", "k", "v", "PX", "100")
			e.run("WATCH", "k")
			e.advance(200 * time.Millisecond)
		}, replyNullArray},
		{"expires after watch, removed by a read", func(e *testEnv, other func(...string) string) {
			e.run("SET", "k", "v", "PX", "100")
			e.run("WATCH", "k")
			e.advance(200 * time.Millisecond)
			other("GET", "k")
		}, replyNullArray},
		{"expired at watch", func(e *testEnv, _ func(...string) string) {
			e.run("SET", "k", "v", "PX", "100")
			e.advance(200 * time.Millisecond)
			e.run("WATCH", "k")
		}, replyArray(replySimple("PONG"))},
		{"expired at watch, removed by a read", func(e *testEnv, other func(...string) string) {
			e.run("SET", "k", "v", "PX", "100")
			e.advance(200 * time.Millisecond)
			e.run("WATCH", "k")
			other("GET", "k")
		}, replyArray(replySimple("PONG"))},
		{"expired at watch, then written", func(e *testEnv, other func(...string) string) {
			e.run("SET", "k", "v", "PX", "100")
			e.advance(200 * time.Millisecond)
			e.run("WATCH", "k")
			other("SET", "k", "2")
		}, replyNullArray},
		{"expired at watch, then flushed", func(e *testEnv, other func(...string) string) {
			e.run("SET", "k", "v", "PX", "100")
			e.advance(200 * time.Millisecond)
			e.run("WATCH", "k")
			other("FLUSHDB")
		}, replyArray(replySimple("PONG"))},
		{"active expiry", func(e *testEnv, _ func(...string) string) {
			e.run("SET", "k", "v", "PX", "100")
			e.run("WATCH", "k")
			e.advance(200 * time.Millisecond)
			e.KS.Lock()
			e.KS.ExpireDue(10)
			e.KS.Unlock()
		}, replyNullArray},
		{"past pexpireat deletes", func(e *testEnv, other func(...string) string) {
			e.run("SET", "k", "v")
			e.run("WATCH", "k")
			other("PEXPIREAT", "k", "1")
		}, replyNullArray},
		{"expire sets a deadline", func(e *testEnv, other func(...string) string) {
			e.run("SET", "k", "v")
			e.run("WATCH", "k")
			other("EXPIRE", "k", "100")
		}, replyNullArray},
		{"expire nx refused", func(e *testEnv, other func(...string) string) {
			e.run("SET", "k", "v", "EX", "100")
			e.run("WATCH", "k")
			other("EXPIRE", "k", "50", "NX")
		}, replyArray(replySimple("PONG"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			other := otherClient(e)
			tt.run(e, other)
			require.Equal(t, replyOK, e.run("MULTI"))
			require.Equal(t, replyQueued, e.run("PING"))
			require.Equal(t, tt.want, e.run("EXEC"))
			require.Zero(t, e.KS.WatchedKeys())
		})
	}
}

func TestExecAbortBeforeNull(t *testing.T) {
	e := newTestEnv(t)
	e.run("WATCH", "k")
	e.run("SET", "k", "1")
	e.run("MULTI")
	require.Equal(t, replyErr(engine.ErrWrongArgs("get")), e.run("GET"))
	require.Equal(t, replyErr(engine.ErrExecAbort), e.run("EXEC"))
	require.True(t, e.failed())
}

func TestExecRunsOffloadInPlace(t *testing.T) {
	e := newTestEnv(t)
	e.run("SET", "a", "1")
	e.run("MULTI")
	require.Equal(t, replyQueued, e.run("KEYS", "*"))
	require.Equal(t, replyQueued, e.run("SET", "b", "2"))
	// runArgs would run an offloaded function after unlocking: EXEC must
	// leave none.
	e.KS.Lock()
	offload := e.D.Exec(e.Client, [][]byte{[]byte("EXEC")})
	e.KS.Unlock()
	require.Nil(t, offload)
	require.Equal(t, replyArray(replyBulks("a"), replyOK), string(e.Client.W.Bytes()))
}

func TestExecAccounting(t *testing.T) {
	e := newTestEnv(t)
	var seen []string
	e.D.AfterCall = append(e.D.AfterCall, func(c *engine.Ctx, _ time.Duration) { seen = append(seen, c.Cmd.Name) })
	setCalls := e.D.CommandStats(table.Lookup([]byte("set"))).Calls
	e.run("MULTI")
	e.run("SET", "a", "1")
	e.run("INCR", "a")
	require.Equal(t, 2, e.Client.MultiLen)
	require.True(t, e.Client.InMulti)
	e.run("EXEC")
	require.Equal(t, []string{"multi", "set", "incr", "exec"}, seen)
	require.False(t, e.Client.InMulti)
	require.Zero(t, e.Client.MultiLen)
	require.Equal(t, setCalls+1, e.D.CommandStats(table.Lookup([]byte("set"))).Calls)
}

func TestReleaseClientUnwatches(t *testing.T) {
	e := newTestEnv(t)
	e.run("WATCH", "a", "b", "a")
	require.Equal(t, 2, e.KS.WatchedKeys())
	e.run("MULTI")
	e.KS.Lock()
	engine.ReleaseClient(e.Client)
	engine.ReleaseClient(e.Client)
	e.KS.Unlock()
	require.Zero(t, e.KS.WatchedKeys())
	require.False(t, e.Client.InMulti)
}

func TestExecNullRESP3(t *testing.T) {
	e := newTestEnv(t)
	e.resp3()
	e.run("WATCH", "k")
	e.run("SET", "k", "1")
	e.run("MULTI")
	require.Equal(t, "_\r\n", e.run("EXEC"))
}

func TestExecRejected(t *testing.T) {
	e := newTestEnv(t)
	abort := replyErr(engine.ErrExecAbortBecause + "wrong number of arguments for 'exec' command")
	require.Equal(t, abort, e.run("EXEC", "x"))
	e.run("MULTI")
	e.run("SET", "a", "1")
	require.Equal(t, abort, e.run("EXEC", "x"))
	require.False(t, e.Client.InMulti)
	require.Equal(t, replyErr(engine.ErrExecWithoutMulti), e.run("EXEC"))
	require.Equal(t, replyInt(0), e.run("EXISTS", "a"))
}
