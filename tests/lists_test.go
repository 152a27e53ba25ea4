package tests

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// Differential tests of the list family (t_list.c, the non-blocking
// commands): every command, option, error and wrong-type case, compared
// byte for byte with redis-server 7.0.

// listScript compares every command of a script.
func listScript(d *Diff, cmds [][]string) {
	d.t.Helper()
	for _, c := range cmds {
		d.Do(c...)
	}
}

// listSetup makes the same keys on both servers: list "l" = a b c a b c a,
// a string "s", a hash "h".
func listSetup(d *Diff) {
	d.t.Helper()
	d.Do("RPUSH", "l", "a", "b", "c", "a", "b", "c", "a")
	d.Do("SET", "s", "x")
	d.Do("HSET", "h", "f", "v")
}

// listWrongType runs cmd against the string key and, when zredis has
// hashes, the hash key: both must answer WRONGTYPE (or whatever Redis
// answers for the command's argument order).
func listWrongType(d *Diff, cmd ...string) {
	d.t.Helper()
	for _, k := range []string{"s", "h"} {
		args := make([]string, len(cmd))
		for i, a := range cmd {
			if a == "$W" {
				a = k
			}
			args[i] = a
		}
		d.Do(args...)
	}
}

func TestListPush(t *testing.T) {
	d := NewDiff(t)
	listSetup(d)
	listScript(d, [][]string{
		{"LPUSH", "p", "a"}, {"LPUSH", "p", "b", "c", "d"}, {"LRANGE", "p", "0", "-1"},
		{"RPUSH", "p", "x", "y"}, {"LRANGE", "p", "0", "-1"}, {"LLEN", "p"},
		{"LPUSH", "p", ""}, {"RPUSH", "p", "", "123", "-5", "3.5"}, {"LRANGE", "p", "0", "-1"},
		{"LPUSHX", "nokey", "a"}, {"RPUSHX", "nokey", "a", "b"}, {"EXISTS", "nokey"},
		{"LPUSHX", "p", "hx"}, {"RPUSHX", "p", "tx", "ty"}, {"LRANGE", "p", "0", "-1"},
		{"TYPE", "p"}, {"OBJECT", "ENCODING", "p"}, {"OBJECT", "ENCODING", "l"},
		{"LPUSH"}, {"LPUSH", "p"}, {"RPUSH", "p"}, {"LPUSHX", "p"}, {"RPUSHX"},
		{"lpush", "q", "lower"}, {"LRANGE", "q", "0", "-1"},
	})
	listWrongType(d, "LPUSH", "$W", "a")
	listWrongType(d, "RPUSH", "$W", "a", "b")
	listWrongType(d, "LPUSHX", "$W", "a")
	listWrongType(d, "RPUSHX", "$W", "a")
	// A large push and its encoding.
	args := []string{"RPUSH", "big"}
	for i := 0; i < 500; i++ {
		args = append(args, fmt.Sprintf("element-%d", i))
	}
	d.Do(args...)
	d.Do("LLEN", "big")
	d.Do("OBJECT", "ENCODING", "big")
	d.Do("RPUSH", "huge", strings.Repeat("x", 10000))
	d.Do("OBJECT", "ENCODING", "huge")
	d.Do("LRANGE", "big", "100", "120")
}

func TestListPop(t *testing.T) {
	d := NewDiff(t)
	listSetup(d)
	listScript(d, [][]string{
		{"LPOP", "l"}, {"RPOP", "l"}, {"LRANGE", "l", "0", "-1"},
		{"LPOP", "l", "2"}, {"RPOP", "l", "2"}, {"LRANGE", "l", "0", "-1"},
		{"LPOP", "l", "0"}, {"RPOP", "l", "0"},
		{"LPOP", "nokey"}, {"RPOP", "nokey"},
		{"LPOP", "nokey", "0"}, {"RPOP", "nokey", "3"},
		{"LPOP", "l", "-1"}, {"RPOP", "l", "x"}, {"LPOP", "l", "1.5"}, {"LPOP", "l", ""},
		{"LPOP", "nokey", "-1"}, {"LPOP", "l", "99999999999999999999"},
		{"LPOP", "l", "1", "2"}, {"RPOP", "l", "1", "2", "3"}, {"LPOP"},
		{"RPUSH", "m", "1", "2", "3"}, {"RPOP", "m", "10"}, {"EXISTS", "m"},
		{"RPUSH", "m", "1"}, {"LPOP", "m"}, {"EXISTS", "m"},
		{"RPUSH", "m", "1", "2"}, {"LPOP", "m", "9223372036854775807"}, {"EXISTS", "m"},
		{"RPUSH", "m", "1", "2"}, {"RPOP", "m", "1"}, {"LRANGE", "m", "0", "-1"},
	})
	listWrongType(d, "LPOP", "$W")
	listWrongType(d, "RPOP", "$W", "1")
	listWrongType(d, "LPOP", "$W", "0")
	listWrongType(d, "RPOP", "$W", "-1")
}

