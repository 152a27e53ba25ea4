package tests

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// SORT and SORT_RO compared with redis-server. A set's own order is its
// hash table's, so the cases sort sets (or store them, which sorts them);
// ties in an ALPHA sort BY a pattern are avoided, since qsort leaves
// their order open.

var sortCases = [][]string{
	{"RPUSH", "l", "3", "1", "10", "2", "-5", "2.5", "1e2"},
	{"SORT", "l"},
	{"SORT", "l", "DESC"},
	{"SORT", "l", "ALPHA"},
	{"SORT", "l", "ALPHA", "DESC"},
	{"SORT", "l", "LIMIT", "1", "3"},
	{"SORT", "l", "LIMIT", "-1", "3"},
	{"SORT", "l", "LIMIT", "5", "100"},
	{"SORT", "l", "LIMIT", "100", "2"},
	{"SORT", "l", "LIMIT", "2", "-1"},
	{"SORT", "l", "LIMIT", "2", "0"},
	{"SORT", "l", "LIMIT", "x", "1"},
	{"SORT", "l", "LIMIT", "1"},
	{"SORT", "l", "BOGUS"},
	{"SORT", "l", "STORE"},
	{"SORT", "l", "ASC", "DESC", "ASC"},
	{"SORT", "nokey"},
	{"SORT", "nokey", "STORE", "dst"},
	{"EXISTS", "dst"},

	// BY a constant: the list's own order, reversed by DESC.
	{"SORT", "l", "BY", "nosort"},
	{"SORT", "l", "BY", "nosort", "DESC"},
	{"SORT", "l", "BY", "nosort", "LIMIT", "2", "3"},
	{"SORT", "l", "BY", "nosort", "DESC", "LIMIT", "2", "3"},
	{"SORT", "l", "BY", "nosort", "LIMIT", "20", "3"},

	// Weights and GET.
	{"MSET", "w_3", "30", "w_1", "100", "w_10", "1", "w_2", "20", "w_-5", "5", "w_2.5", "25", "w_1e2", "-1"},
	{"MSET", "o_3", "three", "o_1", "one", "o_10", "ten", "o_2", "two"},
	{"HSET", "h_3", "f", "c"}, {"HSET", "h_1", "f", "a"}, {"HSET", "h_10", "f", "j"},
	{"SORT", "l", "BY", "w_*"},
	{"SORT", "l", "BY", "w_*", "DESC", "LIMIT", "1", "4"},
	{"SORT", "l", "BY", "w_*", "GET", "o_*"},
	{"SORT", "l", "BY", "w_*", "GET", "#", "GET", "o_*", "GET", "h_*->f", "GET", "nostar", "GET", "h_*->"},
	{"SORT", "l", "BY", "h_*->f", "ALPHA", "GET", "h_*->f"},
	{"SORT", "l", "BY", "o_*", "ALPHA"},
	{"SORT", "l", "GET", "o_*", "STORE", "dst"},
	{"LRANGE", "dst", "0", "-1"},
	{"TYPE", "dst"},
	{"SORT", "l", "LIMIT", "0", "0", "STORE", "dst"},
	{"EXISTS", "dst"},
	{"SET", "dst", "x"},
	{"EXPIRE", "dst", "100"},
	{"SORT", "l", "STORE", "dst"},
	{"TTL", "dst"},
	{"LRANGE", "dst", "0", "-1"},
	{"SORT", "l", "STORE", "dst", "STORE", "dst2"},
	{"LRANGE", "dst2", "0", "-1"},

	// Values that are not numbers.
	{"RPUSH", "bad", "1", "x", "2"},
	{"SORT", "bad"},
	{"SORT", "bad", "ALPHA"},
	{"SORT", "bad", "BY", "nosort"},
	// (No value out of a double's range: redis-server does not reset errno
	// before strtod, and a stale ERANGE fails its later numeric sorts.)
	{"RPUSH", "odd", "", " 7", "0x10", "inf", "-inf"},
	{"SORT", "odd"},
	{"SORT", "odd", "BY", "nosort"},
	{"RPUSH", "nan", "nan"},
	{"SORT", "nan"},
	{"RPUSH", "ties", "b", "a", "c", "1", "01", "1.0"},
	{"SORT", "ties"},
	{"SORT", "ties", "BY", "missing_*"},
	{"SORT", "ties", "BY", "missing_*", "ALPHA"},

	// Sets and sorted sets.
	{"SADD", "s", "5", "3", "9", "1"},
	{"SORT", "s"},
	{"SORT", "s", "DESC", "ALPHA"},
	{"SORT", "s", "BY", "nosort", "STORE", "sdst"},
	{"LRANGE", "sdst", "0", "-1"},
	{"SADD", "sw", "apple", "pear", "fig"},
	{"SORT", "sw", "ALPHA"},
	{"SORT", "sw"},
	{"EVAL", "return redis.call('sort', KEYS[1], 'by', 'nosort')", "1", "sw"},
	{"ZADD", "z", "3", "c", "1", "a", "2", "b", "5", "e"},
	{"SORT", "z", "ALPHA"},
	{"SORT", "z", "BY", "nosort"},
	{"SORT", "z", "BY", "nosort", "DESC"},
	{"SORT", "z", "BY", "nosort", "LIMIT", "1", "2"},
	{"SORT", "z", "BY", "nosort", "DESC", "LIMIT", "1", "2"},
	{"SORT", "z", "BY", "nosort", "LIMIT", "9", "2"},
	{"SORT", "z"},

	// Types and SORT_RO.
	{"SET", "str", "x"},
	{"SORT", "str"},
	{"HSET", "hash", "a", "1"},
	{"SORT", "hash"},
	{"SORT_RO", "l", "BY", "w_*", "GET", "#"},
	{"SORT_RO", "l", "STORE", "dst"},
	{"SORT_RO", "str"},
	{"COMMAND", "GETKEYS", "SORT", "l", "LIMIT", "0", "1", "STORE", "a", "GET", "store", "STORE", "b"},
	{"COMMAND", "GETKEYSANDFLAGS", "SORT", "l", "STORE", "a"},
	{"COMMAND", "GETKEYSANDFLAGS", "SORT", "l", "BY", "store"},
	{"COMMAND", "GETKEYS", "SORT_RO", "l", "STORE", "a"},
}

