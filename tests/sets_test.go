package tests

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// Differential tests of the set family (t_set.c). Members of an intset
// come back in ascending order on both servers and are compared exactly;
// hashtable sets are compared unordered (DoSorted); random replies
// (SPOP, SRANDMEMBER) are compared by shape and checked for membership.

// setFill adds n members prefix0..prefix(n-1) to key on both servers.
func (d *Diff) setFill(key, prefix string, from, n int) {
	d.t.Helper()
	args := []string{"SADD", key}
	for i := from; i < from+n; i++ {
		args = append(args, prefix+strconv.Itoa(i))
	}
	d.Do(args...)
}

// setBulks decodes a flat array (or RESP3 set) of bulk strings.
func setBulks(t *testing.T, raw string) []string {
	t.Helper()
	lines := strings.Split(raw, "\r\n")
	if len(lines[0]) == 0 || (lines[0][0] != '*' && lines[0][0] != '~') {
		t.Fatalf("not an array: %q", raw)
	}
	n, _ := strconv.Atoi(lines[0][1:])
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, lines[2+2*i])
	}
	return out
}

func TestSetArityDiff(t *testing.T) {
	d := NewDiff(t)
	for _, args := range [][]string{
		{"SADD", "s"}, {"SREM", "s"}, {"SMOVE", "a", "b"}, {"SMOVE", "a", "b", "c", "d"},
		{"SISMEMBER", "s"}, {"SMISMEMBER", "s"}, {"SCARD"}, {"SCARD", "a", "b"},
		{"SPOP"}, {"SRANDMEMBER"}, {"SMEMBERS"}, {"SMEMBERS", "a", "b"}, {"SINTER"},
		{"SINTERCARD", "1"}, {"SINTERSTORE", "d"}, {"SUNION"}, {"SUNIONSTORE", "d"},
		{"SDIFF"}, {"SDIFFSTORE", "d"}, {"SSCAN", "s"},
		// Key extraction, SINTERCARD's movable keys included.
		{"COMMAND", "GETKEYS", "SINTERCARD", "2", "a", "b", "LIMIT", "1"},
		{"COMMAND", "GETKEYS", "SINTERCARD", "3", "a", "b"},
		{"COMMAND", "GETKEYSANDFLAGS", "SINTERCARD", "1", "a"},
		{"COMMAND", "GETKEYSANDFLAGS", "SMOVE", "a", "b", "m"},
		{"COMMAND", "GETKEYSANDFLAGS", "SDIFFSTORE", "d", "a", "b"},
		{"COMMAND", "GETKEYS", "SUNIONSTORE", "d", "a", "b"},
	} {
		d.Do(args...)
	}
}

func TestSetBasicDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("SADD", "s", "1", "2", "3", "2")
	d.Do("OBJECT", "ENCODING", "s")
	d.Do("SMEMBERS", "s")
	d.Do("SADD", "s", "-5", "100", "9223372036854775807", "-9223372036854775808")
	d.Do("SMEMBERS", "s")
	d.Do("OBJECT", "ENCODING", "s")
	d.Do("SCARD", "s")
	d.Do("SISMEMBER", "s", "100")
	d.Do("SISMEMBER", "s", "101")
	d.Do("SISMEMBER", "s", "x")
	d.Do("SISMEMBER", "s", "01")
	d.Do("SMISMEMBER", "s", "1", "x", "3", "1")
	d.Do("SMISMEMBER", "nokey", "1", "2")
	d.Do("SISMEMBER", "nokey", "1")
	d.Do("SCARD", "nokey")
	d.Do("SMEMBERS", "nokey")
	// Non-canonical integers are strings: the set becomes a hashtable.
	d.Do("SADD", "t", "1", "+2")
	d.Do("OBJECT", "ENCODING", "t")
	d.DoSorted("SMEMBERS", "t")
	d.Do("SADD", "u", "007")
	d.Do("OBJECT", "ENCODING", "u")
	d.Do("SADD", "v", "-0", "1")
	d.Do("OBJECT", "ENCODING", "v")
	d.Do("SADD", "w", "18446744073709551616")
	d.Do("OBJECT", "ENCODING", "w")
	d.Do("SADD", "s", "a", "b")
	d.Do("OBJECT", "ENCODING", "s")
	d.DoSorted("SMEMBERS", "s")
	d.Do("SREM", "s", "a", "b")
	// Redis 7.0 never converts back to intset.
	d.Do("OBJECT", "ENCODING", "s")
	d.Do("SREM", "s", "1", "1", "nope", "2")
	d.Do("SREM", "nokey", "a")
	d.DoSorted("SMEMBERS", "s")
	d.Do("SREM", "s", "3", "-5", "100", "9223372036854775807", "-9223372036854775808", "zz")
	d.Do("EXISTS", "s")
	d.Do("SADD", "x", "a")
	d.Do("SREM", "x", "a", "b")
	d.Do("EXISTS", "x")
	d.Do("TYPE", "t")
}

