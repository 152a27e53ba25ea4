package replication

import (
	"github.com/zredis/zredis/resp"

	"crypto/rand"
	"encoding/hex"
	"strings"
)

// NoID is replid2 when there is no previous replication history.
const NoID = "0000000000000000000000000000000000000000"

// NewID makes a replication ID: 40 random hex digits, as Redis's
// changeReplicationId.
func NewID() string {
	var b [20]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Stream is a master's replication stream: its IDs, its offset, the
// backlog while there is one, and the database its commands were last
// written for. Its zero value is not usable: call NewStream.
//
// As in Redis, the stream is fed only while a backlog exists (from the
// first replica on); master_repl_offset stays where it is meanwhile, and
// a new backlog starts a new history (a new ID). Not safe for concurrent
// use: the server uses it under the keyspace lock.
type Stream struct {
	ID, ID2   string
	SecondOff int64 // second_repl_offset: ID2 is valid up to here; -1 without ID2
	offset    int64 // master_repl_offset
	backlog   *Backlog
	selDB     int // database of the last command written; -1: SELECT first
	scratch   []byte
}

// NewStream makes the stream of a master that never had a replica.
func NewStream() *Stream {
	return &Stream{ID: NewID(), ID2: NoID, SecondOff: -1, selDB: -1}
}

// Offset is master_repl_offset.
func (s *Stream) Offset() int64 { return s.offset }

// Backlog is the backlog, nil when there is none.
func (s *Stream) Backlog() *Backlog { return s.backlog }

// CreateBacklog starts a new history with a backlog of size bytes, as
// syncCommand does for the first replica when there is no backlog: a new
// ID, no ID2.
func (s *Stream) CreateBacklog(size int) {
	s.ID, s.ID2, s.SecondOff = NewID(), NoID, -1
	s.backlog = NewBacklog(size, s.offset)
	s.selDB = -1
}

// FreeBacklog drops the backlog (repl-backlog-ttl passed without
// replicas) and starts a new history: a replica of the old one can no
// longer continue, since the offsets stop moving.
func (s *Stream) FreeBacklog() {
	s.ID, s.ID2, s.SecondOff = NewID(), NoID, -1
	s.backlog = nil
}

// Promote gives a replica that becomes a master the history it followed
// and a new one of its own (shiftReplicationId): ID2 is the old master's
// ID, valid up to the offset applied, and the offsets go on from there.
func (s *Stream) Promote(masterID string, offset int64) {
	s.FreeBacklog()
	s.ID2, s.SecondOff = masterID, offset+1
	s.offset = offset
}

// ResetSelect makes the next command written start with SELECT, as a
// full synchronisation does (replicationSetupSlaveForFullResync): the
// new replica's database is unknown.
func (s *Stream) ResetSelect() { s.selDB = -1 }

// Feed writes one command for database db (-1: whatever database is
// selected, for PING and REPLCONF GETACK) to the stream, preceded by a
// SELECT when db differs from the last one written, and returns the
// bytes written, valid until the next call. Nothing is written without a
// backlog (nil).
func (s *Stream) Feed(db int, argv [][]byte) []byte {
	if s.backlog == nil {
		return nil
	}
	out := s.scratch[:0]
	if db >= 0 && db != s.selDB {
		out = resp.AppendSelect(out, db)
		s.selDB = db
	}
	out = resp.AppendCommand(out, argv...)
	s.backlog.Write(out)
	s.offset += int64(len(out))
	if cap(out) <= 64<<10 {
		s.scratch = out
	} else {
		s.scratch = nil
	}
	return out
}

// CanContinue reports whether a replica asking PSYNC id offset can
// continue the stream (masterTryPartialResynchronization): id is the
// current ID, or the previous one with an offset it was valid for, and
// the backlog holds the stream from offset on.
func (s *Stream) CanContinue(id string, offset int64) bool {
	if !strings.EqualFold(id, s.ID) && (!strings.EqualFold(id, s.ID2) || offset > s.SecondOff) {
		return false
	}
	return s.backlog != nil && s.backlog.Covers(offset)
}
