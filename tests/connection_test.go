package tests

// The connection family end to end: PING ECHO SELECT RESET HELLO AUTH and
// CLIENT, against a real redis-server where replies are deterministic.

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConnPingEchoSelectDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("PING")
	d.Do("PING", "hello")
	d.Do("PING", "")
	d.Do("PING", "a", "b")
	d.Do("ECHO", "x y\r\nz")
	d.Do("ECHO")
	d.Do("ECHO", "a", "b")
	for _, db := range []string{"-1", "16", "abc", "1.5", "4294967296", "01", " 1", ""} {
		d.Do("SELECT", db)
	}
	d.Do("SELECT")
	d.Do("SELECT", "7")
	d.Do("SET", "k", "in7")
	d.Do("SELECT", "0")
	d.Do("GET", "k")
	d.Do("SELECT", "7")
	d.Do("GET", "k")
	d.Do("SELECT", "0")
}

func TestConnHelloDiff(t *testing.T) {
	d := NewDiff(t)
	for _, args := range [][]string{
		{"HELLO", "abc"}, {"HELLO", "-1"}, {"HELLO", "1"}, {"HELLO", "4"}, {"HELLO", "99999999999999999999"},
		{"HELLO", "2", "foo"}, {"HELLO", "2", "AUTH"}, {"HELLO", "2", "AUTH", "default"},
		{"HELLO", "2", "SETNAME"}, {"HELLO", "2", "SETNAME", "a b"}, {"HELLO", "2", "setname", "x\ny"},
		{"HELLO", "2", "AUTH", "nobody", "pw"}, {"HELLO", "2", "auth", "default", "pw", "bogus"},
	} {
		d.Do(args...)
	}
	// A successful HELLO differs only in the connection id.
	for _, args := range [][]string{{"HELLO"}, {"HELLO", "2"}, {"HELLO", "2", "SETNAME", "hi"}, {"hello", "2", "AUTH", "default", "any", "SETNAME", "me"}} {
		z, r := d.Z.Do(args...), d.R.Do(args...)
		diffCases.Add(1)
		idLine := func(s string) string {
			i := strings.Index(s, "$2\r\nid\r\n:")
			require.GreaterOrEqual(t, i, 0, s)
			j := strings.Index(s[i+9:], "\r\n")
			return s[:i+9] + "N" + s[i+9+j:]
		}
		assert.Equal(t, idLine(r), idLine(z), "%q", args)
	}
	d.Do("CLIENT", "GETNAME")
}

// HELLO 3 switches the connection to RESP3 and HELLO 2 back; HELLO
// without a version keeps the protocol; bad versions and options answer
// Redis's errors. The replies differ in the client ID only.
func TestConnHello3Diff(t *testing.T) {
	d := NewDiff(t)
	withoutID := func(s string) string {
		i := strings.Index(s, "$2\r\nid\r\n:")
		if i < 0 {
			return s
		}
		j := strings.Index(s[i+9:], "\r\n")
		return s[:i+9] + "N" + s[i+9+j:]
	}
	same := func(args ...string) {
		t.Helper()
		z, r := d.Z.Do(args...), d.R.Do(args...)
		assert.Equal(t, withoutID(r), withoutID(z), "%q", args)
	}
	same("HELLO", "3")
	d.Do("HGETALL", "nokey")
	d.Do("GET", "nokey")
	same("HELLO")
	same("HELLO", "3", "AUTH", "default", "x", "SETNAME", "n")
	d.Do("CLIENT", "GETNAME")
	same("HELLO", "2", "SETNAME", "m")
	d.Do("GET", "nokey")
	for _, bad := range [][]string{{"HELLO", "4"}, {"HELLO", "1"}, {"HELLO", "x"}, {"HELLO", "3", "foo"},
		{"HELLO", "3", "AUTH", "a"}, {"HELLO", "3", "SETNAME", "a b"}, {"HELLO", "3", "AUTH", "nobody", "x"}} {
		d.Do(bad...)
	}
	d.Do("PING")
}

