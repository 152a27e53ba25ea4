package tests

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Differential tests of the generic key commands (DEL ... OBJECT).
// Replies that depend on the clock are made stable with far-future
// absolute deadlines, or compared after rounding (doApprox).

// farSec is a deadline far in the future, in Unix seconds.
const farSec = "4102444800" // 2100-01-01

// doApprox sends a command whose integer reply depends on the clock to
// both servers and requires the two integers within tol of each other.
func (d *Diff) doApprox(tol int64, args ...string) {
	d.t.Helper()
	z, r := d.Z.Do(args...), d.R.Do(args...)
	diffCases.Add(1)
	zi, zerr := parseIntReply(z)
	ri, rerr := parseIntReply(r)
	if zerr != nil || rerr != nil || zi-ri > tol || ri-zi > tol {
		d.t.Errorf("%q (within %d):\n zredis: %q\n  redis: %q", args, tol, z, r)
	}
}

func parseIntReply(raw string) (int64, error) {
	if !strings.HasPrefix(raw, ":") {
		return 0, fmt.Errorf("not an integer reply: %q", raw)
	}
	return strconv.ParseInt(strings.TrimSuffix(raw[1:], "\r\n"), 10, 64)
}

// bulks decodes an array of bulk strings from a raw reply.
func bulks(t *testing.T, raw string) []string {
	t.Helper()
	lines := strings.Split(raw, "\r\n")
	if !strings.HasPrefix(lines[0], "*") {
		t.Fatalf("not an array: %q", raw)
	}
	n, _ := strconv.Atoi(lines[0][1:])
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, lines[2+2*i])
	}
	return out
}

// scanPages walks a complete SCAN, HSCAN, SSCAN or ZSCAN on c: cmd is
// the command up to the cursor ("SCAN", or "HSCAN", key), opts follow
// the cursor. page receives the elements of each page, in order (a
// field and its value, a member and its score, for HSCAN and ZSCAN) with
// the page's number, and runs before the next page is asked for (a test
// may change the key between pages). It is the one SCAN page collector
// of the suite.
func scanPages(t *testing.T, c *Conn, cmd []string, opts []string, page func(step int, elems []string)) {
	t.Helper()
	cursor := "0"
	for step := 0; ; step++ {
		if step > 100000 {
			t.Fatalf("%s does not terminate", cmd[0])
		}
		raw := c.Do(append(append(append([]string{}, cmd...), cursor), opts...)...)
		// *2 $n cursor *m $k elem ...
		rd := bufio.NewReader(strings.NewReader(raw))
		if head, _ := rd.ReadString('\n'); head != "*2\r\n" {
			t.Fatalf("%s reply %q", cmd[0], raw)
		}
		rd.ReadString('\n')
		next, _ := rd.ReadString('\n')
		cursor = strings.TrimSpace(next)
		rest, _ := rd.ReadString(0)
		page(step, bulksAll(t, rest))
		if cursor == "0" {
			return
		}
	}
}

// scanAll runs a complete SCAN with opts on c and returns the keys seen,
// sorted and deduplicated.
func scanAll(t *testing.T, c *Conn, opts ...string) []string {
	t.Helper()
	return scanCollect(t, c, []string{"SCAN"}, opts, 1)
}

