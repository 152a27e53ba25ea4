package replication

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/commands"
	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/persistence/rdb"
)

// These tests run a Link against a master written here, which speaks the
// master's side of replication.c on a loopback socket, so that the
// replica's handshake, loading, stream, acknowledgements and reconnection
// are checked without server/ (and without redis-server).

// linkWait bounds every wait for the link: generous, since it only
// decides how long a broken link takes to fail the test, never whether a
// working one passes on a busy machine.
const linkWait = 15 * time.Second

// announcedPort is the port the replica's configuration gives, which it
// announces with REPLCONF listening-port.
const announcedPort = "6390"

// testReplID is the master's replication ID (40 hex digits).
const testReplID = "0123456789abcdef0123456789abcdef01234567"

// fakeMaster accepts the replica's connections on 127.0.0.1 and hands
// each to the test, which plays the master's side on it.
type fakeMaster struct {
	ln       net.Listener
	accepted chan *masterConn
	done     chan struct{} // closed when the test ends: readers stop
	wg       sync.WaitGroup
	mu       sync.Mutex
	open     []*masterConn
}

func newFakeMaster(t *testing.T) *fakeMaster {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	fm := &fakeMaster{ln: ln, accepted: make(chan *masterConn, 16), done: make(chan struct{})}
	fm.wg.Add(1)
	go fm.acceptLoop()
	t.Cleanup(fm.close)
	return fm
}

func (fm *fakeMaster) port() int { return fm.ln.Addr().(*net.TCPAddr).Port }

func (fm *fakeMaster) acceptLoop() {
	defer fm.wg.Done()
	for {
		c, err := fm.ln.Accept()
		if err != nil {
			return // closed by close
		}
		mc := &masterConn{c: c, cmds: make(chan []string, 256), done: fm.done}
		fm.mu.Lock()
		fm.open = append(fm.open, mc)
		fm.mu.Unlock()
		fm.wg.Add(1)
		go func() {
			defer fm.wg.Done()
			mc.readLoop()
		}()
		select {
		case fm.accepted <- mc:
		default:
			// The test takes no more connections (a link retrying
			// until the cleanup stops it): refused, as a master that
			// went away.
			c.Close()
		}
	}
}

// close stops accepting, closes every connection and waits for the
// goroutines.
func (fm *fakeMaster) close() {
	close(fm.done)
	fm.ln.Close()
	fm.mu.Lock()
	for _, mc := range fm.open {
		mc.c.Close()
	}
	fm.mu.Unlock()
	fm.wg.Wait()
}

// accept is the replica's next connection.
func (fm *fakeMaster) accept(t *testing.T) *masterConn {
	t.Helper()
	select {
	case mc := <-fm.accepted:
		return mc
	case <-time.After(linkWait):
		t.Fatalf("the replica did not connect within %v", linkWait)
		return nil
	}
}

// masterConn is one connection from the replica. A goroutine reads the
// replica's commands into cmds (closed at EOF), so that its REPLCONF ACKs
// never block it while the test writes.
type masterConn struct {
	c    net.Conn
	cmds chan []string
	done <-chan struct{}
}

func (mc *masterConn) readLoop() {
	defer close(mc.cmds)
	br := bufio.NewReader(mc.c)
	for {
		cmd, err := readCommand(br)
		if err != nil {
			return
		}
		select {
		case mc.cmds <- cmd:
		case <-mc.done:
			return
		}
	}
}

// readCommand reads one command as a replica sends it: a RESP array of
// bulk strings.
func readCommand(br *bufio.Reader) ([]string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(line, "*"), "\r\n"))
	if err != nil || line[0] != '*' {
		return nil, fmt.Errorf("not a multibulk: %q", line)
	}
	args := make([]string, n)
	for i := range args {
		if line, err = br.ReadString('\n'); err != nil {
			return nil, err
		}
		size, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(line, "$"), "\r\n"))
		if err != nil || line[0] != '$' {
			return nil, fmt.Errorf("not a bulk: %q", line)
		}
		b := make([]byte, size+2)
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, err
		}
		args[i] = string(b[:size])
	}
	return args, nil
}

