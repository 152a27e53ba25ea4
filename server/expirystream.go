package server

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/resp"
	"github.com/zredis/zredis/zmqpub"
	"github.com/zredis/zredis/zmqpub/z85"
)

// spoolFileName is the expiry spool's file in dir.
const spoolFileName = "zredis-expiry.spool"

// expiryStream carries expired keys from the keyspace's expiry funnel to
// the 0MQ listeners. The sink runs under the keyspace lock: it encodes
// the message and puts it in the outbox, which never blocks (it spills to
// the spool or drops, counting). The publisher drains the outbox into the
// listeners' sockets on goroutines of its own, so a listener that is
// absent, slow or gone never holds a command back.
//
// Only a master sends: a replica never expires a key (the replica rule
// lives in keyspace, DB.live), so the funnel, and this sink, never run
// there.
type expiryStream struct {
	outbox *zmqpub.Outbox
	pub    *zmqpub.Publisher
	types  atomic.Uint32 // expiry-zmq-types: bit i set = type code i is sent
	lag    lagWindow

	// Counted under the keyspace lock, for INFO expiry.
	resent    int64 // hashes sent again by the expire cycles
	exhausted int64 // hashes deleted after their last cycle
	evicted   int64 // evicted keys sent
}

// openExpiryStream opens the outbox (replaying a spool a previous run
// left) and binds every endpoint. It returns nil, nil when no endpoint
// is configured: no socket, nothing sent.
func openExpiryStream(cfg *config.Config, log *Logger) (*expiryStream, error) {
	endpoints := cfg.Strings("expiry-zmq-endpoints")
	if len(endpoints) == 0 {
		return nil, nil
	}
	x := &expiryStream{}
	x.types.Store(uint32(cfg.Int("expiry-zmq-types")))
	ob, err := zmqpub.OpenOutbox(zmqpub.OutboxConfig{
		HWM:           int(cfg.Int("expiry-zmq-hwm")),
		MaxMemBytes:   cfg.Int("expiry-zmq-hwm-bytes"),
		SpoolPath:     filepath.Join(cfg.String("dir"), spoolFileName),
		SpoolMaxBytes: cfg.Int("expiry-zmq-spool-max-bytes"),
		Logf:          log.Warningf,
	})
	if err != nil {
		return nil, fmt.Errorf("opening the expiry spool: %w", err)
	}
	if st := ob.Stats(); st.Spooled > 0 {
		log.Noticef("Expiry spool holds %d messages (%d bytes) from a previous run: they are sent first", st.Spooled, st.SpooledBytes)
	}
	x.outbox = ob
	pcfg := zmqpub.PublisherConfig{
		Endpoints:    endpoints,
		MaxListeners: int(cfg.Int("expiry-zmq-max-listeners")),
		Logf:         log.Noticef,
		OnSent:       x.lag.record,
	}
	if keys, _ := curveKeys(cfg.Strings("expiry-zmq-curve-allowed-keys")); cfg.IsNull("expiry-zmq-curve-secret-key") && len(keys) > 0 {
		// Listener keys without a server key: CURVE was wanted (an empty
		// secret from a template, say), and the stream would go in clear.
		ob.Close()
		return nil, errors.New("expiry-zmq-curve-allowed-keys is set but expiry-zmq-curve-secret-key is not: expiry messages would be sent unencrypted to any listener")
	}
	if !cfg.IsNull("expiry-zmq-curve-secret-key") {
		// config checked both keys' syntax; an error here is a bug.
		secret, err := z85.DecodeKey(cfg.String("expiry-zmq-curve-secret-key"))
		if err != nil {
			ob.Close()
			return nil, fmt.Errorf("expiry-zmq-curve-secret-key: %w", err)
		}
		pcfg.CurveSecretKey = &secret
		if pcfg.CurveAllowedKeys, err = curveKeys(cfg.Strings("expiry-zmq-curve-allowed-keys")); err != nil {
			ob.Close()
			return nil, fmt.Errorf("expiry-zmq-curve-allowed-keys: %w", err)
		}
	}
	pub, err := zmqpub.NewPublisher(pcfg, ob)
	if err != nil {
		ob.Close()
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
func (x *expiryStream) watch(cfg *config.Config) {
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
}

// close stops the publisher (messages not yet written go back to the
// outbox) and closes the outbox, which writes what memory holds to the
// spool and fsyncs it, so the next run sends it.
func (x *expiryStream) close() error {
	err := x.pub.Close()
	if cerr := x.outbox.Close(); err == nil {
		err = cerr
	}
	return err
}

// sink is the keyspace's expired-key sink. Under the keyspace lock.
func (x *expiryStream) sink(ev keyspace.Expired) {
	x.send(ev.DB, ev.Key, ev.Entry, ev.Entry.ExpireAt())
}

// sends reports whether values of type t are sent (expiry-zmq-types).
func (x *expiryStream) sends(t keyspace.Type) bool {
	code, ok := messageType(t)
	return ok && x.types.Load()&(1<<code) != 0
}

// send puts the message of key in database db, holding e's value, in the
// outbox, if e's type is one expiry-zmq-types sends; deadline is when it
// fell due (the lag is measured from it). The message is encoded now:
// e may be a live entry (a hash the expire cycles keep). Under the
// keyspace lock.
func (x *expiryStream) send(db int, key string, e *keyspace.Entry, deadline int64) bool {
	t, ok := messageType(e.Type())
	if !ok || x.types.Load()&(1<<t) == 0 {
		return false
	}
	x.outbox.Put(zmqpub.Message{Frames: encodeEntry(db, t, key, e), Deadline: deadline})
	return true
}

// encodeEntry builds the message of key, of wire type t, holding e's
// value. Under the keyspace lock.
func encodeEntry(db int, t zmqpub.Type, key string, e *keyspace.Entry) [3][]byte {
	if t == zmqpub.TypeStream {
		return zmqpub.EncodeStream(db, []byte(key), streamEntries(e.Obj().(*keyspace.Stream)))
	}
	return zmqpub.Encode(db, t, []byte(key), entryParts(e))
}

// messageType maps a keyspace type to its wire type code.
func messageType(t keyspace.Type) (zmqpub.Type, bool) {
	switch t {
	case keyspace.TypeString:
		return zmqpub.TypeString, true
	case keyspace.TypeHash:
		return zmqpub.TypeHash, true
	case keyspace.TypeList:
		return zmqpub.TypeList, true
	case keyspace.TypeSet:
		return zmqpub.TypeSet, true
	case keyspace.TypeZSet:
		return zmqpub.TypeZSet, true
	case keyspace.TypeStream:
		return zmqpub.TypeStream, true
	}
	return 0, false
}

// entryParts lists a value's items as zmqpub.Encode takes them (a
// stream's are streamEntries'). The slices may alias the entry: Encode
// copies them.
func entryParts(e *keyspace.Entry) [][]byte {
	switch e.Type() {
	case keyspace.TypeString:
		return [][]byte{e.Str()}
	case keyspace.TypeHash:
		h := e.Obj().(*keyspace.Hash)
		parts := make([][]byte, 0, 2*h.Len())
		h.Range(func(f, v []byte) bool {
			parts = append(parts, f, v)
			return true
		})
		return parts
	case keyspace.TypeList:
		l := e.Obj().(*keyspace.List)
		parts := make([][]byte, 0, l.Len())
		l.Each(0, false, func(_ int, v []byte) bool {
			parts = append(parts, v)
			return true
		})
		return parts
	case keyspace.TypeSet:
		s := e.Obj().(*keyspace.Set)
		parts := make([][]byte, 0, s.Len())
		s.Each(func(m keyspace.Member) bool {
			parts = append(parts, m.Bytes(nil))
			return true
		})
		return parts
	case keyspace.TypeZSet:
		z := e.Obj().(*keyspace.ZSet)
		parts := make([][]byte, 0, 2*z.Len())
		z.Ascend(0, func(m string, s float64) bool {
			parts = append(parts, []byte(m), resp.AppendDouble(nil, s))
			return true
		})
		return parts
	}
	return nil
}

// streamEntries lists a stream's live entries in ID order as
// zmqpub.EncodeStream takes them: each ID as "ms-seq", its fields and
// values in the entry's order, integers a node stores as such written as
// XRANGE replies with them. Consumer groups are not sent. Range's views
// last only for its callback, so the bytes are copied into one buffer
// and sliced once the walk is done. Under the keyspace lock.
func streamEntries(s *keyspace.Stream) []zmqpub.StreamEntry {
	var buf []byte
	ends := make([]int, 0, 3*s.Len()) // where each ID, field and value ends in buf
	counts := make([]int, 0, s.Len()) // fields plus values of each entry
	s.Range(keyspace.StreamID{}, keyspace.MaxStreamID, false, func(e *keyspace.StreamEntry) bool {
		buf = e.ID.Append(buf)
		ends = append(ends, len(buf))
		for _, x := range e.FV {
			buf = x.AppendTo(buf)
			ends = append(ends, len(buf))
		}
		counts = append(counts, len(e.FV))
		return true
	})
	entries := make([]zmqpub.StreamEntry, len(counts))
	fields := make([][]byte, len(ends)-len(counts))
	start, next := 0, 0
	item := func() []byte {
		end := ends[next]
		b := buf[start:end:end]
		start, next = end, next+1
		return b
	}
	for i, n := range counts {
		entries[i].ID = item()
		entries[i].Fields, fields = fields[:n:n], fields[n:]
		for j := range entries[i].Fields {
			entries[i].Fields[j] = item()
		}
	}
	return entries
}

// info appends the "# Expiry" section's fields.
func (x *expiryStream) info(b []byte, cfg *config.Config) []byte {
	b = engine.InfoStr(b, "expiry_zmq_endpoints", strings.Join(cfg.Strings("expiry-zmq-endpoints"), ","))
	b = engine.InfoStr(b, "expiry_zmq_types", strings.ReplaceAll(cfg.String("expiry-zmq-types"), " ", ","))
	if x == nil {
		b = engine.InfoInt(b, "expiry_zmq_listeners", 0)
		return b
	}
	ps := x.pub.Stats()
	os := x.outbox.Stats()
	b = engine.InfoInt(b, "expiry_zmq_listeners", ps.Listeners)
	b = engine.InfoInt(b, "expiry_zmq_listener_connects", ps.Connects)
	b = engine.InfoInt(b, "expiry_zmq_listeners_refused", ps.Refused)
	if key, ok := x.pub.CurvePublicKey(); ok {
		b = engine.InfoStr(b, "expiry_zmq_curve_public_key", z85.EncodeKey(key))
		allowed := 0
		for _, k := range cfg.Strings("expiry-zmq-curve-allowed-keys") {
			if k != "" {
				allowed++
			}
		}
		b = engine.InfoInt(b, "expiry_zmq_curve_allowed_keys", int64(allowed))
		b = engine.InfoInt(b, "expiry_zmq_curve_refused", ps.CurveRefused)
	}
	b = engine.InfoInt(b, "expiry_messages_sent", ps.Sent)
	b = engine.InfoInt(b, "expiry_messages_queued", os.Queued)
	b = engine.InfoInt(b, "expiry_messages_queued_bytes", os.QueuedBytes)
	b = engine.InfoInt(b, "expiry_messages_spooled", os.Spooled)
	b = engine.InfoInt(b, "expiry_messages_spooled_bytes", os.SpooledBytes)
	b = engine.InfoInt(b, "expiry_messages_spilled_total", os.SpilledTotal)
	b = engine.InfoInt(b, "expiry_messages_dropped", os.Dropped)
	b = engine.InfoInt(b, "expiry_messages_dropped_bytes", os.DroppedBytes)
	b = engine.InfoInt(b, "expiry_messages_requeued", ps.Requeued)
	b = engine.InfoInt(b, "expiry_messages_resent", x.resent)
	b = engine.InfoInt(b, "expiry_hash_cycles_exhausted", x.exhausted)
	b = engine.InfoInt(b, "expiry_messages_evicted", x.evicted)
	p50, p99, maxLag, n := x.lag.summary(time.Now())
	b = engine.InfoInt(b, "expiry_lag_samples", int64(n))
	b = engine.InfoStr(b, "expiry_lag_p50_ms", strconv.FormatFloat(p50, 'f', 3, 64))
	b = engine.InfoStr(b, "expiry_lag_p99_ms", strconv.FormatFloat(p99, 'f', 3, 64))
	b = engine.InfoStr(b, "expiry_lag_max_ms", strconv.FormatFloat(maxLag, 'f', 3, 64))
	return b
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
