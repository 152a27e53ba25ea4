package engine

import (
	"slices"
	"time"

	"github.com/zredis/zredis/keyspace"
)

// The blocking layer (Redis blocked.c). A blocking command whose keys
// hold data answers at once like its non-blocking twin. Otherwise the
// client is registered as a waiter on each of its keys (a FIFO per
// database and key) and its connection waits off the event loop and
// without the keyspace lock (Ctx.Offload). A push marks the key ready
// (Ctx.KeyReady); once the command that pushed (or the whole EXEC) is
// done, the dispatcher serves the waiters of the ready keys in blocking
// order, under the lock (serveReady). Serving a waiter sends the
// keyspace events of the pop it makes, as its non-blocking twin would
// (blocked.c serveClientBlockedOnList, genericZpopCommand): after the
// events of the command that made the key ready, in the database the
// waiter blocked in.

// hangupCheck is how often a blocked client's socket is checked for a
// hang-up, to free the client of one that went away while nothing was
// pushed. It is not what keeps a pop from a client that hung up: the
// socket is asked again right before the client is served (serveReady).
const hangupCheck = 100 * time.Millisecond

type blockKey struct {
	db  int
	key string
}

// blockReg holds a dispatcher's waiters and the keys made ready since
// they were last served. Under the keyspace lock.
type blockReg struct {
	// waiting counts the waiters, so that pushes and commands pay nothing
	// for the blocking layer while nobody waits.
	waiting  int
	queues   map[blockKey][]*waiter
	ready    []blockKey
	readySet map[blockKey]struct{}
	// touched are the watched keys changed since the waiters were last
	// served, for their waiter's replaced check (see Block). The check
	// waits until the command is done: a flush signals its keys before
	// it drops them, and a stream deleted and made again inside an EXEC
	// is judged by what the EXEC left.
	touched []touchedKey
}

type touchedKey struct {
	w  *waiter
	bk blockKey
}

// waiter is one blocked client. ready says whether key (in db) can
// serve it now; serve then serves it from key, writing the reply to its
// client. A waiter on streams also watches its keys (watch), so that a
// deletion, an overwrite or a flush of one makes it ready: a blocked
// XREADGROUP must hear that its stream or group went away.
type waiter struct {
	cl       *Client
	reg      *blockReg
	cmd      *Command
	db       int
	keys     []string
	ready    func(db *keyspace.DB, key []byte) bool
	serve    func(c *Ctx, key []byte)
	replaced func(db *keyspace.DB, key []byte) bool
	watch    *keyspace.Watch
	done     chan struct{}
	finished bool
}

// BlockedClients is the number of clients waiting in a blocking command.
// Under the keyspace lock.
func (d *Dispatcher) BlockedClients() int { return d.blocked.waiting }

// KeyReady is called after elements were pushed onto the list, or
// members added to the sorted set, at key: the clients blocked on it are
// served once the command is done.
func (c *Ctx) KeyReady(key []byte) { c.KeyReadyIn(c.DB, key) }

// KeyReadyIn marks key in db ready: a key created there by RENAME, MOVE
// or COPY wakes the clients blocked on it, as Redis's dbAdd signals any
// key it adds (the waiter checks the type when served).
func (c *Ctx) KeyReadyIn(db *keyspace.DB, key []byte) {
	r := &c.D.blocked
	if r.waiting == 0 {
		return
	}
	c.D.markReady(blockKey{db.ID(), string(key)})
}

// keyAdded is the keyspace's hook for a key a write created: as Redis's
// dbAdd, it marks the key ready for the clients blocked on it, whatever
// command created it.
func (d *Dispatcher) keyAdded(db int, key []byte) {
	if d.blocked.waiting == 0 {
		return
	}
	d.markReady(blockKey{db, string(key)})
}

// markReady queues bk to be served if clients wait on it.
func (d *Dispatcher) markReady(bk blockKey) {
	r := &d.blocked
	if _, ok := r.queues[bk]; !ok {
		return
	}
	if _, ok := r.readySet[bk]; ok {
		return
	}
	r.readySet[bk] = struct{}{}
	r.ready = append(r.ready, bk)
}

// DBReady marks ready every key of database db that clients are blocked
// on and that holds a value now (scanDatabaseForReadyKeys): SWAPDB gave
// the database new contents, and its waiters, who stay with its number,
// are served from them.
func (c *Ctx) DBReady(db int) {
	r := &c.D.blocked
	if r.waiting == 0 {
		return
	}
	var keys []string
	for bk := range r.queues {
		if bk.db == db {
			keys = append(keys, bk.key)
		}
	}
	slices.Sort(keys)
	d := c.KS.DB(db)
	for _, k := range keys {
		if d.Peek([]byte(k)) != nil {
			c.KeyReadyIn(d, []byte(k))
		}
	}
}

