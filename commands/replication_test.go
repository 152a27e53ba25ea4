package commands

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/engine"
)

// The argument checks of the replication commands, made before the
// server is asked anything (the replication itself is tested end to end
// in tests/replication_test.go).
func TestReplicationArguments(t *testing.T) {
	runSteps(t, []step{
		{argv("REPLCONF", "listening-port"), replyErr(engine.ErrSyntax)},
		{argv("REPLCONF", "listening-port", "x"), replyErr(engine.ErrNotInteger)},
		{argv("REPLCONF", "nosuch", "1"), replyErr("ERR Unrecognized REPLCONF option: nosuch")},
		{argv("REPLCONF", "rdb-only", "2"), replyErr("ERR value is out of range, value must between 0 and 1")},
		{argv("REPLCONF", "rdb-only", "x"), replyErr(engine.ErrNotInteger)},
		{argv("REPLCONF", "ip-address", strings.Repeat("a", 300)), replyErr("ERR REPLCONF ip-address provided by replica instance is too long: 300 bytes")},
		{argv("REPLCONF"), replySimple("OK")},
		{argv("REPLCONF", "ACK", "10"), ""}, // not a replica: ignored, no reply
		{argv("REPLCONF", "GETACK", "*"), ""},
		{argv("WAIT", "x", "0"), replyErr(engine.ErrNotInteger)},
		{argv("WAIT", "1", "x"), replyErr(engine.ErrTimeoutNotInt)},
		{argv("WAIT", "1", "-1"), replyErr(engine.ErrTimeoutNegative)},
		{argv("PSYNC", "?", "x"), replyErr(engine.ErrNotInteger)},
		{argv("MULTI"), replySimple("OK")},
		{argv("SYNC"), replyErr("ERR Command not allowed inside a transaction")},
		{argv("DISCARD"), replySimple("OK")},
	})
}

// REPLCONF rdb-filter-only <filters> (Redis 7.0 replconfCommand): the
// value is split as sdssplitargs splits it; "functions" is the only
// filter, in any case and any number of times; "" asks for no keys and
// no functions. A rejected list still applies what came before the bad
// filter, as in Redis. Redis reads the value, and prints a bad filter,
// as C strings: a NUL byte ends them.
func TestReplconfRDBFilter(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value string
		reply string
		set   []bool // what reached the server: with the functions?
	}{
		{"empty", "", replyOK, []bool{false}},
		{"blanks", " \t ", replyOK, []bool{false}},
		{"functions", "functions", replyOK, []bool{true}},
		{"upper case", "FUNCTIONS", replyOK, []bool{true}},
		{"twice", "functions Functions", replyOK, []bool{true}},
		{"double quotes", `"functions"`, replyOK, []bool{true}},
		{"single quotes", "'functions' ", replyOK, []bool{true}},
		{"unknown", "keys", replyErr("ERR Unsupported rdb-filter-only option: keys"), []bool{false}},
		{"unicode folding", "functionſ", replyErr("ERR Unsupported rdb-filter-only option: functionſ"), []bool{false}},
		{"unknown after", "functions keys", replyErr("ERR Unsupported rdb-filter-only option: keys"), []bool{true}},
		{"unknown before", "keys functions", replyErr("ERR Unsupported rdb-filter-only option: keys"), []bool{false}},
		{"backslash unquoted", `functions\x41`, replyErr(`ERR Unsupported rdb-filter-only option: functions\x41`), []bool{false}},
		{"escape quoted", `"function\x73"`, replyOK, []bool{true}},
		{"NUL escape printed", `"ab\x00cd"`, replyErr("ERR Unsupported rdb-filter-only option: ab"), []bool{false}},
		{"NUL ends the value", "functions\x00keys", replyOK, []bool{true}},
		{"NUL after unknown", "keys\x00functions", replyErr("ERR Unsupported rdb-filter-only option: keys"), []bool{false}},
		{"unbalanced double", `"functions`, replyErr("ERR Missing rdb-filter-only values"), nil},
		{"unbalanced single", `'functions`, replyErr("ERR Missing rdb-filter-only values"), nil},
		{"quote then text", `"functions"x`, replyErr("ERR Missing rdb-filter-only values"), nil},
		{"NUL inside quotes", "\"functions\x00\"", replyErr("ERR Missing rdb-filter-only values"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			assert.Equal(t, tc.reply, e.run("REPLCONF", "rdb-filter-only", tc.value))
			assert.Equal(t, tc.set, e.Srv.rdbFilters)
		})
	}
}

// REPLCONF rdb-filter-only applies among the other options, in order;
// SYNC and PSYNC refuse a filtered replica that did not say capa eof,
// before they look at PSYNC's offset.
func TestReplconfRDBFilterSync(t *testing.T) {
	e := runSteps(t, []step{
		{argv("SYNC", "x"), replyErr(engine.ErrWrongArgs("sync"))},
		{argv("REPLCONF", "rdb-only", "1", "rdb-filter-only", "functions", "nosuch", "x"), replyErr("ERR Unrecognized REPLCONF option: nosuch")},
		{argv("SYNC"), replyErr("ERR Filtered replica requires EOF capability")},
		{argv("PSYNC", "?", "x"), replyErr("ERR Filtered replica requires EOF capability")},
		{argv("REPLCONF", "capa", "eof", "rdb-filter-only", ""), replyOK},
		{argv("PSYNC", "?", "x"), replyErr(engine.ErrNotInteger)},
	})
	require.Equal(t, []bool{true, false}, e.Srv.rdbFilters)
	assert.Equal(t, []string{"eof"}, e.Srv.capas)
}
