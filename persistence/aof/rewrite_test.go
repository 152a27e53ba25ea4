package aof

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/internal/testsupport"
)

// rewriteSteps are the points of StartRewrite and Commit a crash can hit.
var rewriteSteps = []string{"incr-created", "manifest-incr", "base-written", "base-renamed", "manifest-base", "history-removed", "none"}

// writeSome appends n SETs across two databases, waits for all of them and
// applies them to the model.
func writeSome(t *testing.T, w *Writer, m *model, tag string, n int) {
	t.Helper()
	var last Ticket
	for i := 0; i < n; i++ {
		db := i % 2
		cmd := command{"SET", fmt.Sprintf("%s%d", tag, i), fmt.Sprintf("v%d", i)}
		last = w.Append(db, argvOf(cmd))
		m.db = db
		require.NoError(t, m.exec(argvOf(cmd)))
	}
	// Overwrite a key written before, so the order of files matters.
	last = w.Append(0, argvOf(command{"SET", "shared", tag}))
	m.db = 0
	require.NoError(t, m.exec(argvOf(command{"SET", "shared", tag})))
	require.NoError(t, w.Wait(last))
}

// TestRewriteCrashAtEveryStep stops a rewrite at each of its steps, as a
// crash would (no cleanup), and loads the directory: it must hold every
// acknowledged write, in order, whatever the step. Then the server's next
// start (OpenWriter on what was loaded) keeps working.
func TestRewriteCrashAtEveryStep(t *testing.T) {
	for _, crash := range rewriteSteps {
		for _, earlier := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/previous-rewrite=%v", crash, earlier), func(t *testing.T) {
				dir := t.TempDir()
				mod := newModel()
				w, err := OpenWriter(dir, prefix, nil, WriterOptions{Policy: Always})
				require.NoError(t, err)
				writeSome(t, w, mod, "a", 20)
				if earlier {
					// A finished rewrite first, so history files exist.
					rw, err := w.StartRewrite()
					require.NoError(t, err)
					snap := mod.base()
					rw.Cut()
					writeSome(t, w, mod, "b", 10)
					require.NoError(t, rw.Commit(false, func(out io.Writer) error { _, err := out.Write(snap); return err }))
				}
				w.crashAt = func(step string) bool { return step == crash }

				crashed := func(err error) bool {
					if err == nil {
						return false
					}
					require.ErrorIs(t, err, errCrashed)
					return true
				}
				rw, err := w.StartRewrite()
				if !crashed(err) {
					snap := mod.base()
					rw.Cut()
					writeSome(t, w, mod, "c", 10)
					err = rw.Commit(false, func(out io.Writer) error { _, err := out.Write(snap); return err })
					if !crashed(err) {
						writeSome(t, w, mod, "d", 5)
					}
				}
				// Everything was acknowledged; the process dies here.
				w.crashAt = nil
				require.NoError(t, w.Close())

				got := newModel()
				st, err := Load(dir, ManifestName(prefix), LoadOptions{Exec: got.exec})
				require.NoError(t, err)
				require.Equal(t, mod.data, got.data)
				require.False(t, st.Truncated)
				checkWithRedis(t, filepath.Join(dir, ManifestName(prefix)))

				// Restart: append to what the manifest lists, rewrite again.
				m, err := ReadManifest(filepath.Join(dir, ManifestName(prefix)))
				require.NoError(t, err)
				w2, err := OpenWriter(dir, prefix, m, WriterOptions{Policy: Always})
				require.NoError(t, err)
				mod.db = -1
				writeSome(t, w2, mod, "e", 5)
				rw2, err := w2.StartRewrite()
				require.NoError(t, err)
				snap := mod.base()
				rw2.Cut()
				writeSome(t, w2, mod, "f", 5)
				require.NoError(t, rw2.Commit(false, func(out io.Writer) error { _, err := out.Write(snap); return err }))
				require.NoError(t, w2.Close())
				got = newModel()
				_, err = Load(dir, ManifestName(prefix), LoadOptions{Exec: got.exec})
				require.NoError(t, err)
				require.Equal(t, mod.data, got.data)
				m, err = ReadManifest(filepath.Join(dir, ManifestName(prefix)))
				require.NoError(t, err)
				require.Empty(t, m.History)
				require.Len(t, m.Incr, 1)
				// Only the listed files and stray temp files remain.
				entries, err := os.ReadDir(dir)
				require.NoError(t, err)
				for _, e := range entries {
					name := e.Name()
					listed := name == ManifestName(prefix) || name == m.Base.Name || name == m.Incr[0].Name
					if !listed {
						require.True(t, strings.HasPrefix(name, tempPrefix) || strings.Contains(name, ".incr.aof") || strings.Contains(name, ".base."),
							"unexpected file %s", name)
					}
				}
			})
		}
	}
}

