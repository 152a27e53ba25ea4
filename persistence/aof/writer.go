package aof

import (
	"github.com/zredis/zredis/resp"

	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// ErrClosed is returned by Wait for a command appended after Close, or not
// written when the writer stopped.
var ErrClosed = errors.New("aof: writer closed")

// Ticket identifies the end of an appended command in the writer's stream;
// Wait(t) returns once everything up to t is written (and, under Always,
// fsynced).
type Ticket uint64

// WriterOptions configures a Writer.
type WriterOptions struct {
	Policy Policy
	// Timestamps is aof-timestamp-enabled: a "#TS:<unix>" annotation is
	// written before the first command of every second.
	Timestamps bool
	// RDBBase is aof-use-rdb-preamble: the initial base, when OpenWriter
	// creates one with WriteBase, is an RDB (.base.rdb) rather than commands.
	RDBBase bool
	// WriteBase writes the initial base file when the manifest lists no file
	// at all (Redis writes one on start-up with an empty dataset). nil
	// creates an empty base of commands.
	WriteBase func(w io.Writer) error
	// Logf receives Redis's log lines (nil: discarded).
	Logf func(format string, args ...any)
	// OnProgress, when set, is called by the flusher (holding no lock)
	// after every batch it wrote, fsync it ended or attempt that failed,
	// and when it stops: a caller that does not block in Wait checks
	// Settled then.
	OnProgress func()
	// OnAlwaysFailure, when set, is called by the flusher (holding no
	// lock) when a write or fsync fails under Always, outside Close; what
	// is "writing to" or "fsyncing". Redis exits then: the failed bytes'
	// commands already ran, and a retried fsync can report success after
	// the kernel dropped the dirty pages, so nothing can be acknowledged
	// after one. Its waiters never see their tickets settle without error.
	OnAlwaysFailure func(what string, err error)
	// KeepHistory is aof-disable-auto-gc, read when a rewrite commits:
	// when it answers true the files a rewrite turned into history stay
	// on disk and in the manifest (nil: they are deleted).
	KeepHistory func() bool
	// Companion, when set, is a file kept durable ahead of the AOF (the
	// expiry journal): see Companion.
	Companion Companion
}

// Companion is a file whose records must reach the disk no later than the
// AOF commands appended after them: the expiry journal, whose message for
// an expired key must be durable before the key's DEL is. Its records are
// handed to it (under the keyspace lock) before the commands they go
// with are appended; the flusher then calls Commit after taking a batch
// and before writing it, so every record that precedes a command in the
// batch is written first, and under Always fsynced first: a crash at any
// point leaves no command on disk without its records. Under everysec the
// background fsync calls Sync before the AOF's own.
type Companion interface {
	// Commit writes what the companion was handed, fsyncing it when sync
	// is set. An error fails the batch as the AOF's own write error would.
	Commit(sync bool) error
	// Sync fsyncs what Commit wrote.
	Sync() error
}

// Status is the writer's state for INFO persistence.
type Status struct {
	LastWriteErr error  // nil: aof_last_write_status:ok (write and background fsync)
	CurrentSize  int64  // aof_current_size: base plus incremental bytes written
	BaseSize     int64  // aof_base_size
	BufferLength int64  // aof_buffer_length: appended, not yet written
	PendingFsync bool   // written bytes not yet fsynced
	Fsyncs       uint64 // fsyncs of the incremental files so far
	Writes       uint64 // write batches so far
}

// chunk is appended bytes bound for the incremental file of generation gen
// (a rewrite's Cut starts a new generation).
type chunk struct {
	gen  int
	data []byte
}

// Writer appends commands to the last incremental file of an AOF directory.
// Append only buffers. Flush (on the caller's goroutine), or the flusher
// goroutine when Wait or Kick asks it or its tick comes, writes what has
// accumulated, fsyncs it under Always, and wakes the waiters: a caller
// that appends for many clients and then flushes once (an event loop's
// round, as Redis writes in beforeSleep) gets them one write and one fsync
// (group commit); appends nobody waits for are written within tickPeriod.
type Writer struct {
	dir, prefix string
	opt         WriterOptions

	// opMu serializes manifest changes (rewrites, Close).
	opMu    sync.Mutex
	m       *Manifest
	rewrite *Rewrite

	// mu guards the fields below; Append holds it only to copy bytes.
	mu         sync.Mutex
	progress   *sync.Cond // signalled when written, synced or lastErr change
	chunks     []chunk
	spare      []byte // a written chunk's buffer, reused by the next chunk
	gen        int
	files      map[int]*os.File // opened incremental files the flusher has not switched to yet
	appended   uint64
	written    uint64
	synced     uint64
	failedAt   uint64 // end of the last failed write or fsync attempt
	lastErr    error
	fsyncErr   error // the last background (everysec) fsync failed
	selectedDB int
	lastTS     int64
	closing    bool
	stopped    bool
	baseSize   int64
	totalSize  int64

	fsyncs atomic.Uint64
	writes atomic.Uint64

	kick    chan struct{}
	policy  atomic.Int32 // the Policy in force, see SetPolicy
	failing atomic.Bool  // lastErr or fsyncErr is set (Err's fast path); written under mu
	done    chan struct{}
	// flushMu is held while a batch is written and fsynced, by the
	// flusher or by Flush; it guards the three fields below.
	flushMu sync.Mutex
	cur     *appendFile // the incremental file written to; nil once closed
	curGen  int         // its generation (see chunk)
	// bgSync is closed when the running background fsync ends.
	bgSync chan struct{}

	// crashAt, in tests, stops a rewrite at a named step as a crash would.
	crashAt func(step string) bool
}

func (w *Writer) logf(format string, args ...any) {
	if w.opt.Logf != nil {
		w.opt.Logf(format, args...)
	}
}

// errCrashed is what a rewrite returns when a test stopped it at a step.
var errCrashed = errors.New("aof: simulated crash")

func (w *Writer) step(name string) error {
	if w.crashAt != nil && w.crashAt(name) {
		return errCrashed
	}
	return nil
}

// OpenWriter prepares dir (appenddirname) for appending, as
// aofOpenIfNeededOnServerStart does after loading: it creates the directory,
// a base file when m lists no file at all, and an incremental file when m
// lists none, opens the last incremental file for appending and persists
// the manifest (named from prefix, appendfilename). m is not modified; a
// nil m is an empty manifest.
func OpenWriter(dir, prefix string, m *Manifest, opt WriterOptions) (*Writer, error) {
	if m == nil {
		m = &Manifest{}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("can't open or create append-only dir %s: %w", dir, err)
	}
	tm := m.Clone()
	before := m.String()
	if tm.Empty() {
		rdb := opt.RDBBase && opt.WriteBase != nil
		name := tm.newBase(prefix, rdb)
		write := opt.WriteBase
		if write == nil {
			write = func(io.Writer) error { return nil }
		}
		if err := writeBaseFile(dir, name, write); err != nil {
			return nil, err
		}
		if opt.Logf != nil {
			opt.Logf("Creating AOF base file %s on server start", name)
		}
	}
	created := len(tm.Incr) == 0
	var incr string
	if created {
		incr = tm.addIncr(prefix)
	} else {
		incr = tm.Incr[len(tm.Incr)-1].Name
	}
	f, err := os.OpenFile(filepath.Join(dir, incr), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("can't open the append-only file %s: %w", incr, err)
	}
	if tm.String() != before {
		if err := tm.Write(dir, ManifestName(prefix)); err != nil {
			f.Close()
			return nil, err
		}
	}
	if opt.Logf != nil {
		if created {
			opt.Logf("Creating AOF incr file %s on server start", incr)
		} else {
			opt.Logf("Opening AOF incr file %s on server start", incr)
		}
	}
	w := newWriter(dir, prefix, tm, f, opt)
	w.baseSize, w.totalSize = filesSize(dir, tm)
	go w.flushLoop()
	return w, nil
}

func newWriter(dir, prefix string, m *Manifest, f *os.File, opt WriterOptions) *Writer {
	w := &Writer{
		dir: dir, prefix: prefix, opt: opt, m: m,
		files:      map[int]*os.File{},
		selectedDB: -1,
		kick:       make(chan struct{}, 1),
		done:       make(chan struct{}),
	}
	w.progress = sync.NewCond(&w.mu)
	w.policy.Store(int32(opt.Policy))
	w.cur = newAppendFile(f)
	return w
}

// StartWriter turns the AOF on while the server runs (CONFIG SET
// appendonly yes), as Redis's startAppendOnly does with a rewrite: it
// creates a new incremental file in dir, numbered after those of m (the
// manifest dir holds from an earlier time, or nil), and returns a writer
// appending to it together with a Rewrite that is already cut. The caller
// takes the keyspace snapshot under the same hold of the lock as it makes
// the writer the propagation target, then commits the first base from
// that snapshot in the background. The manifest on disk does not change
// until that commit, so a crash before it leaves dir as it was (Redis
// appends to a temp file meanwhile for the same reason); the commit lists
// the new base and incremental file and drops the older files. If the
// rewrite is aborted instead, the writer must be closed: its file is
// listed nowhere.
func StartWriter(dir, prefix string, m *Manifest, opt WriterOptions) (*Writer, *Rewrite, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("can't open or create append-only dir %s: %w", dir, err)
	}
	tm := &Manifest{}
	if m != nil {
		tm = m.Clone()
	}
	incr := tm.addIncr(prefix)
	f, err := os.OpenFile(filepath.Join(dir, incr), os.O_WRONLY|os.O_APPEND|os.O_TRUNC|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("can't open the append-only file %s: %w", incr, err)
	}
	w := newWriter(dir, prefix, tm, f, opt)
	rw := &Rewrite{w: w, gen: 0, incrSeq: tm.IncrSeq, incrName: incr, cut: true}
	w.rewrite = rw
	w.logf("Creating AOF incr file %s to turn the AOF on", incr)
	go w.flushLoop()
	return w, rw, nil
}

