package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Differential tests of the hash family. Small (listpack) hashes answer
// in insertion order on both servers and are compared byte for byte;
// large (hashtable) ones are compared as sorted field/value pairs.

// hashPairs splits a reply of field/value pairs into the pairs, each
// kept whole, and sorts them: a flat RESP2 array, a RESP3 map, or a
// RESP3 array of two-element arrays (HRANDFIELD WITHVALUES).
func hashPairs(t *testing.T, raw string) []string {
	t.Helper()
	rd := bufio.NewReader(strings.NewReader(raw))
	head, err := rd.ReadString('\n')
	if err != nil || (head[0] != '*' && head[0] != '%') {
		t.Fatalf("not an array: %q", raw)
	}
	var elems []string
	for {
		var b bytes.Buffer
		if err := readRaw(rd, &b); err != nil {
			break
		}
		if pair, ok := strings.CutPrefix(b.String(), "*2\r\n"); ok && head[0] == '*' {
			var first bytes.Buffer
			readRaw(bufio.NewReader(strings.NewReader(pair)), &first)
			elems = append(elems, first.String(), pair[first.Len():])
			continue
		}
		elems = append(elems, b.String())
	}
	if len(elems)%2 != 0 {
		t.Fatalf("odd number of elements: %q", raw)
	}
	pairs := make([]string, 0, len(elems)/2)
	for i := 0; i < len(elems); i += 2 {
		pairs = append(pairs, elems[i]+elems[i+1])
	}
	sort.Strings(pairs)
	return pairs
}

// doPairs compares a reply of field/value pairs whose pair order is
// unspecified (HGETALL of a hashtable).
func (d *Diff) doPairs(args ...string) {
	d.t.Helper()
	z, r := d.Z.Do(args...), d.R.Do(args...)
	diffCases.Add(1)
	zp, rp := hashPairs(d.t, z), hashPairs(d.t, r)
	if strings.Join(zp, "") != strings.Join(rp, "") {
		d.t.Errorf("%q (pairs unordered):\n zredis: %q\n  redis: %q", args, z, r)
	}
}

func TestHashesBasic(t *testing.T) {
	d := NewDiff(t)
	d.Do("HSET", "h", "f1", "v1", "f2", "v2", "f3", "v3")
	d.Do("HSET", "h", "f2", "new", "f4", "v4")
	d.Do("HSET", "h", "f1", "longer value here")
	d.Do("HSET", "h", "f1", "")
	d.Do("HSET", "h")
	d.Do("HSET", "h", "f")
	d.Do("HSET", "h", "f", "v", "g")
	d.Do("HMSET", "h", "f", "v", "g")
	d.Do("HMSET", "h", "f5", "v5", "f6", "v6")
	d.Do("HMSET", "h")
	d.Do("HGETALL", "h")
	d.Do("HKEYS", "h")
	d.Do("HVALS", "h")
	d.Do("HLEN", "h")
	d.Do("HGET", "h", "f2")
	d.Do("HGET", "h", "nope")
	d.Do("HGET", "missing", "f")
	d.Do("HMGET", "h", "f1", "nope", "f3", "f3")
	d.Do("HMGET", "missing", "a", "b")
	d.Do("HEXISTS", "h", "f3")
	d.Do("HEXISTS", "h", "nope")
	d.Do("HEXISTS", "missing", "f")
	d.Do("HSTRLEN", "h", "f2")
	d.Do("HSTRLEN", "h", "nope")
	d.Do("HSTRLEN", "missing", "f")
	d.Do("HLEN", "missing")
	d.Do("HGETALL", "missing")
	d.Do("HKEYS", "missing")
	d.Do("HVALS", "missing")
	d.Do("HSETNX", "h", "f1", "x")
	d.Do("HSETNX", "h", "f7", "x")
	d.Do("HSETNX", "new", "f", "x")
	d.Do("HGETALL", "new")
	d.Do("HDEL", "h", "f1", "nope", "f2", "f2")
	d.Do("HDEL", "missing", "f")
	d.Do("HGETALL", "h")
	d.Do("HDEL", "new", "f")
	d.Do("EXISTS", "new")
	d.Do("HDEL", "h", "f3", "f4", "f5", "f6", "f7", "more")
	d.Do("EXISTS", "h")
	d.Do("OBJECT", "ENCODING", "h")
	d.Do("HSET", "h", "a", "1")
	d.Do("OBJECT", "ENCODING", "h")
	d.Do("TYPE", "h")
	d.Do("HSET", "bin", "\x00\xff", "\r\n\x00")
	d.Do("HGET", "bin", "\x00\xff")
	d.Do("HGETALL", "bin")
}