// A RESP3 client may run any command while subscribed, and its messages
// and confirmations come as pushes.
func TestConnResp3SubscribedDiff(t *testing.T) {
	d := NewDiff(t)
	d.Resp3()
	pub := NewDiff(t)
	d.Do("SUBSCRIBE", "ch")
	d.Do("PSUBSCRIBE", "c*")
	d.Do("SET", "k", "v")
	d.Do("GET", "k")
	d.Do("PING")
	d.Do("PING", "x")
	pub.Do("PUBLISH", "ch", "hello")
	for _, c := range []*Conn{d.Z, d.R} {
		c.Send(Encode("PING"))
	}
	for i := 0; i < 3; i++ {
		assert.Equal(t, d.R.Read(), d.Z.Read(), "a message, a pmessage, then PONG: %d", i)
	}
	d.Do("UNSUBSCRIBE")
	d.Do("PUNSUBSCRIBE")
	d.Do("UNSUBSCRIBE")
}

func TestConnAuthNoPasswordDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("AUTH")
	d.Do("AUTH", "pw")
	d.Do("AUTH", "default", "anything")
	d.Do("AUTH", "nobody", "pw")
	d.Do("AUTH", "a", "b", "c")
	d.Do("PING")
}

func TestConnRequirepassDiff(t *testing.T) {
	// The harness's readiness probe needs no password: set it once up.
	z, r := StartZredis(t), StartRedis(t)
	for _, p := range []*Proc{z, r} {
		require.Equal(t, "+OK\r\n", Dial(t, p.Addr).Do("CONFIG", "SET", "requirepass", "s3cret"))
	}
	d := &Diff{t: t, Z: Dial(t, z.Addr), R: Dial(t, r.Addr)}
	for _, args := range [][]string{
		{"PING"}, {"ECHO", "x"}, {"GET", "k"}, {"CLIENT", "ID"}, {"CLIENT", "SETNAME", "x"}, {"NOSUCH"},
		{"SELECT", "1"}, {"HELLO"}, {"HELLO", "2"}, {"HELLO", "2", "SETNAME", "x"},
		{"HELLO", "2", "AUTH", "default", "wrong"}, {"HELLO", "2", "AUTH", "default"},
		{"AUTH", "wrong"}, {"AUTH", "default", "wrong"}, {"AUTH", "nobody", "s3cret"}, {"AUTH", "a", "b", "c"},
		{"RESET"}, {"QUIT2"},
		{"AUTH", "s3cret"}, {"PING"}, {"SELECT", "2"}, {"CLIENT", "SETNAME", "n"}, {"CLIENT", "GETNAME"},
		{"RESET"}, {"PING"}, {"CLIENT", "GETNAME"},
		{"AUTH", "default", "s3cret"}, {"CLIENT", "GETNAME"}, {"GET", "k"},
	} {
		d.Do(args...)
	}
	// HELLO AUTH authenticates and names in one go.
	d2 := &Diff{t: t, Z: Dial(t, z.Addr), R: Dial(t, r.Addr)}
	z2, r2 := d2.Z.Do("HELLO", "2", "AUTH", "default", "s3cret", "SETNAME", "h"), d2.R.Do("HELLO", "2", "AUTH", "default", "s3cret", "SETNAME", "h")
	assert.True(t, strings.HasPrefix(z2, "*14\r\n") && strings.HasPrefix(r2, "*14\r\n"), "%q / %q", z2, r2)
	d2.Do("CLIENT", "GETNAME")
	d2.Do("PING")
}

// QUIT answers +OK, then the server closes the connection.
func TestConnQuitDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("QUIT")
	for _, c := range []*Conn{d.Z, d.R} {
		_, err := c.ReadErr(2 * time.Second)
		assert.Error(t, err, "closed after QUIT")
	}
}

func TestConnResetDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("SELECT", "3")
	d.Do("CLIENT", "SETNAME", "before")
	d.Do("CLIENT", "NO-EVICT", "on")
	d.Do("RESET")
	d.Do("CLIENT", "GETNAME")
	d.Do("SET", "k", "db0")
	d.Do("SELECT", "3")
	d.Do("GET", "k")
	d.Do("RESET", "x")
}

func TestClientNameDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("CLIENT", "GETNAME")
	for _, name := range []string{"a b", "tab\there", "new\nline", "caf\xc3\xa9", "\x7f", "ok!#~"} {
		d.Do("CLIENT", "SETNAME", name)
	}
	d.Do("CLIENT", "GETNAME")
	d.Do("CLIENT", "SETNAME", "")
	d.Do("CLIENT", "GETNAME")
	d.Do("CLIENT", "SETNAME")
	d.Do("CLIENT", "SETNAME", "a", "b")
	d.Do("CLIENT", "GETNAME", "x")
}

func TestClientSubcommandErrorsDiff(t *testing.T) {
	d := NewDiff(t)
	for _, args := range [][]string{
		{"CLIENT"}, {"CLIENT", "FOO"}, {"client", "foo", "bar"}, {"CLIENT", "HELP"}, {"client", "help"}, {"CLIENT", "HELP", "x"},
		{"CLIENT", "ID", "x"}, {"CLIENT", "INFO", "x"},
		{"CLIENT", "REPLY"}, {"CLIENT", "REPLY", "maybe"},
		{"CLIENT", "NO-EVICT"}, {"CLIENT", "NO-EVICT", "maybe"}, {"CLIENT", "NO-EVICT", "ON"}, {"CLIENT", "NO-EVICT", "off"},
		{"CLIENT", "PAUSE"}, {"CLIENT", "PAUSE", "abc"}, {"CLIENT", "PAUSE", "-1"}, {"CLIENT", "PAUSE", "10", "foo"},
		{"CLIENT", "PAUSE", "abc", "foo"}, {"CLIENT", "PAUSE", "99999999999999999999"}, {"CLIENT", "PAUSE", "1", "2", "3"},
		{"client", "pause", "1", "2", "3"}, {"CLIENT", "UNPAUSE", "x"}, {"CLIENT", "UNPAUSE"},
		{"CLIENT", "KILL"}, {"CLIENT", "KILL", "1.2.3.4:5"}, {"CLIENT", "KILL", "ADDR", "1.2.3.4:5"},
		{"CLIENT", "KILL", "LADDR", "1.2.3.4:5"}, {"CLIENT", "KILL", "ID", "abc"}, {"CLIENT", "KILL", "ID", "0"},
		{"CLIENT", "KILL", "ID", "-1"}, {"CLIENT", "KILL", "ID", "99999999999999999999"}, {"CLIENT", "KILL", "ID", "999999"},
		{"CLIENT", "KILL", "TYPE", "foo"}, {"CLIENT", "KILL", "TYPE", "master"}, {"CLIENT", "KILL", "TYPE", "replica"},
		{"CLIENT", "KILL", "TYPE", "slave"}, {"CLIENT", "KILL", "USER", "nobody"}, {"CLIENT", "KILL", "SKIPME", "maybe"},
		{"CLIENT", "KILL", "FOO", "bar"}, {"CLIENT", "KILL", "ADDR", "x", "ID"}, {"CLIENT", "KILL", "addr"},
		{"CLIENT", "KILL", "ID", "abc", "TYPE", "foo"},
		{"CLIENT", "LIST", "TYPE", "foo"}, {"CLIENT", "LIST", "TYPE"}, {"CLIENT", "LIST", "ID"}, {"CLIENT", "LIST", "ID", "abc"},
		{"CLIENT", "LIST", "ID", "1", "x"}, {"CLIENT", "LIST", "ID", "999999"}, {"CLIENT", "LIST", "ID", "0"}, {"CLIENT", "LIST", "ID", "-5"},
		{"CLIENT", "LIST", "foo"}, {"CLIENT", "LIST", "TYPE", "normal", "x"}, {"CLIENT", "LIST", "TYPE", "master"},
		{"CLIENT", "UNBLOCK"}, {"CLIENT", "UNBLOCK", "abc"}, {"CLIENT", "UNBLOCK", "abc", "foo"}, {"CLIENT", "UNBLOCK", "999999"},
		{"CLIENT", "UNBLOCK", "999999", "ERROR"}, {"CLIENT", "UNBLOCK", "1", "2", "3"},
		{"CLIENT", "GETREDIR"}, {"CLIENT", "GETREDIR", "x"}, {"CLIENT", "TRACKINGINFO"}, {"CLIENT", "CACHING", "yes"},
		{"CLIENT", "CACHING"},
	} {
		d.Do(args...)
	}
}

