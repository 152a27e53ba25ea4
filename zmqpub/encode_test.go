package zmqpub

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requireLittleEndian skips golden-byte tests on a big-endian machine: the
// wire format is native byte order and the golden bytes are written for
// little-endian, the byte order of every platform zredis ships for.
func requireLittleEndian(t *testing.T) {
	t.Helper()
	// The machine's byte order, not a missing install: it stays a skip
	// under ZREDIS_TEST_REQUIRE_ALL.
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("golden bytes are little-endian; this machine is big-endian")
	}
}

// b is a byte-slice literal, to keep the golden tables readable.
func b(bytes ...byte) []byte { return bytes }

// goldenCase is one message with its frames written out by hand from the
// wire format, not produced by the encoder.
type goldenCase struct {
	name   string
	db     int
	typ    Type
	key    []byte
	parts  [][]byte
	frames [3][]byte
}

var goldenCases = []goldenCase{
	{
		name:  "string",
		db:    0,
		typ:   TypeString,
		key:   []byte("k"),
		parts: [][]byte{[]byte("hello")},
		frames: [3][]byte{
			b(0, 0, 0, 0),
			b(1, 0, 0, 0, 'k'),
			b(5, 0, 0, 0, 'h', 'e', 'l', 'l', 'o'),
		},
	},
	{
		name:  "empty string, empty key",
		db:    0,
		typ:   TypeString,
		key:   []byte{},
		parts: [][]byte{{}},
		frames: [3][]byte{
			b(0, 0, 0, 0),
			b(0, 0, 0, 0),
			b(0, 0, 0, 0),
		},
	},
	{
		name:  "binary key and value",
		db:    0,
		typ:   TypeString,
		key:   b(0x00, 'k', 0xff),
		parts: [][]byte{b(0xff, 0x00, 0x01)},
		frames: [3][]byte{
			b(0, 0, 0, 0),
			b(3, 0, 0, 0, 0x00, 'k', 0xff),
			b(3, 0, 0, 0, 0xff, 0x00, 0x01),
		},
	},
	{
		name:  "db 15",
		db:    15,
		typ:   TypeString,
		key:   []byte("a"),
		parts: [][]byte{[]byte("b")},
		frames: [3][]byte{
			b(15, 0, 0, 0),
			b(1, 0, 0, 0, 'a'),
			b(1, 0, 0, 0, 'b'),
		},
	},
	{
		name:  "db 65535 takes both header bytes",
		db:    65535,
		typ:   TypeString,
		key:   []byte("a"),
		parts: [][]byte{[]byte("b")},
		frames: [3][]byte{
			b(0xff, 0xff, 0, 0),
			b(1, 0, 0, 0, 'a'),
			b(1, 0, 0, 0, 'b'),
		},
	},
	{
		name:  "string of 256 bytes uses the second length byte",
		db:    1,
		typ:   TypeString,
		key:   []byte("s"),
		parts: [][]byte{make([]byte, 256)},
		frames: [3][]byte{
			b(1, 0, 0, 0),
			b(1, 0, 0, 0, 's'),
			append(b(0, 1, 0, 0), make([]byte, 256)...),
		},
	},
	{
		name:  "hash",
		db:    3,
		typ:   TypeHash,
		key:   []byte("h"),
		parts: [][]byte{[]byte("f1"), []byte("v1"), []byte("f2"), []byte("")},
		frames: [3][]byte{
			b(3, 0, 1, 0),
			b(1, 0, 0, 0, 'h'),
			b(4, 0, 0, 0,
				2, 0, 0, 0, 'f', '1',
				2, 0, 0, 0, 'v', '1',
				2, 0, 0, 0, 'f', '2',
				0, 0, 0, 0),
		},
	},
	{
		name:  "list",
		db:    0,
		typ:   TypeList,
		key:   []byte("l"),
		parts: [][]byte{[]byte("a"), []byte("bc"), []byte("a")},
		frames: [3][]byte{
			b(0, 0, 2, 0),
			b(1, 0, 0, 0, 'l'),
			b(3, 0, 0, 0,
				1, 0, 0, 0, 'a',
				2, 0, 0, 0, 'b', 'c',
				1, 0, 0, 0, 'a'),
		},
	},
	{
		name:  "set",
		db:    2,
		typ:   TypeSet,
		key:   []byte("s"),
		parts: [][]byte{[]byte("m")},
		frames: [3][]byte{
			b(2, 0, 3, 0),
			b(1, 0, 0, 0, 's'),
			b(1, 0, 0, 0,
				1, 0, 0, 0, 'm'),
		},
	},
	{
		name:  "zset",
		db:    0,
		typ:   TypeZSet,
		key:   []byte("z"),
		parts: [][]byte{[]byte("a"), []byte("1.5"), []byte("b"), []byte("inf")},
		frames: [3][]byte{
			b(0, 0, 4, 0),
			b(1, 0, 0, 0, 'z'),
			b(4, 0, 0, 0,
				1, 0, 0, 0, 'a',
				3, 0, 0, 0, '1', '.', '5',
				1, 0, 0, 0, 'b',
				3, 0, 0, 0, 'i', 'n', 'f'),
		},
	},
	{
		// A hash's expired fields: frame 3 as a hash's, type code 6.
		name:  "hash-fields",
		db:    1,
		typ:   TypeHashFields,
		key:   []byte("h"),
		parts: [][]byte{[]byte("f2"), []byte("v2"), []byte("f9"), []byte("")},
		frames: [3][]byte{
			b(1, 0, 6, 0),
			b(1, 0, 0, 0, 'h'),
			b(4, 0, 0, 0,
				2, 0, 0, 0, 'f', '2',
				2, 0, 0, 0, 'v', '2',
				2, 0, 0, 0, 'f', '9',
				0, 0, 0, 0),
		},
	},
}

