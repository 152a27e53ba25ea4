package zmqpub

import (
	"hash/fnv"
	"strconv"
)

// The message id: an optional fourth frame (expiry-zmq-message-id yes)
// that names the event a message reports, so that a listener can drop a
// message it has already seen.
//
//	frame 4  text "<ms>-<hash>": ms is the event's Unix time in
//	         milliseconds in decimal (the deadline that fell due, for a
//	         key, a cycle's re-send or a hash's expired fields; the time
//	         of the eviction for an evicted key), hash is the FNV-1a
//	         64-bit hash of frame 1 then frame 2 (database, type and key)
//	         as 16 lowercase hex digits
//
// The id depends only on what the server replicates and persists: a key's
// deadline is absolute (propagated as PEXPIREAT or PXAT), so the same key
// expiring on a master, on the replica promoted after it, or on the same
// server reloaded after a crash carries the same id. It is not a counter
// of the process: it survives restarts and failovers. Two expirations of
// one key share an id only if they share a deadline, which a key created
// after its deadline passed cannot have (it is deleted at once and sends
// nothing). An eviction's time is the evicting server's: an evicted key
// reloaded after a crash and evicted again carries another id.

// maxMessageIDLen bounds frame 4: 19 digits, '-', 16 hex digits.
const maxMessageIDLen = 19 + 1 + 16

// AppendMessageID appends the id of the event at Unix ms at, reported by
// a message whose first two frames are header and keyFrame.
func AppendMessageID(dst []byte, at int64, header, keyFrame []byte) []byte {
	dst = strconv.AppendInt(dst, at, 10)
	dst = append(dst, '-')
	sum := messageIDHash(header, keyFrame)
	const hexDigits = "0123456789abcdef"
	for shift := 60; shift >= 0; shift -= 4 {
		dst = append(dst, hexDigits[(sum>>shift)&0xf])
	}
	return dst
}

func messageIDHash(header, keyFrame []byte) uint64 {
	h := fnv.New64a()
	h.Write(header)
	h.Write(keyFrame)
	return h.Sum64()
}

// checkMessageID checks frame 4 against the message's first two frames:
// a non-negative decimal time, '-', and the hash of those frames.
func checkMessageID(id, header, keyFrame []byte) error {
	if len(id) > maxMessageIDLen {
		return malformed("message id of %d bytes, at most %d", len(id), maxMessageIDLen)
	}
	dash := -1
	for i, c := range id {
		if c == '-' {
			dash = i
			break
		}
		if c < '0' || c > '9' {
			return malformed("message id %q: time is not decimal", id)
		}
	}
	if dash < 1 || len(id)-dash-1 != 16 {
		return malformed("message id %q: want <ms>-<16 hex digits>", id)
	}
	at, err := strconv.ParseInt(string(id[:dash]), 10, 64)
	if err != nil {
		return malformed("message id %q: %v", id, err)
	}
	if want := AppendMessageID(nil, at, header, keyFrame); string(want) != string(id) {
		return malformed("message id %q does not match its frames (want %q)", id, want)
	}
	return nil
}
