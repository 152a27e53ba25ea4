package persistence

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/persistence/rdb"
)

// fakeHost is a Host that records what it is told.
type fakeHost struct {
	closing  bool
	aux      [][2]string // ReplInfo's
	restored [][2]string // RestoreReplInfo's
	notified []string
}

func (h *fakeHost) ReplInfo() [][2]string             { return h.aux }
func (h *fakeHost) RestoreReplInfo(aux [][2]string)   { h.restored = aux }
func (h *fakeHost) RDBLoadOptions() rdb.LoadOptions   { return rdb.LoadOptions{} }
func (h *fakeHost) Closing() bool                     { return h.closing }
func (h *fakeHost) Notify(state string)               { h.notified = append(h.notified, state) }
func (h *fakeHost) AOFProgressed()                    {}
func (h *fakeHost) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (h *fakeHost) UnexpectedError(cl *engine.Client, argv [][]byte, reply []byte, from, to string) string {
	return string(argv[0])
}

// logLines is a Logger that keeps its lines, in order.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) Noticef(format string, args ...any)  { l.add(format, args) }
func (l *logLines) Warningf(format string, args ...any) { l.add(format, args) }
func (l *logLines) add(format string, args []any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}
func (l *logLines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

type fixture struct {
	p     *Service
	h     *fakeHost
	ks    *keyspace.Keyspace
	stats *engine.ServerStats
	log   *logLines
	dir   string
}

// newFixture makes a Service over an empty keyspace, its files in dir,
// with the configuration lines conf.
func newFixture(t *testing.T, dir, conf string) *fixture {
	t.Helper()
	cfg, err := config.Load("", "dir "+dir+"\n"+conf)
	require.NoError(t, err)
	ks := keyspace.New(16, keyspace.SystemClock{})
	disp := engine.NewDispatcher(ks, nil, engine.NewTable())
	f := &fixture{h: &fakeHost{}, ks: ks, stats: &engine.ServerStats{}, log: &logLines{}, dir: dir}
	f.p = New(f.h, ks, disp, cfg, f.log, f.stats, time.Now())
	return f
}

func (f *fixture) set(db int, key, val string) {
	f.ks.Exec(func() {
		f.ks.DB(db).SetString([]byte(key), []byte(val), false, 0)
		f.stats.Dirty++
	})
}

func (f *fixture) info() string {
	var b []byte
	f.ks.Exec(func() { b = f.p.Info(nil) })
	return string(b)
}

// BGSAVE writes dir/dbfilename with the keys and the host's replication
// aux fields, logs as Redis does, and counts the save; a new server
// loading the file gets the keys and hands the aux fields back.
func TestBGSaveThenLoad(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t, dir, "")
	f.h.aux = [][2]string{{"repl-id", strings.Repeat("a", 40)}}
	f.set(0, "a", "1")
	f.set(3, "b", "2")

	var reply string
	f.ks.Exec(func() { reply = f.p.BGSave(false) })
	assert.Equal(t, "Background saving started", reply)
	f.p.Wait()
	assert.Equal(t, []string{"Background saving started", "Background saving terminated with success"}, f.log.all())
	info := f.info()
	assert.Contains(t, info, "rdb_saves:1\r\n")
	assert.Contains(t, info, "rdb_bgsave_in_progress:0\r\n")
	assert.Contains(t, info, "rdb_last_bgsave_status:ok\r\n")
	assert.Contains(t, info, "rdb_changes_since_last_save:0\r\n")
	assert.Contains(t, info, "aof_enabled:0\r\n")
	assert.FileExists(t, filepath.Join(dir, "dump.rdb"))

	g := newFixture(t, dir, "")
	require.NoError(t, g.p.Load())
	g.ks.Exec(func() {
		assert.Equal(t, 1, g.ks.DB(0).Len())
		assert.Equal(t, 1, g.ks.DB(3).Len())
	})
	assert.Contains(t, g.h.restored, f.h.aux[0], "the file's aux fields go back to the host")
	assert.Contains(t, g.info(), "rdb_last_load_keys_loaded:2\r\n")
}

