package zmqpub

// The expiry journal: every expiry message, written to disk in step with
// the AOF, so that a message is durable no later than the DEL of its key,
// and a crash loses no message whose DEL survived.
//
// Who calls what. Add runs under the server's keyspace lock, before the
// key's DEL is appended to the AOF: it gives the message its sequence
// number and encodes it into memory. The AOF's flusher calls Commit
// before it writes each batch of the AOF (Commit(true) under appendfsync
// always: the records are fsynced before the DELs are even written), and
// Sync in the everysec background fsync, before the AOF's own fsync.
// Handed records each message written to a listener's socket (or dropped
// by the outbox's bounds); Commit appends the resulting watermark, the
// highest sequence below which every message was handed, so that a
// restart replays only what follows it.
//
// Files. The journal is a series of segments, dir/zredis-expiry.journal.N
// (N counting up from 1, in decimal), each at most journalSegmentBytes
// before the next is started. A segment whose last message is at or
// below the watermark is deleted.
//
// Format (integers little-endian):
//
//	header, 32 bytes:
//	  0  [8]byte  magic "zrjourn\x00"
//	  8  uint32   version (1)
//	  12 uint32   flags (0)
//	  16 uint64   the watermark when the segment was started
//	  24 uint32   CRC-32C of bytes 0..23
//	  28 uint32   zero
//	records:
//	  0  uint32   body length B
//	  4  uint32   CRC-32C of the body
//	  8  body:    byte kind, then
//	              kind 1 (message): uint64 sequence, int64 deadline,
//	                uint32 len1, len2, len3, len4, frames 1 to 3, the id
//	              kind 2 (watermark): uint64 watermark
//
// Opening reads every segment: a record cut short or failing its checksum
// at the end of a segment is a torn last write and is dropped with a log
// line; any other bad record ends that segment's reading, and the line
// says how many bytes were discarded; a segment with a bad header is set
// aside (renamed *.bad) with a log line. Nothing is allocated from a
// length before it is checked against what the file holds.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

const (
	journalMagic      = "zrjourn\x00"
	journalVersion    = 1
	journalHeaderSize = 32
	journalPrefix     = "zredis-expiry.journal."

	recordKindMessage   = 1
	recordKindWatermark = 2
	// journalMessageFixed is a message record's body before its frames:
	// kind, sequence, deadline, four lengths.
	journalMessageFixed = 1 + 8 + 8 + 16
	journalWatermarkLen = 1 + 8
	// journalMaxSpare bounds the buffer kept between commits.
	journalMaxSpare = 4 << 20
)

// journalSegmentBytes is the size past which a new segment is started (a
// variable so that tests can lower it).
var journalSegmentBytes int64 = 64 << 20

// Journal is safe for concurrent use.
type Journal struct {
	dir  string
	logf func(format string, args ...any)

	// mu guards what Add fills; Add holds it only to encode.
	mu      sync.Mutex
	on      bool
	pending []byte // records not yet written
	spare   []byte
	lastSeq uint64 // the last sequence number given

	// handedMu guards the watermark of handed messages.
	handedMu sync.Mutex
	handed   watermark

	// fileMu guards the files: Commit and Sync take turns.
	fileMu      sync.Mutex
	cur         *os.File
	curNum      int
	curSize     int64
	curLast     uint64 // the last sequence written to cur
	unsynced    bool   // cur holds message records not yet fsynced
	segments    []journalSegment
	doneWritten uint64 // the last watermark written
	syncing     sync.WaitGroup
	failed      error // the last write failed: the records are pending again
	closed      bool
}

// journalSegment is a segment no longer written to.
type journalSegment struct {
	num  int
	last uint64 // its last message's sequence (0: none)
}

