package expiry

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/zmqpub"
	"github.com/zredis/zredis/zmqpub/z85"
)

// spoolFileName is the expiry spool's file in dir.
const spoolFileName = "zredis-expiry.spool"

// stream carries expired keys to the 0MQ listeners. send runs under the
// keyspace lock: it encodes the message and puts it in the outbox, which
// never blocks (it spills to the spool or drops, counting). The
// publisher drains the outbox into the listeners' sockets on goroutines
// of its own, so a listener that is absent, slow or gone never holds a
// command back.
//
// Only a master sends. A replica does not expire its master's keys (the
// replica rule, keyspace's DB.live): they wait for the master's DEL, and
// the funnel never sees them. A writable replica does expire the keys
// its own clients gave a deadline; the funnel marks those
// (Expired.Replica) and Service.Expired does not send them.
type stream struct {
	outbox *zmqpub.Outbox
	pub    *zmqpub.Publisher
	// journal keeps every message durable ahead of its key's DEL while
	// the AOF is on (expiry-zmq-journal); nil when off.
	journal *zmqpub.Journal
	types   atomic.Uint32 // expiry-zmq-types: bit i set = type code i is sent
	withID  atomic.Bool   // expiry-zmq-message-id: frame 4 is sent
	lag     lagWindow
}

// openStream opens the outbox (replaying a spool a previous run left)
// and binds every endpoint. It returns nil, nil when no endpoint is
// configured: no socket, nothing sent.
func openStream(cfg *config.Config, log Logger) (*stream, error) {
	endpoints := cfg.Strings("expiry-zmq-endpoints")
	if len(endpoints) == 0 {
		return nil, nil
	}
	x := &stream{}
	x.types.Store(uint32(cfg.Int("expiry-zmq-types")))
	x.withID.Store(cfg.Bool("expiry-zmq-message-id"))
	dir := cfg.String("dir")
	spoolPath := filepath.Join(dir, spoolFileName)
	hadJournal, err := zmqpub.JournalExists(dir)
	if err != nil {
		return nil, err
	}
	if hadJournal {
		// A message the journal holds is replayed from it (or was handed,
		// or its DEL never reached the AOF and the key expires again):
		// the spool's copy would be a duplicate.
		n, err := zmqpub.DropJournaledFromSpool(spoolPath, log.Warningf)
		if err != nil {
			return nil, fmt.Errorf("opening the expiry spool: %w", err)
		}
		if n > 0 {
			log.Noticef("Expiry spool: %d messages also in the expiry journal are sent from the journal", n)
		}
	}
	ob, err := zmqpub.OpenOutbox(zmqpub.OutboxConfig{
		HWM:           int(cfg.Int("expiry-zmq-hwm")),
		MaxMemBytes:   cfg.Int("expiry-zmq-hwm-bytes"),
		SpoolPath:     spoolPath,
		SpoolMaxBytes: cfg.Int("expiry-zmq-spool-max-bytes"),
		Logf:          log.Warningf,
	})
	if err != nil {
		return nil, fmt.Errorf("opening the expiry spool: %w", err)
	}
	if st := ob.Stats(); st.Spooled > 0 {
		log.Noticef("Expiry spool holds %d messages (%d bytes) from a previous run: they are sent first", st.Spooled, st.SpooledBytes)
	}
	if cfg.Bool("expiry-zmq-journal") || hadJournal {
		if err := x.openJournal(cfg, log, ob); err != nil {
			ob.Close()
			return nil, err
		}
	}
	x.outbox = ob
	pcfg := zmqpub.PublisherConfig{
		Endpoints:    endpoints,
		MaxListeners: int(cfg.Int("expiry-zmq-max-listeners")),
		Logf:         log.Noticef,
		OnSent:       x.sent,
	}
	if keys, _ := curveKeys(cfg.Strings("expiry-zmq-curve-allowed-keys")); cfg.IsNull("expiry-zmq-curve-secret-key") && len(keys) > 0 {
		// Listener keys without a server key: CURVE was wanted (an empty
		// secret from a template, say), and the stream would go in clear.
		x.closeStores()
		return nil, errors.New("expiry-zmq-curve-allowed-keys is set but expiry-zmq-curve-secret-key is not: expiry messages would be sent unencrypted to any listener")
	}
	if !cfg.IsNull("expiry-zmq-curve-secret-key") {
		// config checked both keys' syntax; an error here is a bug.
		secret, err := z85.DecodeKey(cfg.String("expiry-zmq-curve-secret-key"))
		if err != nil {
			x.closeStores()
			return nil, fmt.Errorf("expiry-zmq-curve-secret-key: %w", err)
		}
		pcfg.CurveSecretKey = &secret
		if pcfg.CurveAllowedKeys, err = curveKeys(cfg.Strings("expiry-zmq-curve-allowed-keys")); err != nil {
			x.closeStores()
			return nil, fmt.Errorf("expiry-zmq-curve-allowed-keys: %w", err)
		}
	}
	pub, err := zmqpub.NewPublisher(pcfg, ob)
	if err != nil {
		x.closeStores()
		return nil, fmt.Errorf("binding expiry-zmq-endpoints: %w", err)
	}
	x.pub = pub
	if key, ok := pub.CurvePublicKey(); ok {
		log.Noticef("Expiry messages are published on %s with CURVE (server public key %s, %d listener keys allowed)",
			strings.Join(pub.Endpoints(), " "), z85.EncodeKey(key), len(pcfg.CurveAllowedKeys))
		if len(pcfg.CurveAllowedKeys) == 0 {
			log.Warningf("expiry-zmq-curve-secret-key is set and expiry-zmq-curve-allowed-keys is empty: every listener is refused")
		}
	} else {
		log.Noticef("Expiry messages are published on %s", strings.Join(pub.Endpoints(), " "))
	}
	return x, nil
}

