package commands

import (
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/resp"
	"github.com/zredis/zredis/sds"
)

// Sorted set commands: ZSCAN (Redis t_zset.c).
func init() {
	register(
		&engine.Command{Name: "zscan", Arity: -3, Flags: engine.ReadOnly, ACL: "@read @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zscanCommand},
	)
}

// zscanCommand is ZSCAN key cursor [MATCH pattern] [COUNT count]. A
// small (listpack) set is returned whole with cursor 0, as Redis does. A
// large one is walked in the order of its members' hash positions and the
// cursor is the position reached (ZSet.Scan), so a member present for the
// whole scan is returned at least once while the set grows or shrinks.
func zscanCommand(c *engine.Ctx) {
	cursor, z, o, ok := beginScan(c, zsetRead)
	if !ok {
		return
	}
	var out [][]byte
	next := z.Scan(cursor, int(o.count), func(m []byte, s float64) {
		if o.pattern == nil || sds.Match(o.pattern, m, false) {
			out = append(out, m, resp.AppendDouble(nil, s))
		}
	})
	writeScanReply(c, next, out)
}