// next is the replica's next command.
func (mc *masterConn) next(t *testing.T) []string {
	t.Helper()
	select {
	case cmd, ok := <-mc.cmds:
		require.True(t, ok, "the replica closed the connection")
		return cmd
	case <-time.After(linkWait):
		t.Fatalf("the replica sent nothing within %v", linkWait)
		return nil
	}
}

func (mc *masterConn) send(t *testing.T, s string) {
	t.Helper()
	mc.c.SetWriteDeadline(time.Now().Add(linkWait))
	_, err := io.WriteString(mc.c, s)
	require.NoError(t, err)
}

// handshake plays the master's replies to the replica's handshake, checks
// its commands are Redis 7.0's (syncWithMaster, without masterauth or
// replica-announce-ip) in Redis's order, and returns the PSYNC it ends
// with, unanswered.
func (mc *masterConn) handshake(t *testing.T) []string {
	t.Helper()
	for _, step := range []struct {
		want  []string
		reply string
	}{
		{[]string{"PING"}, "+PONG\r\n"},
		{[]string{"REPLCONF", "listening-port", announcedPort}, "+OK\r\n"},
		{[]string{"REPLCONF", "capa", "eof", "capa", "psync2", "capa", capaFieldTTL}, "+OK\r\n"},
	} {
		require.Equal(t, step.want, mc.next(t))
		mc.send(t, step.reply)
	}
	psync := mc.next(t)
	require.NotEmpty(t, psync)
	require.Equal(t, "PSYNC", psync[0])
	return psync
}

// fullSync answers PSYNC with +FULLRESYNC and a payload of the given
// length.
func (mc *masterConn) fullSync(t *testing.T, offset int64, payload []byte) {
	t.Helper()
	mc.send(t, fmt.Sprintf("+FULLRESYNC %s %d\r\n$%d\r\n%s", testReplID, offset, len(payload), payload))
}

// waitAck waits for REPLCONF ACK off; the replica's other ACKs (one a
// second, with whatever offset it is at) are skipped.
func (mc *masterConn) waitAck(t *testing.T, off int64) {
	t.Helper()
	want := strconv.FormatInt(off, 10)
	var seen []string
	deadline := time.After(linkWait)
	for {
		select {
		case cmd, ok := <-mc.cmds:
			require.True(t, ok, "the replica closed the connection; ACKs seen: %v", seen)
			require.Len(t, cmd, 3, "%q", cmd)
			require.Equal(t, []string{"REPLCONF", "ACK"}, cmd[:2], "%q", cmd)
			if cmd[2] == want {
				return
			}
			seen = append(seen, cmd[2])
		case <-deadline:
			t.Fatalf("no REPLCONF ACK %s within %v; ACKs seen: %v", want, linkWait, seen)
		}
	}
}

// waitClosed waits for the replica to close the connection.
func (mc *masterConn) waitClosed(t *testing.T) {
	t.Helper()
	deadline := time.After(linkWait)
	for {
		select {
		case _, ok := <-mc.cmds:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatalf("the replica kept the connection for %v", linkWait)
		}
	}
}

// command is args as a master streams them.
func command(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}

// rdbKey is a string key of an RDB payload.
type rdbKey struct {
	db       int
	key, val string
}