func TestHashesWrongType(t *testing.T) {
	d := NewDiff(t)
	d.Do("SET", "s", "x")
	for _, c := range [][]string{
		{"HSET", "s", "f", "v"}, {"HMSET", "s", "f", "v"}, {"HSETNX", "s", "f", "v"},
		{"HGET", "s", "f"}, {"HMGET", "s", "f"}, {"HGETALL", "s"}, {"HKEYS", "s"},
		{"HVALS", "s"}, {"HDEL", "s", "f"}, {"HEXISTS", "s", "f"}, {"HLEN", "s"},
		{"HSTRLEN", "s", "f"}, {"HINCRBY", "s", "f", "1"}, {"HINCRBYFLOAT", "s", "f", "1"},
		{"HINCRBY", "s", "f", "x"}, {"HINCRBYFLOAT", "s", "f", "x"},
		{"HRANDFIELD", "s"}, {"HRANDFIELD", "s", "2"}, {"HRANDFIELD", "s", "x"},
		{"HRANDFIELD", "s", "2", "WITHVALUES"}, {"HRANDFIELD", "s", "2", "bad"},
		{"HSCAN", "s", "0"}, {"HSCAN", "s", "x"}, {"HSCAN", "s", "0", "COUNT", "0"},
		{"HSET", "s", "f"}, {"HGET", "s"}, {"HSCAN", "s", "0", "TYPE", "hash"},
	} {
		d.Do(c...)
	}
	d.Do("GET", "s")
}

func TestHashesIncr(t *testing.T) {
	d := NewDiff(t)
	d.Do("HINCRBY", "h", "n", "5")
	d.Do("HINCRBY", "h", "n", "-12")
	d.Do("HINCRBY", "h", "n", "x")
	d.Do("HINCRBY", "h", "n", "1.5")
	d.Do("HINCRBY", "h", "n", "+1")
	d.Do("HINCRBY", "h", "n", "9223372036854775807")
	d.Do("HSET", "h", "big", "9223372036854775807")
	d.Do("HINCRBY", "h", "big", "1")
	d.Do("HINCRBY", "h", "big", "-1")
	d.Do("HSET", "h", "small", "-9223372036854775808")
	d.Do("HINCRBY", "h", "small", "-1")
	d.Do("HSET", "h", "s", "abc", "sp", " 1", "z", "007", "fl", "1.5")
	d.Do("HINCRBY", "h", "s", "1")
	d.Do("HINCRBY", "h", "sp", "1")
	d.Do("HINCRBY", "h", "z", "1")
	d.Do("HINCRBY", "h", "fl", "1")
	d.Do("HINCRBY", "new", "f", "0")
	d.Do("HGETALL", "new")
	d.Do("HINCRBYFLOAT", "h", "f", "10.5")
	d.Do("HINCRBYFLOAT", "h", "f", "0.1")
	d.Do("HINCRBYFLOAT", "h", "f", "-5e3")
	d.Do("HINCRBYFLOAT", "h", "f", "1e-20")
	d.Do("HINCRBYFLOAT", "h", "f", "x")
	d.Do("HINCRBYFLOAT", "h", "f", "inf")
	d.Do("HINCRBYFLOAT", "h", "f", "-inf")
	d.Do("HINCRBYFLOAT", "h", "f", "nan")
	d.Do("HINCRBYFLOAT", "h", "f", "0x10")
	d.Do("HINCRBYFLOAT", "h", "f", " 1")
	d.Do("HINCRBYFLOAT", "h", "n", "1.5")
	d.Do("HINCRBYFLOAT", "h", "s", "1")
	d.Do("HINCRBYFLOAT", "h", "z", "1")
	d.Do("HSET", "h", "inf", "inf", "huge", "1e4930")
	d.Do("HINCRBYFLOAT", "h", "inf", "1")
	d.Do("HINCRBYFLOAT", "h", "huge", "1e4930")
	d.Do("HINCRBYFLOAT", "h", "huge", "1")
	d.Do("HINCRBYFLOAT", "h", "mz", "-0")
	d.Do("HINCRBYFLOAT", "newf", "f", "3.0")
	d.Do("OBJECT", "ENCODING", "h")
	d.doPairs("HGETALL", "h")
	d.Do("HGETALL", "newf")
	d.Do("HSTRLEN", "h", "f")
}

