package zmqpub

import (
	"bytes"
	"encoding/json"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeGoldenBytes(t *testing.T) {
	requireLittleEndian(t)
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Decode(tc.frames[:])
			require.NoError(t, err)
			assert.Equal(t, tc.db, d.DB)
			assert.Equal(t, tc.typ, d.Type)
			assert.Equal(t, tc.key, d.Key)
			assert.Equal(t, tc.parts, d.Parts)
		})
	}
}

func TestDecodeStreamGoldenBytes(t *testing.T) {
	requireLittleEndian(t)
	d, err := Decode(streamGolden.frames[:])
	require.NoError(t, err)
	assert.Equal(t, Decoded{DB: 7, Type: TypeStream, Key: []byte("x"), Entries: streamGolden.entries}, d)

	d, err = Decode([][]byte{b(0, 0, 5, 0), b(1, 0, 0, 0, 'x'), b(0, 0, 0, 0)})
	require.NoError(t, err)
	assert.Equal(t, Decoded{Type: TypeStream, Key: []byte("x"), Entries: []StreamEntry{}}, d, "an empty stream")
}

// A stream's IDs and fields alias frame 3, capped, from one slice of
// entries and one of fields.
func TestDecodeStreamAliasesAndAllocatesTwice(t *testing.T) {
	frames := EncodeStream(0, []byte("key"), []StreamEntry{
		{ID: []byte("1-0"), Fields: bs("a", "b")}, {ID: []byte("2-0"), Fields: bs("c", "d")}})
	d, err := Decode(frames[:])
	require.NoError(t, err)
	assert.Same(t, &frames[2][8], &d.Entries[0].ID[0], "the first ID aliases frame 3")
	assert.Same(t, &frames[2][19], &d.Entries[0].Fields[0][0], "a field aliases frame 3")
	_ = append(d.Entries[0].ID, 'X')
	_ = append(d.Entries[0].Fields, []byte("X"))
	assert.Equal(t, bs("c", "d"), d.Entries[1].Fields, "appending to an entry's fields copies them")
	assert.Equal(t, []byte("2-0"), d.Entries[1].ID)
	assert.Nil(t, d.Parts)

	allocs := testing.AllocsPerRun(50, func() {
		if _, err := Decode(frames[:]); err != nil {
			panic(err)
		}
	})
	assert.Equal(t, 2.0, allocs)
}

func TestDecodeAliasesFramesWithCappedSlices(t *testing.T) {
	frames := Encode(0, TypeList, []byte("key"), [][]byte{[]byte("a"), []byte("b")})
	d, err := Decode(frames[:])
	require.NoError(t, err)

	assert.Same(t, &frames[1][4], &d.Key[0], "the key aliases frame 2")
	assert.Same(t, &frames[2][8], &d.Parts[0][0], "a part aliases frame 3")
	assert.Equal(t, len(d.Key), cap(d.Key))
	for _, p := range d.Parts {
		assert.Equal(t, len(p), cap(p))
	}
	// Appending to a part copies it instead of overwriting the next item.
	_ = append(d.Parts[0], 'X')
	assert.Equal(t, []byte("b"), d.Parts[1])
}

