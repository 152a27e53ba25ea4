package engine

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Lookup matches names as Redis's strcasecmp does, ASCII letters in
// either case, renamed names of any length included, and turns away a
// name longer than any command without allocating.
func TestTableLookup(t *testing.T) {
	tbl := NewTable()
	get, cfg := &Command{Name: "get"}, &Command{Name: "config"}
	tbl.Register(get, cfg)

	assert.Same(t, get, tbl.Lookup([]byte("GeT")))
	assert.Nil(t, tbl.Lookup([]byte("gets")))
	long := bytes.Repeat([]byte{0xe9}, 60<<10)
	assert.Zero(t, testing.AllocsPerRun(10, func() { tbl.Lookup(long) }), "a long name is not lowered")
	assert.Nil(t, tbl.Lookup(long))

	// rename-command to a 40-character name, as operators hide CONFIG,
	// and to a name with a byte that is not ASCII, which only its own
	// case of that byte matches.
	r, err := tbl.Renamed([][2]string{{"CONFIG", "B840FC02D524045429941CC15F59E41CB7BE6C52"}, {"get", "\xc3\x89x"}})
	require.NoError(t, err)
	assert.Nil(t, r.Lookup([]byte("config")))
	assert.Same(t, cfg, r.Lookup([]byte("b840fc02d524045429941cc15f59e41cb7be6c52")))
	assert.Same(t, cfg, r.Lookup([]byte("B840fc02d524045429941cc15f59e41cb7be6C52")))
	assert.Same(t, get, r.Lookup([]byte("\xc3\x89X")))
	assert.Nil(t, r.Lookup([]byte("\xc3\xa9x")), "é is not É to strcasecmp")
	assert.Same(t, get, tbl.Lookup([]byte("get")), "the table renamed from is unchanged")
}

// BenchmarkTableLookup is dispatch's lookup of a command name.
func BenchmarkTableLookup(b *testing.B) {
	tbl := NewTable()
	for _, n := range []string{"get", "set", "hgetall", "zrangebyscore", "xreadgroup"} {
		tbl.Register(&Command{Name: n})
	}
	names := [][]byte{[]byte("GET"), []byte("set"), []byte("HGETALL"), []byte("zrangebyscore"), []byte("XREADGROUP")}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if tbl.Lookup(names[i%len(names)]) == nil {
			b.Fatal("not found")
		}
	}
}
