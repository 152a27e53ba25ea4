package tests

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// Differential tests of the string family (t_string.c): every command,
// its options, its errors and its edge cases, compared byte for byte with
// redis-server 7.0.

// newStringsDiff is a Diff whose connections use database db, a different
// one per test, so that the string tests stay independent of each other
// and of the flush between tests.
func newStringsDiff(t *testing.T, db int) *Diff {
	t.Helper()
	d := NewDiff(t)
	d.Do("SELECT", fmt.Sprint(db))
	d.DoBoth("FLUSHDB")
	return d
}

// doScript compares every command of a script.
func doScript(d *Diff, cmds [][]string) {
	d.t.Helper()
	for _, c := range cmds {
		d.Do(c...)
	}
}

func TestStringGetdelGetex(t *testing.T) {
	d := newStringsDiff(t, 1)
	doScript(d, [][]string{
		{"SET", "k", "v"},
		{"GETDEL", "k"},
		{"GETDEL", "k"},
		{"GET", "k"},
		{"GETDEL", "missing"},
		{"SET", "n", "123"},
		{"GETDEL", "n"},
		{"SET", "e", ""},
		{"GETDEL", "e"},
		{"GET", "e"},

		// Options are parsed before the key is looked up; the expire
		// value is checked only for an existing string.
		{"GETEX", "missing"},
		{"GETEX", "missing", "EX", "10"},
		{"GETEX", "missing", "EX", "notanumber"},
		{"GETEX", "missing", "EX", "-1"},
		{"GETEX", "missing", "FOO"},
		{"GETEX", "missing", "EX"},

		{"SET", "k", "v"},
		{"GETEX", "k"},
		{"GETEX", "k", "EX", "100"},
		{"GETEX", "k", "px", "100000"},
		{"GETEX", "k", "ex", "10", "ex", "100"},
		{"GETEX", "k", "PERSIST"},
		{"GETEX", "k", "persist", "PERSIST"},
		{"GETEX", "k", "EXAT", "4102444800"},
		{"GETEX", "k", "PXAT", "4102444800000"},
		{"GETEX", "k", "PXAT", "9223372036854775807"},
		{"GETEX", "k", "PERSIST"},

		{"GETEX", "k", "EX", "0"},
		{"GETEX", "k", "EX", "-5"},
		{"GETEX", "k", "PX", "0"},
		{"GETEX", "k", "EXAT", "0"},
		{"GETEX", "k", "PXAT", "-1"},
		{"GETEX", "k", "EX", "abc"},
		{"GETEX", "k", "EX", "1.5"},
		{"GETEX", "k", "EX", " 10"},
		{"GETEX", "k", "EX", "+10"},
		{"GETEX", "k", "EX", "9223372036854775807"},
		{"GETEX", "k", "EX", "9223372036854775"},
		{"GETEX", "k", "EXAT", "9223372036854776"},
		{"GETEX", "k", "PX", "9223372036854775807"},
		{"GETEX", "k", "EX", "9223372036854775808"},

		{"GETEX", "k", "EX"},
		{"GETEX", "k", "PX"},
		{"GETEX", "k", "EX", "10", "PX", "10"},
		{"GETEX", "k", "PX", "10", "EXAT", "10"},
		{"GETEX", "k", "EXAT", "10", "PXAT", "10"},
		{"GETEX", "k", "PERSIST", "EX", "10"},
		{"GETEX", "k", "EX", "10", "PERSIST"},
		{"GETEX", "k", "KEEPTTL"},
		{"GETEX", "k", "NX"},
		{"GETEX", "k", "XX"},
		{"GETEX", "k", "GET"},
		{"GETEX", "k", "10"},
		{"GET", "k"},

		// An absolute deadline already past deletes the key.
		{"GETEX", "k", "EXAT", "1"},
		{"GET", "k"},
		{"GETEX", "k"},
		{"SET", "k2", "v2"},
		{"GETEX", "k2", "PXAT", "1000"},
		{"GETDEL", "k2"},
	})

	doScript(d, [][]string{
		{"SET", "t", "v"},
		{"GETEX", "t", "EX", "100"},
		{"TTL", "t"},
		{"GETEX", "t"},
		{"TTL", "t"},
		{"GETEX", "t", "PX", "50000"},
		{"TTL", "t"},
		{"GETEX", "t", "PERSIST"},
		{"TTL", "t"},
		{"GETEX", "t", "EX", "0"},
		{"TTL", "t"},
	})

	// A relative expiry takes effect; PERSIST removes it.
	doScript(d, [][]string{
		{"SET", "short", "v"},
		{"GETEX", "short", "PX", "1"},
		{"SET", "kept", "v", "PX", "200"},
		{"GETEX", "kept", "PERSIST"},
	})
	time.Sleep(300 * time.Millisecond)
	doScript(d, [][]string{
		{"GET", "short"},
		{"GET", "kept"},
	})
}