func TestClientIDAndInfo(t *testing.T) {
	d := NewDiff(t)
	d.DoLen("CLIENT", "ID")
	a, _ := strconv.Atoi(strings.Trim(d.Z.Do("CLIENT", "ID"), ":\r\n"))
	b := Dial(t, shared.z.Addr)
	bid, _ := strconv.Atoi(strings.Trim(b.Do("CLIENT", "ID"), ":\r\n"))
	assert.Greater(t, bid, a, "IDs grow")
	info := d.Z.Do("CLIENT", "INFO")
	assert.Contains(t, info, "id="+strconv.Itoa(a)+" ")
	assert.Contains(t, info, " cmd=client|info ")
	assert.True(t, strings.HasSuffix(info, "\n\r\n"))
}

// clientListNames returns the field names of each CLIENT LIST line.
func clientListNames(t *testing.T, reply string) [][]string {
	t.Helper()
	require.True(t, strings.HasPrefix(reply, "$") || strings.HasPrefix(reply, "="), reply)
	body := reply[strings.Index(reply, "\r\n")+2 : len(reply)-2]
	if reply[0] == '=' {
		body = strings.TrimPrefix(body, "txt:")
	}
	var out [][]string
	for _, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		var names []string
		for _, f := range strings.Split(line, " ") {
			k, _, ok := strings.Cut(f, "=")
			require.True(t, ok, "%q in %q", f, line)
			names = append(names, k)
		}
		out = append(out, names)
	}
	return out
}

func TestClientListFieldsLikeRedis(t *testing.T) {
	d := NewDiff(t)
	d.Do("CLIENT", "SETNAME", "lister")
	z, r := clientListNames(t, d.Z.Do("CLIENT", "LIST")), clientListNames(t, d.R.Do("CLIENT", "LIST"))
	diffCases.Add(1)
	require.NotEmpty(t, z)
	assert.Equal(t, r[0], z[0], "the same fields in the same order")
	for _, l := range z {
		assert.Equal(t, r[0], l)
	}
	zi := d.Z.Do("CLIENT", "INFO")
	assert.Contains(t, zi, " name=lister ")
	assert.Contains(t, zi, " flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 ")
	assert.Equal(t, clientListNames(t, d.R.Do("CLIENT", "INFO"))[0], clientListNames(t, zi)[0])
	d.Do("CLIENT", "NO-EVICT", "on")
	assert.Contains(t, d.Z.Do("CLIENT", "INFO"), " flags=e ")
	// TYPE and ID filters.
	self := strings.Trim(d.Z.Do("CLIENT", "ID"), ":\r\n")
	byID := d.Z.Do("CLIENT", "LIST", "ID", self, "999999")
	assert.Len(t, clientListNames(t, byID), 1)
	assert.Contains(t, byID, "id="+self+" ")
	assert.Contains(t, d.Z.Do("CLIENT", "LIST", "TYPE", "normal"), "id="+self+" ")
	empty := "$0\r\n\r\n"
	if diffResp3 {
		empty = "=4\r\ntxt:\r\n"
	}
	assert.Equal(t, empty, d.Z.Do("CLIENT", "LIST", "TYPE", "pubsub"))
}

