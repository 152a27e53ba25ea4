package aof

import (
	"bufio"
	"fmt"
	"io"
)

// fileReader reads an AOF file front to back, keeping the offset of the
// next unread byte and the file's size so that no length read from the file
// is trusted beyond what the file still holds.
type fileReader struct {
	src  io.ReadSeeker
	br   *bufio.Reader
	off  int64 // bytes consumed so far
	size int64 // total bytes in the file
	eof  bool  // a read hit the end of the file (C's feof)
	err  error // a read failed for another reason
}

func newFileReader(r io.ReadSeeker, size int64) *fileReader {
	return &fileReader{src: r, br: bufio.NewReaderSize(r, 64<<10), size: size}
}

func (r *fileReader) note(err error) {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		r.eof = true
	} else if err != nil && r.err == nil {
		r.err = err
	}
}

// fgets reads as C's fgets(buf, size, fp): up to size-1 bytes, or through
// the first '\n'; nil when nothing could be read.
func (r *fileReader) fgets(size int) []byte {
	var line []byte
	for len(line) < size-1 {
		c, err := r.br.ReadByte()
		if err != nil {
			r.note(err)
			break
		}
		r.off++
		line = append(line, c)
		if c == '\n' {
			break
		}
	}
	if len(line) == 0 {
		return nil
	}
	return line
}

// readN reads exactly n bytes. A length beyond the end of the file is a
// short read: the rest of the file is consumed, nothing of size n is
// allocated, and ok is false with eof set.
func (r *fileReader) readN(n int64) (data []byte, ok bool) {
	if n > r.size-r.off {
		skipped, err := r.br.Discard(int(min(r.size-r.off, int64(^uint(0)>>1))))
		r.off += int64(skipped)
		if err != nil {
			r.note(err)
		}
		r.eof = true
		return nil, false
	}
	data = make([]byte, n)
	got, err := io.ReadFull(r.br, data)
	r.off += int64(got)
	if err != nil {
		r.note(err)
		return nil, false
	}
	return data, true
}

// handOff gives the input, positioned at the current offset, to an RDB
// reader, which may read ahead as it likes and returns the size of the RDB
// payload; reading resumes right after the payload.
func (r *fileReader) handOff(read func(io.Reader) (int64, error)) error {
	start := r.off
	if _, err := r.src.Seek(start, io.SeekStart); err != nil {
		return err
	}
	n, err := read(r.src)
	if err != nil {
		return err
	}
	if n < 0 || n > r.size-start {
		return fmt.Errorf("RDB payload of %d bytes at offset %d does not fit in a file of %d bytes", n, start, r.size)
	}
	if _, err := r.src.Seek(start+n, io.SeekStart); err != nil {
		return err
	}
	r.br.Reset(r.src)
	r.off = start + n
	return nil
}