func TestListRangeIndex(t *testing.T) {
	d := NewDiff(t)
	listSetup(d)
	for _, r := range [][2]string{
		{"0", "-1"}, {"0", "0"}, {"-1", "-1"}, {"2", "4"}, {"-3", "-1"}, {"-100", "100"},
		{"5", "2"}, {"7", "10"}, {"6", "6"}, {"-8", "0"}, {"0", "-8"}, {"3", "-5"},
		{"-9223372036854775808", "9223372036854775807"}, {"9223372036854775807", "-9223372036854775808"},
	} {
		d.Do("LRANGE", "l", r[0], r[1])
		d.Do("LRANGE", "nokey", r[0], r[1])
	}
	for _, i := range []string{"0", "1", "6", "7", "-1", "-7", "-8", "100", "-9223372036854775808", "9223372036854775807"} {
		d.Do("LINDEX", "l", i)
		d.Do("LINDEX", "nokey", i)
	}
	listScript(d, [][]string{
		{"LRANGE", "l", "x", "1"}, {"LRANGE", "l", "0", "y"}, {"LRANGE", "nokey", "x", "1"},
		{"LRANGE", "l", "01", "1"}, {"LRANGE", "l", "+1", "1"}, {"LRANGE", "l", "1"},
		{"LINDEX", "l", "x"}, {"LINDEX", "nokey", "x"}, {"LINDEX", "l", "1.0"}, {"LINDEX", "l"},
		{"LLEN", "l"}, {"LLEN", "nokey"}, {"LLEN"}, {"LLEN", "l", "x"},
	})
	listWrongType(d, "LRANGE", "$W", "0", "-1")
	listWrongType(d, "LRANGE", "$W", "x", "-1")
	listWrongType(d, "LINDEX", "$W", "0")
	listWrongType(d, "LINDEX", "$W", "x")
	listWrongType(d, "LLEN", "$W")
}

func TestListSet(t *testing.T) {
	d := NewDiff(t)
	listSetup(d)
	listScript(d, [][]string{
		{"LSET", "l", "0", "A"}, {"LSET", "l", "-1", "Z"}, {"LSET", "l", "3", ""},
		{"LRANGE", "l", "0", "-1"},
		{"LSET", "l", "7", "x"}, {"LSET", "l", "-8", "x"}, {"LSET", "l", "9223372036854775807", "x"},
		{"LSET", "l", "x", "v"}, {"LSET", "nokey", "0", "v"}, {"LSET", "nokey", "x", "v"},
		{"LSET", "l", "0"}, {"LSET", "l", "0", "v", "extra"},
		{"LSET", "l", "1", strings.Repeat("long", 100)}, {"LINDEX", "l", "1"},
	})
	listWrongType(d, "LSET", "$W", "0", "v")
	listWrongType(d, "LSET", "$W", "x", "v")
}

func TestListInsert(t *testing.T) {
	d := NewDiff(t)
	listSetup(d)
	listScript(d, [][]string{
		{"LINSERT", "l", "BEFORE", "a", "1"}, {"LINSERT", "l", "AFTER", "a", "2"},
		{"LINSERT", "l", "after", "c", "3"}, {"LINSERT", "l", "before", "c", "4"},
		{"LINSERT", "l", "AFTER", "a", ""}, {"LRANGE", "l", "0", "-1"},
		{"LINSERT", "l", "BEFORE", "zzz", "x"}, {"LINSERT", "nokey", "BEFORE", "a", "x"},
		{"LINSERT", "l", "MIDDLE", "a", "x"}, {"LINSERT", "nokey", "MIDDLE", "a", "x"},
		{"LINSERT", "l", "BEFORE", "a"}, {"EXISTS", "nokey"},
	})
	// Inserting near either end of a longer list shifts different sides.
	for i := 0; i < 40; i++ {
		d.Do("RPUSH", "long", fmt.Sprint(i))
	}
	for _, p := range []string{"0", "1", "5", "19", "20", "21", "35", "39"} {
		d.Do("LINSERT", "long", "BEFORE", p, "b"+p)
		d.Do("LINSERT", "long", "AFTER", p, "a"+p)
	}
	d.Do("LRANGE", "long", "0", "-1")
	listWrongType(d, "LINSERT", "$W", "BEFORE", "a", "x")
	listWrongType(d, "LINSERT", "$W", "MIDDLE", "a", "x")
}

