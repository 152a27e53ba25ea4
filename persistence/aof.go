package persistence

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/persistence/aof"
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
	stopped        *aof.Writer // the writer stopAOF closed last, and its last ticket (see AOFWait)
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
func (p *Service) aofDir() string {
	return filepath.Join(p.cfg.String("dir"), p.cfg.String("appenddirname"))
}

// readAOFManifest reads the manifest of the AOF directory; m is nil when
// there is none.
func (p *Service) readAOFManifest() (dir, prefix string, m *aof.Manifest, err error) {
	dir, prefix = p.aofDir(), p.cfg.String("appendfilename")
	m, err = aof.ReadManifest(filepath.Join(dir, aof.ManifestName(prefix)))
	if errors.Is(err, os.ErrNotExist) {
		m, err = nil, nil
	}
	return dir, prefix, m, err
}

// openAOF opens the AOF for appending and makes it the propagation
// target. Called before the expiry timer starts, so the keys expired
// right after loading are propagated too.
func (p *Service) openAOF(dir, prefix string, m *aof.Manifest) error {
	opt, err := p.aofWriterOptions()
	if err != nil {
		return err
	}
	opt.WriteBase = func(w io.Writer) error { return p.writeBase(w, opt.RDBBase) }
	w, err := aof.OpenWriter(dir, prefix, m, opt)
	if err != nil {
		return err
	}
	// History left by a rewrite interrupted before it deleted them goes
	// now, unless aof-disable-auto-gc (Redis's aofDelHistoryFiles at start).
	w.DeleteHistory()
	p.ks.Exec(func() { p.setAOFWriter(w) })
	return nil
}

func (p *Service) aofWriterOptions() (aof.WriterOptions, error) {
	policy, err := aof.ParsePolicy(p.cfg.String("appendfsync"))
	if err != nil {
		return aof.WriterOptions{}, err
	}
	return aof.WriterOptions{
		Policy:     policy,
		Timestamps: p.cfg.Bool("aof-timestamp-enabled"),
		RDBBase:    p.cfg.Bool("aof-use-rdb-preamble"),
		Logf:       p.log.Noticef,
		OnProgress: p.host.AOFProgressed,
		OnAlwaysFailure: func(what string, err error) {
			if what == "writing to" {
				p.host.Fatalf("Can't recover from AOF write error when the AOF fsync policy is 'always'. Exiting...")
			}
			p.host.Fatalf("Can't persist AOF for fsync error when the AOF fsync policy is 'always': %v. Exiting...", err)
		},
		KeepHistory: func() bool { return p.cfg.Bool("aof-disable-auto-gc") },
		Companion:   p.companion,
	}, nil
}

// setAOFWriter makes w (nil: none) the AOF, the propagation stream's
// consumer. Tickets are the writer's own: the last one starts over.
// Under the lock.
func (p *Service) setAOFWriter(w *aof.Writer) {
	p.aof.w, p.aof.last = w, 0
	if p.companion != nil {
		p.companion.Attach(w != nil)
	}
	if w == nil {
		p.disp.Detach(&p.aof)
	} else {
		p.disp.Attach(&p.aof)
	}
}