func TestClientKillDiff(t *testing.T) {
	onBoth(t, func(t *testing.T, p *Proc) {
		a, b, c := Dial(t, p.Addr), Dial(t, p.Addr), Dial(t, p.Addr)
		bid := strings.Trim(b.Do("CLIENT", "ID"), ":\r\n")
		require.Equal(t, ":1\r\n", a.Do("CLIENT", "KILL", "ID", bid))
		_, err := b.ReadErr(5 * time.Second)
		assert.Error(t, err, "killed")
		assert.Equal(t, ":0\r\n", a.Do("CLIENT", "KILL", "ID", bid), "gone at once")
		assert.NotContains(t, a.Do("CLIENT", "LIST"), "id="+bid+" ")
		// The old form by address; then killing oneself answers first.
		require.Equal(t, "+OK\r\n", a.Do("CLIENT", "SETNAME", "killer"))
		c.Send(Encode("CLIENT", "KILL", "LADDR", p.Addr, "SKIPME", "no"))
		out, _ := c.ReadErr(10 * time.Second)
		n, _ := strconv.Atoi(strings.Trim(out, ":\r\n"))
		assert.GreaterOrEqual(t, n, 2, "a and c at least: %q", out)
		_, err = c.ReadErr(5 * time.Second)
		assert.Error(t, err, "c closed itself after the reply")
		_, err = a.ReadErr(5 * time.Second)
		assert.Error(t, err, "a killed")
	})
}

func TestClientReplyDiff(t *testing.T) {
	d := NewDiff(t)
	var req []byte
	for _, args := range [][]string{
		{"CLIENT", "REPLY", "OFF"}, {"SET", "k", "1"}, {"NOSUCH"}, {"GET"}, {"CLIENT", "REPLY", "SKIP"},
		{"CLIENT", "REPLY", "ON"}, {"GET", "k"}, {"CLIENT", "REPLY", "SKIP"}, {"INCR", "k"}, {"INCR", "k"},
		{"CLIENT", "REPLY", "SKIP"}, {"CLIENT", "REPLY", "ON"}, {"GET", "k"},
	} {
		req = append(req, Encode(args...)...)
	}
	d.Z.Send(req)
	d.R.Send(req)
	for i := 0; i < 4; i++ {
		z, r := d.Z.Read(), d.R.Read()
		diffCases.Add(1)
		assert.Equal(t, r, z, "reply %d", i)
	}
	d.Do("PING")
}

func TestClientPauseDiff(t *testing.T) {
	onBoth(t, func(t *testing.T, p *Proc) {
		a, b := Dial(t, p.Addr), Dial(t, p.Addr)
		require.Equal(t, "+OK\r\n", a.Do("CLIENT", "PAUSE", "60000", "WRITE"))
		assert.Equal(t, "$-1\r\n", b.Do("GET", "k"), "reads are not paused")
		assert.Equal(t, "-ERR wrong number of arguments for 'set' command\r\n", b.Do("SET", "k"), "rejected commands are not paused")
		b.Send(Encode("SET", "k", "v"))
		_, err := b.ReadErr(300 * time.Millisecond)
		require.Error(t, err, "the write is held")
		require.Equal(t, "+OK\r\n", a.Do("CLIENT", "UNPAUSE"))
		out, err := b.ReadErr(10 * time.Second)
		require.NoError(t, err)
		assert.Equal(t, "+OK\r\n", out)
		// ALL holds every command, the pausing client's too.
		require.Equal(t, "+OK\r\n", a.Do("CLIENT", "PAUSE", "400", "ALL"))
		start := time.Now()
		assert.Equal(t, "+PONG\r\n", a.Do("PING"))
		assert.GreaterOrEqual(t, time.Since(start), 250*time.Millisecond)
	})
}