func TestListRem(t *testing.T) {
	d := NewDiff(t)
	for _, count := range []string{"0", "1", "2", "-1", "-2", "100", "-100", "-9223372036854775808", "9223372036854775807"} {
		d.Do("DEL", "r")
		d.Do("RPUSH", "r", "a", "b", "a", "c", "a", "b", "a")
		d.Do("LREM", "r", count, "a")
		d.Do("LRANGE", "r", "0", "-1")
		d.Do("LREM", "r", count, "zzz")
	}
	listScript(d, [][]string{
		{"RPUSH", "one", "x", "x"}, {"LREM", "one", "0", "x"}, {"EXISTS", "one"},
		{"LREM", "nokey", "0", "x"}, {"LREM", "nokey", "x", "x"},
		{"RPUSH", "r2", "a"}, {"LREM", "r2", "x", "a"}, {"LREM", "r2", "1.5", "a"}, {"LREM", "r2", "1"},
	})
	d.Do("SET", "s", "x")
	listWrongType(d, "LREM", "$W", "0", "a")
	listWrongType(d, "LREM", "$W", "x", "a")
}

func TestListTrim(t *testing.T) {
	d := NewDiff(t)
	for _, r := range [][2]string{
		{"0", "-1"}, {"1", "-2"}, {"2", "4"}, {"-3", "-1"}, {"5", "2"}, {"7", "10"},
		{"-100", "100"}, {"0", "0"}, {"-1", "-1"}, {"6", "100"}, {"-9223372036854775808", "-9223372036854775808"},
	} {
		d.Do("DEL", "t")
		d.Do("RPUSH", "t", "a", "b", "c", "d", "e", "f", "g")
		d.Do("LTRIM", "t", r[0], r[1])
		d.Do("LRANGE", "t", "0", "-1")
		d.Do("EXISTS", "t")
	}
	listScript(d, [][]string{
		{"LTRIM", "nokey", "0", "1"}, {"EXISTS", "nokey"}, {"LTRIM", "nokey", "x", "1"},
		{"RPUSH", "t2", "a"}, {"LTRIM", "t2", "x", "1"}, {"LTRIM", "t2", "0", "y"}, {"LTRIM", "t2", "0"},
	})
	d.Do("SET", "s", "x")
	listWrongType(d, "LTRIM", "$W", "0", "1")
	listWrongType(d, "LTRIM", "$W", "x", "1")
}

func TestListPos(t *testing.T) {
	d := NewDiff(t)
	listSetup(d)
	opts := [][]string{
		{}, {"RANK", "1"}, {"RANK", "2"}, {"RANK", "3"}, {"RANK", "4"}, {"RANK", "-1"}, {"RANK", "-3"}, {"RANK", "-4"},
		{"COUNT", "0"}, {"COUNT", "1"}, {"COUNT", "2"}, {"COUNT", "10"},
		{"RANK", "2", "COUNT", "0"}, {"RANK", "-2", "COUNT", "2"}, {"COUNT", "0", "RANK", "-1"},
		{"MAXLEN", "0"}, {"MAXLEN", "1"}, {"MAXLEN", "3"}, {"MAXLEN", "4", "COUNT", "0"},
		{"RANK", "-1", "MAXLEN", "1"}, {"RANK", "-1", "MAXLEN", "2", "COUNT", "0"},
		{"RANK", "9223372036854775807"}, {"RANK", "-9223372036854775807"},
		{"RANK", "-9223372036854775808"}, {"RANK", "-9223372036854775808", "COUNT", "2"},
		{"RANK", "-9223372036854775808", "COUNT", "0"}, {"RANK", "9223372036854775807", "COUNT", "0"},
		{"COUNT", "1", "COUNT", "3"}, {"rank", "2", "count", "1", "maxlen", "100"},
		// Errors.
		{"RANK", "0"}, {"RANK", "x"}, {"COUNT", "-1"}, {"COUNT", "x"}, {"MAXLEN", "-1"}, {"MAXLEN", "x"},
		{"RANK"}, {"COUNT"}, {"MAXLEN"}, {"FOO"}, {"FOO", "1"}, {"RANK", "1", "COUNT"},
		{"RANK", "0", "COUNT", "-1"}, {"COUNT", "-1", "RANK", "0"},
	}
	for _, ele := range []string{"a", "c", "zzz"} {
		for _, o := range opts {
			d.Do(append([]string{"LPOS", "l", ele}, o...)...)
		}
	}
	for _, o := range opts {
		d.Do(append([]string{"LPOS", "nokey", "a"}, o...)...)
		listWrongType(d, append([]string{"LPOS", "$W", "a"}, o...)...)
	}
	d.Do("LPOS", "l")
}

