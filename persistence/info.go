package persistence

import (
	"time"

	"github.com/zredis/zredis/engine"
)

// Info appends INFO persistence's fields. Under the lock.
func (p *Service) Info(b []byte) []byte {
	b = engine.InfoInt(b, "loading", boolInt(p.disp.Loading.Load()))
	b = engine.InfoInt(b, "async_loading", 0)
	b = engine.InfoInt(b, "current_cow_peak", 0)
	b = engine.InfoInt(b, "current_cow_size", 0)
	b = engine.InfoInt(b, "current_cow_size_age", 0)
	b = engine.InfoStr(b, "current_fork_perc", "0.00")
	b = engine.InfoInt(b, "current_save_keys_processed", 0)
	b = engine.InfoInt(b, "current_save_keys_total", 0)
	b = engine.InfoInt(b, "rdb_changes_since_last_save", p.stats.Dirty)
	r := &p.rdb
	b = engine.InfoInt(b, "rdb_bgsave_in_progress", boolInt(r.bgRunning))
	b = engine.InfoInt(b, "rdb_last_save_time", r.lastSave)
	b = engine.InfoStr(b, "rdb_last_bgsave_status", okErr(r.lastOK))
	b = engine.InfoInt(b, "rdb_last_bgsave_time_sec", r.lastBgSeconds)
	current := int64(-1)
	if r.bgRunning {
		current = int64(time.Since(r.bgStart).Seconds())
	}
	b = engine.InfoInt(b, "rdb_current_bgsave_time_sec", current)
	b = engine.InfoInt(b, "rdb_saves", r.saves)
	b = engine.InfoInt(b, "rdb_last_cow_size", 0)
	b = engine.InfoInt(b, "rdb_last_load_keys_expired", r.loadedExpired)
	b = engine.InfoInt(b, "rdb_last_load_keys_loaded", r.loadedKeys)
	return p.infoAOF(b)
}

func boolInt(v bool) int64 {
	if v {
		return 1
	}
	return 0
}

func okErr(ok bool) string {
	if ok {
		return "ok"
	}
	return "err"
}