func TestStringAppendStrlen(t *testing.T) {
	d := newStringsDiff(t, 2)
	long := strings.Repeat("0123456789", 1000)
	doScript(d, [][]string{
		{"APPEND", "k", "hello"},
		{"APPEND", "k", " world"},
		{"GET", "k"},
		{"STRLEN", "k"},
		{"STRLEN", "missing"},
		{"APPEND", "k", ""},
		{"APPEND", "e", ""},
		{"GET", "e"},
		{"STRLEN", "e"},
		{"SET", "n", "10"},
		{"APPEND", "n", "5"},
		{"GET", "n"},
		{"INCR", "n"},
		{"APPEND", "n", ""},
		{"STRLEN", "n"},
		{"SET", "neg", "-1"},
		{"STRLEN", "neg"},
		{"SET", "big", "12345678901234567890"},
		{"STRLEN", "big"},
		{"APPEND", "bin", "\x00\x01\xff"},
		{"APPEND", "bin", "\r\n"},
		{"STRLEN", "bin"},
		{"GET", "bin"},
		{"APPEND", "long", long},
		{"APPEND", "long", long},
		{"STRLEN", "long"},
		{"GETRANGE", "long", "9995", "10004"},
	})
	for i := 0; i < 20; i++ {
		d.Do("APPEND", "grow", strings.Repeat("x", i))
	}
	d.Do("GET", "grow")
	doScript(d, [][]string{
		{"SET", "t", "v", "EX", "100"},
		{"APPEND", "t", "x"},
		{"TTL", "t"},
	})
}

func TestStringIncrDecr(t *testing.T) {
	d := newStringsDiff(t, 3)
	doScript(d, [][]string{
		{"INCR", "c"},
		{"INCR", "c"},
		{"DECR", "c"},
		{"DECR", "c"},
		{"DECR", "c"},
		{"INCRBY", "c", "10"},
		{"INCRBY", "c", "-20"},
		{"DECRBY", "c", "5"},
		{"DECRBY", "c", "-5"},
		{"INCRBY", "c", "0"},
		{"DECRBY", "c", "0"},
		{"GET", "c"},
		{"DECR", "d"},
		{"INCRBY", "e", "-7"},
		{"DECRBY", "f", "7"},

		// The increment must be an integer...
		{"INCRBY", "c", "012"},
		{"INCRBY", "c", "+1"},
		{"INCRBY", "c", " 1"},
		{"INCRBY", "c", "1 "},
		{"INCRBY", "c", "1.5"},
		{"INCRBY", "c", ""},
		{"INCRBY", "c", "-0"},
		{"INCRBY", "c", "9223372036854775808"},
		{"DECRBY", "c", "abc"},
		{"DECRBY", "c", "-9223372036854775808"},
		{"DECRBY", "missing", "-9223372036854775808"},
		{"INCRBY", "c", "-9223372036854775808"},
		{"GET", "c"},
	})
	// ...and so must the value.
	for _, v := range []string{"012", "+5", "-0", " 5", "5 ", "", "1.0", "1e3", "0x10",
		"abc", "9223372036854775808", "-9223372036854775809", "00", "-", "5\n", "１"} {
		d.Do("SET", "x", v)
		d.Do("INCR", "x")
		d.Do("DECRBY", "x", "1")
		d.Do("GET", "x")
	}
	doScript(d, [][]string{
		{"SET", "b", "9223372036854775806"},
		{"INCR", "b"},
		{"INCR", "b"},
		{"INCRBY", "b", "1"},
		{"DECRBY", "b", "-1"},
		{"GET", "b"},
		{"INCRBY", "b", "9223372036854775807"},
		{"INCRBY", "b", "-9223372036854775807"},
		{"SET", "b", "-9223372036854775807"},
		{"DECR", "b"},
		{"DECR", "b"},
		{"INCRBY", "b", "-1"},
		{"DECRBY", "b", "1"},
		{"GET", "b"},
		{"INCRBY", "b", "9223372036854775807"},
		{"SET", "b", "9223372036854775807"},
		{"DECRBY", "b", "9223372036854775807"},
		{"DECR", "b"},
		{"SET", "b", "-1"},
		{"INCRBY", "b", "-9223372036854775808"},
		{"SET", "b", "1"},
		{"INCRBY", "b", "-9223372036854775808"},
		{"INCRBY", "b", "9223372036854775807"},
		{"INCR", "b"},

		// INCRBYFLOAT may leave an integer behind, or not.
		{"INCRBYFLOAT", "fl", "1.5"},
		{"INCR", "fl"},
		{"INCRBYFLOAT", "fl", "0.5"},
		{"INCR", "fl"},
		{"GET", "fl"},
	})
	doScript(d, [][]string{
		{"SET", "t", "5", "EX", "100"},
		{"INCR", "t"},
		{"TTL", "t"},
		{"DECRBY", "t", "3"},
		{"TTL", "t"},
	})
}