func TestSetIntsetLimitDiff(t *testing.T) {
	d := NewDiff(t)
	d.setFill("s", "", 0, 512)
	d.Do("OBJECT", "ENCODING", "s")
	d.Do("SMEMBERS", "s")
	d.Do("SADD", "s", "600")
	d.Do("OBJECT", "ENCODING", "s")
	d.Do("SCARD", "s")
	d.DoSorted("SMEMBERS", "s")
	// A configured limit.
	d.Do("CONFIG", "SET", "set-max-intset-entries", "3")
	defer d.DoBoth("CONFIG", "SET", "set-max-intset-entries", "512")
	d.Do("SADD", "a", "1", "2", "3")
	d.Do("OBJECT", "ENCODING", "a")
	d.Do("SADD", "a", "4")
	d.Do("OBJECT", "ENCODING", "a")
	d.Do("CONFIG", "SET", "set-max-intset-entries", "0")
	d.Do("SADD", "b", "1")
	d.Do("OBJECT", "ENCODING", "b")
}

func TestSetWrongTypeDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("SET", "str", "x")
	d.Do("SADD", "s", "a", "1")
	for _, args := range [][]string{
		{"SADD", "str", "a"}, {"SREM", "str", "a"}, {"SISMEMBER", "str", "a"},
		{"SMISMEMBER", "str", "a"}, {"SCARD", "str"}, {"SPOP", "str"}, {"SPOP", "str", "2"},
		{"SPOP", "str", "0"}, {"SRANDMEMBER", "str"}, {"SRANDMEMBER", "str", "2"},
		{"SRANDMEMBER", "str", "0"}, {"SMEMBERS", "str"}, {"SINTER", "s", "str"},
		{"SINTER", "nokey", "str"}, {"SINTERCARD", "2", "nokey", "str"},
		{"SINTERSTORE", "d", "nokey", "str"},
		{"SUNION", "s", "str"}, {"SUNIONSTORE", "d", "s", "str"}, {"SDIFF", "nokey", "str"},
		{"SDIFF", "str", "s"}, {"SDIFFSTORE", "d", "s", "str"}, {"SSCAN", "str", "0"},
		{"SMOVE", "str", "s", "a"}, {"SMOVE", "s", "str", "a"}, {"SMOVE", "nokey", "str", "a"},
		{"SMOVE", "s", "str", "nomember"},
	} {
		d.Do(args...)
	}
	d.Do("GET", "str")
	d.DoSorted("SMEMBERS", "s")
	d.Do("EXISTS", "d")
	// STORE overwrites a key of another type.
	d.Do("SUNIONSTORE", "str", "s")
	d.Do("TYPE", "str")
}