// MarkKeyReady marks key in database db ready for the clients blocked on
// it, after a write made outside any command (the expiry feature
// appending to its stream key). Under the lock.
func (d *Dispatcher) MarkKeyReady(db int, key []byte) {
	if d.blocked.waiting > 0 {
		d.markReady(blockKey{db, string(key)})
	}
}

// ServeReadyKeys serves the clients blocked on keys made ready outside
// any command, as Redis's beforeSleep does after its active expiry.
// Under the lock.
func (d *Dispatcher) ServeReadyKeys() {
	if d.blocked.waiting == 0 || len(d.blocked.ready) == 0 {
		return
	}
	d.KS.BeginCommand(true)
	d.serveReady()
}

// serveReady serves the waiters of the keys made ready, in the order the
// keys became ready and, per key, in blocking order, while the key holds
// data. Serving a BLMOVE may make its destination ready in turn. Under the
// lock, after a top-level command (a whole EXEC) is done. Serving one
// waiter is a propagation unit of its own: its pop propagates the
// non-blocking form (blocked.c serveClientBlockedOnList).
func (d *Dispatcher) serveReady() {
	r := &d.blocked
	if r.waiting == 0 {
		r.touched = nil
		return
	}
	ks, srv := d.KS, d.Srv
	for {
		for _, t := range r.touched {
			if !t.w.finished && t.w.replaced(ks.DB(t.bk.db), []byte(t.bk.key)) {
				d.markReady(t.bk)
			}
		}
		clear(r.touched)
		r.touched = r.touched[:0]
		if len(r.ready) == 0 {
			break
		}
		bk := r.ready[0]
		r.ready = r.ready[1:]
		delete(r.readySet, bk)
		q := append([]*waiter(nil), r.queues[bk]...)
		db := ks.DB(bk.db)
		key := []byte(bk.key)
		for _, w := range q {
			if w.finished {
				continue
			}
			// Each waiter is served at its own time, as Redis updates the
			// cached time for every client it unblocks: a key that
			// expired meanwhile (inside the transaction that pushed it)
			// is not served.
			ks.BeginCommandAt(ks.Clock().NowMs(), w.cl.NoTouch)
			if !w.ready(db, key) {
				continue
			}
			if w.cl.PeerClosed != nil && w.cl.PeerClosed() && w.cl.Kill != nil {
				// The client hung up while blocked: what it would pop
				// could never reach it. Redis notices the hang-up on its
				// event loop first; a blocked connection here is off the
				// loop, so its socket is asked now. Dropping the client
				// finishes w; the next waiter is served instead.
				w.cl.Kill()
				continue
			}
			ic := &Ctx{Args: [][]byte{[]byte(w.cmd.Name)}, Cmd: w.cmd, Client: w.cl, W: w.cl.W, KS: ks, DB: db, Srv: srv, D: d}
			p := d.propagating()
			if p != nil {
				p.beginUnit()
				p.beforeCall()
			}
			if t := d.Tracking; t != nil {
				t.current, t.executing = w.cl, true
			}
			start := time.Now()
			d.protect(ic, func(c *Ctx) { w.serve(c, key) })
			// The keys it changed are signalled (WATCH, tracking) as at
			// the end of any command.
			ks.EndCommand(ic.dirty > 0)
			if t := d.Tracking; t != nil {
				t.current, t.executing = nil, false
			}
			// The blocked call completes: its stats, slow log entry
			// and histogram get what it took (an error at serve time
			// fails it).
			d.unblocked(w.cl, time.Since(start), ic.failed)
			if p != nil {
				p.endUnit(true)
			}
			srv.Stats().Dirty += int64(ic.dirty)
			r.finish(w)
		}
	}
	if len(r.ready) == 0 {
		r.ready = nil
	}
}

// finish takes w out of every queue and wakes its connection. Under the lock.
func (r *blockReg) finish(w *waiter) {
	if w.finished {
		return
	}
	w.finished = true
	for _, k := range w.keys {
		bk := blockKey{w.db, k}
		q := r.queues[bk]
		for i, x := range q {
			if x == w {
				q = append(q[:i:i], q[i+1:]...)
				break
			}
		}
		if len(q) == 0 {
			delete(r.queues, bk)
		} else {
			r.queues[bk] = q
		}
	}
	if w.watch != nil {
		w.watch.Clear()
	}
	r.waiting--
	w.cl.Blocked, w.cl.BlockedTimeout = false, false
	w.cl.Unblock = nil
	w.cl.blockWait = nil
	w.cl.blocked = blockedCall{} // a timeout is not accounted for
	close(w.done)
}

// releaseBlocked forgets the waiter of a client that is gone. Under the lock.
func releaseBlocked(cl *Client) {
	w := cl.blockWait
	if w == nil || w.finished {
		return
	}
	w.reg.finish(w)
}