func TestStringIncrbyfloat(t *testing.T) {
	d := newStringsDiff(t, 4)
	// Each value added to a missing key.
	values := []string{
		"0", "1", "-1", "0.1", "-0.1", "1.1", "10.5", "3.0e3", "3.0E3", "1e-17", "1e-18",
		"5e-18", "1.5e-17", "0.5e-17", "0.15e-16", "0.30000000000000004",
		"123456789.123456789", "1e20", "1e21", "9.999999999999999e22", "-1e-20",
		"1.7976931348623157e308", "1e400", "1e4932", "1.18973149535723176502e4932",
		"1.1897314953572317651e4932", "1e-400", "3.6e-4951", "1.9e-4951", "1.8e-4951",
		"1e-4951", "1e-5000", "1e99999", "0e99999", "2.5", ".5", "5.", "+.5", "-.5e1",
		"0x10", "0x1p3", "0x1.8p1", "0X1P-2", "0x.8", "-0x1p-1", "0x1p16384", "0x1p16383",
		"1E5", "1e+5", "1e-5", "00012.5", "-0", "+0", "-0.0",
		"1_0", "0x", "0x1p", "1e", "1e+", ".", "-", "+", "", " 1", "1 ", "1\n", "abc",
		"nan", "NaN", "-nan", "nan(1)", "inf", "-inf", "+inf", "infinity", "inFinITY",
		"infin", "Infinite", "0.1.2", "1e5.5", "1,5",
		"12345678901234567890", "-12345678901234567890.123",
		"0.000000000000000015", "0.000000000000000025", "0.999999999999999999",
		"99999999999999999.99", "1.5e-15", "4.35", "2.675", "1.0000000000000000001",
		"3.14159265358979323846264338327950288", "-273.15", "6.02214076e23",
		strings.Repeat("9", 30), "0." + strings.Repeat("0", 16) + "5",
		"1." + strings.Repeat("0", 5117), "1." + strings.Repeat("0", 5118),
	}
	for i, v := range values {
		d.Do("INCRBYFLOAT", fmt.Sprintf("f%d", i), v)
	}

	// Sums of two.
	pairs := [][2]string{
		{"10.5", "0.1"}, {"0.1", "0.2"}, {"1.1", "2.2"}, {"3.0e3", "1"}, {"1e20", "0.5"},
		{"1.5e4931", "1.5e4931"}, {"1e4932", "1e4932"}, {"-1e4932", "-1e4932"},
		{"1.5", "-1.5"}, {"-0.1", "0.1"}, {"0.1", "-0.3"}, {"5", "-10.25"},
		{"12345678901234567890", "1"}, {"9223372036854775807", "1"},
		{"-9223372036854775808", "-1"}, {"0.00000000000000001", "0.00000000000000001"},
		{"1", "1e-17"}, {"1", "1e-18"}, {"1e17", "0.3"}, {"1e18", "0.5"}, {"100", "-100.000000000000000001"},
	}
	for i, p := range pairs {
		k := fmt.Sprintf("p%d", i)
		d.Do("INCRBYFLOAT", k, p[0])
		d.Do("INCRBYFLOAT", k, p[1])
	}

	// Accumulation: each step stores the printed value.
	for i := 0; i < 12; i++ {
		d.Do("INCRBYFLOAT", "acc", "0.1")
	}
	for i := 0; i < 6; i++ {
		d.Do("INCRBYFLOAT", "acc2", "-1.1")
	}
	for i := 0; i < 5; i++ {
		d.Do("INCRBYFLOAT", "acc3", "3.3e-5")
	}

	// The stored value must parse as a long double.
	for _, v := range []string{"inf", "-inf", "nan", "abc", " 1", "1 ", "1e5", "0x10", "", "1e99999", "5"} {
		d.Do("SET", "s", v)
		d.Do("INCRBYFLOAT", "s", "1")
		d.Do("INCRBYFLOAT", "s", "x")
		d.Do("GET", "s")
	}
	doScript(d, [][]string{
		{"SET", "t", "1.5", "EX", "100"},
		{"INCRBYFLOAT", "t", "1"},
		{"TTL", "t"},
	})
}