// Sets through the generic key commands: COPY is deep, RENAME keeps
// the encoding, TYPE, and a set past its deadline is gone.
func TestSetKeysDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("SADD", "i", "3", "1", "2")
	d.Do("SADD", "h", "a", "b")
	d.Do("COPY", "i", "i2")
	d.Do("COPY", "h", "h2")
	d.Do("SADD", "i2", "9")
	d.Do("SREM", "h2", "a")
	d.Do("SMEMBERS", "i")
	d.Do("SMEMBERS", "i2")
	d.DoSorted("SMEMBERS", "h")
	d.Do("SMEMBERS", "h2")
	d.Do("OBJECT", "ENCODING", "i2")
	d.Do("OBJECT", "ENCODING", "h2")
	d.Do("RENAME", "i", "j")
	d.Do("OBJECT", "ENCODING", "j")
	d.Do("TYPE", "j")
	d.Do("PEXPIREAT", "j", "1000")
	d.Do("EXISTS", "j")
	d.Do("SADD", "x", "1")
	d.Do("PEXPIRE", "x", "1")
	time.Sleep(5 * time.Millisecond)
	d.Do("SCARD", "x")
	d.Do("SADD", "x", "a")
	d.Do("TTL", "x")
	d.Do("OBJECT", "ENCODING", "x")
}

func TestSetSmoveDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("SADD", "a", "1", "2", "x")
	d.Do("SADD", "b", "2", "3")
	d.Do("SMOVE", "a", "b", "2")
	d.Do("SMOVE", "a", "b", "1")
	d.Do("SMEMBERS", "b")
	d.Do("OBJECT", "ENCODING", "b")
	d.Do("SMOVE", "a", "b", "nope")
	d.Do("SMOVE", "a", "a", "x")
	d.Do("SMOVE", "a", "a", "nope")
	d.Do("SMOVE", "nokey", "b", "1")
	d.Do("SMOVE", "a", "new", "x")
	d.Do("EXISTS", "a")
	d.Do("OBJECT", "ENCODING", "new")
	d.Do("SMOVE", "b", "newint", "3")
	d.Do("OBJECT", "ENCODING", "newint")
	d.Do("SMOVE", "b", "b2", "1")
	d.Do("SMOVE", "b", "newint", "2")
	d.Do("SMEMBERS", "newint")
	d.Do("EXISTS", "b")
	d.Do("SADD", "c", "x", "y")
	d.Do("SADD", "e", "x")
	d.Do("SMOVE", "c", "e", "x")
	d.Do("SMEMBERS", "c")
	d.Do("SMEMBERS", "e")
	// The source's TTL stays; the destination made fresh has none.
	d.Do("EXPIRE", "c", "1000")
	d.Do("SMOVE", "c", "f", "y")
	d.Do("TTL", "c")
	d.Do("TTL", "f")
}

func TestSetSpopDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("SPOP", "nokey")
	d.Do("SPOP", "nokey", "3")
	d.Do("SPOP", "nokey", "0")
	d.Do("SPOP", "nokey", "-1")
	d.Do("SPOP", "nokey", "x")
	d.Do("SPOP", "nokey", "1", "2")
	d.Do("SADD", "s", "1", "2", "3")
	d.Do("SPOP", "s", "-1")
	d.Do("SPOP", "s", "abc")
	d.Do("SPOP", "s", "1", "2")
	d.Do("SPOP", "s", "0")
	// count >= size: the whole set, ascending for an intset, key deleted.
	d.Do("SPOP", "s", "3")
	d.Do("EXISTS", "s")
	d.Do("SADD", "s", "5", "4")
	d.Do("SPOP", "s", "100")
	d.Do("EXISTS", "s")
	d.Do("SADD", "h", "a", "b", "c")
	d.DoSorted("SPOP", "h", "10")
	d.Do("EXISTS", "h")
	// A hashtable holding only integers: the whole-set reply comes from
	// a fresh intset, ascending.
	d.Do("SADD", "q", "20", "3", "a")
	d.Do("SREM", "q", "a")
	d.Do("OBJECT", "ENCODING", "q")
	d.DoSorted("SMEMBERS", "q")
	d.DoSorted("SRANDMEMBER", "q", "5")
	d.Do("SUNION", "q")
	d.Do("SPOP", "q", "5")
	// One member: the last one deletes the key.
	d.Do("SADD", "one", "z")
	d.Do("SPOP", "one")
	d.Do("EXISTS", "one")
	// Random cases: shape and membership.
	d.setFill("big", "m", 0, 100)
	d.DoLen("SPOP", "big")
	d.DoLen("SPOP", "big", "5")
	d.Do("SCARD", "big")
	d.DoLen("SPOP", "big", "90")
	d.Do("SCARD", "big")
	z := setBulks(t, d.Z.Do("SPOP", "big", "2"))
	if len(z) != 2 || z[0] == z[1] {
		t.Errorf("SPOP 2: %q", z)
	}
	d.R.Do("SPOP", "big", "2")
	d.Do("SCARD", "big")
	// SPOP's rebuild (few survivors) makes an intset again, as in Redis.
	d.setFill("ints", "", 1000, 600)
	d.Do("SADD", "ints", "x")
	d.Do("SREM", "ints", "x")
	d.Do("OBJECT", "ENCODING", "ints")
	d.DoLen("SPOP", "ints", "590")
	d.Do("SCARD", "ints")
	d.Do("OBJECT", "ENCODING", "ints")
	d.DoLen("SPOP", "ints", "3")
	d.Do("OBJECT", "ENCODING", "ints")
	// Popped members are really gone.
	d.Do("SADD", "p", "a", "b", "c", "d")
	got := setBulks(t, d.Z.Do("SPOP", "p", "2"))
	for _, m := range got {
		if d.Z.Do("SISMEMBER", "p", m) != ":0\r\n" {
			t.Errorf("SPOP returned %q but it is still a member", m)
		}
	}
}

func TestSetSrandmemberDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("SRANDMEMBER", "nokey")
	d.Do("SRANDMEMBER", "nokey", "3")
	d.Do("SRANDMEMBER", "nokey", "-3")
	d.Do("SRANDMEMBER", "nokey", "0")
	d.Do("SRANDMEMBER", "nokey", "x")
	d.Do("SRANDMEMBER", "nokey", "1", "2")
	d.Do("SADD", "s", "3", "1", "2")
	d.Do("SRANDMEMBER", "s", "abc")
	d.Do("SRANDMEMBER", "s", "-9223372036854775808")
	d.Do("SRANDMEMBER", "s", "9223372036854775808")
	d.Do("SRANDMEMBER", "s", "0")
	d.Do("SRANDMEMBER", "s", "3")
	d.Do("SRANDMEMBER", "s", "30")
	d.Do("SADD", "h", "a", "b", "c")
	d.DoSorted("SRANDMEMBER", "h", "3")
	d.DoSorted("SRANDMEMBER", "h", "4")
	d.setFill("big", "m", 0, 100)
	for _, n := range []string{"1", "2", "40", "90", "-5", "-200"} {
		d.DoLen("SRANDMEMBER", "big", n)
		got := setBulks(t, d.Z.Do("SRANDMEMBER", "big", n))
		want, _ := strconv.Atoi(n)
		if want < 0 {
			want = -want
		}
		if len(got) != want {
			t.Errorf("SRANDMEMBER %s: %d members", n, len(got))
		}
		seen := map[string]bool{}
		for _, m := range got {
			if !strings.HasPrefix(m, "m") {
				t.Errorf("SRANDMEMBER %s: %q is not a member", n, m)
			}
			if n[0] != '-' && seen[m] {
				t.Errorf("SRANDMEMBER %s: %q twice", n, m)
			}
			seen[m] = true
		}
	}
	d.DoLen("SRANDMEMBER", "big")
	d.Do("SCARD", "big")
}

func TestSetInterDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("SADD", "a", "1", "2", "3", "4", "5")
	d.Do("SADD", "b", "2", "3", "4", "x")
	d.Do("SADD", "c", "3", "4", "9")
	d.Do("SINTER", "a", "c")
	d.Do("SINTER", "a", "b", "c")
	d.Do("SINTER", "a", "a")
	d.DoSorted("SINTER", "b")
	d.Do("SINTER", "a", "nokey")
	d.Do("SINTER", "nokey")
	d.Do("SINTERCARD", "2", "a", "b")
	d.Do("SINTERCARD", "3", "a", "b", "c")
	d.Do("SINTERCARD", "1", "a", "LIMIT", "2")
	d.Do("SINTERCARD", "1", "a", "limit", "0")
	d.Do("SINTERCARD", "1", "a", "LIMIT", "100")
	d.Do("SINTERCARD", "2", "a", "nokey")
	d.Do("SINTERCARD", "1", "a", "LIMIT", "1", "LIMIT", "3")
	for _, args := range [][]string{
		{"SINTERCARD", "0", "a"}, {"SINTERCARD", "-1", "a"}, {"SINTERCARD", "x", "a"},
		{"SINTERCARD", "3", "a", "b"}, {"SINTERCARD", "1", "a", "LIMIT", "-1"},
		{"SINTERCARD", "1", "a", "LIMIT", "x"}, {"SINTERCARD", "1", "a", "LIMIT"},
		{"SINTERCARD", "1", "a", "foo", "1"}, {"SINTERCARD", "1", "a", "b"},
	} {
		d.Do(args...)
	}
	d.Do("SINTERSTORE", "d", "a", "b")
	d.Do("SMEMBERS", "d")
	d.Do("OBJECT", "ENCODING", "d")
	d.Do("SINTERSTORE", "d", "b", "b")
	d.DoSorted("SMEMBERS", "d")
	d.Do("OBJECT", "ENCODING", "d")
	d.Do("SINTERSTORE", "d", "a", "nokey")
	d.Do("EXISTS", "d")
	d.Do("SINTERSTORE", "d", "a", "nokey")
	d.Do("SADD", "e", "z")
	d.Do("SINTERSTORE", "d", "a", "e")
	d.Do("EXISTS", "d")
	// The destination may be a source; a TTL on it is dropped.
	d.Do("SADD", "dst", "3", "4", "7")
	d.Do("EXPIRE", "dst", "1000")
	d.Do("SINTERSTORE", "dst", "dst", "a")
	d.Do("SMEMBERS", "dst")
	d.Do("TTL", "dst")
}

func TestSetUnionDiffDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("SADD", "a", "1", "2", "3")
	d.Do("SADD", "b", "3", "4", "5")
	d.Do("SADD", "h", "3", "x", "y")
	d.Do("SUNION", "a", "b")
	d.Do("SUNION", "a", "nokey", "b")
	d.Do("SUNION", "nokey")
	d.DoSorted("SUNION", "a", "h")
	d.Do("SDIFF", "a", "b")
	d.Do("SDIFF", "a", "nokey")
	d.Do("SDIFF", "nokey", "a")
	d.Do("SDIFF", "a", "a")
	d.Do("SDIFF", "a", "b", "a")
	d.DoSorted("SDIFF", "h", "a")
	d.Do("SDIFF", "a", "h")
	d.Do("SUNIONSTORE", "d", "a", "b")
	d.Do("SMEMBERS", "d")
	d.Do("OBJECT", "ENCODING", "d")
	d.Do("SUNIONSTORE", "d", "a", "h")
	d.DoSorted("SMEMBERS", "d")
	d.Do("OBJECT", "ENCODING", "d")
	d.Do("SDIFFSTORE", "d", "h", "a")
	d.DoSorted("SMEMBERS", "d")
	d.Do("OBJECT", "ENCODING", "d")
	d.Do("SDIFFSTORE", "d", "a", "a")
	d.Do("EXISTS", "d")
	d.Do("SDIFFSTORE", "d", "a", "a")
	d.Do("SUNIONSTORE", "d", "nokey")
	d.Do("SUNIONSTORE", "a", "a", "b")
	d.Do("SMEMBERS", "a")
	// SDIFF's second algorithm (first set added whole, then others
	// removed) leaves a hashtable once the first set is past the intset
	// limit, even when the result is small.
	d.setFill("big", "", 0, 600)
	d.setFill("sub", "", 0, 590)
	d.Do("SADD", "t1", "x")
	d.Do("SADD", "t2", "y")
	d.Do("SADD", "t3", "z")
	d.Do("SDIFFSTORE", "r1", "big", "sub")
	d.Do("OBJECT", "ENCODING", "r1")
	d.Do("SMEMBERS", "r1")
	d.Do("SDIFFSTORE", "r2", "big", "t1", "t2", "t3")
	d.Do("OBJECT", "ENCODING", "r2")
	d.Do("SREM", "big", "599")
	d.setFill("small", "", 0, 10)
	d.Do("SDIFFSTORE", "r3", "small", "t1", "t2", "t3", "sub")
	d.Do("OBJECT", "ENCODING", "r3")
	d.Do("SDIFFSTORE", "r4", "big", "sub", "t1", "t2", "t3", "nokey")
	d.Do("OBJECT", "ENCODING", "r4")
	d.DoSorted("SMEMBERS", "r4")
	d.Do("SUNIONSTORE", "r5", "sub", "t1")
	d.Do("OBJECT", "ENCODING", "r5")
	d.Do("SUNIONSTORE", "r6", "small", "small")
	d.Do("OBJECT", "ENCODING", "r6")
	d.Do("SMEMBERS", "r6")
}

