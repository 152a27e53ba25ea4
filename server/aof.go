package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/persistence/aof"
	"github.com/zredis/zredis/resp"
)

// aofState is the append only file at run time: the writer every change
// is propagated to, and what INFO persistence reports. Fields are used
// under the keyspace lock unless noted.
type aofState struct {
	w    *aof.Writer
	last aof.Ticket // the ticket of the last command appended

	rewriting      bool        // BGREWRITEAOF, or the first base after CONFIG SET appendonly yes
	scheduled      bool        // BGREWRITEAOF inside EXEC: the cron starts it
	startPending   bool        // CONFIG SET appendonly yes during a rewrite: turned on when it ends (rewriteDone)
	stopped        *aof.Writer // the writer stopAOF closed last, and its last ticket (see conn.noteAOF)
	stoppedLast    aof.Ticket
	rewriteStart   time.Time
	lastRewriteSec int64 // -1 before the first
	lastRewriteOK  bool
	rewrites       int64
	rewriteFails   int64
	baseSize       int64 // aof_base_size after the last load or rewrite
}

// Propagate implements engine.Propagator: every change goes to the AOF
// writer's buffer (no I/O here; the writer's goroutine writes it).
func (a *aofState) Propagate(db int, argv [][]byte) { a.last = a.w.Append(db, argv) }

// aofDir is dir/appenddirname.
func (s *Server) aofDir() string {
	return filepath.Join(s.cfg.String("dir"), s.cfg.String("appenddirname"))
}

// readAOFManifest reads the manifest of the AOF directory; m is nil when
// there is none.
func (s *Server) readAOFManifest() (dir, prefix string, m *aof.Manifest, err error) {
	dir, prefix = s.aofDir(), s.cfg.String("appendfilename")
	m, err = aof.ReadManifest(filepath.Join(dir, aof.ManifestName(prefix)))
	if errors.Is(err, os.ErrNotExist) {
		m, err = nil, nil
	}
	return dir, prefix, m, err
}

// loadData loads the dataset at start-up: the AOF when appendonly is on
// (migrating a Redis 6 style appendonly.aof first, as 7.0 does), the RDB
// file otherwise, or when there is no AOF yet. With appendonly on it then
// opens the AOF for appending, its first base written from what was
// loaded.
func (s *Server) loadData() error {
	if !s.cfg.Bool("appendonly") {
		return s.loadRDB()
	}
	dir, prefix, m, err := s.readAOFManifest()
	if err != nil {
		return err
	}
	m, _, err = aof.UpgradeOldStyle(filepath.Join(s.cfg.String("dir"), prefix), dir, prefix, m, s.log.Noticef)
	if err != nil {
		return err
	}
	if m == nil || m.Empty() {
		if err := s.loadRDB(); err != nil {
			return err
		}
	} else if err := s.replayAOF(dir, m); err != nil {
		return err
	}
	return s.openAOF(dir, prefix, m)
}

// replayAOF loads the AOF directory: its base (RDB or commands) and its
// incremental files, each command run as a client would run it, with
// nothing propagated.
func (s *Server) replayAOF(dir string, m *aof.Manifest) error {
	start := time.Now()
	cl := &engine.Client{W: resp.NewWriter(), Authed: true, Replaying: true}
	stats, err := aof.LoadManifest(dir, m, aof.LoadOptions{
		LoadTruncated: s.cfg.Bool("aof-load-truncated"),
		Logf:          s.log.Warningf,
		LoadRDB: func(r io.Reader) (int64, error) {
			info, err := s.loadRDBFrom(r)
			return info.Size, err
		},
		Exec: func(argv [][]byte) error {
			if s.loadAborted.Load() {
				return errLoadAborted
			}
			if s.disp.Table.Lookup(argv[0]) == nil {
				return fmt.Errorf("%w '%s'", aof.ErrUnknownCommand, argv[0])
			}
			var panicked error
			s.ks.Exec(func() {
				s.ks.SetLoading(true)
				s.disp.BeginBatch(cl)
				cl.LastCmd = ""
				s.disp.Exec(cl, argv)
				s.ks.SetLoading(false)
				panicked = s.aofReplyError(cl, argv)
			})
			cl.W.Reset()
			return panicked
		},
	})
	if err != nil {
		return err
	}
	s.ks.Exec(func() { s.aof.baseSize = stats.BaseSize })
	s.log.Noticef("DB loaded from append only file: %.3f seconds (%d commands)", time.Since(start).Seconds(), stats.Commands)
	return nil
}