func TestHashesRandField(t *testing.T) {
	d := NewDiff(t)
	d.Do("HRANDFIELD", "missing")
	d.Do("HRANDFIELD", "missing", "3")
	d.Do("HRANDFIELD", "missing", "-3", "WITHVALUES")
	d.Do("HRANDFIELD", "missing", "x")
	d.Do("HRANDFIELD", "missing", "1", "bad")
	d.Do("HRANDFIELD", "missing", "1", "WITHVALUES", "x")
	d.Do("HSET", "one", "f", "v")
	d.Do("HRANDFIELD", "one")
	d.Do("HRANDFIELD", "one", "1")
	d.Do("HRANDFIELD", "one", "-3")
	d.Do("HRANDFIELD", "one", "-3", "WITHVALUES")
	d.Do("HRANDFIELD", "one", "5", "withvalues")
	d.Do("HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4", "e", "5")
	for _, c := range [][]string{
		{"0"}, {"0", "WITHVALUES"}, {"5"}, {"10", "WITHVALUES"}, {"x"},
		{"-9223372036854775808"}, {"-9223372036854775807", "WITHVALUES"},
		{"4611686018427387904", "WITHVALUES"}, {"-4611686018427387905", "WITHVALUES"},
		{"9223372036854775808"}, {"1", "WITHVALUES", "WITHVALUES"}, {"1", "bad"},
	} {
		d.Do(append([]string{"HRANDFIELD", "h"}, c...)...)
	}
	for _, c := range [][]string{
		{}, {"1"}, {"3"}, {"-3"}, {"-20"}, {"3", "WITHVALUES"}, {"-7", "WITHVALUES"},
	} {
		d.DoLen(append([]string{"HRANDFIELD", "h"}, c...)...)
	}
	// Shapes: RESP2 flat pairs; the drawn members all belong to the hash.
	for i := 0; i < 20; i++ {
		z := d.Z.Do("HRANDFIELD", "h", "-4", "WITHVALUES")
		if !strings.HasPrefix(z, "*8\r\n") && !(diffResp3 && strings.HasPrefix(z, "*4\r\n*2\r\n")) {
			t.Fatalf("shape: %q", z)
		}
		for _, p := range hashPairs(t, z) {
			if !strings.Contains("$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n$1\r\nd\r\n$1\r\n4\r\n$1\r\ne\r\n$1\r\n5\r\n", p) {
				t.Fatalf("pair %q not in the hash", p)
			}
		}
		u := bulksAll(t, d.Z.Do("HRANDFIELD", "h", "3"))
		if len(u) != 3 || u[0] == u[1] || u[1] == u[2] || u[0] == u[2] {
			t.Fatalf("not distinct: %q", u)
		}
	}
	// A large hash: every shape.
	args := []string{"HSET", "big"}
	for i := 0; i < 600; i++ {
		args = append(args, "f"+strconv.Itoa(i), "v"+strconv.Itoa(i))
	}
	d.Do(args...)
	d.Do("OBJECT", "ENCODING", "big")
	d.doPairs("HRANDFIELD", "big", "1000", "WITHVALUES")
	d.DoSorted("HRANDFIELD", "big", "600")
	for _, c := range [][]string{{"10"}, {"500"}, {"-700"}, {"300", "WITHVALUES"}, {"-5", "WITHVALUES"}} {
		d.DoLen(append([]string{"HRANDFIELD", "big"}, c...)...)
	}
	u := bulksAll(t, d.Z.Do("HRANDFIELD", "big", "500"))
	seen := map[string]bool{}
	for _, f := range u {
		if seen[f] {
			t.Fatalf("repeated %q", f)
		}
		seen[f] = true
	}
	if len(u) != 500 {
		t.Fatalf("got %d", len(u))
	}
}

// bulksAll decodes an array of bulk strings (which may hold CR LF).
func bulksAll(t *testing.T, raw string) []string {
	t.Helper()
	rd := bufio.NewReader(strings.NewReader(raw))
	head, err := rd.ReadString('\n')
	if err != nil || (head[0] != '*' && head[0] != '~') {
		t.Fatalf("not an array: %q", raw)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(head[1:]))
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		l, _ := rd.ReadString('\n')
		sz, _ := strconv.Atoi(strings.TrimSpace(l[1:]))
		b := make([]byte, sz+2)
		if _, err := ioReadFull(rd, b); err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b[:sz]))
	}
	return out
}

