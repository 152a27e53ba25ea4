package commands

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/resp"
)

func TestBlockingImmediate(t *testing.T) {
	runSteps(t, []step{
		{argv("RPUSH", "l", "a", "b"), replyInt(2)},
		{argv("BLPOP", "none", "l", "0"), replyBulks("l", "a")},
		{argv("BRPOP", "l", "0"), replyBulks("l", "b")},
		{argv("EXISTS", "l"), replyInt(0)},
		{argv("BLPOP", "l", "x"), replyErr(engine.ErrTimeoutNotFloat)},
		{argv("BLPOP", "l", "-1"), replyErr(engine.ErrTimeoutNegative)},
		{argv("BLPOP", "l", "inf"), replyErr(engine.ErrTimeoutNegative)},
		{argv("SET", "s", "v"), replySimple("OK")},
		{argv("BLPOP", "none", "s", "0"), replyErr(engine.ErrWrongType)},
		{argv("BZPOPMIN", "s", "0"), replyErr(engine.ErrWrongType)},
		{argv("RPUSH", "src", "1", "2"), replyInt(2)},
		{argv("BLMOVE", "src", "dst", "LEFT", "LEFT", "0"), replyBulk("1")},
		{argv("BRPOPLPUSH", "src", "dst", "0"), replyBulk("2")},
		{argv("LRANGE", "dst", "0", "-1"), replyBulks("2", "1")},
		{argv("BLMOVE", "dst", "s", "LEFT", "LEFT", "0"), replyErr(engine.ErrWrongType)},
		{argv("BLMPOP", "0", "2", "none", "dst", "RIGHT", "COUNT", "5"), replyArray(replyBulk("dst"), replyBulks("1", "2"))},
		{argv("BLMPOP", "0", "0", "dst", "RIGHT"), replyErr(engine.ErrNumkeysPositive)},
		{argv("ZADD", "z", "1", "a", "2", "b"), replyInt(2)},
		{argv("BZPOPMAX", "z", "0"), replyBulks("z", "b", "2")},
		{argv("BZMPOP", "0", "1", "z", "MIN"), replyArray(replyBulk("z"), replyArray(replyBulks("a", "1")))},
		{argv("BZMPOP", "0", "1", "z", "MID"), replyErr(engine.ErrSyntax)},
		{argv("MULTI"), replySimple("OK")},
		{argv("BLPOP", "l", "0"), replySimple("QUEUED")},
		{argv("BLMOVE", "l", "d", "LEFT", "LEFT", "0"), replySimple("QUEUED")},
		{argv("EXEC"), "*2\r\n*-1\r\n$-1\r\n"},
	})
}

// blockOn runs a blocking command for a second client and returns a
// channel that yields its reply once the wait is over.
func blockOn(t *testing.T, e *testEnv, cl *engine.Client, args ...string) <-chan string {
	t.Helper()
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	e.KS.Lock()
	offload := e.D.Exec(cl, b)
	e.KS.Unlock()
	require.NotNil(t, offload, "%v did not block", args)
	out := make(chan string, 1)
	go func() {
		offload()
		e.KS.Lock()
		s := string(cl.W.Bytes())
		cl.W.Reset()
		e.KS.Unlock()
		out <- s
	}()
	return out
}

func newBlockClient(e *testEnv, id int64) *engine.Client {
	cl := &engine.Client{ID: id, W: resp.NewWriter(), Authed: true}
	e.Srv.clients = append(e.Srv.clients, cl)
	return cl
}

func recv(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(5 * time.Second):
		t.Fatal("waiter never answered")
		return ""
	}
}

func TestBlockingServeOrder(t *testing.T) {
	e := newTestEnv(t)
	a, b := newBlockClient(e, 2), newBlockClient(e, 3)
	ra := blockOn(t, e, a, "BLPOP", "q", "0")
	rb := blockOn(t, e, b, "BRPOP", "x", "q", "0")
	require.True(t, a.Blocked)
	require.Equal(t, replyInt(1), e.run("RPUSH", "q", "1"))
	require.Equal(t, replyBulks("q", "1"), recv(t, ra))
	require.False(t, a.Blocked)
	require.True(t, b.Blocked)
	require.Equal(t, replyInt(2), e.run("RPUSH", "q", "2", "3"))
	require.Equal(t, replyBulks("q", "3"), recv(t, rb))
	require.Equal(t, replyBulks("2"), e.run("LRANGE", "q", "0", "-1"))
	require.Zero(t, e.D.BlockedClients())
}

func TestBlockingAfterExec(t *testing.T) {
	e := newTestEnv(t)
	a := newBlockClient(e, 2)
	ra := blockOn(t, e, a, "BZPOPMIN", "z", "0")
	e.run("MULTI")
	e.run("ZADD", "z", "5", "m")
	e.run("ZPOPMIN", "z")
	e.run("ZADD", "z", "7", "n")
	require.Equal(t, "*3\r\n:1\r\n*2\r\n$1\r\nm\r\n$1\r\n5\r\n:1\r\n", e.run("EXEC"))
	require.Equal(t, replyBulks("z", "n", "7"), recv(t, ra))
}

func TestBlockingTimeoutUnblockRelease(t *testing.T) {
	e := newTestEnv(t)
	a := newBlockClient(e, 2)
	require.Equal(t, "*-1\r\n", recv(t, blockOn(t, e, a, "BLMPOP", "0.01", "1", "q", "LEFT")))
	require.False(t, a.Blocked)

	ra := blockOn(t, e, a, "BLMOVE", "q", "d", "LEFT", "LEFT", "0")
	require.Equal(t, replyInt(1), e.run("CLIENT", "UNBLOCK", "2", "ERROR"))
	require.Equal(t, "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n", recv(t, ra))
	require.Equal(t, replyInt(0), e.run("CLIENT", "UNBLOCK", "2"))

	ra = blockOn(t, e, a, "BLPOP", "q", "0")
	require.Equal(t, replyInt(1), e.run("CLIENT", "UNBLOCK", "2", "TIMEOUT"))
	require.Equal(t, "*-1\r\n", recv(t, ra))

	ra = blockOn(t, e, a, "BLPOP", "q", "0")
	e.KS.Lock()
	engine.ReleaseClient(a)
	e.KS.Unlock()
	recv(t, ra)
	require.Equal(t, replyInt(1), e.run("RPUSH", "q", "v"))
	require.Equal(t, replyInt(1), e.run("LLEN", "q"))
	require.Zero(t, e.D.BlockedClients())
}

func TestParseHexFloat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"0x10", 16, true}, {"-0x1.8", -1.5, true}, {"0x", 0, false}, {"10", 0, false}, {"0x1p4", 0, false},
	} {
		f, ok := parseHexFloat([]byte(tc.in))
		require.Equal(t, tc.ok, ok, tc.in)
		if ok {
			require.Equal(t, tc.want, f, tc.in)
		}
	}
}