func TestListMove(t *testing.T) {
	d := NewDiff(t)
	ends := []string{"LEFT", "RIGHT"}
	for _, from := range ends {
		for _, to := range ends {
			d.Do("DEL", "src", "dst")
			d.Do("RPUSH", "src", "1", "2", "3")
			d.Do("RPUSH", "dst", "x")
			d.Do("LMOVE", "src", "dst", from, to)
			d.Do("LMOVE", "src", "newdst", from, to)
			d.Do("LRANGE", "src", "0", "-1")
			d.Do("LRANGE", "dst", "0", "-1")
			d.Do("LRANGE", "newdst", "0", "-1")
			d.Do("LMOVE", "src", "src", from, to) // rotation
			d.Do("LRANGE", "src", "0", "-1")
			d.Do("LMOVE", "src", "dst", from, to) // empties src
			d.Do("EXISTS", "src")
			d.Do("LMOVE", "src", "dst", from, to) // missing source
			d.Do("DEL", "newdst")
			d.Do("RPUSH", "single", "only")
			d.Do("LMOVE", "single", "single", from, to)
			d.Do("LRANGE", "single", "0", "-1")
			d.Do("DEL", "single")
		}
	}
	d.Do("SET", "s", "x")
	d.Do("RPUSH", "src", "a", "b")
	listScript(d, [][]string{
		{"LMOVE", "src", "dst", "UP", "LEFT"}, {"LMOVE", "src", "dst", "LEFT", "DOWN"},
		{"LMOVE", "nokey", "dst", "UP", "LEFT"}, {"LMOVE", "s", "dst", "UP", "LEFT"},
		{"lmove", "src", "dst", "left", "right"}, {"LMOVE", "src", "dst", "LEFT"},
		{"LMOVE", "s", "dst", "LEFT", "LEFT"}, {"LMOVE", "src", "s", "LEFT", "LEFT"},
		{"LMOVE", "nokey", "s", "LEFT", "LEFT"}, {"LRANGE", "src", "0", "-1"},
		{"RPOPLPUSH", "src", "dst"}, {"RPOPLPUSH", "src", "dst"}, {"RPOPLPUSH", "src", "dst"},
		{"LRANGE", "dst", "0", "-1"}, {"EXISTS", "src"},
		{"RPOPLPUSH", "dst", "dst"}, {"LRANGE", "dst", "0", "-1"},
		{"RPOPLPUSH", "s", "dst"}, {"RPOPLPUSH", "dst", "s"}, {"RPOPLPUSH", "nokey", "s"},
		{"RPOPLPUSH", "src"}, {"LRANGE", "dst", "0", "-1"},
	})
	d.Do("HSET", "h", "f", "v")
	d.Do("LMOVE", "h", "dst", "LEFT", "LEFT")
	d.Do("LMOVE", "dst", "h", "LEFT", "LEFT")
	d.Do("RPOPLPUSH", "dst", "h")
}

