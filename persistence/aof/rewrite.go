package aof

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ErrRewriteInProgress is returned by StartRewrite while another rewrite
// has neither committed nor aborted.
var ErrRewriteInProgress = errors.New("Background append only file rewriting already in progress")

// Rewrite is one AOF rewrite (BGREWRITEAOF) in progress:
//
//  1. Writer.StartRewrite creates the next incremental file and persists a
//     manifest listing it (empty, after the current one).
//  2. Cut, called under the lock that serializes Append, together with
//     taking the keyspace snapshot: later commands go to the new file.
//  3. Commit writes the new base from the snapshot into a temp file,
//     fsyncs it, renames it to the next base name, and persists a manifest
//     of the new base plus the new incremental file, the older files
//     becoming history; then deletes the history files.
//
// Why a crash at any point leaves a loadable, complete directory: until
// step 3's manifest is renamed into place the manifest is the old base and
// all incremental files (the old ones hold everything before the cut, the
// new one everything after), and the new files not yet listed are ignored;
// from that rename on, it is the new base (the snapshot at the cut) and the
// new incremental file. History files are never loaded.
type Rewrite struct {
	w        *Writer
	gen      int
	incrSeq  int64
	incrName string
	cut      bool
	done     bool
}

// StartRewrite opens the next incremental file and persists the manifest
// that lists it (openNewIncrAofForAppend). It does I/O: call it outside the
// keyspace lock, then Cut under it.
func (w *Writer) StartRewrite() (*Rewrite, error) {
	w.opMu.Lock()
	defer w.opMu.Unlock()
	if w.rewrite != nil {
		return nil, ErrRewriteInProgress
	}
	w.mu.Lock()
	closing := w.closing
	w.mu.Unlock()
	if closing {
		return nil, ErrClosed
	}
	tm := w.m.Clone()
	name := tm.addIncr(w.prefix)
	f, err := os.OpenFile(filepath.Join(w.dir, name), os.O_WRONLY|os.O_APPEND|os.O_TRUNC|os.O_CREATE, 0o644)
	if err != nil {
		w.logf("Can't open the append-only file %s: %v", name, err)
		return nil, err
	}
	if err := w.step("incr-created"); err != nil {
		f.Close()
		return nil, err
	}
	if err := tm.Write(w.dir, ManifestName(w.prefix)); err != nil {
		w.logf("%v", err)
		f.Close()
		os.Remove(filepath.Join(w.dir, name))
		return nil, err
	}
	if err := w.step("manifest-incr"); err != nil {
		f.Close()
		return nil, err
	}
	w.logf("Creating AOF incr file %s on background rewrite", name)
	w.m = tm
	w.mu.Lock()
	gen := w.gen + 1
	w.files[gen] = f
	w.mu.Unlock()
	rw := &Rewrite{w: w, gen: gen, incrSeq: tm.IncrSeq, incrName: name}
	w.rewrite = rw
	return rw, nil
}

