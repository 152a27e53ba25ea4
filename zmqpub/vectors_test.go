package zmqpub

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// vectorPath is the shared test-vector file, read by the Go, Perl and
// Python tests. Regenerate it after changing vectorSpecs:
//
//	go test ./zmqpub -run TestVectorFile -update-vectors
const vectorPath = "../testdata/expiry-vectors.json"

var updateVectors = flag.Bool("update-vectors", false, "rewrite "+vectorPath+" from vectorSpecs")

// vectorSpec is one vector as the encoder's input. Exactly one of parts,
// valueGen and fieldsGen is set, or entries for a stream. A hash's
// expired fields (TypeHashFields) are written as fields_hex, as a hash's.
type vectorSpec struct {
	name      string
	db        int
	typ       Type
	key       []byte
	parts     [][]byte
	entries   []StreamEntry // TypeStream (EncodeStream's input)
	valueGen  int           // string of this many bytes, byte i = i % 251
	fieldsGen int           // hash of this many fields "field:<i>" = "value:<i>"
	idAt      int64         // > 0: the message carries a message id of this time (frame 4)
}

var vectorSpecs = []vectorSpec{
	{name: "string-empty", typ: TypeString, key: []byte("key"), parts: bs("")},
	{name: "string-ascii", typ: TypeString, key: []byte("greeting"), parts: bs("hello world")},
	{name: "string-binary", typ: TypeString, key: b(0x00, 'k', 0xff, 0x00), parts: [][]byte{b(0x00, 0xff, 0x01, 0xfe, 0x00, 0x80)}},
	{name: "string-utf8", typ: TypeString, key: []byte("clé"), parts: bs("naïve ☃ \"quoted\"\n")},
	{name: "string-db15", db: 15, typ: TypeString, key: []byte("lock:q1"), parts: bs("1")},
	{name: "string-db65535", db: 65535, typ: TypeString, key: []byte("k"), parts: bs("v")},
	{name: "string-10mb", db: 1, typ: TypeString, key: []byte("body:big"), valueGen: 10 << 20},
	{name: "hash-one-field", typ: TypeHash, key: []byte("meta:1"), parts: bs("f1", "v1")},
	{name: "hash-empty-value", db: 2, typ: TypeHash, key: []byte("meta:2"), parts: bs("sender", "a@example.org", "note", "")},
	{name: "hash-binary", typ: TypeHash, key: []byte("meta:bin"), parts: [][]byte{b(0xff, 0x00), b(0x00, 0xff), []byte("f"), b(0xc3, 0x28)}},
	{name: "hash-10000-fields", db: 3, typ: TypeHash, key: []byte("meta:big"), fieldsGen: 10000},
	{name: "list", typ: TypeList, key: []byte("queue"), parts: bs("m1", "m2", "m1", "")},
	{name: "set", typ: TypeSet, key: []byte("ids"), parts: bs("id:1", "id:2")},
	{name: "zset", typ: TypeZSet, key: []byte("retry"), parts: bs("a", "-inf", "b", "0", "c", "1.5", "d", "1700000000", "e", "inf")},
	// Entries with different fields, one deleted between them (no 1-1),
	// a binary value and an empty one.
	{name: "stream", typ: TypeStream, key: []byte("events"), entries: []StreamEntry{
		{ID: []byte("1700000000000-0"), Fields: bs("type", "mail", "to", "a@example.org")},
		{ID: []byte("1700000000000-2"), Fields: bs("type", "mail", "to", "b@example.org", "note", "")},
		{ID: []byte("1700000000005-0"), Fields: [][]byte{[]byte("clé"), b(0x00, 0xff, 0x80)}},
	}},
	// A field may occur twice in an entry (XADD keeps both): decoders
	// must keep both, in order.
	{name: "stream-repeated-field", db: 1, typ: TypeStream, key: []byte("log"), entries: []StreamEntry{
		{ID: []byte("5-1"), Fields: bs("f", "1", "f", "2")},
	}},
	// A stream emptied by XDEL or XTRIM is still a key, and expires.
	{name: "stream-empty", db: 2, typ: TypeStream, key: []byte("drained"), entries: []StreamEntry{}},
	// A hash's fields that expired on their own (type 6): frame 3 as a
	// hash's, holding only the expired fields, in the hash's order.
	{name: "hash-fields-one-field", typ: TypeHashFields, key: []byte("mail:42"), parts: bs("rcpt:2", "deferred")},
	{name: "hash-fields-several", db: 1, typ: TypeHashFields, key: []byte("mail:43"), parts: bs("rcpt:1", "sent", "rcpt:3", "bounced", "lock", "worker-7")},
	{name: "hash-fields-binary", db: 4, typ: TypeHashFields, key: b('h', 0x00, 0xff), parts: [][]byte{b(0xff, 0x00), b(0x00, 0xff, 0x80), []byte("clé"), b(0xc3, 0x28)}},
	{name: "hash-fields-empty-value", db: 65535, typ: TypeHashFields, key: []byte("meta:3"), parts: bs("note", "", "flag", "1")},
	// With a message id (expiry-zmq-message-id yes): a fourth frame.
	{name: "string-with-id", typ: TypeString, key: []byte("lock:q1"), parts: bs("1"), idAt: 1764633600123},
	{name: "hash-with-id", db: 7, typ: TypeHash, key: []byte("meta:1"), parts: bs("f1", "v1"), idAt: 1764633600123},
	{name: "hash-fields-with-id", db: 1, typ: TypeHashFields, key: []byte("mail:43"), parts: bs("rcpt:1", "sent"), idAt: 1},
}