// openJournal opens the expiry journal in dir and queues, ahead of any
// new message, what a previous run left in it. With
// expiry-zmq-journal no, or without the AOF at start, the messages found
// are queued as unjournaled ones and the files are emptied: the journal
// stays open, and takes records while the AOF is on.
func (x *stream) openJournal(cfg *config.Config, log Logger, ob *zmqpub.Outbox) error {
	keep := cfg.Bool("expiry-zmq-journal") && cfg.Bool("appendonly")
	var dropped []uint64
	j, count, bytes, err := zmqpub.OpenJournal(cfg.String("dir"), log.Warningf, func(m zmqpub.Message) {
		if !keep {
			m.Seq = 0
		}
		if !ob.Put(m) && m.Seq != 0 {
			dropped = append(dropped, m.Seq)
		}
	})
	if err != nil {
		return fmt.Errorf("opening the expiry journal: %w", err)
	}
	if count > 0 {
		log.Noticef("Expiry journal holds %d messages (%d bytes) not handed to a listener before the last stop: they are sent first", count, bytes)
	}
	for _, seq := range dropped {
		j.Handed(seq)
	}
	if !keep {
		if err := j.Forget(); err != nil {
			j.Close()
			return fmt.Errorf("emptying the expiry journal: %w", err)
		}
		if !cfg.Bool("expiry-zmq-journal") {
			return j.Close()
		}
	}
	x.journal = j
	return nil
}

// closeStores closes the outbox and the journal of a stream that failed
// to open.
func (x *stream) closeStores() {
	x.outbox.Close()
	if x.journal != nil {
		x.journal.Close()
	}
}

// sent is the publisher's OnSent hook (on a listener's writer
// goroutine): the message has left for good.
func (x *stream) sent(m *zmqpub.Message, at time.Time) {
	x.lag.record(m, at)
	if x.journal != nil {
		x.journal.Handed(m.Seq)
	}
}

