package engine

import "time"

// AfterCall records a finished call: changes for persistence, the slow
// log, the latency monitor and the command's latency histogram. The
// server runs it as a Dispatcher.AfterCall hook, under the lock. A call
// that left its client blocked is not recorded: Redis records it when it
// completes.
func (st *ServerStats) AfterCall(c *Ctx, dur time.Duration) {
	st.Dirty += int64(c.dirty)
	if c.Client.Blocked {
		return
	}
	cmd := c.Cmd
	us := dur.Microseconds()
	if cmd.Flags&SkipSlowlog == 0 && st.SlowLog.SlowerThan >= 0 && us >= st.SlowLog.SlowerThan {
		st.SlowLog.Push(c.Args, time.Now().Unix(), us, c.Client.Addr, c.Client.Name)
	}
	if st.Latency.Threshold > 0 {
		event := "command"
		if cmd.Flags&Fast != 0 {
			event = "fast-command"
		}
		st.Latency.AddIfNeeded(event, us/1000, time.Now().Unix())
	}
	if st.LatencyTracking {
		h := st.Histograms[cmd]
		if h == nil {
			if st.Histograms == nil {
				st.Histograms = map[*Command]*Histogram{}
			}
			h = &Histogram{}
			st.Histograms[cmd] = h
		}
		h.Record(dur.Nanoseconds())
	}
}
