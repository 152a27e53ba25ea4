package scripting

import (
	"errors"
	"sync"
	"time"

	"github.com/zredis/zredis/engine"
)

// Why a run stops before its end.
const (
	stopKilled   = "Script killed by user with SCRIPT KILL..."
	stopShutdown = "Script interrupted: the server is shutting down"
)

// tickEvery is how many Lua instructions run between two looks at the
// run's length: Redis's count hook fires every 100,000, so a script is
// timed out (and serves the other clients) at that step, also with
// busy-reply-threshold 0.
const tickEvery = 100000

// runCtx is the context of one run, which gopher-lua consults before
// every instruction it executes (it calls Done there): that call is the
// watch Redis keeps with its Lua count hook. Every tickEvery calls the
// dispatcher looks at the run's length (engine.Dispatcher.ScriptTick):
// past busy-reply-threshold the other clients are served from here, and
// one of them may kill the script. Interrupt, from any goroutine, stops
// it too. Once stopped, Done's channel is closed and every instruction
// raises the error, so that no pcall can catch it.
//
// Done is called on the script's goroutine only: a coroutine's thread
// gets this context itself (resume), and context.WithCancel, which
// gopher-lua calls on it for a new coroutine, finds AfterFunc and starts
// no goroutine to watch it.
type runCtx struct {
	d    *engine.Dispatcher
	run  *engine.ScriptRun
	n    uint32
	done chan struct{}
	// deadline bounds a library's load (FUNCTION LOAD), which no
	// dispatcher watches; timedOut says it passed.
	deadline time.Time
	timedOut bool

	mu    sync.Mutex
	idle  bool     // between runs (end, begin): stop does nothing
	why   string   // why the run stopped, "" while it goes on
	after []func() // AfterFunc's functions
}

func newRunCtx(d *engine.Dispatcher, run *engine.ScriptRun) *runCtx {
	return &runCtx{d: d, run: run, done: make(chan struct{})}
}

// end ends the run: the coroutines it made stop with it. It reports
// whether the context may serve the next run as it is: nothing was
// derived from it (no coroutine holds it) and nothing stopped it, so its
// channel is still open and no one but the engine refers to it. A new
// context per run was two allocations on every EVALSHA. A reusable
// context is idle until begin: a stop between runs (an Interrupt that
// found it) does nothing, as it did to an ended context.
func (r *runCtx) end() (reusable bool) {
	r.mu.Lock()
	clean := r.why == "" && len(r.after) == 0
	if clean {
		r.idle = true
	}
	r.mu.Unlock()
	if !clean {
		r.stop("ended")
	}
	return clean
}

// begin starts a run on a context end found reusable; false when it is
// not (it stopped), and the run needs a new one.
func (r *runCtx) begin() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.why != "" {
		return false
	}
	r.idle, r.n = false, 0
	return true
}

func (r *runCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (r *runCtx) Value(any) any               { return nil }

func (r *runCtx) Done() <-chan struct{} {
	r.n++
	if r.n%tickEvery != 0 {
		return r.done
	}
	switch {
	case r.d != nil:
		if r.d.ScriptTick(r.run) && r.stopped() == "" {
			r.d.Srv.Warning("Lua script killed by user with SCRIPT KILL.")
			r.stop(stopKilled)
		}
	case !r.deadline.IsZero() && !r.timedOut && time.Now().After(r.deadline):
		r.timedOut = true
		r.stop(errLoadTimeout)
	}
	return r.done
}

func (r *runCtx) Err() error {
	if why := r.stopped(); why != "" {
		return errors.New(why)
	}
	return nil
}

// AfterFunc runs f once the run stops (context's afterFuncer).
func (r *runCtx) AfterFunc(f func()) (stop func() bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.why != "" {
		// The caller holds a lock f takes.
		go f()
	} else {
		r.after = append(r.after, f)
	}
	return func() bool { return false }
}

// stop ends the run with why; the first reason stays. Any goroutine.
func (r *runCtx) stop(why string) {
	r.mu.Lock()
	if r.why != "" || r.idle {
		r.mu.Unlock()
		return
	}
	r.why = why
	close(r.done)
	after := r.after
	r.after = nil
	r.mu.Unlock()
	for _, f := range after {
		f()
	}
}

// stopped is why the run stopped, "" while it goes on. Any goroutine.
func (r *runCtx) stopped() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.why
}
