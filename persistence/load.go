package persistence

import (
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
	"github.com/zredis/zredis/persistence/rdb"
	"github.com/zredis/zredis/resp"
)

// errLoadAborted ends a load that a shutdown interrupted.
var errLoadAborted = errors.New("loading aborted by a shutdown")

// AbortLoad stops the load in progress (Load) at its next key or
// command: a shutdown came meanwhile. Load then returns.
func (p *Service) AbortLoad() { p.loadAborted.Store(true) }

// LoadedExpired is the keys the last RDB load found already expired.
// Under the lock.
func (p *Service) LoadedExpired() int64 { return p.rdb.loadedExpired }

// loadBatch is how many loaded keys go into the keyspace per acquisition
// of the lock.
const loadBatch = 1024

// Load loads the dataset at start-up, before clients are served: the AOF when appendonly is on
// (migrating a Redis 6 style appendonly.aof first, as 7.0 does), the RDB
// file otherwise, or when there is no AOF yet. With appendonly on it then
// opens the AOF for appending, its first base written from what was
// loaded.
func (p *Service) Load() error {
	if !p.cfg.Bool("appendonly") {
		return p.loadRDB()
	}
	dir, prefix, m, err := p.readAOFManifest()
	if err != nil {
		return err
	}
	m, _, err = aof.UpgradeOldStyle(filepath.Join(p.cfg.String("dir"), prefix), dir, prefix, m, p.log.Noticef)
	if err != nil {
		return err
	}
	if m == nil || m.Empty() {
		if err := p.loadRDB(); err != nil {
			return err
		}
	} else if err := p.replayAOF(dir, m, false); err != nil {
		return err
	}
	return p.openAOF(dir, prefix, m)
}

// replayAOF loads the AOF directory: its base (RDB or commands) and its
// incremental files, each command run as a client would run it, with
// nothing propagated. At start-up (locked false) it takes the lock for
// each command, before there is anything to propagate to; DEBUG LOADAOF
// (locked true) runs it with the lock held and the propagation stream
// muted by the caller.
func (p *Service) replayAOF(dir string, m *aof.Manifest, locked bool) error {
	start := time.Now()
	exec := p.ks.Exec
	if locked {
		exec = func(fn func()) { fn() }
	}
	cl := &engine.Client{W: resp.NewWriter(), Authed: true, Replaying: true}
	stats, err := aof.LoadManifest(dir, m, aof.LoadOptions{
		LoadTruncated: p.cfg.Bool("aof-load-truncated"),
		Logf:          p.log.Warningf,
		LoadRDB: func(r io.Reader) (int64, error) {
			if locked {
				info, err := p.loadRDBLocked(r, true, false)
				return info.Size, err
			}
			info, err := p.loadRDBFrom(r)
			return info.Size, err
		},
		Exec: func(argv [][]byte) error {
			if p.loadAborted.Load() {
				return errLoadAborted
			}
			if p.disp.Table.Lookup(argv[0]) == nil {
				return fmt.Errorf("%w '%s'", aof.ErrUnknownCommand, argv[0])
			}
			var panicked error
			exec(func() {
				p.ks.SetLoading(true)
				p.disp.BeginBatch(cl)
				cl.LastCmd = ""
				p.disp.Exec(cl, argv)
				p.ks.SetLoading(false)
				panicked = p.aofReplyError(cl, argv)
			})
			cl.W.Reset()
			return panicked
		},
	})
	if err != nil {
		return err
	}
	exec(func() { p.aof.baseSize = stats.BaseSize })
	p.log.Noticef("DB loaded from append only file: %.3f seconds (%d commands)", time.Since(start).Seconds(), stats.Commands)
	return nil
}

// aofReplyError handles a replayed command that answered an error, as
// Redis's afterErrorReply does for its AOF-loading client: the error is
// logged as CRITICAL and counted in unexpected_error_replies, and with
// propagation-error-behavior panic the load stops (Redis panics) rather
// than go on from a dataset that may have diverged. Called under the lock.
func (p *Service) aofReplyError(cl *engine.Client, argv [][]byte) error {
	out := cl.W.Bytes()
	if len(out) == 0 || out[0] != '-' {
		return nil
	}
	name := p.host.UnexpectedError(cl, argv, out, "server", "AOF-loading-client")
	if p.cfg.Int("propagation-error-behavior") == 1 { // panic
		return fmt.Errorf("This server panicked sending an error to its AOF-loading-client after processing the command '%s' (propagation-error-behavior panic)", name)
	}
	return nil
}

