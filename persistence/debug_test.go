package persistence

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/engine"
)

// DEBUG RELOAD under the lock: the dataset saved and loaded back; NOSAVE
// loads the file as it is; NOFLUSH without MERGE refuses a key both in
// memory and in the file before changing anything; MERGE takes the
// file's; a missing file is an error.
func TestDebugReload(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t, dir, "")
	f.set(0, "a", "1")
	f.set(3, "b", "2")
	get := func(db int, key string) string {
		var v string
		f.ks.Exec(func() {
			if e := f.ks.DB(db).Peek([]byte(key)); e != nil {
				v = string(e.Str())
			}
		})
		return v
	}
	reload := func(opts engine.ReloadOptions) (msg string) {
		f.ks.Exec(func() { msg = f.p.DebugReload(opts) })
		return msg
	}
	require.Empty(t, reload(engine.ReloadOptions{}))
	assert.Equal(t, "1", get(0, "a"))
	assert.Equal(t, "2", get(3, "b"))
	assert.Contains(t, f.info(), "rdb_changes_since_last_save:0\r\n")
	assert.Contains(t, f.info(), "rdb_last_load_keys_loaded:2\r\n")
	assert.Equal(t, []string{"DB saved on disk", "DB reloaded by DEBUG RELOAD"}, f.log.all())

	f.set(0, "a", "changed")
	f.set(0, "c", "3")
	require.Empty(t, reload(engine.ReloadOptions{NoSave: true}))
	assert.Equal(t, "1", get(0, "a"), "the file's value")
	assert.Equal(t, "", get(0, "c"))

	f.set(0, "a", "mine")
	assert.Equal(t, errReloadLoad, reload(engine.ReloadOptions{NoSave: true, NoFlush: true}))
	assert.Equal(t, "mine", get(0, "a"), "nothing changed")
	assert.Contains(t, f.log.all(), "DEBUG RELOAD: RDB has duplicated key 'a' in DB 0")
	require.Empty(t, reload(engine.ReloadOptions{NoSave: true, NoFlush: true, Merge: true}))
	assert.Equal(t, "1", get(0, "a"))

	require.NoError(t, os.Remove(filepath.Join(dir, "dump.rdb")))
	assert.Equal(t, errReloadLoad, reload(engine.ReloadOptions{NoSave: true}))
}

// DEBUG LOADAOF without an AOF refuses before emptying anything (Redis
// exits).
func TestDebugLoadAOFWithoutAOF(t *testing.T) {
	f := newFixture(t, t.TempDir(), "")
	f.set(0, "a", "1")
	var msg string
	f.ks.Exec(func() { msg = f.p.DebugLoadAOF() })
	assert.Equal(t, "ERR There is no append only file to load", msg)
	f.ks.Exec(func() { assert.Equal(t, 1, f.ks.DB(0).Len()) })
}
