package persistence

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/persistence/rdb"
)

// rdbRetryDelay is how long after a failed background save the save
// points wait before trying again (CONFIG_BGSAVE_RETRY_DELAY).
const rdbRetryDelay = 5 * time.Second

// rdbState is what the server knows of its RDB saves, for INFO
// persistence and the save points. Fields are read and written under the
// keyspace lock.
type rdbState struct {
	lastSave      int64 // Unix s of the last successful save (start time until one)
	lastOK        bool  // the last background save succeeded
	lastTry       time.Time
	bgRunning     bool
	fgRunning     bool // a SAVE is writing its file (off the lock)
	scheduled     bool // BGSAVE inside EXEC: the cron starts it
	bgStart       time.Time
	bgDirty       int64 // p.stats.Dirty when the running save took its snapshot
	lastBgSeconds int64 // -1 before the first
	saves         int64
	loadedKeys    int64
	loadedExpired int64
}

// Save implements engine.Persistence (SAVE): the file is written by
// the function returned, without the lock.
func (p *Service) Save(snap *keyspace.Snapshot) (func() error, string) {
	if p.rdb.bgRunning || p.rdb.fgRunning {
		// Redis's SAVE blocks the server, so no two saves overlap
		// there; here a second one would race the first's rename and
		// could leave the older snapshot in place.
		return nil, engine.ErrBGSaveInProgress
	}
	dirty := p.stats.Dirty
	aux := p.host.ReplInfo()
	p.rdb.fgRunning = true
	p.saving.Add(1) // a shutdown's final save waits for it
	return func() error {
		defer p.saving.Done()
		err := p.writeRDB(snap, aux)
		snap.Release()
		p.ks.Exec(func() {
			p.rdb.fgRunning = false
			p.rdbSaved(err, dirty, false)
		})
		return err
	}, ""
}

// BGSave implements engine.Persistence (BGSAVE).
func (p *Service) BGSave(inTx bool) string {
	if p.rdb.bgRunning || p.rdb.fgRunning {
		return engine.ErrBGSaveInProgress
	}
	if inTx {
		p.rdb.scheduled = true // started by the cron (checkSavePoints)
		return "Background saving scheduled"
	}
	p.startBGSave()
	return "Background saving started"
}

// LastSave implements engine.Persistence (LASTSAVE).
func (p *Service) LastSave() int64 { return p.rdb.lastSave }

// RewriteAOF implements engine.Persistence (BGREWRITEAOF).
func (p *Service) RewriteAOF(inTx bool) string {
	if p.aof.rewriting {
		return engine.ErrRewriteInProgress
	}
	if inTx {
		p.aof.scheduled = true // started by the cron (checkAOFRewrite)
		return "Background append only file rewriting scheduled"
	}
	return p.startAOFRewrite()
}

// startBGSave takes a snapshot and writes it on a goroutine the Service
// owns (Wait, which a shutdown calls). Under the lock.
func (p *Service) startBGSave() {
	p.rdb.scheduled = false
	snap := p.ks.Snapshot()
	aux := p.host.ReplInfo()
	p.rdb.bgRunning = true
	p.rdb.bgStart = time.Now()
	p.rdb.bgDirty = p.stats.Dirty
	p.rdb.lastTry = p.rdb.bgStart
	p.log.Noticef("Background saving started")
	p.saving.Add(1)
	go func() {
		defer p.saving.Done()
		err := p.writeRDB(snap, aux)
		snap.Release()
		p.ks.Exec(func() { p.rdbSaved(err, p.rdb.bgDirty, true) })
	}()
}

// rdbSaved records the end of a save. Under the lock.
func (p *Service) rdbSaved(err error, dirtyBefore int64, background bool) {
	if background {
		p.rdb.bgRunning = false
		p.rdb.lastBgSeconds = int64(time.Since(p.rdb.bgStart).Seconds())
		p.rdb.lastOK = err == nil
	}
	if err != nil {
		// As in Redis, only a failed background save sets the status
		// that MISCONF reads; a failed SAVE is reported to its caller.
		p.log.Warningf("Failed saving the DB: %v", err)
		return
	}
	p.rdb.lastOK = true
	p.rdb.lastSave = time.Now().Unix()
	p.rdb.saves++
	p.stats.Dirty -= dirtyBefore
	if background {
		p.log.Noticef("Background saving terminated with success")
	} else {
		p.log.Noticef("DB saved on disk")
	}
}

// RDBPath is dir/dbfilename.
func (p *Service) RDBPath() string {
	return filepath.Join(p.cfg.String("dir"), p.cfg.String("dbfilename"))
}

// writeRDB writes snap, with the aux fields aux, to a temporary file in
// dir, fsyncs it and renames it over dbfilename (rdbSave): a crash
// leaves the previous file whole. It runs without the lock.
func (p *Service) writeRDB(snap *keyspace.Snapshot, aux [][2]string) error {
	_, err := p.writeRDBFile(snap, aux, false)
	return err
}

// writeRDBFile is writeRDB; with reopen it also returns the file written,
// opened for reading before it was renamed: what DEBUG RELOAD reads back
// is what it wrote, whatever another save renames over dbfilename
// meanwhile.
func (p *Service) writeRDBFile(snap *keyspace.Snapshot, aux [][2]string, reopen bool) (*os.File, error) {
	dir := p.cfg.String("dir")
	tmp := filepath.Join(dir, fmt.Sprintf("temp-%d-%d.rdb", os.Getpid(), time.Now().UnixNano()))
	f, err := os.Create(tmp)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", tmp, err)
	}
	err = p.encodeRDB(f, snap, snapFunctions(snap), aux)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	var written *os.File
	if err == nil && reopen {
		written, err = os.Open(tmp)
	}
	if err == nil {
		err = os.Rename(tmp, p.RDBPath())
	}
	if err != nil {
		if written != nil {
			written.Close()
		}
		os.Remove(tmp)
		return nil, err
	}
	syncDir(dir)
	return written, nil
}

