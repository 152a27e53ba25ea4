package persistence

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/persistence/aof"
)

// Service is the persistence of one server. The server makes it with
// New, loads the data set with Load (AbortLoad stops that), runs Cron
// every cron tick, hands it to the engine as its engine.Persistence,
// and at shutdown calls Wait, ShutdownSave and CloseAOF, in that order.
type Service struct {
	host  Host
	ks    *keyspace.Keyspace
	disp  *engine.Dispatcher
	cfg   *config.Config
	log   Logger
	stats *engine.ServerStats

	rdb rdbState // RDB saves; lock
	aof aofState // the append only file; lock
	// companion is kept durable ahead of the AOF while the AOF is on
	// (SetAOFCompanion); nil: none.
	companion AOFCompanion

	// loadAborted is set when a shutdown came while the dataset loaded.
	loadAborted atomic.Bool
	// saving is the background writes' goroutines (a SAVE's or BGSAVE's
	// file, a rewrite, the AOF closed by appendonly no, history files
	// deleted): Wait waits for them.
	saving sync.WaitGroup
}

// New makes the persistence of a server started at start (the last
// save's time until one is made), and registers its CONFIG SET hooks
// (appendonly, appendfsync, aof-disable-auto-gc). Call before serving.
func New(host Host, ks *keyspace.Keyspace, disp *engine.Dispatcher, cfg *config.Config, log Logger, stats *engine.ServerStats, start time.Time) *Service {
	p := &Service{host: host, ks: ks, disp: disp, cfg: cfg, log: log, stats: stats}
	p.rdb.lastSave, p.rdb.lastOK, p.rdb.lastBgSeconds = start.Unix(), true, -1
	p.aof.lastRewriteSec, p.aof.lastRewriteOK = -1, true
	p.watchConfig()
	return p
}

// AOFCompanion is a file kept durable ahead of the AOF (the expiry
// journal, aof.Companion), told when the AOF is turned on or off.
type AOFCompanion interface {
	aof.Companion
	// Attach says whether the AOF is on: the companion takes records only
	// while it is, and they are committed with the AOF's batches.
	Attach(on bool)
}

// SetAOFCompanion gives every AOF writer opened from now on c as its
// companion. Call before Load.
func (p *Service) SetAOFCompanion(c AOFCompanion) { p.companion = c }

// Cron starts a background save when a save point is reached, then an
// AOF rewrite when one is scheduled or the AOF grew enough (serverCron).
// Under the lock.
func (p *Service) Cron(now time.Time) {
	p.checkSavePoints(now)
	p.checkAOFRewrite()
}

// Wait waits for the background writes in progress: a save, an AOF
// rewrite, the close of an AOF turned off. Without the lock.
func (p *Service) Wait() { p.saving.Wait() }

// WritesRefused implements engine.Persistence: MISCONF while the AOF
// cannot be written, or while the last background save failed and
// stop-writes-on-bgsave-error is on.
func (p *Service) WritesRefused() string {
	if msg := p.aofRefused(); msg != "" {
		return msg
	}
	if !p.rdb.lastOK && len(p.cfg.SaveParams()) > 0 && p.cfg.Bool("stop-writes-on-bgsave-error") {
		return engine.ErrMisconfRDB
	}
	return ""
}
