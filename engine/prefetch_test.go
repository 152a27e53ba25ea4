package engine

import "testing"

// elementArg picks the hash, set and sorted set commands that look up
// an element, in any case, and the argument that names it; nothing
// else.
func TestElementArg(t *testing.T) {
	for _, name := range []string{"HSET", "hget", "HSetNX", "hincrby", "HEXISTS", "hdel", "HStrLen", "HMGET", "hmset",
		"SADD", "srem", "SIsMember", "SMISMEMBER", "zscore", "ZMSCORE", "zrank", "ZREVRANK", "ZRem"} {
		if got := elementArg([]byte(name), 4); got != 2 {
			t.Errorf("elementArg(%q, 4) = %d, want 2", name, got)
		}
	}
	for _, name := range []string{"ZADD", "zincrby"} {
		if got := elementArg([]byte(name), 6); got != 5 {
			t.Errorf("elementArg(%q, 6) = %d, want 5", name, got)
		}
	}
	for _, name := range []string{"", "h", "s", "z", "HLEN", "HGETALL", "HKEYS", "HSCAN", "HINCRBYFLOAT", "SET", "GET",
		"SCARD", "SMEMBERS", "SMOVE", "SPOP", "SINTERSTORE", "SSCAN", "ZCARD", "ZRANGE", "ZRANGEBYSCORE", "ZPOPMIN", "ZSCAN"} {
		if got := elementArg([]byte(name), 4); got != 0 {
			t.Errorf("elementArg(%q, 4) = %d, want 0", name, got)
		}
	}
}

// keysEvery picks the commands Prefetch loads every key of, and how
// their keys are spaced.
func TestKeysEvery(t *testing.T) {
	for name, want := range map[string]int{"MSET": 2, "msetnx": 2, "MGet": 1, "del": 1, "UNLINK": 1, "exists": 1, "touch": 1,
		"": 0, "SET": 0, "GET": 0, "MIGRATE": 0, "HSET": 0, "DELEX": 0, "EXPIRE": 0} {
		if got := keysEvery([]byte(name)); got != want {
			t.Errorf("keysEvery(%q) = %d, want %d", name, got, want)
		}
	}
}
