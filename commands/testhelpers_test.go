package commands

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/resp"
)

// Helpers for the command families' unit tests: run commands through the
// real dispatcher and table, without the network.
//
//	e := newTestEnv(t)
//	require.Equal(t, replyOK, e.run("SET", "k", "v"))
//	require.Equal(t, replyBulk("v"), e.run("GET", "k"))
//	require.Equal(t, 1, e.dirty())

// testEpochMs is where a test environment's clock starts (2023-11-14).
const testEpochMs int64 = 1_700_000_000_000

// testEnv is one keyspace of 16 databases on a manual clock, a dispatcher
// with a fake Server, and one authenticated RESP2 client.
type testEnv struct {
	t      testing.TB
	Clock  *keyspace.ManualClock
	KS     *keyspace.Keyspace
	Srv    *fakeServer
	D      *engine.Dispatcher
	Client *engine.Client
}

func newTestEnv(t testing.TB) *testEnv {
	t.Helper()
	return newTestEnvWith(t, table)
}

// newTestEnvWith is newTestEnv running the commands of tbl.
func newTestEnvWith(t testing.TB, tbl *engine.Table) *testEnv {
	t.Helper()
	clock := keyspace.NewManualClock(testEpochMs)
	ks := keyspace.New(16, clock)
	srv := &fakeServer{cfg: config.New()}
	srv.stats.StartMs = testEpochMs
	cl := &engine.Client{
		ID:      1,
		Addr:    "127.0.0.1:50000",
		LAddr:   "127.0.0.1:6379",
		Created: testEpochMs,
		W:       resp.NewWriter(),
		Authed:  true,
	}
	srv.clients = []*engine.Client{cl}
	d := engine.NewDispatcher(ks, srv, tbl)
	d.Tracking = engine.NewTracking(srv.Config(), func(id int64) *engine.Client {
		for _, c := range srv.clients {
			if c.ID == id {
				return c
			}
		}
		return nil
	}, func(*engine.Client, []byte) {}, func() { ks.SetTracker(d.Tracking) })
	cl.User = d.ACL.Default
	ks.AddExpiredSink(d.PropagateExpired) // as the server wires it
	return &testEnv{t: t, Clock: clock, KS: ks, Srv: srv, D: d, Client: cl}
}

// run executes one command and returns the raw reply bytes.
func (e *testEnv) run(args ...string) string {
	e.t.Helper()
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	return e.runArgs(b)
}

// runArgs executes one command under the keyspace lock, then any work it
// offloaded with the lock released, and returns the raw reply bytes.
//
// The arguments are copied into one buffer that is overwritten as soon as
// the command returns, as a connection's read buffer is reused for the
// next request: a handler that stores an argument without copying it
// shows up as corrupted data in a later command.
func (e *testEnv) runArgs(args [][]byte) string {
	e.t.Helper()
	if len(args) == 0 {
		e.t.Fatal("run: no command")
	}
	n := 0
	for _, a := range args {
		n += len(a)
	}
	buf := make([]byte, 0, n)
	argv := make([][]byte, len(args))
	for i, a := range args {
		start := len(buf)
		buf = append(buf, a...)
		argv[i] = buf[start:len(buf):len(buf)]
	}
	e.KS.Lock()
	offload := e.D.Exec(e.Client, argv)
	e.KS.Unlock()
	if offload != nil {
		offload()
	}
	for i := range buf {
		buf[i] = '#'
	}
	out := string(e.Client.W.Bytes())
	e.Client.W.Reset()
	return out
}

// runAll executes commands in order and returns their replies.
func (e *testEnv) runAll(cmds ...[]string) []string {
	e.t.Helper()
	out := make([]string, len(cmds))
	for i, c := range cmds {
		out[i] = e.run(c...)
	}
	return out
}

// dirty is what the last command recorded with Ctx.Dirty.
func (e *testEnv) dirty() int { return e.Client.Ctx().Changes() }

// failed reports whether the last command replied with an error through
// Ctx.Error.
func (e *testEnv) failed() bool { return e.Client.Ctx().Failed() }

// withDB runs fn on the client's selected database under the keyspace
// lock, at the clock's current time, for set-up and inspection that no
// command provides.
func (e *testEnv) withDB(fn func(db *keyspace.DB)) {
	e.KS.Lock()
	defer e.KS.Unlock()
	e.KS.BeginCommand(true)
	fn(e.KS.DB(e.Client.DB))
}

// putObject stores a collection value of type typ (holding n elements)
// under key, so that a family can test its WRONGTYPE paths before the
// other types exist.
func (e *testEnv) putObject(key string, typ keyspace.Type, n int) {
	e.withDB(func(db *keyspace.DB) {
		db.Put([]byte(key), keyspace.NewObject(&fakeObject{typ: typ, n: n}, 0))
	})
}

// step is one command of a scenario and its exact reply.
type step struct {
	cmd  []string
	want string
}

// argv builds a command line, for tables of steps.
func argv(args ...string) []string { return args }