// go-redis v9 sends CLIENT SETINFO when it connects; 7.0 refuses it and
// go-redis ignores that. zredis accepts it (Redis 7.2's behaviour) without
// listing it in COMMAND or CLIENT HELP.
func TestClientSetinfoAccepted(t *testing.T) {
	d := NewDiff(t)
	assert.Equal(t, "+OK\r\n", d.Z.Do("CLIENT", "SETINFO", "LIB-NAME", "go-redis(,go1.26)"))
	assert.Equal(t, "+OK\r\n", d.Z.Do("CLIENT", "SETINFO", "lib-ver", "9.23.0"))
	assert.Equal(t, "-ERR lib-ver cannot contain spaces, newlines or special characters.\r\n", d.Z.Do("CLIENT", "SETINFO", "lib-ver", "a b"))
	assert.Equal(t, "-ERR Unrecognized option 'x'\r\n", d.Z.Do("CLIENT", "SETINFO", "x", "y"))
	assert.Equal(t, "+OK\r\n", d.Z.Do("CLIENT", "NO-TOUCH", "ON"))
	assert.NotContains(t, d.Z.Do("COMMAND", "INFO", "client"), "setinfo")
}

// sameOnBoth runs fn against a fresh zredis and a fresh redis-server
// started with args and requires the two to make the same observations,
// in the same order.
func sameOnBoth(t *testing.T, args []string, fn func(t *testing.T, p *Proc) []string) {
	t.Helper()
	RequireRedis(t)
	z := fn(t, StartZredis(t, args...))
	r := fn(t, StartRedis(t, args...))
	diffCases.Add(int64(len(r)))
	require.Equal(t, len(r), len(z), "observations:\n zredis: %q\n  redis: %q", z, r)
	for i := range r {
		assert.Equal(t, r[i], z[i], "observation %d", i)
	}
}

// clientSummary is the CLIENT LIST line of client id, as seen from c, cut
// down to names: the fields the query buffer and a held command show,
// and tot-mem less rbs (the reply buffer Redis shrinks for an idle
// client, which zredis keeps at 16 KiB).
func clientSummary(t *testing.T, c *Conn, id string, names ...string) string {
	t.Helper()
	f := clientFields(t, c, id)
	require.NotNil(t, f, "client %s listed", id)
	var out []string
	for _, n := range names {
		if n == "tot-mem-rbs" {
			out = append(out, n+"="+strconv.FormatInt(fieldInt64(t, f, "tot-mem")-fieldInt64(t, f, "rbs"), 10))
			continue
		}
		out = append(out, n+"="+f[n])
	}
	return strings.Join(out, " ")
}

// blockedInfo is INFO clients' blocked_clients and
// clients_in_timeout_table.
func blockedInfo(t *testing.T, c *Conn) string {
	t.Helper()
	return "blocked_clients=" + infoField(t, c, "clients", "blocked_clients") +
		" clients_in_timeout_table=" + infoField(t, c, "clients", "clients_in_timeout_table")
}

