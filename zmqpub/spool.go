package zmqpub

// The spool file: where the outbox keeps, in order, the messages that do
// not fit in memory, and where Close leaves everything undelivered for the
// next run.
//
// Format (all integers little-endian, whatever the host):
//
//	header, 32 bytes:
//	  0  [8]byte  magic "zrspool\x00"
//	  8  uint32   version (2)
//	  12 uint32   flags (0)
//	  16 uint64   head: offset of the first record not yet read back
//	  24 uint32   CRC-32C of bytes 16..23 (head)
//	  28 uint32   zero
//	records, appended one after another from the end of the header:
//	  0  uint32   body length B (>= 32)
//	  4  uint32   CRC-32C of the body
//	  8  body:    int64 deadline, uint64 journal sequence (0: none),
//	              uint32 len1, len2, len3, len4, then frame 1, frame 2,
//	              frame 3 and the message id (len4 0: none)
//	              (len1+len2+len3+len4 = B-32)
//
// Version 1 records had neither the sequence nor the id (body: int64
// deadline, three lengths, three frames). A version 1 file that still
// holds records is converted to version 2 when it is opened.
//
// Records are only appended at the tail and read from the head into
// memory. The head is rewritten in place (no fsync) after every batch
// read; Close puts memory back in front of the head and fsyncs. So a
// clean stop loses nothing; a process crash loses what memory held (as
// it would with no spool); a machine crash may also resend batches read
// since the page cache last reached the disk, or lose records appended
// since then. When every record has been read the file is truncated back
// to its header.
//
// Opening a spool scans it from the head: a record cut short by the end
// of the file, or whose checksum fails when it ends exactly at the end of
// the file, is a torn last write (a crash while appending) and is dropped
// with a log line; any other bad record is corruption and stops the
// replay there, with a log line saying how many bytes were discarded. The
// file is truncated at the last good record so that new records follow
// readable ones. No length read from the file is trusted beyond what the
// file holds: nothing is allocated from a length before it is checked
// against the bytes that remain.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
)

const (
	spoolMagic        = "zrspool\x00"
	spoolVersion      = 2
	spoolHeaderSize   = 32
	spoolHeadOffset   = 16 // where the head field sits in the header
	recordPrefixSize  = 8  // body length + checksum
	recordFixedBody   = 32 // deadline, sequence, four frame lengths
	recordOverhead    = recordPrefixSize + recordFixedBody
	spoolReadChunk    = 1 << 20 // bytes read per ReadAt when refilling
	spoolWriteBufSize = 256 << 10
)

// spoolCompactAtHead is the delivered prefix that makes compacting the
// file worth its copy (a variable so that tests can lower it).
var spoolCompactAtHead int64 = 64 << 20

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// recordLayout is where a version's record body keeps its fields.
type recordLayout struct {
	fixed  int // bytes before the frames
	seqAt  int // offset of the sequence; < 0: none
	lensAt int // offset of the first frame length
	nlens  int // frame lengths: 3, or 4 with the id
}

var (
	layoutV1 = recordLayout{fixed: 20, seqAt: -1, lensAt: 8, nlens: 3}
	layoutV2 = recordLayout{fixed: recordFixedBody, seqAt: 8, lensAt: 16, nlens: 4}
)

// frameBytes sums the frame lengths of a record body's fixed part.
func (l recordLayout) frameBytes(fixed []byte) int64 {
	var n int64
	for i := 0; i < l.nlens; i++ {
		n += int64(binary.LittleEndian.Uint32(fixed[l.lensAt+4*i:]))
	}
	return n
}

// spoolFile is the spool on disk. It is not safe for concurrent use: the
// outbox's spool goroutine owns it while the outbox runs, and Close uses
// it only after that goroutine has stopped.
type spoolFile struct {
	path   string
	file   *os.File
	writer *bufio.Writer // appends at tail; flushed after every batch
	head   int64         // offset of the first unread record
	tail   int64         // offset just past the last record (buffered ones included)
	unread int64         // records between head and tail
	logf   func(format string, args ...any)
	chunk  []byte // read buffer, reused across refills
	layout recordLayout
	// compactAt is the delivered prefix, in bytes, past which the file
	// is compacted once it also exceeds what remains unread.
	compactAt int64
}

