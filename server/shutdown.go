package server

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
)

// A shutdown, as Redis 7.0's prepareForShutdown/finishShutdown: after
// waiting for lagging replicas when there are some (the wait is
// replication.Master's; writes are paused meanwhile, with a pause of the
// shutdown's own that CLIENT UNPAUSE does not lift), the clients are held, the final save is made, and only if it succeeds
// (or FORCE was given) does the server stop serving and exit. A save
// that fails cancels the shutdown: SHUTDOWN answers "Errors trying to
// SHUTDOWN. Check logs.", a signal is logged, and everything — clients,
// the expiry timer, the expiry stream and its spool — goes on.

// shutdownRequest is a SHUTDOWN command or a signal, sent to Run.
type shutdownRequest struct {
	opts engine.ShutdownOptions
	// result is the SHUTDOWN command's place in shutdownState.results,
	// which receives the outcome: "" when the server goes on to exit,
	// else the error to reply. Nil for a signal.
	result chan string
	// stop: the program embedding the server stopped it (Run's ctx).
	stop bool
}

// shutdownState is the SHUTDOWN commands blocked until the outcome of
// the shutdown requested or under way, as replyToClientsBlockedOnShutdown
// answers them: on exit they get no reply, on SHUTDOWN ABORT (or a
// failed final save) "Errors trying to SHUTDOWN. Check logs.". A
// SHUTDOWN sent during the wait for replicas, whatever its modifiers,
// joins the one under way, and a signal changes nothing, as Redis's
// prepareForShutdown returns at once while a shutdown is initiated.
// Under the keyspace lock.
type shutdownState struct {
	// results receive "" when the server exits, else the error to reply.
	results []chan string
}

// awaits reports whether result is one of the SHUTDOWN commands still
// waiting for an outcome. Under the lock.
func (st *shutdownState) awaits(result chan string) bool {
	for _, r := range st.results {
		if r == result {
			return true
		}
	}
	return false
}

// answer gives every blocked SHUTDOWN command its outcome. Under the lock.
func (st *shutdownState) answer(outcome string) {
	for _, r := range st.results {
		r <- outcome
	}
	st.results = nil
}

// background is what runs beside the clients and must not touch the
// keyspace during the final save: the expiry timer and the cron.
type background struct {
	stopFn context.CancelFunc
	wg     sync.WaitGroup
}

func (b *background) start(s *Server) {
	ctx, cancel := context.WithCancel(context.Background())
	b.stopFn = cancel
	b.wg.Add(3)
	go func() {
		defer b.wg.Done()
		s.expiry.Run(ctx)
	}()
	go func() {
		defer b.wg.Done()
		s.rel.run(ctx)
	}()
	go func() {
		defer b.wg.Done()
		s.cron(ctx)
	}()
}

// stop stops what start started and waits for it; a no-op when nothing
// runs.
func (b *background) stop() {
	if b.stopFn == nil {
		return
	}
	b.stopFn()
	b.wg.Wait()
	b.stopFn = nil
}

// nextShutdown waits for a shutdown request. Cancelling ctx (the program
// embedding the server stops it) is a forced shutdown.
func (s *Server) nextShutdown(ctx context.Context) shutdownRequest {
	select {
	case <-ctx.Done():
		s.log.Warningf("Received shutdown request, scheduling shutdown...")
		return shutdownRequest{opts: engine.ShutdownOptions{Force: true, Now: true}, stop: true}
	case req := <-s.shutdown:
		return req
	}
}

// loadOrShutdown loads the dataset (persistence.Service.Load) and, meanwhile, takes a
// shutdown request: SHUTDOWN or a signal while loading stops the load and
// the server without a final save, as Redis forces NOSAVE while loading
// (a save then would overwrite the files with half of them). aborted
// reports that case; the request is answered with success.
func (s *Server) loadOrShutdown(ctx context.Context) (err error, aborted bool) {
	loaded := make(chan error, 1)
	go func() { loaded <- s.persist.Load() }()
	select {
	case err := <-loaded:
		return err, false
	case <-s.shutdown:
	case <-ctx.Done():
	}
	s.log.Warningf("User requested shutdown...")
	s.notify("STOPPING=1\n")
	s.persist.AbortLoad()
	<-loaded
	s.ks.Exec(func() { s.shut.answer("") })
	return nil, true
}