// streamGolden is a stream of three entries with different fields (as
// after an XDEL of 1-1 between them), its frame 3 written out by hand.
var streamGolden = struct {
	entries []StreamEntry
	frames  [3][]byte
}{
	entries: []StreamEntry{
		{ID: []byte("1-0"), Fields: bs("f", "v")},
		{ID: []byte("1-2"), Fields: [][]byte{[]byte("a"), {}, []byte("b"), b(0xff)}},
		{ID: []byte("20-0"), Fields: bs("f", "w")},
	},
	frames: [3][]byte{
		b(7, 0, 5, 0),
		b(1, 0, 0, 0, 'x'),
		b(3, 0, 0, 0,
			3, 0, 0, 0, '1', '-', '0',
			2, 0, 0, 0,
			1, 0, 0, 0, 'f',
			1, 0, 0, 0, 'v',
			3, 0, 0, 0, '1', '-', '2',
			4, 0, 0, 0,
			1, 0, 0, 0, 'a',
			0, 0, 0, 0,
			1, 0, 0, 0, 'b',
			1, 0, 0, 0, 0xff,
			4, 0, 0, 0, '2', '0', '-', '0',
			2, 0, 0, 0,
			1, 0, 0, 0, 'f',
			1, 0, 0, 0, 'w'),
	},
}

func TestEncodeStreamGoldenBytes(t *testing.T) {
	requireLittleEndian(t)
	frames := EncodeStream(7, []byte("x"), streamGolden.entries)
	for i := range frames {
		assert.Equal(t, streamGolden.frames[i], frames[i], "frame %d", i+1)
		assert.Equal(t, len(frames[i]), cap(frames[i]), "frame %d is sized exactly", i+1)
	}
	assert.Equal(t, b(0, 0, 0, 0), EncodeStream(0, []byte("x"), nil)[2], "an empty stream")
	assert.Equal(t, b(1, 0, 0, 0, 3, 0, 0, 0, '5', '-', '1', 0, 0, 0, 0),
		EncodeStream(0, []byte("x"), []StreamEntry{{ID: []byte("5-1")}})[2], "an entry without fields")
}

func TestEncodeStreamSharesNoMemoryAndAllocatesOnce(t *testing.T) {
	entries := []StreamEntry{{ID: []byte("1-0"), Fields: bs("f", "v")}, {ID: []byte("2-0"), Fields: bs("g", "w")}}
	frames := EncodeStream(0, []byte("key"), entries)
	want := [3][]byte{append([]byte(nil), frames[0]...), append([]byte(nil), frames[1]...), append([]byte(nil), frames[2]...)}
	entries[0].ID[0], entries[0].Fields[0][0], entries[1].Fields[1][0] = 'X', 'X', 'X'
	assert.Equal(t, want, frames)

	allocs := testing.AllocsPerRun(100, func() { EncodeStream(0, []byte("key"), entries) })
	assert.Equal(t, 1.0, allocs)
}

func TestEncodeStreamPanicsOnMisuse(t *testing.T) {
	ok := []StreamEntry{{ID: []byte("1-0"), Fields: bs("f", "v")}}
	assert.Panics(t, func() { EncodeStream(-1, []byte("k"), ok) }, "negative db")
	assert.Panics(t, func() { EncodeStream(MaxDB+1, []byte("k"), ok) }, "db past uint16")
	assert.Panics(t, func() {
		EncodeStream(0, []byte("k"), []StreamEntry{{ID: []byte("1-0"), Fields: bs("f", "v", "g")}})
	}, "a field without a value")
	assert.NotPanics(t, func() { EncodeStream(MaxDB, []byte("k"), ok) })
}

func TestEncodeGoldenBytes(t *testing.T) {
	requireLittleEndian(t)
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			frames := Encode(tc.db, tc.typ, tc.key, tc.parts)
			for i := range frames {
				assert.Equal(t, tc.frames[i], frames[i], "frame %d", i+1)
				assert.Equal(t, len(frames[i]), cap(frames[i]), "frame %d is sized exactly", i+1)
			}
		})
	}
}