// setScanAll runs a complete SSCAN of key and returns the members seen,
// sorted and deduplicated.
func setScanAll(t *testing.T, c *Conn, key string, opts ...string) []string {
	t.Helper()
	return scanCollect(t, c, []string{"SSCAN", key}, opts, 1)
}

func TestSetSscanDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("SSCAN", "nokey", "0")
	d.Do("SSCAN", "nokey", "0", "COUNT", "0")
	d.Do("SSCAN", "nokey", "x")
	d.Do("SADD", "s", "1", "2", "3", "10", "-4")
	d.Do("SSCAN", "s", "0")
	d.Do("SSCAN", "s", "12345")
	d.Do("SSCAN", "s", "0", "COUNT", "1")
	d.Do("SSCAN", "s", "0", "MATCH", "1*")
	d.Do("SSCAN", "s", "0", "match", "*", "count", "2")
	d.Do("SSCAN", "s", "0", "COUNT", "0")
	d.Do("SSCAN", "s", "0", "COUNT", "-1")
	d.Do("SSCAN", "s", "0", "COUNT", "x")
	d.Do("SSCAN", "s", "0", "COUNT")
	d.Do("SSCAN", "s", "0", "TYPE", "set")
	d.Do("SSCAN", "s", "0", "foo", "bar")
	d.Do("SSCAN", "s", "-1")
	d.Do("SSCAN", "s", "18446744073709551616")
	d.Do("SADD", "h", "a", "b", "c")
	d.setFill("big", "m", 0, 1000)
	for _, key := range []string{"h", "big"} {
		for _, opts := range [][]string{nil, {"COUNT", "7"}, {"COUNT", "1000"}, {"MATCH", "m1*", "COUNT", "50"}, {"MATCH", "nomatch"}} {
			z, r := setScanAll(t, d.Z, key, opts...), setScanAll(t, d.R, key, opts...)
			diffCases.Add(1)
			if strings.Join(z, ",") != strings.Join(r, ",") {
				t.Errorf("SSCAN %s %q: zredis %d members, redis %d", key, opts, len(z), len(r))
			}
		}
	}
}

// SSCAN's guarantee: a member present for the whole scan is returned at
// least once while the set grows and shrinks between the calls.
func TestSetSscanGuarantee(t *testing.T) {
	z := Dial(t, StartZredis(t).Addr)
	args := []string{"SADD", "s"}
	for i := 0; i < 3000; i++ {
		args = append(args, "keep"+strconv.Itoa(i))
	}
	z.Do(args...)
	seen := map[string]bool{}
	scanPages(t, z, []string{"SSCAN", "s"}, []string{"COUNT", "20"}, func(step int, elems []string) {
		for _, m := range elems {
			seen[m] = true
		}
		// Grow a lot (splits), then shrink (rebuilds).
		add := []string{"SADD", "s"}
		for i := 0; i < 200; i++ {
			add = append(add, "tmp"+strconv.Itoa(step)+"-"+strconv.Itoa(i))
		}
		z.Do(add...)
		if step%3 == 2 {
			rem := []string{"SREM", "s"}
			for s := step - 2; s <= step; s++ {
				for i := 0; i < 200; i++ {
					rem = append(rem, "tmp"+strconv.Itoa(s)+"-"+strconv.Itoa(i))
				}
			}
			z.Do(rem...)
		}
	})
	for i := 0; i < 3000; i++ {
		if !seen["keep"+strconv.Itoa(i)] {
			t.Fatalf("keep%d missed by SSCAN", i)
		}
	}
}