// rdbPayload is an RDB file as a master sends it for a full sync, with
// the aux fields a master adds (rdbPopulateSaveInfo) and the keys given,
// grouped by database in the order given.
func rdbPayload(t *testing.T, aux [][2]string, keys []rdbKey) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := rdb.NewWriter(&buf, rdb.WriterOptions{Checksum: true, Aux: aux})
	require.NoError(t, err)
	for i := 0; i < len(keys); {
		j := i
		for j < len(keys) && keys[j].db == keys[i].db {
			j++
		}
		require.NoError(t, w.SelectDB(keys[i].db, j-i, 0))
		for _, k := range keys[i:j] {
			require.NoError(t, w.WriteEntry(k.key, keyspace.NewString([]byte(k.val), 0)))
		}
		i = j
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// linkHost is the LinkHost of the tests: the payload is loaded with the
// rdb package straight into the keyspace, as the server's persistence
// does without its batching; errors of the stream and panics are
// recorded.
type linkHost struct {
	t      *testing.T
	ks     *keyspace.Keyspace
	dir    string
	nextID int64 // under the keyspace lock

	mu         sync.Mutex
	unexpected []string // commands of the stream that got an error
}

func (h *linkHost) SetRole(byte)                 {}
func (h *linkHost) Closing() bool                { return false }
func (h *linkHost) DisconnectBlockedClients()    {}
func (h *linkHost) NewClientID() int64           { h.nextID++; return h.nextID }
func (h *linkHost) BigValueArriving()            {}
func (h *linkHost) TLSClientConfig() *tls.Config { return nil }
func (h *linkHost) RDBPath() string              { return filepath.Join(h.dir, "dump.rdb") }
func (h *linkHost) LoadedExpired() int64         { return 0 }
func (h *linkHost) RewriteAOFAfterSync()         {}

func (h *linkHost) LoadRDB(r io.Reader, aborted func() bool) (int, [][2]string, error) {
	info, err := rdb.Load(r, rdb.DefaultLoadOptions(), func(db int, key string, e *keyspace.Entry) error {
		if aborted() {
			return fmt.Errorf("aborted")
		}
		if db < 0 || db >= h.ks.NumDBs() {
			return fmt.Errorf("database %d out of range", db)
		}
		h.ks.Exec(func() { h.ks.DB(db).Insert(key, e) })
		return nil
	})
	return info.Keys, info.Aux, err
}

func (h *linkHost) UnexpectedError(cl *engine.Client, args [][]byte, reply []byte, from, to string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.unexpected = append(h.unexpected, string(args[0]))
	return string(args[0])
}

// Panic fails the test: with replica-read-only and the default
// propagation-error-behavior (ignore), nothing a master sends may end
// the replica.
func (h *linkHost) Panic(msg string) { h.t.Errorf("the replica panicked: %s", msg) }

func (h *linkHost) unexpectedErrors() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.unexpected...)
}

// linkServer is the engine.Server the master's commands run against:
// what the command path of SET, SELECT, MULTI and the like reaches. The
// embedded nil interface makes any other call panic, which would show
// the test needs more.
type linkServer struct {
	engine.Server
	cfg   *config.Config
	stats *engine.ServerStats
	ps    *engine.Subscriptions
}

func (s *linkServer) Config() *config.Config          { return s.cfg }
func (s *linkServer) Stats() *engine.ServerStats      { return s.stats }
func (s *linkServer) PubSub() *engine.Subscriptions   { return s.ps }
func (s *linkServer) Persistence() engine.Persistence { return writablePersistence{} }

// writablePersistence never refuses writes (no failed save).
type writablePersistence struct{ engine.Persistence }

func (writablePersistence) WritesRefused() string { return "" }

// noFunctions is a server without function libraries: a full sync
// flushes them.
type noFunctions struct{ engine.FunctionLibraries }

func (noFunctions) Flush()          {}
func (noFunctions) Codes() []string { return nil }

// recLog keeps the link's log lines, shown when a test fails.
type recLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *recLog) Noticef(format string, args ...any)  { l.add("* ", format, args) }
func (l *recLog) Warningf(format string, args ...any) { l.add("# ", format, args) }
func (l *recLog) add(level, format string, args []any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, level+fmt.Sprintf(format, args...))
}

func (l *recLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// linkEnv is a replica: keyspace, dispatcher, master side and Link.
type linkEnv struct {
	ks   *keyspace.Keyspace
	m    *Master
	link *Link
	host *linkHost
	log  *recLog
}

// newLinkEnv makes a server started as a replica (no cached master: its
// data set is no history a master knows) whose link is not started yet.
func newLinkEnv(t *testing.T) *linkEnv {
	t.Helper()
	dir := t.TempDir()
	cfg, err := config.Load("", "dir "+config.Repr(dir)+"\nport "+announcedPort+"\nrepl-timeout 15")
	require.NoError(t, err)
	ks := keyspace.New(16, keyspace.SystemClock{})
	stats := &engine.ServerStats{}
	srv := &linkServer{cfg: cfg, stats: stats, ps: engine.NewPubSub(cfg, stats, func(*engine.Client, []byte) {})}
	disp := engine.NewDispatcher(ks, srv, commands.Table())
	disp.Functions = noFunctions{}
	log := &recLog{}
	host := &linkHost{t: t, ks: ks, dir: dir}
	m := NewMaster(&fakeHost{conns: map[int64]*fakeConn{}}, ks, cfg, log, stats)
	e := &linkEnv{ks: ks, m: m, link: NewLink(host, m, ks, disp, cfg, log, stats, true), host: host, log: log}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("replica's log:\n%s", log)
		}
	})
	return e
}