// aofReplyError handles a replayed command that answered an error, as
// Redis's afterErrorReply does for its AOF-loading client: the error is
// logged as CRITICAL and counted in unexpected_error_replies, and with
// propagation-error-behavior panic the load stops (Redis panics) rather
// than go on from a dataset that may have diverged. Called under the lock.
func (s *Server) aofReplyError(cl *engine.Client, argv [][]byte) error {
	out := cl.W.Bytes()
	if len(out) == 0 || out[0] != '-' {
		return nil
	}
	name := s.unexpectedError(cl, argv, out, "server", "AOF-loading-client")
	if s.cfg.Int("propagation-error-behavior") == 1 { // panic
		return fmt.Errorf("This server panicked sending an error to its AOF-loading-client after processing the command '%s' (propagation-error-behavior panic)", name)
	}
	return nil
}

// unexpectedError logs and counts an error reply out that a command
// from the AOF or the master got (afterErrorReply), and returns the
// command's name as Redis gives it.
func (s *Server) unexpectedError(cl *engine.Client, argv [][]byte, out []byte, from, to string) (name string) {
	// Redis logs the text its handler gave: without "ERR " for most
	// errors, with the leading '-' for the shared ones with another code.
	msg := string(out[:min(len(out), 4097)])
	if i := strings.Index(msg, "\r\n"); i >= 0 {
		msg = msg[:i]
	}
	if strings.HasPrefix(msg, "-ERR ") {
		msg = msg[5:]
	}
	name = cl.LastCmd
	if name == "" {
		name = strings.ToLower(string(argv[0]))
	}
	s.log.Warningf("== CRITICAL == This %s is sending an error to its %s: '%s' after processing the command '%s'", from, to, msg, name)
	s.stats.UnexpectedErrors++
	return name
}

// aofProgressed is the AOF writer's OnProgress hook, on its flusher.
func (s *Server) aofProgressed() {
	for _, h := range s.heldList {
		h.progressed()
	}
}

// openAOF opens the AOF for appending and makes it the propagation
// target. Called before the expiry timer starts, so the keys expired
// right after loading are propagated too.
func (s *Server) openAOF(dir, prefix string, m *aof.Manifest) error {
	opt, err := s.aofWriterOptions()
	if err != nil {
		return err
	}
	opt.WriteBase = func(w io.Writer) error { return s.writeBase(w, opt.RDBBase) }
	w, err := aof.OpenWriter(dir, prefix, m, opt)
	if err != nil {
		return err
	}
	// History left by a rewrite interrupted before it deleted them goes
	// now, unless aof-disable-auto-gc (Redis's aofDelHistoryFiles at start).
	w.DeleteHistory()
	s.ks.Exec(func() { s.setAOFWriter(w) })
	return nil
}

func (s *Server) aofWriterOptions() (aof.WriterOptions, error) {
	policy, err := aof.ParsePolicy(s.cfg.String("appendfsync"))
	if err != nil {
		return aof.WriterOptions{}, err
	}
	return aof.WriterOptions{
		Policy:     policy,
		Timestamps: s.cfg.Bool("aof-timestamp-enabled"),
		RDBBase:    s.cfg.Bool("aof-use-rdb-preamble"),
		Logf:       s.log.Noticef,
		OnProgress: s.aofProgressed,
		OnAlwaysFailure: func(what string, err error) {
			if what == "writing to" {
				s.fatalf("Can't recover from AOF write error when the AOF fsync policy is 'always'. Exiting...")
			}
			s.fatalf("Can't persist AOF for fsync error when the AOF fsync policy is 'always': %v. Exiting...", err)
		},
		KeepHistory: func() bool { return s.cfg.Bool("aof-disable-auto-gc") },
	}, nil
}