// BlockingPop is the shared body of every blocking command: it serves the
// first of keys holding data of type typ (WRONGTYPE for a key of another
// type met before), and otherwise blocks the client for timeout (0:
// forever). Inside a transaction it answers at once with null (nullBulk:
// a null bulk, else a null array).
func BlockingPop(c *Ctx, keys [][]byte, typ keyspace.Type, timeout time.Duration, nullBulk bool, pop func(c *Ctx, key []byte)) {
	for _, k := range keys {
		e := c.DB.LookupWrite(k)
		if e == nil {
			continue
		}
		if e.Type() != typ {
			c.Error(ErrWrongType)
			return
		}
		if e.Obj().Len() == 0 {
			continue
		}
		pop(c, k)
		return
	}
	ready := func(db *keyspace.DB, key []byte) bool {
		e := db.LookupWrite(key)
		return e != nil && e.Type() == typ && e.Obj().Len() != 0
	}
	Block(c, keys, timeout, nullBulk, nil, ready, pop)
}

// Block blocks the client on keys for timeout (0: forever) until one of
// them, made ready, satisfies ready; serve then serves it from that key.
// Inside a transaction, from a script, and for the master's stream on a
// replica (Redis's CLIENT_DENY_BLOCKING) it answers at once with null
// (nullBulk: a null bulk, else a null array).
//
// replaced, when not nil, watches the keys: a change of one (a
// deletion, an overwrite, a flush, but also an in-place change) makes
// it ready when replaced(db, key) says the key's value went or was
// replaced, as Redis signals a deleted or overwritten stream for its
// blocked XREADGROUP clients (dbGenericDelete, dbSetValue). An in-place
// change that Redis does not signal (XDEL, XTRIM, EXPIRE) must not make
// the key ready: a reader waiting above the last ID of a stream whose
// entries are all deleted would be answered with nothing.
func Block(c *Ctx, keys [][]byte, timeout time.Duration, nullBulk bool, replaced func(db *keyspace.DB, key []byte) bool, ready func(db *keyspace.DB, key []byte) bool, serve func(c *Ctx, key []byte)) {
	cl := c.Client
	if cl.InMulti || cl.Master || cl.DenyBlocking {
		if nullBulk {
			c.W.Null()
		} else {
			c.W.NullArray()
		}
		return
	}
	r := &c.D.blocked
	if r.queues == nil {
		r.queues = map[blockKey][]*waiter{}
		r.readySet = map[blockKey]struct{}{}
	}
	w := &waiter{cl: cl, reg: r, cmd: c.Cmd, db: c.DB.ID(), ready: ready, serve: serve, replaced: replaced, done: make(chan struct{})}
	if replaced != nil {
		w.watch = c.KS.NewTouchWatch(func(db int, key string) {
			if !w.finished {
				r.touched = append(r.touched, touchedKey{w, blockKey{db, key}})
			}
		})
	}
	for _, k := range keys {
		ks := string(k)
		dup := false
		for _, x := range w.keys {
			if x == ks {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		w.keys = append(w.keys, ks)
		if w.watch != nil {
			w.watch.Add(c.DB, k)
		}
		bk := blockKey{w.db, ks}
		r.queues[bk] = append(r.queues[bk], w)
	}
	r.waiting++
	cl.Blocked, cl.BlockedTimeout = true, timeout > 0
	cl.blockWait = w
	kspace, d := c.KS, c.D
	cl.Unblock = func(errMsg string) bool {
		if w.finished {
			return false
		}
		if errMsg != "" {
			cl.W.Error(errMsg)
		} else {
			cl.W.NullArray()
		}
		r.finish(w)
		return true
	}
	c.Offload(func() {
		var expired <-chan time.Time
		if timeout > 0 {
			t := time.NewTimer(timeout)
			defer t.Stop()
			expired = t.C
		}
		var hangup <-chan time.Time
		if cl.PeerClosed != nil || replaced != nil {
			t := time.NewTicker(hangupCheck)
			defer t.Stop()
			hangup = t.C
		}
		for {
			select {
			case <-w.done:
				return
			case <-expired:
				kspace.Exec(func() {
					if !w.finished {
						cl.W.NullArray()
						r.finish(w)
					}
				})
				return
			case <-hangup:
				// The connection's loop does not watch a blocked client:
				// one that hung up is dropped from here (which finishes w).
				// Keys watched for their deletion may also have gone
				// with no command after them to serve their waiters
				// (active expiry): served from here too, as Redis does
				// in beforeSleep.
				kspace.Exec(func() {
					if w.finished {
						return
					}
					if cl.PeerClosed != nil && cl.PeerClosed() && cl.Kill != nil {
						cl.Kill()
						return
					}
					if len(r.touched) > 0 {
						kspace.BeginCommand(true)
						d.serveReady()
					}
				})
			}
		}
	})
}
