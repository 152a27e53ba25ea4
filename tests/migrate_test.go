package tests

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// MIGRATE from redis-server to zredis and from zredis to redis-server:
// the replies of the source are the same either way, and the keys arrive
// with their values and deadlines.
func TestMigrateDifferential(t *testing.T) {
	RequireRedis(t)
	replies := map[string][]string{}
	for _, pair := range [][2]string{{"redis", "zredis"}, {"zredis", "redis"}} {
		src, dst := StartServer(t, pair[0]), StartServer(t, pair[1])
		sc, dc := Dial(t, src.Addr), Dial(t, dst.Addr)
		host, port := "127.0.0.1", strconv.Itoa(dst.Port)
		closed := strconv.Itoa(FreePort(t))
		var got []string
		do := func(c *Conn, args ...string) { got = append(got, c.Do(args...)) }
		do(sc, "SET", "k", "v", "EX", "100")
		do(sc, "RPUSH", "l", "a", "b", "c")
		do(sc, "HSET", "h", "f", "v")
		do(sc, "SADD", "s", "1", "2")
		do(sc, "MIGRATE", host, port, "k", "0", "5000")
		do(sc, "EXISTS", "k")
		do(dc, "GET", "k")
		ttl := dc.Do("TTL", "k")
		if n, _ := strconv.Atoi(strings.Trim(ttl, ":\r\n")); n < 90 || n > 100 {
			t.Errorf("%s to %s: TTL after MIGRATE %q", pair[0], pair[1], ttl)
		}
		do(sc, "MIGRATE", host, port, "", "0", "5000", "KEYS", "l", "h", "nokey")
		do(dc, "LRANGE", "l", "0", "-1")
		do(dc, "HGETALL", "h")
		do(sc, "MIGRATE", host, port, "nokey", "0", "5000")
		do(sc, "MIGRATE", host, port, "s", "3", "5000", "COPY")
		do(sc, "SMEMBERS", "s")
		do(dc, "SELECT", "3")
		do(dc, "SMEMBERS", "s")
		do(sc, "MIGRATE", host, port, "s", "3", "5000")
		do(sc, "SMEMBERS", "s")
		do(sc, "SADD", "s", "9")
		do(sc, "MIGRATE", host, port, "s", "3", "5000", "REPLACE")
		do(dc, "SMEMBERS", "s")
		do(sc, "SET", "a", "1")
		do(sc, "MIGRATE", host, port, "a", "0", "5000", "AUTH", "nopass")
		do(sc, "MIGRATE", host, port, "a", "0", "5000", "AUTH2", "nouser", "nopass")
		do(sc, "MIGRATE", host, closed, "a", "0", "500")
		do(sc, "MIGRATE", host, port, "a", "0", "5000", "KEYS", "a")
		do(sc, "MIGRATE", host, port, "a", "0", "5000", "AUTH")
		do(sc, "MIGRATE", host, port, "a", "0", "5000", "BOGUS")
		do(sc, "MIGRATE", host, port, "a", "x", "5000")
		do(sc, "MIGRATE", host, port, "a", "0", "x")
		do(sc, "MIGRATE", host, port, "a", "99", "5000")
		do(sc, "SET", "big", "1")
		do(sc, "MIGRATE", host, port, "big", "0", "9223372036854775807")
		do(dc, "SELECT", "0")
		do(dc, "GET", "big")
		do(sc, "EXISTS", "a")
		do(sc, "COMMAND", "GETKEYS", "MIGRATE", host, port, "", "0", "5", "COPY", "AUTH", "p", "KEYS", "x", "y")
		// The connection to the target is kept for the next MIGRATE
		// (and one more for the closed port's failure to leave none):
		// the target saw as many connections from either source.
		got = append(got, "cached "+infoField(t, sc, "stats", "migrate_cached_sockets"),
			"target connections "+infoField(t, dc, "stats", "total_connections_received"))
		replies[pair[0]] = got
	}
	if !reflect.DeepEqual(replies["redis"], replies["zredis"]) {
		for i := range replies["redis"] {
			if i < len(replies["zredis"]) && replies["redis"][i] != replies["zredis"][i] {
				t.Errorf("reply %d: redis %q, zredis %q", i, replies["redis"][i], replies["zredis"][i])
			}
		}
	}
}