// filesSize returns the base's size and the total of base and incremental
// files (missing files count as empty).
func filesSize(dir string, m *Manifest) (base, total int64) {
	size := func(name string) int64 {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return fi.Size()
		}
		return 0
	}
	if m.Base != nil {
		base = size(m.Base.Name)
	}
	total = base
	for _, fi := range m.Incr {
		total += size(fi.Name)
	}
	return base, total
}

// writeBaseFile writes a base through a temp file in dir: written, fsynced,
// then renamed to name, so a base is never seen half written.
func writeBaseFile(dir, name string, write func(io.Writer) error) error {
	tmp := filepath.Join(dir, fmt.Sprintf("temp-rewriteaof-%d.aof", os.Getpid()))
	if err := writeSynced(tmp, write); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("error moving temp append only file on the final destination: %w", err)
	}
	return nil
}

// writeSynced creates path, fills it with write through a buffer and fsyncs it.
func writeSynced(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("opening the temp file for AOF rewrite: %w", err)
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = fdatasync(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("write error writing append only file on disk: %w", err)
	}
	return nil
}

// Append queues one command, in its propagated (deterministic) form, for
// database db: a SELECT precedes it when db differs from the previous
// command's (db < 0: no SELECT, for commands outside any database). It is
// called under the server's keyspace lock, so that the AOF order is the
// execution order, and only copies bytes. Under Always the caller must not
// acknowledge the write before Wait(ticket) returns nil.
func (w *Writer) Append(db int, argv [][]byte) Ticket {
	w.mu.Lock()
	n := len(w.chunks)
	if n == 0 || w.chunks[n-1].gen != w.gen {
		w.chunks = append(w.chunks, chunk{gen: w.gen, data: w.spare[:0]})
		w.spare = nil
		n++
	}
	c := &w.chunks[n-1]
	before := len(c.data)
	if w.opt.Timestamps {
		if now := time.Now().Unix(); now > w.lastTS {
			c.data = appendTimestamp(c.data, now)
			w.lastTS = now
		}
	}
	if db >= 0 && db != w.selectedDB {
		c.data = resp.AppendSelect(c.data, db)
		w.selectedDB = db
	}
	c.data = resp.AppendCommand(c.data, argv...)
	w.appended += uint64(len(c.data) - before)
	t := Ticket(w.appended)
	w.mu.Unlock()
	return t
}

