package aof

import (
	"os"
	"time"
)

// Retry delays after a failed write or fsync: Redis retries on every event
// loop turn; we back off so that a full disk is not hammered by each Append.
const (
	retryMin = 10 * time.Millisecond
	retryMax = time.Second
)

// tickPeriod bounds how long an append no one waits for (an expired
// key's DEL) stays unwritten; every tenth tick is everysec's fsync.
const tickPeriod = 100 * time.Millisecond

// maxSpare bounds the buffer kept between batches.
const maxSpare = 4 << 20

// flushLoop is the flusher goroutine: it writes whatever Append queued (one
// write per batch), fsyncs per the policy, and wakes the waiters. While it
// writes and fsyncs, new commands accumulate for the next batch: that is the
// group commit. Flush does the same work on its caller's goroutine; flushMu
// makes the two take turns.
func (w *Writer) flushLoop() {
	defer close(w.done)
	// One ticker serves every policy, which may change at run time
	// (SetPolicy): every tick writes what no one waited for, and everysec
	// fsyncs once a second.
	ticker := time.NewTicker(tickPeriod)
	defer ticker.Stop()
	tick := ticker.C
	lastSecond := time.Now()
	var retry <-chan time.Time
	backoff := retryMin
	for {
		syncDue := false
		if retry != nil {
			// After a failure only the retry timer (or Close) restarts work.
			select {
			case <-retry:
			case <-tick:
			}
			retry = nil
		} else {
			select {
			case <-w.kick:
			case now := <-tick:
				secondDue := now.Sub(lastSecond) >= time.Second
				if secondDue {
					lastSecond = now
				}
				// write what no one waited for, and under everysec
				// fsync in the background once a second
				syncDue = w.Policy() == EverySec && secondDue
			}
		}
		w.mu.Lock()
		closing := w.closing
		w.mu.Unlock()
		w.flushMu.Lock()
		ok := w.flushOnce(syncDue, closing)
		if closing {
			w.waitBackgroundSync()
			w.cur.close()
			w.cur = nil
		}
		w.flushMu.Unlock()
		if closing {
			w.stop()
			return
		}
		w.notify()
		if !ok {
			retry = time.After(backoff)
			backoff = min(backoff*2, retryMax)
			continue
		}
		backoff = retryMin
	}
}

// Flush writes what was appended, and under Always fsyncs it, on the
// calling goroutine, unless ticket t is settled already: an event loop
// that flushes its round itself, as Redis does in beforeSleep, saves the
// two hand-offs to the flusher goroutine and back. While writes are
// failing it leaves the retries to the flusher, which backs off; so too
// a batch that crosses a rewrite's cut, whose switch of files fsyncs and
// closes the old one (Redis does that in a background job).
func (w *Writer) Flush(t Ticket) {
	if w.failing.Load() {
		return
	}
	w.flushMu.Lock()
	w.mu.Lock()
	skip := w.closing || w.cur == nil
	if !skip {
		skip, _ = w.settledLocked(t)
	}
	cut := w.gen != w.curGen // appends since the cut go to another file
	w.mu.Unlock()
	ok := true
	if !skip && !cut {
		ok = w.flushOnce(false, false)
	}
	w.flushMu.Unlock()
	if !ok || cut {
		w.Kick() // the flusher takes over
	}
	w.notify()
}

// stop marks the flusher gone and wakes every waiter.
func (w *Writer) stop() {
	w.mu.Lock()
	w.stopped = true
	w.progress.Broadcast()
	w.mu.Unlock()
	w.notify()
}

// notify tells OnProgress that Settled may answer differently now.
func (w *Writer) notify() {
	if w.opt.OnProgress != nil {
		w.opt.OnProgress()
	}
}

