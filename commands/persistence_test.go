package commands

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// fakePersistence records what the persistence commands ask.
type fakePersistence struct {
	saved    int
	refused  string
	lastSave int64
	misconf  string
}

func (p *fakePersistence) Save(snap *keyspace.Snapshot) (func() error, string) {
	if p.refused != "" {
		return nil, p.refused
	}
	return func() error { snap.Release(); p.saved++; return nil }, ""
}
func (p *fakePersistence) BGSave(inTx bool) string {
	if inTx {
		return "Background saving scheduled"
	}
	return "Background saving started"
}
func (p *fakePersistence) LastSave() int64 { return p.lastSave }
func (p *fakePersistence) RewriteAOF(inTx bool) string {
	if inTx {
		return "Background append only file rewriting scheduled"
	}
	return "Background append only file rewriting started"
}
func (p *fakePersistence) WritesRefused() string { return p.misconf }

var fakePersistences = map[*fakeServer]*fakePersistence{}

func (s *fakeServer) Warning(msg string) { s.warnings = append(s.warnings, msg) }

func (s *fakeServer) ReplicaOf(string, int, string) string { return "OK" }

func (s *fakeServer) Persistence() engine.Persistence {
	p := fakePersistences[s]
	if p == nil {
		p = &fakePersistence{lastSave: 1700000000}
		fakePersistences[s] = p
	}
	return p
}

func TestPersistenceCommands(t *testing.T) {
	e := newTestEnv(t)
	assert.Equal(t, ":1700000000\r\n", e.run("LASTSAVE"))
	assert.Equal(t, "+Background saving started\r\n", e.run("BGSAVE"))
	assert.Equal(t, "+Background saving started\r\n", e.run("BGSAVE", "schedule"), "nothing to wait for")
	assert.Equal(t, "-ERR syntax error\r\n", e.run("BGSAVE", "now"))
	e.run("MULTI")
	e.run("BGSAVE")
	e.run("BGREWRITEAOF")
	assert.Equal(t, "*2\r\n+Background saving scheduled\r\n+Background append only file rewriting scheduled\r\n", e.run("EXEC"))
	p := e.Srv.Persistence().(*fakePersistence)
	p.misconf = "MISCONF test"
	assert.Equal(t, "-MISCONF test\r\n", e.run("SET", "k", "v"))
	assert.Equal(t, "-MISCONF test\r\n", e.run("PING"))
	assert.Equal(t, "$-1\r\n", e.run("GET", "k"))
	e.run("MULTI")
	assert.Equal(t, "-MISCONF test\r\n", e.run("SET", "k", "v"))
	assert.Equal(t, "-EXECABORT Transaction discarded because of previous errors.\r\n", e.run("EXEC"))
}

// The master's stream is never refused for a disk error (MISCONF): with
// replica-ignore-disk-write-errors no (the default) a write of it aborts
// the process (the dispatcher's Abort, Redis's serverPanic) and does not
// run; with yes it runs, and the log says so at most every 10 seconds.
// The master's PING runs either way, logged the same.
func TestMasterStreamDespiteDiskError(t *testing.T) {
	e := newTestEnv(t)
	var aborts []string
	e.D.Abort = func(msg string) { aborts = append(aborts, msg) }
	e.Srv.Persistence().(*fakePersistence).misconf = "MISCONF test"
	master := e.addClient(2)
	master.Master = true

	assert.Equal(t, "", e.runAs(master, "SET", "k", "v"))
	assert.Equal(t, []string{"Replica was unable to write command to disk."}, aborts)
	assert.Equal(t, "$-1\r\n", e.run("GET", "k"), "the write did not run")
	assert.Equal(t, "+PONG\r\n", e.runAs(master, "PING"))
	assert.Len(t, aborts, 1, "PING never aborts")
	assert.Equal(t, []string{"Replica is applying a command even though it is unable to write to disk."}, e.Srv.warnings)

	require.NoError(t, e.Srv.cfg.Set([]string{"replica-ignore-disk-write-errors", "yes"}))
	assert.Equal(t, "+OK\r\n", e.runAs(master, "SET", "k", "v"))
	e.runAs(master, "MULTI")
	e.runAs(master, "INCR", "n")
	assert.Equal(t, "*1\r\n:1\r\n", e.runAs(master, "EXEC"))
	assert.Equal(t, "$1\r\nv\r\n", e.run("GET", "k"))
	assert.Len(t, aborts, 1)
	assert.Len(t, e.Srv.warnings, 1, "logged every 10 seconds at most")

	// Other clients are refused, whatever the directive.
	assert.Equal(t, "-MISCONF test\r\n", e.run("SET", "k", "w"))
}

// While the dataset loads, commands without the loading flag answer
// LOADING; INFO and the like still work.
func TestLoadingRefusesCommands(t *testing.T) {
	e := newTestEnv(t)
	e.D.Loading.Store(true)
	assert.Equal(t, "-LOADING Redis is loading the dataset in memory\r\n", e.run("GET", "k"))
	assert.Equal(t, "-LOADING Redis is loading the dataset in memory\r\n", e.run("PING"))
	assert.Equal(t, ":1700000000\r\n", e.run("LASTSAVE"))
	e.D.Loading.Store(false)
	assert.Equal(t, "+PONG\r\n", e.run("PING"))
}