// OpenJournal opens the journal in dir, reading what previous runs left:
// replay receives, in order, every message after the last watermark (its
// frames its own), to be sent before any new one; it returns their count
// and frame bytes. The files are read twice, the first time for the
// watermark, so that memory holds one record at a time. A new segment
// receives the records from now on. The journal takes records only once
// Attach(true) is called.
func OpenJournal(dir string, logf func(format string, args ...any), replay func(Message)) (j *Journal, count, bytes int64, err error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	j = &Journal{dir: dir, logf: logf}
	nums, err := journalSegments(dir)
	if err != nil {
		return nil, 0, 0, err
	}
	done := uint64(0)
	for _, num := range nums {
		segDone, last, ok := j.readSegment(num, true, nil)
		if !ok {
			continue
		}
		done = max(done, segDone)
		j.lastSeq = max(j.lastSeq, last)
		j.segments = append(j.segments, journalSegment{num: num, last: last})
	}
	for _, seg := range j.segments {
		j.readSegment(seg.num, false, func(m Message) {
			if m.Seq > done {
				count++
				bytes += int64(m.Size())
				replay(m)
			}
		})
	}
	j.lastSeq = max(j.lastSeq, done)
	if count == 0 {
		// Everything was handed: the watermark starts the next segment.
		done = j.lastSeq
	}
	j.handed.done, j.doneWritten = done, done
	j.curNum = 1
	if len(nums) > 0 {
		j.curNum = nums[len(nums)-1] + 1
	}
	if err := j.startSegment(); err != nil {
		return nil, 0, 0, err
	}
	j.deleteHandedSegments()
	return j, count, bytes, nil
}

// JournalExists reports whether dir holds journal segments.
func JournalExists(dir string) (bool, error) {
	nums, err := journalSegments(dir)
	return len(nums) > 0, err
}

// Forget deletes the segments read at open, whose messages the caller
// took as unjournaled ones (the journal was not to be kept): none of them
// is replayed again.
func (j *Journal) Forget() error {
	j.fileMu.Lock()
	defer j.fileMu.Unlock()
	j.handedMu.Lock()
	j.handed = watermark{done: j.lastSeq}
	j.handedMu.Unlock()
	j.doneWritten = j.lastSeq
	j.deleteHandedSegments()
	if len(j.segments) > 0 {
		return fmt.Errorf("%d segments could not be deleted", len(j.segments))
	}
	return nil
}

// journalSegments lists the segment numbers in dir, in order.
func journalSegments(dir string) ([]int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("expiry journal: %w", err)
	}
	var nums []int
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, journalPrefix) {
			continue
		}
		n, err := strconv.Atoi(strings.TrimPrefix(name, journalPrefix))
		if err != nil || n <= 0 {
			continue // a *.bad or *.tmp left aside
		}
		nums = append(nums, n)
	}
	slices.Sort(nums)
	return nums, nil
}

func (j *Journal) segmentPath(num int) string {
	return filepath.Join(j.dir, journalPrefix+strconv.Itoa(num))
}