func TestListMPop(t *testing.T) {
	d := NewDiff(t)
	d.Do("RPUSH", "a", "1", "2", "3", "4", "5")
	d.Do("RPUSH", "b", "x", "y")
	d.Do("SET", "s", "str")
	listScript(d, [][]string{
		{"LMPOP", "1", "a", "LEFT"}, {"LMPOP", "1", "a", "RIGHT"}, {"LMPOP", "1", "a", "left", "count", "2"},
		{"LRANGE", "a", "0", "-1"},
		{"LMPOP", "2", "nokey", "b", "RIGHT", "COUNT", "10"}, {"EXISTS", "b"},
		{"LMPOP", "3", "nokey", "b", "a", "LEFT", "COUNT", "1"},
		{"LMPOP", "2", "nokey", "nokey2", "LEFT"}, {"LMPOP", "1", "nokey", "LEFT", "COUNT", "5"},
		{"LMPOP", "2", "s", "a", "LEFT"}, {"LMPOP", "2", "a", "s", "LEFT"}, {"LMPOP", "2", "nokey", "s", "LEFT"},
		{"LMPOP", "1", "a", "LEFT", "COUNT", "9223372036854775807"}, {"EXISTS", "a"},
		// Errors.
		{"LMPOP", "0", "a", "LEFT"}, {"LMPOP", "-1", "a", "LEFT"}, {"LMPOP", "x", "a", "LEFT"},
		{"LMPOP", "01", "a", "LEFT"}, {"LMPOP", "2", "a", "LEFT"}, {"LMPOP", "5", "a", "b", "LEFT"},
		{"LMPOP", "9223372036854775807", "a", "LEFT"}, {"LMPOP", "9223372036854775806", "a", "LEFT"},
		{"LMPOP", "1", "a", "MIDDLE"}, {"LMPOP", "1", "a", "LEFT", "COUNT", "0"},
		{"LMPOP", "1", "a", "LEFT", "COUNT", "-1"}, {"LMPOP", "1", "a", "LEFT", "COUNT", "x"},
		{"LMPOP", "1", "a", "LEFT", "COUNT"}, {"LMPOP", "1", "a", "LEFT", "COUNT", "1", "COUNT", "1"},
		{"LMPOP", "1", "a", "LEFT", "FOO"}, {"LMPOP", "1", "s", "LEFT", "COUNT", "0"},
		{"LMPOP", "1", "a"}, {"LMPOP", "1"}, {"LMPOP"},
		// Key extraction.
		{"COMMAND", "GETKEYS", "LMPOP", "2", "a", "b", "LEFT"},
		{"COMMAND", "GETKEYS", "LMPOP", "1", "a", "LEFT", "COUNT", "2"},
		{"COMMAND", "GETKEYS", "LMPOP", "2abc", "a", "b", "LEFT"},
		{"COMMAND", "GETKEYS", "LMPOP", "0", "a", "LEFT"},
		{"COMMAND", "GETKEYS", "LMPOP", "3", "a", "LEFT"},
		{"COMMAND", "GETKEYS", "LMPOP", "2", "a", "b"},
		{"COMMAND", "GETKEYS", "LMPOP", "x", "a", "b"},
		{"COMMAND", "GETKEYS", "LMPOP", "1", "a"},
		{"COMMAND", "GETKEYSANDFLAGS", "LMPOP", "2", "a", "b", "LEFT"},
		{"COMMAND", "GETKEYS", "LMOVE", "a", "b", "LEFT", "RIGHT"},
		{"COMMAND", "GETKEYS", "RPOPLPUSH", "a", "b"},
		{"COMMAND", "GETKEYSANDFLAGS", "LMOVE", "a", "b", "LEFT", "RIGHT"},
		{"COMMAND", "GETKEYSANDFLAGS", "LPUSH", "a", "x"},
		{"COMMAND", "INFO", "LMPOP"},
	})
}

// TestListResp3 checks the null replies under RESP3.
func TestListResp3(t *testing.T) {
	d := NewDiff(t)
	d.Resp3()
	d.Do("RPUSH", "l", "a", "b")
	listScript(d, [][]string{
		{"LPOP", "nokey"}, {"LPOP", "nokey", "1"}, {"LPOP", "l", "0"}, {"LINDEX", "l", "5"},
		{"LINDEX", "nokey", "0"}, {"LPOS", "l", "z"}, {"LPOS", "nokey", "z"}, {"LPOS", "nokey", "z", "COUNT", "0"},
		{"LMOVE", "nokey", "l", "LEFT", "LEFT"}, {"RPOPLPUSH", "nokey", "l"},
		{"LMPOP", "1", "nokey", "LEFT"}, {"LMPOP", "1", "l", "LEFT"}, {"LRANGE", "l", "0", "-1"},
	})
}

// TestListExpiry: a list key with a TTL keeps it across pushes and pops;
// a list emptied by a pop loses its key and so its TTL.
func TestListTTL(t *testing.T) {
	d := NewDiff(t)
	listScript(d, [][]string{
		{"RPUSH", "l", "a", "b"}, {"EXPIRE", "l", "100"}, {"LPUSH", "l", "c"}, {"TTL", "l"},
		{"LPOP", "l", "3"}, {"TTL", "l"}, {"RPUSH", "l", "z"}, {"TTL", "l"},
		{"SET", "s", "v"}, {"RPUSH", "s2", "a"}, {"RENAME", "s2", "s"}, {"TYPE", "s"}, {"LRANGE", "s", "0", "-1"},
	})
}