func TestStringMgetMset(t *testing.T) {
	d := newStringsDiff(t, 5)
	doScript(d, [][]string{
		{"MSET", "a", "1", "b", "2", "c", "3"},
		{"MGET", "a", "b", "c", "d"},
		{"MGET", "d"},
		{"MGET", "a", "a", "a"},
		{"MSET", "a", "x", "a", "y"},
		{"GET", "a"},
		{"MSET", "a", "1", "b"},
		{"MSET", "a", "1", "b", "2", "c"},
		{"MSETNX", "a", "1", "c"},
		{"MSETNX", "new1", "1", "a", "2"},
		{"GET", "new1"},
		{"MSETNX", "new1", "1", "new2", "2"},
		{"MGET", "new1", "new2"},
		{"MSETNX", "new1", "9"},
		{"MSETNX", "new3", "x", "new3", "y"},
		{"GET", "new3"},
		{"MSET", "bin", "\x00\r\n\xff", "empty", ""},
		{"MGET", "bin", "empty", "nothing"},
		{"mset", "lower", "case"},
		{"msetnx", "lower2", "case"},
		{"mget", "lower", "lower2"},
	})
	var args []string
	var keys []string
	for i := 0; i < 100; i++ {
		k := fmt.Sprintf("m%d", i)
		args = append(args, k, fmt.Sprint(i*i))
		keys = append(keys, k)
	}
	d.Do(append([]string{"MSET"}, args...)...)
	d.Do(append([]string{"MGET"}, keys...)...)
	d.Do(append([]string{"MSETNX", "fresh", "1"}, args...)...)
	d.Do("GET", "fresh")

	doScript(d, [][]string{
		{"SET", "t", "v", "EX", "100"},
		{"MSETNX", "t", "w"},
		{"TTL", "t"},
		{"MSET", "t", "w"},
		{"TTL", "t"},
	})
}