func TestDecodeErrors(t *testing.T) {
	requireLittleEndian(t)
	okHeader := b(0, 0, 0, 0)
	hashHeader := b(0, 0, 1, 0)
	listHeader := b(0, 0, 2, 0)
	zsetHeader := b(0, 0, 4, 0)
	streamHeader := b(0, 0, 5, 0)
	hashFieldsHeader := b(0, 0, 6, 0)
	okKey := b(1, 0, 0, 0, 'k')
	okValue := b(1, 0, 0, 0, 'v')
	tests := []struct {
		name   string
		frames [][]byte
		want   string
	}{
		{"no frames", nil, "0 frames, want 3"},
		{"two frames", [][]byte{okHeader, okKey}, "2 frames, want 3"},
		{"five frames", [][]byte{okHeader, okKey, okValue, okValue, okValue}, "5 frames, want 3 (or 4 with a message id)"},
		{"id not an id", [][]byte{okHeader, okKey, okValue, okValue}, "time is not decimal"},
		{"id without hash", [][]byte{okHeader, okKey, okValue, []byte("1733000000000")}, "want <ms>-<16 hex digits>"},
		{"id of other frames", [][]byte{okHeader, okKey, okValue, AppendMessageID(nil, 5, b(1, 0, 0, 0), okKey)}, "does not match its frames"},
		{"id with leading zero", [][]byte{okHeader, okKey, okValue, append([]byte("0"), AppendMessageID(nil, 5, okHeader, okKey)...)}, "does not match its frames"},
		{"id too long", [][]byte{okHeader, okKey, okValue, bytes.Repeat([]byte("1"), 40)}, "message id of 40 bytes"},
		{"header too short", [][]byte{b(0, 0, 0), okKey, okValue}, "header frame of 3 bytes, want 4"},
		{"header too long", [][]byte{b(0, 0, 0, 0, 0), okKey, okValue}, "header frame of 5 bytes, want 4"},
		{"unknown type", [][]byte{b(0, 0, 7, 0), okKey, okValue}, "unknown value type 7"},
		{"unknown high type", [][]byte{b(0, 0, 0, 1), okKey, okValue}, "unknown value type 256"},
		{"empty key frame", [][]byte{okHeader, {}, okValue}, "key: 0 bytes left, too few for a length"},
		{"key frame shorter than a length", [][]byte{okHeader, b(1, 0, 0), okValue}, "key: 3 bytes left"},
		{"key longer than its frame", [][]byte{okHeader, b(2, 0, 0, 0, 'k'), okValue}, "key claims 2 bytes but 1 are left"},
		{"key shorter than its frame", [][]byte{okHeader, b(1, 0, 0, 0, 'k', 'x'), okValue}, "key frame holds 1 bytes after the 1-byte key"},
		{"key length 2^32-1", [][]byte{okHeader, b(0xff, 0xff, 0xff, 0xff, 'k'), okValue}, "key claims 4294967295 bytes"},
		{"empty value frame", [][]byte{okHeader, okKey, {}}, "string value: 0 bytes left"},
		{"string longer than its frame", [][]byte{okHeader, okKey, b(9, 0, 0, 0, 'v')}, "string value claims 9 bytes but 1 are left"},
		{"string with trailing bytes", [][]byte{okHeader, okKey, b(1, 0, 0, 0, 'v', 'w')}, "value frame holds 1 bytes after the 1-byte string"},
		{"hash without a count", [][]byte{hashHeader, okKey, b(2, 0, 0)}, "hash value frame of 3 bytes has no count"},
		{"hash with odd count", [][]byte{hashHeader, okKey, b(1, 0, 0, 0, 1, 0, 0, 0, 'f')}, "hash value with odd item count 1"},
		{"zset with odd count", [][]byte{zsetHeader, okKey, b(3, 0, 0, 0)}, "zset value with odd item count 3"},
		{"hash-fields without a count", [][]byte{hashFieldsHeader, okKey, b(2, 0, 0)}, "hash-fields value frame of 3 bytes has no count"},
		{"hash-fields with odd count", [][]byte{hashFieldsHeader, okKey, b(1, 0, 0, 0, 1, 0, 0, 0, 'f')}, "hash-fields value with odd item count 1"},
		{"hash-fields count beyond the frame", [][]byte{hashFieldsHeader, okKey, b(2, 0, 0, 0, 0, 0, 0, 0)}, "hash-fields value claims 2 items but its frame holds 8 bytes"},
		{"hash-fields value past the frame", [][]byte{hashFieldsHeader, okKey, b(2, 0, 0, 0, 1, 0, 0, 0, 'f', 9, 0, 0, 0, 'v')}, "hash-fields item 1 claims 9 bytes but 1 are left"},
		{"hash-fields trailing bytes", [][]byte{hashFieldsHeader, okKey, b(2, 0, 0, 0, 1, 0, 0, 0, 'f', 0, 0, 0, 0, 'x')}, "hash-fields value frame holds 1 bytes after its 2 items"},
		{"hash count beyond the frame", [][]byte{hashHeader, okKey, b(2, 0, 0, 0, 0, 0, 0, 0)}, "hash value claims 2 items but its frame holds 8 bytes"},
		{"count 2^32-1 in 10 bytes", [][]byte{listHeader, okKey, b(0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0, 'a', 0)}, "list value claims 4294967295 items but its frame holds 10 bytes"},
		{"item longer than the frame", [][]byte{listHeader, okKey, b(1, 0, 0, 0, 5, 0, 0, 0, 'a')}, "list item 0 claims 5 bytes but 1 are left"},
		{"second item truncated", [][]byte{listHeader, okKey, b(2, 0, 0, 0, 1, 0, 0, 0, 'a', 1, 0, 0, 0)}, "list item 1 claims 1 bytes but 0 are left"},
		{"second length truncated", [][]byte{listHeader, okKey, b(2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0)}, "list value claims 2 items but its frame holds 11 bytes"},
		{"trailing bytes after items", [][]byte{listHeader, okKey, b(1, 0, 0, 0, 1, 0, 0, 0, 'a', 'b')}, "list value frame holds 1 bytes after its 1 items"},
		{"zero items and trailing bytes", [][]byte{listHeader, okKey, b(0, 0, 0, 0, 0, 0, 0, 0)}, "list value frame holds 4 bytes after its 0 items"},

		{"stream without a count", [][]byte{streamHeader, okKey, b(1, 0)}, "stream value frame of 2 bytes has no count"},
		{"stream count beyond the frame", [][]byte{streamHeader, okKey, b(2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)}, "stream value claims 2 entries but its frame holds 12 bytes"},
		{"stream count 2^32-1", [][]byte{streamHeader, okKey, b(0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0)}, "stream value claims 4294967295 entries"},
		{"stream ID past the frame", [][]byte{streamHeader, okKey, b(1, 0, 0, 0, 9, 0, 0, 0, '1', '-', '0', 0)}, "stream entry 0: ID claims 9 bytes but 4 are left"},
		{"stream entry without item count", [][]byte{streamHeader, okKey, b(1, 0, 0, 0, 5, 0, 0, 0, '1', '0', '-', '1', '0')}, "stream entry 0: 0 bytes left, too few for its item count"},
		{"stream entry with odd item count", [][]byte{streamHeader, okKey, b(1, 0, 0, 0, 3, 0, 0, 0, '1', '-', '0', 1, 0, 0, 0, 0, 0, 0, 0)}, "stream entry 0 with odd item count 1"},
		{"stream entry item count beyond the frame", [][]byte{streamHeader, okKey, b(1, 0, 0, 0, 3, 0, 0, 0, '1', '-', '0', 2, 0, 0, 0, 0, 0, 0, 0)}, "stream entry 0 claims 2 items but 4 bytes are left"},
		{"stream item past the frame", [][]byte{streamHeader, okKey, b(1, 0, 0, 0, 3, 0, 0, 0, '1', '-', '0', 2, 0, 0, 0, 1, 0, 0, 0, 'f', 5, 0, 0, 0, 'v')}, "stream entry 0: item 1 claims 5 bytes but 1 are left"},
		{"stream second entry truncated", [][]byte{streamHeader, okKey, b(2, 0, 0, 0, 3, 0, 0, 0, '1', '-', '0', 0, 0, 0, 0, 3, 0, 0, 0, '2', '-')}, "stream entry 1: ID claims 3 bytes but 2 are left"},
		{"stream trailing bytes", [][]byte{streamHeader, okKey, b(1, 0, 0, 0, 3, 0, 0, 0, '1', '-', '0', 0, 0, 0, 0, 'x')}, "stream value frame holds 1 bytes after its 1 entries"},
		{"stream of no entries and trailing bytes", [][]byte{streamHeader, okKey, b(0, 0, 0, 0, 0)}, "stream value frame holds 1 bytes after its 0 entries"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Decode(tc.frames)
			require.ErrorIs(t, err, ErrMalformed)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, Decoded{}, d)
		})
	}
}