// setAOFWriter makes w (nil: none) the AOF, the propagation stream's
// consumer. Tickets are the writer's own: the last one starts over.
// Under the lock.
func (s *Server) setAOFWriter(w *aof.Writer) {
	s.aof.w, s.aof.last = w, 0
	if w == nil {
		s.disp.Detach(&s.aof)
	} else {
		s.disp.Attach(&s.aof)
	}
}

// watchAOFConfig applies CONFIG SET appendfsync (at once: connections
// check the policy as they finish a batch) and appendonly.
func (s *Server) watchAOFConfig() {
	// aof-disable-auto-gc no deletes the history files at once, as Redis's
	// updateAofAutoGCEnabled; on a goroutine of the background saves (the
	// writer's manifest lock may be held by a rewrite writing its base),
	// which shutdown waits for.
	s.cfg.OnChange("aof-disable-auto-gc", func(v string) error {
		if w := s.aof.w; v == "no" && w != nil {
			s.rdb.saving.Add(1)
			go func() {
				defer s.rdb.saving.Done()
				w.DeleteHistory()
			}()
		}
		return nil
	})
	s.cfg.OnChange("appendfsync", func(v string) error {
		p, err := aof.ParsePolicy(v)
		if err != nil {
			return err
		}
		if s.aof.w != nil {
			s.aof.w.SetPolicy(p)
		}
		return nil
	})
	s.cfg.OnChange("appendonly", func(v string) error {
		switch on := v == "yes"; {
		case s.disp.Loading.Load():
			return errors.New("the dataset is loading")
		case on && s.aof.w == nil && s.aof.rewriting:
			// Redis schedules the rewrite that turns the AOF on.
			s.aof.startPending = true
		case on && s.aof.w == nil:
			return s.startAOF()
		case !on:
			s.aof.startPending = false
			if s.aof.w != nil {
				s.stopAOF()
			}
		}
		return nil
	})
}

// startAOF turns the AOF on at run time, as Redis's startAppendOnly: a new
// incremental file receives every change from now on, and the first base
// is written from a snapshot of this instant on a goroutine (a rewrite:
// aof_rewrite_in_progress meanwhile). The manifest on disk lists the two
// once the base is written. Under the lock (a CONFIG SET hook); the file
// and directory are created here.
func (s *Server) startAOF() error {
	a := &s.aof
	a.startPending = false
	opt, err := s.aofWriterOptions()
	if err != nil {
		return err
	}
	dir, prefix, m, err := s.readAOFManifest()
	if err != nil {
		return err
	}
	w, rw, err := aof.StartWriter(dir, prefix, m, opt)
	if err != nil {
		s.log.Warningf("Redis needs to enable the AOF but can't open the append only file: %v", err)
		return err
	}
	snap := s.ks.Snapshot()
	s.setAOFWriter(w)
	a.rewriting, a.rewriteStart = true, time.Now()
	s.log.Noticef("Background append only file rewriting started")
	rdbBase := s.cfg.Bool("aof-use-rdb-preamble")
	s.rdb.saving.Add(1)
	go func() {
		defer s.rdb.saving.Done()
		err := rw.Commit(rdbBase, func(out io.Writer) error { return s.encodeBase(out, snap, rdbBase) })
		snap.Release()
		s.ks.Exec(func() {
			s.rewriteDone(err)
			if err != nil && s.aof.w == w {
				// The new file is listed nowhere: the AOF cannot stay on.
				s.log.Warningf("The AOF stays off: its first base could not be written")
				s.stopAOF()
			}
		})
	}()
	return nil
}