func TestHashesEncoding(t *testing.T) {
	d := NewDiff(t)
	long := strings.Repeat("x", 65)
	d.Do("HSET", "a", "f", strings.Repeat("x", 64))
	d.Do("OBJECT", "ENCODING", "a")
	d.Do("HSET", "a", "g", long)
	d.Do("OBJECT", "ENCODING", "a")
	d.Do("HSET", "b", long, "v")
	d.Do("OBJECT", "ENCODING", "b")
	d.Do("HSET", "c", "f", "v")
	d.Do("HSETNX", "c", "f", long)
	d.Do("OBJECT", "ENCODING", "c")
	d.Do("HGET", "c", "f")
	d.Do("HSET", "d", "f", "1")
	d.Do("HINCRBYFLOAT", "d", long, "1")
	d.Do("OBJECT", "ENCODING", "d")
	d.Do("HSET", "e", "f", "1")
	d.Do("HINCRBY", "e", long, "1")
	d.Do("OBJECT", "ENCODING", "e")
	// The entry threshold, and no way back.
	args := []string{"HSET", "n"}
	for i := 0; i < 512; i++ {
		args = append(args, "f"+strconv.Itoa(i), "v")
	}
	d.Do(args...)
	d.Do("OBJECT", "ENCODING", "n")
	d.Do("HGETALL", "n")
	d.Do("HSET", "n", "one-more", "v")
	d.Do("OBJECT", "ENCODING", "n")
	d.Do("HDEL", "n", "one-more", "f1", "f2")
	d.Do("OBJECT", "ENCODING", "n")
	d.doPairs("HGETALL", "n")
	d.DoSorted("HKEYS", "n")
	d.DoSorted("HVALS", "n")
	// Configured thresholds.
	d.DoBoth("CONFIG", "SET", "hash-max-listpack-entries", "2")
	d.Do("HSET", "t", "a", "1", "b", "2")
	d.Do("OBJECT", "ENCODING", "t")
	d.Do("HSET", "t", "c", "3")
	d.Do("OBJECT", "ENCODING", "t")
	d.DoBoth("CONFIG", "SET", "hash-max-listpack-entries", "0")
	d.Do("HSET", "t0", "a", "1")
	d.Do("OBJECT", "ENCODING", "t0")
	d.DoBoth("CONFIG", "SET", "hash-max-listpack-entries", "512")
	d.DoBoth("CONFIG", "SET", "hash-max-listpack-value", "3")
	d.Do("HSET", "t3", "abc", "def")
	d.Do("OBJECT", "ENCODING", "t3")
	d.Do("HSET", "t3", "abcd", "e")
	d.Do("OBJECT", "ENCODING", "t3")
	d.DoBoth("CONFIG", "SET", "hash-max-listpack-value", "64")
}

func TestHashesLarge(t *testing.T) {
	d := NewDiff(t)
	for i := 0; i < 2000; i += 100 {
		args := []string{"HSET", "h"}
		for j := i; j < i+100; j++ {
			args = append(args, fmt.Sprintf("field:%d", j), fmt.Sprintf("value:%d", j*7))
		}
		d.Do(args...)
	}
	d.Do("HLEN", "h")
	d.Do("HGET", "h", "field:1234")
	d.Do("HMGET", "h", "field:1", "field:99999", "field:1999")
	d.Do("HSET", "h", "field:5", "changed")
	d.Do("HGET", "h", "field:5")
	// A value rewritten at its length (in its record, for zredis) and
	// a COPY that shares the records: each keeps its own value.
	d.Do("HSET", "h", "field:5", "CHANGED")
	d.Do("COPY", "h", "h2")
	d.Do("HSET", "h", "field:5", "source!")
	d.Do("HSET", "h2", "field:5", "copy!!!", "field:6", "copy:42")
	d.Do("HMGET", "h", "field:5", "field:6")
	d.Do("HMGET", "h2", "field:5", "field:6")
	d.Do("HINCRBY", "h", "field:5", "1")
	d.Do("HINCRBY", "h", "ctr", "1")
	d.Do("HINCRBYFLOAT", "h", "ctr", "1.25")
	d.Do("HSTRLEN", "h", "field:1999")
	for i := 0; i < 2000; i += 3 {
		d.Do("HDEL", "h", fmt.Sprintf("field:%d", i))
	}
	d.Do("HLEN", "h")
	d.Do("HEXISTS", "h", "field:3")
	d.Do("HEXISTS", "h", "field:4")
	d.doPairs("HGETALL", "h")
	d.DoSorted("HKEYS", "h")
	d.DoSorted("HVALS", "h")
	d.Do("OBJECT", "ENCODING", "h")
	// Delete down to nothing: the key goes.
	args := []string{"HDEL", "h", "ctr"}
	for i := 0; i < 2000; i++ {
		args = append(args, fmt.Sprintf("field:%d", i))
	}
	d.Do(args...)
	d.Do("EXISTS", "h")
}