// The RESP3 forms: set replies (~) where RESP2 has arrays, null (_).
func TestSetResp3Diff(t *testing.T) {
	d := NewDiff(t)
	d.Resp3()
	defer d.DoBoth("HELLO", "2")
	d.Do("SADD", "a", "1", "2", "3")
	d.Do("SADD", "b", "3", "4")
	for _, args := range [][]string{
		{"SPOP", "nokey", "2"}, {"SPOP", "nokey"}, {"SRANDMEMBER", "nokey", "2"},
		{"SRANDMEMBER", "nokey"}, {"SRANDMEMBER", "a", "5"}, {"SMEMBERS", "nokey"},
		{"SMEMBERS", "a"}, {"SINTER", "a", "b"}, {"SINTER", "a", "nokey"},
		{"SUNION", "a", "b"}, {"SDIFF", "nokey", "a"}, {"SDIFF", "a", "b"},
		{"SMISMEMBER", "a", "1", "9"}, {"SSCAN", "a", "0"}, {"SSCAN", "nokey", "0"},
		{"SPOP", "b", "5"},
	} {
		d.Do(args...)
	}
}

// TestSetSmoveWatchDiff follows t_set.c's smoveCommand: the source is
// always signalled to WATCH once a member left it; the destination only
// when the member was added (not when it was already there, Redis's
// "SMOVE only notify dstset when the addition is successful"); the
// events match; and both keys are write lookups, which count no
// keyspace hit or miss and send no keymiss event.
func TestSetSmoveWatchDiff(t *testing.T) {
	for _, watched := range []string{"s", "d"} {
		for _, c := range []struct{ name, src, dst string }{
			{"in-dst", "a b", "a"}, {"src-empties", "a", "a"}, {"not-in-dst", "a b", "x"}, {"no-dst", "a b", ""},
			{"not-in-src", "b", "a"}, {"same-key", "a b", ""},
		} {
			t.Run(watched+"/"+c.name, func(t *testing.T) {
				steps := []txStep{setup(append([]string{"SADD", "s"}, strings.Fields(c.src)...)...)}
				if c.dst != "" {
					steps = append(steps, setup(append([]string{"SADD", "d"}, strings.Fields(c.dst)...)...))
				}
				dst := "d"
				if c.name == "same-key" {
					dst = "s"
				}
				steps = append(steps, a("WATCH", watched), a("MULTI"), a("PING"),
					b("SMOVE", "s", dst, "a"), a("EXEC"))
				runTx(t, steps)
			})
		}
	}
	diffNotifications(t, "KEAm",
		nc("SADD", "s", "a", "b", "c", "d"), nc("SADD", "d", "a"),
		nc("SMOVE", "s", "d", "a"), nc("SMOVE", "s", "nod", "b"), nc("SMOVE", "nos", "d", "b"),
		nc("SMOVE", "s", "d", "zz"), nc("SMOVE", "s", "s", "c"), nc("SMOVE", "nos", "nod", "b"))

	d := NewDiff(t)
	d.Do("SADD", "s", "a", "b", "c")
	d.Do("SADD", "d", "a")
	d.Do("SET", "str", "v")
	for _, cmd := range [][]string{
		{"SMOVE", "s", "d", "a"}, {"SMOVE", "s", "nod", "b"}, {"SMOVE", "nos", "d", "b"}, {"SMOVE", "s", "d", "zz"},
		{"SMOVE", "s", "s", "c"}, {"SMOVE", "s", "str", "c"}, {"SMOVE", "str", "d", "c"},
	} {
		d.DoBoth("CONFIG", "RESETSTAT")
		d.Do(cmd...)
		for _, f := range []string{"keyspace_hits", "keyspace_misses"} {
			if z, r := infoField(t, d.Z, "stats", f), infoField(t, d.R, "stats", f); z != r {
				t.Errorf("%q: %s %s, redis-server %s", cmd, f, z, r)
			}
		}
	}
}