// readSegment reads one segment: the highest watermark it holds and its
// last message's sequence, and each message to fn (nil: none). Only the
// first reading (logBad) reports what is wrong with the file; ok is false
// when its header is unreadable (the file is then set aside).
func (j *Journal) readSegment(num int, logBad bool, fn func(Message)) (done, last uint64, ok bool) {
	path := j.segmentPath(num)
	logf := j.logf
	if !logBad {
		logf = func(string, ...any) {}
	}
	f, err := os.Open(path)
	if err != nil {
		logf("Expiry journal %s: %v; its messages are lost", path, err)
		return 0, 0, false
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		logf("Expiry journal %s: %v; its messages are lost", path, err)
		return 0, 0, false
	}
	size := info.Size()
	var hdr [journalHeaderSize]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil ||
		string(hdr[:8]) != journalMagic ||
		binary.LittleEndian.Uint32(hdr[8:]) != journalVersion ||
		crc32.Checksum(hdr[:24], crcTable) != binary.LittleEndian.Uint32(hdr[24:]) {
		why := "bad header"
		if err != nil {
			why = "torn header"
		} else if string(hdr[:8]) == journalMagic && binary.LittleEndian.Uint32(hdr[8:]) != journalVersion {
			why = fmt.Sprintf("unsupported version %d", binary.LittleEndian.Uint32(hdr[8:]))
		}
		logf("Expiry journal %s: %s (%d bytes); set aside as %s.bad, its messages are lost", path, why, size, filepath.Base(path))
		os.Rename(path, path+".bad")
		return 0, 0, false
	}
	done = binary.LittleEndian.Uint64(hdr[16:])
	r := bufio.NewReaderSize(f, 256<<10)
	off := int64(journalHeaderSize)
	var prefix [8]byte
	var body []byte
	for off < size {
		left := size - off
		if left < 8 {
			logf("Expiry journal %s: torn last record at offset %d (%d bytes), ignored", path, off, left)
			break
		}
		if _, err := io.ReadFull(r, prefix[:]); err != nil {
			logf("Expiry journal %s: read at offset %d: %v; %d bytes discarded", path, off, err, left)
			break
		}
		bodyLen := int64(binary.LittleEndian.Uint32(prefix[0:]))
		if 8+bodyLen > left {
			logf("Expiry journal %s: torn last record at offset %d (claims %d bytes, %d left), ignored", path, off, 8+bodyLen, left)
			break
		}
		// The length was checked against the file above. A message handed
		// to fn owns its body; otherwise one buffer serves every record.
		if fn != nil || int64(cap(body)) < bodyLen {
			body = make([]byte, bodyLen)
		}
		body = body[:bodyLen]
		if _, err := io.ReadFull(r, body); err != nil {
			logf("Expiry journal %s: read at offset %d: %v; %d bytes discarded", path, off, err, left)
			break
		}
		if crc32.Checksum(body, crcTable) != binary.LittleEndian.Uint32(prefix[4:]) {
			if off+8+bodyLen == size {
				logf("Expiry journal %s: torn last record at offset %d (checksum), ignored", path, off)
			} else {
				logf("Expiry journal %s: corrupt record at offset %d (checksum mismatch); %d bytes discarded", path, off, left)
			}
			break
		}
		m, w, err := decodeJournalRecord(body)
		if err != nil {
			logf("Expiry journal %s: corrupt record at offset %d (%v); %d bytes discarded", path, off, err, left)
			break
		}
		if m != nil {
			last = max(last, m.Seq)
			if fn != nil {
				fn(*m)
			}
		} else {
			done = max(done, w)
		}
		off += 8 + bodyLen
	}
	return done, last, true
}

// decodeJournalRecord takes apart a record's body whose checksum held:
// a message (its frames alias body), or a watermark.
func decodeJournalRecord(body []byte) (*Message, uint64, error) {
	if len(body) == 0 {
		return nil, 0, errors.New("empty record")
	}
	switch body[0] {
	case recordKindWatermark:
		if len(body) != journalWatermarkLen {
			return nil, 0, errors.New("watermark record of a bad length")
		}
		return nil, binary.LittleEndian.Uint64(body[1:]), nil
	case recordKindMessage:
		if len(body) < journalMessageFixed {
			return nil, 0, errors.New("message record too short")
		}
		m := &Message{
			Seq:      binary.LittleEndian.Uint64(body[1:]),
			Deadline: int64(binary.LittleEndian.Uint64(body[9:])),
		}
		data := body[journalMessageFixed:]
		var lens [4]uint64
		var sum uint64
		for i := range lens {
			lens[i] = uint64(binary.LittleEndian.Uint32(body[17+4*i:]))
			sum += lens[i]
		}
		if sum != uint64(len(data)) {
			return nil, 0, errors.New("frame lengths do not add up")
		}
		for i, l := range lens {
			part := data[:l:l]
			data = data[l:]
			if i < 3 {
				m.Frames[i] = part
			} else if l > 0 {
				m.ID = part
			}
		}
		return m, 0, nil
	}
	return nil, 0, fmt.Errorf("unknown record kind %d", body[0])
}

// startSegment creates segment curNum, its header holding the watermark
// written so far, and syncs the directory. Under fileMu, or before the
// journal is shared.
func (j *Journal) startSegment() error {
	path := j.segmentPath(j.curNum)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("expiry journal: %w", err)
	}
	var hdr [journalHeaderSize]byte
	copy(hdr[:], journalMagic)
	binary.LittleEndian.PutUint32(hdr[8:], journalVersion)
	binary.LittleEndian.PutUint64(hdr[16:], j.doneWritten)
	binary.LittleEndian.PutUint32(hdr[24:], crc32.Checksum(hdr[:24], crcTable))
	if _, err := f.Write(hdr[:]); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("expiry journal %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("expiry journal %s: %w", path, err)
	}
	syncDir(j.dir)
	j.cur, j.curSize, j.curLast, j.unsynced = f, journalHeaderSize, 0, false
	return nil
}