// start starts the link to fm, as a server started with replicaof does,
// and stops it, waiting for its goroutine, when the test ends.
func (e *linkEnv) start(t *testing.T, fm *fakeMaster) {
	t.Helper()
	e.ks.Exec(func() { e.link.Start("127.0.0.1", fm.port()) })
	t.Cleanup(func() {
		e.ks.Exec(e.link.Stop)
		e.link.Wait()
	})
}

// get reads a string key of database db.
func (e *linkEnv) get(db int, key string) (val string, ok bool) {
	e.ks.Exec(func() {
		if en := e.ks.DB(db).Peek([]byte(key)); en != nil {
			val, ok = string(en.Str()), true
		}
	})
	return val, ok
}

func (e *linkEnv) keys() (n int) {
	e.ks.Exec(func() {
		for i := 0; i < e.ks.NumDBs(); i++ {
			n += e.ks.DB(i).Len()
		}
	})
	return n
}

func (e *linkEnv) offset() (off int64) {
	e.ks.Exec(func() { off = e.m.Stream().Offset() })
	return off
}

func (e *linkEnv) status() (st LinkStatus) {
	e.ks.Exec(func() { st, _ = e.link.Status() })
	return st
}

// waitFor polls cond until it holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(linkWait); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, linkWait)
		}
	}
}

func (e *linkEnv) waitValue(t *testing.T, db int, key, want string) {
	t.Helper()
	waitFor(t, fmt.Sprintf("db %d key %q = %q", db, key, want), func() bool {
		v, ok := e.get(db, key)
		return ok && v == want
	})
}

