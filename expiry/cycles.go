package expiry

import (
	"errors"
	"math/rand/v2"
	"strconv"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/redisconv"
)

// The hash expire cycles of the original 0MQ-expiry Redis (tsee/redis,
// redis_zmq.c): an expiring hash is sent, then kept, and sent again after
// a delay, until a listener that has archived it deletes the key, or the
// cycle limit is reached. Deleting the key is the listener's
// acknowledgement.
//
// With expiry-zmq-hash-max-expire-cycles N > 0 and the hash type sent:
//
//   - a hash in the main database (expiry-zmq-hash-main-db) whose
//     deadline passes is sent as any expiring hash, then kept without a
//     deadline, and a counter of the same name is set in the loop
//     database (expiry-zmq-hash-loop-db) to 1, due after
//     expiry-zmq-hash-delay plus a random 0..expiry-zmq-hash-delay-jitter
//     milliseconds;
//   - when a counter falls due: if the hash is gone, is no longer a hash
//     or has a deadline again (it was rewritten), the counter simply
//     expires; otherwise the hash is sent again, and then deleted (the
//     counter expiring with it) when the count has reached N, or the
//     count goes up by one and falls due again after a new delay.
//
// So a hash nobody deletes is sent N+1 times. While the cycles are on,
// every string that expires in the loop database is a counter: it is
// never sent itself, and one that is not a number is dropped with a
// warning.
//
// Every change is an ordinary write, propagated in absolute form (PERSIST
// key in the main database, SET key count PXAT deadline in the loop
// database, DEL key), so the AOF (and a replica) continue the cycles
// where they were; the jitter is drawn once, here. A replica runs no
// cycle for its master's keys, which it does not expire (the master's
// writes carry the cycles); a writable replica does expire the keys its
// own clients gave a deadline, and the deadline hook is asked about
// those as on a master (unlike Service.Expired, it does not look at
// Expired.Replica).
//
// The cycles' writes go to the host's Propagator; their messages to the
// stream, counted in the Service (resent, exhausted).
type cycles struct {
	x *Service
}

// Propagated command names (shared, never modified).
var (
	cyclePERSIST = []byte("PERSIST")
	cycleSET     = []byte("SET")
	cyclePXAT    = []byte("PXAT")
	cycleDEL     = []byte("DEL")
	cycleUNLINK  = []byte("UNLINK")
)

// watch keeps, while the cycles are on, their databases two distinct
// databases, and the cycles off in cluster mode: CONFIG SET of either
// database, or of the cycle limit, fails otherwise.
func (c *cycles) watch(cfg *config.Config) {
	dbs := func(string) error {
		if cfg.Int("expiry-zmq-hash-max-expire-cycles") == 0 {
			return nil
		}
		if cfg.Bool("cluster-enabled") {
			return errors.New(config.ExpiryCyclesInCluster)
		}
		if reason := config.CheckExpiryCycleDBs(cfg.Int("databases"), cfg.Int("expiry-zmq-hash-main-db"), cfg.Int("expiry-zmq-hash-loop-db")); reason != "" {
			return errors.New(reason)
		}
		return nil
	}
	cfg.OnChange("expiry-zmq-hash-main-db", dbs)
	cfg.OnChange("expiry-zmq-hash-loop-db", dbs)
	cfg.OnChange("expiry-zmq-hash-max-expire-cycles", dbs)
}

// on reports whether the cycles run: a cycle limit is set and expiring
// hashes are sent. Under the keyspace lock.
func (c *cycles) on() bool {
	st := c.x.stream
	return st != nil && c.x.cfg.Int("expiry-zmq-hash-max-expire-cycles") > 0 && st.sends(keyspace.TypeHash)
}

// mainDB and loopDB are the databases the cycles use.
func (c *cycles) mainDB() int { return int(c.x.cfg.Int("expiry-zmq-hash-main-db")) }
func (c *cycles) loopDB() int { return int(c.x.cfg.Int("expiry-zmq-hash-loop-db")) }

