// Package expiry is zredis's expiry feature, from a key's deadline to
// its message on the 0MQ expiry stream. It owns:
//
//   - the timer (timer.go): when keys fall due, expired through the
//     keyspace's funnel in bounded slices;
//   - the stream (stream.go): zmqpub's outbox, spool and publisher,
//     opened from the expiry-zmq-* directives and changed by CONFIG SET,
//     and the lag of what is sent;
//   - what is sent for an expired or evicted key (message.go): the
//     keyspace type's wire type code and the value's items, and which
//     keys are not sent (Service.Expired, Service.Evicted);
//   - the hash expire cycles (cycles.go): an expiring hash sent again
//     until a listener deletes it;
//   - the INFO expiry section (info.go).
//
// The path of one expired key runs one way: the keyspace's funnel hands
// it to Service.Expired, which encodes it and puts it in the outbox of
// package zmqpub (the transport). The package depends on keyspace,
// zmqpub and config; what it needs from the server that hosts it is a
// Logger and a Propagator (the writes the cycles make).
package expiry

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/zmqpub"
)

// Logger is where the feature writes its log lines, in the server's log.
type Logger interface {
	Noticef(format string, args ...any)
	Warningf(format string, args ...any)
}

// Propagator takes the writes the hash expire cycles make to the
// propagation stream (AOF, replicas): the server's dispatcher. Called
// under the keyspace lock.
type Propagator interface {
	// PropagateWrite propagates argv in database db; argv is copied.
	PropagateWrite(db int, argv ...[]byte)
	// PropagateUnit runs fn, whose PropagateWrite calls form one unit
	// (MULTI ... EXEC when more than one).
	PropagateUnit(fn func())
}

// Service is the expiry feature of one server. The server makes it with
// New, opens the stream with Open before serving, runs the timer with
// Run, hands it expired keys (Expired, a keyspace sink) and evicted ones
// (Evicted), asks it for INFO expiry (Info), and closes it with Close.
type Service struct {
	ks    *keyspace.Keyspace
	cfg   *config.Config
	log   Logger
	prop  Propagator
	timer *Timer
	// stream publishes expired keys to 0MQ listeners; nil when no
	// expiry-zmq-endpoints are configured. Set by Open, before serving.
	stream *stream
	cycles cycles

	// Counted under the keyspace lock, for INFO expiry.
	resent    int64 // hashes sent again by the expire cycles
	exhausted int64 // hashes deleted after their last cycle
	evicted   int64 // evicted keys sent

	// The stream key (redisstream.go), under the keyspace lock.
	streamAppended int64     // entries appended
	streamRefused  int64     // events not appended: the key holds another type
	streamTypeLog  time.Time // the last log line about that
	streamWrote    bool      // appended since the timer's last pass
	streamKeyName  atomic.Pointer[string]
	keyReady       func(db int, key []byte)
	serveReady     func()
	afterPassHook  func()
}

// New makes the expiry feature of a server: its timer, on ks's wake-up
// hook, and the hash expire cycles, on ks's deadline hook (they decide
// about a key before the funnel removes it; off, they answer Remove).
// The caller registers Expired as a keyspace sink and Evicted for
// evictions. Call before serving clients.
func New(ks *keyspace.Keyspace, cfg *config.Config, log Logger, prop Propagator) *Service {
	x := &Service{ks: ks, cfg: cfg, log: log, prop: prop, timer: NewTimer(ks)}
	x.timer.SetAfterPass(x.afterPass)
	x.watchStreamKey()
	x.cycles.x = x
	ks.SetDeadlineHook(x.cycles.deadline)
	x.cycles.watch(cfg)
	return x
}

// Open opens the stream: the outbox (replaying a spool a previous run
// left) and a socket bound to every endpoint. Without
// expiry-zmq-endpoints it does nothing: no socket, nothing sent. Call
// once, before serving clients.
func (x *Service) Open() error {
	st, err := openStream(x.cfg, x.log)
	if err != nil || st == nil {
		return err
	}
	x.stream = st
	st.watch(x.cfg)
	return nil
}

// Journal is the expiry journal, to be kept durable ahead of the AOF
// (persistence.SetAOFCompanion); nil without one. Call after Open.
func (x *Service) Journal() *zmqpub.Journal {
	if x.stream == nil {
		return nil
	}
	return x.stream.journal
}

// Hooks are what the server does for the feature after a write it made
// outside any command. Each runs under the keyspace lock.
type Hooks struct {
	// AfterPass runs after every pass of the timer that expired keys:
	// the server has the AOF write their DELs (and under appendfsync
	// always fsync them) at once, as Redis writes its AOF before its
	// event loop sleeps, rather than on the AOF's next tick. That bounds
	// what a crash can send twice to the keys of one commit.
	AfterPass func()
	// KeyReady marks a key ready for the clients blocked on it (the
	// stream key, appended to).
	KeyReady func(db int, key []byte)
	// ServeReady serves the clients blocked on the keys made ready.
	ServeReady func()
}