// scanCollect runs a complete scan (scanPages) and returns what it saw,
// sorted and deduplicated: each element when per is 1, each pair as
// "field=value" when per is 2.
func scanCollect(t *testing.T, c *Conn, cmd []string, opts []string, per int) []string {
	t.Helper()
	seen := map[string]bool{}
	scanPages(t, c, cmd, opts, func(_ int, elems []string) {
		for i := 0; i+per-1 < len(elems); i += per {
			seen[strings.Join(elems[i:i+per], "=")] = true
		}
	})
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// doScan compares complete scans: the same set of keys, whatever the
// cursors along the way.
func (d *Diff) doScan(opts ...string) {
	d.t.Helper()
	z, r := scanAll(d.t, d.Z, opts...), scanAll(d.t, d.R, opts...)
	diffCases.Add(1)
	if strings.Join(z, "\n") != strings.Join(r, "\n") {
		d.t.Errorf("SCAN %q:\n zredis: %q\n  redis: %q", opts, z, r)
	}
}

func TestKeyArityDiff(t *testing.T) {
	d := NewDiff(t)
	for _, args := range [][]string{
		{"DEL"}, {"UNLINK"}, {"EXISTS"}, {"TOUCH"}, {"TYPE"}, {"TYPE", "a", "b"},
		{"EXPIRE", "k"}, {"PEXPIRE", "k"}, {"EXPIREAT", "k"}, {"PEXPIREAT", "k"},
		{"TTL"}, {"TTL", "a", "b"}, {"PTTL"}, {"EXPIRETIME"}, {"PEXPIRETIME", "a", "b"},
		{"PERSIST"}, {"PERSIST", "a", "b"}, {"RENAME", "a"}, {"RENAME", "a", "b", "c"},
		{"RENAMENX", "a"}, {"KEYS"}, {"KEYS", "a", "b"}, {"SCAN"}, {"RANDOMKEY", "x"},
		{"MOVE", "a"}, {"MOVE", "a", "1", "2"}, {"COPY", "a"}, {"OBJECT"},
		{"OBJECT", "ENCODING"}, {"OBJECT", "ENCODING", "a", "b"}, {"OBJECT", "REFCOUNT"},
		{"OBJECT", "IDLETIME"}, {"OBJECT", "FREQ"}, {"OBJECT", "HELP", "x"},
		{"OBJECT", "nosuch"}, {"OBJECT", "nosuch", "k"},
	} {
		d.Do(args...)
	}
}

func TestKeyDelExistsTypeDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("DEL", "a")
	d.Do("SET", "a", "1")
	d.Do("SET", "b", "2")
	d.Do("EXISTS", "a")
	d.Do("EXISTS", "a", "a", "b", "nope")
	d.Do("TYPE", "a")
	d.Do("TYPE", "nope")
	d.Do("DEL", "a", "a", "nope")
	d.Do("EXISTS", "a")
	d.Do("UNLINK", "b", "c")
	d.Do("TYPE", "b")
	d.Do("SET", "c", "3")
	d.Do("TOUCH", "c", "c", "d")
	d.Do("TOUCH", "d")
	d.Do("UNLINK", "c")
	d.Do("DEL", "")
	d.Do("SET", "", "empty key")
	d.Do("EXISTS", "")
	d.Do("TYPE", "")
	d.Do("DEL", "")
}

func TestKeyExpireDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("EXPIRE", "nokey", "100")
	d.Do("PEXPIRE", "nokey", "100")
	d.Do("EXPIREAT", "nokey", farSec)
	d.Do("PEXPIREAT", "nokey", farSec+"000")
	d.Do("TTL", "nokey")
	d.Do("PTTL", "nokey")
	d.Do("EXPIRETIME", "nokey")
	d.Do("PEXPIRETIME", "nokey")
	d.Do("SET", "k", "v")
	d.Do("TTL", "k")
	d.Do("PTTL", "k")
	d.Do("EXPIRETIME", "k")
	d.Do("PEXPIRETIME", "k")
	d.Do("EXPIRE", "k", "100")
	d.Do("TTL", "k")
	d.doApprox(1000, "PTTL", "k")
	d.Do("EXPIREAT", "k", farSec)
	d.Do("EXPIRETIME", "k")
	d.Do("PEXPIRETIME", "k")
	d.Do("PEXPIREAT", "k", "4102444800123")
	d.Do("PEXPIRETIME", "k")
	d.Do("EXPIRETIME", "k") // rounds 4102444800.123 to 4102444800
	d.Do("PEXPIREAT", "k", "4102444800500")
	d.Do("EXPIRETIME", "k") // and .500 up
	d.Do("PEXPIRE", "k", "50000")
	d.Do("TTL", "k")
	d.Do("PERSIST", "k")
	d.Do("PERSIST", "k")
	d.Do("PERSIST", "nokey")
	d.Do("TTL", "k")
	d.Do("EXPIRE", "k", "100", "NX")
	d.Do("EXPIRE", "k", "200", "NX")
	d.Do("TTL", "k")
	d.Do("EXPIRE", "k", "200", "XX")
	d.Do("TTL", "k")
	d.Do("PERSIST", "k")
	d.Do("EXPIRE", "k", "200", "XX")
	d.Do("EXPIRE", "k", "200", "GT")
	d.Do("EXPIRE", "k", "200", "LT")
	d.Do("TTL", "k")
	// Equal deadlines would depend on whether a millisecond passed
	// between commands: compare clearly different ones.
	d.Do("EXPIRE", "k", "150", "LT")
	d.Do("EXPIRE", "k", "100", "GT")
	d.Do("EXPIRE", "k", "300", "GT")
	d.Do("EXPIRE", "k", "250", "GT")
	d.Do("EXPIRE", "k", "250", "LT")
	d.Do("TTL", "k")
	d.Do("EXPIRE", "k", "400", "gt", "xx")
	d.Do("EXPIRE", "k", "100", "lt", "XX", "lt")
	d.Do("TTL", "k")
	d.Do("EXPIRE", "nokey", "100", "nx")
	d.Do("EXPIRE", "nokey", "100", "gt")
	d.Do("PERSIST", "k")
	d.Do("EXPIRE", "k", "-1", "GT") // no TTL = infinite: not greater
	d.Do("EXISTS", "k")
	d.Do("EXPIREAT", "k", farSec, "LT")
	d.Do("EXPIRETIME", "k")
	d.Do("PEXPIREAT", "k", "1", "LT") // in the past: deletes
	d.Do("EXISTS", "k")
}

func TestKeyExpireErrorsDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("SET", "k", "v")
	for _, cmd := range []string{"EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"} {
		d.Do(cmd, "k", "abc")
		d.Do(cmd, "k", "1.5")
		d.Do(cmd, "k", "")
		d.Do(cmd, "k", "+1")
		d.Do(cmd, "k", " 1")
		d.Do(cmd, "k", "100", "foo")
		d.Do(cmd, "k", "abc", "foo")
		d.Do(cmd, "nokey", "100", "bar")
		d.Do(cmd, "k", "100", "NX", "XX")
		d.Do(cmd, "k", "100", "nx", "gt")
		d.Do(cmd, "k", "100", "lt", "nx")
		d.Do(cmd, "k", "abc", "nx", "xx")
		d.Do(cmd, "k", "100", "gt", "lt")
		d.Do(cmd, "k", "100", "xx", "lt", "gt")
		d.Do(cmd, "k", "100", "nx", "foo")
		d.Do(cmd, "k", "9223372036854775807")
		d.Do(cmd, "k", "-9223372036854775808")
		d.Do(cmd, "k", "9223372036854775808")
		d.Do(cmd, "k", "9223372036854776")
		d.Do(cmd, "k", "-9223372036854776")
	}
	d.Do("EXISTS", "k")
}

func TestKeyExpireDeletesDiff(t *testing.T) {
	d := NewDiff(t)
	for _, c := range [][]string{
		{"EXPIRE", "k", "0"},
		{"EXPIRE", "k", "-100"},
		{"PEXPIRE", "k", "-1"},
		{"EXPIREAT", "k", "1"},
		{"EXPIREAT", "k", "0"},
		{"PEXPIREAT", "k", "1000"},
		{"EXPIRE", "k", "-9223372036854775"},
		{"PEXPIRE", "k", "-9223372036854775808"},
		{"PEXPIREAT", "k", "-9223372036854775808"},
		{"EXPIRE", "k", "-5", "LT"},
		{"EXPIRE", "k", "-5", "NX"},
	} {
		d.Do("SET", "k", "v")
		d.Do(c...)
		d.Do("EXISTS", "k")
		d.Do("TTL", "k")
	}
	d.Do("SET", "k", "v", "EX", "100")
	d.Do("EXPIRE", "k", "-5", "NX")
	d.Do("EXPIRE", "k", "-5", "GT")
	d.Do("EXPIRE", "k", "-5", "XX")
	d.Do("EXISTS", "k")
}

