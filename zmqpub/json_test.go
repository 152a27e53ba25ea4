package zmqpub

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func bs(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

func TestAppendJSON(t *testing.T) {
	tests := []struct {
		name string
		d    Decoded
		want string
	}{
		{
			"string",
			Decoded{DB: 0, Type: TypeString, Key: []byte("k"), Parts: bs("hello")},
			`{"db":0,"type":"string","key":"k","value":"hello"}`,
		},
		{
			"empty string and key",
			Decoded{DB: 15, Type: TypeString, Key: []byte{}, Parts: bs("")},
			`{"db":15,"type":"string","key":"","value":""}`,
		},
		{
			"escapes",
			Decoded{Type: TypeString, Key: []byte("a\"b\\c"), Parts: bs("\n\r\t\b\f\x00\x1f\x7f</>&")},
			`{"db":0,"type":"string","key":"a\"b\\c","value":"\n\r\t\b\f\u0000\u001f\u007f</>&"}`,
		},
		{
			"UTF-8 written as is",
			Decoded{Type: TypeString, Key: []byte("clé"), Parts: bs("naïve ☃ 😀 \u2028\u2029")},
			"{\"db\":0,\"type\":\"string\",\"key\":\"clé\",\"value\":\"naïve ☃ 😀 \u2028\u2029\"}",
		},
		{
			"binary key and value as base64",
			Decoded{Type: TypeString, Key: b(0, 'k', 0xff), Parts: [][]byte{b(0xff, 0, 1)}},
			`{"db":0,"type":"string","key":{"base64":"AGv/"},"value":{"base64":"/wAB"}}`,
		},
		{
			"truncated UTF-8 sequence is binary",
			Decoded{Type: TypeString, Key: []byte("k"), Parts: [][]byte{b(0xe2, 0x98)}},
			`{"db":0,"type":"string","key":"k","value":{"base64":"4pg="}}`,
		},
		{
			"hash as an object in message order",
			Decoded{DB: 3, Type: TypeHash, Key: []byte("h"), Parts: bs("z", "1", "a", "", "m", "x")},
			`{"db":3,"type":"hash","key":"h","value":{"z":"1","a":"","m":"x"}}`,
		},
		{
			"hash with a binary value",
			Decoded{Type: TypeHash, Key: []byte("h"), Parts: [][]byte{[]byte("f"), b(0xff)}},
			`{"db":0,"type":"hash","key":"h","value":{"f":{"base64":"/w=="}}}`,
		},
		{
			"hash with a binary field name",
			Decoded{Type: TypeHash, Key: []byte("h"), Parts: [][]byte{[]byte("f"), []byte("v"), b(0xff), []byte("w")}},
			`{"db":0,"type":"hash","key":"h","value":{"f":"v","base64:/w==":"w"}}`,
		},
		{
			"empty hash",
			Decoded{Type: TypeHash, Key: []byte("h"), Parts: [][]byte{}},
			`{"db":0,"type":"hash","key":"h","value":{}}`,
		},
		{
			"hash-fields as a hash's object",
			Decoded{Type: TypeHashFields, Key: []byte("mail:42"), Parts: bs("rcpt:2", "deferred")},
			`{"db":0,"type":"hash-fields","key":"mail:42","value":{"rcpt:2":"deferred"}}`,
		},
		{
			"hash-fields with binary field and value, an empty value",
			Decoded{DB: 5, Type: TypeHashFields, Key: []byte("h"), Parts: [][]byte{b(0xff), b(0x00, 0xfe), []byte("note"), {}}},
			`{"db":5,"type":"hash-fields","key":"h","value":{"base64:/w==":{"base64":"AP4="},"note":""}}`,
		},
		{
			"list",
			Decoded{Type: TypeList, Key: []byte("l"), Parts: [][]byte{[]byte("a"), []byte("a"), b(0x80)}},
			`{"db":0,"type":"list","key":"l","value":["a","a",{"base64":"gA=="}]}`,
		},
		{
			"set",
			Decoded{Type: TypeSet, Key: []byte("s"), Parts: bs("m1", "m2")},
			`{"db":0,"type":"set","key":"s","value":["m1","m2"]}`,
		},
		{
			"empty set",
			Decoded{Type: TypeSet, Key: []byte("s")},
			`{"db":0,"type":"set","key":"s","value":[]}`,
		},
		{
			"zset scores",
			Decoded{Type: TypeZSet, Key: []byte("z"), Parts: bs(
				"a", "-inf", "b", "-1.5", "c", "0", "d", "1e+300", "e", "0.10000000000000001", "f", "inf")},
			`{"db":0,"type":"zset","key":"z","value":[["a","-inf"],["b",-1.5],["c",0],["d",1e+300],["e",0.10000000000000001],["f","inf"]]}`,
		},
		{
			"zset scores outside JSON number syntax",
			Decoded{Type: TypeZSet, Key: []byte("z"), Parts: bs(
				"a", "+1", "b", ".5", "c", "nan", "d", "1e999", "e", "1.", "f", "abc", "g", "0x1p4", "h", "1e-999", "i", "\xff")},
			`{"db":0,"type":"zset","key":"z","value":[["a","+1"],["b",".5"],["c","nan"],["d","1e999"],["e","1."],["f","abc"],["g","0x1p4"],["h",1e-999],["i",{"base64":"/w=="}]]}`,
		},
		{
			"stream as XRANGE replies, fields in entry order",
			Decoded{DB: 4, Type: TypeStream, Key: []byte("events"), Entries: []StreamEntry{
				{ID: []byte("1700000000000-0"), Fields: bs("z", "1", "a", "")},
				{ID: []byte("1700000000000-2"), Fields: [][]byte{[]byte("f"), []byte("x"), []byte("f"), b(0xff)}},
			}},
			`{"db":4,"type":"stream","key":"events","value":[["1700000000000-0",["z","1","a",""]],["1700000000000-2",["f","x","f",{"base64":"/w=="}]]]}`,
		},
		{
			"empty stream",
			Decoded{Type: TypeStream, Key: []byte("s"), Entries: []StreamEntry{}},
			`{"db":0,"type":"stream","key":"s","value":[]}`,
		},
		{
			"stream entry without fields",
			Decoded{Type: TypeStream, Key: []byte("s"), Entries: []StreamEntry{{ID: []byte("1-1")}}},
			`{"db":0,"type":"stream","key":"s","value":[["1-1",[]]]}`,
		},
		{
			"unknown type as an array",
			Decoded{DB: 1, Type: Type(9), Key: []byte("k"), Parts: bs("x")},
			`{"db":1,"type":"type(9)","key":"k","value":["x"]}`,
		},
		{
			"string with two parts as an array",
			Decoded{Type: TypeString, Key: []byte("k"), Parts: bs("x", "y")},
			`{"db":0,"type":"string","key":"k","value":["x","y"]}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := AppendJSON([]byte("prefix "), tc.d)
			require.Equal(t, "prefix "+tc.want+"\n", string(got))
			assert.True(t, json.Valid(got[len("prefix "):]), "valid JSON")
		})
	}
}

// TestAppendJSONReadsBack parses the output with encoding/json and checks
// that every byte string comes back as it went in.
func TestAppendJSONReadsBack(t *testing.T) {
	d := Decoded{DB: 2, Type: TypeHash, Key: b(0, 0xff), Parts: [][]byte{
		[]byte("f\u2028\"\\"), b(0xc3, 0x28), []byte("g"), []byte("ünïcode\x01"), b(0xfe), []byte("x"),
	}}
	var got struct {
		DB    int                        `json:"db"`
		Type  string                     `json:"type"`
		Key   map[string][]byte          `json:"key"`
		Value map[string]json.RawMessage `json:"value"`
	}
	require.NoError(t, json.Unmarshal(AppendJSON(nil, d), &got))
	assert.Equal(t, 2, got.DB)
	assert.Equal(t, "hash", got.Type)
	assert.Equal(t, b(0, 0xff), got.Key["base64"])
	assert.JSONEq(t, `{"base64":"wyg="}`, string(got.Value["f\u2028\"\\"]))
	assert.JSONEq(t, `"ünïcode\u0001"`, string(got.Value["g"]))
	assert.JSONEq(t, `"x"`, string(got.Value["base64:/g=="]))
}

// FuzzJSONString checks the string writer against encoding/json: valid
// UTF-8 reads back unchanged, anything else reads back from base64.
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"", "a", "\"\\/", "\x00\x1f\x7f", "\u2028\u2029", "é☃😀", "\xff", "\xe2\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		out := appendJSONBytes(nil, s)
		require.True(t, json.Valid(out), "%q gave %s", s, out)
		if utf8.Valid(s) {
			var back string
			require.NoError(t, json.Unmarshal(out, &back))
			require.Equal(t, string(s), back)
			require.False(t, strings.ContainsAny(string(out), "\x00\n\r\x7f"), "control characters escaped")
			return
		}
		var back struct{ Base64 []byte }
		require.NoError(t, json.Unmarshal(out, &back))
		require.Equal(t, s, back.Base64)
	})
}

func BenchmarkAppendJSONHash100(b *testing.B) {
	d := Decoded{Type: TypeHash, Key: []byte("meta:12345"), Parts: benchHash()}
	var line []byte
	b.ReportAllocs()
	for b.Loop() {
		line = AppendJSON(line[:0], d)
	}
}