// prepareShutdown runs the shutdown req asks for: the wait for lagging
// replicas, unless NOW, then finishShutdown. It reports true when the
// server is to exit; on false the shutdown was cancelled (SHUTDOWN ABORT,
// a failed save) or the request was stale (its SHUTDOWN was already
// answered by a shutdown cancelled since, its signal's shutdown aborted),
// and everything goes on. On Run's goroutine.
func (s *Server) prepareShutdown(ctx context.Context, req shutdownRequest, bg *background) bool {
	live, wait, loading := true, false, false
	s.ks.Exec(func() {
		switch {
		case req.stop:
		case req.result == nil:
			live = s.signalled.Load()
		default:
			live = s.shut.awaits(req.result)
		}
		if !live {
			return
		}
		s.log.Warningf("User requested shutdown...")
		s.notify("STOPPING=1\n")
		// A data set being loaded is not saved over the last good
		// file (Redis forces NOSAVE while loading).
		loading = s.disp.Loading.Load() || s.link.Syncing()
		timeout := time.Duration(s.cfg.Int("shutdown-timeout")) * time.Second
		if !req.opts.Now && timeout > 0 && !s.repl.AllAcked() {
			s.repl.StartShutdownWait(timeout, s.pause.active(s.ks.Clock().NowMs()))
			s.pauseWritesFor(pauseShutdown, true)
			wait = true
		}
	})
	if !live {
		return false
	}
	if wait {
		finish, forced := s.repl.WaitForShutdown(ctx, cronPeriod, s.pause.hold)
		if !finish {
			return false
		}
		req.opts.Force = req.opts.Force || forced
	}
	if loading {
		req.opts.Save, req.opts.NoSave = false, true
	}
	return s.finishShutdown(req.opts, bg)
}

// finishShutdown reports the replicas that lag, holds every client,
// stops the background work and makes the final save. It reports true
// when the server is to exit; on false the shutdown was cancelled and
// everything was resumed. On Run's goroutine.
func (s *Server) finishShutdown(opts engine.ShutdownOptions, bg *background) bool {
	loading := false
	s.ks.Exec(func() {
		s.repl.LogAtShutdown()
		s.pause.hold()
		loading = s.disp.Loading.Load() || s.link.Syncing()
	})
	if loading {
		opts.Save, opts.NoSave = false, true
	}
	bg.stop()
	s.persist.Wait() // a background save or AOF rewrite in progress
	err := s.persist.ShutdownSave(opts)
	if err != nil && opts.Force {
		s.log.Warningf("Error trying to save the DB. Exit anyway.")
		err = nil
	}
	if err != nil {
		s.log.Warningf("Error trying to save the DB, can't exit.")
		s.notify("STATUS=Error trying to save the DB, can't exit.\n")
		s.log.Warningf("Errors trying to shut down the server. Check the logs for more information.")
		bg.start(s)
		s.ks.Exec(func() {
			s.pause.unhold()
			s.cancelShutdown()
		})
		return false
	}
	s.ks.Exec(func() { s.shut.answer("") })
	return true
}

// Signal asks the server to shut down because the process received sig
// (SIGTERM, SIGINT), logging it as Redis does; shutdown-on-sigterm and
// shutdown-on-sigint give the shutdown's modifiers. It returns at once.
func (s *Server) Signal(sig os.Signal) {
	name, flags := sig.String(), int64(0)
	switch sig {
	case syscall.SIGTERM:
		name, flags = "SIGTERM", s.cfg.Int("shutdown-on-sigterm")
	case syscall.SIGINT:
		name, flags = "SIGINT", s.cfg.Int("shutdown-on-sigint")
	}
	// A script looping forever holds the keyspace lock the shutdown
	// needs: stop it (its client gets an error).
	s.disp.InterruptScript()
	if !s.signalled.CompareAndSwap(false, true) {
		// A signal's shutdown is pending or running: Redis's handler
		// only sets shutdown_asap again, except that a second SIGINT
		// means "now".
		if sig == syscall.SIGINT {
			s.log.Warningf("You insist... exiting now.")
			os.Exit(1)
		}
		s.log.Warningf("Received %s scheduling shutdown...", name)
		return
	}
	if s.disp.Loading.Load() {
		s.log.Warningf("Received shutdown signal during loading, scheduling shutdown.")
	} else {
		s.log.Warningf("Received %s scheduling shutdown...", name)
	}
	req := shutdownRequest{opts: engine.ShutdownOptions{
		Save:   flags&config.ShutdownSave != 0,
		NoSave: flags&config.ShutdownNoSave != 0,
		Now:    flags&config.ShutdownNow != 0,
		Force:  flags&config.ShutdownForce != 0,
	}}
	go func() {
		select {
		case s.shutdown <- req:
		case <-s.exiting:
		}
	}()
}