// stopAOF turns the AOF off (CONFIG SET appendonly no), as Redis's
// stopAppendOnly: changes are no longer propagated, and what was appended
// is written and fsynced by a goroutine the shutdown waits for (a rewrite
// in progress finishes first: its directory stays loadable). Replies held
// for the AOF go out once their writes are on disk. Under the lock.
func (s *Server) stopAOF() {
	w := s.aof.w
	s.aof.stopped, s.aof.stoppedLast = w, s.aof.last
	s.setAOFWriter(nil)
	s.log.Noticef("Calling fsync() on the AOF file.")
	s.rdb.saving.Add(1)
	go func() {
		defer s.rdb.saving.Done()
		if err := w.Close(); err != nil {
			s.log.Warningf("Closing the append only file: %v", err)
		}
	}()
}

// writeBase writes the current dataset as an AOF base: RDB when rdb
// (aof-use-rdb-preamble, read once by the caller, which also names the
// file after it), commands otherwise.
func (s *Server) writeBase(w io.Writer, rdb bool) error {
	var snap *keyspace.Snapshot
	s.ks.Exec(func() { snap = s.ks.Snapshot() })
	defer snap.Release()
	return s.encodeBase(w, snap, rdb)
}

func (s *Server) encodeBase(w io.Writer, snap *keyspace.Snapshot, rdb bool) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	var err error
	if rdb {
		err = s.encodeSnapshot(bw, snap, snapFunctions(snap), true, nil)
	} else {
		err = aof.WriteCommands(bw, snap, s.ks.NumDBs())
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

// startAOFRewrite is BGREWRITEAOF: the new incremental file is opened, the
// snapshot taken at the cut, and the base written from it, all on a
// goroutine the server waits for at shutdown. Under the lock.
func (s *Server) startAOFRewrite() string {
	a := &s.aof
	if a.rewriting {
		return engine.ErrRewriteInProgress
	}
	a.rewriting, a.rewriteStart, a.scheduled = true, time.Now(), false
	s.log.Noticef("Background append only file rewriting started")
	w := a.w
	var snap *keyspace.Snapshot
	if w == nil {
		// With the AOF off Redis 7.0 still rewrites: the directory gets a
		// base of the dataset as of now and a manifest listing only it.
		snap = s.ks.Snapshot()
	}
	s.rdb.saving.Add(1)
	go func() {
		defer s.rdb.saving.Done()
		var err error
		if w != nil {
			err = s.rewriteAOF(w)
		} else {
			err = s.writeAOFBaseOnly(snap)
			snap.Release()
		}
		s.ks.Exec(func() { s.rewriteDone(err) })
	}()
	return "Background append only file rewriting started"
}

// writeAOFBaseOnly is BGREWRITEAOF with the AOF off: the directory's
// manifest ends up listing a new base written from snap and nothing else.
func (s *Server) writeAOFBaseOnly(snap *keyspace.Snapshot) error {
	dir, prefix, m, err := s.readAOFManifest()
	if err != nil {
		return err
	}
	rdbBase := s.cfg.Bool("aof-use-rdb-preamble")
	return aof.WriteBaseOnly(dir, prefix, m, rdbBase, s.cfg.Bool("aof-disable-auto-gc"),
		func(w io.Writer) error { return s.encodeBase(w, snap, rdbBase) }, s.log.Noticef)
}

// rewriteDone records the end of a rewrite, then turns the AOF on if
// CONFIG SET appendonly yes came meanwhile (in the same hold of the lock,
// so no write falls between the two). Under the lock.
func (s *Server) rewriteDone(err error) {
	a := &s.aof
	a.rewriting = false
	defer func() {
		if a.startPending && !s.closing {
			if err := s.startAOF(); err != nil {
				s.log.Warningf("Turning the AOF on: %v", err)
			}
		}
	}()
	a.lastRewriteSec = int64(time.Since(a.rewriteStart).Seconds())
	a.lastRewriteOK = err == nil
	if err != nil {
		a.rewriteFails++
		s.log.Warningf("Background AOF rewrite failed: %v", err)
		return
	}
	a.rewrites++
	a.rewriteFails = 0 // consecutive failures, as Redis counts them
	if a.w != nil {
		a.baseSize = a.w.Status().BaseSize
	}
}

func (s *Server) rewriteAOF(w *aof.Writer) error {
	rw, err := w.StartRewrite()
	if err != nil {
		return err
	}
	var snap *keyspace.Snapshot
	s.ks.Exec(func() {
		rw.Cut()
		snap = s.ks.Snapshot()
	})
	defer snap.Release()
	rdbBase := s.cfg.Bool("aof-use-rdb-preamble")
	if err := rw.Commit(rdbBase, func(w io.Writer) error { return s.encodeBase(w, snap, rdbBase) }); err != nil {
		rw.Abort()
		return err
	}
	return nil
}

// checkAOFRewrite starts a rewrite when the AOF grew by
// auto-aof-rewrite-percentage over its base and is at least
// auto-aof-rewrite-min-size (serverCron). Under the lock.
func (s *Server) checkAOFRewrite() {
	a := &s.aof
	if a.rewriting || s.closing {
		return
	}
	if a.scheduled {
		s.startAOFRewrite()
		return
	}
	pct := s.cfg.Int("auto-aof-rewrite-percentage")
	if a.w == nil || pct == 0 {
		return
	}
	st := a.w.Status()
	if st.CurrentSize < s.cfg.Int("auto-aof-rewrite-min-size") {
		return
	}
	base := max(a.baseSize, 1)
	if (st.CurrentSize-base)*100/base >= pct {
		s.log.Noticef("Starting automatic rewriting of AOF on %d%% growth", (st.CurrentSize-base)*100/base)
		s.startAOFRewrite()
	}
}

// aofRefused is the MISCONF error while the AOF cannot be written.
func (s *Server) aofRefused() string {
	if s.aof.w == nil {
		return ""
	}
	if err := s.aof.w.Err(); err != nil {
		return engine.ErrMisconfAOF(err)
	}
	return ""
}

// closeAOF flushes, fsyncs and closes the AOF at shutdown.
func (s *Server) closeAOF() {
	if s.aof.w == nil {
		return
	}
	if err := s.aof.w.Close(); err != nil {
		s.log.Warningf("Closing the append only file: %v", err)
	}
}

// infoAOF appends INFO persistence's AOF fields.
func (s *Server) infoAOF(b []byte) []byte {
	a := &s.aof
	b = engine.InfoInt(b, "aof_enabled", boolInt(a.w != nil || a.startPending))
	b = engine.InfoInt(b, "aof_rewrite_in_progress", boolInt(a.rewriting))
	b = engine.InfoInt(b, "aof_rewrite_scheduled", boolInt(a.scheduled))
	b = engine.InfoInt(b, "aof_last_rewrite_time_sec", a.lastRewriteSec)
	current := int64(-1)
	if a.rewriting {
		current = int64(time.Since(a.rewriteStart).Seconds())
	}
	b = engine.InfoInt(b, "aof_current_rewrite_time_sec", current)
	b = engine.InfoStr(b, "aof_last_bgrewrite_status", okErr(a.lastRewriteOK))
	b = engine.InfoInt(b, "aof_rewrites", a.rewrites)
	b = engine.InfoInt(b, "aof_rewrites_consecutive_failures", a.rewriteFails)
	writeOK := a.w == nil || a.w.Err() == nil
	b = engine.InfoStr(b, "aof_last_write_status", okErr(writeOK))
	b = engine.InfoInt(b, "aof_last_cow_size", 0)
	b = engine.InfoInt(b, "module_fork_in_progress", 0)
	b = engine.InfoInt(b, "module_fork_last_cow_size", 0)
	if a.w != nil {
		st := a.w.Status()
		b = engine.InfoInt(b, "aof_current_size", st.CurrentSize)
		b = engine.InfoInt(b, "aof_base_size", st.BaseSize)
		b = engine.InfoInt(b, "aof_pending_rewrite", 0)
		b = engine.InfoInt(b, "aof_buffer_length", st.BufferLength)
		b = engine.InfoInt(b, "aof_pending_bio_fsync", boolInt(st.PendingFsync))
		b = engine.InfoInt(b, "aof_delayed_fsync", 0)
	}
	return b
}