// TestDecodeHugeCountAllocatesNothingBig sends counts and lengths of
// 2^32-1 in tiny frames: Decode must refuse them from the frame size
// alone, allocating no more than its error message.
func TestDecodeHugeCountAllocatesNothingBig(t *testing.T) {
	requireLittleEndian(t)
	max32 := b(0xff, 0xff, 0xff, 0xff)
	messages := [][][]byte{
		{b(0, 0, 2, 0), b(1, 0, 0, 0, 'k'), append(max32, 0, 0, 0, 0, 'a', 'b')},
		{b(0, 0, 1, 0), b(1, 0, 0, 0, 'k'), append(b(0xfe, 0xff, 0xff, 0xff), 0, 0, 0, 0, 'a', 'b')},
		{b(0, 0, 0, 0), b(1, 0, 0, 0, 'k'), append(max32, 'a', 'b', 'c', 'd', 'e', 'f')},
		{b(0, 0, 0, 0), append(max32, 'k'), b(0, 0, 0, 0)},
		{b(0, 0, 5, 0), b(1, 0, 0, 0, 'k'), append(max32, 0, 0, 0, 0, 0, 0, 0, 0)},
		{b(0, 0, 5, 0), b(1, 0, 0, 0, 'k'), append(b(1, 0, 0, 0, 0, 0, 0, 0), append(b(0xfe, 0xff, 0xff, 0xff), 0, 0, 0, 0)...)},
	}
	for _, frames := range messages {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Decode(frames)
		runtime.ReadMemStats(&after)
		require.ErrorIs(t, err, ErrMalformed)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<10), "bytes allocated by a failing Decode")
	}
}