func TestRewriteAbortAndErrors(t *testing.T) {
	dir := t.TempDir()
	mod := newModel()
	w := openTestWriter(t, dir, nil, WriterOptions{Policy: Always})
	writeSome(t, w, mod, "a", 4)
	rw, err := w.StartRewrite()
	require.NoError(t, err)
	_, err = w.StartRewrite()
	require.ErrorIs(t, err, ErrRewriteInProgress)
	require.Error(t, rw.Commit(false, func(io.Writer) error { return nil }), "commit before cut")
	rw.Abort()
	writeSome(t, w, mod, "b", 4)

	rw, err = w.StartRewrite()
	require.NoError(t, err)
	rw.Cut()
	require.Error(t, rw.Commit(false, func(io.Writer) error { return fmt.Errorf("snapshot failed") }))
	writeSome(t, w, mod, "c", 4)
	require.NoError(t, w.Close())
	m, err := ReadManifest(filepath.Join(dir, ManifestName(prefix)))
	require.NoError(t, err)
	require.Len(t, m.Incr, 3)
	got := newModel()
	_, err = Load(dir, ManifestName(prefix), LoadOptions{Exec: got.exec})
	require.NoError(t, err)
	require.Equal(t, mod.data, got.data)
}

// checkWithRedis runs the real redis-check-aof on a manifest and
// requires it to accept it.
func checkWithRedis(t *testing.T, manifest string) {
	t.Helper()
	out, err := exec.Command(testsupport.RequireTool(t, "redis-check-aof"), manifest).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "All AOF files and manifest are valid")
}

// TestRewriteSizes: Status follows Redis's aof_base_size and
// aof_current_size through a rewrite.
func TestRewriteSizes(t *testing.T) {
	dir := t.TempDir()
	mod := newModel()
	w := openTestWriter(t, dir, nil, WriterOptions{Policy: Always})
	writeSome(t, w, mod, "a", 10)
	size := func(name string) int64 {
		fi, err := os.Stat(filepath.Join(dir, name))
		require.NoError(t, err)
		return fi.Size()
	}
	st := w.Status()
	require.Equal(t, int64(0), st.BaseSize)
	require.Equal(t, size(IncrName(prefix, 1)), st.CurrentSize)
	require.False(t, st.PendingFsync)

	rw, err := w.StartRewrite()
	require.NoError(t, err)
	snap := mod.base()
	rw.Cut()
	writeSome(t, w, mod, "b", 3)
	require.NoError(t, rw.Commit(false, func(out io.Writer) error { _, err := out.Write(snap); return err }))
	st = w.Status()
	require.Equal(t, size(BaseName(prefix, 2, false)), st.BaseSize)
	require.Equal(t, st.BaseSize+size(IncrName(prefix, 2)), st.CurrentSize)
	writeSome(t, w, mod, "c", 3)
	require.Equal(t, st.BaseSize+size(IncrName(prefix, 2)), w.Status().CurrentSize)
	require.Equal(t, "file appendonly.aof.2.base.aof seq 2 type b\nfile appendonly.aof.2.incr.aof seq 2 type i\n", w.Manifest().String())
}

// StartWriter (CONFIG SET appendonly yes) over a directory holding an AOF
// from an earlier time: a crash at any step of the first base leaves the
// earlier AOF as it was; once committed, the directory is the new base
// plus the new incremental file, and the earlier files are gone.
func TestStartWriterCrashAtEveryStep(t *testing.T) {
	for _, crash := range []string{"base-written", "base-renamed", "manifest-base", "history-removed", "none"} {
		t.Run(crash, func(t *testing.T) {
			dir := t.TempDir()
			earlier := newModel()
			w, err := OpenWriter(dir, prefix, nil, WriterOptions{Policy: Always})
			require.NoError(t, err)
			writeSome(t, w, earlier, "old", 10)
			require.NoError(t, w.Close())
			m, err := ReadManifest(filepath.Join(dir, ManifestName(prefix)))
			require.NoError(t, err)

			mod := newModel() // the dataset when the AOF is turned on
			mod.data["0/k"] = "at the snapshot"
			w, rw, err := StartWriter(dir, prefix, m, WriterOptions{Policy: Always})
			require.NoError(t, err)
			snap := mod.base()
			writeSome(t, w, mod, "new", 10)
			w.crashAt = func(step string) bool { return step == crash }
			commitErr := rw.Commit(false, func(out io.Writer) error { _, err := out.Write(snap); return err })
			w.crashAt = nil
			require.NoError(t, w.Close())

			got := newModel()
			_, err = Load(dir, ManifestName(prefix), LoadOptions{Exec: got.exec})
			require.NoError(t, err)
			if crash == "base-written" || crash == "base-renamed" {
				require.ErrorIs(t, commitErr, errCrashed)
				require.Equal(t, earlier.data, got.data, "the earlier AOF, untouched")
				return
			}
			require.Equal(t, mod.data, got.data)
			checkWithRedis(t, filepath.Join(dir, ManifestName(prefix)))
			m, err = ReadManifest(filepath.Join(dir, ManifestName(prefix)))
			require.NoError(t, err)
			require.Len(t, m.Incr, 1)
		})
	}
}
