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
// bytes little-endian. The deadline is not part of a payload. The
// version is 10, Redis 7.0's, but for a hash with field TTLs: 12, and
// the hash in Redis 7.4's form, as 7.4 dumps it.
func Dump(e *keyspace.Entry) []byte {
	enc := encoder{compress: true}
	enc.buf = append(enc.buf, typeOf(e))
	enc.writeObject(e)
	version := uint16(Version)
	if HasFieldTTLs(e) {
		version = VersionFieldTTLs
	}
	enc.buf = binary.LittleEndian.AppendUint16(enc.buf, version)
	return binary.LittleEndian.AppendUint64(enc.buf, CRC64(enc.buf))
}

// Restore decodes a DUMP payload into a new entry without deadline.
// A payload shorter than its footer, of an RDB version newer than 12 or
// with a wrong checksum gives ErrDumpPayload; a value that does not
// decode, or one without elements, gives ErrBadDataFormat, as Redis
// replies. A hash keeps its field TTLs, past or not.
func Restore(payload []byte, opt LoadOptions) (*keyspace.Entry, error) {
	if !footerOK(payload, opt.SkipChecksum) {
		return nil, ErrDumpPayload
	}
	d := &decoder{src: newBytesSource(payload[:len(payload)-10]), opt: opt}
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

// footerOK is verifyDumpPayload: a payload ends with an RDB version this
// server reads (up to 12, Redis 7.4's) and the CRC-64 of what precedes
// the CRC, which is not verified when skipCRC is set
// (skip_checksum_validation).
func footerOK(payload []byte, skipCRC bool) bool {
	n := len(payload)
	if n < 10 {
		return false
	}
	footer := payload[n-10:]
	if binary.LittleEndian.Uint16(footer) > MaxVersion {
		return false
	}
	return skipCRC || binary.LittleEndian.Uint64(footer[2:]) == CRC64(payload[:n-8])
}

// isObjectType is rdbIsObjectType of Redis 7.4.
func isObjectType(t byte) bool { return t <= 7 || (t >= 9 && t <= 25) }

// Errors of FUNCTION RESTORE, with Redis's texts (the reply adds "ERR ").
var (
	ErrFunctionType = errors.New("given type is not a function")
	ErrFunctionRead = errors.New("failed loading the given functions payload")
	ErrDataType     = errors.New("can not read data type")
)

// DumpFunctions serializes libraries as FUNCTION DUMP does: a FUNCTION2
// record for each library's code, then the RDB version and the CRC-64,
// as a DUMP payload ends.
func DumpFunctions(codes []string) []byte {
	enc := encoder{compress: true}
	for _, code := range codes {
		enc.buf = append(enc.buf, opFunction2)
		enc.writeStringFromString(code)
	}
	enc.buf = binary.LittleEndian.AppendUint16(enc.buf, Version)
	return binary.LittleEndian.AppendUint64(enc.buf, CRC64(enc.buf))
}

// RestoreFunctions decodes a FUNCTION DUMP payload into the libraries'
// codes: ErrDumpPayload for a bad footer (as Restore), ErrFunctionType
// for a record other than a function, ErrFunctionRead for one that does
// not decode. The CRC-64 is not verified with skipCRC (DEBUG
// SET-SKIP-CHECKSUM-VALIDATION 1).
func RestoreFunctions(payload []byte, skipCRC bool) ([]string, error) {
	if !footerOK(payload, skipCRC) {
		return nil, ErrDumpPayload
	}
	n := len(payload)
	d := &decoder{src: newBytesSource(payload[:n-10])}
	var codes []string
	for d.src.offset() < int64(n-10) {
		t, err := d.src.readByte()
		if err != nil {
			return nil, ErrDataType
		}
		var code string
		switch t {
		case opFunction2:
			b, err := d.readString(nil)
			if err != nil {
				return nil, ErrFunctionRead
			}
			code = string(b)
		case opFunction:
			if code, err = d.readOldFunction(); err != nil {
				return nil, ErrFunctionRead
			}
		default:
			return nil, ErrFunctionType
		}
		codes = append(codes, code)
	}
	return codes, nil
}