// Kick asks the flusher to write (and under Always fsync) what was
// appended, without waiting for it: the end of a round of appends whose
// completion Settled will tell.
func (w *Writer) Kick() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Settled reports whether Wait(t) would return at once, and what it would
// return.
func (w *Writer) Settled(t Ticket) (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.settledLocked(t)
}

func (w *Writer) settledLocked(t Ticket) (bool, error) {
	done := w.written
	if w.Policy() == Always {
		done = w.synced
	}
	switch {
	case uint64(t) <= done:
		return true, nil
	case w.stopped:
		return true, ErrClosed
	case w.lastErr != nil && w.failedAt >= uint64(t):
		return true, w.lastErr
	}
	return false, nil
}

// Wait blocks until everything up to t is written to the incremental file
// (write(2) done), and under Always also fsynced. It returns the write or
// fsync error of the attempt that covered t; the bytes stay queued and are
// retried, and Status reports the error until a write succeeds again.
func (w *Writer) Wait(t Ticket) error {
	w.Kick()
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		if ok, err := w.settledLocked(t); ok {
			return err
		}
		w.progress.Wait()
	}
}

// Policy is the fsync policy in force.
func (w *Writer) Policy() Policy { return Policy(w.policy.Load()) }

// SetPolicy changes the fsync policy at run time (CONFIG SET
// appendfsync). Tickets stay valid: under Always, a Wait from now on
// returns once its bytes are fsynced.
func (w *Writer) SetPolicy(p Policy) {
	w.policy.Store(int32(p))
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Err is the current write error, or the error of the last background
// fsync (nil when both succeeded): while it is set, Redis refuses writes
// with "-MISCONF Errors writing to the AOF file: <err>".
func (w *Writer) Err() error {
	if !w.failing.Load() {
		return nil // the common case, checked before every write command
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.errLocked()
}

func (w *Writer) errLocked() error {
	if w.lastErr != nil {
		return w.lastErr
	}
	return w.fsyncErr
}

// Status reports the writer's counters for INFO.
func (w *Writer) Status() Status {
	w.mu.Lock()
	defer w.mu.Unlock()
	return Status{
		LastWriteErr: w.errLocked(),
		CurrentSize:  w.totalSize,
		BaseSize:     w.baseSize,
		BufferLength: int64(w.appended - w.written),
		PendingFsync: w.synced < w.written,
		Fsyncs:       w.fsyncs.Load(),
		Writes:       w.writes.Load(),
	}
}

// Manifest returns a copy of the current manifest.
func (w *Writer) Manifest() *Manifest {
	w.opMu.Lock()
	defer w.opMu.Unlock()
	return w.m.Clone()
}

// Close writes and fsyncs everything appended, closes the files and stops
// the flusher. It returns the last write error if data could not be written.
func (w *Writer) Close() error {
	w.opMu.Lock()
	defer w.opMu.Unlock()
	w.mu.Lock()
	if w.closing {
		w.mu.Unlock()
		<-w.done
		return nil
	}
	w.closing = true
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, f := range w.files {
		f.Close()
	}
	w.files = map[int]*os.File{}
	if w.written < w.appended || w.synced < w.written {
		if w.lastErr != nil {
			return w.lastErr
		}
		return ErrClosed
	}
	return nil
}