func TestDecodeAllocatesOnlyThePartsSlice(t *testing.T) {
	parts := make([][]byte, 0, 2000)
	for i := 0; i < 1000; i++ {
		parts = append(parts, []byte("field"), []byte("value"))
	}
	frames := Encode(0, TypeHash, []byte("key"), parts)
	allocs := testing.AllocsPerRun(50, func() {
		if _, err := Decode(frames[:]); err != nil {
			panic(err)
		}
	})
	assert.Equal(t, 1.0, allocs)
}

func TestDecodeRoundTripsLargeValues(t *testing.T) {
	big := bytes.Repeat([]byte{0, 1, 0xff}, 1<<20)
	many := make([][]byte, 0, 20000)
	for i := 0; i < 10000; i++ {
		many = append(many, []byte("f"), nil)
	}
	tests := []struct {
		name  string
		typ   Type
		parts [][]byte
	}{
		{"3 MB string", TypeString, [][]byte{big}},
		{"10,000 fields", TypeHash, many},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			frames := Encode(9, tc.typ, []byte("k"), tc.parts)
			d, err := Decode(frames[:])
			require.NoError(t, err)
			assert.Equal(t, 9, d.DB)
			assert.Equal(t, len(tc.parts), len(d.Parts))
			assert.Equal(t, frames, Encode(d.DB, d.Type, d.Key, d.Parts))
		})
	}
}

// FuzzDecode feeds arbitrary frames to Decode: it must never panic, and
// whatever it accepts must encode back to the same bytes.
func FuzzDecode(f *testing.F) {
	for _, tc := range goldenCases {
		frames := Encode(tc.db, tc.typ, tc.key, tc.parts)
		f.Add(frames[0], frames[1], frames[2])
	}
	f.Add(streamGolden.frames[0], streamGolden.frames[1], streamGolden.frames[2])
	f.Add(b(0, 0, 5, 0), b(0, 0, 0, 0), b(1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
	f.Add(b(0, 0, 2, 0), b(1, 0, 0, 0, 'k'), b(0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0, 'a', 0))
	f.Add(b(0, 0, 1, 0), b(0, 0, 0, 0), b(2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
	f.Add(b(0, 0, 9, 0), b(), b())
	f.Fuzz(func(t *testing.T, header, key, value []byte) {
		d, err := Decode([][]byte{header, key, value})
		if err != nil {
			require.ErrorIs(t, err, ErrMalformed)
			return
		}
		var again [3][]byte
		if d.Type == TypeStream {
			require.Nil(t, d.Parts)
			again = EncodeStream(d.DB, d.Key, d.Entries)
		} else {
			require.Nil(t, d.Entries)
			again = Encode(d.DB, d.Type, d.Key, d.Parts)
		}
		require.Equal(t, header, again[0])
		require.Equal(t, key, again[1])
		require.Equal(t, value, again[2])
		require.True(t, json.Valid(AppendJSON(nil, d)), "AppendJSON writes valid JSON")
	})
}

func BenchmarkDecodeHash100(b *testing.B) {
	frames := Encode(0, TypeHash, []byte("meta:12345"), benchHash())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(frames[:]); err != nil {
			b.Fatal(err)
		}
	}
}

// A fourth frame is the message id of the first two: Decode keeps it, and
// the JSON line carries it after the key.
func TestDecodeMessageID(t *testing.T) {
	requireLittleEndian(t)
	frames := Encode(3, TypeString, []byte("k"), [][]byte{[]byte("v")})
	id := AppendMessageID(nil, 1733000000123, frames[0], frames[1])
	assert.Regexp(t, `^1733000000123-[0-9a-f]{16}$`, string(id))
	d, err := Decode([][]byte{frames[0], frames[1], frames[2], id})
	require.NoError(t, err)
	assert.Equal(t, id, d.ID)
	assert.Equal(t, `{"db":3,"type":"string","key":"k","id":"`+string(id)+`","value":"v"}`+"\n", string(AppendJSON(nil, d)))

	other := Encode(4, TypeString, []byte("k"), [][]byte{[]byte("v")})
	assert.NotEqual(t, id, AppendMessageID(nil, 1733000000123, other[0], other[1]), "another database, another id")
	assert.NotEqual(t, id, AppendMessageID(nil, 1733000000124, frames[0], frames[1]), "another deadline, another id")
	d, err = Decode(frames[:])
	require.NoError(t, err)
	assert.Nil(t, d.ID)
}
