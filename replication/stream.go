package replication

import (
	"github.com/zredis/zredis/resp"

	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync/atomic"
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
	// shared is offset, published for readers without the keyspace
	// lock (the cluster bus's message headers).
	shared  atomic.Int64
	backlog *Backlog
	selDB   int // database of the last command written; -1: SELECT first
	scratch []byte
}

// NewStream makes the stream of a master that never had a replica.
func NewStream() *Stream {
	return &Stream{ID: NewID(), ID2: NoID, SecondOff: -1, selDB: -1}
}

// Offset is master_repl_offset.
func (s *Stream) Offset() int64 { return s.offset }

// SharedOffset is Offset for a reader without the keyspace lock: the
// offset as of the last change made under it.
func (s *Stream) SharedOffset() int64 { return s.shared.Load() }

// setOffset moves the offset and publishes it.
func (s *Stream) setOffset(o int64) {
	s.offset = o
	s.shared.Store(o)
}

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

// Shift starts a new history that continues this one
// (shiftReplicationId): ID2 is the current ID, valid up to the current
// offset, and the backlog stays, so that the replicas of the history
// this server followed, and its old master, can continue with it. A
// replica promoted to master does this.
func (s *Stream) Shift() {
	s.Rename(NewID())
}

// Rename gives the history a new ID that continues the current one, as
// Shift: a replica whose master continued it under a new ID
// (+CONTINUE <newid>) does this.
func (s *Stream) Rename(id string) {
	s.ID2, s.SecondOff = s.ID, s.offset+1
	s.ID = id
	s.selDB = -1
}

// Follow makes the stream a replica's copy of its master's, after a full
// synchronisation: the master's ID and offset, no ID2 (a new history),
// and a new backlog of size bytes holding nothing yet, as a replica
// keeps one whether or not it has replicas, to serve them if it is
// promoted.
func (s *Stream) Follow(id string, offset int64, size int) {
	s.ID, s.ID2, s.SecondOff = id, NoID, -1
	s.setOffset(offset)
	s.backlog = NewBacklog(size, offset)
	s.selDB = -1
}

// Resume takes the history a replica's RDB file recorded: the master's
// ID and the offset the file holds the stream up to. The backlog comes
// when the master lets it continue (EnsureBacklog).
func (s *Stream) Resume(id string, offset int64) {
	s.ID, s.ID2, s.SecondOff = id, NoID, -1
	s.setOffset(offset)
	s.backlog = nil
	s.selDB = -1
}

// Restart makes a master's stream, after a restart, the continuation of
// the history its RDB file recorded: a new ID, ID2 the recorded one up
// to offset, and a backlog of size bytes from there, so that replicas
// that had followed it continue.
func (s *Stream) Restart(id string, offset int64, size int) {
	s.ID, s.ID2, s.SecondOff = NewID(), id, offset+1
	s.setOffset(offset)
	s.backlog = NewBacklog(size, offset)
	s.selDB = -1
}

// DropBacklog frees the backlog without changing the IDs, as a replica
// does when a full synchronisation starts: its own replicas can no
// longer continue.
func (s *Stream) DropBacklog() { s.backlog = nil }

// EnsureBacklog makes a backlog of size bytes at the current offset if
// there is none, without a new history (a replica that continues its
// master's stream after a restart).
func (s *Stream) EnsureBacklog(size int) {
	if s.backlog == nil {
		s.backlog = NewBacklog(size, s.offset)
	}
}

// Proxy counts bytes of a master's stream that a replica applied and
// writes them, verbatim, to the backlog if there is one
// (replicationFeedStreamFromMasterStream): a replica's offsets are its
// master's.
func (s *Stream) Proxy(p []byte) {
	if s.backlog != nil {
		s.backlog.Write(p)
	}
	s.setOffset(s.offset + int64(len(p)))
}

// SelectedDB is the database of the last command written, -1 when the
// next one starts with SELECT.
func (s *Stream) SelectedDB() int { return s.selDB }

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
	s.setOffset(s.offset + int64(len(out)))
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