// watchConfig applies CONFIG SET appendfsync (at once: connections
// check the policy as they finish a batch) and appendonly.
func (p *Service) watchConfig() {
	// aof-disable-auto-gc no deletes the history files at once, as Redis's
	// updateAofAutoGCEnabled; on a goroutine of the background saves (the
	// writer's manifest lock may be held by a rewrite writing its base),
	// which shutdown waits for.
	p.cfg.OnChange("aof-disable-auto-gc", func(v string) error {
		if w := p.aof.w; v == "no" && w != nil {
			p.saving.Add(1)
			go func() {
				defer p.saving.Done()
				w.DeleteHistory()
			}()
		}
		return nil
	})
	p.cfg.OnChange("appendfsync", func(v string) error {
		pol, err := aof.ParsePolicy(v)
		if err != nil {
			return err
		}
		if p.aof.w != nil {
			p.aof.w.SetPolicy(pol)
		}
		return nil
	})
	p.cfg.OnChange("appendonly", func(v string) error {
		switch on := v == "yes"; {
		case p.disp.Loading.Load():
			return errors.New("the dataset is loading")
		case on && p.aof.w == nil && p.aof.rewriting:
			// Redis schedules the rewrite that turns the AOF on.
			p.aof.startPending = true
		case on && p.aof.w == nil:
			return p.startAOF()
		case !on:
			p.aof.startPending = false
			if p.aof.w != nil {
				p.stopAOF()
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
func (p *Service) startAOF() error {
	a := &p.aof
	a.startPending = false
	opt, err := p.aofWriterOptions()
	if err != nil {
		return err
	}
	dir, prefix, m, err := p.readAOFManifest()
	if err != nil {
		return err
	}
	w, rw, err := aof.StartWriter(dir, prefix, m, opt)
	if err != nil {
		p.log.Warningf("Redis needs to enable the AOF but can't open the append only file: %v", err)
		return err
	}
	snap := p.ks.Snapshot()
	p.setAOFWriter(w)
	a.rewriting, a.rewriteStart = true, time.Now()
	p.log.Noticef("Background append only file rewriting started")
	rdbBase := p.cfg.Bool("aof-use-rdb-preamble")
	p.saving.Add(1)
	go func() {
		defer p.saving.Done()
		err := rw.Commit(rdbBase, func(out io.Writer) error { return p.encodeBase(out, snap, rdbBase) })
		snap.Release()
		p.ks.Exec(func() {
			p.rewriteDone(err)
			if err != nil && p.aof.w == w {
				// The new file is listed nowhere: the AOF cannot stay on.
				p.log.Warningf("The AOF stays off: its first base could not be written")
				p.stopAOF()
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
func (p *Service) stopAOF() {
	w := p.aof.w
	p.aof.stopped, p.aof.stoppedLast = w, p.aof.last
	p.setAOFWriter(nil)
	p.log.Noticef("Calling fsync() on the AOF file.")
	p.saving.Add(1)
	go func() {
		defer p.saving.Done()
		if err := w.Close(); err != nil {
			p.log.Warningf("Closing the append only file: %v", err)
		}
	}()
}

// writeBase writes the current dataset as an AOF base: RDB when rdb
// (aof-use-rdb-preamble, read once by the caller, which also names the
// file after it), commands otherwise.
func (p *Service) writeBase(w io.Writer, rdb bool) error {
	var snap *keyspace.Snapshot
	p.ks.Exec(func() { snap = p.ks.Snapshot() })
	defer snap.Release()
	return p.encodeBase(w, snap, rdb)
}

func (p *Service) encodeBase(w io.Writer, snap *keyspace.Snapshot, rdb bool) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	var err error
	if rdb {
		err = p.encodeSnapshot(bw, snap, snapFunctions(snap), true, nil)
	} else {
		err = aof.WriteCommands(bw, snap, p.ks.NumDBs())
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

// startAOFRewrite is BGREWRITEAOF: the new incremental file is opened, the
// snapshot taken at the cut, and the base written from it, all on a
// goroutine the Service owns (Wait). Under the lock.
func (p *Service) startAOFRewrite() string {
	a := &p.aof
	if a.rewriting {
		return engine.ErrRewriteInProgress
	}
	a.rewriting, a.rewriteStart, a.scheduled = true, time.Now(), false
	p.log.Noticef("Background append only file rewriting started")
	w := a.w
	var snap *keyspace.Snapshot
	if w == nil {
		// With the AOF off Redis 7.0 still rewrites: the directory gets a
		// base of the dataset as of now and a manifest listing only it.
		snap = p.ks.Snapshot()
	}
	p.saving.Add(1)
	go func() {
		defer p.saving.Done()
		var err error
		if w != nil {
			err = p.rewriteAOF(w)
		} else {
			err = p.writeAOFBaseOnly(snap)
			snap.Release()
		}
		p.ks.Exec(func() { p.rewriteDone(err) })
	}()
	return "Background append only file rewriting started"
}

// writeAOFBaseOnly is BGREWRITEAOF with the AOF off: the directory's
// manifest ends up listing a new base written from snap and nothing else.
func (p *Service) writeAOFBaseOnly(snap *keyspace.Snapshot) error {
	dir, prefix, m, err := p.readAOFManifest()
	if err != nil {
		return err
	}
	rdbBase := p.cfg.Bool("aof-use-rdb-preamble")
	return aof.WriteBaseOnly(dir, prefix, m, rdbBase, p.cfg.Bool("aof-disable-auto-gc"),
		func(w io.Writer) error { return p.encodeBase(w, snap, rdbBase) }, p.log.Noticef)
}

// rewriteDone records the end of a rewrite, then turns the AOF on if
// CONFIG SET appendonly yes came meanwhile (in the same hold of the lock,
// so no write falls between the two). Under the lock.
func (p *Service) rewriteDone(err error) {
	a := &p.aof
	a.rewriting = false
	defer func() {
		if a.startPending && !p.host.Closing() {
			if err := p.startAOF(); err != nil {
				p.log.Warningf("Turning the AOF on: %v", err)
			}
		}
	}()
	a.lastRewriteSec = int64(time.Since(a.rewriteStart).Seconds())
	a.lastRewriteOK = err == nil
	if err != nil {
		a.rewriteFails++
		p.log.Warningf("Background AOF rewrite failed: %v", err)
		return
	}
	a.rewrites++
	a.rewriteFails = 0 // consecutive failures, as Redis counts them
	if a.w != nil {
		a.baseSize = a.w.Status().BaseSize
	}
}

func (p *Service) rewriteAOF(w *aof.Writer) error {
	rw, err := w.StartRewrite()
	if err != nil {
		return err
	}
	var snap *keyspace.Snapshot
	p.ks.Exec(func() {
		rw.Cut()
		snap = p.ks.Snapshot()
	})
	defer snap.Release()
	rdbBase := p.cfg.Bool("aof-use-rdb-preamble")
	if err := rw.Commit(rdbBase, func(w io.Writer) error { return p.encodeBase(w, snap, rdbBase) }); err != nil {
		rw.Abort()
		return err
	}
	return nil
}

// checkAOFRewrite starts a rewrite when the AOF grew by
// auto-aof-rewrite-percentage over its base and is at least
// auto-aof-rewrite-min-size (serverCron). Under the lock.
func (p *Service) checkAOFRewrite() {
	a := &p.aof
	if a.rewriting || p.host.Closing() {
		return
	}
	if a.scheduled {
		p.startAOFRewrite()
		return
	}
	pct := p.cfg.Int("auto-aof-rewrite-percentage")
	if a.w == nil || pct == 0 {
		return
	}
	st := a.w.Status()
	if st.CurrentSize < p.cfg.Int("auto-aof-rewrite-min-size") {
		return
	}
	base := max(a.baseSize, 1)
	if (st.CurrentSize-base)*100/base >= pct {
		p.log.Noticef("Starting automatic rewriting of AOF on %d%% growth", (st.CurrentSize-base)*100/base)
		p.startAOFRewrite()
	}
}

// RewriteAOFAfterSync rewrites the AOF after a replica's full
// synchronisation loaded a data set it does not hold
// (restartAOFAfterSYNC), or schedules the rewrite after the one running.
// Under the lock.
func (p *Service) RewriteAOFAfterSync() {
	if p.aof.rewriting {
		p.aof.scheduled = true
	} else {
		p.startAOFRewrite()
	}
}

// KickAOF has the AOF's flusher write (and under appendfsync always
// fsync) what was appended, without waiting: the expiry timer's DELs,
// which no client waits for. Under the lock.
func (p *Service) KickAOF() {
	if p.aof.w != nil {
		p.aof.w.Kick()
	}
}

// AOFTicket is the AOF writer (nil: the AOF is off) and the ticket of the
// last command appended to it: a connection notes them before running a
// batch, and hands them to AOFWait after. Under the lock.
func (p *Service) AOFTicket() (*aof.Writer, aof.Ticket) { return p.aof.w, p.aof.last }

// AOFWait reports whether the commands run since writer w's ticket was
// before were appended to the AOF, and then the writer and the ticket
// the batch's replies must wait for: the current writer's last ticket,
// or, when the batch turned the AOF off (CONFIG SET appendonly no) after
// writing, the stopped writer's, as Redis's stopAppendOnly fsyncs before
// replying. Under the lock.
func (p *Service) AOFWait(w *aof.Writer, before aof.Ticket) (*aof.Writer, aof.Ticket, bool) {
	a := &p.aof
	switch {
	case w != nil && w != a.w && w == a.stopped && a.stoppedLast != before:
		return w, a.stoppedLast, true
	case a.w != nil && a.last != before && (w == a.w || w == nil):
		return a.w, a.last, true
	}
	return nil, 0, false
}

// aofRefused is the MISCONF error while the AOF cannot be written.
func (p *Service) aofRefused() string {
	if p.aof.w == nil {
		return ""
	}
	if err := p.aof.w.Err(); err != nil {
		return engine.ErrMisconfAOF(err)
	}
	return ""
}

// CloseAOF flushes, fsyncs and closes the AOF at shutdown.
func (p *Service) CloseAOF() {
	if p.aof.w == nil {
		return
	}
	if err := p.aof.w.Close(); err != nil {
		p.log.Warningf("Closing the append only file: %v", err)
	}
}

// infoAOF appends INFO persistence's AOF fields.
func (p *Service) infoAOF(b []byte) []byte {
	a := &p.aof
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