// isCounter reports whether a key that expired or was evicted in
// database db is a cycle counter, which the expiry stream does not send.
func (c *cycles) isCounter(db int, e *keyspace.Entry) bool {
	return e.Type() == keyspace.TypeString && db == c.loopDB() && c.on()
}

// deadline is the keyspace's deadline hook: it decides about a key whose
// deadline passed before the expiry funnel removes it. Under the lock.
func (c *cycles) deadline(db *keyspace.DB, key string, e *keyspace.Entry) keyspace.Deadline {
	if c.x.isStreamKey(db.ID(), key) {
		return c.x.keepStreamKey(db, key)
	}
	if !c.on() {
		return keyspace.Remove
	}
	switch {
	case e.Type() == keyspace.TypeHash && db.ID() == c.mainDB():
		return c.firstExpiry(db, key, e)
	case e.Type() == keyspace.TypeString && db.ID() == c.loopDB():
		return c.counterDue(db, key, e)
	}
	return keyspace.Remove
}

// firstExpiry sends an expiring hash, keeps it and starts its cycles.
func (c *cycles) firstExpiry(db *keyspace.DB, key string, e *keyspace.Entry) keyspace.Deadline {
	c.x.emit(db.ID(), key, e, e.ExpireAt())
	k := []byte(key)
	// One unit: an AOF holding the PERSIST without the counter would keep
	// the hash for ever.
	c.x.prop.PropagateUnit(func() {
		c.x.prop.PropagateWrite(db.ID(), cyclePERSIST, k)
		c.setCounter(k, 1)
	})
	return keyspace.Keep
}

// counterDue handles a counter that fell due: the hash it counts for is
// sent again, and kept for another cycle or deleted after the last.
func (c *cycles) counterDue(loop *keyspace.DB, key string, e *keyspace.Entry) keyspace.Deadline {
	n, ok := redisconv.ParseInt(e.Str())
	if !ok || n < 1 {
		c.x.log.Warningf("Found non-integer value in expire loop db %d for key '%s': dropped", loop.ID(), key)
		return keyspace.Remove
	}
	k := []byte(key)
	main := c.x.ks.DB(c.mainDB())
	h := main.Peek(k)
	if h == nil || h.Type() != keyspace.TypeHash || h.ExpireAt() != 0 {
		return keyspace.Remove // gone or rewritten: the cycles end
	}
	x := c.x
	x.emit(main.ID(), key, h, e.ExpireAt())
	x.resent++
	if n >= x.cfg.Int("expiry-zmq-hash-max-expire-cycles") {
		main.Delete(k)
		x.prop.PropagateWrite(main.ID(), c.deleteName(), k)
		x.exhausted++
		return keyspace.Remove // the counter expires with it
	}
	c.setCounter(k, n+1)
	return keyspace.Rewritten
}

// setCounter sets key's counter in the loop database to n, due after the
// delay and a random jitter.
func (c *cycles) setCounter(key []byte, n int64) {
	cfg := c.x.cfg
	now := c.x.ks.Now()
	at := now + cfg.Int("expiry-zmq-hash-delay")
	if j := cfg.Int("expiry-zmq-hash-delay-jitter"); j > 0 {
		at += rand.Int64N(j + 1)
	}
	if at <= now {
		at = now + 1 // due after this moment, not again at once
	}
	var nb, atb [20]byte
	v := strconv.AppendInt(nb[:0], n, 10)
	c.x.ks.DB(c.loopDB()).OverwriteString(key, v, at)
	c.x.prop.PropagateWrite(c.loopDB(), cycleSET, key, v, cyclePXAT, strconv.AppendInt(atb[:0], at, 10))
}

// deleteName is how the deletion of an exhausted hash is propagated: as
// Redis propagates an expired key's, UNLINK with lazyfree-lazy-expire
// on, DEL otherwise (the rule of engine.DeleteName).
func (c *cycles) deleteName() []byte {
	if c.x.cfg.Bool("lazyfree-lazy-expire") {
		return cycleUNLINK
	}
	return cycleDEL
}