// curveKeys decodes listeners' public keys (Z85), skipping empty entries.
func curveKeys(list []string) ([][32]byte, error) {
	var keys [][32]byte
	for _, s := range list {
		if s == "" {
			continue
		}
		k, err := z85.DecodeKey(s)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// watch applies CONFIG SET of the outbox bounds and the types at run time.
func (x *stream) watch(cfg *config.Config) {
	limits := func(string) error {
		x.outbox.SetLimits(int(cfg.Int("expiry-zmq-hwm")), cfg.Int("expiry-zmq-hwm-bytes"), cfg.Int("expiry-zmq-spool-max-bytes"))
		return nil
	}
	cfg.OnChange("expiry-zmq-hwm", limits)
	cfg.OnChange("expiry-zmq-hwm-bytes", limits)
	cfg.OnChange("expiry-zmq-spool-max-bytes", limits)
	cfg.OnChange("expiry-zmq-max-listeners", func(string) error {
		x.pub.SetMaxListeners(int(cfg.Int("expiry-zmq-max-listeners")))
		return nil
	})
	cfg.OnChange("expiry-zmq-curve-allowed-keys", func(string) error {
		keys, err := curveKeys(cfg.Strings("expiry-zmq-curve-allowed-keys"))
		if err != nil {
			return err
		}
		x.pub.SetCurveAllowedKeys(keys)
		return nil
	})
	cfg.OnChange("expiry-zmq-types", func(string) error {
		x.types.Store(uint32(cfg.Int("expiry-zmq-types")))
		return nil
	})
	cfg.OnChange("expiry-zmq-message-id", func(v string) error {
		x.withID.Store(v == "yes")
		return nil
	})
}

// close stops the publisher (messages not yet written go back to the
// outbox) and closes the outbox, which writes what memory holds to the
// spool and fsyncs it, so the next run sends it.
func (x *stream) close() error {
	err := x.pub.Close()
	if cerr := x.outbox.Close(); err == nil {
		err = cerr
	}
	if x.journal != nil {
		// The watermark of what was handed, so that the next run replays
		// only the rest.
		if cerr := x.journal.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// sends reports whether values of type t are sent (expiry-zmq-types).
func (x *stream) sends(t keyspace.Type) bool {
	code, ok := messageType(t)
	return ok && x.types.Load()&(1<<code) != 0
}

// put gives m its id, when the operator asked for ids (at is the event's
// time: the deadline, or the eviction's), journals it (its DEL is
// propagated after this returns) and queues it. Under the keyspace lock.
func (x *stream) put(m zmqpub.Message, at int64) {
	if x.withID.Load() {
		m.ID = zmqpub.AppendMessageID(make([]byte, 0, 36), at, m.Frames[0], m.Frames[1])
	}
	if x.journal != nil {
		x.journal.Add(&m)
	}
	if !x.outbox.Put(m) && x.journal != nil {
		// Dropped by the outbox's bounds: counted there, and never to be
		// handed, so the watermark must not wait for it.
		x.journal.Handed(m.Seq)
	}
}

// lagWindow keeps the lag (hand-off to a listener's socket minus the
// key's deadline) of the messages sent in the last minute, up to
// lagSamples of them, for INFO's percentiles.
type lagWindow struct {
	mu   sync.Mutex
	ring [lagSamples]lagSample
	next int
	n    int
}

const (
	lagSamples = 1 << 16
	lagSpan    = time.Minute
)

type lagSample struct {
	at  int64 // Unix ns of the hand-off
	lag int64 // ns
}

// record is the publisher's OnSent hook (on a listener's writer
// goroutine).
func (w *lagWindow) record(m *zmqpub.Message, at time.Time) {
	if m.Deadline == 0 {
		return
	}
	lag := at.UnixNano() - m.Deadline*int64(time.Millisecond)
	w.mu.Lock()
	w.ring[w.next] = lagSample{at.UnixNano(), max(lag, 0)}
	w.next = (w.next + 1) % lagSamples
	w.n = min(w.n+1, lagSamples)
	w.mu.Unlock()
}

// summary returns p50, p99 and max in ms over the last minute, and the
// number of samples they are drawn from.
func (w *lagWindow) summary(now time.Time) (p50, p99, maxLag float64, n int) {
	since := now.Add(-lagSpan).UnixNano()
	w.mu.Lock()
	lags := make([]int64, 0, w.n)
	for i := 0; i < w.n; i++ {
		if s := w.ring[i]; s.at >= since {
			lags = append(lags, s.lag)
		}
	}
	w.mu.Unlock()
	if len(lags) == 0 {
		return 0, 0, 0, 0
	}
	slices.Sort(lags)
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	pick := func(q float64) int64 { return lags[min(len(lags)-1, int(q*float64(len(lags))))] }
	return ms(pick(0.50)), ms(pick(0.99)), ms(lags[len(lags)-1]), len(lags)
}