func TestStringSetrangeGetrange(t *testing.T) {
	d := newStringsDiff(t, 6)
	doScript(d, [][]string{
		{"SETRANGE", "k", "0", ""},
		{"GET", "k"},
		{"SETRANGE", "k", "5", ""},
		{"GET", "k"},
		{"SETRANGE", "k", "3", "abc"},
		{"GET", "k"},
		{"SETRANGE", "k", "1", "Z"},
		{"GET", "k"},
		{"SETRANGE", "k", "8", "!"},
		{"GET", "k"},
		{"SETRANGE", "k", "0", "0123456789"},
		{"GET", "k"},
		{"SETRANGE", "k", "100", ""},
		{"SETRANGE", "k", "0", ""},
		{"SETRANGE", "k", "-1", "x"},
		{"SETRANGE", "k", "-1", ""},
		{"SETRANGE", "k", "x", "x"},
		{"SETRANGE", "k", "1.5", "x"},
		{"SETRANGE", "k", "+1", "x"},
		{"SETRANGE", "k", "536870911", "xx"},
		{"SETRANGE", "k", "536870912", ""},
		{"SETRANGE", "k", "536870912", "x"},
		{"SETRANGE", "k", "9223372036854775807", "x"},
		{"SETRANGE", "k", "9223372036854775808", "x"},
		{"SETRANGE", "missing", "536870912", "x"},
		{"SETRANGE", "missing", "-1", ""},
		{"SETRANGE", "missing", "9223372036854775807", ""},
		{"GET", "missing"},
		{"SET", "n", "1234"},
		{"SETRANGE", "n", "1", "9"},
		{"GET", "n"},
		{"INCR", "n"},
		{"SETRANGE", "n", "4", "\x00"},
		{"INCR", "n"},
		{"SETRANGE", "bin", "2", "\x00\xff"},
		{"GET", "bin"},
		{"SETRANGE", "big", "10000", "end"},
		{"STRLEN", "big"},
		{"GETRANGE", "big", "9998", "-1"},
	})
	doScript(d, [][]string{
		{"GETRANGE", "missing", "0", "-1"},
		{"GETRANGE", "missing", "5", "1"},
		{"GETRANGE", "missing", "x", "1"},
		{"GETRANGE", "missing", "0", "y"},
		{"SUBSTR", "missing", "0", "-1"},
		{"SET", "s", "Hello World"},
	})
	ranges := [][2]string{
		{"0", "4"}, {"-5", "-1"}, {"0", "-1"}, {"-100", "100"}, {"5", "3"}, {"-1", "-5"},
		{"20", "30"}, {"0", "0"}, {"-1", "-1"}, {"10", "10"}, {"11", "11"}, {"0", "100"},
		{"-3", "-2"}, {"-11", "-11"}, {"-12", "-12"}, {"-12", "0"}, {"3", "-100"}, {"-100", "-50"},
		{"-9223372036854775808", "9223372036854775807"}, {"0", "-9223372036854775808"},
		{"9223372036854775807", "9223372036854775807"}, {"-9223372036854775808", "-9223372036854775808"},
		{"x", "y"}, {"0", "1.5"}, {"01", "2"}, {"9223372036854775808", "0"},
	}
	for _, r := range ranges {
		d.Do("GETRANGE", "s", r[0], r[1])
	}
	doScript(d, [][]string{
		{"SUBSTR", "s", "6", "-1"},
		{"SUBSTR", "s", "0", "-100"},
		{"SUBSTR", "s", "x", "1"},
		{"SET", "e", ""},
		{"GETRANGE", "e", "0", "-1"},
		{"GETRANGE", "e", "0", "0"},
		{"GETRANGE", "e", "-1", "-1"},
		{"GETRANGE", "e", "-1", "0"},
		{"SET", "n", "12345"},
		{"GETRANGE", "n", "1", "2"},
		{"GETRANGE", "n", "-2", "-1"},
		{"SET", "one", "x"},
		{"GETRANGE", "one", "0", "0"},
		{"GETRANGE", "one", "-1", "0"},
		{"GETRANGE", "one", "1", "1"},
	})
	doScript(d, [][]string{
		{"SET", "t", "v", "EX", "100"},
		{"SETRANGE", "t", "3", "x"},
		{"TTL", "t"},
	})
}

