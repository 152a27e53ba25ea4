package zmqpub

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrMalformed is the error every Decode failure wraps; the wrapping
// error's text says what is wrong and where.
var ErrMalformed = errors.New("malformed expiry message")

// Decoded is one expiry message taken apart.
//
// Key and every element of Parts alias the frames given to Decode: they
// are valid as long as those frames are and must be copied before the
// frames are reused. Each is capped at its own length, so appending to one
// never overwrites the bytes that follow it in the frame.
type Decoded struct {
	DB    int
	Type  Type
	Key   []byte
	Parts [][]byte // as for Encode: [value], field/value pairs, members, or member/score pairs
}

// Decode takes apart the frames of one expiry message. It checks the frame
// count (3), the header size (4 bytes), the type code, that the key length
// equals what frame 2 holds, that every length in frame 3 lies within the
// frame and nothing follows the last item, and that a hash or sorted set
// carries an even count. A claimed count is checked against the bytes left
// (every item needs at least its 4-byte length) before anything is
// allocated, so memory used is bounded by the frames' size whatever the
// frames claim.
//
// Decode succeeds exactly on the frames Encode produces: for any frames it
// accepts, Encode(d.DB, d.Type, d.Key, d.Parts) returns them byte for byte.
func Decode(frames [][]byte) (Decoded, error) {
	if len(frames) != 3 {
		return Decoded{}, malformed("%d frames, want 3", len(frames))
	}
	header, keyFrame, valueFrame := frames[0], frames[1], frames[2]
	if len(header) != headerLen {
		return Decoded{}, malformed("header frame of %d bytes, want %d", len(header), headerLen)
	}
	d := Decoded{
		DB:   int(binary.NativeEndian.Uint16(header[0:])),
		Type: Type(binary.NativeEndian.Uint16(header[2:])),
	}
	if !d.Type.Known() {
		return Decoded{}, malformed("unknown value type %d", uint16(d.Type))
	}
	key, rest, err := takeItem(keyFrame, itemName{what: "key"})
	if err != nil {
		return Decoded{}, err
	}
	if len(rest) != 0 {
		return Decoded{}, malformed("key frame holds %d bytes after the %d-byte key", len(rest), len(key))
	}
	d.Key = key
	if d.Parts, err = decodeValue(d.Type, valueFrame); err != nil {
		return Decoded{}, err
	}
	return d, nil
}

// decodeValue takes apart frame 3 for type t.
func decodeValue(t Type, frame []byte) ([][]byte, error) {
	if t == TypeString {
		value, rest, err := takeItem(frame, itemName{what: "string value"})
		if err != nil {
			return nil, err
		}
		if len(rest) != 0 {
			return nil, malformed("value frame holds %d bytes after the %d-byte string", len(rest), len(value))
		}
		return [][]byte{value}, nil
	}

	if len(frame) < lenPrefix {
		return nil, malformed("%s value frame of %d bytes has no count", t, len(frame))
	}
	count := uint64(binary.NativeEndian.Uint32(frame))
	rest := frame[lenPrefix:]
	if (t == TypeHash || t == TypeZSet) && count%2 != 0 {
		return nil, malformed("%s value with odd item count %d", t, count)
	}
	// Every item takes at least its length prefix: a count the frame cannot
	// hold fails here, before the slice below is sized from it.
	if count > uint64(len(rest)/lenPrefix) {
		return nil, malformed("%s value claims %d items but its frame holds %d bytes", t, count, len(frame))
	}
	parts := make([][]byte, count)
	for i := range parts {
		var err error
		if parts[i], rest, err = takeItem(rest, itemName{what: "item", t: t, index: i}); err != nil {
			return nil, err
		}
	}
	if len(rest) != 0 {
		return nil, malformed("%s value frame holds %d bytes after its %d items", t, len(rest), count)
	}
	return parts, nil
}

// itemName names an item in Decode's errors; it is formatted only when an
// error is returned, so decoding a valid message formats nothing.
type itemName struct {
	what  string
	t     Type
	index int
}

func (n itemName) String() string {
	if n.what == "item" {
		return fmt.Sprintf("%s item %d", n.t, n.index)
	}
	return n.what
}

// takeItem reads one uint32 length and that many bytes from the front of
// b, returning the bytes (capped at their length, aliasing b) and what
// follows. name names the item in errors.
func takeItem(b []byte, name itemName) (item, rest []byte, err error) {
	if len(b) < lenPrefix {
		return nil, nil, malformed("%s: %d bytes left, too few for a length", name, len(b))
	}
	n := uint64(binary.NativeEndian.Uint32(b))
	b = b[lenPrefix:]
	if n > uint64(len(b)) {
		return nil, nil, malformed("%s claims %d bytes but %d are left", name, n, len(b))
	}
	return b[:n:n], b[n:], nil
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
}
