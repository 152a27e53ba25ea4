package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/zredis/zredis/commands"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/persistence/rdb"
)

// loadBatch is how many loaded keys go into the keyspace per acquisition
// of the lock.
const loadBatch = 1024

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
	bgDirty       int64 // s.stats.Dirty when the running save took its snapshot
	lastBgSeconds int64 // -1 before the first
	saves         int64
	loadedKeys    int64
	loadedExpired int64
	saving        sync.WaitGroup // the running save's (SAVE's or BGSAVE's) goroutine
}

// persister implements engine.Persistence for the server.
type persister struct{ s *Server }

// Persistence implements engine.Server.
func (s *Server) Persistence() engine.Persistence { return persister{s} }

// Warning logs msg for the engine and the commands (ACL SAVE failures).
func (s *Server) Warning(msg string) { s.log.Warningf("%s", msg) }

func (p persister) Save(snap *keyspace.Snapshot) (func() error, string) {
	s := p.s
	if s.rdb.bgRunning || s.rdb.fgRunning {
		// Redis's SAVE blocks the server, so no two saves overlap
		// there; here a second one would race the first's rename and
		// could leave the older snapshot in place.
		return nil, engine.ErrBGSaveInProgress
	}
	dirty := s.stats.Dirty
	aux := s.link.SaveInfo()
	s.rdb.fgRunning = true
	s.rdb.saving.Add(1) // a shutdown's final save waits for it
	return func() error {
		defer s.rdb.saving.Done()
		err := s.writeRDB(snap, aux)
		snap.Release()
		s.ks.Exec(func() {
			s.rdb.fgRunning = false
			s.rdbSaved(err, dirty, false)
		})
		return err
	}, ""
}

func (p persister) BGSave(inTx bool) string {
	s := p.s
	if s.rdb.bgRunning || s.rdb.fgRunning {
		return engine.ErrBGSaveInProgress
	}
	if inTx {
		s.rdb.scheduled = true // started by the cron (checkSavePoints)
		return "Background saving scheduled"
	}
	s.startBGSave()
	return "Background saving started"
}

func (p persister) LastSave() int64 { return p.s.rdb.lastSave }

func (p persister) RewriteAOF(inTx bool) string {
	s := p.s
	if s.aof.rewriting {
		return engine.ErrRewriteInProgress
	}
	if inTx {
		s.aof.scheduled = true // started by the cron (checkAOFRewrite)
		return "Background append only file rewriting scheduled"
	}
	return s.startAOFRewrite()
}

func (p persister) WritesRefused() string {
	s := p.s
	if msg := s.aofRefused(); msg != "" {
		return msg
	}
	if !s.rdb.lastOK && len(s.cfg.SaveParams()) > 0 && s.cfg.Bool("stop-writes-on-bgsave-error") {
		return engine.ErrMisconfRDB
	}
	return ""
}

// startBGSave takes a snapshot and writes it on a goroutine the server
// waits for at shutdown. Under the lock.
func (s *Server) startBGSave() {
	s.rdb.scheduled = false
	snap := s.ks.Snapshot()
	aux := s.link.SaveInfo()
	s.rdb.bgRunning = true
	s.rdb.bgStart = time.Now()
	s.rdb.bgDirty = s.stats.Dirty
	s.rdb.lastTry = s.rdb.bgStart
	s.log.Noticef("Background saving started")
	s.rdb.saving.Add(1)
	go func() {
		defer s.rdb.saving.Done()
		err := s.writeRDB(snap, aux)
		snap.Release()
		s.ks.Exec(func() { s.rdbSaved(err, s.rdb.bgDirty, true) })
	}()
}

// rdbSaved records the end of a save. Under the lock.
func (s *Server) rdbSaved(err error, dirtyBefore int64, background bool) {
	if background {
		s.rdb.bgRunning = false
		s.rdb.lastBgSeconds = int64(time.Since(s.rdb.bgStart).Seconds())
		s.rdb.lastOK = err == nil
	}
	if err != nil {
		// As in Redis, only a failed background save sets the status
		// that MISCONF reads; a failed SAVE is reported to its caller.
		s.log.Warningf("Failed saving the DB: %v", err)
		return
	}
	s.rdb.lastOK = true
	s.rdb.lastSave = time.Now().Unix()
	s.rdb.saves++
	s.stats.Dirty -= dirtyBefore
	if background {
		s.log.Noticef("Background saving terminated with success")
	} else {
		s.log.Noticef("DB saved on disk")
	}
}

