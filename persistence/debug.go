package persistence

import (
	"io"
	"os"

	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/persistence/rdb"
)

// DEBUG RELOAD and DEBUG LOADAOF (debug.c). Redis runs them in its one
// thread, the server blocked until they are done; they run here with the
// keyspace lock held from start to end for the same reason: no client
// may write between the save and the load, or see half a dataset.

// errReloadLoad is DEBUG RELOAD's reply to a file that did not load.
const errReloadLoad = "ERR Error trying to load the RDB dump"

// DebugReload is DEBUG RELOAD: the dataset saved to the RDB file (unless
// NoSave), emptied with the function libraries (unless NoFlush), and the
// file loaded back. It returns "" or the error to reply. Under the lock.
//
// Two failures end Redis and are replied here instead, the server going
// on: a file that does not load (what was read of it before the error
// stays in memory), and, with NOFLUSH but not MERGE, a key both in
// memory and in the file, which is found before anything is changed.
func (p *Service) DebugReload(opts engine.ReloadOptions) string {
	path := p.RDBPath()
	var f *os.File // the file to load
	if !opts.NoSave {
		// rdbSave: a foreground save, written while the lock is held
		// from a snapshot that may be read under it. The file read back
		// is the one written, whatever a background save renames over
		// dbfilename meanwhile.
		snap := p.ks.FrozenSnapshot()
		dirty := p.stats.Dirty
		written, err := p.writeRDBFile(snap, p.host.ReplInfo(), true)
		snap.ReleaseLocked()
		p.rdbSaved(err, dirty, false)
		if err != nil {
			return "ERR" // shared.err
		}
		f = written
	} else {
		var err error
		if f, err = os.Open(path); err != nil {
			p.log.Warningf("DEBUG RELOAD: %v", err)
			return errReloadLoad
		}
	}
	defer f.Close()
	preloaded := false
	if opts.NoFlush && !opts.Merge {
		// Keys and libraries that would clash with those in memory:
		// before any key goes in, as Redis, whose file holds the
		// libraries first, fails on one before loading a key.
		functions, err := p.checkDuplicates(f)
		if err == nil {
			err = p.loadFunctions(functions, false)
		}
		if err == nil {
			_, err = f.Seek(0, io.SeekStart)
		}
		if err != nil {
			p.log.Warningf("DEBUG RELOAD: %v", err)
			return errReloadLoad
		}
		preloaded = true
	}
	if !opts.NoFlush {
		p.emptyData()
	}
	if _, err := p.loadRDBLocked(f, opts.Merge, preloaded); err != nil {
		p.log.Warningf("DEBUG RELOAD: loading %s: %v", path, err)
		return errReloadLoad
	}
	p.log.Warningf("DB reloaded by DEBUG RELOAD")
	return ""
}

// checkDuplicates reads the RDB file f and returns its function
// libraries, or the first key of it that is in memory already
// (errDuplicateKey), or the error that stops the read. Under the lock.
func (p *Service) checkDuplicates(f *os.File) ([]string, error) {
	info, err := rdb.Load(f, p.host.RDBLoadOptions(), func(db int, key string, _ *keyspace.Entry) error {
		if db >= 0 && db < p.ks.NumDBs() && p.ks.DB(db).Peek([]byte(key)) != nil {
			return errDuplicateKey{db, key}
		}
		return nil
	})
	return info.Functions, err
}

// DebugLoadAOF is DEBUG LOADAOF: what the AOF writer holds written out,
// the dataset emptied and the AOF directory replayed, with nothing
// propagated (its commands are already in the AOF and in the replicas'
// hands), rdb_changes_since_last_save reset. It returns "" or the error
// to reply. Redis exits when the AOF does not load, or when there is
// none; this refuses with an error instead, before emptying anything when
// there is no AOF. Under the lock.
func (p *Service) DebugLoadAOF() string {
	if w := p.aof.w; w != nil && p.aof.last != 0 {
		// flushAppendOnlyFile(1): the file holds every command before
		// this one once the writer wrote (and under always fsynced) it.
		if err := w.Wait(p.aof.last); err != nil {
			p.log.Warningf("DEBUG LOADAOF: writing the AOF: %v", err)
		}
	}
	dir, _, m, err := p.readAOFManifest()
	if err != nil {
		p.log.Warningf("DEBUG LOADAOF: %v", err)
		return "ERR Error reading the AOF manifest, see the server log"
	}
	if m == nil || m.Empty() {
		return "ERR There is no append only file to load"
	}
	p.emptyData()
	resume := p.disp.SuspendPropagation()
	err = p.replayAOF(dir, m, true)
	resume()
	if err != nil {
		p.log.Warningf("DEBUG LOADAOF: %v", err)
		return "ERR Error trying to load the AOF files, see the server log"
	}
	p.stats.Dirty = 0 // prevent AOF / replication
	p.log.Warningf("Append Only File loaded by DEBUG LOADAOF")
	return ""
}

// emptyData is emptyData(-1, EMPTYDB_NO_FLAGS): every database and the
// function libraries. Under the lock.
func (p *Service) emptyData() {
	p.ks.FlushAll()
	if p.disp.Functions != nil {
		p.disp.Functions.Flush()
	}
}