func TestStringLCS(t *testing.T) {
	d := newStringsDiff(t, 7)
	pairs := [][2]string{
		{"ohmytext", "mynewtext"},
		{"", ""},
		{"abc", ""},
		{"aaaa", "aa"},
		{"abcdef", "fedcba"},
		{"abab", "baba"},
		{"x", "x"},
		{"1234567890", "13579"},
		{"ACCGGTCGAGTGCGCGGAAGCCGGCCGAA", "GTCGTTCGGAATGCCGTTGCTCTGTAAA"},
		{"the quick brown fox", "the lazy dog jumps over the quick fox"},
		{"aaabbbccc", "abcabcabc"},
	}
	options := [][]string{
		nil,
		{"LEN"},
		{"IDX"},
		{"IDX", "WITHMATCHLEN"},
		{"IDX", "MINMATCHLEN", "2"},
		{"IDX", "MINMATCHLEN", "3", "WITHMATCHLEN"},
		{"IDX", "MINMATCHLEN", "-1"},
		{"WITHMATCHLEN"},
		{"MINMATCHLEN", "2"},
	}
	for i, p := range pairs {
		ka, kb := fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i)
		d.Do("MSET", ka, p[0], kb, p[1])
		for _, o := range options {
			d.Do(append([]string{"LCS", ka, kb}, o...)...)
		}
	}
	doScript(d, [][]string{
		{"LCS", "a0", "b0", "LEN", "IDX"},
		{"LCS", "a0", "b0", "IDX", "LEN"},
		{"LCS", "a0", "b0", "MINMATCHLEN"},
		{"LCS", "a0", "b0", "MINMATCHLEN", "x"},
		{"LCS", "a0", "b0", "MINMATCHLEN", "1.5"},
		{"LCS", "a0", "b0", "FOO"},
		{"LCS", "a0", "b0", "IDX", "FOO"},
		{"LCS", "a0", "b0", "idx", "withmatchlen", "minmatchlen", "4"},
		{"LCS", "a0", "b0", "LEN", "LEN"},
		{"LCS", "a0", "b0", "IDX", "MINMATCHLEN", "1", "MINMATCHLEN", "5"},
		{"LCS", "missing", "missing2"},
		{"LCS", "missing", "missing2", "IDX"},
		{"LCS", "missing", "missing2", "LEN"},
		{"LCS", "a0", "missing", "IDX", "WITHMATCHLEN"},
		{"LCS", "a0", "a0"},
		{"LCS", "a0", "a0", "IDX"},
		{"SET", "num", "12345"},
		{"SET", "num2", "2244"},
		{"LCS", "num", "num2"},
		{"LCS", "num", "num2", "IDX", "WITHMATCHLEN"},
	})
}

func TestStringArity(t *testing.T) {
	d := newStringsDiff(t, 8)
	doScript(d, [][]string{
		{"GETDEL"},
		{"GETDEL", "a", "b"},
		{"GETEX"},
		{"APPEND", "a"},
		{"APPEND", "a", "b", "c"},
		{"STRLEN"},
		{"STRLEN", "a", "b"},
		{"INCR"},
		{"INCR", "a", "b"},
		{"DECR"},
		{"INCRBY", "a"},
		{"INCRBY", "a", "1", "2"},
		{"DECRBY", "a"},
		{"INCRBYFLOAT", "a"},
		{"INCRBYFLOAT", "a", "1", "2"},
		{"MGET"},
		{"MSET"},
		{"MSET", "a"},
		{"MSETNX", "a"},
		{"SETRANGE", "a", "1"},
		{"SETRANGE", "a", "1", "b", "c"},
		{"GETRANGE", "a", "1"},
		{"SUBSTR", "a", "1"},
		{"SUBSTR", "a", "1", "2", "3"},
		{"LCS", "a"},
		{"LCS"},
	})
}

// Keys whose deadline has passed are missing for every string command.
func TestStringExpiredKeys(t *testing.T) {
	d := newStringsDiff(t, 9)
	keys := []string{"i", "a", "s", "g", "x", "r", "m", "f", "l"}
	for _, k := range keys {
		d.Do("SET", k, "12", "PX", "1")
	}
	time.Sleep(50 * time.Millisecond)
	doScript(d, [][]string{
		{"INCR", "i"},
		{"APPEND", "a", "z"},
		{"STRLEN", "s"},
		{"GETDEL", "g"},
		{"GETEX", "x", "EX", "10"},
		{"SETRANGE", "r", "0", ""},
		{"SETRANGE", "r", "2", "z"},
		{"GET", "r"},
		{"MGET", "m", "i"},
		{"MSETNX", "m", "1"},
		{"INCRBYFLOAT", "f", "0.5"},
		{"LCS", "l", "a"},
	})
}

