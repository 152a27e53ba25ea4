package commands

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/engine"
)

func TestConnectionCommands(t *testing.T) {
	wrongArgs := func(name string) string { return replyErr(engine.ErrWrongArgs(name)) }
	tests := []struct {
		name  string
		steps []step
	}{
		{"ping echo", []step{
			{argv("PING"), replySimple("PONG")},
			{argv("PING", "hi"), replyBulk("hi")},
			{argv("PING", "a", "b"), wrongArgs("ping")},
			{argv("ECHO", ""), replyBulk("")},
			{argv("ECHO"), wrongArgs("echo")},
		}},
		{"select", []step{
			{argv("SELECT", "15"), replyOK},
			{argv("SELECT", "16"), replyErr(engine.ErrDBIndex)},
			{argv("SELECT", "-1"), replyErr(engine.ErrDBIndex)},
			{argv("SELECT", "4294967296"), replyErr(engine.ErrIntRange)},
			{argv("SELECT", "1.5"), replyErr(engine.ErrNotInteger)},
			{argv("SELECT", "0"), replyOK},
		}},
		{"auth without requirepass", []step{
			{argv("AUTH", "x"), replyErr(engine.ErrAuthNoPassword)},
			{argv("AUTH", "default", "anything"), replyOK},
			{argv("AUTH", "other", "x"), replyErr(engine.ErrWrongPass)},
			{argv("AUTH", "a", "b", "c"), replyErr(engine.ErrSyntax)},
		}},
		{"hello", []step{
			{argv("HELLO", "4"), replyErr(engine.ErrNoProto)},
			{argv("HELLO", "1"), replyErr(engine.ErrNoProto)},
			{argv("HELLO", "x"), replyErr(engine.ErrProtoVersion)},
			{argv("HELLO", "2", "foo"), replyErr("ERR Syntax error in HELLO option 'foo'")},
			{argv("HELLO", "2", "auth", "a"), replyErr("ERR Syntax error in HELLO option 'auth'")},
			{argv("HELLO", "2", "setname"), replyErr("ERR Syntax error in HELLO option 'setname'")},
			{argv("HELLO", "2", "setname", "a b"), replyErr(engine.ErrClientName)},
			{argv("HELLO", "2", "AUTH", "nobody", "x"), replyErr(engine.ErrWrongPass)},
			{argv("HELLO", "2", "SETNAME", "me"), replyArray(
				replyBulk("server"), replyBulk("redis"), replyBulk("version"), replyBulk(RedisVersion),
				replyBulk("proto"), replyInt(2), replyBulk("id"), replyInt(1),
				replyBulk("mode"), replyBulk("standalone"), replyBulk("role"), replyBulk("master"),
				replyBulk("modules"), replyArray())},
			{argv("CLIENT", "GETNAME"), replyBulk("me")},
		}},
		{"client names", []step{
			{argv("CLIENT", "GETNAME"), replyNull},
			{argv("CLIENT", "SETNAME", "a b"), replyErr(engine.ErrClientName)},
			{argv("CLIENT", "SETNAME", "caf\xc3\xa9"), replyErr(engine.ErrClientName)},
			{argv("CLIENT", "SETNAME", "a\nb"), replyErr(engine.ErrClientName)},
			{argv("CLIENT", "SETNAME", "name-1!~"), replyOK},
			{argv("CLIENT", "GETNAME"), replyBulk("name-1!~")},
			{argv("CLIENT", "SETNAME", ""), replyOK},
			{argv("CLIENT", "GETNAME"), replyNull},
			{argv("CLIENT", "SETNAME"), wrongArgs("client|setname")},
			{argv("CLIENT", "ID"), replyInt(1)},
			{argv("CLIENT", "ID", "x"), wrongArgs("client|id")},
		}},
		{"client flags and options", []step{
			{argv("CLIENT", "NO-EVICT", "maybe"), replyErr(engine.ErrSyntax)},
			{argv("CLIENT", "NO-EVICT", "ON"), replyOK},
			{argv("CLIENT", "NO-TOUCH", "on"), replyOK},
			{argv("CLIENT", "SETINFO", "LIB-NAME", "go-redis(,go1.26)"), replyOK},
			{argv("CLIENT", "SETINFO", "lib-ver", "9.0"), replyOK},
			{argv("CLIENT", "SETINFO", "lib-ver", "a b"), replyErr("ERR lib-ver cannot contain spaces, newlines or special characters.")},
			{argv("CLIENT", "SETINFO", "other", "x"), replyErr("ERR Unrecognized option 'other'")},
			{argv("CLIENT", "REPLY", "maybe"), replyErr(engine.ErrSyntax)},
			{argv("CLIENT", "GETREDIR"), replyInt(-1)},
			{argv("CLIENT", "CACHING", "yes"), replyErr(engine.ErrCachingNoTrack)},
			{argv("CLIENT", "TRACKINGINFO"), replyArray(replyBulk("flags"), replyBulks("off"),
				replyBulk("redirect"), replyInt(-1), replyBulk("prefixes"), replyArray())},
			{argv("CLIENT", "FOO"), replyErr("ERR unknown subcommand 'FOO'. Try CLIENT HELP.")},
			{argv("CLIENT"), wrongArgs("client")},
		}},
		{"client pause parsing", []step{
			{argv("CLIENT", "PAUSE", "abc", "foo"), replyErr(engine.ErrPauseMode)},
			{argv("CLIENT", "PAUSE", "abc"), replyErr(engine.ErrTimeoutNotInt)},
			{argv("CLIENT", "PAUSE", "-1"), replyErr(engine.ErrTimeoutNegative)},
			{argv("CLIENT", "PAUSE", "1", "2", "3"), replyErr("ERR unknown subcommand or wrong number of arguments for 'PAUSE'. Try CLIENT HELP.")},
			{argv("client", "pause", "1", "2", "3"), replyErr("ERR unknown subcommand or wrong number of arguments for 'pause'. Try CLIENT HELP.")},
			{argv("CLIENT", "UNPAUSE"), replyOK},
		}},
		{"client unblock", []step{
			{argv("CLIENT", "UNBLOCK", "abc", "foo"), replyErr(engine.ErrUnblockReason)},
			{argv("CLIENT", "UNBLOCK", "abc"), replyErr(engine.ErrNotInteger)},
			{argv("CLIENT", "UNBLOCK", "1"), replyInt(0)},
			{argv("CLIENT", "UNBLOCK", "99", "ERROR"), replyInt(0)},
			{argv("CLIENT", "UNBLOCK", "1", "2", "3"), replyErr("ERR unknown subcommand or wrong number of arguments for 'UNBLOCK'. Try CLIENT HELP.")},
		}},
		{"client kill parsing", []step{
			{argv("CLIENT", "KILL", "1.2.3.4:5"), replyErr(engine.ErrNoSuchClient)},
			{argv("CLIENT", "KILL", "ADDR", "1.2.3.4:5"), replyInt(0)},
			{argv("CLIENT", "KILL", "ID", "abc"), replyErr(engine.ErrClientIDRange)},
			{argv("CLIENT", "KILL", "ID", "0"), replyErr(engine.ErrClientIDRange)},
			{argv("CLIENT", "KILL", "TYPE", "foo"), replyErr("ERR Unknown client type 'foo'")},
			{argv("CLIENT", "KILL", "USER", "nobody"), replyErr("ERR No such user 'nobody'")},
			{argv("CLIENT", "KILL", "SKIPME", "maybe"), replyErr(engine.ErrSyntax)},
			{argv("CLIENT", "KILL", "ADDR", "x", "ID"), replyErr(engine.ErrSyntax)},
			{argv("CLIENT", "KILL", "FOO", "bar"), replyErr(engine.ErrSyntax)},
			{argv("CLIENT", "KILL", "ID", "1"), replyInt(0)},
			{argv("CLIENT", "KILL", "TYPE", "normal", "USER", "default"), replyInt(0)},
		}},
		{"client list parsing", []step{
			{argv("CLIENT", "LIST", "TYPE", "foo"), replyErr("ERR Unknown client type 'foo'")},
			{argv("CLIENT", "LIST", "ID"), replyErr(engine.ErrSyntax)},
			{argv("CLIENT", "LIST", "ID", "1", "x"), replyErr(engine.ErrInvalidClientID)},
			{argv("CLIENT", "LIST", "ID", "99"), replyEmpty},
			{argv("CLIENT", "LIST", "TYPE", "pubsub"), replyEmpty},
			{argv("CLIENT", "LIST", "foo"), replyErr(engine.ErrSyntax)},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { runSteps(t, tc.steps) })
	}
}

func TestAuthRequirepass(t *testing.T) {
	e := newTestEnv(t)
	require.NoError(t, e.Srv.cfg.Set([]string{"requirepass", "secret"}))
	e.D.ACL.SetDefaultPassword("secret") // as the server's requirepass hook does
	e.Client.Authed = false
	steps := []step{
		{argv("PING"), replyErr(engine.ErrNoAuth)},
		{argv("HELLO"), replyErr(engine.ErrHelloNoAuth)},
		{argv("HELLO", "2", "SETNAME", "x"), replyErr(engine.ErrHelloNoAuth)},
		{argv("AUTH", "wrong"), replyErr(engine.ErrWrongPass)},
		{argv("AUTH", "default", "wrong"), replyErr(engine.ErrWrongPass)},
		{argv("AUTH", "secret"), replyOK},
		{argv("PING"), replySimple("PONG")},
		{argv("RESET"), replySimple("RESET")},
		{argv("PING"), replyErr(engine.ErrNoAuth)},
		{argv("AUTH", "default", "secret"), replyOK},
		{argv("RESET"), replySimple("RESET")},
		{argv("HELLO", "2", "AUTH", "default", "secret", "SETNAME", "n"), ""},
		{argv("CLIENT", "GETNAME"), replyBulk("n")},
	}
	for _, s := range steps {
		got := e.run(s.cmd...)
		if s.want != "" {
			require.Equal(t, s.want, got, "%q", s.cmd)
		}
	}
}

// Secrets never reach MONITOR or the slow log: AUTH and HELLO AUTH redact
// them before anything else.
func TestAuthRedactsArguments(t *testing.T) {
	e := newTestEnv(t)
	var seen [][]string
	e.D.AfterCall = append(e.D.AfterCall, func(c *engine.Ctx, _ time.Duration) {
		a := make([]string, len(c.Args))
		for i, x := range c.Args {
			a[i] = string(x)
		}
		seen = append(seen, a)
	})
	e.run("AUTH", "pw")
	e.run("AUTH", "default", "pw")
	e.run("HELLO", "2", "AUTH", "default", "pw", "SETNAME", "n")
	assert.Equal(t, [][]string{
		{"AUTH", "(redacted)"},
		{"AUTH", "(redacted)", "(redacted)"},
		{"HELLO", "2", "AUTH", "(redacted)", "(redacted)", "SETNAME", "n"},
	}, seen)
}

func TestResetClearsConnectionState(t *testing.T) {
	e := newTestEnv(t)
	e.run("SELECT", "3")
	e.run("CLIENT", "SETNAME", "n")
	e.run("CLIENT", "NO-EVICT", "on")
	e.Client.Monitor = true
	require.Equal(t, replySimple("RESET"), e.run("RESET"))
	cl := e.Client
	assert.Equal(t, 0, cl.DB)
	assert.Equal(t, "", cl.Name)
	assert.True(t, cl.NoEvict, "7.0's RESET keeps CLIENT NO-EVICT")
	assert.False(t, cl.Monitor)
	assert.True(t, cl.Authed)
}

// A replica's or a master's connection cannot be reset (resetCommand).
func TestResetRefusesReplicationClients(t *testing.T) {
	e := newTestEnv(t)
	e.run("SELECT", "3")
	e.Client.Replica = true
	assert.Equal(t, "-ERR can only reset normal client connections\r\n", e.run("RESET"))
	assert.Equal(t, 3, e.Client.DB, "nothing was reset")
	e.Client.Replica = false
	e.Client.Master = true
	assert.Equal(t, "-ERR can only reset normal client connections\r\n", e.run("RESET"))
}

func TestClientReplyFlags(t *testing.T) {
	e := newTestEnv(t)
	assert.Equal(t, "", e.run("CLIENT", "REPLY", "OFF"))
	assert.True(t, e.Client.ReplyOff)
	assert.Equal(t, "", e.run("CLIENT", "REPLY", "SKIP"))
	assert.False(t, e.Client.ReplySkipNext, "SKIP is ignored while OFF")
	assert.Equal(t, replyOK, e.run("CLIENT", "REPLY", "ON"))
	assert.False(t, e.Client.ReplyOff)
	e.run("CLIENT", "REPLY", "SKIP")
	assert.True(t, e.Client.ReplySkipNext)
}

func TestClientPauseReachesServer(t *testing.T) {
	e := newTestEnv(t)
	require.Equal(t, replyOK, e.run("CLIENT", "PAUSE", "500", "WRITE"))
	assert.Equal(t, testEpochMs+500, e.Srv.pauseEnd)
	assert.False(t, e.Srv.pauseAll)
	require.Equal(t, replyOK, e.run("CLIENT", "PAUSE", "100"))
	assert.True(t, e.Srv.pauseAll)
	require.Equal(t, replyOK, e.run("CLIENT", "PAUSE", "0"))
	assert.Equal(t, int64(0), e.Srv.pauseEnd)
	require.Equal(t, replyOK, e.run("CLIENT", "UNPAUSE"))
	assert.Equal(t, int64(0), e.Srv.pauseEnd)
}

// clientListFields are the fields of a Redis 7.0.15 CLIENT LIST line, in
// order.
var clientListFields = []string{"id", "addr", "laddr", "fd", "name", "age", "idle", "flags", "db",
	"sub", "psub", "ssub", "multi", "qbuf", "qbuf-free", "argv-mem", "multi-mem", "rbs", "rbp",
	"obl", "oll", "omem", "tot-mem", "events", "cmd", "user", "redir", "resp"}

// parseClientLine splits a CLIENT LIST line into its field names and a
// name -> value map.
func parseClientLine(t *testing.T, line string) ([]string, map[string]string) {
	t.Helper()
	var names []string
	vals := map[string]string{}
	for _, f := range strings.Split(line, " ") {
		k, v, ok := strings.Cut(f, "=")
		require.True(t, ok, "field %q of %q", f, line)
		names = append(names, k)
		vals[k] = v
	}
	return names, vals
}

func TestClientListFormat(t *testing.T) {
	e := newTestEnv(t)
	other := &engine.Client{ID: 7, Addr: "10.0.0.2:4000", LAddr: "10.0.0.1:6379", FD: 9, Created: testEpochMs - 90_000,
		W: e.Client.W, Name: "worker", DB: 2, Subs: 2, PSubs: 1, InMulti: true, MultiLen: 3, NoEvict: true, LastCmd: "get"}
	other.LastInteraction.Store(testEpochMs - 30_000)
	e.Client.LastInteraction.Store(testEpochMs)
	e.Srv.clients = append(e.Srv.clients, other)

	out := e.run("CLIENT", "LIST")
	require.True(t, strings.HasPrefix(out, "$"), out)
	body := out[strings.Index(out, "\r\n")+2 : len(out)-2]
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	require.Len(t, lines, 2)

	names, self := parseClientLine(t, lines[0])
	assert.Equal(t, clientListFields, names)
	assert.Equal(t, "1", self["id"])
	assert.Equal(t, "127.0.0.1:50000", self["addr"])
	assert.Equal(t, "N", self["flags"])
	assert.Equal(t, "client|list", self["cmd"], "the running command")
	assert.Equal(t, "10", self["argv-mem"], "CLIENT LIST's own arguments")
	assert.Equal(t, "-1", self["multi"])
	assert.Equal(t, "2", self["resp"])

	names, o := parseClientLine(t, lines[1])
	assert.Equal(t, clientListFields, names)
	assert.Equal(t, "worker", o["name"])
	assert.Equal(t, "90", o["age"])
	assert.Equal(t, "30", o["idle"])
	assert.Equal(t, "Pxe", o["flags"])
	assert.Equal(t, "2", o["db"])
	assert.Equal(t, "2", o["sub"])
	assert.Equal(t, "1", o["psub"])
	assert.Equal(t, "3", o["multi"])
	assert.Equal(t, "get", o["cmd"])

	assert.Contains(t, e.run("CLIENT", "LIST", "TYPE", "pubsub"), "id=7 ")
	assert.NotContains(t, e.run("CLIENT", "LIST", "TYPE", "normal"), "id=7 ")
	assert.Contains(t, e.run("CLIENT", "LIST", "ID", "7", "7", "1"), "id=7 ")
	info := e.run("CLIENT", "INFO")
	assert.Contains(t, info, "id=1 addr=127.0.0.1:50000 ")
	assert.True(t, strings.HasSuffix(info, " cmd=client|info user=default redir=-1 resp=2\n\r\n"), info)
}

func TestClientKill(t *testing.T) {
	e := newTestEnv(t)
	killed := map[int64]bool{}
	add := func(id int64, addr string) {
		cl := &engine.Client{ID: id, Addr: addr, LAddr: "127.0.0.1:6379", W: e.Client.W}
		cl.Kill = func() { killed[id] = true }
		e.Srv.clients = append(e.Srv.clients, cl)
	}
	add(2, "127.0.0.1:2")
	add(3, "127.0.0.1:3")
	assert.Equal(t, replyOK, e.run("CLIENT", "KILL", "127.0.0.1:2"))
	assert.Equal(t, map[int64]bool{2: true}, killed)
	assert.Equal(t, replyInt(2), e.run("CLIENT", "KILL", "LADDR", "127.0.0.1:6379"), "skips the caller")
	assert.Equal(t, map[int64]bool{2: true, 3: true}, killed)
	assert.False(t, e.Client.CloseAfterReply)
	assert.Equal(t, replyInt(1), e.run("CLIENT", "KILL", "ID", "1", "SKIPME", "no"))
	assert.True(t, e.Client.CloseAfterReply, "killing oneself closes after the reply")
}

func TestClientHelpMatchesRedis(t *testing.T) {
	out := newTestEnv(t).run("client", "help")
	assert.True(t, strings.HasPrefix(out, "*48\r\n+CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+CACHING (YES|NO)\r\n"), out)
	assert.True(t, strings.HasSuffix(out, "+HELP\r\n+    Prints this help.\r\n"), out)
}