// TestClientPausedIsBlockedDiff: a client whose command CLIENT PAUSE
// holds is blocked to Redis 7.0 (blockClient BLOCKED_POSTPONE): flag b,
// counted in blocked_clients but not in the timeout table, its command
// as cmd= with its arguments in argv-mem, and what follows it still in
// its query buffer. Of the clients blocked in a command, only those with
// a timeout are in the timeout table.
func TestClientPausedIsBlockedDiff(t *testing.T) {
	fields := []string{"flags", "multi", "qbuf", "qbuf-free", "argv-mem", "tot-mem-rbs", "cmd"}
	sameOnBoth(t, nil, func(t *testing.T, p *Proc) []string {
		ctl, w := Dial(t, p.Addr), Dial(t, p.Addr)
		id := strings.Trim(w.Do("CLIENT", "ID"), ":\r\n")
		obs := []string{blockedInfo(t, ctl)}
		require.Equal(t, "+OK\r\n", ctl.Do("CLIENT", "PAUSE", "60000", "WRITE"))
		// SET and a GET behind it, in one write.
		w.Send(append(Encode("SET", "k", "v"), Encode("GET", "k")...))
		waitBlocked(t, ctl, 1)
		obs = append(obs, blockedInfo(t, ctl), clientSummary(t, ctl, id, fields...))
		require.Equal(t, "+OK\r\n", ctl.Do("CLIENT", "UNPAUSE"))
		obs = append(obs, w.Read(), w.Read())
		waitBlocked(t, ctl, 0)
		obs = append(obs, blockedInfo(t, ctl), clientSummary(t, ctl, id, fields...))
		// A paused script, whose flags say it may write.
		require.Equal(t, "+OK\r\n", ctl.Do("CLIENT", "PAUSE", "60000", "WRITE"))
		w.Send(Encode("EVAL", "return redis.call('incr', KEYS[1])", "1", "n"))
		waitBlocked(t, ctl, 1)
		obs = append(obs, blockedInfo(t, ctl), clientSummary(t, ctl, id, fields...))
		require.Equal(t, "+OK\r\n", ctl.Do("CLIENT", "UNPAUSE"))
		obs = append(obs, w.Read())
		waitBlocked(t, ctl, 0)

		// Blocked in commands: forever, with a timeout.
		b0, b1 := Dial(t, p.Addr), Dial(t, p.Addr)
		id0 := strings.Trim(b0.Do("CLIENT", "ID"), ":\r\n")
		b0.Send(Encode("BLPOP", "l", "0"))
		waitBlocked(t, ctl, 1)
		obs = append(obs, blockedInfo(t, ctl), clientSummary(t, ctl, id0, fields...))
		b1.Send(Encode("BZPOPMIN", "z", "100"))
		waitBlocked(t, ctl, 2)
		obs = append(obs, blockedInfo(t, ctl))
		// Paused behind the blocked ones: counted with them.
		require.Equal(t, "+OK\r\n", ctl.Do("CLIENT", "PAUSE", "60000", "WRITE"))
		w.Send(Encode("DEL", "x"))
		waitBlocked(t, ctl, 3)
		obs = append(obs, blockedInfo(t, ctl))
		require.Equal(t, "+OK\r\n", ctl.Do("CLIENT", "UNPAUSE"))
		obs = append(obs, w.Read())
		require.Equal(t, ":1\r\n", ctl.Do("RPUSH", "l", "a"))
		require.Equal(t, ":1\r\n", ctl.Do("ZADD", "z", "1", "m"))
		obs = append(obs, b0.Read(), b1.Read())
		waitBlocked(t, ctl, 0)
		return append(obs, blockedInfo(t, ctl))
	})
}

// waitQueryBufFree waits until client id's qbuf-free is want: Redis's
// cron gives query buffers back within a few of its 100 ms runs.
func waitQueryBufFree(t *testing.T, c *Conn, id, want string, within time.Duration) {
	t.Helper()
	var f map[string]string
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if f = clientFields(t, c, id); f["qbuf-free"] == want {
			return
		}
	}
	t.Fatalf("qbuf-free never %s: %v", want, f)
}

// TestClientQueryBufferDiff: CLIENT LIST's query buffer fields follow
// Redis's query buffer: empty between commands (qbuf=0) with the room of
// its 16 KiB allocation (qbuf-free=20474 under jemalloc), the request
// itself while it runs (a client's own CLIENT INFO), given back after a
// big argument at the cron's next run, and after 2 idle seconds
// (clientsCronResizeQueryBuffer); INFO's client_recent_max_input_buffer
// samples the buffers' allocations, a big argument's included.
func TestClientQueryBufferDiff(t *testing.T) {
	fields := []string{"qbuf", "qbuf-free", "argv-mem", "tot-mem-rbs"}
	sameOnBoth(t, nil, func(t *testing.T, p *Proc) []string {
		ctl, w := Dial(t, p.Addr), Dial(t, p.Addr)
		id := strings.Trim(w.Do("CLIENT", "ID"), ":\r\n")
		obs := []string{clientSummary(t, ctl, id, fields...)}
		self := w.Do("CLIENT", "INFO")
		f := map[string]string{}
		for _, kv := range strings.Fields(self[strings.Index(self, "\r\n")+2:]) {
			k, v, _ := strings.Cut(kv, "=")
			f[k] = v
		}
		obs = append(obs, "self qbuf="+f["qbuf"]+" qbuf-free="+f["qbuf-free"]+" argv-mem="+f["argv-mem"])
		require.Equal(t, "+OK\r\n", w.Do("SET", "big", strings.Repeat("x", 100000)))
		waitQueryBufFree(t, ctl, id, "0", 5*time.Second)
		obs = append(obs, clientSummary(t, ctl, id, fields...),
			"recent_max_input="+infoField(t, ctl, "clients", "client_recent_max_input_buffer"))
		require.Equal(t, "+PONG\r\n", w.Do("PING"))
		obs = append(obs, clientSummary(t, ctl, id, fields...))
		// Idle for more than 2 seconds: given back.
		waitQueryBufFree(t, ctl, id, "0", 10*time.Second)
		obs = append(obs, clientSummary(t, ctl, id, fields...))
		return append(obs, w.Do("GET", "big")[:8])
	})
}

