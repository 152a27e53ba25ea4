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
