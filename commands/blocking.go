package commands

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zredis/zredis/keyspace"
)

// Blocking list and sorted-set commands (Redis blocked.c, t_list.c,
// t_zset.c). A command whose keys hold data answers at once like its
// non-blocking twin. Otherwise the client is registered as a waiter on
// each of its keys (a FIFO per database and key) and its connection waits
// off the event loop and without the keyspace lock (Ctx.Offload). A push
// marks the key ready (listReady, zsetReady); once the command that
// pushed (or the whole EXEC) is done, the dispatcher serves the waiters of
// the ready keys in blocking order, under the lock (serveReady).
// Serving a waiter sends the keyspace events of the pop it makes, as its
// non-blocking twin would (blocked.c serveClientBlockedOnList,
// genericZpopCommand): after the events of the command that made the key
// ready, in the database the waiter blocked in.
func init() {
	register(
		&Command{Name: "blpop", Arity: -3, Flags: Write | NoScript | Blocking, ACL: "@write @list @slow @blocking", FirstKey: 1, LastKey: -2, KeyStep: 1, Group: "list", Run: blpopCommand},
		&Command{Name: "brpop", Arity: -3, Flags: Write | NoScript | Blocking, ACL: "@write @list @slow @blocking", FirstKey: 1, LastKey: -2, KeyStep: 1, Group: "list", Run: brpopCommand},
		&Command{Name: "brpoplpush", Arity: 4, Flags: Write | DenyOOM | NoScript | Blocking, ACL: "@write @list @slow @blocking", FirstKey: 1, LastKey: 2, KeyStep: 1, Group: "list", Run: brpoplpushCommand},
		&Command{Name: "blmove", Arity: 6, Flags: Write | DenyOOM | NoScript | Blocking, ACL: "@write @list @slow @blocking", FirstKey: 1, LastKey: 2, KeyStep: 1, Group: "list", Run: blmoveCommand},
		&Command{Name: "blmpop", Arity: -5, Flags: Write | Blocking | MovableKeys, ACL: "@write @list @slow @blocking", Group: "list", Run: blmpopCommand, Keys: numkeysKeys(2)},
		&Command{Name: "bzpopmin", Arity: -3, Flags: Write | Fast | NoScript | Blocking, ACL: "@write @sortedset @fast @blocking", FirstKey: 1, LastKey: -2, KeyStep: 1, Group: "sorted-set", Run: bzpopminCommand},
		&Command{Name: "bzpopmax", Arity: -3, Flags: Write | Fast | NoScript | Blocking, ACL: "@write @sortedset @fast @blocking", FirstKey: 1, LastKey: -2, KeyStep: 1, Group: "sorted-set", Run: bzpopmaxCommand},
		&Command{Name: "bzmpop", Arity: -5, Flags: Write | Blocking | MovableKeys, ACL: "@write @sortedset @slow @blocking", Group: "sorted-set", Run: bzmpopCommand, Keys: numkeysKeys(2)},
	)
}

// hangupCheck is how often a blocked client's socket is checked for a
// hang-up, to free the client of one that went away while nothing was
// pushed. It is not what keeps a pop from a client that hung up: the
// socket is asked again right before the client is served (serveReady).
const hangupCheck = 100 * time.Millisecond

// blockedTotal counts the waiters of every keyspace, so that pushes and
// commands pay nothing for the blocking layer while nobody waits.
var blockedTotal atomic.Int64

// blockRegs maps each keyspace to its waiters. The map itself is guarded
// by blockRegsMu; a registry is used under its keyspace's lock.
var (
	blockRegsMu sync.Mutex
	blockRegs   = map[*keyspace.Keyspace]*blockReg{}
)

type blockKey struct {
	db  int
	key string
}

// blockReg holds one keyspace's waiters and the keys made ready since
// they were last served. Under the keyspace lock.
type blockReg struct {
	queues   map[blockKey][]*waiter
	ready    []blockKey
	readySet map[blockKey]struct{}
}

// waiter is one blocked client. pop serves it from key (whose type is
// typ and which holds data), writing the reply to its client.
type waiter struct {
	cl       *Client
	ks       *keyspace.Keyspace
	cmd      *Command
	db       int
	keys     []string
	typ      keyspace.Type
	pop      func(c *Ctx, key []byte)
	done     chan struct{}
	finished bool
}