// SetHooks installs the server's hooks. Call before Run.
func (x *Service) SetHooks(h Hooks) {
	x.afterPassHook, x.keyReady, x.serveReady = h.AfterPass, h.KeyReady, h.ServeReady
}

// afterPass is the timer's hook: the writes of the pass are settled as a
// command's are (the stream key's size, WATCH), its blocked readers
// served, and the server's AfterPass run.
func (x *Service) afterPass() {
	if x.streamWrote {
		x.streamWrote = false
		x.ks.EndCommand(true)
		if x.serveReady != nil {
			x.serveReady()
		}
	}
	if x.afterPassHook != nil {
		x.afterPassHook()
	}
}

// Run expires keys as their deadlines come until ctx is done. The caller
// owns the goroutine.
func (x *Service) Run(ctx context.Context) { x.timer.Run(ctx) }

// Close closes the stream, if open: messages not yet written to a
// listener are kept in the spool for the next run.
func (x *Service) Close() error {
	if x.stream == nil {
		return nil
	}
	return x.stream.close()
}

// Expired is the keyspace's sink for expired keys: it sends the key
// with its value. A key a writable replica expired was written there,
// not by its master: the expiry stream is the master's, so it is not
// sent; nor is a cycle counter. Under the keyspace lock.
func (x *Service) Expired(ev keyspace.Expired) {
	if !ev.Replica && !x.cycles.isCounter(ev.DB, ev.Entry) {
		x.emit(ev.DB, ev.Key, ev.Entry, ev.Entry.ExpireAt())
	}
}

// ExpiredFields receives every group of hash fields expired on their
// own (the field funnel): sent as one hash-fields message (type 6), its
// frame 3 the fields and values, when expiry-zmq-types has hash-fields.
// Only a master's funnel runs. Under the keyspace lock.
func (x *Service) ExpiredFields(ev keyspace.ExpiredFields) {
	if !x.emitting() || !x.typeSent(zmqpub.TypeHashFields) {
		return
	}
	frames := zmqpub.Encode(ev.DB, zmqpub.TypeHashFields, []byte(ev.Key), ev.Pairs)
	x.emitFrames(ev.DB, zmqpub.TypeHashFields, ev.Key, frames, ev.At)
}

// Evicted receives every evicted key, removed and detached: it is sent
// as the original 0MQ-expiry Redis sent it, through the expiry path,
// unless expiry-zmq-evictions is off; never kept for cycles, and a cycle
// counter is not sent. Under the keyspace lock.
func (x *Service) Evicted(ev keyspace.Evicted) {
	if !x.cfg.Bool("expiry-zmq-evictions") || x.cycles.isCounter(ev.DB, ev.Entry) {
		return
	}
	if x.emit(ev.DB, ev.Key, ev.Entry, 0) {
		x.evicted++
	}
}

// emitting reports whether events go anywhere: the PUSH socket, or the
// stream key.
func (x *Service) emitting() bool { return x.stream != nil || x.streamKey() != "" }

// typeSent reports whether events of wire type t are sent
// (expiry-zmq-types).
func (x *Service) typeSent(t zmqpub.Type) bool {
	if x.stream != nil {
		return x.stream.types.Load()&(1<<t) != 0
	}
	return x.cfg.Int("expiry-zmq-types")&(1<<t) != 0
}

// emit sends the event of key in database db, holding e's value, if e's
// type is one expiry-zmq-types sends; deadline is when it fell due (0
// for an eviction). The message is encoded now: e may be a live entry
// (a hash the expire cycles keep). Under the keyspace lock.
func (x *Service) emit(db int, key string, e *keyspace.Entry, deadline int64) bool {
	t, ok := messageType(e.Type())
	if !ok || !x.emitting() || !x.typeSent(t) {
		return false
	}
	x.emitFrames(db, t, key, encodeEntry(db, t, key, e), deadline)
	return true
}

// emitFrames appends an event to the stream key and puts its message in
// the outbox. The event's time is the deadline, or for an eviction now.
func (x *Service) emitFrames(db int, t zmqpub.Type, key string, frames [3][]byte, deadline int64) {
	at := deadline
	if at == 0 {
		at = time.Now().UnixMilli()
	}
	x.appendStream(db, t, key, frames, at)
	if x.stream != nil {
		x.stream.put(zmqpub.Message{Frames: frames, Deadline: deadline}, at)
	}
}