// TestListRandomOps drives both servers with a random mix of list
// operations and compares every reply and the final contents.
func TestListRandomOps(t *testing.T) {
	d := NewDiff(t)
	rng := rand.New(rand.NewPCG(7, 11))
	keys := []string{"r1", "r2", "r3"}
	vals := []string{"a", "b", "c", "", "1", "22"}
	val := func() string { return vals[rng.IntN(len(vals))] }
	idx := func() string { return fmt.Sprint(rng.IntN(16) - 8) }
	for i := 0; i < 600; i++ {
		k := keys[rng.IntN(len(keys))]
		k2 := keys[rng.IntN(len(keys))]
		end := []string{"LEFT", "RIGHT"}
		switch rng.IntN(13) {
		case 0:
			d.Do("LPUSH", k, val(), val())
		case 1:
			d.Do("RPUSH", k, val())
		case 2:
			d.Do("LPOP", k)
		case 3:
			d.Do("RPOP", k, fmt.Sprint(rng.IntN(4)))
		case 4:
			d.Do("LINSERT", k, []string{"BEFORE", "AFTER"}[rng.IntN(2)], val(), val())
		case 5:
			d.Do("LREM", k, idx(), val())
		case 6:
			d.Do("LTRIM", k, idx(), idx())
		case 7:
			d.Do("LSET", k, idx(), val())
		case 8:
			d.Do("LMOVE", k, k2, end[rng.IntN(2)], end[rng.IntN(2)])
		case 9:
			d.Do("LPOS", k, val(), "RANK", []string{"1", "-1", "2", "-2"}[rng.IntN(4)], "COUNT", fmt.Sprint(rng.IntN(3)))
		case 10:
			d.Do("LMPOP", "2", k, k2, end[rng.IntN(2)], "COUNT", fmt.Sprint(1+rng.IntN(3)))
		case 11:
			d.Do("LINDEX", k, idx())
		default:
			d.Do("LRANGE", k, idx(), idx())
		}
	}
	for _, k := range keys {
		d.Do("LRANGE", k, "0", "-1")
	}
}

// TestListLarge works on lists of thousands of elements, some of them
// large, so that every operation meets element runs longer than one
// storage chunk.
func TestListLarge(t *testing.T) {
	d := NewDiff(t)
	push := func(cmd string, from, to int) {
		args := []string{cmd, "big"}
		for i := from; i < to; i++ {
			v := fmt.Sprintf("v%d", i%97)
			if i%250 == 0 {
				v = strings.Repeat(fmt.Sprint(i%10), 5000)
			}
			args = append(args, v)
		}
		d.Do(args...)
	}
	push("RPUSH", 0, 2000)
	push("LPUSH", 2000, 3500)
	push("RPUSHX", 3500, 3600)
	for _, r := range [][2]string{{"0", "20"}, {"500", "530"}, {"-40", "-1"}, {"1490", "1510"}, {"3000", "3010"}} {
		d.Do("LRANGE", "big", r[0], r[1])
	}
	for _, i := range []string{"0", "1", "511", "512", "513", "1499", "1500", "1501", "2047", "-1", "-513", "-3600", "3599", "3600"} {
		d.Do("LINDEX", "big", i)
		d.Do("LSET", "big", i, "set-"+i)
	}
	for _, p := range []string{"v5", "v96", "set-1500"} {
		d.Do("LINSERT", "big", "BEFORE", p, "ins-"+p)
		d.Do("LINSERT", "big", "AFTER", p, strings.Repeat("i", 9000))
		d.Do("LPOS", "big", p, "RANK", "-1")
		d.Do("LPOS", "big", p, "COUNT", "0")
		d.Do("LPOS", "big", p, "RANK", "-3", "COUNT", "5", "MAXLEN", "2000")
	}
	d.Do("LREM", "big", "7", "v3")
	d.Do("LREM", "big", "-5", "v4")
	d.Do("LREM", "big", "0", "v10")
	d.Do("LLEN", "big")
	d.Do("LRANGE", "big", "0", "-1")
	d.Do("LPOP", "big", "700")
	d.Do("RPOP", "big", "600")
	d.Do("LTRIM", "big", "300", "-300")
	d.Do("LRANGE", "big", "0", "-1")
	d.Do("LMPOP", "1", "big", "RIGHT", "COUNT", "100000")
	d.Do("EXISTS", "big")
}
