package commands

import (
	"strings"
	"testing"

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