// vectorFile is the JSON document; its field order is the file's.
type vectorFile struct {
	ByteOrder string   `json:"byte_order"`
	Vectors   []vector `json:"vectors"`
}

type vector struct {
	Name       string      `json:"name"`
	DB         int         `json:"db"`
	Type       Type        `json:"type"`
	TypeName   string      `json:"type_name"`
	KeyHex     string      `json:"key_hex"`
	ValueHex   *string     `json:"value_hex,omitempty"`
	FieldsHex  [][2]string `json:"fields_hex,omitempty"`
	MembersHex []string    `json:"members_hex,omitempty"`
	Pairs      [][2]string `json:"pairs,omitempty"`
	// Entries is a stream's value: present, possibly empty, for a stream
	// only.
	Entries      *[]vectorEntry `json:"entries,omitempty"`
	ValueGen     *valueGen      `json:"value_gen,omitempty"`
	FieldsGen    *fieldsGen     `json:"fields_gen,omitempty"`
	FramesHex    [3]*string     `json:"frames_hex"`
	Frame3Len    *int           `json:"frame3_len,omitempty"`
	Frame3SHA256 string         `json:"frame3_sha256,omitempty"`
	// MessageIDAt and MessageID: the time a message id is made of and
	// the id (frame 4), for the vectors that carry one.
	MessageIDAt *int64  `json:"message_id_at,omitempty"`
	MessageID   *string `json:"message_id,omitempty"`
}

// vectorEntry is one stream entry: its ID as text, its fields and values
// as [field, value] pairs in hex (always an array, possibly empty).
type vectorEntry struct {
	ID        string      `json:"id"`
	FieldsHex [][2]string `json:"fields_hex"`
}

type valueGen struct {
	Len int `json:"len"`
}

type fieldsGen struct {
	Count int `json:"count"`
}

// genValue is value_gen's string: byte i is i % 251.
func genValue(n int) []byte {
	v := make([]byte, n)
	for i := range v {
		v[i] = byte(i % 251)
	}
	return v
}

// genFields is fields_gen's hash: field i "field:<i>", value i "value:<i>".
func genFields(count int) [][]byte {
	parts := make([][]byte, 0, 2*count)
	for i := 0; i < count; i++ {
		parts = append(parts, []byte("field:"+strconv.Itoa(i)), []byte("value:"+strconv.Itoa(i)))
	}
	return parts
}

func hexPtr(b []byte) *string {
	s := hex.EncodeToString(b)
	return &s
}