func TestHashesScan(t *testing.T) {
	d := NewDiff(t)
	d.Do("HSCAN", "missing", "0")
	d.Do("HSCAN", "missing", "0", "COUNT", "0")
	d.Do("HSCAN", "missing", "x")
	d.Do("HSET", "h", "a1", "1", "b1", "2", "a2", "3", "c", "4")
	d.Do("HSCAN", "h", "0")
	d.Do("HSCAN", "h", "123")
	d.Do("HSCAN", "h", "0", "MATCH", "a*")
	d.Do("HSCAN", "h", "0", "match", "*")
	d.Do("HSCAN", "h", "0", "MATCH", "zz*", "COUNT", "1")
	d.Do("HSCAN", "h", "0", "COUNT", "1")
	d.Do("HSCAN", "h", "0", "COUNT", "0")
	d.Do("HSCAN", "h", "0", "COUNT", "-1")
	d.Do("HSCAN", "h", "0", "COUNT", "x")
	d.Do("HSCAN", "h", "0", "COUNT")
	d.Do("HSCAN", "h", "0", "TYPE", "string")
	d.Do("HSCAN", "h", "0", "NOVALUES")
	d.Do("HSCAN", "h", "-1")
	d.Do("HSCAN", "h", "18446744073709551616")
	d.Do("HSCAN", "h", "1.5")
	d.Do("HSCAN", "h", "")

	// A hashtable: a full scan sees every field once at least, with
	// its value, and MATCH filters fields.
	args := []string{"HSET", "big"}
	for i := 0; i < 1000; i++ {
		args = append(args, fmt.Sprintf("f%d", i), fmt.Sprintf("v%d", i))
	}
	d.Do(args...)
	for _, c := range []string{"1", "10", "100", "5000"} {
		z := hscanAll(t, d.Z, "big", "COUNT", c)
		r := hscanAll(t, d.R, "big", "COUNT", c)
		if len(z) != 1000 || fmt.Sprint(z) != fmt.Sprint(r) {
			t.Fatalf("COUNT %s: zredis %d fields, redis %d", c, len(z), len(r))
		}
	}
	z := hscanAll(t, d.Z, "big", "MATCH", "f1*")
	r := hscanAll(t, d.R, "big", "MATCH", "f1*")
	if len(z) != 111 || fmt.Sprint(z) != fmt.Sprint(r) {
		t.Fatalf("MATCH: zredis %d, redis %d", len(z), len(r))
	}
}

// hscanAll runs a complete HSCAN and returns field=value pairs seen,
// sorted and deduplicated.
func hscanAll(t *testing.T, c *Conn, key string, opts ...string) []string {
	t.Helper()
	return scanCollect(t, c, []string{"HSCAN", key}, opts, 2)
}

// TestHashesScanGuarantee grows and shrinks a hashtable between HSCAN
// calls: every field present for the whole scan must be returned.
func TestHashesScanGuarantee(t *testing.T) {
	z := NewDiff(t).Z
	args := []string{"HSET", "h"}
	for i := 0; i < 3000; i++ {
		args = append(args, fmt.Sprintf("stable%d", i), "v")
	}
	z.Do(args...)
	seen := map[string]bool{}
	scanPages(t, z, []string{"HSCAN", "h"}, []string{"COUNT", "20"}, func(step int, elems []string) {
		for i := 0; i < len(elems); i += 2 {
			seen[elems[i]] = true
		}
		// Grow by many fields (forcing resizes), then shrink them away.
		if step%10 == 0 {
			add := []string{"HSET", "h"}
			for j := 0; j < 2000; j++ {
				add = append(add, fmt.Sprintf("tmp%d-%d", step, j), "x")
			}
			z.Do(add...)
		}
		if step%10 == 5 {
			del := []string{"HDEL", "h"}
			for s := 0; s <= step; s += 10 {
				for j := 0; j < 2000; j++ {
					del = append(del, fmt.Sprintf("tmp%d-%d", s, j))
				}
			}
			z.Do(del...)
		}
	})
	for i := 0; i < 3000; i++ {
		if !seen[fmt.Sprintf("stable%d", i)] {
			t.Fatalf("stable%d never returned", i)
		}
	}
}