// Keys with a short real deadline disappear for every command.
func TestKeyLazyExpiryDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("SET", "a", "1", "PX", "50")
	d.Do("SET", "b", "2", "PX", "50")
	d.Do("SET", "c", "3", "PX", "50")
	d.Do("SET", "d", "4", "PX", "50")
	d.Do("SET", "live", "5")
	time.Sleep(120 * time.Millisecond)
	d.Do("EXISTS", "a")
	d.Do("TTL", "b")
	d.Do("TYPE", "c")
	d.Do("RENAME", "d", "x")
	d.Do("KEYS", "*")
	d.Do("DBSIZE")
	d.Do("RANDOMKEY")
	d.doScan()
	d.Do("EXPIRE", "a", "100")
	d.Do("PERSIST", "a")
	d.Do("OBJECT", "ENCODING", "a")
	d.Do("MOVE", "a", "1")
	d.Do("COPY", "a", "z")
}

func TestKeyRenameDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("RENAME", "a", "b")
	d.Do("RENAMENX", "a", "b")
	d.Do("RENAME", "a", "a")
	d.Do("RENAMENX", "a", "a")
	d.Do("SET", "a", "1")
	d.Do("RENAME", "a", "a")
	d.Do("RENAMENX", "a", "a")
	d.Do("EXPIREAT", "a", farSec)
	d.Do("RENAME", "a", "b")
	d.Do("EXISTS", "a")
	d.Do("GET", "b")
	d.Do("EXPIRETIME", "b")
	d.Do("SET", "c", "3")
	d.Do("RENAMENX", "b", "c")
	d.Do("RENAMENX", "c", "b")
	d.Do("RENAME", "c", "b")
	d.Do("GET", "b")
	d.Do("EXPIRETIME", "b")
	d.Do("RENAMENX", "b", "d")
	d.Do("GET", "d")
	d.Do("KEYS", "*")
	d.Do("SET", "e", "5", "EX", "1000")
	d.Do("RENAME", "d", "e") // destination's TTL goes with it
	d.Do("TTL", "e")
}

func TestKeyMoveDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("MOVE", "k", "1")
	d.Do("MOVE", "k", "x")
	d.Do("MOVE", "k", "")
	d.Do("MOVE", "k", "1.0")
	d.Do("MOVE", "k", "16")
	d.Do("MOVE", "k", "-1")
	d.Do("MOVE", "k", "2147483647")
	d.Do("MOVE", "k", "2147483648")
	d.Do("MOVE", "k", "-2147483649")
	d.Do("MOVE", "k", "0")
	d.Do("SET", "k", "v")
	d.Do("EXPIREAT", "k", farSec)
	d.Do("MOVE", "k", "0")
	d.Do("MOVE", "k", "3")
	d.Do("EXISTS", "k")
	d.Do("SET", "k", "other")
	d.Do("MOVE", "k", "3")
	d.Do("SELECT", "3")
	d.Do("GET", "k")
	d.Do("EXPIRETIME", "k")
	d.Do("MOVE", "k", "0")
	d.Do("MOVE", "nokey", "0")
	d.Do("SELECT", "0")
	d.Do("GET", "k")
}

func TestKeyCopyDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("COPY", "a", "b")
	d.Do("COPY", "a", "a")
	d.Do("COPY", "a", "a", "DB", "0")
	d.Do("COPY", "a", "a", "DB", "1")
	d.Do("COPY", "a", "b", "foo")
	d.Do("COPY", "a", "b", "DB")
	d.Do("COPY", "a", "b", "DB", "x")
	d.Do("COPY", "a", "b", "DB", "99")
	d.Do("COPY", "a", "b", "DB", "-1")
	d.Do("COPY", "a", "b", "DB", "x", "foo")
	d.Do("COPY", "a", "b", "foo", "DB", "x")
	d.Do("COPY", "a", "b", "REPLACE", "REPLACE", "DB", "1", "DB", "2")
	d.Do("SET", "a", "123")
	d.Do("EXPIREAT", "a", farSec)
	d.Do("COPY", "a", "b")
	d.Do("GET", "b")
	d.Do("EXPIRETIME", "b")
	d.Do("OBJECT", "ENCODING", "b")
	d.Do("OBJECT", "REFCOUNT", "b") // a copied integer is not shared
	d.Do("OBJECT", "REFCOUNT", "a")
	d.Do("COPY", "a", "b")
	d.Do("SET", "a", "new")
	d.Do("COPY", "a", "b", "replace")
	d.Do("GET", "b")
	d.Do("TTL", "b")
	d.Do("COPY", "a", "a", "db", "5")
	d.Do("SELECT", "5")
	d.Do("GET", "a")
	d.Do("COPY", "a", "c", "DB", "0")
	d.Do("SELECT", "0")
	d.Do("GET", "c")
	d.Do("SET", "big", strings.Repeat("x", 100))
	d.Do("COPY", "big", "big2")
	d.Do("OBJECT", "ENCODING", "big2")
	d.Do("APPEND", "big2", "y")
	d.Do("STRLEN", "big")
}

func TestKeyKeysDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("KEYS", "*")
	for _, k := range []string{
		"hello", "hallo", "hxllo", "hllo", "heeeello", "Hello", "h[llo", "h*llo",
		"h?llo", "h\\llo", "foo", "foo:bar", "foo:baz:1", "a-b", "a]b", "^",
		"\xff\x80", "\x7f", "", "x", "xx", "*", "?", "[", "]", "-",
	} {
		d.DoBoth("SET", k, "v")
	}
	for _, p := range []string{
		"*", "**", "***", "?", "??", "h?llo", "h*llo", "h[ae]llo", "h[^e]llo",
		"h[a-b]llo", "h[b-a]llo", "h[a-z]llo", "H*", "*llo", "*l*o", "foo*", "foo:*",
		"foo:*:?", "*:*", "\\*", "\\?", "\\[", "h\\*llo", "h\\?llo", "h\\[llo",
		"h[\\[]llo", "h[\\]]llo", "h[[]llo", "[]]", "[]", "[", "[^", "[^]", "h[", "h[e",
		"[a-]*", "[-a]*", "a[-]b", "a[]-]b", "a\\]b", "a]b", "[\\^]", "[^^]*",
		"\\", "h\\\\llo", "[\x80-\xff]*", "[\x7f-\x80]", "[a-\x80]*", "*[", "*\\",
		"", "x*", "x?", "?x", "[x]", "[x-x]x", "[!x]", "f[o-o]o*", "*o:b*", "[h]*[o]",
	} {
		d.DoSorted("KEYS", p)
	}
}

func TestKeyKeysNestingDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("SET", strings.Repeat("a", 1001), "v")
	d.DoSorted("KEYS", strings.Repeat("*a", 1000))
	d.DoSorted("KEYS", strings.Repeat("*a", 1001))
	d.DoSorted("KEYS", strings.Repeat("*", 5000)+"a")
	d.DoSorted("KEYS", strings.Repeat("a*", 40)+"b")
}

func TestKeyScanDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("SCAN", "0")
	d.Do("SCAN", "")
	d.Do("SCAN", "-1")
	d.Do("SCAN", "+0")
	d.Do("SCAN", "18446744073709551615")
	d.Do("SCAN", "18446744073709551616")
	d.Do("SCAN", " 0")
	d.Do("SCAN", "0 ")
	d.Do("SCAN", "0x10")
	d.Do("SCAN", "abc")
	d.Do("SCAN", "-")
	d.Do("SCAN", "abc", "COUNT", "0")
	d.Do("SCAN", "0", "COUNT", "0")
	d.Do("SCAN", "0", "COUNT", "-5")
	d.Do("SCAN", "0", "COUNT", "abc")
	d.Do("SCAN", "0", "COUNT", "1.5")
	d.Do("SCAN", "0", "COUNT")
	d.Do("SCAN", "0", "MATCH")
	d.Do("SCAN", "0", "TYPE")
	d.Do("SCAN", "0", "foo", "bar")
	d.Do("SCAN", "0", "COUNT", "10", "foo")
	d.Do("SCAN", "0", "COUNT", "abc", "MATCH")
	d.Do("SCAN", "0", "MATCH", "*", "COUNT", "5", "TYPE", "string")
	d.Do("SCAN", "0", "TYPE", "nosuchtype")

	d.Do("SET", "one", "1")
	d.Do("SCAN", "0")                  // a single key comes back in one call
	d.DoLen("SCAN", "0", "COUNT", "1") // cursors are the servers' own
	d.Do("SCAN", "0", "MATCH", "o*")
	d.Do("SCAN", "0", "MATCH", "x*")
	d.Do("SCAN", "0", "TYPE", "string")
	d.Do("SCAN", "0", "TYPE", "STRING")
	d.Do("SCAN", "0", "TYPE", "hash")

	for i := 0; i < 300; i++ {
		d.DoBoth("SET", fmt.Sprintf("key:%d", i), "v")
		if i%3 == 0 {
			d.DoBoth("SET", fmt.Sprintf("other:%d", i), "v")
		}
	}
	d.doScan()
	d.doScan("COUNT", "1")
	d.doScan("COUNT", "7")
	d.doScan("COUNT", "1000")
	d.doScan("MATCH", "key:1*")
	d.doScan("MATCH", "other:?", "COUNT", "3")
	d.doScan("MATCH", "*:2[0-5]")
	d.doScan("MATCH", "nothing*")
	d.doScan("TYPE", "string")
	d.doScan("TYPE", "list")
	d.doScan("MATCH", "key:*", "TYPE", "string", "COUNT", "50")
	d.doScan("COUNT", "5", "COUNT", "500") // the last COUNT wins
}

func TestKeyRandomKeyDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("RANDOMKEY")
	d.Do("SET", "only", "v")
	d.Do("RANDOMKEY")
	for i := 0; i < 20; i++ {
		d.DoBoth("SET", fmt.Sprintf("k%d", i), "v")
	}
	for i := 0; i < 5; i++ {
		d.DoLen("RANDOMKEY")
	}
	d.Do("FLUSHDB")
	d.Do("SET", "x", "v", "PX", "10")
	time.Sleep(50 * time.Millisecond)
	d.Do("RANDOMKEY")
	d.Do("DBSIZE")
}

func TestKeyObjectDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("OBJECT", "HELP")
	d.Do("object", "help")
	d.Do("OBJECT", "ENCODING", "nokey")
	d.Do("OBJECT", "REFCOUNT", "nokey")
	d.Do("OBJECT", "IDLETIME", "nokey")
	d.Do("OBJECT", "FREQ", "nokey")
	for _, v := range []string{
		"0", "1", "9999", "10000", "-1", "123456789", "9223372036854775807",
		"-9223372036854775808", "9223372036854775808", "12345678901234567890",
		"01", "-0", "+1", " 1", "1 ", "1.5", "0x10", "", "a",
		strings.Repeat("x", 44), strings.Repeat("x", 45), strings.Repeat("1", 21),
	} {
		d.Do("SET", "k", v)
		d.Do("OBJECT", "ENCODING", "k")
		d.Do("OBJECT", "REFCOUNT", "k")
	}
	d.Do("OBJECT", "IDLETIME", "k")
	d.Do("OBJECT", "FREQ", "k")
	d.Do("MSET", "m", "42", "n", "hello")
	d.Do("OBJECT", "ENCODING", "m")
	d.Do("OBJECT", "REFCOUNT", "m")
	d.Do("OBJECT", "ENCODING", "n")
	d.Do("SETEX", "s", "100", "77")
	d.Do("OBJECT", "ENCODING", "s")
	d.Do("GETSET", "s", "5")
	d.Do("OBJECT", "REFCOUNT", "s")
	d.Do("RENAME", "s", "s2")
	d.Do("OBJECT", "REFCOUNT", "s2")
	d.Do("APPEND", "ap", "12")
	d.Do("OBJECT", "ENCODING", "ap")
	d.Do("APPEND", "ap", "3")
	d.Do("OBJECT", "ENCODING", "ap")
	d.Do("SETRANGE", "sr", "0", "12")
	d.Do("OBJECT", "ENCODING", "sr")
	d.Do("INCR", "counter")
	d.Do("OBJECT", "ENCODING", "counter")
	d.Do("OBJECT", "REFCOUNT", "counter")
	d.Do("INCRBY", "counter", "100000")
	d.Do("OBJECT", "REFCOUNT", "counter")
	d.Do("INCRBYFLOAT", "fl", "3")
	d.Do("OBJECT", "ENCODING", "fl")
	d.Do("INCRBYFLOAT", "fl", "0.5")
	d.Do("OBJECT", "ENCODING", "fl")
}