// buildVector encodes a spec and describes it in the file's schema.
func buildVector(s vectorSpec) vector {
	v := vector{Name: s.name, DB: s.db, Type: s.typ, TypeName: s.typ.String(), KeyHex: hex.EncodeToString(s.key)}
	parts := s.parts
	switch {
	case s.valueGen > 0:
		parts = [][]byte{genValue(s.valueGen)}
		v.ValueGen = &valueGen{Len: s.valueGen}
	case s.fieldsGen > 0:
		parts = genFields(s.fieldsGen)
		v.FieldsGen = &fieldsGen{Count: s.fieldsGen}
	case s.typ == TypeString:
		v.ValueHex = hexPtr(parts[0])
	case s.typ == TypeHash || s.typ == TypeHashFields:
		for i := 0; i < len(parts); i += 2 {
			v.FieldsHex = append(v.FieldsHex, [2]string{hex.EncodeToString(parts[i]), hex.EncodeToString(parts[i+1])})
		}
	case s.typ == TypeList || s.typ == TypeSet:
		for _, p := range parts {
			v.MembersHex = append(v.MembersHex, hex.EncodeToString(p))
		}
	case s.typ == TypeZSet:
		for i := 0; i < len(parts); i += 2 {
			v.Pairs = append(v.Pairs, [2]string{hex.EncodeToString(parts[i]), string(parts[i+1])})
		}
	case s.typ == TypeStream:
		entries := []vectorEntry{}
		for _, e := range s.entries {
			ve := vectorEntry{ID: string(e.ID), FieldsHex: [][2]string{}}
			for i := 0; i < len(e.Fields); i += 2 {
				ve.FieldsHex = append(ve.FieldsHex, [2]string{hex.EncodeToString(e.Fields[i]), hex.EncodeToString(e.Fields[i+1])})
			}
			entries = append(entries, ve)
		}
		v.Entries = &entries
	}
	var frames [3][]byte
	if s.typ == TypeStream {
		frames = EncodeStream(s.db, s.key, s.entries)
	} else {
		frames = Encode(s.db, s.typ, s.key, parts)
	}
	v.FramesHex[0], v.FramesHex[1] = hexPtr(frames[0]), hexPtr(frames[1])
	if s.valueGen > 0 || s.fieldsGen > 0 {
		n, sum := len(frames[2]), sha256.Sum256(frames[2])
		v.Frame3Len, v.Frame3SHA256 = &n, hex.EncodeToString(sum[:])
	} else {
		v.FramesHex[2] = hexPtr(frames[2])
	}
	if s.idAt > 0 {
		id := string(AppendMessageID(nil, s.idAt, frames[0], frames[1]))
		v.MessageIDAt, v.MessageID = &s.idAt, &id
	}
	return v
}

// renderVectorFile is the vector file exactly as it must be committed.
func renderVectorFile() []byte {
	doc := vectorFile{ByteOrder: "little"}
	for _, s := range vectorSpecs {
		doc.Vectors = append(doc.Vectors, buildVector(s))
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(out, '\n')
}

// TestVectorFile checks that the committed file is what the encoder
// produces from vectorSpecs (or rewrites it with -update-vectors).
func TestVectorFile(t *testing.T) {
	requireLittleEndian(t)
	want := renderVectorFile()
	if *updateVectors {
		require.NoError(t, os.WriteFile(vectorPath, want, 0o644))
	}
	got, err := os.ReadFile(vectorPath)
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got), "%s is stale: run go test ./zmqpub -run TestVectorFile -update-vectors", vectorPath)
}

