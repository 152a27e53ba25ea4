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
	Parts [][]byte // as for Encode: [value], field/value pairs (hash, hash-fields), members, or member/score pairs; nil for a stream
	// Entries is a stream's value (TypeStream), as for EncodeStream: the
	// entries in frame order, each ID and field aliasing frame 3 like
	// Parts. Nil for every other type.
	Entries []StreamEntry
	// ID is the message id, frame 4 (see AppendMessageID), aliasing it;
	// nil when the message has three frames.
	ID []byte
}

// Decode takes apart the frames of one expiry message. It checks the frame
// count (3, or 4 with a message id, which must be the id of the first two
// frames), the header size (4 bytes), the type code, that the key length
// equals what frame 2 holds, that every length in frame 3 lies within the
// frame and nothing follows the last item, and that a hash, a hash's
// expired fields (TypeHashFields) or a sorted set carries an even count. A claimed count is checked against the bytes left
// (every item needs at least its 4-byte length) before anything is
// allocated, so memory used is bounded by the frames' size whatever the
// frames claim. A stream's frame 3 is checked the same way, entry by entry:
// its entry count, each ID, each entry's item count (even) and items, and
// nothing after the last entry; the ID's text is not parsed.
//
// Decode succeeds exactly on the frames Encode and EncodeStream produce:
// for any frames it accepts, Encode(d.DB, d.Type, d.Key, d.Parts) (for a
// stream EncodeStream(d.DB, d.Key, d.Entries)) returns them byte for byte.
func Decode(frames [][]byte) (Decoded, error) {
	if len(frames) != 3 && len(frames) != 4 {
		return Decoded{}, malformed("%d frames, want 3 (or 4 with a message id)", len(frames))
	}
	header, keyFrame, valueFrame := frames[0], frames[1], frames[2]
	if len(header) != headerLen {
		return Decoded{}, malformed("header frame of %d bytes, want %d", len(header), headerLen)
	}
	d := Decoded{
		DB:   int(binary.NativeEndian.Uint16(header[0:])),
		Type: Type(binary.NativeEndian.Uint16(header[2:])),
	}
	if len(frames) == 4 {
		if err := checkMessageID(frames[3], header, keyFrame); err != nil {
			return Decoded{}, err
		}
		d.ID = frames[3][:len(frames[3]):len(frames[3])]
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
	if d.Type == TypeStream {
		if d.Entries, err = decodeStream(valueFrame); err != nil {
			return Decoded{}, err
		}
		return d, nil
	}
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
	if t.paired() && count%2 != 0 {
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

// decodeStream takes apart a stream's frame 3. A first pass checks every
// count and length against the frame and counts the items; the second
// fills the entries from two allocations sized by the first, so memory is
// bounded by the frame's size (an entry takes at least 8 bytes, an item 4).
func decodeStream(frame []byte) ([]StreamEntry, error) {
	if len(frame) < lenPrefix {
		return nil, malformed("stream value frame of %d bytes has no count", len(frame))
	}
	count := uint64(binary.NativeEndian.Uint32(frame))
	body := frame[lenPrefix:]
	if count > uint64(len(body)/(2*lenPrefix)) {
		return nil, malformed("stream value claims %d entries but its frame holds %d bytes", count, len(frame))
	}
	rest := body
	items := 0
	for i := 0; i < int(count); i++ {
		var err error
		if _, rest, err = takeItem(rest, itemName{what: "ID", t: TypeStream, index: i}); err != nil {
			return nil, err
		}
		if len(rest) < lenPrefix {
			return nil, malformed("stream entry %d: %d bytes left, too few for its item count", i, len(rest))
		}
		n := uint64(binary.NativeEndian.Uint32(rest))
		rest = rest[lenPrefix:]
		if n%2 != 0 {
			return nil, malformed("stream entry %d with odd item count %d", i, n)
		}
		if n > uint64(len(rest)/lenPrefix) {
			return nil, malformed("stream entry %d claims %d items but %d bytes are left", i, n, len(rest))
		}
		for j := 0; j < int(n); j++ {
			if _, rest, err = takeItem(rest, itemName{what: "item", t: TypeStream, entry: i, index: j}); err != nil {
				return nil, err
			}
		}
		items += int(n)
	}
	if len(rest) != 0 {
		return nil, malformed("stream value frame holds %d bytes after its %d entries", len(rest), count)
	}

	// Every length was checked above: this pass cannot fail.
	entries := make([]StreamEntry, count)
	fields := make([][]byte, items)
	rest = body
	for i := range entries {
		e := &entries[i]
		e.ID, rest, _ = takeItem(rest, itemName{})
		n := int(binary.NativeEndian.Uint32(rest))
		rest = rest[lenPrefix:]
		e.Fields, fields = fields[:n:n], fields[n:]
		for j := range e.Fields {
			e.Fields[j], rest, _ = takeItem(rest, itemName{})
		}
	}
	return entries, nil
}

// itemName names an item in Decode's errors; it is formatted only when an
// error is returned, so decoding a valid message formats nothing.
type itemName struct {
	what  string
	t     Type
	entry int // a stream's entry, for its ID and items
	index int
}

func (n itemName) String() string {
	switch {
	case n.t == TypeStream && n.what == "ID":
		return fmt.Sprintf("stream entry %d: ID", n.index)
	case n.t == TypeStream:
		return fmt.Sprintf("stream entry %d: item %d", n.entry, n.index)
	case n.what == "item":
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