// The size limit follows proto-max-bulk-len; LCS's transient table is
// bounded by it too.
func TestStringProtoMaxBulkLen(t *testing.T) {
	RequireRedis(t)
	z := StartZredis(t, "--proto-max-bulk-len", "1mb")
	r := StartRedis(t, "--proto-max-bulk-len", "1mb")
	d := &Diff{t: t, Z: Dial(t, z.Addr), R: Dial(t, r.Addr)}
	mb := 1 << 20
	doScript(d, [][]string{
		{"SETRANGE", "k", fmt.Sprint(mb - 1), "x"},
		{"STRLEN", "k"},
		{"SETRANGE", "k", fmt.Sprint(mb), "x"},
		{"SETRANGE", "k", fmt.Sprint(mb - 1), "xy"},
		{"SETRANGE", "k", fmt.Sprint(mb), ""},
		{"APPEND", "k", ""},
		{"APPEND", "k", "x"},
		{"STRLEN", "k"},
		{"SETRANGE", "new", fmt.Sprint(mb), "x"},
		{"SETRANGE", "new", fmt.Sprint(mb), ""},
		{"SET", "half", strings.Repeat("h", mb/2)},
		{"APPEND", "half", strings.Repeat("h", mb/2)},
		{"APPEND", "half", "h"},
		{"STRLEN", "half"},
		{"MSET", "a400", strings.Repeat("a", 400), "b400", strings.Repeat("ab", 200)},
		{"LCS", "a400", "b400", "LEN"},
		{"MSET", "a600", strings.Repeat("a", 600), "b600", strings.Repeat("ab", 300)},
		{"LCS", "a600", "b600"},
		{"LCS", "a600", "b600", "LEN"},
		{"LCS", "a600", "b600", "IDX"},
		{"LCS", "a600", "missing"},
		{"LCS", "a600", "b600", "LEN", "IDX"},
	})
}

// Seeded random inputs where the algorithms matter: long double rounding
// as values accumulate, GETRANGE's index clamping, SETRANGE's padding and
// the LCS walk's choice among equally long subsequences.
func TestStringRandomized(t *testing.T) {
	d := newStringsDiff(t, 10)
	rng := rand.New(rand.NewPCG(7, 0))

	for i := 0; i < 150; i++ {
		var v string
		switch rng.IntN(4) {
		case 0:
			v = fmt.Sprintf("%d.%0*d", rng.IntN(1000)-500, 1+rng.IntN(6), rng.IntN(1000000))
		case 1:
			v = fmt.Sprintf("%.*f", rng.IntN(18), rng.NormFloat64()*1e3)
		case 2:
			v = fmt.Sprintf("%de%d", rng.IntN(2000)-1000, rng.IntN(40)-20)
		default:
			v = fmt.Sprintf("%.17g", rng.Float64())
		}
		d.Do("INCRBYFLOAT", fmt.Sprintf("f%d", i%5), v)
	}

	s := "The quick brown fox jumps over the lazy dog"
	d.Do("SET", "s", s)
	for i := 0; i < 100; i++ {
		d.Do("GETRANGE", "s", fmt.Sprint(rng.IntN(100)-50), fmt.Sprint(rng.IntN(100)-50))
	}

	for i := 0; i < 60; i++ {
		d.Do("SETRANGE", "r", fmt.Sprint(rng.IntN(40)), strings.Repeat(string(rune('a'+rng.IntN(26))), rng.IntN(5)))
	}
	d.Do("GET", "r")

	randStr := func(n int, alphabet string) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	for i := 0; i < 60; i++ {
		alphabet := []string{"ab", "abc", "ACGT", "abcdefghij"}[i%4]
		d.Do("MSET", "x", randStr(rng.IntN(30), alphabet), "y", randStr(rng.IntN(30), alphabet))
		d.Do("LCS", "x", "y")
		d.Do("LCS", "x", "y", "IDX", "WITHMATCHLEN", "MINMATCHLEN", fmt.Sprint(rng.IntN(3)))
	}
}
