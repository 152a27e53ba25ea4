package metadata

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/resp"
)

func TestEmbeddedFile(t *testing.T) {
	f := Load()
	require.True(t, strings.HasPrefix(f.Version, "7.0."), f.Version)
	assert.Equal(t, "keyspace", f.Categories[0])
	assert.Len(t, f.Categories, 21)
	assert.Greater(t, len(f.Commands), 300)
	for _, name := range f.Names() {
		e := f.Commands[name]
		assert.Equal(t, name, e.Name)
		assert.Zero(t, e.Docs.Kind, "%s: Load decoded the docs", name)
		docs := DocsOf(name)
		require.NotNil(t, docs, name)
		for _, key := range []string{"summary", "since", "group"} {
			assert.NotNil(t, docs.Get(key), "%s: docs without %s", name, key)
		}
		assert.Nil(t, docs.Get("subcommands"), name)
		assert.Len(t, e.Specs, len(e.KeySpecs.Elems), name)
		if i := strings.IndexByte(name, '|'); i >= 0 {
			assert.NotNil(t, f.Commands[name[:i]], "%s without its container", name)
		}
	}
}

func TestGet(t *testing.T) {
	get := Get("get")
	require.NotNil(t, get)
	assert.Equal(t, 2, get.Arity)
	assert.Equal(t, []string{"readonly", "fast"}, get.Flags)
	assert.Equal(t, "Get the value of a key", DocsOf("get").GetStr("summary"))
	assert.Equal(t, []KeySpec{{Flags: []string{"RO", "access"}, BeginSearch: "index", Index: 1,
		FindKeys: "range", LastKey: 0, KeyStep: 1}}, get.Specs)
	assert.NotNil(t, Get("config|get"))
	assert.Nil(t, Get("nosuchcommand"))
	assert.Nil(t, DocsOf("nosuchcommand"))

	z := Get("zunionstore")
	require.Len(t, z.Specs, 2)
	assert.Equal(t, KeySpec{Flags: []string{"RO", "access"}, BeginSearch: "index", Index: 2,
		FindKeys: "keynum", KeyNumIdx: 0, FirstKey: 1, KeyStep: 1}, z.Specs[1])
	assert.True(t, Get("set").Specs[0].HasFlag("variable_flags"))
	assert.Equal(t, "KEYS", Get("migrate").Specs[1].Keyword)
	assert.Equal(t, -2, Get("migrate").Specs[1].StartFrom)
}

// Every entry survives encoding and decoding unchanged, and the file
// decoded whole (Decode) holds what Load and DocsOf give.
func TestRoundTrip(t *testing.T) {
	whole, err := Decode(embedded)
	require.NoError(t, err)
	require.Len(t, whole.Commands, len(Load().Commands))
	for name, e := range Load().Commands {
		w := whole.Commands[name]
		require.NotNil(t, w, name)
		assert.Equal(t, w.Docs, *DocsOf(name), name)
		w.Docs = Node{}
		assert.Equal(t, w, e, name)
		for _, n := range []Node{e.KeySpecs, *DocsOf(name)} {
			b, err := json.Marshal(n)
			require.NoError(t, err, name)
			var back Node
			require.NoError(t, json.Unmarshal(b, &back), name)
			assert.Equal(t, n, back, name)
		}
	}
}

func TestNodeWrite(t *testing.T) {
	n := Node{Kind: Map, Elems: []Node{
		{Kind: Bulk, Str: "flags"}, {Kind: Set, Elems: []Node{{Kind: Status, Str: "RO"}}},
		{Kind: Bulk, Str: "n"}, {Kind: Int, Int: -1},
		{Kind: Bulk, Str: "list"}, {Kind: Array, Elems: []Node{{Kind: Null}}},
	}}
	w := resp.NewWriter()
	n.Write(w)
	assert.Equal(t, "*6\r\n$5\r\nflags\r\n*1\r\n+RO\r\n$1\r\nn\r\n:-1\r\n$4\r\nlist\r\n*1\r\n$-1\r\n", string(w.Bytes()))
	w = resp.NewWriter()
	w.SetProto(3)
	n.Write(w)
	assert.Equal(t, "%3\r\n$5\r\nflags\r\n~1\r\n+RO\r\n$1\r\nn\r\n:-1\r\n$4\r\nlist\r\n*1\r\n_\r\n", string(w.Bytes()))

	b, err := json.Marshal(n)
	require.NoError(t, err)
	assert.Equal(t, `["%","flags",["~+","RO"],"n",-1,"list",["*",null]]`, string(b))
	b, err = json.Marshal(Node{Kind: Array, Elems: []Node{{Kind: Status, Str: "x"}, {Kind: Set}}})
	require.NoError(t, err)
	assert.Equal(t, `["*",["+","x"],["~"]]`, string(b))
}

func TestDecodeErrors(t *testing.T) {
	for _, bad := range []string{
		`{`,
		`{"commands":{"x":{"key_specs":["~"],"docs":"nope"}}}`,
		`{"commands":{"x":{"key_specs":"nope","docs":["%"]}}}`,
		`{"commands":{"x":{"key_specs":["~"],"docs":["%","odd"]}}}`,
		`{"commands":{"x":{"key_specs":["?"],"docs":["%"]}}}`,
		`{"commands":{"x":{"key_specs":[],"docs":["%"]}}}`,
		`{"commands":{"x":{"key_specs":["~",["%"]],"docs":["%"]}}}`,
		`{"commands":{"x":{"key_specs":["~"],"docs":["%","a",["+"]]}}}`,
		`{"commands":{"x":{"key_specs":["~"],"docs":["%","a",["~+",1]]}}}`,
		`{"commands":{"x":{"key_specs":["~"],"docs":["%","a",1.5]}}}`,
	} {
		_, err := Decode([]byte(bad))
		assert.Error(t, err, bad)
	}
	for _, bad := range []string{
		`{`,
		`{"commands":{"x":{"docs":"nope"}}}`,
		`{"commands":{"x":{"docs":["%","odd"]}}}`,
		`{"commands":{"x":{"docs":["~"]}}}`,
	} {
		_, err := decodeAllDocs([]byte(bad))
		assert.Error(t, err, bad)
	}
	f, err := Decode([]byte(`{"version":"7.0.0","commands":{"x":{"arity":1,"key_specs":["~"],"docs":["%","summary","s"]}}}`))
	require.NoError(t, err)
	assert.Equal(t, "s", f.Commands["x"].Docs.GetStr("summary"))
}