func TestSortDifferential(t *testing.T) {
	d := NewDiff(t)
	for _, c := range sortCases {
		d.Do(c...)
	}
	// A user without access to every key may not use BY and GET patterns.
	d.DoBoth("ACL", "SETUSER", "sorter", "on", "nopass", "~l", "~dst", "%R~*", "+@all")
	d.DoBoth("ACL", "SETUSER", "narrow", "on", "nopass", "~l", "~dst", "+@all")
	for _, user := range []string{"sorter", "narrow"} {
		d.Do("AUTH", user, "pw")
		for _, c := range [][]string{
			{"SORT", "l"},
			{"SORT", "l", "BY", "nosort"},
			{"SORT", "l", "BY", "w_*"},
			{"SORT", "l", "GET", "#"},
			{"SORT", "l", "STORE", "dst"},
		} {
			d.Do(c...)
		}
	}
	d.Do("AUTH", "default", "pw")
	d.DoBoth("ACL", "DELUSER", "sorter", "narrow")
}

// Random lists sorted every way on both servers.
func TestSortRandomDifferential(t *testing.T) {
	d := NewDiff(t)
	rng := rand.New(rand.NewPCG(3, 5))
	for i := 0; i < 40; i++ {
		args := []string{"RPUSH", "rl"}
		for j := rng.IntN(30); j >= 0; j-- {
			v := strconv.Itoa(rng.IntN(1000) - 500)
			args = append(args, v)
			d.DoBoth("SET", "rw_"+v, strconv.Itoa(rng.IntN(100000)))
		}
		d.DoBoth("DEL", "rl")
		d.DoBoth(args...)
		for _, opts := range [][]string{
			{}, {"DESC"}, {"ALPHA"}, {"BY", "rw_*"}, {"BY", "rw_*", "DESC", "GET", "#", "GET", "rw_*"},
			{"LIMIT", strconv.Itoa(rng.IntN(10)), strconv.Itoa(rng.IntN(10) - 2)},
			{"BY", "nosort", "LIMIT", strconv.Itoa(rng.IntN(10)), strconv.Itoa(rng.IntN(10))},
		} {
			d.Do(append([]string{"SORT", "rl"}, opts...)...)
		}
	}
}