// Cut switches appending to the rewrite's incremental file: commands
// appended after it go there, starting with a SELECT. Call it while holding
// the lock under which Append is called, at the moment the snapshot the
// base is written from is taken, so the base holds exactly what precedes
// the cut. It does no I/O.
func (rw *Rewrite) Cut() {
	w := rw.w
	w.mu.Lock()
	if !rw.cut {
		w.gen = rw.gen
		w.selectedDB = -1
		rw.cut = true
	}
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Commit writes the new base with write (an RDB when rdb is true, named
// .base.rdb, else commands, .base.aof) and installs it; see Rewrite for the
// steps. On error the directory keeps the old base and every incremental
// file, which load completely, and the rewrite is over (as a failed
// BGREWRITEAOF, the new incremental file stays in use).
func (rw *Rewrite) Commit(rdb bool, write func(w io.Writer) error) error {
	w := rw.w
	w.opMu.Lock()
	defer w.opMu.Unlock()
	if rw.done {
		return errors.New("aof: rewrite already finished")
	}
	if !rw.cut {
		return errors.New("aof: rewrite committed before its cut")
	}
	rw.done = true
	w.rewrite = nil

	tmp := filepath.Join(w.dir, fmt.Sprintf("temp-rewriteaof-bg-%d.aof", os.Getpid()))
	if err := writeSynced(tmp, write); err != nil {
		w.logf("%v", err)
		return err
	}
	if err := w.step("base-written"); err != nil {
		return err
	}
	tm := w.m.Clone()
	base := tm.newBase(w.prefix, rdb)
	basePath := filepath.Join(w.dir, base)
	if err := os.Rename(tmp, basePath); err != nil {
		w.logf("Error trying to rename the temporary AOF base file %s into %s: %v", filepath.Base(tmp), base, err)
		os.Remove(tmp)
		return err
	}
	w.logf("Successfully renamed the temporary AOF base file %s into %s", filepath.Base(tmp), base)
	if err := w.step("base-renamed"); err != nil {
		return err
	}
	keep := 0
	for _, fi := range tm.Incr {
		if fi.Seq >= rw.incrSeq {
			keep++
		}
	}
	tm.incrToHistory(keep)
	if err := tm.Write(w.dir, ManifestName(w.prefix)); err != nil {
		w.logf("%v", err)
		os.Remove(basePath)
		return err
	}
	w.m = tm
	if err := w.step("manifest-base"); err != nil {
		return err
	}
	// aof_current_size is now the new base plus the new incremental file.
	var baseSize, incrSize int64
	if fi, err := os.Stat(basePath); err == nil {
		baseSize = fi.Size()
	}
	w.mu.Lock()
	if fi, err := os.Stat(filepath.Join(w.dir, rw.incrName)); err == nil {
		incrSize = fi.Size()
	}
	w.baseSize = baseSize
	w.totalSize = baseSize + incrSize
	w.mu.Unlock()
	w.deleteHistory()
	w.logf("Background AOF rewrite finished successfully")
	return nil
}

// deleteHistory removes the history files and persists the manifest
// without them (aofDelHistoryFiles). A failure only leaves files behind.
func (w *Writer) deleteHistory() {
	if len(w.m.History) == 0 || w.opt.KeepHistory != nil && w.opt.KeepHistory() {
		return
	}
	removeHistory(w.dir, w.m, w.logf)
	if w.step("history-removed") != nil {
		return
	}
	tm := w.m.Clone()
	tm.History = nil
	if err := tm.Write(w.dir, ManifestName(w.prefix)); err == nil {
		w.m = tm
	}
}

// DeleteHistory deletes the history files the manifest lists and writes
// the manifest without them, unless KeepHistory says to keep them: CONFIG
// SET aof-disable-auto-gc no does it at once, as Redis's
// updateAofAutoGCEnabled.
func (w *Writer) DeleteHistory() {
	w.opMu.Lock()
	defer w.opMu.Unlock()
	w.deleteHistory()
}

// removeHistory deletes the history files m lists.
func removeHistory(dir string, m *Manifest, logf func(string, ...any)) {
	for _, fi := range m.History {
		logf("Removing the history file %s in the background", fi.Name)
		os.Remove(filepath.Join(dir, fi.Name))
	}
}

// Abort ends a rewrite that will not commit (the snapshot could not be
// written). Appending continues in the rewrite's incremental file, which
// the manifest already lists.
func (rw *Rewrite) Abort() {
	w := rw.w
	rw.Cut()
	w.opMu.Lock()
	defer w.opMu.Unlock()
	if !rw.done {
		rw.done = true
		w.rewrite = nil
	}
}

// WriteBaseOnly is a rewrite with the AOF off (BGREWRITEAOF under
// appendonly no, as Redis 7.0 does it): it writes a new base with write
// (an RDB when rdb is true) into dir through a temp file, then persists a
// manifest listing only that base, the files m listed becoming history,
// which is then deleted unless keepHistory (aof-disable-auto-gc). m is the manifest dir holds, or nil. A crash
// leaves either m or the new manifest in place.
func WriteBaseOnly(dir, prefix string, m *Manifest, rdb, keepHistory bool, write func(w io.Writer) error, logf func(string, ...any)) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("can't open or create append-only dir %s: %w", dir, err)
	}
	tm := &Manifest{}
	if m != nil {
		tm = m.Clone()
	}
	name := tm.newBase(prefix, rdb)
	if err := writeBaseFile(dir, name, write); err != nil {
		return err
	}
	tm.incrToHistory(0)
	if err := tm.Write(dir, ManifestName(prefix)); err != nil {
		os.Remove(filepath.Join(dir, name))
		return err
	}
	if len(tm.History) > 0 && !keepHistory {
		removeHistory(dir, tm, logf)
		tm.History = nil
		tm.Write(dir, ManifestName(prefix)) // a failure only leaves history listed
	}
	return nil
}
