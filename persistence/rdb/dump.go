package rdb

import (
	"encoding/binary"
	"errors"

	"github.com/zredis/zredis/keyspace"
)

// RESTORE's errors, with Redis's texts (the reply adds "ERR ").
var (
	ErrDumpPayload   = errors.New("DUMP payload version or checksum are wrong")
	ErrBadDataFormat = errors.New("Bad data format")
)

// Dump serializes a value as DUMP does: its RDB type and value (strings
// LZF-compressed when that saves space, as with rdbcompression yes), the
// RDB version as 2 bytes little-endian, and the CRC-64 of all that as 8
// bytes little-endian. The deadline is not part of a payload.
func Dump(e *keyspace.Entry) []byte {
	enc := encoder{compress: true}
	enc.buf = append(enc.buf, typeOf(e))
	enc.writeObject(e)
	enc.buf = binary.LittleEndian.AppendUint16(enc.buf, Version)
	return binary.LittleEndian.AppendUint64(enc.buf, CRC64(enc.buf))
}

// Restore decodes a DUMP payload into a new entry without deadline.
// A payload shorter than its footer, of a newer RDB version or with a
// wrong checksum gives ErrDumpPayload; a value that does not decode, or
// one without elements, gives ErrBadDataFormat, as Redis replies.
func Restore(payload []byte, opt LoadOptions) (*keyspace.Entry, error) {
	n := len(payload)
	if n < 10 {
		return nil, ErrDumpPayload
	}
	footer := payload[n-10:]
	if binary.LittleEndian.Uint16(footer) > Version {
		return nil, ErrDumpPayload
	}
	if binary.LittleEndian.Uint64(footer[2:]) != CRC64(payload[:n-8]) {
		return nil, ErrDumpPayload
	}
	d := &decoder{src: newBytesSource(payload[:n-10]), opt: opt}
	t, err := d.src.readByte()
	if err != nil || !isObjectType(t) {
		return nil, ErrBadDataFormat
	}
	obj, str, err := d.readObject(t)
	if err != nil {
		return nil, ErrBadDataFormat
	}
	if obj != nil {
		return keyspace.NewObject(obj, 0), nil
	}
	return keyspace.NewString(str, 0), nil
}

// isObjectType is rdbIsObjectType of Redis 7.0.
func isObjectType(t byte) bool { return t <= 7 || (t >= 9 && t <= 19) }
