// Package zmqpub encodes expiry messages and publishes them on a 0MQ PUSH socket
// bound to every configured endpoint.
//
// An expiry message is one 0MQ multipart message of three frames per
// expired key, every integer in the machine's native byte order
// (little-endian on x86-64 and arm64):
//
//	frame 1  4 bytes: uint16 database number, uint16 value type
//	frame 2  uint32 key length, then the key bytes
//	frame 3  string: uint32 length, then the bytes;
//	         other types: uint32 count of items, then every item as
//	         uint32 length and bytes
//
// A hash's items are its fields and values interleaved (the count is
// always even); a list's or set's items are its members; a sorted set's
// items are member, score pairs in score order, the score as the text
// Redis prints for it ("1.5", "inf"). A stream's frame 3 nests one level:
//
//	frame 3  stream: uint32 count of entries, then for each entry in ID
//	         order: uint32 length and the ID as "ms-seq" text, uint32
//	         count of the entry's items (always even), then each field
//	         and each value as uint32 length and bytes
//
// (consumer groups are not sent). Type 6 (hash-fields) carries hash
// fields that expired on their own (per-field expiry, not the key's
// deadline): frame 2 is the hash's key and frame 3 is laid out as a
// hash's, holding only the expired fields and their values; the fields of
// one hash that fall due in the same millisecond share one message. Types 0 (string) and 1 (hash) are
// the original protocol; 2 to 6 are sent only when the operator opts in.
//
// The encoding half (Encode, Decode, AppendJSON) is pure: no I/O, no
// state. The publishing half (Outbox, Publisher) owns the queue between the
// command path and the listeners and the sockets to them.
package zmqpub

import "strconv"

// Type is the value type carried in frame 1.
type Type uint16

// The type codes of the wire format. Codes 0 and 1 are the original
// protocol; the others are opt-in extensions.
const (
	TypeString Type = 0
	TypeHash   Type = 1
	TypeList   Type = 2
	TypeSet    Type = 3
	TypeZSet   Type = 4
	TypeStream Type = 5 // encoded by EncodeStream, decoded into Decoded.Entries
	// TypeHashFields is a hash's fields that expired on their own, with
	// their values: encoded, decoded and written as JSON as TypeHash is.
	TypeHashFields Type = 6
)

// typeNames are the names String returns, as Redis's TYPE command spells
// them (hash-fields, which no key has as its type, is the name
// expiry-zmq-types selects it by); JSON output and the vector file use
// the same names.
var typeNames = [...]string{
	TypeString:     "string",
	TypeHash:       "hash",
	TypeList:       "list",
	TypeSet:        "set",
	TypeZSet:       "zset",
	TypeStream:     "stream",
	TypeHashFields: "hash-fields",
}

// Known reports whether t is one of the type codes this package encodes.
func (t Type) Known() bool { return int(t) < len(typeNames) }

// String returns the Redis name of the type ("string", "hash", "list",
// "set", "zset", "stream", "hash-fields"), or "type(N)" for a code outside
// the protocol.
func (t Type) String() string {
	if t.Known() {
		return typeNames[t]
	}
	return "type(" + strconv.Itoa(int(t)) + ")"
}

// paired reports whether t's items come in pairs (field and value, member
// and score): a hash's, a hash's expired fields', a sorted set's.
func (t Type) paired() bool { return t == TypeHash || t == TypeHashFields || t == TypeZSet }

// StreamEntry is one entry of a stream value, as EncodeStream takes it and
// Decode returns it.
type StreamEntry struct {
	ID     []byte   // the entry's ID as XADD replies with it: "ms-seq"
	Fields [][]byte // field, value, field, value... in the entry's order
}