// IDLETIME counts from the last access; TYPE, EXISTS, TTL and OBJECT do
// not count as one.
func TestKeyObjectIdletimeDiff(t *testing.T) {
	// -short asks for the quick tests only: a choice of the run, not a
	// missing install, so it stays a skip.
	if testing.Short() {
		t.Skip("waits for the LRU clock")
	}
	d := NewDiff(t)
	d.Do("SET", "k", "v")
	d.Do("SET", "t", "v")
	time.Sleep(2100 * time.Millisecond)
	d.doApprox(1, "OBJECT", "IDLETIME", "k")
	d.Do("TYPE", "k")
	d.Do("EXISTS", "k")
	d.Do("TTL", "k")
	d.doApprox(1, "OBJECT", "IDLETIME", "k")
	d.Do("GET", "k")
	d.Do("TOUCH", "t")
	d.doApprox(1, "OBJECT", "IDLETIME", "k")
	d.doApprox(1, "OBJECT", "IDLETIME", "t")
}

// OBJECT FREQ under an LFU policy (set at run time on both servers).
func TestKeyObjectFreqDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
	t.Cleanup(func() { d.DoBoth("CONFIG", "SET", "maxmemory-policy", "noeviction") })
	d.Do("SET", "k", "v")
	d.Do("OBJECT", "FREQ", "k")
	d.Do("OBJECT", "IDLETIME", "k")
	d.Do("GET", "k") // the first access always counts
	d.Do("OBJECT", "FREQ", "k")
	d.Do("OBJECT", "FREQ", "nokey")
	d.Do("COPY", "k", "k2")
	d.Do("OBJECT", "FREQ", "k2")
	d.Do("SET", "n", "5")
	d.Do("OBJECT", "REFCOUNT", "n") // no maxmemory: still shared
	d.Do("CONFIG", "SET", "maxmemory", "1gb")
	t.Cleanup(func() { d.DoBoth("CONFIG", "SET", "maxmemory", "0") })
	d.Do("SET", "n", "6")
	d.Do("OBJECT", "REFCOUNT", "n")
}

// TYPE, OBJECT ENCODING and the generic commands on every type.
func TestKeyOtherTypesDiff(t *testing.T) {
	d := NewDiff(t)
	d.Do("RPUSH", "l", "a")
	d.Do("SADD", "s", "1")
	d.Do("HSET", "h", "f", "v")
	d.Do("ZADD", "z", "1", "a")
	for _, k := range []string{"l", "s", "h", "z"} {
		d.Do("TYPE", k)
		d.Do("OBJECT", "ENCODING", k)
		d.Do("OBJECT", "REFCOUNT", k)
	}
	d.Do("SADD", "s2", "a")
	d.Do("OBJECT", "ENCODING", "s2")
	d.doScan("TYPE", "list")
	d.doScan("TYPE", "set")
	d.doScan("TYPE", "zset")
	d.doScan("TYPE", "hash")
	d.Do("EXPIREAT", "h", farSec)
	d.Do("RENAME", "h", "h2")
	d.Do("HGET", "h2", "f")
	d.Do("EXPIRETIME", "h2")
	d.Do("COPY", "z", "z2")
	d.Do("ZADD", "z2", "2", "b")
	d.Do("ZCARD", "z")
	d.Do("MOVE", "l", "2")
	d.Do("SELECT", "2")
	d.Do("LRANGE", "l", "0", "-1")
	d.Do("SELECT", "0")
	d.Do("DEL", "s", "s2", "z", "z2", "h2")
	d.DoSorted("KEYS", "*")
}