// runSteps runs a scenario on a fresh environment, requiring each reply,
// and returns the environment for further checks.
func runSteps(t *testing.T, steps []step) *testEnv {
	t.Helper()
	e := newTestEnv(t)
	for _, s := range steps {
		require.Equal(t, s.want, e.run(s.cmd...), "%q", s.cmd)
	}
	return e
}

// advance moves the clock forward.
func (e *testEnv) advance(d time.Duration) { e.Clock.Advance(d) }

// resp3 switches the client to RESP3 (as HELLO 3 does).
func (e *testEnv) resp3() { e.Client.W.SetProto(3) }

// fakeObject is a collection value of any type with no contents.
type fakeObject struct {
	typ keyspace.Type
	n   int
}

func (o *fakeObject) Type() keyspace.Type    { return o.typ }
func (o *fakeObject) Clone() keyspace.Object { c := *o; return &c }
func (o *fakeObject) Len() int               { return o.n }

// fakeServer is the Server of a test environment: a default
// configuration, counters, the test client; life-cycle calls are recorded
// and otherwise ignored.
type fakeServer struct {
	cfg       *config.Config
	stats     engine.ServerStats
	clients   []*engine.Client
	shutdowns []engine.ShutdownOptions
	waiting   bool // a shutdown waits for replicas: SHUTDOWN ABORT cancels it
	monitors  []*engine.Client
	pauseEnd  int64
	pauseAll  bool
	fed       [][]string
	warnings  []string // logged at the warning level
	// REPLCONF capa and rdb-filter-only (true: with the functions), in
	// the order received.
	capas      []string
	rdbFilters []bool
}

var _ engine.Server = (*fakeServer)(nil)

func (s *fakeServer) Config() *config.Config     { return s.cfg }
func (s *fakeServer) Clients() []*engine.Client  { return s.clients }
func (s *fakeServer) Stats() *engine.ServerStats { return &s.stats }

func (s *fakeServer) Replication() engine.Replication { return fakeReplication{srv: s} }

// fakeReplication is a master without replicas; only what the argument
// checks reach is implemented. The REPLCONF declarations it records are
// the server's (one client per test environment).
type fakeReplication struct {
	engine.Replication
	srv *fakeServer
}

func (fakeReplication) MasterLinkDown() bool { return false }

func (fakeReplication) FailingOver() bool       { return false }
func (fakeReplication) FieldTTLRefusal() string { return "" }

func (r fakeReplication) AddCapa(cl *engine.Client, capa string) {
	r.srv.capas = append(r.srv.capas, capa)
}

func (fakeReplication) SetRDBOnly(cl *engine.Client, on bool) {}

func (r fakeReplication) SetRDBFilter(cl *engine.Client, functions bool) {
	r.srv.rdbFilters = append(r.srv.rdbFilters, functions)
}

func (r fakeReplication) FilterNeedsEOF(cl *engine.Client) bool {
	for _, c := range r.srv.capas {
		if c == "eof" {
			return false
		}
	}
	return len(r.srv.rdbFilters) > 0
}

func (s *fakeServer) Shutdown(opts engine.ShutdownOptions) func() string {
	s.shutdowns = append(s.shutdowns, opts)
	return func() string { return "" }
}

func (s *fakeServer) AbortShutdown() bool {
	was := s.waiting
	s.waiting = false
	return was
}

func (s *fakeServer) Info(section string, b []byte) []byte { return b }
func (s *fakeServer) Monitor(c *engine.Client)             { s.monitors = append(s.monitors, c) }

// Pause and Unpause record CLIENT PAUSE's effect: pauseEnd is 0 when not
// paused.
func (s *fakeServer) Pause(endMs int64, all bool) { s.pauseEnd, s.pauseAll = endMs, all }
func (s *fakeServer) Unpause()                    { s.pauseEnd, s.pauseAll = 0, false }

func (s *fakeServer) Feed(c *engine.Client, args [][]byte) {
	a := make([]string, len(args))
	for i, x := range args {
		a[i] = string(x)
	}
	s.fed = append(s.fed, a)
}

// ---- expected replies (RESP2) -------------------------------------------------

const (
	replyOK        = "+OK\r\n"
	replyNull      = "$-1\r\n"
	replyNullArray = "*-1\r\n"
	replyEmpty     = "$0\r\n\r\n"
)

func replyBulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }
func replyInt(n int64) string   { return ":" + strconv.FormatInt(n, 10) + "\r\n" }
func replyErr(msg string) string {
	return "-" + msg + "\r\n"
}
func replySimple(s string) string { return "+" + s + "\r\n" }

// replyArray joins already-encoded elements under an array header.
func replyArray(elems ...string) string {
	return "*" + strconv.Itoa(len(elems)) + "\r\n" + strings.Join(elems, "")
}

// replyBulks is an array of bulk strings.
func replyBulks(elems ...string) string {
	enc := make([]string, len(elems))
	for i, s := range elems {
		enc[i] = replyBulk(s)
	}
	return replyArray(enc...)
}
