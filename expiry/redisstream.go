package expiry

import (
	"errors"
	"strconv"
	"time"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/zmqpub"
)

// The acknowledged mode: with expiry-stream-key NAME, every expiry event
// the PUSH socket would carry (the same expiry-zmq-types, evictions and
// cycles' re-sends) is also appended, in the same step as the key's DEL,
// to the Redis stream NAME in database 0, capped at expiry-stream-maxlen
// entries. It is a key like any other: written to the AOF and to the
// replicas before the DEL (the XADD is propagated first, with its ID and
// an exact MAXLEN, so every copy trims alike), read with XREADGROUP by a
// consumer group, acknowledged with XACK, claimed with XAUTOCLAIM. An
// entry's fields:
//
//	db     the database, in decimal
//	type   the type's name (string, hash, ..., hash-fields)
//	key    the key
//	value  the value as JSON, as zredis-expiry-listen prints it
//	at     the event's time in Unix ms: the deadline, or the eviction's
//	       time
//	id     the message id (zmqpub.AppendMessageID)
//
// The stream key never expires (the deadline hook keeps it, without its
// deadline), and its trimming sends nothing.

var (
	streamXADD   = []byte("XADD")
	streamMAXLEN = []byte("MAXLEN")
	streamEQ     = []byte("=")
	fieldDB      = []byte("db")
	fieldType    = []byte("type")
	fieldKey     = []byte("key")
	fieldValue   = []byte("value")
	fieldAt      = []byte("at")
	fieldID      = []byte("id")
)

// streamKey is expiry-stream-key ("" when off), kept by watchStreamKey:
// the deadline hook asks for it at every expired key.
func (x *Service) streamKey() string { return *x.streamKeyName.Load() }

// watchStreamKey keeps streamKey up to date with CONFIG SET, which may
// not set one in cluster mode (the start refuses it too).
func (x *Service) watchStreamKey() {
	set := func(v string) error {
		if v != "" && x.cfg.Bool("cluster-enabled") {
			return errors.New(config.ExpiryStreamKeyInCluster)
		}
		x.streamKeyName.Store(&v)
		return nil
	}
	set(x.cfg.String("expiry-stream-key"))
	x.cfg.OnChange("expiry-stream-key", set)
}

// isStreamKey reports whether key in database db is the stream key.
func (x *Service) isStreamKey(db int, key string) bool {
	return db == 0 && key != "" && key == x.streamKey()
}

// appendStream appends the event whose message frames are frames (type
// t, key in database db) to the stream key, if one is set; at is the
// event's time. Under the keyspace lock, before the event's DEL is
// propagated.
func (x *Service) appendStream(db int, t zmqpub.Type, key string, frames [3][]byte, at int64) {
	name := x.streamKey()
	if name == "" || x.isStreamKey(db, key) {
		return
	}
	d0 := x.ks.DB(0)
	k := []byte(name)
	var s *keyspace.Stream
	switch e := d0.LookupWrite(k); {
	case e == nil:
		s = keyspace.NewStream()
		d0.PutObject(k, s)
	case e.Type() != keyspace.TypeStream:
		if now := time.Now(); now.Sub(x.streamTypeLog) >= time.Minute {
			x.streamTypeLog = now
			x.log.Warningf("expiry-stream-key %s holds a %s, not a stream: expiry events are not appended to it", name, e.Type())
		}
		x.streamRefused++
		return
	default:
		s = e.Obj().(*keyspace.Stream)
	}
	id := keyspace.StreamID{Ms: uint64(x.ks.Now())}
	if id.Cmp(s.LastID) <= 0 {
		var ok bool
		if id, ok = s.LastID.Incr(); !ok {
			x.streamRefused++ // the stream's IDs are exhausted
			return
		}
	}
	d, _ := zmqpub.Decode(frames[:]) // frames made by Encode: they decode
	var dbb, atb [20]byte
	fv := [][]byte{
		fieldDB, strconv.AppendInt(dbb[:0], int64(db), 10),
		fieldType, []byte(t.String()),
		fieldKey, frames[1][4:],
		fieldValue, zmqpub.AppendJSONValue(nil, d),
		fieldAt, strconv.AppendInt(atb[:0], at, 10),
		fieldID, zmqpub.AppendMessageID(nil, at, frames[0], frames[1]),
	}
	s.Append(id, fv, x.cfg.Int("stream-node-max-bytes"), x.cfg.Int("stream-node-max-entries"))
	argv := make([][]byte, 0, 6+len(fv))
	argv = append(argv, streamXADD, k)
	if maxlen := x.cfg.Int("expiry-stream-maxlen"); maxlen > 0 {
		s.Trim(keyspace.TrimArgs{Strategy: keyspace.TrimMaxLen, MaxLen: maxlen})
		argv = append(argv, streamMAXLEN, streamEQ, strconv.AppendInt(nil, maxlen, 10))
	}
	argv = append(argv, id.Append(nil))
	argv = append(argv, fv...)
	x.prop.PropagateWrite(0, argv...)
	x.streamAppended++
	x.streamWrote = true
	if x.keyReady != nil {
		x.keyReady(0, k)
	}
}

// keepStreamKey is the deadline hook's first rule: the stream key never
// expires. It is kept without its deadline, and the PERSIST propagated.
func (x *Service) keepStreamKey(db *keyspace.DB, key string) keyspace.Deadline {
	x.prop.PropagateWrite(db.ID(), cyclePERSIST, []byte(key))
	return keyspace.Keep
}