// A replica started as one: the handshake in Redis's order with PSYNC ?
// -1, the master's RDB in place of its data, the stream applied in the
// database the RDB's repl-stream-db names, REPLCONF GETACK answered with
// the offset of the bytes before it (a transaction's once its EXEC ran,
// an error's too), and once the master closes the link, a reconnection
// offering PSYNC <replid> <offset+1>, which +CONTINUE continues without
// a reload.
func TestLinkSyncsStreamsAndContinues(t *testing.T) {
	fm := newFakeMaster(t)
	e := newLinkEnv(t)
	e.ks.Exec(func() { e.ks.DB(0).SetString([]byte("before-sync"), []byte("x"), false, 0) })
	e.start(t, fm)

	mc := fm.accept(t)
	require.Equal(t, []string{"PSYNC", "?", "-1"}, mc.handshake(t), "no cached master: a full sync")

	const fullOff = 1000
	mc.fullSync(t, fullOff, rdbPayload(t, [][2]string{{"repl-stream-db", "1"}, {"repl-id", testReplID}, {"repl-offset", "1000"}},
		[]rdbKey{{0, "rdb:a", "1"}, {1, "rdb:b", "hello"}, {1, "rdb:c", strings.Repeat("v", 100)}}))
	waitFor(t, "link up after the full sync", func() bool { return e.status().Up })
	e.waitValue(t, 0, "rdb:a", "1")
	e.waitValue(t, 1, "rdb:b", "hello")
	e.waitValue(t, 1, "rdb:c", strings.Repeat("v", 100))
	_, ok := e.get(0, "before-sync")
	assert.False(t, ok, "the replica's own data goes with a full sync")
	assert.Equal(t, 3, e.keys())
	assert.Equal(t, int64(fullOff), e.offset(), "the stream starts at FULLRESYNC's offset")

	// Without a SELECT the stream continues in repl-stream-db. An unknown
	// command gets an error here, which is logged and counted but ends
	// nothing; its bytes count as any command's.
	stream := command("SET", "s1", "v1") + command("SELECT", "0") + command("SET", "s2", "v2") +
		command("PING") + command("NOSUCHCOMMAND", "x") + command("INCR", "n")
	getack := command("REPLCONF", "GETACK", "*")
	mc.send(t, stream+getack)
	mc.waitAck(t, fullOff+int64(len(stream)))
	e.waitValue(t, 1, "s1", "v1")
	e.waitValue(t, 0, "s2", "v2")
	e.waitValue(t, 0, "n", "1")
	assert.Equal(t, []string{"NOSUCHCOMMAND"}, e.host.unexpectedErrors())
	off := fullOff + int64(len(stream)+len(getack)) // GETACK counts once answered
	waitFor(t, "offset past the GETACK", func() bool { return e.offset() == off })

	tx := command("MULTI") + command("SET", "t1", "a") + command("INCR", "n") + command("EXEC")
	mc.send(t, tx+getack)
	mc.waitAck(t, off+int64(len(tx)))
	e.waitValue(t, 0, "t1", "a")
	e.waitValue(t, 0, "n", "2")
	off += int64(len(tx) + len(getack))
	waitFor(t, "offset past the second GETACK", func() bool { return e.offset() == off })

	// The master goes: the replica notices, and offers to continue.
	mc.c.Close()
	mc2 := fm.accept(t)
	require.Equal(t, []string{"PSYNC", testReplID, strconv.FormatInt(off+1, 10)}, mc2.handshake(t))
	mc2.send(t, "+CONTINUE "+testReplID+"\r\n")
	// The stream goes on in the database it was in (SELECT 0).
	more := command("SET", "after", "continue")
	mc2.send(t, more+getack)
	mc2.waitAck(t, off+int64(len(more)))
	e.waitValue(t, 0, "after", "continue")
	e.waitValue(t, 1, "rdb:b", "hello") // no reload: the data set stays
	assert.True(t, e.status().Up)
	assert.Equal(t, 8, e.keys())
}