// Shutdown implements engine.Server. The client is blocked on the
// shutdown: the returned wait, called without the keyspace lock, hands
// the request to Run and returns the outcome. A shutdown already waiting
// for its replicas is joined instead: its outcome is this one's.
func (s *Server) Shutdown(opts engine.ShutdownOptions) (wait func() string) {
	req := shutdownRequest{opts: opts, result: make(chan string, 1)}
	s.shut.results = append(s.shut.results, req.result)
	joined := s.repl.ShutdownWaiting()
	return func() string {
		if !joined {
			select {
			case s.shutdown <- req:
			case <-s.exiting:
				return "" // another shutdown is under way: this client is closed with the rest
			}
		}
		select {
		case r := <-req.result:
			return r
		case <-s.exiting:
			return ""
		}
	}
}

// cancelShutdown is Redis's cancelShutdown: the blocked SHUTDOWN commands
// get their error, writes resume, a signal's request is forgotten, and a
// wait in progress ends. Under the lock.
func (s *Server) cancelShutdown() {
	s.signalled.Store(false) // shutdown_asap
	s.shut.answer(engine.ErrShutdownFailed)
	s.repl.CancelShutdownWait()
	if s.pause.writesHeld&pauseShutdown != 0 {
		s.pauseWritesFor(pauseShutdown, false)
	}
}

// AbortShutdown implements engine.Server (abortShutdown): it cancels a
// shutdown waiting for its replicas, or a signal's shutdown not started
// yet, and reports whether there was one.
func (s *Server) AbortShutdown() bool {
	switch {
	case s.repl.ShutdownWaiting():
		s.cancelShutdown()
	case s.signalled.CompareAndSwap(true, false):
		// Run skips the signal's request when it comes to it.
	default:
		return false
	}
	s.log.Noticef("Shutdown manually aborted.")
	return true
}

// fatalf logs a reason the server cannot go on without breaking a
// promise (an acknowledged write that may not be on disk) and exits the
// process with status 1 at once, as Redis's exit(1) there: no reply that
// is still held goes out.
func (s *Server) fatalf(format string, args ...any) {
	s.log.Warningf(format, args...)
	os.Exit(1)
}

// serverPanic is Redis's serverPanic (debug.c _serverPanic): a state the
// server must not go on from. It logs the bug report's start as Redis
// does ("Guru Meditation: <msg> #<file>:<line>", the place that called
// for it), the goroutine's stack, and aborts the process at once: no
// save, no shutdown, no reply that is still held.
func (s *Server) serverPanic(msg string) { s.panicFrom(msg, 2) }

// panicFrom is serverPanic reporting the place skip frames up: 2 is the
// caller of panicFrom's caller.
func (s *Server) panicFrom(msg string, skip int) {
	_, file, line, _ := runtime.Caller(skip)
	s.log.Raw(LevelWarning, "\n\n=== REDIS BUG REPORT START: Cut & paste starting from here ===\n")
	s.log.Warningf("------------------------------------------------")
	s.log.Warningf("!!! Software Failure. Press left mouse button to continue")
	s.log.Warningf("Guru Meditation: %s #%s:%d", msg, filepath.Base(file), line)
	s.log.Raw(LevelWarning, "\n------ STACK TRACE ------\n"+string(debug.Stack())+"\n")
	s.log.Raw(LevelWarning, "=== REDIS BUG REPORT END. Make sure to include from START to END. ===\n\n")
	abort()
}

// abort ends the process as C's abort() does: killed by SIGABRT (a core
// dump where the system keeps them). The Go runtime takes the signal,
// prints every goroutine's stack to stderr and raises it again with its
// default action (GOTRACEBACK=crash). It does not return.
func abort() {
	debug.SetTraceback("crash")
	syscall.Kill(os.Getpid(), syscall.SIGABRT)
	select {}
}