// Attach starts (true) or stops (false) taking records: the AOF was
// turned on or off. While detached, Add gives no sequence and the
// message is not journaled, as without the AOF.
func (j *Journal) Attach(on bool) {
	j.mu.Lock()
	j.on = on
	j.mu.Unlock()
}

// Add gives m the next sequence number and encodes it for the next
// Commit, if the journal is attached. Called under the keyspace lock,
// before the key's DEL is appended to the AOF.
func (j *Journal) Add(m *Message) {
	j.mu.Lock()
	if j.on {
		j.lastSeq++
		m.Seq = j.lastSeq
		j.pending = appendJournalMessage(j.pending, m)
	}
	j.mu.Unlock()
}

func appendJournalMessage(dst []byte, m *Message) []byte {
	bodyLen := journalMessageFixed + m.Size()
	start := len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(bodyLen))
	dst = binary.LittleEndian.AppendUint32(dst, 0) // checksum, below
	dst = append(dst, recordKindMessage)
	dst = binary.LittleEndian.AppendUint64(dst, m.Seq)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(m.Deadline))
	for i := range 4 {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(m.wireFrame(i))))
	}
	for i := range 4 {
		dst = append(dst, m.wireFrame(i)...)
	}
	binary.LittleEndian.PutUint32(dst[start+4:], crc32.Checksum(dst[start+8:], crcTable))
	return dst
}

func appendJournalWatermark(dst []byte, done uint64) []byte {
	start := len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, journalWatermarkLen)
	dst = binary.LittleEndian.AppendUint32(dst, 0)
	dst = append(dst, recordKindWatermark)
	dst = binary.LittleEndian.AppendUint64(dst, done)
	binary.LittleEndian.PutUint32(dst[start+4:], crc32.Checksum(dst[start+8:], crcTable))
	return dst
}

// Handed records that the message of sequence seq left the outbox for
// good: written to a listener's socket, or dropped by the outbox's
// bounds. Any goroutine.
func (j *Journal) Handed(seq uint64) {
	if seq == 0 {
		return
	}
	j.handedMu.Lock()
	j.handed.mark(seq)
	j.handedMu.Unlock()
}

// Commit writes what Add encoded since the last Commit, and the
// watermark if it moved; with sync it also fsyncs the message records
// (appendfsync always). The AOF's flusher calls it before writing each
// batch, so that every message added before a DEL was appended reaches
// the file (and the disk, with sync) before that DEL does. On error the
// records are kept for the next Commit.
func (j *Journal) Commit(sync bool) error {
	j.fileMu.Lock()
	defer j.fileMu.Unlock()
	if j.closed {
		return nil
	}
	j.mu.Lock()
	buf, last := j.pending, j.lastSeq
	j.pending = j.spare[:0]
	j.spare = nil
	j.mu.Unlock()
	hasMessages := len(buf) > 0
	j.handedMu.Lock()
	done := j.handed.done
	j.handedMu.Unlock()
	if done > j.doneWritten {
		buf = appendJournalWatermark(buf, done)
	}
	if len(buf) > 0 {
		n, err := j.cur.Write(buf)
		j.curSize += int64(n)
		if err != nil {
			if n > 0 {
				// Cut what was written of a partial record, so that the
				// records written again follow whole ones.
				if terr := j.cur.Truncate(j.curSize - int64(n)); terr == nil {
					j.curSize -= int64(n)
				} else {
					buf = buf[n:]
				}
			}
			j.requeue(buf)
			j.failed = err
			return fmt.Errorf("expiry journal: %w", err)
		}
		if hasMessages {
			j.unsynced = true
			j.curLast = last
		}
		j.doneWritten = max(j.doneWritten, done)
	}
	if sync && j.unsynced {
		if err := j.cur.Sync(); err != nil {
			j.failed = err
			return fmt.Errorf("expiry journal: fsync: %w", err)
		}
		j.unsynced = false
	}
	j.failed = nil
	if cap(buf) <= journalMaxSpare {
		j.mu.Lock()
		if j.spare == nil {
			j.spare = buf[:0]
		}
		j.mu.Unlock()
	}
	if j.curSize >= journalSegmentBytes {
		if err := j.rotate(); err != nil {
			// The records are safe in the current segment, which stays
			// the one written to: the next commit tries again.
			j.logf("Expiry journal: starting a new segment: %v", err)
		}
	}
	j.deleteHandedSegments()
	return nil
}

