package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/zredis/zredis/keyspace"
)

// RedisVersion is the redis-ver aux field of the files we write: the
// version whose behaviour zredis reproduces.
const RedisVersion = "7.0.15"

// WriterOptions are the settings of a file.
type WriterOptions struct {
	// Compress LZF-compresses strings longer than 20 bytes when that
	// saves space (rdbcompression).
	Compress bool
	// Checksum ends the file with its CRC-64 (rdbchecksum); without it
	// the file ends with 8 zero bytes, which loaders accept unchecked.
	Checksum bool
	// UsedMem is the used-mem aux field (bytes of memory in use).
	UsedMem int64
	// AOFBase marks the file as the RDB preamble of an AOF base file
	// (the aof-base aux field is 1).
	AOFBase bool
	// Aux are extra aux fields (such as repl-stream-db, repl-id,
	// repl-offset), written after ctime and used-mem.
	Aux [][2]string
	// FieldTTLs writes the file as version 12, Redis 7.4's, which holds
	// hashes with field TTLs (HasFieldTTLs); without it the file is of
	// version 10, which Redis 7.0 reads, and WriteEntry refuses such a
	// hash (ErrFieldTTLs).
	FieldTTLs bool
}

// ErrFieldTTLs is WriteEntry's error for a hash with field TTLs in a file
// of version 10 (opened without WriterOptions.FieldTTLs).
var ErrFieldTTLs = errors.New("rdb: a hash with field TTLs needs RDB version 12 (WriterOptions.FieldTTLs)")

// flushAt is the buffered size from which a Writer hands its bytes to
// the underlying writer.
const flushAt = 64 << 10

// Writer writes an RDB file of version 10, as redis-server 7.0 does
// (12, as 7.4 does, with WriterOptions.FieldTTLs): the header and aux
// fields, then for each database SELECTDB, RESIZEDB and its keys, then
// EOF and the checksum. It is not safe for concurrent use.
type Writer struct {
	w         io.Writer
	enc       encoder
	crc       uint64
	checksum  bool
	fieldTTLs bool
	err       error
	closed    bool
}

// NewWriter writes the header and the aux fields Redis 7.0 writes
// (redis-ver, redis-bits, ctime, used-mem, then opt.Aux, then aof-base)
// to w.
func NewWriter(w io.Writer, opt WriterOptions) (*Writer, error) {
	wr := &Writer{w: w, checksum: opt.Checksum, fieldTTLs: opt.FieldTTLs}
	wr.enc.compress = opt.Compress
	wr.enc.buf = make([]byte, 0, 2*flushAt)
	version := Version
	if opt.FieldTTLs {
		version = VersionFieldTTLs
	}
	wr.enc.buf = fmt.Appendf(wr.enc.buf, "REDIS%04d", version)
	aux := [][2]string{
		{"redis-ver", RedisVersion},
		{"redis-bits", "64"},
		{"ctime", strconv.FormatInt(time.Now().Unix(), 10)},
		{"used-mem", strconv.FormatInt(opt.UsedMem, 10)},
	}
	aux = append(aux, opt.Aux...)
	aof := "0"
	if opt.AOFBase {
		aof = "1"
	}
	aux = append(aux, [2]string{"aof-base", aof})
	for _, kv := range aux {
		wr.enc.buf = append(wr.enc.buf, opAux)
		wr.enc.writeStringFromString(kv[0])
		wr.enc.writeStringFromString(kv[1])
	}
	return wr, wr.maybeFlush()
}

// WriteFunction writes a library of functions (a FUNCTION2 record
// holding its code), as Redis writes them after the aux fields, before
// the databases.
func (w *Writer) WriteFunction(code string) error {
	if w.err != nil {
		return w.err
	}
	w.enc.buf = append(w.enc.buf, opFunction2)
	w.enc.writeStringFromString(code)
	return w.maybeFlush()
}

// SelectDB starts database db, which holds keys keys of which expires
// have a deadline (RESIZEDB's sizing hints). Redis writes nothing for an
// empty database.
func (w *Writer) SelectDB(db, keys, expires int) error {
	if w.err != nil {
		return w.err
	}
	if db < 0 || keys < 0 || expires < 0 {
		return errors.New("rdb: negative database number or size")
	}
	w.enc.buf = append(w.enc.buf, opSelectDB)
	w.enc.writeLen(uint64(db))
	w.enc.buf = append(w.enc.buf, opResizeDB)
	w.enc.writeLen(uint64(keys))
	w.enc.writeLen(uint64(expires))
	return w.maybeFlush()
}

// WriteEntry writes one key of the current database: its deadline
// (EXPIRETIME_MS) when it has one, then its type, key and value. The
// entry is only read. A hash with field TTLs needs a file of version 12
// (ErrFieldTTLs otherwise).
func (w *Writer) WriteEntry(key string, e *keyspace.Entry) error {
	if w.err != nil {
		return w.err
	}
	if !w.fieldTTLs && HasFieldTTLs(e) {
		return fmt.Errorf("%w: key %q", ErrFieldTTLs, key)
	}
	if o := e.Obj(); o != nil && o.Len() == 0 && o.Type() != keyspace.TypeStream {
		// Redis would skip it, or refuse an empty intset outright. A
		// stream without entries is a value (its IDs and groups).
		return fmt.Errorf("rdb: key %q holds an empty %s", key, e.Type())
	}
	if at := e.ExpireAt(); at != 0 {
		w.enc.buf = append(w.enc.buf, opExpireTimeMS)
		w.enc.buf = binary.LittleEndian.AppendUint64(w.enc.buf, uint64(at))
	}
	w.enc.buf = append(w.enc.buf, typeOf(e))
	w.enc.writeStringFromString(key)
	w.enc.writeObject(e)
	return w.maybeFlush()
}

// Close writes EOF and the checksum and flushes. It does not close the
// underlying writer.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.err != nil {
		return w.err
	}
	w.enc.buf = append(w.enc.buf, opEOF)
	w.sum()
	var sum uint64
	if w.checksum {
		sum = w.crc
	}
	w.enc.buf = binary.LittleEndian.AppendUint64(w.enc.buf, sum)
	return w.flush()
}

func (w *Writer) sum() {
	if w.checksum {
		w.crc = crc64Update(w.crc, w.enc.buf)
	}
}

func (w *Writer) maybeFlush() error {
	if len(w.enc.buf) < flushAt {
		return nil
	}
	w.sum()
	return w.flush()
}

// flush writes the buffer, whose bytes are already in the checksum.
func (w *Writer) flush() error {
	if _, err := w.w.Write(w.enc.buf); err != nil {
		w.err = err
		return err
	}
	if cap(w.enc.buf) > 4*flushAt {
		w.enc.buf = make([]byte, 0, 2*flushAt) // a large value passed
	}
	w.enc.buf = w.enc.buf[:0]
	return nil
}