func TestEncodeSharesNoMemory(t *testing.T) {
	key := []byte("key")
	parts := [][]byte{[]byte("f"), []byte("v")}
	frames := Encode(0, TypeHash, key, parts)
	want := [3][]byte{append([]byte(nil), frames[0]...), append([]byte(nil), frames[1]...), append([]byte(nil), frames[2]...)}

	copy(key, "XXX")
	parts[0][0], parts[1][0] = 'X', 'X'
	assert.Equal(t, want, frames)
}

// The three frames share one allocation, each capped at its end so that
// appending to one cannot overwrite the next.
func TestEncodeAllocatesOnce(t *testing.T) {
	parts := make([][]byte, 0, 200)
	for i := 0; i < 100; i++ {
		parts = append(parts, []byte("field"), []byte("value"))
	}
	allocs := testing.AllocsPerRun(100, func() {
		Encode(7, TypeHash, []byte("key"), parts)
	})
	assert.Equal(t, 1.0, allocs)
	frames := Encode(7, TypeHash, []byte("key"), parts)
	for i := 0; i < 2; i++ {
		assert.Equal(t, len(frames[i]), cap(frames[i]), "frame %d capped", i)
	}
}

func TestEncodePanicsOnMisuse(t *testing.T) {
	one := [][]byte{[]byte("x")}
	tests := []struct {
		name  string
		db    int
		typ   Type
		parts [][]byte
	}{
		{"negative db", -1, TypeString, one},
		{"db past uint16", MaxDB + 1, TypeString, one},
		{"unknown type", 0, Type(7), one},
		{"stream (EncodeStream's)", 0, TypeStream, nil},
		{"string without value", 0, TypeString, nil},
		{"string with two values", 0, TypeString, [][]byte{[]byte("a"), []byte("b")}},
		{"hash with a field and no value", 0, TypeHash, one},
		{"hash-fields with a field and no value", 0, TypeHashFields, one},
		{"zset with a member and no score", 0, TypeZSet, one},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Panics(t, func() { Encode(tc.db, tc.typ, []byte("k"), tc.parts) })
		})
	}
}

func TestTypeString(t *testing.T) {
	tests := []struct {
		typ  Type
		want string
	}{
		{TypeString, "string"},
		{TypeHash, "hash"},
		{TypeList, "list"},
		{TypeSet, "set"},
		{TypeZSet, "zset"},
		{TypeStream, "stream"},
		{TypeHashFields, "hash-fields"},
		{Type(7), "type(7)"},
		{Type(65535), "type(65535)"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, tc.typ.String())
		assert.Equal(t, !strings.HasPrefix(tc.want, "type("), tc.typ.Known())
	}
	assert.Equal(t, Type(5), TypeStream, "the stream's code is part of the wire format")
	assert.Equal(t, Type(6), TypeHashFields, "the hash-fields code is part of the wire format")
}

// A hash's expired fields are encoded byte for byte as a hash holding
// just those fields, but for the type code in frame 1.
func TestEncodeHashFieldsAsHash(t *testing.T) {
	parts := [][]byte{[]byte("rcpt:2"), []byte("deferred"), b(0x00, 0xff), {}}
	fields := Encode(4, TypeHashFields, []byte("mail:42"), parts)
	hash := Encode(4, TypeHash, []byte("mail:42"), parts)
	assert.Equal(t, uint16(TypeHashFields), binary.NativeEndian.Uint16(fields[0][2:]))
	assert.Equal(t, hash[0][:2], fields[0][:2], "the database")
	assert.Equal(t, hash[1], fields[1], "the key frame")
	assert.Equal(t, hash[2], fields[2], "frame 3")
}

func TestEncodeEmptyCollections(t *testing.T) {
	requireLittleEndian(t)
	for _, typ := range []Type{TypeHash, TypeList, TypeSet, TypeZSet, TypeHashFields} {
		frames := Encode(0, typ, []byte("k"), nil)
		require.Equal(t, b(0, 0, 0, 0), frames[2], "%s", typ)
	}
}

// benchHash is a 100-field hash of short strings, the size of a mail
// queue's metadata.
func benchHash() [][]byte {
	parts := make([][]byte, 0, 200)
	for i := 0; i < 100; i++ {
		parts = append(parts, []byte("field:"+string(rune('a'+i%26))), []byte("a value of some twenty bytes"))
	}
	return parts
}

func BenchmarkEncodeString(b *testing.B) {
	key, parts := []byte("lock:queue:12345"), [][]byte{make([]byte, 1024)}
	b.ReportAllocs()
	for b.Loop() {
		Encode(0, TypeString, key, parts)
	}
}

func BenchmarkEncodeHash100(b *testing.B) {
	key, parts := []byte("meta:12345"), benchHash()
	b.ReportAllocs()
	for b.Loop() {
		Encode(0, TypeHash, key, parts)
	}
}