// requeue puts records that were not written back in front of those Add
// encoded meanwhile. Under fileMu.
func (j *Journal) requeue(buf []byte) {
	j.mu.Lock()
	j.pending = append(buf, j.pending...)
	j.mu.Unlock()
}

// rotate fsyncs the current segment and starts the next; the old one is
// closed only once the new one exists, so a failure leaves the journal
// writing where it was. Under fileMu.
func (j *Journal) rotate() error {
	if err := j.cur.Sync(); err != nil {
		return fmt.Errorf("fsync: %w", err)
	}
	j.unsynced = false
	old, oldNum, oldLast := j.cur, j.curNum, j.curLast
	j.curNum++
	if err := j.startSegment(); err != nil {
		j.curNum--
		return err
	}
	j.syncing.Wait() // a background fsync of the old segment
	old.Close()
	j.segments = append(j.segments, journalSegment{num: oldNum, last: oldLast})
	return nil
}

// deleteHandedSegments deletes the closed segments whose messages were
// all handed. Under fileMu, or before the journal is shared.
func (j *Journal) deleteHandedSegments() {
	keep := j.segments[:0]
	for _, s := range j.segments {
		if s.last <= j.doneWritten {
			if err := os.Remove(j.segmentPath(s.num)); err != nil && !errors.Is(err, os.ErrNotExist) {
				j.logf("Expiry journal: deleting %s: %v", j.segmentPath(s.num), err)
				keep = append(keep, s)
			}
			continue
		}
		keep = append(keep, s)
	}
	j.segments = keep
}

// Sync fsyncs the message records Commit wrote: appendfsync everysec's
// background fsync calls it before the AOF's own. The fsync runs
// without fileMu, so Commits go on meanwhile.
func (j *Journal) Sync() error {
	j.fileMu.Lock()
	if j.closed || !j.unsynced {
		j.fileMu.Unlock()
		return nil
	}
	f := j.cur
	j.unsynced = false
	j.syncing.Add(1)
	j.fileMu.Unlock()
	err := f.Sync()
	// Done before fileMu is taken again: rotate and Close wait for it
	// holding fileMu.
	j.syncing.Done()
	if err != nil {
		j.fileMu.Lock()
		if j.cur == f {
			j.unsynced = true
		}
		j.fileMu.Unlock()
		return fmt.Errorf("expiry journal: fsync: %w", err)
	}
	return nil
}

// Pending reports how many messages the journal holds that were not yet
// handed (the last sequence given minus the watermark).
func (j *Journal) Pending() uint64 {
	j.mu.Lock()
	last := j.lastSeq
	j.mu.Unlock()
	j.handedMu.Lock()
	defer j.handedMu.Unlock()
	return last - min(last, j.handed.done)
}

// Close commits and fsyncs what was added and closes the files. Later
// calls do nothing.
func (j *Journal) Close() error {
	err := j.Commit(true)
	j.fileMu.Lock()
	defer j.fileMu.Unlock()
	if j.closed {
		return err
	}
	j.closed = true
	j.syncing.Wait()
	if cerr := j.cur.Close(); err == nil {
		err = cerr
	}
	return err
}

// watermark is the highest sequence below which every message was
// handed, and the handed sequences above it (a bit per sequence, in
// words of 64) until the gaps below them close. Messages leave the
// outbox nearly in order, so the words stay few.
type watermark struct {
	done  uint64
	above map[uint64]uint64
}

func (w *watermark) mark(seq uint64) {
	if seq <= w.done {
		return
	}
	if seq != w.done+1 {
		if w.above == nil {
			w.above = map[uint64]uint64{}
		}
		w.above[seq>>6] |= 1 << (seq & 63)
		return
	}
	w.done = seq
	for len(w.above) > 0 {
		next := w.done + 1
		word, bit := w.above[next>>6], uint64(1)<<(next&63)
		if word&bit == 0 {
			return
		}
		if word &^= bit; word == 0 {
			delete(w.above, next>>6)
		} else {
			w.above[next>>6] = word
		}
		w.done = next
	}
}