// TestConnResetStateDiff: RESET leaves the connection as 7.0's
// clearClientConnectionState does: database 0, no MULTI, nothing
// watched, no subscription of any kind, no name, the default user,
// replies on, out of MONITOR; and what 7.0 keeps stays (CLIENT NO-EVICT,
// and CLIENT REPLY SKIP's skip of RESET's own reply).
func TestConnResetStateDiff(t *testing.T) {
	infoFields := []string{"name", "flags", "db", "sub", "psub", "ssub", "multi", "user", "resp"}
	sameOnBoth(t, nil, func(t *testing.T, p *Proc) []string {
		ctl, w := Dial(t, p.Addr), Dial(t, p.Addr)
		require.Equal(t, "+OK\r\n", ctl.Do("ACL", "SETUSER", "u", "on", ">pw", "~*", "&*", "+@all"))
		id := strings.Trim(w.Do("CLIENT", "ID"), ":\r\n")
		var obs []string
		for _, args := range [][]string{
			{"SELECT", "3"}, {"CLIENT", "SETNAME", "before"}, {"CLIENT", "NO-EVICT", "on"}, {"AUTH", "u", "pw"},
			{"WATCH", "k"}, {"SUBSCRIBE", "c"}, {"PSUBSCRIBE", "p*"}, {"SSUBSCRIBE", "s"}, {"RESET"},
		} {
			obs = append(obs, w.Do(args...))
		}
		obs = append(obs, clientSummary(t, ctl, id, infoFields...), w.Do("ACL", "WHOAMI"),
			ctl.Do("PUBSUB", "NUMSUB", "c"), ctl.Do("PUBSUB", "NUMPAT"), ctl.Do("PUBSUB", "SHARDNUMSUB", "s"),
			ctl.Do("PUBLISH", "c", "m"), w.Do("PING"))
		// Nothing watched any more: a change of k does not fail EXEC.
		obs = append(obs, w.Do("MULTI"), ctl.Do("SET", "k", "v"), w.Do("PING"), w.Do("EXEC"))
		// RESET inside MULTI runs at once and discards the transaction.
		obs = append(obs, w.Do("MULTI"), w.Do("SET", "a", "b"), w.Do("RESET"), w.Do("EXEC"), w.Do("GET", "a"))
		// Replies: OFF is cleared; SKIP drops RESET's own reply.
		w.Send(append(Encode("CLIENT", "REPLY", "OFF"), Encode("RESET")...))
		obs = append(obs, w.Read(), w.Do("PING"))
		w.Send(append(append(Encode("CLIENT", "REPLY", "SKIP"), Encode("RESET")...), Encode("PING")...))
		obs = append(obs, w.Read())
		// Out of MONITOR: the next command's line is not sent to it.
		obs = append(obs, w.Do("MONITOR"), w.Do("RESET"), ctl.Do("SET", "mon", "1"), w.Do("PING"),
			clientSummary(t, ctl, id, infoFields...))
		return obs
	})
}