func regFor(ks *keyspace.Keyspace, create bool) *blockReg {
	blockRegsMu.Lock()
	defer blockRegsMu.Unlock()
	r := blockRegs[ks]
	if r == nil && create {
		r = &blockReg{queues: map[blockKey][]*waiter{}, readySet: map[blockKey]struct{}{}}
		blockRegs[ks] = r
	}
	return r
}

// listReady is called after elements were pushed onto the list at key:
// the clients blocked on it are served once the command is done.
func listReady(c *Ctx, key []byte) { keyReady(c, key) }

// zsetReady is called after members were added to the sorted set at key.
func zsetReady(c *Ctx, key []byte) { keyReady(c, key) }

func keyReady(c *Ctx, key []byte) { keyReadyIn(c, c.DB, key) }

// keyReadyIn marks key in db ready: a key created there by RENAME, MOVE
// or COPY wakes the clients blocked on it, as Redis's dbAdd signals any
// key it adds (the waiter checks the type when served).
func keyReadyIn(c *Ctx, db *keyspace.DB, key []byte) {
	if blockedTotal.Load() == 0 {
		return
	}
	r := regFor(c.KS, false)
	if r == nil {
		return
	}
	bk := blockKey{db.ID(), string(key)}
	if _, ok := r.queues[bk]; !ok {
		return
	}
	if _, ok := r.readySet[bk]; ok {
		return
	}
	r.readySet[bk] = struct{}{}
	r.ready = append(r.ready, bk)
}