// The command table's metadata for this family equals redis-server's.
// OBJECT's container is left out: redis-server lists its subcommands in
// the order of a dict seeded at random per process.
func TestKeyCommandInfoDiff(t *testing.T) {
	d := NewDiff(t)
	for _, name := range []string{
		"del", "unlink", "exists", "touch", "type", "expire", "pexpire", "expireat",
		"pexpireat", "ttl", "pttl", "expiretime", "pexpiretime", "persist", "rename",
		"renamenx", "move", "copy", "keys", "scan", "randomkey",
		"object|encoding", "object|freq", "object|help", "object|idletime", "object|refcount",
	} {
		d.Do("COMMAND", "INFO", name)
	}
}

// A big KEYS runs over a snapshot: other clients are served while it
// runs, and its reply holds the keys of its instant (the keys loaded, plus
// those the other client added before KEYS started).
func TestKeysDoesNotBlockOthers(t *testing.T) {
	// -short asks for the quick tests only: a choice of the run, not a
	// missing install, so it stays a skip.
	if testing.Short() {
		t.Skip("loads 300k keys")
	}
	p := StartZredis(t)
	c := Dial(t, p.Addr)
	const n = 300_000
	var batch []byte
	for i := 0; i < n; i++ {
		batch = append(batch, Encode("SET", fmt.Sprintf("key:%07d", i), "v")...)
		if i%10000 == 9999 {
			c.Send(batch)
			for j := 0; j < 10000; j++ {
				c.Read()
			}
			batch = batch[:0]
		}
	}
	other := Dial(t, p.Addr)
	type result struct {
		reply string
		err   error
	}
	done := make(chan result, 1)
	c.Send(Encode("KEYS", "*"))
	go func() {
		raw, err := c.ReadErr(60 * time.Second)
		done <- result{raw, err}
	}()
	served := 0
	for {
		select {
		case res := <-done:
			if res.err != nil {
				t.Fatal(res.err)
			}
			head, _, _ := strings.Cut(res.reply, "\r\n")
			got, _ := strconv.Atoi(head[1:])
			if got < n || got > n+served {
				t.Fatalf("KEYS returned %d keys, want between %d and %d", got, n, n+served)
			}
			t.Logf("another client ran %d commands while KEYS * over %d keys ran", served, n)
			return
		default:
		}
		if r := other.Do("SET", fmt.Sprintf("new:%d", served), "v"); r != "+OK\r\n" {
			t.Fatalf("SET during KEYS: %q", r)
		}
		served++
	}
}

// Random glob patterns over a small alphabet rich in metacharacters
// against random keys: zredis's matcher must agree with stringmatchlen.
func TestKeyKeysRandomPatternsDiff(t *testing.T) {
	d := NewDiff(t)
	rng := rand.New(rand.NewPCG(7, 11))
	const keyAlpha = "ab-]^\\[*?\x90"
	const patAlpha = "ab-]^\\[*?\x90"
	randStr := func(alpha string, max int) string {
		n := rng.IntN(max + 1)
		b := make([]byte, n)
		for i := range b {
			b[i] = alpha[rng.IntN(len(alpha))]
		}
		return string(b)
	}
	for i := 0; i < 150; i++ {
		d.DoBoth("SET", randStr(keyAlpha, 6), "v")
	}
	for i := 0; i < 200; i++ {
		d.DoSorted("KEYS", randStr(patAlpha, 7))
	}
}