// rdbPath is dir/dbfilename.
func (s *Server) rdbPath() string {
	return filepath.Join(s.cfg.String("dir"), s.cfg.String("dbfilename"))
}

// writeRDB writes snap, with the aux fields aux, to a temporary file in
// dir, fsyncs it and renames it over dbfilename (rdbSave): a crash
// leaves the previous file whole. It runs without the lock.
func (s *Server) writeRDB(snap *keyspace.Snapshot, aux [][2]string) error {
	dir := s.cfg.String("dir")
	tmp := filepath.Join(dir, fmt.Sprintf("temp-%d-%d.rdb", os.Getpid(), time.Now().UnixNano()))
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("opening %s: %w", tmp, err)
	}
	err = s.encodeRDB(f, snap, snapFunctions(snap), aux)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, s.rdbPath())
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	syncDir(dir)
	return nil
}

func (s *Server) encodeRDB(f *os.File, snap *keyspace.Snapshot, functions []string, aux [][2]string) error {
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := s.encodeSnapshot(bw, snap, functions, false, aux); err != nil {
		return err
	}
	return bw.Flush()
}

// encodeSnapshot writes snap as an RDB stream (aofBase: as the preamble
// of an AOF base), with the function libraries of functions before the
// databases; with snap nil, an RDB with its aux fields and no keys (a
// replica's filtered RDB). It reads the snapshot without the lock.
func (s *Server) encodeSnapshot(out io.Writer, snap *keyspace.Snapshot, functions []string, aofBase bool, aux [][2]string) error {
	w, err := rdb.NewWriter(out, rdb.WriterOptions{
		Compress: s.cfg.Bool("rdbcompression"),
		Checksum: s.cfg.Bool("rdbchecksum"),
		UsedMem:  engine.ReadMemory().Heap,
		AOFBase:  aofBase,
		Aux:      aux,
	})
	if err != nil {
		return err
	}
	for _, code := range functions {
		if err := w.WriteFunction(code); err != nil {
			return err
		}
	}
	for db := 0; snap != nil && db < s.ks.NumDBs(); db++ {
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

// loadRDB loads dir/dbfilename if it exists, before clients are served.
// Keys already past their deadline are loaded too: the expiry timer
// expires them right after, with their expiry messages.
func (s *Server) loadRDB() error {
	path := s.rdbPath()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	start := time.Now()
	info, err := s.loadRDBFrom(f)
	if err != nil {
		return fmt.Errorf("loading %s: %w", path, err)
	}
	s.log.Noticef("DB loaded from disk: %.3f seconds (%d keys)", time.Since(start).Seconds(), info.Keys)
	s.link.RestoreInfo(info.Aux)
	return nil
}

// loadRDBFrom loads an RDB stream into the keyspace: a file (given as
// such, so the decoder bounds every length by its size) or an AOF's RDB
// preamble.
func (s *Server) loadRDBFrom(r io.Reader) (rdb.Info, error) {
	return s.loadRDBAbortable(r, nil)
}

// loadRDBAbortable is loadRDBFrom, which also stops when aborted (not nil)
// reports true: a replica's link that was stopped meanwhile.
func (s *Server) loadRDBAbortable(r io.Reader, aborted func() bool) (rdb.Info, error) {
	var loaded, expired int64
	now := time.Now().UnixMilli()
	// This goroutine decodes the file (parsing, LZF, CRC64) while another
	// inserts the keys, a batch at a time under the lock, so that clients
	// connected meanwhile are answered (LOADING) between batches. The two
	// halves cost about the same, and overlap on two cores.
	type loadedKey struct {
		db  int
		key string
		e   *keyspace.Entry
	}
	const inFlight = 4
	full := make(chan []loadedKey, inFlight)
	free := make(chan []loadedKey, inFlight+1)
	for range inFlight + 1 {
		free <- make([]loadedKey, 0, loadBatch)
	}
	inserted := make(chan struct{})
	go func() {
		defer close(inserted)
		for batch := range full {
			s.ks.Exec(func() {
				if aborted != nil && aborted() {
					return // a dropped replica link: its data goes
				}
				s.ks.SetLoading(true)
				for _, k := range batch {
					s.ks.DB(k.db).Insert(k.key, k.e)
				}
				s.ks.SetLoading(false)
			})
			clear(batch)
			free <- batch[:0]
		}
	}()
	batch := <-free
	opt := commands.RDBLoadOptions(s.cfg)
	opt.OnResize = func(db, keys, _ int) {
		if db >= 0 && db < s.ks.NumDBs() {
			// Before any key of db: RESIZEDB follows its SELECTDB.
			s.ks.Exec(func() { s.ks.DB(db).Reserve(keys) })
		}
	}
	info, err := rdb.Load(r, opt, func(db int, key string, e *keyspace.Entry) error {
		if s.loadAborted.Load() || aborted != nil && aborted() {
			return errLoadAborted
		}
		if db < 0 || db >= s.ks.NumDBs() {
			return fmt.Errorf("database %d out of range (databases %d)", db, s.ks.NumDBs())
		}
		if at := e.ExpireAt(); at != 0 && at <= now {
			expired++
		}
		loaded++
		if batch = append(batch, loadedKey{db, key, e}); len(batch) == loadBatch {
			full <- batch
			batch = <-free
		}
		return nil
	})
	if len(batch) > 0 {
		full <- batch
	}
	close(full)
	<-inserted
	if err != nil {
		return info, err
	}
	s.ks.Exec(func() {
		s.rdb.loadedKeys, s.rdb.loadedExpired = loaded, expired
		err = s.loadFunctions(info.Functions)
	})
	return info, err
}

// loadFunctions loads the function libraries an RDB file held, as
// rdbFunctionLoad: one that does not load fails the whole load. Under
// the lock.
func (s *Server) loadFunctions(codes []string) error {
	for _, code := range codes {
		if _, msg := s.disp.Functions.Load(code, false, 0); msg != "" {
			return fmt.Errorf("Failed loading library, %s", strings.TrimPrefix(msg, "ERR "))
		}
	}
	return nil
}

// checkSavePoints starts a background save when a save point is reached
// (serverCron's "save <seconds> <changes>" check). Under the lock.
func (s *Server) checkSavePoints(now time.Time) {
	if s.rdb.bgRunning || s.rdb.fgRunning || s.closing {
		return
	}
	if s.rdb.scheduled {
		s.startBGSave()
		return
	}
	for _, sp := range s.cfg.SaveParams() {
		elapsed := now.Unix() - s.rdb.lastSave
		if s.stats.Dirty >= int64(sp.Changes) && elapsed > int64(sp.Seconds) &&
			(s.rdb.lastOK || now.Sub(s.rdb.lastTry) > rdbRetryDelay) {
			s.log.Noticef("%d changes in %d seconds. Saving...", sp.Changes, sp.Seconds)
			s.startBGSave()
			return
		}
	}
}

// shutdownSave saves the dataset at shutdown when asked (SHUTDOWN SAVE) or
// when save points are set and NOSAVE was not given. It runs after the
// clients and the expiry timer have stopped.
func (s *Server) shutdownSave(opts engine.ShutdownOptions) error {
	if opts.NoSave || (!opts.Save && len(s.cfg.SaveParams()) == 0) {
		return nil
	}
	s.log.Noticef("Saving the final RDB snapshot before exiting.")
	s.notify("STATUS=Saving the final RDB snapshot\n")
	var snap *keyspace.Snapshot
	var aux [][2]string
	s.ks.Exec(func() { snap, aux = s.ks.Snapshot(), s.link.SaveInfo() })
	err := s.writeRDB(snap, aux)
	snap.Release()
	if err != nil {
		s.log.Warningf("Write error saving DB on disk: %v", err)
		return err
	}
	s.log.Noticef("DB saved on disk")
	return nil
}
