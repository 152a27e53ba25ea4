package engine

import "testing"

// namesField picks the hash commands whose argument 2 is a field they
// look up, in any case, and nothing else.
func TestNamesField(t *testing.T) {
	for _, name := range []string{"HSET", "hget", "HSetNX", "hincrby", "HEXISTS", "hdel", "HStrLen", "HMGET", "hmset"} {
		if !namesField([]byte(name)) {
			t.Errorf("namesField(%q) = false", name)
		}
	}
	for _, name := range []string{"", "h", "HLEN", "HGETALL", "HKEYS", "HSCAN", "HINCRBYFLOAT", "SET", "GET"} {
		if namesField([]byte(name)) {
			t.Errorf("namesField(%q) = true", name)
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