func (p *Service) encodeRDB(f *os.File, snap *keyspace.Snapshot, functions []string, aux [][2]string) error {
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := p.encodeSnapshot(bw, snap, functions, false, aux); err != nil {
		return err
	}
	return bw.Flush()
}

// EncodeRDB writes snap (nil: no keys), with the function libraries of
// functions and the aux fields aux, as an RDB stream to out: a
// replica's full synchronisation. Without the lock.
func (p *Service) EncodeRDB(out io.Writer, snap *keyspace.Snapshot, functions []string, aux [][2]string) error {
	return p.encodeSnapshot(out, snap, functions, false, aux)
}

// encodeSnapshot writes snap as an RDB stream (aofBase: as the preamble
// of an AOF base), with the function libraries of functions before the
// databases; with snap nil, an RDB with its aux fields and no keys (a
// replica's filtered RDB). It reads the snapshot without the lock. The
// stream is of version 10, Redis 7.0's, unless a hash of snap has field
// TTLs: then of version 12, as Redis 7.4 writes it.
func (p *Service) encodeSnapshot(out io.Writer, snap *keyspace.Snapshot, functions []string, aofBase bool, aux [][2]string) error {
	w, err := rdb.NewWriter(out, rdb.WriterOptions{
		Compress:  p.cfg.Bool("rdbcompression"),
		Checksum:  p.cfg.Bool("rdbchecksum"),
		UsedMem:   engine.ReadMemory().Heap,
		AOFBase:   aofBase,
		Aux:       aux,
		FieldTTLs: snap != nil && snapHasFieldTTLs(snap, p.ks.NumDBs()),
	})
	if err != nil {
		return err
	}
	for _, code := range functions {
		if err := w.WriteFunction(code); err != nil {
			return err
		}
	}
	for db := 0; snap != nil && db < p.ks.NumDBs(); db++ {
		keys, volatile := snap.Counts(db)
		if keys == 0 {
			continue
		}
		if err := w.SelectDB(db, keys, volatile); err != nil {
			return err
		}
		snap.ForEachAll(db, func(key string, e *keyspace.Entry) bool {
			err = w.WriteEntry(key, e)
			return err == nil
		})
		if err != nil {
			return err
		}
	}
	return w.Close()
}

// snapHasFieldTTLs reports whether a hash of snap has a field with a TTL,
// which the RDB version must be chosen for before the first key is
// written: a pass over the keys that stops at the first such hash. It
// only looks at each key's type, but on a dataset of small strings
// without such hashes it still costs about a fifth of writing them; a
// count of those hashes kept with the snapshot would spare it.
func snapHasFieldTTLs(snap *keyspace.Snapshot, dbs int) bool {
	found := false
	for db := 0; db < dbs && !found; db++ {
		if keys, _ := snap.Counts(db); keys == 0 {
			continue
		}
		snap.ForEachAll(db, func(_ string, e *keyspace.Entry) bool {
			found = rdb.HasFieldTTLs(e)
			return !found
		})
	}
	return found
}

// snapFunctions are the function libraries' codes as of snap.
func snapFunctions(snap *keyspace.Snapshot) []string {
	if snap == nil {
		return nil
	}
	codes, _ := snap.Extra.([]string)
	return codes
}

// syncDir fsyncs a directory so that a rename in it is durable.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// checkSavePoints starts a background save when a save point is reached
// (serverCron's "save <seconds> <changes>" check). Under the lock.
func (p *Service) checkSavePoints(now time.Time) {
	if p.rdb.bgRunning || p.rdb.fgRunning || p.host.Closing() {
		return
	}
	if p.rdb.scheduled {
		p.startBGSave()
		return
	}
	for _, sp := range p.cfg.SaveParams() {
		elapsed := now.Unix() - p.rdb.lastSave
		if p.stats.Dirty >= int64(sp.Changes) && elapsed > int64(sp.Seconds) &&
			(p.rdb.lastOK || now.Sub(p.rdb.lastTry) > rdbRetryDelay) {
			p.log.Noticef("%d changes in %d seconds. Saving...", sp.Changes, sp.Seconds)
			p.startBGSave()
			return
		}
	}
}

// ShutdownSave saves the dataset at shutdown when asked (SHUTDOWN SAVE) or
// when save points are set and NOSAVE was not given. It runs after the
// clients and the expiry timer have stopped, and after Wait. Without
// the lock.
func (p *Service) ShutdownSave(opts engine.ShutdownOptions) error {
	if opts.NoSave || (!opts.Save && len(p.cfg.SaveParams()) == 0) {
		return nil
	}
	p.log.Noticef("Saving the final RDB snapshot before exiting.")
	p.host.Notify("STATUS=Saving the final RDB snapshot\n")
	var snap *keyspace.Snapshot
	var aux [][2]string
	p.ks.Exec(func() { snap, aux = p.ks.Snapshot(), p.host.ReplInfo() })
	err := p.writeRDB(snap, aux)
	snap.Release()
	if err != nil {
		p.log.Warningf("Write error saving DB on disk: %v", err)
		return err
	}
	p.log.Noticef("DB saved on disk")
	return nil
}