// serveReady serves the waiters of the keys made ready, in the order the
// keys became ready and, per key, in blocking order, while the key holds
// data. Serving a BLMOVE may make its destination ready in turn. Under the
// lock, after a top-level command (a whole EXEC) is done. Serving one
// waiter is a propagation unit of its own: its pop propagates the
// non-blocking form (blocked.c serveClientBlockedOnList).
func serveReady(d *Dispatcher) {
	if blockedTotal.Load() == 0 {
		return
	}
	ks, srv := d.KS, d.Srv
	r := regFor(ks, false)
	if r == nil {
		return
	}
	for len(r.ready) > 0 {
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
			e := db.LookupWrite(key)
			if e == nil || e.Type() != w.typ || e.Obj().Len() == 0 {
				break
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
			ic := &Ctx{Args: [][]byte{[]byte(w.cmd.Name)}, Cmd: w.cmd, Client: w.cl, W: w.cl.W, KS: ks, DB: db, Srv: srv}
			p := d.propagating()
			if p != nil {
				p.beginUnit()
				p.beforeCall()
			}
			d.protect(ic, func(c *Ctx) { w.pop(c, key) })
			if p != nil {
				p.endUnit()
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
	if len(r.queues) == 0 && len(r.ready) == 0 {
		// Nobody waits in this keyspace any more: forget it, so that a
		// keyspace that goes away (tests) is not kept.
		blockRegsMu.Lock()
		if blockRegs[w.ks] == r {
			delete(blockRegs, w.ks)
		}
		blockRegsMu.Unlock()
	}
	blockedTotal.Add(-1)
	w.cl.Blocked = false
	w.cl.Unblock = nil
	w.cl.blockWait = nil
	close(w.done)
}

// releaseBlocked forgets the waiter of a client that is gone. Under the lock.
func releaseBlocked(cl *Client) {
	w := cl.blockWait
	if w == nil || w.finished {
		return
	}
	if r := regFor(w.ks, false); r != nil {
		r.finish(w)
	}
}

// parseTimeout reads a blocking timeout in seconds as Redis's
// getTimeoutFromObjectOrReply does (UNIT_SECONDS): the milliseconds are
// truncated (so a timeout below 1 ms waits forever, like 0), and a value
// too large for a long long converts, as on x86, to a negative one. It
// returns the wait; ok=false means the error was written.
func parseTimeout(c *Ctx, arg []byte) (time.Duration, bool) {
	f, ok := ParseFloat(arg)
	if !ok {
		f, ok = parseHexFloat(arg)
	}
	if !ok || math.IsNaN(f) {
		c.Error(ErrTimeoutNotFloat)
		return 0, false
	}
	v := f * 1000
	ms := int64(math.MinInt64)
	switch {
	case v > -(1<<63) && v < 1<<63:
		ms = int64(v)
	case f > 0 && f <= 9223372036854775.807:
		// Within a long long in Redis's long double arithmetic.
		ms = math.MaxInt64
	}
	if ms < 0 {
		c.Error(ErrTimeoutNegative)
		return 0, false
	}
	if ms > int64(math.MaxInt64/time.Millisecond) {
		// Beyond what a Duration holds (about 292 years): forever.
		ms = 0
	}
	return time.Duration(ms) * time.Millisecond, true
}

// parseHexFloat accepts what strtold reads as a hexadecimal number
// without a binary exponent ("0x10", "-0x1.8"), which Go's parser
// refuses.
func parseHexFloat(b []byte) (float64, bool) {
	s := string(b)
	t := strings.TrimLeft(s, "+-")
	if len(t) < 3 || t[0] != '0' || (t[1] != 'x' && t[1] != 'X') || strings.ContainsAny(t, "pP_") {
		return 0, false
	}
	f, err := strconv.ParseFloat(s+"p0", 64)
	return f, err == nil
}

// blockingPop is the shared body of every blocking command: it serves the
// first of keys holding data of type typ (WRONGTYPE for a key of another
// type met before), and otherwise blocks the client for timeout (0:
// forever). Inside a transaction it answers at once with null (nullBulk:
// a null bulk, else a null array).
func blockingPop(c *Ctx, keys [][]byte, typ keyspace.Type, timeout time.Duration, nullBulk bool, pop func(c *Ctx, key []byte)) {
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
	cl := c.Client
	if cl.InMulti {
		if nullBulk {
			c.W.Null()
		} else {
			c.W.NullArray()
		}
		return
	}
	w := &waiter{cl: cl, ks: c.KS, cmd: c.Cmd, db: c.DB.ID(), typ: typ, pop: pop, done: make(chan struct{})}
	r := regFor(c.KS, true)
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
		bk := blockKey{w.db, ks}
		r.queues[bk] = append(r.queues[bk], w)
	}
	blockedTotal.Add(1)
	cl.Blocked = true
	cl.blockWait = w
	kspace := c.KS
	cl.Unblock = func(withError bool) bool {
		if w.finished {
			return false
		}
		if withError {
			cl.W.Error(ErrUnblocked)
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
		if cl.PeerClosed != nil {
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
				kspace.Exec(func() {
					if !w.finished && cl.PeerClosed() && cl.Kill != nil {
						cl.Kill()
					}
				})
			}
		}
	})
}

// ---- BLPOP BRPOP ------------------------------------------------------------

func blpopCommand(c *Ctx) { bpopGeneric(c, true) }
func brpopCommand(c *Ctx) { bpopGeneric(c, false) }

// bpopGeneric is B[LR]POP key [key ...] timeout: [key, element].
func bpopGeneric(c *Ctx, front bool) {
	timeout, ok := parseTimeout(c, c.Args[len(c.Args)-1])
	if !ok {
		return
	}
	blockingPop(c, c.Args[1:len(c.Args)-1], keyspace.TypeList, timeout, false, func(c *Ctx, key []byte) {
		l := c.DB.LookupWrite(key).Obj().(*keyspace.List)
		c.W.Array(2)
		c.W.Bulk(key)
		c.W.Bulk(l.Pop(front))
		c.Dirty(1)
		c.Propagate(listPopName(front), key) // LPOP|RPOP key
		listPopped(c, key, l, front)
	})
}

// ---- BLMOVE BRPOPLPUSH ------------------------------------------------------

// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout
func blmoveCommand(c *Ctx) {
	from, ok := listEnd(c, c.Args[3])
	if !ok {
		return
	}
	to, ok := listEnd(c, c.Args[4])
	if !ok {
		return
	}
	blmoveGeneric(c, from, to, c.Args[5])
}

// BRPOPLPUSH source destination timeout
func brpoplpushCommand(c *Ctx) { blmoveGeneric(c, false, true, c.Args[3]) }

func blmoveGeneric(c *Ctx, from, to bool, timeoutArg []byte) {
	timeout, ok := parseTimeout(c, timeoutArg)
	if !ok {
		return
	}
	dst := append([]byte(nil), c.Args[2]...)
	blockingPop(c, c.Args[1:2], keyspace.TypeList, timeout, true, func(c *Ctx, key []byte) {
		saved := c.Args
		c.Args = [][]byte{saved[0], key, dst}
		dirty := c.dirty
		lmoveGeneric(c, from, to)
		c.Args = saved
		if c.dirty > dirty {
			propagateBlmove(c, key, dst, from, to)
		}
	})
}

// ---- BLMPOP BZMPOP ----------------------------------------------------------

// mpopArgs parses "timeout numkeys key [key ...] <where> [COUNT count]"
// from argument 1 (lmpopGenericCommand, zmpopGenericCommand): the keys,
// the where argument, and the count (1 by default). ok=false means the
// error was written.
func mpopArgs(c *Ctx) (keys [][]byte, where []byte, count int64, ok bool) {
	numkeys, ok := ParseInt(c.Args[2])
	if !ok || numkeys < 1 {
		c.Error(ErrNumkeysPositive)
		return nil, nil, 0, false
	}
	if numkeys > int64(len(c.Args)-4) {
		c.Error(ErrSyntax)
		return nil, nil, 0, false
	}
	whereIdx := 3 + int(numkeys)
	if count, ok = parseMpopCount(c, whereIdx+1); !ok {
		return nil, nil, 0, false
	}
	return c.Args[3:whereIdx], c.Args[whereIdx], count, true
}

// BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]
func blmpopCommand(c *Ctx) {
	timeout, ok := parseTimeout(c, c.Args[1])
	if !ok {
		return
	}
	keys, where, count, ok := mpopArgs(c)
	if !ok {
		return
	}
	front := EqualFold(where, "left")
	if !front && !EqualFold(where, "right") {
		c.Error(ErrSyntax)
		return
	}
	blockingPop(c, keys, keyspace.TypeList, timeout, false, func(c *Ctx, key []byte) {
		l := c.DB.LookupWrite(key).Obj().(*keyspace.List)
		c.W.Array(2)
		c.W.Bulk(key)
		n := listPopReply(c, key, l, front, count)
		propagatePop(c, listPopName(front), key, n) // [LR]POP key n
	})
}

// BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]
func bzmpopCommand(c *Ctx) {
	timeout, ok := parseTimeout(c, c.Args[1])
	if !ok {
		return
	}
	keys, where, count, ok := mpopArgs(c)
	if !ok {
		return
	}
	max := EqualFold(where, "max")
	if !max && !EqualFold(where, "min") {
		c.Error(ErrSyntax)
		return
	}
	blockingPop(c, keys, keyspace.TypeZSet, timeout, false, func(c *Ctx, key []byte) {
		if _, n := zpopGeneric(c, [][]byte{key}, max, true, count, true, true); n > 0 {
			propagatePop(c, zpopName(max), key, n) // ZPOPMIN|ZPOPMAX key n
		}
	})
}

// ---- BZPOPMIN BZPOPMAX ------------------------------------------------------

func bzpopminCommand(c *Ctx) { bzpopGeneric(c, false) }
func bzpopmaxCommand(c *Ctx) { bzpopGeneric(c, true) }

// bzpopGeneric is BZPOP(MIN|MAX) key [key ...] timeout: [key, member, score].
func bzpopGeneric(c *Ctx, max bool) {
	timeout, ok := parseTimeout(c, c.Args[len(c.Args)-1])
	if !ok {
		return
	}
	blockingPop(c, c.Args[1:len(c.Args)-1], keyspace.TypeZSet, timeout, false, func(c *Ctx, key []byte) {
		if _, n := zpopGeneric(c, [][]byte{key}, max, true, -1, false, true); n > 0 {
			c.Propagate(zpopName(max), key) // ZPOPMIN|ZPOPMAX key
		}
	})
}
