package expiry

import (
	"strconv"
	"strings"
	"time"

	"github.com/zredis/zredis/zmqpub/z85"
)

// Info appends the "# Expiry" section's fields (INFO expiry), the same
// without a stream, with zero listeners. Under the keyspace lock.
func (x *Service) Info(b []byte) []byte {
	cfg := x.cfg
	b = infoStr(b, "expiry_zmq_endpoints", strings.Join(cfg.Strings("expiry-zmq-endpoints"), ","))
	b = infoStr(b, "expiry_zmq_types", strings.ReplaceAll(cfg.String("expiry-zmq-types"), " ", ","))
	if key := x.streamKey(); key != "" {
		b = infoStr(b, "expiry_stream_key", key)
		b = infoInt(b, "expiry_stream_appended", x.streamAppended)
		b = infoInt(b, "expiry_stream_refused", x.streamRefused)
	}
	st := x.stream
	if st == nil {
		b = infoInt(b, "expiry_zmq_listeners", 0)
		return b
	}
	ps := st.pub.Stats()
	os := st.outbox.Stats()
	b = infoInt(b, "expiry_zmq_listeners", ps.Listeners)
	b = infoInt(b, "expiry_zmq_listener_connects", ps.Connects)
	b = infoInt(b, "expiry_zmq_listeners_refused", ps.Refused)
	if key, ok := st.pub.CurvePublicKey(); ok {
		b = infoStr(b, "expiry_zmq_curve_public_key", z85.EncodeKey(key))
		allowed := 0
		for _, k := range cfg.Strings("expiry-zmq-curve-allowed-keys") {
			if k != "" {
				allowed++
			}
		}
		b = infoInt(b, "expiry_zmq_curve_allowed_keys", int64(allowed))
		b = infoInt(b, "expiry_zmq_curve_refused", ps.CurveRefused)
	}
	b = infoInt(b, "expiry_messages_sent", ps.Sent)
	b = infoInt(b, "expiry_messages_queued", os.Queued)
	b = infoInt(b, "expiry_messages_queued_bytes", os.QueuedBytes)
	b = infoInt(b, "expiry_messages_spooled", os.Spooled)
	b = infoInt(b, "expiry_messages_spooled_bytes", os.SpooledBytes)
	b = infoInt(b, "expiry_messages_spilled_total", os.SpilledTotal)
	b = infoInt(b, "expiry_messages_dropped", os.Dropped)
	b = infoInt(b, "expiry_messages_dropped_bytes", os.DroppedBytes)
	b = infoInt(b, "expiry_messages_requeued", ps.Requeued)
	b = infoInt(b, "expiry_messages_resent", x.resent)
	b = infoInt(b, "expiry_hash_cycles_exhausted", x.exhausted)
	b = infoInt(b, "expiry_messages_evicted", x.evicted)
	if j := st.journal; j != nil {
		b = infoInt(b, "expiry_journal_pending", int64(j.Pending()))
	}
	p50, p99, maxLag, n := st.lag.summary(time.Now())
	b = infoInt(b, "expiry_lag_samples", int64(n))
	b = infoStr(b, "expiry_lag_p50_ms", strconv.FormatFloat(p50, 'f', 3, 64))
	b = infoStr(b, "expiry_lag_p99_ms", strconv.FormatFloat(p99, 'f', 3, 64))
	b = infoStr(b, "expiry_lag_max_ms", strconv.FormatFloat(maxLag, 'f', 3, 64))
	return b
}

// infoInt and infoStr append one INFO field, "name:value\r\n", as the
// engine's INFO assembly writes them.
func infoInt(b []byte, name string, v int64) []byte {
	b = append(b, name...)
	b = append(b, ':')
	b = strconv.AppendInt(b, v, 10)
	return append(b, '\r', '\n')
}

func infoStr(b []byte, name, v string) []byte {
	b = append(b, name...)
	b = append(b, ':')
	b = append(b, v...)
	return append(b, '\r', '\n')
}
