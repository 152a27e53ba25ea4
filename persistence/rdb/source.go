package rdb

import (
	"errors"
	"io"
	"os"
)

// errTruncated is Redis's message for input that ends too early.
var errTruncated = errors.New("Unexpected EOF reading RDB file")

const (
	sourceBufSize = 64 << 10
	// growStep bounds how much a read of unknown-size input allocates
	// ahead of the bytes that actually arrived.
	growStep = 1 << 20
	// maxEmptyReads is how many reads returning nothing and no error a
	// reader may make in a row before it is taken as stuck (as bufio).
	maxEmptyReads = 100
)

// source is a buffered reader that knows, when it can, how many bytes
// the input still holds, keeps Redis's CRC-64 of the bytes consumed, and
// never allocates for a length it has not seen backed by input: a length
// beyond what a file or byte slice holds fails at once, and on a stream
// a long read grows its buffer only as the bytes arrive.
type source struct {
	r        io.Reader // nil when all the input is in buf
	buf      []byte
	pos      int    // next unread byte of buf
	crcFrom  int    // buf[crcFrom:pos] is consumed but not yet in crc
	crc      uint64 // CRC-64 of the bytes consumed before buf[crcFrom]
	crcOn    bool
	base     int64  // input offset of buf[0]
	left     int64  // input bytes beyond buf, -1 when unknown
	eof      bool   // r has no more bytes
	readErr  error  // a read error other than EOF
	lzfInput []byte // compressed bytes of the LZF string being read
}

// newSource reads r. The remaining size is known for files and for
// in-memory readers (anything with Len).
func newSource(r io.Reader) *source {
	s := &source{r: r, buf: make([]byte, 0, sourceBufSize), left: -1, crcOn: true}
	switch v := r.(type) {
	case *os.File:
		if fi, err := v.Stat(); err == nil && fi.Mode().IsRegular() {
			if off, err := v.Seek(0, io.SeekCurrent); err == nil && off <= fi.Size() {
				s.left = fi.Size() - off
			}
		}
	case interface{ Len() int }:
		s.left = int64(v.Len())
	}
	return s
}

// newBytesSource reads b, which the caller must not change meanwhile.
func newBytesSource(b []byte) *source {
	return &source{buf: b, left: 0, eof: true}
}

// offset is the input offset of the next unread byte.
func (s *source) offset() int64 { return s.base + int64(s.pos) }

// sum returns the CRC-64 of every byte consumed so far.
func (s *source) sum() uint64 {
	s.flushCRC()
	return s.crc
}

func (s *source) flushCRC() {
	if s.crcOn && s.crcFrom < s.pos {
		s.crc = crc64Update(s.crc, s.buf[s.crcFrom:s.pos])
	}
	s.crcFrom = s.pos
}

// avail is the number of buffered unread bytes.
func (s *source) avail() int { return len(s.buf) - s.pos }

// truncatedErr is the error for input that ended early: the read error
// when there was one.
func (s *source) truncatedErr() error {
	if s.readErr != nil {
		return s.readErr
	}
	return errTruncated
}

// fill makes at least n (<= sourceBufSize) bytes available.
func (s *source) fill(n int) error {
	if s.avail() >= n {
		return nil
	}
	if s.r == nil || s.eof {
		return s.truncatedErr()
	}
	s.flushCRC()
	// Move the unread bytes to the front.
	m := copy(s.buf[:cap(s.buf)], s.buf[s.pos:])
	s.base += int64(s.pos)
	s.buf = s.buf[:m]
	s.pos, s.crcFrom = 0, 0
	for empty := 0; len(s.buf) < n; {
		k, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
		if err == nil && k == 0 {
			if empty++; empty >= maxEmptyReads {
				err = io.ErrNoProgress
			}
		}
		s.buf = s.buf[:len(s.buf)+k]
		if s.left >= 0 {
			s.left = max(s.left-int64(k), 0)
		}
		if err != nil {
			s.eof = true
			if err != io.EOF {
				s.readErr = err
			}
			if len(s.buf) < n {
				return s.truncatedErr()
			}
			break
		}
	}
	return nil
}

func (s *source) readByte() (byte, error) {
	if s.pos >= len(s.buf) {
		if err := s.fill(1); err != nil {
			return 0, err
		}
	}
	c := s.buf[s.pos]
	s.pos++
	return c, nil
}

// peek returns the next n (<= sourceBufSize) bytes without consuming
// them; the view is valid until the next read.
func (s *source) peek(n int) ([]byte, error) {
	if err := s.fill(n); err != nil {
		return nil, err
	}
	return s.buf[s.pos : s.pos+n], nil
}

// next consumes n (<= sourceBufSize) bytes and returns a view of them,
// valid until the next read.
func (s *source) next(n int) ([]byte, error) {
	b, err := s.peek(n)
	if err != nil {
		return nil, err
	}
	s.pos += n
	return b, nil
}

// fits reports whether the input may still hold n more bytes.
func (s *source) fits(n uint64) bool {
	if s.left < 0 {
		return true
	}
	return n <= uint64(s.avail())+uint64(s.left)
}

// appendN consumes n bytes and appends them to dst.
func (s *source) appendN(dst []byte, n uint64) ([]byte, error) {
	if !s.fits(n) {
		return dst, s.truncatedErr()
	}
	if n <= uint64(s.avail()) {
		dst = append(dst, s.buf[s.pos:s.pos+int(n)]...)
		s.pos += int(n)
		return dst, nil
	}
	if n > 1<<62 {
		return dst, s.truncatedErr()
	}
	// A long read: take what is buffered, then read straight into dst.
	s.flushCRC()
	start := len(dst)
	want := start + int(n)
	if s.left >= 0 || n <= growStep {
		dst = growCap(dst, int(n))
	}
	dst = append(dst, s.buf[s.pos:]...)
	s.pos = len(s.buf)
	s.flushCRC()
	for empty := 0; len(dst) < want; {
		if s.r == nil || s.eof {
			return dst[:start], s.truncatedErr()
		}
		if cap(dst) == len(dst) {
			dst = growCap(dst, min(want-len(dst), max(len(dst)-start, growStep)))
		}
		room := dst[len(dst):min(cap(dst), want)]
		k, err := s.r.Read(room)
		if err == nil && k == 0 {
			if empty++; empty >= maxEmptyReads {
				err = io.ErrNoProgress
			}
		}
		if k > 0 && s.crcOn {
			s.crc = crc64Update(s.crc, room[:k])
		}
		dst = dst[:len(dst)+k]
		s.base += int64(k)
		if s.left >= 0 {
			s.left = max(s.left-int64(k), 0)
		}
		if err != nil {
			s.eof = true
			if err != io.EOF {
				s.readErr = err
			}
		}
	}
	// base counted the direct reads; buf is empty and positioned after them.
	s.base += int64(len(s.buf))
	s.buf = s.buf[:0]
	s.pos, s.crcFrom = 0, 0
	return dst, nil
}

// growCap returns dst with room for at least n more bytes.
func growCap(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst
	}
	nb := make([]byte, len(dst), len(dst)+n)
	copy(nb, dst)
	return nb
}