// TestVectorFileAsAReaderSeesIt reads the committed file the way the Perl
// and Python tests do, from its JSON alone: it rebuilds each value from its
// hex or generated form and checks the frames, and checks that Decode takes
// the frames back apart into the same value.
func TestVectorFileAsAReaderSeesIt(t *testing.T) {
	requireLittleEndian(t)
	raw, err := os.ReadFile(vectorPath)
	require.NoError(t, err)
	var doc vectorFile
	require.NoError(t, json.Unmarshal(raw, &doc))
	require.Equal(t, "little", doc.ByteOrder)

	names := map[string]bool{}
	for _, v := range doc.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			names[v.Name] = true
			assert.Equal(t, v.Type.String(), v.TypeName)
			key := mustHex(t, v.KeyHex)
			var frames [3][]byte
			want := Decoded{DB: v.DB, Type: v.Type, Key: key}
			if v.Type == TypeStream {
				want.Entries = vectorEntries(t, v)
				frames = EncodeStream(v.DB, key, want.Entries)
			} else {
				want.Parts = vectorParts(t, v)
				frames = Encode(v.DB, v.Type, key, want.Parts)
			}
			assert.Equal(t, *v.FramesHex[0], hex.EncodeToString(frames[0]))
			assert.Equal(t, *v.FramesHex[1], hex.EncodeToString(frames[1]))
			if v.FramesHex[2] != nil {
				assert.Equal(t, *v.FramesHex[2], hex.EncodeToString(frames[2]))
				assert.Nil(t, v.Frame3Len)
			} else {
				require.NotNil(t, v.Frame3Len, "frame3_len with a generated value")
				assert.Equal(t, *v.Frame3Len, len(frames[2]))
				sum := sha256.Sum256(frames[2])
				assert.Equal(t, v.Frame3SHA256, hex.EncodeToString(sum[:]))
			}

			d, err := Decode(frames[:])
			require.NoError(t, err)
			assert.Equal(t, want, d)

			require.Equal(t, v.MessageIDAt == nil, v.MessageID == nil, "message_id_at and message_id go together")
			if v.MessageID != nil {
				id := AppendMessageID(nil, *v.MessageIDAt, frames[0], frames[1])
				assert.Equal(t, *v.MessageID, string(id))
				d, err := Decode([][]byte{frames[0], frames[1], frames[2], id})
				require.NoError(t, err)
				want.ID = id
				assert.Equal(t, want, d)
			}
		})
	}
	for _, required := range []string{"string-empty", "string-binary", "hash-one-field", "hash-10000-fields",
		"string-10mb", "string-db15", "list", "set", "zset", "hash-empty-value", "stream", "stream-empty",
		"hash-fields-one-field", "hash-fields-several", "hash-fields-binary", "hash-fields-empty-value",
		"string-with-id", "hash-with-id", "hash-fields-with-id"} {
		assert.True(t, names[required], "vector %s", required)
	}
}

// vectorParts rebuilds Encode's parts from the one value form v carries.
func vectorParts(t *testing.T, v vector) [][]byte {
	forms := 0
	var parts [][]byte
	if v.ValueHex != nil {
		forms++
		parts = [][]byte{mustHex(t, *v.ValueHex)}
	}
	if v.FieldsHex != nil {
		forms++
		for _, fv := range v.FieldsHex {
			parts = append(parts, mustHex(t, fv[0]), mustHex(t, fv[1]))
		}
	}
	if v.MembersHex != nil {
		forms++
		for _, m := range v.MembersHex {
			parts = append(parts, mustHex(t, m))
		}
	}
	if v.Pairs != nil {
		forms++
		for _, p := range v.Pairs {
			parts = append(parts, mustHex(t, p[0]), []byte(p[1]))
		}
	}
	if v.ValueGen != nil {
		forms++
		parts = [][]byte{genValue(v.ValueGen.Len)}
	}
	if v.FieldsGen != nil {
		forms++
		parts = genFields(v.FieldsGen.Count)
	}
	require.Nil(t, v.Entries, "entries in vector %s of type %s", v.Name, v.Type)
	require.Equal(t, 1, forms, "value forms in vector %s", v.Name)
	return parts
}

// vectorEntries rebuilds EncodeStream's entries from a stream vector,
// which carries entries and no other value form.
func vectorEntries(t *testing.T, v vector) []StreamEntry {
	require.NotNil(t, v.Entries, "entries in stream vector %s", v.Name)
	require.True(t, v.ValueHex == nil && v.FieldsHex == nil && v.MembersHex == nil && v.Pairs == nil &&
		v.ValueGen == nil && v.FieldsGen == nil, "other value forms in stream vector %s", v.Name)
	entries := []StreamEntry{}
	for _, ve := range *v.Entries {
		require.NotNil(t, ve.FieldsHex, "fields_hex of entry %s", ve.ID)
		e := StreamEntry{ID: []byte(ve.ID), Fields: [][]byte{}}
		for _, fv := range ve.FieldsHex {
			e.Fields = append(e.Fields, mustHex(t, fv[0]), mustHex(t, fv[1]))
		}
		entries = append(entries, e)
	}
	return entries
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	out, err := hex.DecodeString(s)
	require.NoError(t, err)
	return out
}