// BGSAVE inside a transaction is scheduled, and the cron starts it; a
// second one while a save runs is refused.
func TestBGSaveScheduledInTransaction(t *testing.T) {
	f := newFixture(t, t.TempDir(), "")
	f.set(0, "k", "v")
	f.ks.Exec(func() {
		assert.Equal(t, "Background saving scheduled", f.p.BGSave(true))
		assert.Empty(t, f.log.all(), "nothing starts before the cron")
		f.p.Cron(time.Now())
		assert.Equal(t, engine.ErrBGSaveInProgress, f.p.BGSave(false))
	})
	f.p.Wait()
	assert.Contains(t, f.info(), "rdb_saves:1\r\n")
}

// A save point reached starts a background save, with Redis's log line;
// none starts while the server is closing.
func TestSavePoints(t *testing.T) {
	f := newFixture(t, t.TempDir(), "save 1 2")
	f.set(0, "a", "1")
	f.set(0, "b", "2")
	f.h.closing = true
	f.ks.Exec(func() { f.p.Cron(time.Now().Add(10 * time.Second)) })
	f.p.Wait()
	assert.Empty(t, f.log.all())

	f.h.closing = false
	f.ks.Exec(func() { f.p.Cron(time.Now().Add(10 * time.Second)) })
	f.p.Wait()
	assert.Equal(t, []string{"2 changes in 1 seconds. Saving...", "Background saving started",
		"Background saving terminated with success"}, f.log.all())
}

// A failed background save refuses writes (MISCONF) while save points
// are set and stop-writes-on-bgsave-error is on.
func TestFailedBGSaveRefusesWrites(t *testing.T) {
	f := newFixture(t, t.TempDir(), "save 3600 1")
	require.NoError(t, os.RemoveAll(f.dir)) // the temporary file cannot be created
	f.ks.Exec(func() { f.p.BGSave(false) })
	f.p.Wait()
	f.ks.Exec(func() { assert.Equal(t, engine.ErrMisconfRDB, f.p.WritesRefused()) })
	assert.Contains(t, f.info(), "rdb_last_bgsave_status:err\r\n")
	assert.Contains(t, f.log.all()[1], "Failed saving the DB: ")
}

// A load that a shutdown aborted stops at its first key.
func TestAbortLoad(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t, dir, "")
	f.set(0, "k", "v")
	f.ks.Exec(func() { f.p.BGSave(false) })
	f.p.Wait()

	g := newFixture(t, dir, "")
	g.p.AbortLoad()
	assert.ErrorIs(t, g.p.Load(), errLoadAborted)
}

// BGREWRITEAOF with the AOF off writes a base and a manifest listing only
// it, as Redis 7.0; INFO shows the rewrite counted and the AOF still off.
func TestRewriteWithAOFOff(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t, dir, "")
	f.set(0, "k", "v")
	f.ks.Exec(func() {
		assert.Equal(t, "Background append only file rewriting started", f.p.RewriteAOF(false))
		assert.Equal(t, engine.ErrRewriteInProgress, f.p.RewriteAOF(false))
	})
	f.p.Wait()
	info := f.info()
	assert.Contains(t, info, "aof_rewrites:1\r\n")
	assert.Contains(t, info, "aof_last_bgrewrite_status:ok\r\n")
	assert.Contains(t, info, "aof_enabled:0\r\n")
	assert.FileExists(t, filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest"))
}

// The final save of a shutdown is made when save points are set, and
// tells the supervisor; NOSAVE skips it.
func TestShutdownSave(t *testing.T) {
	f := newFixture(t, t.TempDir(), "save 3600 1")
	f.set(0, "k", "v")
	require.NoError(t, f.p.ShutdownSave(engine.ShutdownOptions{NoSave: true}))
	assert.NoFileExists(t, filepath.Join(f.dir, "dump.rdb"))
	require.NoError(t, f.p.ShutdownSave(engine.ShutdownOptions{}))
	assert.FileExists(t, filepath.Join(f.dir, "dump.rdb"))
	assert.Equal(t, []string{"STATUS=Saving the final RDB snapshot\n"}, f.h.notified)
	assert.Equal(t, []string{"Saving the final RDB snapshot before exiting.", "DB saved on disk"}, f.log.all())
}