// flushOnce writes every queued chunk, switching to the next incremental
// file where a rewrite cut the stream, then fsyncs: under Always, and at
// Close, before returning; on the everysec tick, in the background (as
// Redis's bio thread does), so that writes go on meanwhile. It returns
// false when a write or fsync failed (the unwritten bytes are queued
// again). Under flushMu.
func (w *Writer) flushOnce(tick, closing bool) bool {
	policy := w.Policy()
	cur, curGen := w.cur, w.curGen
	defer func() { w.cur, w.curGen = cur, curGen }()
	w.mu.Lock()
	chunks := w.chunks
	w.chunks = nil
	start := w.written
	end := w.appended
	needSync := w.synced < end
	w.mu.Unlock()

	fail := func(rest []chunk, written uint64, err error, what string) bool {
		w.mu.Lock()
		w.chunks = append(rest, w.chunks...)
		w.written = written
		if w.lastErr == nil {
			w.logf("Error %s the AOF file: %v", what, err)
		}
		w.lastErr = err
		w.failing.Store(w.lastErr != nil || w.fsyncErr != nil)
		w.failedAt = end
		w.progress.Broadcast()
		w.mu.Unlock()
		if policy == Always && !closing && w.opt.OnAlwaysFailure != nil {
			w.opt.OnAlwaysFailure(what, err)
		}
		return false
	}

	if c := w.opt.Companion; c != nil {
		// Before any byte of the batch: its records precede the commands.
		if err := c.Commit(policy == Always || closing); err != nil {
			// As the AOF's own write error: MISCONF, and under Always
			// Redis's exit (err says it was the journal).
			return fail(chunks, start, err, "writing to")
		}
	}

	pos := start
	for i := range chunks {
		c := &chunks[i]
		if c.gen != curGen {
			// The rewrite cut: what was before it is complete in the old
			// file; make it durable before leaving it.
			w.waitBackgroundSync()
			if err := fdatasync(cur.f); err != nil {
				return fail(chunks[i:], pos, err, "fsyncing")
			}
			w.fsyncs.Add(1)
			cur.close()
			w.mu.Lock()
			next := w.files[c.gen]
			delete(w.files, c.gen)
			w.mu.Unlock()
			cur, curGen = newAppendFile(next), c.gen
		}
		if len(c.data) == 0 {
			continue
		}
		n, err := cur.write(c.data)
		w.writes.Add(1)
		if err != nil {
			// What stays of a partial write (when it could not be
			// removed) is kept; the rest is queued again.
			pos += uint64(n)
			w.addSize(int64(n))
			c.data = c.data[n:]
			return fail(chunks[i:], pos, err, "writing to")
		}
		pos += uint64(n)
		w.addSize(int64(n))
	}
	syncNow := policy == Always || closing // Close is the only sync under No
	if syncNow {
		w.waitBackgroundSync()
		if needSync {
			if err := fdatasync(cur.f); err != nil {
				return fail(nil, pos, err, "fsyncing")
			}
			w.fsyncs.Add(1)
		}
	} else if tick && policy == EverySec {
		w.startBackgroundSync(cur.f, pos)
	}
	w.mu.Lock()
	// Keep one buffer for the next batch, unless a burst made it huge.
	if len(chunks) > 0 && w.spare == nil && cap(chunks[0].data) <= maxSpare {
		w.spare = chunks[0].data[:0]
	}
	w.written = pos
	if syncNow {
		w.synced = pos
	}
	if w.lastErr != nil {
		w.logf("AOF write error looks solved, Redis can write again.")
		w.lastErr = nil
		w.failing.Store(w.lastErr != nil || w.fsyncErr != nil)
	}
	w.progress.Broadcast()
	w.mu.Unlock()
	return true
}

func (w *Writer) addSize(n int64) {
	if n == 0 {
		return
	}
	w.mu.Lock()
	w.totalSize += n
	w.mu.Unlock()
}

// startBackgroundSync fsyncs f up to the logical offset upTo in another
// goroutine, unless the previous one is still running (its successor
// will cover these bytes a second later). Under flushMu.
func (w *Writer) startBackgroundSync(f *os.File, upTo uint64) {
	if w.bgSync != nil {
		select {
		case <-w.bgSync:
			w.bgSync = nil
		default:
			return
		}
	}
	w.mu.Lock()
	needed := w.synced < upTo
	w.mu.Unlock()
	if !needed {
		return
	}
	done := make(chan struct{})
	w.bgSync = done
	go func() {
		defer close(done)
		var err error
		if c := w.opt.Companion; c != nil {
			err = c.Sync()
		}
		if err == nil {
			err = fdatasync(f)
		}
		w.backgroundSynced(upTo, err)
		w.notify()
	}()
}

// backgroundSynced records the outcome of a background fsync up to upTo.
func (w *Writer) backgroundSynced(upTo uint64, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		if w.fsyncErr == nil {
			w.logf("Fail to fsync the AOF file: %v", err)
		}
		w.fsyncErr = err
		w.failing.Store(true)
		return
	}
	w.fsyncs.Add(1)
	w.fsyncErr = nil
	w.failing.Store(w.lastErr != nil)
	if upTo > w.synced {
		w.synced = upTo
	}
	w.progress.Broadcast()
}

// waitBackgroundSync waits for a background fsync to end, before the file
// it syncs is closed or synced in the foreground. Under flushMu.
func (w *Writer) waitBackgroundSync() {
	if w.bgSync != nil {
		<-w.bgSync
		w.bgSync = nil
	}
}
