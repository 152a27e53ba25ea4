package server

import (
	"context"
	"runtime"
	"time"

	"github.com/zredis/zredis/keyspace"
)

// cronPeriod is how often the server samples its instantaneous metrics,
// as Redis's serverCron does every 100 ms.
const cronPeriod = 100 * time.Millisecond

// metricSamples is how many samples an instantaneous metric averages
// (STATS_METRIC_SAMPLES).
const metricSamples = 16

// metric is one instantaneous metric: a rate averaged over the last
// samples (server.c trackInstantaneousMetric).
type metric struct {
	lastAt      time.Time
	lastReading int64
	samples     [metricSamples]float64
	idx         int
}

func (m *metric) track(now time.Time, reading int64) {
	if !m.lastAt.IsZero() {
		if ms := now.Sub(m.lastAt).Milliseconds(); ms > 0 {
			m.samples[m.idx] = float64(reading-m.lastReading) * 1000 / float64(ms)
			m.idx = (m.idx + 1) % metricSamples
		}
	}
	m.lastAt, m.lastReading = now, reading
}

func (m *metric) value() float64 {
	var sum float64
	for _, v := range m.samples {
		sum += v
	}
	return sum / metricSamples
}

// cron runs the server's periodic work until ctx is done: instantaneous
// metrics and peak memory for INFO, the clients' query buffers, the
// idle client timeout, and the resizes of big hashes and sorted sets
// that their writes left unfinished.
func (s *Server) cron(ctx context.Context) {
	t := time.NewTicker(cronPeriod)
	defer t.Stop()
	var ops, in, out, replIn, replOut metric
	var evicting bool
	var quiet quietSpell
	var idle bool // the server has just been idle for idleRelease
	gc := startGCTuner()
	defer gc.stop()
	gc.tick() // from the start: a fresh server's first writes too
	for tick := 0; ; tick++ {
		var now time.Time
		select {
		case <-ctx.Done():
			return
		case now = <-t.C:
		}
		if s.cronPaused.Load() {
			continue // DEBUG PAUSE-CRON 1
		}
		ri, ro := s.stats.ReplNetIn.Load(), s.stats.ReplNetOut.Load()
		received := s.stats.NetIn.Load() + ri
		in.track(now, received)
		out.track(now, s.stats.NetOut.Load()+ro)
		replIn.track(now, ri)
		replOut.track(now, ro)
		s.ks.Exec(func() {
			ops.track(now, s.stats.TotalCommands)
			idle = quiet.observe(now, s.stats.TotalCommands, received)
			s.stats.InstOpsPerSec = int64(ops.value())
			s.stats.InstInputKbps = in.value() / 1024
			s.stats.InstOutputKbps = out.value() / 1024
			s.stats.InstReplInputKbps = replIn.value() / 1024
			s.stats.InstReplOutputKbps = replOut.value() / 1024
			// Query buffers: their peaks are sampled for INFO before
			// the idle or large ones are given back, so that a big
			// argument's still counts, as in Redis, whose cron trims
			// such a buffer a run after sampling it.
			s.visitClients(now)
			s.accountClients(now)
			s.disp.Tracking.LimitKeys()
			s.disp.Tracking.Broadcast() // what expiry and eviction changed
			evicting = s.disp.PerformEvictions() == keyspace.EvictRunning
			var rehash time.Duration // 0: only forget finished resizes
			if s.cfg.Bool("activerehashing") {
				rehash = time.Millisecond // a run, as Redis's databasesCron rehashes
			}
			if freed, _ := s.ks.StepResizes(rehash); freed > 0 {
				quiet.again()
			}
			s.stats.PeakMemory = max(s.stats.PeakMemory, s.ks.UsedMemory())
			s.persist.Cron(now)
			s.repl.Cron(now, tick%10 == 0)
			if tick%10 == 0 {
				// Under the lock, as MIGRATE uses its connection: one
				// in use is not closed under it.
				s.disp.Migrate.CloseIdle(now.Unix())
			}
		})
		gc.tick()
		if idle {
			s.rel.idle()
		}
		// An eviction that ran out of time goes on a slice at a time,
		// the lock released in between so that clients are served
		// meanwhile, for up to most of the period (Redis's
		// evictionTimeProc, which runs every event loop iteration).
		for deadline := now.Add(cronPeriod * 8 / 10); evicting && time.Now().Before(deadline); {
			runtime.Gosched()
			s.ks.Exec(func() { evicting = s.disp.PerformEvictions() == keyspace.EvictRunning })
		}
	}
}

// closeIfIdle closes c if it has been idle for more than the timeout
// directive's seconds (clientsCronHandleTimeout), and reports whether
// it did. MONITOR, Pub/Sub, replica, blocked and paused clients are
// exempt, as in Redis. At the client's visit, under the lock.
func (s *Server) closeIfIdle(c *conn, nowMs, timeout int64) bool {
	cl := c.cl
	if cl.Monitor || cl.Replica || cl.Blocked || c.paused || cl.Subs+cl.PSubs+cl.SSubs > 0 {
		return false
	}
	if (nowMs-cl.LastInteraction.Load())/1000 > timeout {
		s.log.Verbosef("Closing idle client")
		s.drop(c)
		return true
	}
	return false
}