// openSpool opens (or creates) the spool at path and scans what a previous
// run left there. It returns the spool and the count and frame bytes of
// the messages it holds. A file that is not a spool is an error, never
// overwritten.
func openSpool(path string, logf func(string, ...any)) (*spoolFile, int64, int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("spool: %w", err)
	}
	s := &spoolFile{path: path, file: f, logf: logf, compactAt: spoolCompactAtHead, layout: layoutV2}
	count, bytes, err := s.load()
	if err != nil {
		f.Close()
		return nil, 0, 0, err
	}
	s.writer = bufio.NewWriterSize(offsetWriter{s}, spoolWriteBufSize)
	return s, count, bytes, nil
}

// load reads the header and scans the records, truncating after the last
// good one.
func (s *spoolFile) load() (int64, int64, error) {
	info, err := s.file.Stat()
	if err != nil {
		return 0, 0, fmt.Errorf("spool: %w", err)
	}
	size := info.Size()
	var hdr [spoolHeaderSize]byte
	n, err := s.file.ReadAt(hdr[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, 0, fmt.Errorf("spool %s: %w", s.path, err)
	}
	magicLen := min(n, len(spoolMagic))
	if string(hdr[:magicLen]) != spoolMagic[:magicLen] {
		return 0, 0, fmt.Errorf("spool %s: not a spool file (bad magic)", s.path)
	}
	if n < spoolHeaderSize {
		// Empty, or a crash while the header was first written.
		if n > 0 {
			s.logf("zmq outbox: spool %s: torn header (%d bytes), starting empty", s.path, n)
		}
		return 0, 0, s.reset()
	}
	switch v := binary.LittleEndian.Uint32(hdr[8:]); v {
	case spoolVersion:
	case 1:
		s.layout = layoutV1
	default:
		return 0, 0, fmt.Errorf("spool %s: unsupported version %d", s.path, v)
	}
	head := int64(binary.LittleEndian.Uint64(hdr[spoolHeadOffset:]))
	if crc32.Checksum(hdr[spoolHeadOffset:spoolHeadOffset+8], crcTable) != binary.LittleEndian.Uint32(hdr[24:]) ||
		head < spoolHeaderSize || head > size {
		// Resending is better than losing: start from the first record.
		s.logf("zmq outbox: spool %s: bad head offset, replaying from the first record", s.path)
		head = spoolHeaderSize
	}
	count, bytes, end := s.scan(head, size)
	if end < size {
		if err := s.file.Truncate(end); err != nil {
			return 0, 0, fmt.Errorf("spool %s: %w", s.path, err)
		}
	}
	s.head, s.tail, s.unread = head, end, count
	if count == 0 {
		s.layout = layoutV2
		return 0, 0, s.reset()
	}
	if s.layout != layoutV2 {
		if err := s.upgrade(); err != nil {
			return 0, 0, err
		}
	}
	return count, bytes, nil
}

// scan checks the records from off to size and returns their count, frame
// bytes and the offset just past the last good one. The checksum is
// computed while streaming, so a large claimed length costs reading, not
// allocating.
func (s *spoolFile) scan(off, size int64) (count, bytes, end int64) {
	r := bufio.NewReaderSize(io.NewSectionReader(s.file, off, size-off), 64<<10)
	overhead := int64(recordPrefixSize + s.layout.fixed)
	fixed := make([]byte, overhead)
	hasher := crc32.New(crcTable)
	for off < size {
		left := size - off
		if left < overhead {
			s.logf("zmq outbox: spool %s: torn last record at offset %d (%d bytes), ignored", s.path, off, left)
			return count, bytes, off
		}
		if _, err := io.ReadFull(r, fixed); err != nil {
			s.logf("zmq outbox: spool %s: read at offset %d: %v; replay stops there", s.path, off, err)
			return count, bytes, off
		}
		bodyLen := int64(binary.LittleEndian.Uint32(fixed[0:]))
		sum := binary.LittleEndian.Uint32(fixed[4:])
		frames := s.layout.frameBytes(fixed[recordPrefixSize:])
		if bodyLen < int64(s.layout.fixed) {
			s.corrupt(off, size, "body length too small")
			return count, bytes, off
		}
		if recordPrefixSize+bodyLen > left {
			s.logf("zmq outbox: spool %s: torn last record at offset %d (claims %d bytes, %d left), ignored",
				s.path, off, recordPrefixSize+bodyLen, left)
			return count, bytes, off
		}
		hasher.Reset()
		hasher.Write(fixed[recordPrefixSize:])
		if _, err := io.CopyN(hasher, r, bodyLen-int64(s.layout.fixed)); err != nil {
			s.logf("zmq outbox: spool %s: read at offset %d: %v; replay stops there", s.path, off, err)
			return count, bytes, off
		}
		if hasher.Sum32() != sum {
			if off+recordPrefixSize+bodyLen == size {
				s.logf("zmq outbox: spool %s: torn last record at offset %d (checksum), ignored", s.path, off)
			} else {
				s.corrupt(off, size, "checksum mismatch")
			}
			return count, bytes, off
		}
		if frames != bodyLen-int64(s.layout.fixed) {
			s.corrupt(off, size, "frame lengths do not add up")
			return count, bytes, off
		}
		count++
		bytes += frames
		off += recordPrefixSize + bodyLen
	}
	return count, bytes, off
}

func (s *spoolFile) corrupt(off, size int64, why string) {
	s.logf("zmq outbox: spool %s: corrupt record at offset %d (%s); replay stops there, %d bytes discarded",
		s.path, off, why, size-off)
}

// reset empties the spool: header only, head at the first record.
func (s *spoolFile) reset() error {
	if s.writer != nil {
		s.writer.Reset(offsetWriter{s})
	}
	if err := s.file.Truncate(0); err != nil {
		return fmt.Errorf("spool %s: %w", s.path, err)
	}
	if _, err := s.file.WriteAt(spoolHeader(spoolHeaderSize), 0); err != nil {
		return fmt.Errorf("spool %s: %w", s.path, err)
	}
	s.head, s.tail, s.unread = spoolHeaderSize, spoolHeaderSize, 0
	return nil
}

func spoolHeader(head int64) []byte {
	hdr := make([]byte, spoolHeaderSize)
	copy(hdr, spoolMagic)
	binary.LittleEndian.PutUint32(hdr[8:], spoolVersion)
	binary.LittleEndian.PutUint64(hdr[spoolHeadOffset:], uint64(head))
	binary.LittleEndian.PutUint32(hdr[24:], crc32.Checksum(hdr[spoolHeadOffset:spoolHeadOffset+8], crcTable))
	return hdr
}

// offsetWriter appends at the spool's tail with positioned writes, so the
// file's own offset never matters.
type offsetWriter struct{ s *spoolFile }

func (w offsetWriter) Write(p []byte) (int, error) {
	n, err := w.s.file.WriteAt(p, w.s.tail)
	w.s.tail += int64(n)
	return n, err
}

// maxRecordFrameBytes is the largest message a record can hold: its body
// length must fit in 32 bits.
const maxRecordFrameBytes = 1<<32 - 1 - recordFixedBody

var errRecordTooLarge = errors.New("message too large for a spool record")

// appendRecord encodes m at the tail (buffered: it reaches the file at
// the next flush or when the buffer fills).
func appendRecord(w *bufio.Writer, m *Message) error {
	if int64(m.Size()) > maxRecordFrameBytes {
		return errRecordTooLarge
	}
	var fixed [recordOverhead]byte
	bodyLen := recordFixedBody + m.Size()
	binary.LittleEndian.PutUint32(fixed[0:], uint32(bodyLen))
	binary.LittleEndian.PutUint64(fixed[8:], uint64(m.Deadline))
	binary.LittleEndian.PutUint64(fixed[16:], m.Seq)
	parts := [4][]byte{m.Frames[0], m.Frames[1], m.Frames[2], m.ID}
	for i, f := range parts {
		binary.LittleEndian.PutUint32(fixed[24+4*i:], uint32(len(f)))
	}
	sum := crc32.Update(0, crcTable, fixed[recordPrefixSize:])
	for _, f := range parts {
		sum = crc32.Update(sum, crcTable, f)
	}
	binary.LittleEndian.PutUint32(fixed[4:], sum)
	if _, err := w.Write(fixed[:]); err != nil {
		return err
	}
	for _, f := range parts {
		if _, err := w.Write(f); err != nil {
			return err
		}
	}
	return nil
}

// appendBatch writes the messages of chunks, skipping the first skip, at
// the tail and flushes them to the file (no fsync). On error the file is
// cut back to the last whole record and none of them counts as written.
func (s *spoolFile) appendBatch(chunks [][]Message, skip int) error {
	start := s.tail
	written := int64(0)
	for _, c := range chunks {
		for i := range c {
			if skip > 0 {
				skip--
				continue
			}
			if err := appendRecord(s.writer, &c[i]); err != nil {
				return s.abortAppend(start, err)
			}
			written++
		}
	}
	if err := s.writer.Flush(); err != nil {
		return s.abortAppend(start, err)
	}
	s.unread += written
	return nil
}

// abortAppend undoes a batch that failed part-way, so the file never holds
// a partial record followed by good ones.
func (s *spoolFile) abortAppend(start int64, err error) error {
	s.writer.Reset(offsetWriter{s})
	s.tail = start
	if terr := s.file.Truncate(start); terr != nil {
		err = errors.Join(err, terr)
	}
	return fmt.Errorf("spool %s: %w", s.path, err)
}

// readBatch takes up to maxMsgs records from the head, stopping before the
// frame bytes would pass maxBytes; with atLeastOne it takes the first
// record whatever its size (so a message larger than the memory bound
// still moves). It advances the head and records it in the header (no
// fsync). The writer must have been flushed.
func (s *spoolFile) readBatch(maxMsgs int, maxBytes int64, atLeastOne bool) ([]Message, int64, error) {
	out := make([]Message, 0, min(int64(maxMsgs), s.unread))
	var total int64
	if s.chunk == nil {
		s.chunk = make([]byte, spoolReadChunk)
	}
	for len(out) < maxMsgs && s.unread > 0 {
		// Read no more than the budget can use; a first record larger
		// than that is read whole below.
		overhead := int64(recordPrefixSize + s.layout.fixed)
		want := max(overhead, maxBytes-total+int64(maxMsgs-len(out))*overhead)
		n, err := s.file.ReadAt(s.chunk[:min(int64(len(s.chunk)), s.tail-s.head, want)], s.head)
		if err != nil && !(errors.Is(err, io.EOF) && n > 0) {
			return out, total, s.failRead(err)
		}
		buf := s.chunk[:n]
		progressed := false
		for len(out) < maxMsgs && s.unread > 0 {
			if int64(len(buf)) < overhead {
				if !progressed {
					return out, total, s.failRead(errors.New("record shorter than its header"))
				}
				break // re-read from this record's start
			}
			bodyLen := int64(binary.LittleEndian.Uint32(buf[0:]))
			if bodyLen < int64(s.layout.fixed) || recordPrefixSize+bodyLen > s.tail-s.head {
				return out, total, s.failRead(errors.New("bad record length"))
			}
			frameBytes := bodyLen - int64(s.layout.fixed)
			if total+frameBytes > maxBytes && (len(out) > 0 || !atLeastOne) {
				s.persistHead()
				return out, total, nil
			}
			rec, owned := buf, false
			if int64(len(buf)) < recordPrefixSize+bodyLen {
				if progressed {
					break // re-read from this record's start
				}
				// A record larger than the chunk: read it whole. Its size
				// was checked against the file above.
				rec, owned = make([]byte, recordPrefixSize+bodyLen), true
				if _, err := s.file.ReadAt(rec, s.head); err != nil {
					return out, total, s.failRead(err)
				}
			}
			m, err := decodeRecord(rec[:recordPrefixSize+bodyLen], owned, s.layout)
			if err != nil {
				return out, total, s.failRead(err)
			}
			out = append(out, m)
			total += frameBytes
			s.head += recordPrefixSize + bodyLen
			s.unread--
			progressed = true
			if int64(len(buf)) >= recordPrefixSize+bodyLen {
				buf = buf[recordPrefixSize+bodyLen:]
			} else {
				buf = nil
			}
		}
	}
	s.persistHead()
	return out, total, nil
}

// decodeRecord checks one whole record. Its frames point into rec when
// the caller hands rec over (owned), else into one new copy.
func decodeRecord(rec []byte, owned bool, layout recordLayout) (Message, error) {
	body := rec[recordPrefixSize:]
	if crc32.Checksum(body, crcTable) != binary.LittleEndian.Uint32(rec[4:]) {
		return Message{}, errors.New("checksum mismatch")
	}
	var m Message
	m.Deadline = int64(binary.LittleEndian.Uint64(body[0:]))
	if layout.seqAt >= 0 {
		m.Seq = binary.LittleEndian.Uint64(body[layout.seqAt:])
	}
	data := body[layout.fixed:]
	if layout.frameBytes(body) != int64(len(data)) {
		return Message{}, errors.New("frame lengths do not add up")
	}
	own := data
	if !owned {
		own = make([]byte, len(data))
		copy(own, data)
	}
	for i := 0; i < layout.nlens; i++ {
		l := int(binary.LittleEndian.Uint32(body[layout.lensAt+4*i:]))
		part := own[:l:l]
		own = own[l:]
		if i < 3 {
			m.Frames[i] = part
		} else if l > 0 {
			m.ID = part
		}
	}
	return m, nil
}

// DropJournaledFromSpool removes from the spool at path the messages
// that carry a journal sequence: the expiry journal replays them. It
// returns how many it removed; a missing spool is no error.
func DropJournaledFromSpool(path string, logf func(string, ...any)) (int64, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	s, _, _, err := openSpool(path, logf)
	if err != nil {
		return 0, err
	}
	defer s.close()
	if s.unread == 0 {
		return 0, nil
	}
	dropped, err := s.copyUnread("dropping journaled messages", func(m *Message) bool { return m.Seq == 0 })
	return dropped, err
}

// upgrade converts a version 1 spool holding records to version 2.
func (s *spoolFile) upgrade() error {
	_, err := s.copyUnread(fmt.Sprintf("converting to version %d", spoolVersion), nil)
	return err
}

// copyUnread replaces the file with a version 2 one holding the unread
// messages that keep accepts (nil: all), read batch by batch into a new
// file, fsynced and renamed into place; it returns how many were left
// out. what names the operation in errors.
func (s *spoolFile) copyUnread(what string, keep func(*Message) bool) (int64, error) {
	var kept, left int64
	err := s.replaceFile(func(w *bufio.Writer) error {
		for s.unread > 0 {
			batch, _, err := s.readBatch(refillMaxMsgs, refillMaxBytes, true)
			if err != nil {
				s.logf("zmq outbox: %v", err)
			}
			for i := range batch {
				if keep != nil && !keep(&batch[i]) {
					left++
					continue
				}
				if err := appendRecord(w, &batch[i]); err != nil {
					return err
				}
				kept++
			}
			if err != nil {
				return nil // what was read is kept; the rest is gone (logged)
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("spool %s: %s: %w", s.path, what, err)
	}
	s.unread = kept
	return left, nil
}

// failRead handles a record that fails on the way back (disk corruption
// after the scan): the unread rest cannot be trusted and is discarded.
// The error says so (spoolLossError); the caller counts the loss from
// what it had spooled.
func (s *spoolFile) failRead(err error) error {
	lost := s.unread
	at := s.head
	if rerr := s.reset(); rerr != nil {
		err = errors.Join(err, rerr)
	}
	return &spoolLossError{err: fmt.Errorf("spool %s: record at offset %d: %w; %d messages discarded", s.path, at, err, lost)}
}

// spoolLossError says that messages the spool held are gone.
type spoolLossError struct {
	err error
}

func (e *spoolLossError) Error() string { return e.err.Error() }
func (e *spoolLossError) Unwrap() error { return e.err }

// persistHead records the head in the header (no fsync).
func (s *spoolFile) persistHead() {
	var b [12]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(s.head))
	binary.LittleEndian.PutUint32(b[8:], crc32.Checksum(b[:8], crcTable))
	if _, err := s.file.WriteAt(b[:], spoolHeadOffset); err != nil {
		s.logf("zmq outbox: spool %s: writing head: %v", s.path, err)
	}
}

// consumed reports whether the head has caught up with the tail, in which
// case the caller resets the file.
func (s *spoolFile) consumed() bool { return s.unread == 0 }

// shouldCompact reports whether the delivered prefix is both large and
// larger than what remains, so copying the rest to a fresh file is cheap
// relative to the space it frees.
func (s *spoolFile) shouldCompact() bool {
	dead := s.head - spoolHeaderSize
	return dead >= s.compactAt && dead > s.tail-s.head
}

// rewrite replaces the file with header + front (encoded first) + the
// unread records, via a temporary file, fsync and rename, then fsyncs the
// directory. It is how Close puts memory back in front of the spool, and
// how a mostly-delivered spool is compacted.
func (s *spoolFile) rewrite(front []Message) error {
	if err := s.writer.Flush(); err != nil {
		return fmt.Errorf("spool %s: %w", s.path, err)
	}
	err := s.replaceFile(func(w *bufio.Writer) error {
		for i := range front {
			if err := appendRecord(w, &front[i]); err != nil {
				return err
			}
		}
		_, err := io.Copy(w, io.NewSectionReader(s.file, s.head, s.tail-s.head))
		return err
	})
	if err != nil {
		return fmt.Errorf("spool %s: %w", s.path, err)
	}
	s.unread += int64(len(front))
	return nil
}

// replaceFile puts a new file in the spool's place: the header and what
// fill writes after it go to a temporary file, which is fsynced and
// renamed over the spool, and the directory fsynced. The spool then
// reads the new file from its first record, as version 2.
func (s *spoolFile) replaceFile(fill func(w *bufio.Writer) error) error {
	tmpPath := s.path + ".tmp"
	tmp, err := os.OpenFile(tmpPath, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		tmp.Close()
		os.Remove(tmpPath)
		return err
	}
	w := bufio.NewWriterSize(tmp, spoolWriteBufSize)
	if _, err := w.Write(spoolHeader(spoolHeaderSize)); err != nil {
		return fail(err)
	}
	if err := fill(w); err != nil {
		return fail(err)
	}
	if err := w.Flush(); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	info, err := tmp.Stat()
	if err != nil {
		return fail(err)
	}
	if err := os.Rename(tmpPath, s.path); err != nil {
		return fail(err)
	}
	syncDir(filepath.Dir(s.path))
	s.file.Close()
	s.file, s.layout = tmp, layoutV2
	if s.writer != nil {
		s.writer.Reset(offsetWriter{s})
	}
	s.head, s.tail = spoolHeaderSize, info.Size()
	return nil
}

// sync flushes buffered records and the head, and fsyncs the file.
func (s *spoolFile) sync() error {
	if err := s.writer.Flush(); err != nil {
		return fmt.Errorf("spool %s: %w", s.path, err)
	}
	s.persistHead()
	if err := s.file.Sync(); err != nil {
		return fmt.Errorf("spool %s: %w", s.path, err)
	}
	return nil
}

func (s *spoolFile) close() error {
	return s.file.Close()
}

// syncDir makes a rename in dir durable. Errors are ignored: some file
// systems refuse to fsync a directory, and the rename itself succeeded.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
