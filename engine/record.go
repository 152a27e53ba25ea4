package engine

import "time"

// AfterCall records a finished call: changes for persistence, the slow
// log, the latency monitor and the command's latency histogram. The
// server runs it as a Dispatcher.AfterCall hook, under the lock. A call
// that left its client blocked has its latency sample (Redis's call()
// adds it whatever happened), but not its slow log entry nor its
// histogram value: those are recorded when it completes (unblocked).
func (st *ServerStats) AfterCall(c *Ctx, dur time.Duration) {
	st.Dirty += int64(c.dirty)
	cmd := c.Cmd
	us := dur.Microseconds()
	if st.Latency.Threshold > 0 {
		event := "command"
		if cmd.Flags&Fast != 0 {
			event = "fast-command"
		}
		st.Latency.AddIfNeeded(event, us/1000, time.Now().Unix())
	}
	if c.Client.Blocked {
		return
	}
	st.slowlogPush(cmd, c.OriginalArgs(), us, c.Client)
	st.recordLatency(cmd, dur)
}

// slowlogPush logs a call of cmd with args that took us microseconds,
// when the slow log wants it (slowlogPushCurrentCommand).
func (st *ServerStats) slowlogPush(cmd *Command, args [][]byte, us int64, cl *Client) {
	if cmd.Flags&SkipSlowlog == 0 && st.SlowLog.SlowerThan >= 0 && us >= st.SlowLog.SlowerThan {
		st.SlowLog.Push(args, time.Now().Unix(), us, cl.Addr, cl.Name)
	}
}

// recordLatency adds dur to cmd's latency histogram while latency-tracking
// is on.
func (st *ServerStats) recordLatency(cmd *Command, dur time.Duration) {
	if !st.LatencyTracking {
		return
	}
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

// blockedCall is what the accounting of a call that blocked its client
// needs when the call completes: the command, the arguments the client
// sent (copied: the request's buffers do not outlive the call) and how
// long the call ran before it blocked (Redis's c->duration).
type blockedCall struct {
	cmd  *Command
	args [][]byte
	dur  time.Duration
}

// noteBlocked keeps c's call, which left its client blocked after
// running for dur, for unblocked. Only a call that blocks pays for it.
func noteBlocked(c *Ctx, dur time.Duration) {
	c.Client.blocked = blockedCall{cmd: c.Cmd, args: copyArgv(c.OriginalArgs()), dur: dur}
}

// unblocked accounts for the blocked call of cl, which completes now,
// served after reply spent serving it (blocked.c updateStatsOnUnblock).
// Its calls were counted when it blocked; its time is counted again,
// plus reply, as Redis counts it (the time it waited is not), and that
// total is what its histogram and slow log entry get. The reply time is
// also a command-unblocking latency sample. A blocked call that times
// out is not accounted for at all, as in Redis.
func (d *Dispatcher) unblocked(cl *Client, reply time.Duration, failed bool) {
	d.accountUnblocked(cl, reply, failed, false)
}

// ClientUnblocked accounts for the blocked call of cl that CLIENT
// UNBLOCK ends, with a timeout's reply or an error alike: Redis 7.0.15
// runs updateStatsOnUnblock with an error for both, after unblockClient
// has reset the client, so the call counts as failed and its slow log
// entry has no arguments. Call it before cl.Unblock. Under the lock.
func (d *Dispatcher) ClientUnblocked(cl *Client) { d.accountUnblocked(cl, 0, true, true) }

func (d *Dispatcher) accountUnblocked(cl *Client, reply time.Duration, failed, noArgs bool) {
	b := cl.blocked
	cl.blocked = blockedCall{}
	if b.cmd == nil {
		return
	}
	if noArgs {
		b.args = nil
	}
	total := b.dur + reply
	cs := d.CommandStats(b.cmd)
	cs.Usec += total.Microseconds()
	if failed {
		cs.FailedCalls++
	}
	st := d.Srv.Stats()
	st.recordLatency(b.cmd, total)
	st.slowlogPush(b.cmd, b.args, total.Microseconds(), cl)
	st.Latency.AddIfNeeded("command-unblocking", reply.Microseconds()/1000, time.Now().Unix())
}