// loadRDB loads dir/dbfilename if it exists, before clients are served.
// Keys already past their deadline are loaded too: the expiry timer
// expires them right after, with their expiry messages.
func (p *Service) loadRDB() error {
	path := p.RDBPath()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	start := time.Now()
	info, err := p.loadRDBFrom(f)
	if err != nil {
		return fmt.Errorf("loading %s: %w", path, err)
	}
	p.log.Noticef("DB loaded from disk: %.3f seconds (%d keys)", time.Since(start).Seconds(), info.Keys)
	p.host.RestoreReplInfo(info.Aux)
	return nil
}

// loadRDBFrom loads an RDB stream into the keyspace: a file (given as
// such, so the decoder bounds every length by its size) or an AOF's RDB
// preamble.
func (p *Service) loadRDBFrom(r io.Reader) (rdb.Info, error) {
	return p.LoadRDB(r, nil)
}

// LoadRDB is loadRDBFrom, which also stops when aborted (not nil)
// reports true: a replica's link that was stopped meanwhile (its full
// synchronisation's payload). Without the lock.
func (p *Service) LoadRDB(r io.Reader, aborted func() bool) (rdb.Info, error) {
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
			p.ks.Exec(func() {
				if aborted != nil && aborted() {
					return // a dropped replica link: its data goes
				}
				p.ks.SetLoading(true)
				for _, k := range batch {
					p.ks.DB(k.db).Insert(k.key, k.e)
				}
				p.ks.SetLoading(false)
			})
			clear(batch)
			free <- batch[:0]
		}
	}()
	batch := <-free
	opt := p.host.RDBLoadOptions()
	opt.OnResize = func(db, keys, _ int) {
		if db >= 0 && db < p.ks.NumDBs() {
			// Before any key of db: RESIZEDB follows its SELECTDB.
			p.ks.Exec(func() { p.ks.DB(db).Reserve(keys) })
		}
	}
	info, err := rdb.Load(r, opt, func(db int, key string, e *keyspace.Entry) error {
		if p.loadAborted.Load() || aborted != nil && aborted() {
			return errLoadAborted
		}
		if db < 0 || db >= p.ks.NumDBs() {
			return fmt.Errorf("database %d out of range (databases %d)", db, p.ks.NumDBs())
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
	p.ks.Exec(func() {
		p.rdb.loadedKeys, p.rdb.loadedExpired = loaded, expired
		err = p.loadFunctions(info.Functions, false)
	})
	return info, err
}

// errDuplicateKey is a key of an RDB file already in memory, which Redis
// treats as fatal unless the load allows duplicates (DEBUG RELOAD MERGE).
type errDuplicateKey struct {
	db  int
	key string
}

func (e errDuplicateKey) Error() string {
	return fmt.Sprintf("RDB has duplicated key '%s' in DB %d", e.key, e.db)
}

// loadRDBLocked is LoadRDB for a caller that holds the lock (DEBUG
// RELOAD, the RDB preamble of DEBUG LOADAOF): each key goes into the
// keyspace as it is decoded, with no goroutine to hand it to. A key
// already in memory is replaced when merge is set (RDBFLAGS_ALLOW_DUP;
// a function library too), else it stops the load with errDuplicateKey.
// The function libraries are loaded after the keys, unless noFunctions
// (the caller loaded them).
func (p *Service) loadRDBLocked(r io.Reader, merge, noFunctions bool) (rdb.Info, error) {
	var loaded, expired int64
	now := time.Now().UnixMilli()
	opt := p.host.RDBLoadOptions()
	opt.OnResize = func(db, keys, _ int) {
		if db >= 0 && db < p.ks.NumDBs() {
			p.ks.DB(db).Reserve(keys)
		}
	}
	p.ks.SetLoading(true)
	info, err := rdb.Load(r, opt, func(db int, key string, e *keyspace.Entry) error {
		if db < 0 || db >= p.ks.NumDBs() {
			return fmt.Errorf("database %d out of range (databases %d)", db, p.ks.NumDBs())
		}
		d := p.ks.DB(db)
		if !merge && d.Peek([]byte(key)) != nil {
			return errDuplicateKey{db, key}
		}
		if at := e.ExpireAt(); at != 0 && at <= now {
			expired++
		}
		loaded++
		d.Insert(key, e)
		return nil
	})
	p.ks.SetLoading(false)
	if err != nil {
		return info, err
	}
	p.rdb.loadedKeys, p.rdb.loadedExpired = loaded, expired
	if noFunctions {
		return info, nil
	}
	return info, p.loadFunctions(info.Functions, merge)
}

// loadFunctions loads the function libraries an RDB file held, as
// rdbFunctionLoad: one that does not load fails the whole load; with
// replace a library of the same name is replaced. Under the lock.
func (p *Service) loadFunctions(codes []string, replace bool) error {
	for _, code := range codes {
		if _, msg := p.disp.Functions.Load(code, replace, 0); msg != "" {
			return fmt.Errorf("Failed loading library, %s", strings.TrimPrefix(msg, "ERR "))
		}
	}
	return nil
}