// A master that sends garbage at any point of the sync ends the
// session, never the replica: the link logs why, drops the connection
// and reconnects, offering what it can continue. A failed load leaves
// no partial data set and no cached master (PSYNC ? -1 again); a stream
// broken after some commands offers the offset of those applied.
func TestLinkSurvivesAGarbledMaster(t *testing.T) {
	good := func(t *testing.T) []byte { return rdbPayload(t, nil, []rdbKey{{0, "k", "v"}}) }
	set := command("SET", "applied", "yes")
	for _, tc := range []struct {
		name string
		// garbage is what the master sends after the handshake; close:
		// then closes the connection.
		garbage func(t *testing.T) string
		close   bool
		log     string   // in the replica's log once it retried
		psync   []string // its next PSYNC
		keys    int      // left in the keyspace
	}{
		{
			name:    "FULLRESYNC without an offset",
			garbage: func(*testing.T) string { return "+FULLRESYNC " + testReplID + "\r\n" },
			log:     "Master replied with wrong +FULLRESYNC syntax.",
			psync:   []string{"PSYNC", "?", "-1"},
		},
		{
			name:    "unexpected PSYNC reply",
			garbage: func(*testing.T) string { return "+WHATEVER\r\n" },
			log:     "Unexpected reply to PSYNC from master: +WHATEVER",
			psync:   []string{"PSYNC", "?", "-1"},
		},
		{
			// Past the link's 64 KiB read buffer: the bound on a line is
			// checked when the buffer fills (or the read times out).
			name:    "endless line",
			garbage: func(*testing.T) string { return strings.Repeat("x", 80000) },
			log:     "the master sent a line longer than 4096 bytes",
			psync:   []string{"PSYNC", "?", "-1"},
		},
		{
			name:    "bulk length not a number",
			garbage: func(*testing.T) string { return "+FULLRESYNC " + testReplID + " 0\r\n$abc\r\n" },
			log:     "Bad protocol from MASTER: bulk length '$abc'",
			psync:   []string{"PSYNC", "?", "-1"},
		},
		{
			name:    "negative bulk length",
			garbage: func(*testing.T) string { return "+FULLRESYNC " + testReplID + " 0\r\n$-5\r\n" },
			log:     "Bad protocol from MASTER: bulk length '$-5'",
			psync:   []string{"PSYNC", "?", "-1"},
		},
		{
			name:    "no bulk at all",
			garbage: func(*testing.T) string { return "+FULLRESYNC " + testReplID + " 0\r\nhello\r\n" },
			log:     "the first byte is not '$'",
			psync:   []string{"PSYNC", "?", "-1"},
		},
		{
			name:    "bad EOF mark",
			garbage: func(*testing.T) string { return "+FULLRESYNC " + testReplID + " 0\r\n$EOF:short\r\n" },
			log:     "Bad EOF mark from MASTER",
			psync:   []string{"PSYNC", "?", "-1"},
		},
		{
			name: "payload cut short",
			garbage: func(t *testing.T) string {
				p := good(t)
				return fmt.Sprintf("+FULLRESYNC %s 0\r\n$%d\r\n%s", testReplID, len(p)+100, p)
			},
			close: true,
			log:   "I/O error trying to sync with MASTER",
			psync: []string{"PSYNC", "?", "-1"},
		},
		{
			name:    "payload not an RDB",
			garbage: func(*testing.T) string { return "+FULLRESYNC " + testReplID + " 0\r\n$10\r\n0123456789" },
			log:     "Failed trying to load the MASTER synchronization DB from disk",
			psync:   []string{"PSYNC", "?", "-1"},
		},
		{
			name: "RDB with a bad checksum",
			garbage: func(t *testing.T) string {
				p := good(t)
				p[len(p)-1] ^= 0xff
				return fmt.Sprintf("+FULLRESYNC %s 0\r\n$%d\r\n%s", testReplID, len(p), p)
			},
			log:   "Failed trying to load the MASTER synchronization DB from disk",
			psync: []string{"PSYNC", "?", "-1"},
		},
		{
			name: "bad bulk length in the stream",
			garbage: func(t *testing.T) string {
				p := good(t)
				return fmt.Sprintf("+FULLRESYNC %s 500\r\n$%d\r\n%s", testReplID, len(p), p) + set + "*2\r\n$3\r\nSET\r\n$abc\r\n"
			},
			log:   "Connection with master lost",
			psync: []string{"PSYNC", testReplID, strconv.Itoa(500 + len(set) + 1)},
			keys:  2,
		},
		{
			name: "bulk longer than proto-max-bulk-len in the stream",
			garbage: func(t *testing.T) string {
				p := good(t)
				return fmt.Sprintf("+FULLRESYNC %s 500\r\n$%d\r\n%s", testReplID, len(p), p) + set + "*1\r\n$99999999999999\r\n"
			},
			log:   "Connection with master lost",
			psync: []string{"PSYNC", testReplID, strconv.Itoa(500 + len(set) + 1)},
			keys:  2,
		},
		{
			name: "multibulk length not a number in the stream",
			garbage: func(t *testing.T) string {
				p := good(t)
				return fmt.Sprintf("+FULLRESYNC %s 500\r\n$%d\r\n%s", testReplID, len(p), p) + set + "*x\r\n"
			},
			log:   "Connection with master lost",
			psync: []string{"PSYNC", testReplID, strconv.Itoa(500 + len(set) + 1)},
			keys:  2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each case waits for the link's one-second retry: run them
			// side by side.
			t.Parallel()
			fm := newFakeMaster(t)
			e := newLinkEnv(t)
			e.start(t, fm)
			mc := fm.accept(t)
			require.Equal(t, []string{"PSYNC", "?", "-1"}, mc.handshake(t))
			mc.send(t, tc.garbage(t))
			if tc.close {
				mc.c.Close()
			} else {
				mc.waitClosed(t)
			}
			mc2 := fm.accept(t)
			assert.Contains(t, e.log.String(), tc.log)
			require.Equal(t, tc.psync, mc2.handshake(t))
			assert.Equal(t, tc.keys, e.keys())
			assert.False(t, e.status().Up)
		})
	}
}
