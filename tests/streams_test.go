package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Streams compared with redis-server 7.0, reply by reply: every X
// command, its options and its errors; node splits under small
// stream-node-max-entries/bytes (what `~` trimming and XINFO's
// radix-tree figures depend on); blocking reads; keyspace events and
// keyspace hit counts; MULTI/EXEC and WATCH; a seeded random mix of all
// of them; and a redis-server replica of zredis (and a zredis replica of
// redis-server) ending with the same streams as its master. Times (idle, seen-time, delivery times) are the servers' own
// clocks: they are checked to be plausible (non-negative, small, near
// now) and compared no further; everything else is compared exactly.

// ---- RESP trees, for the replies that carry times ---------------------------

// respNode is one decoded reply: its type byte, its line (a simple
// string, error or integer text, or a bulk's bytes) and its elements
// (an aggregate's; a map's keys and values alternate).
type respNode struct {
	kind  byte
	line  string
	null  bool // $-1 or *-1
	elems []*respNode
}

// parseResp decodes one raw reply (as Conn.Do returns it).
func parseResp(t *testing.T, raw string) *respNode {
	t.Helper()
	rd := bufio.NewReader(strings.NewReader(raw))
	n, err := readRespNode(rd)
	if err != nil {
		t.Fatalf("decoding %q: %v", raw, err)
	}
	return n
}

func readRespNode(rd *bufio.Reader) (*respNode, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 {
		return nil, fmt.Errorf("short line %q", line)
	}
	n := &respNode{kind: line[0], line: line[1 : len(line)-2]}
	switch n.kind {
	case '$', '=', '!':
		size, err := strconv.Atoi(n.line)
		if err != nil {
			return nil, err
		}
		if size < 0 {
			n.null = true
			return n, nil
		}
		buf := make([]byte, size+2)
		if _, err := ioReadFull(rd, buf); err != nil {
			return nil, err
		}
		n.line = string(buf[:size])
	case '*', '%', '~', '>', '|':
		size, err := strconv.Atoi(n.line)
		if err != nil {
			return nil, err
		}
		if size < 0 {
			n.null = true
			return n, nil
		}
		if n.kind == '%' || n.kind == '|' {
			size *= 2
		}
		for i := 0; i < size; i++ {
			e, err := readRespNode(rd)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, e)
		}
	}
	return n, nil
}

// encode writes the node back as RESP.
func (n *respNode) encode(b *bytes.Buffer) {
	switch n.kind {
	case '*', '%', '~', '>', '|':
		size := len(n.elems)
		if n.kind == '%' || n.kind == '|' {
			size /= 2
		}
		if n.null {
			b.WriteString(string(n.kind) + "-1\r\n")
			return
		}
		fmt.Fprintf(b, "%c%d\r\n", n.kind, size)
		for _, e := range n.elems {
			e.encode(b)
		}
	case '$', '=', '!':
		if n.null {
			b.WriteString(string(n.kind) + "-1\r\n")
			return
		}
		fmt.Fprintf(b, "%c%d\r\n%s\r\n", n.kind, len(n.line), n.line)
	default:
		fmt.Fprintf(b, "%c%s\r\n", n.kind, n.line)
	}
}

func (n *respNode) String() string {
	var b bytes.Buffer
	n.encode(&b)
	return b.String()
}

// field is the value after the key name in a map reply (RESP2: a flat
// array of names and values), or nil.
func (n *respNode) field(name string) *respNode {
	for i := 0; i+1 < len(n.elems); i += 2 {
		if e := n.elems[i]; (e.kind == '$' || e.kind == '+') && e.line == name {
			return n.elems[i+1]
		}
	}
	return nil
}

// timeCheck says whether an integer reply holding a time is plausible.
type timeCheck func(v int64) bool

// timeSpan bounds the times the tests produce: idle times they set
// (XCLAIM IDLE 500000000, a TIME 1000 s ago) and what a slow run adds.
const timeSpan = 30 * 24 * 3600 * 1000

// idleTime: an idle time or an elapsed time in milliseconds.
func idleTime(v int64) bool { return v >= 0 && v < timeSpan }

// unixMsTime: a Unix time in milliseconds near now.
func unixMsTime(v int64) bool {
	now := time.Now().UnixMilli()
	return v > now-timeSpan && v < now+timeSpan
}

// blurTime checks that n is an integer time that check accepts and
// replaces it by a placeholder, so that the rest of the reply compares
// exactly.
func blurTime(t *testing.T, n *respNode, check timeCheck, what string) {
	t.Helper()
	if n == nil {
		t.Errorf("%s: missing", what)
		return
	}
	v, err := strconv.ParseInt(n.line, 10, 64)
	if n.kind != ':' || err != nil || !check(v) {
		t.Errorf("%s: implausible time %q", what, n.String())
	}
	n.kind, n.line = '+', "TIME"
}

// blurPendingExt blurs the idle times of an extended XPENDING reply:
// [[id, consumer, idle, deliveries], ...].
func blurPendingExt(t *testing.T, n *respNode) {
	t.Helper()
	if n.kind != '*' {
		return
	}
	for _, e := range n.elems {
		if len(e.elems) == 4 {
			blurTime(t, e.elems[2], idleTime, "XPENDING idle")
		}
	}
}

// blurConsumers blurs XINFO CONSUMERS' idle times.
func blurConsumers(t *testing.T, n *respNode) {
	t.Helper()
	if n.kind != '*' {
		return
	}
	for _, c := range n.elems {
		blurTime(t, c.field("idle"), idleTime, "XINFO CONSUMERS idle")
	}
}

// blurStreamFull blurs XINFO STREAM FULL's seen times and delivery
// times (the group's pending entries: [id, consumer, time, count]; a
// consumer's: [id, time, count]).
func blurStreamFull(t *testing.T, n *respNode) {
	t.Helper()
	groups := n.field("groups")
	if groups == nil {
		return
	}
	for _, g := range groups.elems {
		if p := g.field("pending"); p != nil {
			for _, e := range p.elems {
				if len(e.elems) == 4 {
					blurTime(t, e.elems[2], unixMsTime, "group PEL delivery time")
				}
			}
		}
		if cs := g.field("consumers"); cs != nil {
			for _, c := range cs.elems {
				blurTime(t, c.field("seen-time"), unixMsTime, "seen-time")
				if p := c.field("pending"); p != nil {
					for _, e := range p.elems {
						if len(e.elems) == 3 {
							blurTime(t, e.elems[1], unixMsTime, "consumer PEL delivery time")
						}
					}
				}
			}
		}
	}
}

// blurFor picks the blurring a command's reply needs (nil: none).
func blurFor(args []string) func(*testing.T, *respNode) {
	if len(args) < 2 {
		return nil
	}
	cmd, sub := strings.ToUpper(args[0]), strings.ToUpper(args[1])
	switch {
	case cmd == "XPENDING" && len(args) > 3:
		return blurPendingExt
	case cmd == "XINFO" && sub == "CONSUMERS":
		return blurConsumers
	case cmd == "XINFO" && sub == "STREAM" && len(args) > 3:
		return blurStreamFull
	}
	return nil
}

// doStream is Diff.Do for stream commands: a reply that carries times
// is compared with its times checked and blurred; a long reply that
// differs is reported around its first difference.
func doStream(d *Diff, args ...string) string {
	d.t.Helper()
	z, r := d.Z.Do(args...), d.R.Do(args...)
	diffCases.Add(1)
	note := ""
	if blur := blurFor(args); blur != nil && z[0] != '-' && r[0] != '-' {
		zn, rn := parseResp(d.t, z), parseResp(d.t, r)
		blur(d.t, zn)
		blur(d.t, rn)
		z, r, note = zn.String(), rn.String(), " (times blurred)"
	}
	if z != r {
		d.t.Errorf("%s%s:\n zredis: %s\n  redis: %s", shortArgs(args), note, shortReply(z, r), shortReply(r, z))
	}
	return z
}

// shortArgs quotes a command, its long arguments cut.
func shortArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if len(a) > 40 {
			a = a[:20] + fmt.Sprintf("...(%d bytes)", len(a))
		}
		out[i] = strconv.Quote(a)
	}
	return "[" + strings.Join(out, " ") + "]"
}

// shortReply quotes a reply, or for a long one its length and the part
// around where it first differs from other.
func shortReply(s, other string) string {
	if len(s) <= 400 {
		return strconv.Quote(s)
	}
	i := 0
	for i < len(s) && i < len(other) && s[i] == other[i] {
		i++
	}
	from, to := max(i-150, 0), min(i+150, len(s))
	return fmt.Sprintf("(%d bytes, first difference at %d) ...%q...", len(s), i, s[from:to])
}

// streamScript runs cmds on both servers through doStream.
func streamScript(d *Diff, cmds [][]string) {
	d.t.Helper()
	for _, c := range cmds {
		doStream(d, c...)
	}
}

// ---- commands, options and errors -------------------------------------------

var streamBasicCases = [][]string{
	// XADD: every ID form.
	{"XADD", "s", "1-1", "f", "v"},
	{"XADD", "s", "1-1", "f", "v"},
	{"XADD", "s", "1-0", "f", "v"},
	{"XADD", "s", "1", "f", "v"},
	{"XADD", "s", "1-*", "f", "v"},
	{"XADD", "s", "1-*", "f", "v", "g", "w"},
	{"XADD", "s", "2", "f", "v"},
	{"XADD", "s", "2-*", "f", "v"},
	{"XADD", "s", "3-5", "a", "1", "b", "2", "c", "3"},
	{"XADD", "s", "3-*", "a", "1", "b", "2", "c", "3"},
	{"XADD", "s", "0-*", "f", "v"},
	{"XADD", "s", "0-0", "f", "v"},
	{"XADD", "s", "0", "f", "v"},
	{"XADD", "new", "0-0", "f", "v"},
	{"EXISTS", "new"},
	{"XADD", "new", "0-*", "f", "v"},
	{"XADD", "new2", "0", "f", "v"},
	{"XADD", "new3", "0-1", "f", "v"},
	{"XADD", "s", "99999999999999-1", "x", "y"},
	{"XADD", "s", "*", "x", "y"},
	{"XADD", "s", "*", "x", "y", "z"},
	{"XADD", "s", "*", "x"},
	{"XADD", "s", "*"},
	{"XADD", "s", "5-1", "x"},
	{"XADD", "s", "99999999999999-*", "x", "y"},
	{"XADD", "s", "99999999999999", "x", "y"},
	{"XADD", "s", "100000000000000", "x", "y"},
	{"XADD", "s", "100000000000000-*", "x", "y"},
	{"XLEN", "s"},
	{"XRANGE", "s", "-", "+"},
	// Values as listpack integers and strings.
	{"XADD", "ints", "1-1", "1", "2", "-3", "4000000000", "12345678901234567890", "007", "", "x"},
	{"XADD", "ints", "1-2", "1", "-9223372036854775808", "-3", "9223372036854775807", "12345678901234567890", "0", "", "y"},
	{"XRANGE", "ints", "-", "+"},
	// Invalid IDs.
	{"XADD", "s", "abc", "f", "v"},
	{"XADD", "s", "1-abc", "f", "v"},
	{"XADD", "s", "-", "f", "v"},
	{"XADD", "s", "+", "f", "v"},
	{"XADD", "s", "1-2-3", "f", "v"},
	{"XADD", "s", "", "f", "v"},
	{"XADD", "s", "-1", "f", "v"},
	{"XADD", "s", "1-", "f", "v"},
	{"XADD", "s", "*-1", "f", "v"},
	{"XADD", "s", "1-**", "f", "v"},
	{"XADD", "s", "18446744073709551616-1", "f", "v"},
	{"XADD", "s", "1-18446744073709551616", "f", "v"},
	{"XADD", "s", "0x10-1", "f", "v"},
	{"XADD", "s", "1 -1", "f", "v"},
	{"XADD", "lead", " 7-1", "f", "v"},
	{"XADD", "lead", "+8-01", "f", "v"},
	{"XADD", "lead", "009-\t1", "f", "v"},
	{"XADD", "lead", " -5-1", "f", "v"},
	{"XADD", "lead", "-0-1", "f", "v"},
	{"XRANGE", "lead", "-", "+"},
	{"XADD", "s", strings.Repeat("1", 128), "f", "v"},
	{"XADD", "s", strings.Repeat("0", 126) + "1", "f", "v"},
	// Arguments read as C strings.
	{"XADD", "nul", "1-1\x00junk", "f", "v"},
	{"XADD", "nul", "99999999999999-0", "f", "v"},
	{"XADD", "nul", "2\x00-5", "f", "v"},
	{"XADD", "nul", "*\x00", "f", "v"},
	{"XADD", "nul", "MAXLEN", "~\x00", "5", "3-0", "f", "v"},
	{"XRANGE", "nul", "-\x00", "+\x00x"},
	{"XREAD", "STREAMS", "nul", "$\x00"},
	{"XGROUP", "CREATE", "nul", "g", "$\x00"},
	{"XINFO", "GROUPS", "nul"},
	// Options.
	{"XADD", "s", "NOMKSTREAM", "*", "f", "v", "g"},
	{"XADD", "nokey", "NOMKSTREAM", "*", "f", "v"},
	{"EXISTS", "nokey"},
	{"XADD", "nokey", "NOMKSTREAM", "MAXLEN", "1", "*", "f", "v"},
	{"XADD", "s", "MAXLEN", "abc", "*", "f", "v"},
	{"XADD", "s", "MAXLEN", "-1", "*", "f", "v"},
	{"XADD", "s", "MAXLEN", "~", "-1", "*", "f", "v"},
	{"XADD", "s", "MAXLEN", "1", "MINID", "1", "*", "f", "v"},
	{"XADD", "s", "MINID", "1", "MAXLEN", "1", "*", "f", "v"},
	{"XADD", "s", "MINID", "abc", "*", "f", "v"},
	{"XADD", "s", "MINID", "-", "*", "f", "v"},
	{"XADD", "s", "LIMIT", "10", "*", "f", "v"},
	{"XADD", "s", "MAXLEN", "10", "LIMIT", "10", "*", "f", "v"},
	{"XADD", "s", "MAXLEN", "=", "10", "LIMIT", "10", "*", "f", "v"},
	{"XADD", "s", "MAXLEN", "~", "10", "LIMIT", "-1", "*", "f", "v"},
	{"XADD", "s", "MAXLEN", "~", "10", "LIMIT", "x", "*", "f", "v"},
	{"XADD", "s", "LIMIT", "0", "*", "f", "v"},
	{"XADD", "s", "MAXLEN"},
	{"XADD", "s", "MAXLEN", "~"},
	{"XADD", "s", "MAXLEN", "~", "*", "f", "v"},
	{"XADD", "s", "MAXLEN", "=", "*", "f", "v"},
	{"XADD", "s", "BOGUS", "*", "f", "v"},
	{"XADD", "s", "nomkstream", "maxlen", "~", "100", "limit", "5", "100000000000001-0", "f", "v"},
	{"XADD", "s", "MAXLEN", "9223372036854775808", "*", "f", "v"},
	{"XLEN", "s"},
	{"XADD", "s", "MAXLEN", "3", "100000000000002-0", "f", "v"},
	{"XLEN", "s"},
	{"XRANGE", "s", "-", "+"},
	{"XADD", "s", "MINID", "100000000000001", "100000000000003-0", "f", "v"},
	{"XRANGE", "s", "-", "+"},
	{"XADD", "s", "MAXLEN", "=", "0", "100000000000004-0", "f", "v"},
	{"XLEN", "s"},
	{"EXISTS", "s"},
	{"XADD", "s", "MINID", "~", "999999999999999", "LIMIT", "0", "100000000000005-0", "f", "v"},
	{"XINFO", "STREAM", "s"},
	{"XADD", "seqmax", "5-18446744073709551615", "f", "v"},
	{"XADD", "seqmax", "5-*", "f", "v"},
	{"XADD", "seqmax", "6-*", "f", "v"},
	{"XADD", "ints2", "1-1", "-0", "+5", "1.0", "9223372036854775808", "-9223372036854775809", " 1", "0", "-1"},
	{"XADD", "ints2", "1-2", "-0", "+5", "1.0", "9223372036854775808", "-9223372036854775809", " 1"},
	{"XINFO", "STREAM", "ints2"},
	{"XRANGE", "ints2", "-", "+"},
	// The largest ID.
	{"XADD", "max", "18446744073709551615-18446744073709551614", "f", "v"},
	{"XADD", "max", "18446744073709551615-*", "f", "v"},
	{"XADD", "max", "*", "f", "v"},
	{"XADD", "max", "18446744073709551615-18446744073709551615", "f", "v"},
	{"XRANGE", "max", "-", "+"},
	{"XRANGE", "max", "(18446744073709551615-18446744073709551614", "+"},
	{"XRANGE", "max", "(18446744073709551615-18446744073709551615", "+"},
	{"XREVRANGE", "max", "+", "(0-0"},
	{"XREVRANGE", "max", "(0-0", "-"},
	{"XRANGE", "max", "-", "(0-0"},
	{"XRANGE", "max", "-", "(0"},
	{"XRANGE", "max", "-", "(0-1"},

	// XRANGE and XREVRANGE.
	{"DEL", "r"},
	{"XADD", "r", "1-0", "a", "1"},
	{"XADD", "r", "1-1", "a", "2"},
	{"XADD", "r", "2-0", "b", "3"},
	{"XADD", "r", "2-5", "a", "4", "b", "5"},
	{"XADD", "r", "3-0", "a", "6"},
	{"XRANGE", "r", "-", "+"},
	{"XRANGE", "r", "1", "2"},
	{"XRANGE", "r", "1-1", "2-0"},
	{"XRANGE", "r", "(1-0", "(2-5"},
	{"XRANGE", "r", "(1", "+"},
	{"XRANGE", "r", "(1", "(3"},
	{"XRANGE", "r", "-", "+", "COUNT", "2"},
	{"XRANGE", "r", "-", "+", "COUNT", "0"},
	{"XRANGE", "r", "-", "+", "COUNT", "-5"},
	{"XRANGE", "r", "-", "+", "COUNT", "9223372036854775807"},
	{"XRANGE", "r", "-", "+", "COUNT", "9223372036854775808"},
	{"XRANGE", "r", "-", "+", "COUNT", "x"},
	{"XRANGE", "r", "-", "+", "COUNT"},
	{"XRANGE", "r", "-", "+", "COUNT", "1", "COUNT", "3"},
	{"XRANGE", "r", "-", "+", "LIMIT", "1"},
	{"XRANGE", "r", "3", "1"},
	{"XRANGE", "r", "(-", "+"},
	{"XRANGE", "r", "-", "(+"},
	{"XRANGE", "r", "(", "+"},
	{"XRANGE", "r", "((1", "+"},
	{"XRANGE", "r", "x", "+"},
	{"XRANGE", "r", "-", "x"},
	{"XRANGE", "r", "x", "y", "COUNT", "z"},
	{"XRANGE", "r", "-", "+", "COUNT", "z"},
	{"XRANGE", "nokey", "-", "+"},
	{"XRANGE", "nokey", "-", "+", "COUNT", "0"},
	{"XRANGE", "nokey", "x", "+"},
	{"XREVRANGE", "r", "+", "-"},
	{"XREVRANGE", "r", "2", "1"},
	{"XREVRANGE", "r", "(2-5", "(1-0"},
	{"XREVRANGE", "r", "+", "-", "COUNT", "2"},
	{"XREVRANGE", "r", "+", "-", "COUNT", "0"},
	{"XREVRANGE", "r", "-", "+"},
	{"XREVRANGE", "nokey", "+", "-"},
	{"XLEN", "r"},
	{"XLEN", "nokey"},

	// XDEL.
	{"XDEL", "r", "1-1"},
	{"XDEL", "r", "1-1"},
	{"XDEL", "r", "9-9", "2-0", "2-0"},
	{"XDEL", "r", "1-0", "bad"},
	{"XDEL", "r", "-"},
	{"XDEL", "nokey", "bad"},
	{"XRANGE", "r", "-", "+"},
	{"XREVRANGE", "r", "+", "-", "COUNT", "1"},
	{"XINFO", "STREAM", "r"},
	{"XLEN", "r"},
	{"XDEL", "r", "1-0", "2-5", "3-0"},
	{"XLEN", "r"},
	{"EXISTS", "r"},
	{"XINFO", "STREAM", "r"},
	{"XADD", "r", "3-0", "a", "1"},
	{"XADD", "r", "3-1", "a", "1"},
	{"XINFO", "STREAM", "r"},
	{"XRANGE", "r", "-", "+"},

	// XTRIM.
	{"DEL", "t"},
	{"XADD", "t", "1-0", "a", "1"},
	{"XADD", "t", "2-0", "a", "1"},
	{"XADD", "t", "3-0", "a", "1"},
	{"XADD", "t", "4-0", "a", "1"},
	{"XADD", "t", "5-0", "a", "1"},
	{"XTRIM", "t", "MAXLEN", "4"},
	{"XTRIM", "t", "MAXLEN", "4"},
	{"XTRIM", "t", "MAXLEN", "~", "1"},
	{"XTRIM", "t", "MINID", "3"},
	{"XTRIM", "t", "MINID", "=", "3"},
	{"XTRIM", "t", "MINID", "~", "5"},
	{"XTRIM", "t", "MAXLEN", "~", "1", "LIMIT", "1"},
	{"XTRIM", "t", "MAXLEN", "1", "LIMIT", "1"},
	{"XTRIM", "t", "LIMIT", "1"},
	{"XTRIM", "t"},
	{"XTRIM", "t", "MAXLEN"},
	{"XTRIM", "t", "MAXLEN", "x"},
	{"XTRIM", "t", "MAXLEN", "-1"},
	{"XTRIM", "t", "MINID", "x"},
	{"XTRIM", "t", "MINID", "+"},
	{"XTRIM", "t", "MAXLEN", "1", "MINID", "1"},
	{"XTRIM", "t", "MAXLEN", "1", "BOGUS"},
	{"XTRIM", "t", "NOMKSTREAM", "MAXLEN", "1"},
	{"XTRIM", "t", "*", "MAXLEN", "1"},
	{"XTRIM", "t", "MAXLEN", "1", "LIMIT", "-1"},
	{"XTRIM", "t", "MAXLEN", "~", "1", "LIMIT", "0"},
	{"XTRIM", "nokey", "MAXLEN", "1"},
	{"XTRIM", "nokey", "MAXLEN", "x"},
	{"XRANGE", "t", "-", "+"},
	{"XTRIM", "t", "MAXLEN", "0"},
	{"EXISTS", "t"},
	{"XLEN", "t"},
	{"XINFO", "STREAM", "t"},

	// XSETID.
	{"DEL", "x"},
	{"XSETID", "x", "5-0"},
	{"XADD", "x", "1-0", "a", "1"},
	{"XADD", "x", "2-0", "a", "1"},
	{"XSETID", "x", "1-0"},
	{"XSETID", "x", "2-0"},
	{"XSETID", "x", "3"},
	{"XSETID", "x", "x"},
	{"XSETID", "x", "-"},
	{"XSETID", "x", "10-0", "ENTRIESADDED", "1"},
	{"XSETID", "x", "10-0", "ENTRIESADDED", "-1"},
	{"XSETID", "x", "10-0", "ENTRIESADDED", "x"},
	{"XSETID", "x", "10-0", "ENTRIESADDED", "7", "MAXDELETEDID", "11-0"},
	{"XSETID", "x", "10-0", "ENTRIESADDED", "7", "MAXDELETEDID", "x"},
	{"XSETID", "x", "10-0", "ENTRIESADDED", "7", "MAXDELETEDID", "9-0"},
	{"XSETID", "x", "10-0", "ENTRIESADDED"},
	{"XSETID", "x", "10-0", "BOGUS", "1"},
	{"XINFO", "STREAM", "x"},
	{"XADD", "x", "10-*", "a", "1"},
	{"XADD", "x", "10-*", "a", "1"},
	{"XSETID", "x", "20-0", "MAXDELETEDID", "0-0"},
	{"XINFO", "STREAM", "x"},
	{"XDEL", "x", "1-0", "2-0", "10-1", "10-2"},
	{"XSETID", "x", "0-5"},
	{"XSETID", "x", "0-5", "ENTRIESADDED", "0"},
	{"XINFO", "STREAM", "x"},
	{"XADD", "x", "0-6", "a", "1"},
	{"XSETID", "x", "0-9", "ENTRIESADDED", "0"},
	{"XSETID", "x", "18446744073709551615-18446744073709551615"},
	{"XADD", "x", "*", "a", "1"},
	{"XINFO", "STREAM", "x"},

	// Wrong types.
	{"SET", "str", "v"},
	{"XADD", "str", "*", "f", "v"},
	{"XADD", "str", "NOMKSTREAM", "*", "f", "v"},
	{"XADD", "str", "MAXLEN", "x", "*", "f", "v"},
	{"XADD", "str", "0-0", "f", "v"},
	{"XRANGE", "str", "-", "+"},
	{"XRANGE", "str", "x", "+"},
	{"XREVRANGE", "str", "+", "-"},
	{"XLEN", "str"},
	{"XDEL", "str", "1-1"},
	{"XDEL", "str", "bad"},
	{"XTRIM", "str", "MAXLEN", "1"},
	{"XSETID", "str", "1-1"},
	{"XREAD", "STREAMS", "str", "0"},
	{"XREAD", "STREAMS", "r", "str", "0", "0"},
	{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "str", ">"},
	{"XGROUP", "CREATE", "str", "g", "$"},
	{"XGROUP", "CREATE", "str", "g", "$", "MKSTREAM"},
	{"XGROUP", "SETID", "str", "g", "$"},
	{"XGROUP", "DESTROY", "str", "g"},
	{"XGROUP", "CREATECONSUMER", "str", "g", "c"},
	{"XGROUP", "DELCONSUMER", "str", "g", "c"},
	{"XACK", "str", "g", "1-1"},
	{"XPENDING", "str", "g"},
	{"XPENDING", "str", "g", "-", "+", "10"},
	{"XCLAIM", "str", "g", "c", "0", "1-1"},
	{"XAUTOCLAIM", "str", "g", "c", "0", "0"},
	{"XINFO", "STREAM", "str"},
	{"XINFO", "STREAM", "str", "FULL"},
	{"XINFO", "GROUPS", "str"},
	{"XINFO", "CONSUMERS", "str", "g"},
	{"XINFO", "STREAM", "nokey"},
	{"XINFO", "STREAM", "nokey", "BOGUS"},
	{"XINFO", "STREAM", "str", "BOGUS"},
	{"XINFO", "STREAM", "r", "BOGUS"},
	{"XINFO", "STREAM", "r", "FULL", "COUNT"},
	{"XINFO", "STREAM", "r", "FULL", "BOGUS", "1"},
	{"XINFO", "STREAM", "r", "FULL", "COUNT", "x"},
	{"XINFO", "STREAM", "r", "FULL", "COUNT", "1", "x"},
	{"XINFO", "GROUPS", "nokey"},
	{"XINFO", "CONSUMERS", "nokey", "g"},
	{"XINFO", "CONSUMERS", "r", "nogroup"},
	{"XINFO", "GROUPS", "r", "x"},
	{"XINFO", "HELP"},
	{"XINFO", "HELP", "x"},
	{"XINFO", "BOGUS", "r"},
	{"XINFO", "BOGUS"},
	{"XINFO"},
	{"XGROUP", "HELP"},
	{"XGROUP", "HELP", "x"},
	{"XGROUP", "BOGUS", "r", "g"},
	{"XGROUP"},
	{"XGROUP", "CREATE", "r"},
	{"XGROUP", "CREATE", "r", "g"},
	{"XGROUP", "DESTROY", "r"},
	{"XGROUP", "SETID", "r", "g"},

	// Scripts: no blocking.
	{"EVAL", "return redis.pcall('xread','BLOCK','0','STREAMS','r','$')", "0"},
	{"EVAL", "return redis.pcall('xreadgroup','GROUP','g','c','BLOCK','0','STREAMS','r','>')", "0"},
	{"EVAL", "return redis.pcall('xreadgroup','GROUP','g','c','BLOCK','x','STREAMS','r','>')", "0"},
	{"EVAL", "return redis.pcall('xread','COUNT','1','STREAMS','r','0')", "0"},
	{"EVAL", "return redis.pcall('xadd','r','4-0','f','v')", "0"},
	{"EVAL", "return redis.pcall('xadd','r','4-*','f','v')", "0"},
	{"EVAL", "return redis.pcall('xrange','r','-','+')", "0"},
	{"EVAL", "return redis.pcall('xinfo','stream','r')", "0"},
	{"EVAL_RO", "return redis.pcall('xadd','r','5-*','f','v')", "0"},
	{"EVAL_RO", "return redis.pcall('xread','STREAMS','r','0')", "0"},

	// Arity.
	{"XADD", "s"},
	{"XADD", "s", "*"},
	{"XRANGE", "s", "-"},
	{"XREVRANGE", "s"},
	{"XLEN"},
	{"XLEN", "a", "b"},
	{"XDEL", "s"},
	{"XTRIM", "s", "MAXLEN"},
	{"XACK", "s", "g"},
	{"XPENDING", "s"},
	{"XCLAIM", "s", "g", "c", "0"},
	{"XAUTOCLAIM", "s", "g", "c", "0"},
	{"XSETID", "s"},
	{"XREAD", "STREAMS"},
	{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s"},
	{"XGROUP", "CREATECONSUMER", "s", "g"},
	{"XGROUP", "DELCONSUMER", "s", "g", "c", "x"},
	{"XINFO", "CONSUMERS", "s"},
	{"XINFO", "GROUPS"},

	// Commands' metadata.
	{"COMMAND", "INFO", "XADD", "XRANGE", "XREVRANGE", "XLEN", "XDEL", "XTRIM", "XSETID"},
	{"COMMAND", "INFO", "XREAD", "XREADGROUP", "XACK", "XPENDING", "XCLAIM", "XAUTOCLAIM"},
	// (XGROUP's and XINFO's subcommands: command_test.go, which orders them.)
	{"COMMAND", "GETKEYS", "XREAD", "STREAMS", "a"},
	{"COMMAND", "GETKEYS", "XREAD", "STREAMS", "a", "b", "c", "0", "0"},
	{"COMMAND", "GETKEYS", "XREAD", "COUNT", "1", "STREAMS"},
	{"COMMAND", "GETKEYS", "XREAD", "STREAMS", "STREAMS", "a", "0"},
	{"COMMAND", "GETKEYS", "XREADGROUP", "GROUP", "streams", "c", "STREAMS", "a", "b", ">"},
	{"COMMAND", "GETKEYS", "XREADGROUP", "GROUP", "g", "streams", "STREAMS", "a", ">"},
	{"COMMAND", "GETKEYS", "XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "a", ">"},
	{"COMMAND", "GETKEYSANDFLAGS", "XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "b", ">", ">"},
	{"COMMAND", "GETKEYS", "XREAD", "COUNT", "2", "STREAMS", "a", "b", "0", "0"},
	{"COMMAND", "GETKEYS", "XREADGROUP", "GROUP", "g", "c", "NOACK", "STREAMS", "a", ">"},
	{"COMMAND", "GETKEYS", "XREAD", "STREAMS", "a", "b", "0"},
	{"COMMAND", "GETKEYS", "XREAD", "BLOCK", "0", "STREAMS", "streams", "0"},
	{"COMMAND", "GETKEYS", "XADD", "k", "*", "f", "v"},
	{"COMMAND", "GETKEYS", "XGROUP", "CREATE", "k", "g", "$"},
	{"COMMAND", "GETKEYS", "XINFO", "STREAM", "k"},
	{"TYPE", "r"},
	{"OBJECT", "ENCODING", "r"},
}

func TestStreamDifferential(t *testing.T) {
	d := NewDiff(t)
	streamScript(d, streamBasicCases)
}

// ---- node splits and approximate trimming ------------------------------------

// streamValue is a random field or value: small and large integers
// (listpack integer encodings), and strings across the listpack
// string-length encodings (63/64 and 4095/4096 bytes).
func streamValue(rng *rand.Rand) string {
	switch rng.IntN(8) {
	case 0:
		return strconv.Itoa(rng.IntN(128))
	case 1:
		return strconv.FormatInt(rng.Int64N(1<<40)-1<<39, 10)
	case 2:
		return strings.Repeat("v", 60+rng.IntN(8))
	case 3:
		if rng.IntN(4) == 0 {
			return strings.Repeat("w", 4090+rng.IntN(10))
		}
		return strings.Repeat("w", 100+rng.IntN(300))
	case 4:
		return ""
	}
	return "val" + strconv.Itoa(rng.IntN(1000))
}

// streamFields are random field/value pairs: often the same field names
// (entries then share their node's master fields), sometimes others.
func streamFields(rng *rand.Rand) []string {
	var fv []string
	if rng.IntN(3) > 0 {
		for _, f := range []string{"name", "size", "at"}[:1+rng.IntN(3)] {
			fv = append(fv, f, streamValue(rng))
		}
		return fv
	}
	for n := 1 + rng.IntN(5); n > 0; n-- {
		fv = append(fv, streamValue(rng), streamValue(rng))
	}
	return fv
}

// TestStreamNodeSplits adds a few hundred entries of random shapes under
// small node limits, so that nodes split where Redis's split (by entry
// count and by listpack bytes), then trims with `~`, which drops whole
// nodes only: the replies, the entries left and XINFO STREAM's
// radix-tree-keys and -nodes must all match.
func TestStreamNodeSplits(t *testing.T) {
	d := NewDiff(t)
	do := func(args ...string) { doStream(d, args...) }
	t.Cleanup(func() {
		d.DoBoth("CONFIG", "SET", "stream-node-max-entries", "100")
		d.DoBoth("CONFIG", "SET", "stream-node-max-bytes", "4096")
	})
	rng := rand.New(rand.NewPCG(3, 5))
	limits := [][2]string{{"5", "4096"}, {"100", "300"}, {"7", "1024"}, {"0", "500"}, {"3", "0"}, {"1", "4096"}}
	for li, lim := range limits {
		do("CONFIG", "SET", "stream-node-max-entries", lim[0])
		do("CONFIG", "SET", "stream-node-max-bytes", lim[1])
		key := "split" + strconv.Itoa(li)
		ms := 1
		for i := 0; i < 300; i++ {
			ms += rng.IntN(3)
			args := append([]string{"XADD", key, strconv.Itoa(ms) + "-*"}, streamFields(rng)...)
			do(args...)
			switch rng.IntN(25) {
			case 0:
				do("XDEL", key, strconv.Itoa(ms-rng.IntN(20))+"-0", strconv.Itoa(ms-rng.IntN(20))+"-1")
			case 1:
				do("XINFO", "STREAM", key)
			case 2:
				ms++
				do("XADD", key, "MAXLEN", "~", strconv.Itoa(200+rng.IntN(100)), strconv.Itoa(ms)+"-*", "f", "v")
			}
		}
		do("XINFO", "STREAM", key)
		do("XRANGE", key, "-", "+")
		do("XREVRANGE", key, "+", "-", "COUNT", "17")
		for i := 0; i < 12; i++ {
			switch rng.IntN(6) {
			case 0:
				do("XTRIM", key, "MAXLEN", "~", strconv.Itoa(300-25*i))
			case 1:
				do("XTRIM", key, "MINID", "~", strconv.Itoa(ms*i/14))
			case 2:
				do("XTRIM", key, "MAXLEN", "~", strconv.Itoa(280-25*i), "LIMIT", strconv.Itoa(rng.IntN(40)))
			case 3:
				do("XTRIM", key, "MINID", "~", strconv.Itoa(ms*i/13)+"-1", "LIMIT", strconv.Itoa(rng.IntN(40)))
			case 4:
				ms++
				do("XADD", key, "MAXLEN", "~", strconv.Itoa(290-25*i), strconv.Itoa(ms)+"-*", "f", "v")
			case 5:
				ms++
				do("XADD", key, "MINID", "~", strconv.Itoa(ms*i/14), "LIMIT", strconv.Itoa(rng.IntN(30)), strconv.Itoa(ms)+"-*", "f", "v")
			}
			do("XINFO", "STREAM", key)
			do("XLEN", key)
		}
		do("XTRIM", key, "MAXLEN", "=", "50")
		do("XINFO", "STREAM", key)
		do("XTRIM", key, "MINID", "=", strconv.Itoa(ms-20))
		do("XINFO", "STREAM", key)
		do("XRANGE", key, "-", "+")
		do("XINFO", "STREAM", key, "FULL", "COUNT", "5")
		do("XINFO", "STREAM", key, "FULL", "COUNT", "0")
	}
	// Elements at the edge of a node's byte budget.
	do("CONFIG", "SET", "stream-node-max-entries", "1000")
	do("CONFIG", "SET", "stream-node-max-bytes", "200")
	for i := 1; i <= 60; i++ {
		do("XADD", "edge", strconv.Itoa(i)+"-0", "f", strings.Repeat("e", 150+i%60))
		do("XINFO", "STREAM", "edge")
	}
	do("XADD", "edge", "100-0", "f", strings.Repeat("e", 300))
	do("XADD", "edge", "101-0", "f", "x")
	do("XINFO", "STREAM", "edge")
}

// ---- consumer groups -----------------------------------------------------------

// streamGroupCases are consumer-group commands whose replies are
// deterministic but for the times doStream blurs. An ID of the form
// "@PAST" is replaced by a Unix time in ms 1000 s ago (XCLAIM TIME).
var streamGroupCases = [][]string{
	{"XGROUP", "CREATE", "g", "grp", "$"},
	{"XGROUP", "CREATE", "g", "grp", "$", "MKSTREAM"},
	{"XINFO", "STREAM", "g"},
	{"XINFO", "GROUPS", "g"},
	{"XGROUP", "CREATE", "g", "grp", "$", "MKSTREAM"},
	{"XGROUP", "CREATE", "g", "grp2", "0", "ENTRIESREAD", "-2"},
	{"XGROUP", "CREATE", "g", "grp2", "0", "ENTRIESREAD", "x"},
	{"XGROUP", "CREATE", "g", "grp2", "0", "ENTRIESREAD"},
	{"XGROUP", "CREATE", "g", "grp2", "x"},
	{"XGROUP", "CREATE", "g", "grp2", "-"},
	{"XGROUP", "CREATE", "g", "grp2", "+"},
	{"XGROUP", "CREATE", "g", "grp2", "0", "BOGUS"},
	{"XGROUP", "CREATE", "g", "grp2", "0", "MKSTREAM", "ENTRIESREAD", "3", "MKSTREAM"},
	{"XGROUP", "CREATE", "g", "grp2", "0", "MKSTREAM", "ENTRIESREAD", "3", "x"},
	{"XGROUP", "CREATE", "g", "grp2", "0", "MKSTREAM", "ENTRIESREAD", "3"},
	{"XGROUP", "CREATE", "nokey", "grp", "$"},
	{"XGROUP", "CREATE", "nokey", "grp", "bad", "MKSTREAM"},
	{"EXISTS", "nokey"},
	{"XGROUP", "CREATECONSUMER", "nokey", "grp", "c"},
	{"XGROUP", "CREATECONSUMER", "g", "nogrp", "c"},
	{"XGROUP", "DELCONSUMER", "g", "nogrp", "c"},
	{"XGROUP", "SETID", "g", "nogrp", "0"},
	{"XGROUP", "DESTROY", "g", "nogrp"},
	{"XGROUP", "DESTROY", "nokey", "nogrp"},
	{"XGROUP", "CREATECONSUMER", "g", "grp", "alice"},
	{"XGROUP", "CREATECONSUMER", "g", "grp", "alice"},
	{"XGROUP", "DELCONSUMER", "g", "grp", "nobody"},
	{"XINFO", "CONSUMERS", "g", "grp"},
	{"XINFO", "GROUPS", "g"},

	{"XADD", "g", "1-0", "f", "1"},
	{"XADD", "g", "2-0", "f", "2"},
	{"XADD", "g", "3-0", "f", "3"},
	{"XADD", "g", "4-0", "f", "4"},
	{"XADD", "g", "5-0", "f", "5"},
	{"XINFO", "GROUPS", "g"},
	{"XREADGROUP", "GROUP", "grp", "alice", "COUNT", "2", "STREAMS", "g", ">"},
	{"XINFO", "GROUPS", "g"},
	{"XREADGROUP", "GROUP", "grp", "bob", "COUNT", "1", "STREAMS", "g", ">"},
	{"XREADGROUP", "GROUP", "grp", "alice", "STREAMS", "g", "0"},
	{"XREADGROUP", "GROUP", "grp", "alice", "COUNT", "1", "STREAMS", "g", "0"},
	{"XREADGROUP", "GROUP", "grp", "alice", "STREAMS", "g", "1-0"},
	{"XREADGROUP", "GROUP", "grp", "alice", "STREAMS", "g", "(1-0"},
	{"XREADGROUP", "GROUP", "grp", "alice", "STREAMS", "g", "-"},
	{"XREADGROUP", "GROUP", "grp", "alice", "STREAMS", "g", "$"},
	{"XREADGROUP", "GROUP", "grp", "alice", "STREAMS", "g"},
	{"XREADGROUP", "GROUP", "grp", "alice", "STREAMS", "g", "nokey", ">", ">"},
	{"XREADGROUP", "GROUP", "nogrp", "alice", "STREAMS", "g", ">"},
	{"XREADGROUP", "GROUP", "grp", "alice", "COUNT", "x", "STREAMS", "g", ">"},
	{"XREADGROUP", "GROUP", "grp", "alice", "BLOCK", "x", "STREAMS", "g", ">"},
	{"XREADGROUP", "GROUP", "grp", "alice", "BLOCK", "-1", "STREAMS", "g", ">"},
	{"XREADGROUP", "GROUP", "grp", "STREAMS", "g", ">"},
	{"XREADGROUP", "COUNT", "1", "STREAMS", "g", ">"},
	{"XREADGROUP", "GROUP", "grp", "alice", "BOGUS", "STREAMS", "g", ">"},
	{"XREADGROUP", "GROUP", "grp", "alice", "NOACK"},
	{"XREAD", "GROUP", "grp", "alice", "STREAMS", "g", ">"},
	{"XREAD", "STREAMS", "g", "g", "0", "3-0"},
	{"XREAD", "COUNT", "1", "STREAMS", "g", "nokey", "g", "0", "0", "4-0"},
	{"XADD", "g", "6-0", "f", "6"},
	{"XADD", "g", "7-0", "f", "7"},
	{"XREADGROUP", "GROUP", "grp", "alice", "COUNT", "1", "STREAMS", "g", "g", ">", ">"},
	{"XREADGROUP", "GROUP", "grp", "alice", "STREAMS", "g", "g", ">", "0"},
	{"XREAD", "NOACK", "STREAMS", "g", "0"},
	{"XREAD", "STREAMS", "g", ">"},
	{"XPENDING", "g", "grp"},
	{"XPENDING", "g", "grp", "-", "+", "10"},
	{"XPENDING", "g", "grp", "-", "+", "10", "alice"},
	{"XPENDING", "g", "grp", "-", "+", "10", "bob"},
	{"XPENDING", "g", "grp", "-", "+", "10", "nobody"},
	{"XPENDING", "g", "grp", "-", "+", "1"},
	{"XPENDING", "g", "grp", "-", "+", "0"},
	{"XPENDING", "g", "grp", "-", "+", "-1"},
	{"XPENDING", "g", "grp", "(1-0", "+", "10"},
	{"XPENDING", "g", "grp", "2", "(3", "10"},
	{"XPENDING", "g", "grp", "IDLE", "0", "-", "+", "10"},
	{"XPENDING", "g", "grp", "IDLE", "-5", "-", "+", "10"},
	{"XPENDING", "g", "grp", "IDLE", "100000000", "-", "+", "10"},
	{"XPENDING", "g", "grp", "IDLE", "100000000", "-", "+", "10", "alice"},
	{"XPENDING", "g", "grp", "IDLE", "x", "-", "+", "10"},
	{"XPENDING", "g", "grp", "IDLE", "1", "-", "+"},
	{"XPENDING", "g", "grp", "-", "+"},
	{"XPENDING", "g", "grp", "-", "+", "x"},
	{"XPENDING", "g", "grp", "x", "+", "1"},
	{"XPENDING", "g", "grp", "-", "x", "1"},
	{"XPENDING", "g", "grp", "(-", "+", "1"},
	{"XPENDING", "g", "grp", "(18446744073709551615-18446744073709551615", "+", "1"},
	{"XPENDING", "g", "grp", "-", "(0-0", "1"},
	{"XPENDING", "g", "grp", "-", "+", "10", "alice", "extra"},
	{"XPENDING", "g", "grp", "IDLE", "1", "-", "+", "10", "alice", "extra"},
	{"XPENDING", "g", "grp", "-", "+", "9223372036854775807"},
	{"XPENDING", "g", "nogrp"},
	{"XPENDING", "nokey", "grp"},
	{"XPENDING", "nokey", "grp", "x", "+", "1"},
	{"XINFO", "CONSUMERS", "g", "grp"},
	{"XINFO", "STREAM", "g", "FULL"},
	{"XINFO", "STREAM", "g", "FULL", "COUNT", "1"},
	{"XINFO", "STREAM", "g", "FULL", "COUNT", "-1"},

	// XACK.
	{"XACK", "g", "grp", "1-0"},
	{"XACK", "g", "grp", "1-0", "1-0", "9-9"},
	{"XACK", "g", "grp", "bad"},
	{"XACK", "g", "grp", "2-0", "bad"},
	{"XACK", "g", "nogrp", "bad"},
	{"XACK", "nokey", "grp", "bad"},
	{"XPENDING", "g", "grp"},

	// XCLAIM.
	{"XCLAIM", "g", "grp", "carol", "0", "2-0"},
	{"XPENDING", "g", "grp", "-", "+", "10"},
	{"XCLAIM", "g", "grp", "carol", "0", "2-0", "JUSTID"},
	{"XPENDING", "g", "grp", "-", "+", "10"},
	{"XCLAIM", "g", "grp", "alice", "100000000", "2-0", "3-0"},
	{"XCLAIM", "g", "grp", "alice", "0", "2-0", "3-0", "IDLE", "500000000"},
	{"XPENDING", "g", "grp", "IDLE", "400000000", "-", "+", "10"},
	{"XCLAIM", "g", "grp", "bob", "400000000", "2-0", "3-0", "4-0", "RETRYCOUNT", "7"},
	{"XPENDING", "g", "grp", "-", "+", "10"},
	{"XCLAIM", "g", "grp", "bob", "0", "4-0"},
	{"XCLAIM", "g", "grp", "bob", "0", "4-0", "FORCE", "RETRYCOUNT", "0", "JUSTID"},
	{"XCLAIM", "g", "grp", "bob", "0", "4-0", "5-0", "9-0", "FORCE", "TIME", "@PAST"},
	{"XPENDING", "g", "grp", "IDLE", "900000", "-", "+", "10"},
	{"XCLAIM", "g", "grp", "dave", "0", "5-0", "TIME", "99999999999999"},
	{"XCLAIM", "g", "grp", "dave", "0", "5-0", "IDLE", "-1000"},
	{"XCLAIM", "g", "grp", "dave", "0", "5-0", "LASTID", "4-0"},
	{"XINFO", "GROUPS", "g"},
	{"XCLAIM", "g", "grp", "dave", "0", "5-0", "LASTID", "6-0"},
	{"XINFO", "GROUPS", "g"},
	{"XCLAIM", "g", "grp", "dave", "0", "LASTID", "7-0"},
	{"XINFO", "GROUPS", "g"},
	{"XCLAIM", "g", "grp", "dave", "0", "5-0", "LASTID", "x"},
	{"XCLAIM", "g", "grp", "dave", "0", "5-0", "IDLE", "x"},
	{"XCLAIM", "g", "grp", "dave", "0", "5-0", "TIME", "x"},
	{"XCLAIM", "g", "grp", "dave", "0", "5-0", "RETRYCOUNT", "x"},
	{"XCLAIM", "g", "grp", "dave", "0", "5-0", "RETRYCOUNT"},
	{"XCLAIM", "g", "grp", "dave", "0", "5-0", "BOGUS"},
	{"XCLAIM", "g", "grp", "dave", "0", "5-0", "x-1"},
	{"XCLAIM", "g", "grp", "dave", "x", "5-0"},
	{"XCLAIM", "g", "grp", "dave", "-5", "5-0"},
	{"XCLAIM", "g", "nogrp", "dave", "x", "5-0"},
	{"XCLAIM", "nokey", "grp", "dave", "x", "5-0"},
	{"XCLAIM", "g", "grp", "dave", "0", "5-0", "force", "justid", "idle", "0", "retrycount", "3"},
	{"XPENDING", "g", "grp", "-", "+", "10"},
	{"XPENDING", "g", "grp"},
	{"XINFO", "CONSUMERS", "g", "grp"},

	// Entries deleted while pending: XCLAIM drops them from the PEL,
	// XREADGROUP's history shows them as nulls, XAUTOCLAIM reports them.
	{"XDEL", "g", "3-0"},
	{"XREADGROUP", "GROUP", "grp", "bob", "STREAMS", "g", "0"},
	{"XCLAIM", "g", "grp", "alice", "0", "3-0"},
	{"XPENDING", "g", "grp"},
	{"XADD", "g", "10-0", "f", "10"},
	{"XADD", "g", "11-0", "f", "11"},
	{"XADD", "g", "12-0", "f", "12"},
	{"XADD", "g", "13-0", "f", "13"},
	{"XREADGROUP", "GROUP", "grp", "erin", "STREAMS", "g", ">"},
	{"XDEL", "g", "11-0", "12-0"},
	{"XAUTOCLAIM", "g", "grp", "frank", "0", "0", "COUNT", "1"},
	{"XAUTOCLAIM", "g", "grp", "frank", "0", "0", "COUNT", "2"},
	{"XAUTOCLAIM", "g", "grp", "frank", "0", "0-0", "COUNT", "3", "JUSTID"},
	{"XPENDING", "g", "grp", "-", "+", "20"},
	{"XAUTOCLAIM", "g", "grp", "frank", "0", "(4-0"},
	{"XAUTOCLAIM", "g", "grp", "frank", "0", "-", "JUSTID"},
	{"XAUTOCLAIM", "g", "grp", "frank", "0", "13-0", "JUSTID"},
	{"XAUTOCLAIM", "g", "grp", "frank", "0", "14-0"},
	{"XAUTOCLAIM", "g", "grp", "frank", "100000000", "-"},
	{"XAUTOCLAIM", "g", "grp", "frank", "-1", "-", "COUNT", "1"},
	{"XAUTOCLAIM", "g", "grp", "frank", "0", "-", "COUNT", "0"},
	{"XAUTOCLAIM", "g", "grp", "frank", "0", "-", "COUNT", "-1"},
	{"XAUTOCLAIM", "g", "grp", "frank", "0", "-", "COUNT", "x"},
	{"XAUTOCLAIM", "g", "grp", "frank", "0", "-", "COUNT", "576460752303423487"},
	{"XAUTOCLAIM", "g", "grp", "frank", "0", "-", "COUNT", "576460752303423488"},
	{"XAUTOCLAIM", "g", "grp", "frank", "0", "-", "COUNT"},
	{"XAUTOCLAIM", "g", "grp", "frank", "0", "-", "BOGUS"},
	{"XAUTOCLAIM", "g", "grp", "frank", "x", "-"},
	{"XAUTOCLAIM", "g", "grp", "frank", "0", "x"},
	{"XAUTOCLAIM", "g", "grp", "frank", "0", "+"},
	{"XAUTOCLAIM", "g", "grp", "frank", "0", "(+"},
	{"XAUTOCLAIM", "g", "grp", "frank", "0", "(18446744073709551615-18446744073709551615"},
	{"XAUTOCLAIM", "g", "nogrp", "frank", "0", "-"},
	{"XAUTOCLAIM", "nokey", "grp", "frank", "0", "-"},
	{"XAUTOCLAIM", "nokey", "grp", "frank", "0", "x"},
	{"XPENDING", "g", "grp", "-", "+", "20"},
	{"XINFO", "STREAM", "g", "FULL"},

	// Lag and entries-read around deletions, trims and SETID.
	{"XINFO", "GROUPS", "g"},
	{"XGROUP", "SETID", "g", "grp", "0"},
	{"XINFO", "GROUPS", "g"},
	{"XGROUP", "SETID", "g", "grp", "$"},
	{"XINFO", "GROUPS", "g"},
	{"XGROUP", "SETID", "g", "grp", "4-0", "ENTRIESREAD", "3"},
	{"XINFO", "GROUPS", "g"},
	{"XGROUP", "SETID", "g", "grp", "-"},
	{"XINFO", "GROUPS", "g"},
	{"XGROUP", "SETID", "g", "grp", "+"},
	{"XINFO", "GROUPS", "g"},
	{"XGROUP", "SETID", "g", "grp", "x"},
	{"XGROUP", "SETID", "g", "grp", "0", "ENTRIESREAD"},
	{"XGROUP", "SETID", "g", "grp", "0", "ENTRIESREAD", "x"},
	{"XGROUP", "SETID", "g", "grp", "0", "ENTRIESREAD", "-3"},
	{"XGROUP", "SETID", "g", "grp", "0", "MKSTREAM"},
	{"XGROUP", "SETID", "g", "grp", "0", "ENTRIESREAD", "1", "ENTRIESREAD", "2"},
	{"XGROUP", "SETID", "g", "grp", "0", "ENTRIESREAD", "0"},
	{"XREADGROUP", "GROUP", "grp", "gina", "COUNT", "2", "STREAMS", "g", ">"},
	{"XINFO", "GROUPS", "g"},
	{"XREADGROUP", "GROUP", "grp", "gina", "NOACK", "STREAMS", "g", ">"},
	{"XINFO", "GROUPS", "g"},
	{"XADD", "g", "14-0", "f", "14"},
	{"XINFO", "GROUPS", "g"},
	{"XTRIM", "g", "MINID", "5"},
	{"XINFO", "GROUPS", "g"},
	{"XINFO", "STREAM", "g"},
	{"XGROUP", "CREATE", "g", "late", "0"},
	{"XGROUP", "CREATE", "g", "late2", "4-0"},
	{"XGROUP", "CREATE", "g", "late3", "13-0"},
	{"XGROUP", "CREATE", "g", "late4", "14-0", "ENTRIESREAD", "100"},
	{"XINFO", "GROUPS", "g"},
	{"XDEL", "g", "14-0"},
	{"XINFO", "GROUPS", "g"},
	{"XREADGROUP", "GROUP", "late", "x", "STREAMS", "g", ">"},
	{"XINFO", "GROUPS", "g"},
	{"XSETID", "g", "20-0", "ENTRIESADDED", "50", "MAXDELETEDID", "15-0"},
	{"XINFO", "GROUPS", "g"},
	{"XINFO", "STREAM", "g", "FULL"},

	// A copy is a stream of its own, with its groups and their
	// pending entries.
	{"COPY", "g", "gcopy"},
	{"XINFO", "STREAM", "gcopy", "FULL"},
	{"XADD", "gcopy", "30-0", "f", "30"},
	{"XREADGROUP", "GROUP", "grp", "zed", "STREAMS", "gcopy", ">"},
	{"XACK", "gcopy", "grp", "1-0", "2-0", "4-0"},
	{"XGROUP", "DELCONSUMER", "gcopy", "grp", "frank"},
	{"XTRIM", "gcopy", "MAXLEN", "1"},
	{"XINFO", "STREAM", "gcopy", "FULL"},
	{"XINFO", "STREAM", "g", "FULL"},
	{"XPENDING", "g", "grp"},
	{"XPENDING", "gcopy", "grp"},
	{"RENAME", "gcopy", "gcopy2"},
	{"XINFO", "STREAM", "gcopy2", "FULL"},
	{"COPY", "gcopy2", "g", "REPLACE"},
	{"XINFO", "STREAM", "g", "FULL"},

	// Consumers and groups go.
	{"XGROUP", "DELCONSUMER", "g", "grp", "bob"},
	{"XGROUP", "DELCONSUMER", "g", "grp", "bob"},
	{"XPENDING", "g", "grp"},
	{"XINFO", "CONSUMERS", "g", "grp"},
	{"XGROUP", "DESTROY", "g", "grp"},
	{"XGROUP", "DESTROY", "g", "grp"},
	{"XINFO", "GROUPS", "g"},
	{"XINFO", "STREAM", "g"},
	{"XPENDING", "g", "grp"},
	// Group and consumer names are binary and ordered bytewise.
	{"XGROUP", "CREATE", "g", "\xff", "0"},
	{"XGROUP", "CREATE", "g", "", "0"},
	{"XGROUP", "CREATE", "g", "a\x00b", "0"},
	{"XGROUP", "CREATE", "g", "B", "0"},
	{"XGROUP", "CREATECONSUMER", "g", "B", ""},
	{"XGROUP", "CREATECONSUMER", "g", "B", "\x00"},
	{"XGROUP", "CREATECONSUMER", "g", "B", "zz"},
	{"XGROUP", "CREATECONSUMER", "g", "B", "Z"},
	{"XINFO", "GROUPS", "g"},
	{"XINFO", "CONSUMERS", "g", "B"},
	{"XREADGROUP", "GROUP", "", "", "COUNT", "1", "STREAMS", "g", ">"},
	{"XPENDING", "g", ""},
	// An emptied stream keeps its key, groups and IDs.
	{"XTRIM", "g", "MAXLEN", "0"},
	{"EXISTS", "g"},
	{"XINFO", "STREAM", "g"},
	{"XINFO", "GROUPS", "g"},
	{"XREADGROUP", "GROUP", "B", "zz", "STREAMS", "g", ">"},
	{"XREADGROUP", "GROUP", "", "", "STREAMS", "g", "0"},
	{"XAUTOCLAIM", "g", "", "new", "0", "-"},
	{"XINFO", "GROUPS", "g"},
	{"DEL", "g"},
	{"XINFO", "GROUPS", "g"},
}

// TestStreamGroups runs streamGroupCases on both servers.
func TestStreamGroups(t *testing.T) {
	d := NewDiff(t)
	past := strconv.FormatInt(time.Now().UnixMilli()-1000*1000, 10)
	for _, c := range streamGroupCases {
		c = append([]string(nil), c...)
		for i, a := range c {
			if a == "@PAST" {
				c[i] = past
			}
		}
		doStream(d, c...)
	}
}

// ---- blocking reads ---------------------------------------------------------------

// streamSession drives one server for a blocking scenario: ctl sends
// commands, the readers block; every reply is recorded so that the two
// servers' records can be compared.
type streamSession struct {
	t       *testing.T
	name    string
	p       *Proc
	ctl     *Conn
	replies []string
}

func (s *streamSession) do(args ...string) string {
	s.t.Helper()
	r := s.ctl.Do(args...)
	s.replies = append(s.replies, strings.Join(args, " ")+" -> "+r)
	return r
}

// block sends a blocking command from c and waits until the server
// counts n blocked clients.
func (s *streamSession) block(c *Conn, n int, args ...string) {
	s.t.Helper()
	c.Send(Encode(args...))
	want := "blocked_clients:" + strconv.Itoa(n) + "\r"
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if strings.Contains(s.ctl.Do("INFO", "clients"), want) {
			return
		}
	}
	r, _ := c.ReadErr(100 * time.Millisecond)
	s.t.Fatalf("%s: %q did not block (%d blocked clients wanted); it answered %q; after:\n%s",
		s.name, args, n, r, strings.Join(s.replies[max(len(s.replies)-5, 0):], "\n"))
}

// served records the reply a blocked command got.
func (s *streamSession) served(c *Conn, what string) {
	s.t.Helper()
	r, err := c.ReadErr(20 * time.Second)
	if err != nil {
		s.t.Fatalf("%s: %s: no reply (%v, so far %q); after:\n%s", s.name, what, err, r,
			strings.Join(s.replies[max(len(s.replies)-5, 0):], "\n"))
	}
	s.replies = append(s.replies, what+" => "+r)
}

// stillBlocked records that c has no reply yet (after a round trip on
// ctl, so that anything the server would have sent is sent).
func (s *streamSession) stillBlocked(c *Conn, what string) {
	s.t.Helper()
	s.ctl.Do("PING")
	r, err := c.ReadErr(100 * time.Millisecond)
	if err == nil || r != "" {
		s.replies = append(s.replies, what+" => unexpected "+r)
		return
	}
	s.replies = append(s.replies, what+" => still blocked")
}

// connID is c's CLIENT ID.
func connID(c *Conn) string { return strings.TrimSpace(strings.TrimPrefix(c.Do("CLIENT", "ID"), ":")) }

// compareSessions runs scenario on a fresh zredis and a fresh
// redis-server and compares what was recorded, step by step.
func compareSessions(t *testing.T, scenario func(s *streamSession)) {
	t.Helper()
	var got [2][]string
	for i, name := range []string{"zredis", "redis"} {
		p := StartServer(t, name)
		s := &streamSession{t: t, name: name, p: p, ctl: Dial(t, p.Addr)}
		scenario(s)
		got[i] = s.replies
	}
	diffCases.Add(int64(len(got[1])))
	for i := 0; i < max(len(got[0]), len(got[1])); i++ {
		var z, r string
		if i < len(got[0]) {
			z = got[0][i]
		}
		if i < len(got[1]) {
			r = got[1][i]
		}
		if z != r {
			t.Errorf("step %d:\n zredis: %q\n  redis: %q", i, z, r)
		}
	}
}

func TestStreamBlocking(t *testing.T) {
	compareSessions(t, func(s *streamSession) {
		r1, r2, r3 := Dial(t, s.p.Addr), Dial(t, s.p.Addr), Dial(t, s.p.Addr)
		id1, id2, id3 := connID(r1), connID(r2), connID(r3)

		// XREAD $ on a missing key, then on an existing one.
		s.block(r1, 1, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
		s.do("XADD", "s", "1-0", "f", "v")
		s.served(r1, "XREAD $ missing key")
		s.block(r1, 1, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
		s.do("XADD", "s", "2-0", "f", "v", "g", "w")
		s.served(r1, "XREAD $")
		// Timeouts.
		s.replies = append(s.replies, "XREAD timeout => "+r1.Do("XREAD", "BLOCK", "20", "STREAMS", "s", "$"))
		s.replies = append(s.replies, "XREAD timeout 2 keys => "+r1.Do("XREAD", "COUNT", "5", "BLOCK", "20", "STREAMS", "s", "nokey", "$", "0"))
		// Timeouts too long for a time.Duration in nanoseconds.
		for _, ms := range []string{"18446744073710", "9223372036854775807"} {
			s.block(r1, 1, "XREAD", "BLOCK", ms, "STREAMS", "s", "$")
			s.stillBlocked(r1, "XREAD BLOCK "+ms)
			s.replies = append(s.replies, "CLIENT UNBLOCK => "+s.ctl.Do("CLIENT", "UNBLOCK", id1))
			s.served(r1, "XREAD BLOCK "+ms)
		}
		// An ID below the top is served at once; one above it waits
		// for an entry above it.
		s.replies = append(s.replies, "XREAD BLOCK served at once => "+r1.Do("XREAD", "BLOCK", "0", "STREAMS", "s", "1-0"))
		s.block(r1, 1, "XREAD", "BLOCK", "0", "STREAMS", "s", "5-0")
		s.do("XADD", "s", "3-0", "f", "v")
		s.stillBlocked(r1, "XREAD above the top")
		s.do("XADD", "s", "6-0", "f", "v")
		s.served(r1, "XREAD above the top")
		// Two keys: the first one to get data answers, alone.
		s.block(r1, 1, "XREAD", "COUNT", "2", "BLOCK", "0", "STREAMS", "s", "s2", "$", "$")
		s.do("XADD", "s2", "1-0", "f", "v")
		s.served(r1, "XREAD 2 keys")
		s.block(r1, 1, "XREAD", "COUNT", "2", "BLOCK", "0", "STREAMS", "s", "s2", "$", "$")
		s.do("MULTI")
		s.do("XADD", "s2", "2-0", "f", "v")
		s.do("XADD", "s", "7-0", "f", "v")
		s.do("XADD", "s", "8-0", "f", "v")
		s.do("XADD", "s", "9-0", "f", "v")
		s.do("EXEC")
		s.served(r1, "XREAD 2 keys in MULTI")
		// Several readers of one key are all served.
		s.block(r1, 1, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
		s.block(r2, 2, "XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", "9-0")
		s.do("XADD", "s", "10-0", "f", "v")
		s.served(r1, "XREAD reader 1")
		s.served(r2, "XREAD reader 2")
		// Without COUNT a blocked XREAD gets at most 1000 entries.
		s.block(r1, 1, "XREAD", "BLOCK", "0", "STREAMS", "big", "$")
		s.do("MULTI")
		for i := 1; i <= 1003; i++ {
			s.ctl.Send(Encode("XADD", "big", strconv.Itoa(i)+"-0", "n", strconv.Itoa(i)))
		}
		for i := 1; i <= 1003; i++ {
			s.ctl.Read()
		}
		s.do("EXEC")
		s.served(r1, "XREAD default count")
		// A deleted key does not unblock XREAD; a new stream whose top
		// is above the ID read does.
		s.block(r1, 1, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
		s.do("DEL", "s")
		s.stillBlocked(r1, "XREAD of a deleted key")
		s.do("XADD", "s", "5-0", "f", "v")
		s.stillBlocked(r1, "XREAD of a recreated key below")
		s.do("XADD", "s", "11-0", "f", "v")
		s.served(r1, "XREAD of a recreated key")
		// Changes that add nothing do not serve a reader waiting above
		// the last ID of an emptied stream.
		s.do("XADD", "e", "5-0", "f", "v")
		s.do("XDEL", "e", "5-0")
		s.block(r1, 1, "XREAD", "BLOCK", "0", "STREAMS", "e", "0")
		s.do("EXPIRE", "e", "1000")
		s.do("PERSIST", "e")
		s.do("XSETID", "e", "7-0")
		s.do("XTRIM", "e", "MAXLEN", "0")
		s.stillBlocked(r1, "XREAD on an emptied stream")
		s.do("XADD", "e", "8-0", "f", "v")
		s.served(r1, "XREAD on an emptied stream")
		// A key of another type.
		s.do("SET", "str", "v")
		s.replies = append(s.replies, "XREAD wrong type => "+r1.Do("XREAD", "BLOCK", "0", "STREAMS", "str", "$"))
		s.block(r1, 1, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
		s.do("SET", "s", "v")
		s.stillBlocked(r1, "XREAD of a key overwritten")
		s.do("DEL", "s")
		s.do("XADD", "s", "1-0", "f", "v")
		s.stillBlocked(r1, "XREAD of a key overwritten and recreated below")
		s.do("XADD", "s", "12-0", "f", "v")
		s.served(r1, "XREAD of a key overwritten and recreated")

		// XREADGROUP.
		s.do("DEL", "q")
		s.do("XGROUP", "CREATE", "q", "g", "$", "MKSTREAM")
		s.block(r1, 1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "q", ">")
		s.block(r2, 2, "XREADGROUP", "GROUP", "g", "c2", "BLOCK", "0", "STREAMS", "q", ">")
		s.do("XINFO", "GROUPS", "q")
		s.do("XADD", "q", "1-0", "f", "v")
		s.served(r1, "XREADGROUP first reader")
		s.stillBlocked(r2, "XREADGROUP second reader")
		s.do("XADD", "q", "2-0", "f", "v")
		s.served(r2, "XREADGROUP second reader")
		s.do("XPENDING", "q", "g")
		s.do("XINFO", "GROUPS", "q")
		// NOACK.
		s.block(r1, 1, "XREADGROUP", "GROUP", "g", "c3", "NOACK", "BLOCK", "0", "STREAMS", "q", ">")
		s.do("XADD", "q", "3-0", "f", "v")
		s.served(r1, "XREADGROUP NOACK")
		s.do("XPENDING", "q", "g")
		s.do("XINFO", "GROUPS", "q")
		// History and entries already there are served at once.
		s.replies = append(s.replies, "XREADGROUP BLOCK history => "+r1.Do("XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "q", "0"))
		s.replies = append(s.replies, "XREADGROUP BLOCK empty history => "+r1.Do("XREADGROUP", "GROUP", "g", "c9", "BLOCK", "0", "STREAMS", "q", "0"))
		s.do("XGROUP", "SETID", "q", "g", "1-0")
		s.replies = append(s.replies, "XREADGROUP BLOCK behind => "+r1.Do("XREADGROUP", "GROUP", "g", "c1", "COUNT", "1", "BLOCK", "0", "STREAMS", "q", ">"))
		s.replies = append(s.replies, "XREADGROUP timeout => "+r1.Do("XREADGROUP", "GROUP", "g", "c1", "COUNT", "9", "BLOCK", "20", "STREAMS", "q", ">"))
		s.do("XPENDING", "q", "g")
		// Its key deleted, overwritten, or its group destroyed.
		s.block(r1, 1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "q", ">")
		s.block(r2, 2, "XREAD", "BLOCK", "0", "STREAMS", "q", "$")
		s.do("XGROUP", "DESTROY", "q", "g")
		s.served(r1, "XREADGROUP group destroyed")
		s.stillBlocked(r2, "XREAD beside a group destroyed")
		s.do("XGROUP", "CREATE", "q", "g", "$")
		s.block(r1, 2, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "q", ">")
		s.do("DEL", "q")
		s.served(r1, "XREADGROUP key deleted")
		s.stillBlocked(r2, "XREAD beside a key deleted")
		s.do("XGROUP", "CREATE", "q", "g", "$", "MKSTREAM")
		s.block(r1, 2, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "q", ">")
		s.do("SET", "q", "x")
		s.served(r1, "XREADGROUP key overwritten")
		s.do("DEL", "q")
		s.do("XGROUP", "CREATE", "q", "g", "$", "MKSTREAM")
		s.block(r1, 2, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "q", ">")
		s.do("MULTI")
		s.do("DEL", "q")
		s.do("XADD", "q", "1-0", "f", "v")
		s.do("XGROUP", "CREATE", "q", "g", "0")
		s.do("EXEC")
		s.served(r1, "XREADGROUP key recreated with its group")
		s.stillBlocked(r2, "XREAD key recreated below")
		s.ctl.Do("CLIENT", "UNBLOCK", id2)
		s.served(r2, "XREAD key recreated below")
		s.block(r1, 1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "q", ">")
		s.do("MULTI")
		s.do("DEL", "q")
		s.do("XADD", "q", "2-0", "f", "v")
		s.do("EXEC")
		s.served(r1, "XREADGROUP key recreated without its group")
		s.do("XGROUP", "CREATE", "q", "g", "$")
		s.block(r1, 1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "q", ">")
		s.do("FLUSHDB")
		s.served(r1, "XREADGROUP FLUSHDB")
		s.do("XGROUP", "CREATE", "q", "g", "$", "MKSTREAM")
		s.block(r1, 1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "q", ">")
		s.do("SWAPDB", "0", "1")
		s.served(r1, "XREADGROUP SWAPDB")
		s.do("SWAPDB", "0", "1")
		// A key renamed away, or onto.
		s.do("XGROUP", "CREATE", "rn", "g", "$", "MKSTREAM")
		s.block(r1, 1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "rn", ">")
		s.do("RENAME", "rn", "rn2")
		s.served(r1, "XREADGROUP key renamed away")
		s.block(r1, 1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "rn2", ">")
		s.do("XADD", "rn3", "1-0", "f", "v")
		s.do("XGROUP", "CREATE", "rn3", "g", "0")
		s.do("RENAME", "rn3", "rn2")
		s.served(r1, "XREADGROUP key renamed onto")
		s.block(r1, 1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "rn2", ">")
		s.do("MOVE", "rn2", "5")
		s.served(r1, "XREADGROUP key moved")
		// A key that expires.
		s.do("XGROUP", "CREATE", "x", "g", "$", "MKSTREAM")
		s.block(r1, 1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "x", ">")
		s.do("PEXPIRE", "x", "50")
		s.served(r1, "XREADGROUP key expired")
		// Tombstones above the group: no new entry, no reply.
		s.do("XADD", "q", "5-0", "f", "v")
		s.do("XADD", "q", "6-0", "f", "v")
		s.do("XGROUP", "SETID", "q", "g", "4-0")
		s.do("XDEL", "q", "5-0", "6-0")
		s.block(r1, 1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "q", ">")
		s.do("XADD", "q", "1000-0", "f", "v")
		s.do("XDEL", "q", "1000-0")
		s.served(r1, "XREADGROUP with tombstones")
		s.block(r1, 1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "q", ">")
		s.do("XTRIM", "q", "MAXLEN", "0")
		s.do("EXPIRE", "q", "1000")
		s.stillBlocked(r1, "XREADGROUP on a trimmed stream")
		s.do("XADD", "q", "1001-0", "f", "v")
		s.served(r1, "XREADGROUP on a trimmed stream")
		s.do("XINFO", "STREAM", "q")

		// The group moved back by SETID: nothing is served until an
		// entry is added, then all from the group's new place.
		s.block(r1, 1, "XREADGROUP", "GROUP", "g", "c1", "COUNT", "10", "BLOCK", "0", "STREAMS", "q", ">")
		s.do("XADD", "q", "1002-0", "f", "v")
		s.served(r1, "XREADGROUP before SETID")
		s.block(r1, 1, "XREADGROUP", "GROUP", "g", "c1", "COUNT", "10", "BLOCK", "0", "STREAMS", "q", ">")
		s.do("XGROUP", "SETID", "q", "g", "0")
		s.do("XGROUP", "CREATECONSUMER", "q", "g", "c7")
		s.do("XCLAIM", "q", "g", "c7", "0", "1001-0", "LASTID", "1001-0")
		s.stillBlocked(r1, "XREADGROUP after SETID")
		s.do("XADD", "q", "1003-0", "f", "v")
		s.served(r1, "XREADGROUP after SETID")
		// CLIENT UNBLOCK.
		s.block(r3, 1, "XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "q", ">")
		s.replies = append(s.replies, "CLIENT UNBLOCK => "+s.ctl.Do("CLIENT", "UNBLOCK", id3))
		s.served(r3, "XREADGROUP CLIENT UNBLOCK")
		s.block(r3, 1, "XREAD", "BLOCK", "0", "STREAMS", "q", "$")
		s.replies = append(s.replies, "CLIENT UNBLOCK ERROR => "+s.ctl.Do("CLIENT", "UNBLOCK", id3, "ERROR"))
		s.served(r3, "XREAD CLIENT UNBLOCK ERROR")

		// MULTI: no blocking.
		s.do("MULTI")
		s.do("XREAD", "BLOCK", "0", "STREAMS", "q", "$")
		s.do("XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "q", ">")
		s.do("XADD", "q", "1004-0", "f", "v")
		s.do("XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "q", ">")
		s.do("XREAD", "BLOCK", "0", "STREAMS", "q", "1003-0")
		s.do("EXEC")

		// A reader that hangs up while blocked takes nothing with it.
		s.block(r3, 1, "XREADGROUP", "GROUP", "g", "gone", "BLOCK", "0", "STREAMS", "q", ">")
		r3.nc.Close()
		waitBlocked(t, s.ctl, 0)
		s.do("XADD", "q", "1005-0", "f", "v")
		s.do("XPENDING", "q", "g")
		s.do("XINFO", "GROUPS", "q")
		s.replies = append(s.replies, "after hang-up => "+r1.Do("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "q", ">"))
	})
}

// TestStreamBlockingResp3: XREAD's and XREADGROUP's replies are maps
// under RESP3, served at once or after blocking.
func TestStreamBlockingResp3(t *testing.T) {
	compareSessions(t, func(s *streamSession) {
		r1 := Dial(t, s.p.Addr)
		r1.Do("HELLO", "3")
		s.ctl.Do("HELLO", "3") // the reply holds the client ID
		s.do("XADD", "s", "1-0", "f", "v")
		s.do("XADD", "t", "1-0", "f", "v")
		s.do("XREAD", "STREAMS", "s", "t", "0", "0")
		s.do("XREAD", "STREAMS", "s", "t", "1", "0")
		s.do("XREAD", "STREAMS", "s", "t", "1", "1")
		s.do("XREAD", "BLOCK", "10", "STREAMS", "s", "1")
		s.do("XGROUP", "CREATE", "s", "g", "0")
		s.do("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
		s.do("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0")
		s.do("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
		s.do("XINFO", "STREAM", "s")
		s.do("XINFO", "GROUPS", "s")
		s.do("XPENDING", "s", "g")
		s.do("XAUTOCLAIM", "s", "g", "c", "0", "0", "JUSTID")
		s.do("XRANGE", "s", "-", "+", "COUNT", "0")
		s.block(r1, 1, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
		s.do("XADD", "s", "2-0", "f", "v")
		s.served(r1, "XREAD")
		s.do("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
		s.block(r1, 1, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
		s.do("XADD", "s", "3-0", "f", "v")
		s.served(r1, "XREADGROUP")
		s.replies = append(s.replies, "timeout => "+r1.Do("XREAD", "BLOCK", "10", "STREAMS", "s", "$"))
	})
}

// TestStreamHangupLosesNothing: a reader that hangs up while blocked
// and an entry added at once after; whichever comes first for the
// server, the entry is never lost: it is pending for the reader gone
// (and can be claimed) or still to be delivered.
func TestStreamHangupLosesNothing(t *testing.T) {
	z := StartZredis(t)
	ctl := Dial(t, z.Addr)
	ctl.Do("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
	for i := 1; i <= 20; i++ {
		r := Dial(t, z.Addr)
		r.Send(Encode("XREADGROUP", "GROUP", "g", "gone", "BLOCK", "0", "STREAMS", "s", ">"))
		waitBlocked(t, ctl, 1)
		r.nc.Close()
		id := strconv.Itoa(i) + "-0"
		ctl.Do("XADD", "s", id, "n", strconv.Itoa(i))
		waitBlocked(t, ctl, 0)
		pending := ctl.Do("XPENDING", "s", "g", id, id, "1")
		fresh := ctl.Do("XREADGROUP", "GROUP", "g", "other", "STREAMS", "s", ">")
		if !strings.Contains(pending, id) && !strings.Contains(fresh, id) {
			t.Fatalf("entry %s lost: XPENDING %q, XREADGROUP %q", id, pending, fresh)
		}
	}
}

// ---- keyspace events ---------------------------------------------------------------

// TestStreamNotify compares the keyspace events of every stream command
// with redis-server's, under several flag strings: t (stream events),
// n (new keys), g (del), m (key misses on reads), x (expiry).
func TestStreamNotify(t *testing.T) {
	cmds := [][]string{
		nc("XADD", "s", "1-0", "f", "v"), nc("XADD", "s", "2-0", "f", "v"), nc("XADD", "s", "1-0", "f", "v"),
		nc("XADD", "s", "MAXLEN", "1", "3-0", "f", "v"), nc("XADD", "s", "MAXLEN", "5", "4-0", "f", "v"),
		nc("XADD", "s", "MAXLEN", "~", "0", "5-0", "f", "v"), nc("XADD", "s", "MINID", "5", "6-0", "f", "v"),
		nc("XADD", "nokey", "NOMKSTREAM", "1-0", "f", "v"), nc("XADD", "s", "0-1", "f", "v"),
		nc("XTRIM", "s", "MAXLEN", "10"), nc("XTRIM", "s", "MAXLEN", "1"), nc("XTRIM", "nokey", "MAXLEN", "1"),
		nc("XTRIM", "s", "MINID", "~", "100"),
		nc("XDEL", "s", "1-0"), nc("XDEL", "s", "6-0", "9-9"), nc("XDEL", "nokey", "1-0"),
		nc("XLEN", "s"), nc("XLEN", "nokey"), nc("XRANGE", "nokey", "-", "+"), nc("XREVRANGE", "nokey", "+", "-"),
		nc("XREAD", "STREAMS", "nokey", "0"), nc("XREAD", "STREAMS", "s", "nokey", "nokey2", "0", "0", "0"),
		nc("XINFO", "STREAM", "nokey"), nc("XINFO", "GROUPS", "nokey"),
		nc("XADD", "s", "7-0", "f", "v"),
		nc("XGROUP", "CREATE", "s", "g", "0"), nc("XGROUP", "CREATE", "s", "g", "0"),
		nc("XGROUP", "CREATE", "new", "g", "$", "MKSTREAM"), nc("XGROUP", "CREATE", "nokey", "g", "$"),
		nc("XGROUP", "CREATECONSUMER", "s", "g", "alice"), nc("XGROUP", "CREATECONSUMER", "s", "g", "alice"),
		nc("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"),
		nc("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"),
		nc("XREADGROUP", "GROUP", "g", "carol", "STREAMS", "s", "0"),
		nc("XREADGROUP", "GROUP", "g", "dave", "NOACK", "STREAMS", "s", ">"),
		nc("XREADGROUP", "GROUP", "g", "erin", "STREAMS", "nokey", ">"),
		nc("XACK", "s", "g", "7-0"), nc("XACK", "nokey", "g", "7-0"),
		nc("XADD", "s", "8-0", "f", "v"), nc("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"),
		nc("XCLAIM", "s", "g", "frank", "0", "8-0"), nc("XCLAIM", "s", "g", "frank", "0", "8-0"),
		nc("XCLAIM", "s", "g", "gina", "100000000", "8-0"), nc("XCLAIM", "nokey", "g", "x", "0", "8-0"),
		nc("XAUTOCLAIM", "s", "g", "hank", "0", "0"), nc("XAUTOCLAIM", "s", "g", "ivan", "100000000", "0"),
		nc("XAUTOCLAIM", "nokey", "g", "x", "0", "0"),
		nc("XPENDING", "s", "g"), nc("XPENDING", "nokey", "g"),
		nc("XGROUP", "SETID", "s", "g", "0"), nc("XGROUP", "DELCONSUMER", "s", "g", "alice"),
		nc("XGROUP", "DELCONSUMER", "s", "g", "alice"), nc("XGROUP", "DESTROY", "s", "g"),
		nc("XGROUP", "DESTROY", "s", "g"),
		nc("XSETID", "s", "100-0"), nc("XSETID", "s", "1-0"), nc("XSETID", "nokey", "1-0"),
		nc("XADD", "e", "1-0", "f", "v"), nc("PEXPIRE", "e", "50"), sleepMs(150), nc("XLEN", "e"),
		nc("DEL", "s"), nc("RENAME", "new", "renamed"),
	}
	for _, flags := range []string{"KEA", "Kt", "Et", "KEn", "Eg", "Km", "Ex", "KEtm"} {
		t.Run(flags, func(t *testing.T) { diffNotifications(t, flags, cmds...) })
	}
}

// ---- MULTI/EXEC and WATCH -------------------------------------------------------------

// TestStreamMulti runs stream commands inside transactions, and checks
// which stream commands break a WATCH (the ones that change entries,
// and a stream made by XGROUP CREATE MKSTREAM), and which do not (a
// group's state: XREADGROUP, XACK, XCLAIM, XGROUP, XSETID).
func TestStreamMulti(t *testing.T) {
	d := NewDiff(t)
	p := d.peer()
	do := func(args ...string) { doStream(d, args...) }
	do("MULTI")
	do("XADD", "s", "1-0", "f", "v")
	do("XADD", "s", "1-*", "f", "v")
	do("XGROUP", "CREATE", "s", "g", "0")
	do("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">")
	do("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
	do("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
	do("XACK", "s", "g", "1-0")
	do("XADD", "s", "0-1", "f", "v")
	do("XTRIM", "s", "MAXLEN", "1")
	do("XRANGE", "s", "-", "+")
	do("XINFO", "GROUPS", "s")
	do("XPENDING", "s", "g")
	do("EXEC")
	do("MULTI")
	do("XADD", "s")
	do("XADD", "s", "2-0", "f", "v")
	do("EXEC")
	do("XLEN", "s")
	do("MULTI")
	do("XADD", "s", "BADID", "f", "v")
	do("XADD", "s", "3-0", "f", "v")
	do("EXEC")
	do("XLEN", "s")

	watched := func(change []string, setup ...[]string) {
		t.Helper()
		d.DoBoth("DEL", "w")
		d.DoBoth("XADD", "w", "1-0", "f", "v")
		d.DoBoth("XGROUP", "CREATE", "w", "g", "0")
		for _, s := range setup {
			d.DoBoth(s...)
		}
		do("WATCH", "w")
		doStream(p, change...)
		do("MULTI")
		do("XLEN", "w")
		do("EXEC")
	}
	watched(nc("XADD", "w", "2-0", "f", "v"))
	watched(nc("XADD", "w", "1-0", "f", "v"))
	watched(nc("XDEL", "w", "1-0"))
	watched(nc("XDEL", "w", "9-0"))
	watched(nc("XTRIM", "w", "MAXLEN", "0"))
	watched(nc("XTRIM", "w", "MAXLEN", "5"))
	watched(nc("XREADGROUP", "GROUP", "g", "c", "STREAMS", "w", ">"))
	watched(nc("XREADGROUP", "GROUP", "g", "c", "NOACK", "STREAMS", "w", ">"))
	watched(nc("XACK", "w", "g", "1-0"), nc("XREADGROUP", "GROUP", "g", "c", "STREAMS", "w", ">"))
	watched(nc("XCLAIM", "w", "g", "d", "0", "1-0"), nc("XREADGROUP", "GROUP", "g", "c", "STREAMS", "w", ">"))
	watched(nc("XAUTOCLAIM", "w", "g", "d", "0", "0"), nc("XREADGROUP", "GROUP", "g", "c", "STREAMS", "w", ">"))
	watched(nc("XGROUP", "CREATE", "w", "g2", "0"))
	watched(nc("XGROUP", "SETID", "w", "g", "0"))
	watched(nc("XGROUP", "CREATECONSUMER", "w", "g", "c"))
	watched(nc("XGROUP", "DELCONSUMER", "w", "g", "c"), nc("XGROUP", "CREATECONSUMER", "w", "g", "c"))
	watched(nc("XGROUP", "DESTROY", "w", "g"))
	watched(nc("XSETID", "w", "5-0"))
	watched(nc("XREAD", "STREAMS", "w", "0"))
	watched(nc("XADD", "w", "NOMKSTREAM", "2-0", "f", "v"))
	watched(nc("XADD", "nokey", "NOMKSTREAM", "2-0", "f", "v"))
	// A stream made by XGROUP CREATE MKSTREAM.
	d.DoBoth("DEL", "m")
	do("WATCH", "m")
	doStream(p, "XGROUP", "CREATE", "m", "g", "$", "MKSTREAM")
	do("MULTI")
	do("XLEN", "m")
	do("EXEC")
}

// ---- replication ------------------------------------------------------------------------

// streamReplScript is what TestStreamReplication writes to a master:
// every command that changes a stream or its groups, in the forms whose
// propagation is not the command itself (approximate trims, reads of a
// group, claims, deleted pending entries). "@block" steps block a second
// client, served by the steps that follow until "@served".
var streamReplScript = [][]string{
	{"CONFIG", "SET", "stream-node-max-entries", "4"},
	{"XGROUP", "CREATE", "s", "g1", "0", "MKSTREAM"},
	{"XGROUP", "CREATE", "s", "g2", "$"},
	{"XGROUP", "CREATE", "s", "g3", "0", "ENTRIESREAD", "0"},
	{"@fill", "s", "1", "60"},
	{"XADD", "s", "MAXLEN", "~", "50", "61-*", "f", "v"},
	{"XADD", "s", "MAXLEN", "~", "45", "LIMIT", "4", "62-*", "f", "v"},
	{"XTRIM", "s", "MAXLEN", "~", "40"},
	{"XTRIM", "s", "MINID", "~", "25"},
	{"XADD", "s", "MINID", "~", "27", "63-*", "f", "v"},
	{"XTRIM", "s", "MINID", "~", "29", "LIMIT", "4"},
	{"XTRIM", "s", "MAXLEN", "~", "0"},
	{"XTRIM", "s", "MAXLEN", "=", "38"},
	{"XREADGROUP", "GROUP", "g1", "alice", "COUNT", "5", "STREAMS", "s", ">"},
	{"XREADGROUP", "GROUP", "g1", "bob", "COUNT", "5", "STREAMS", "s", ">"},
	{"XREADGROUP", "GROUP", "g1", "carol", "NOACK", "COUNT", "3", "STREAMS", "s", ">"},
	{"XREADGROUP", "GROUP", "g1", "bob", "NOACK", "COUNT", "2", "STREAMS", "s", ">"},
	{"XREADGROUP", "GROUP", "g2", "dave", "STREAMS", "s", ">"},
	{"XREADGROUP", "GROUP", "g3", "erin", "COUNT", "7", "STREAMS", "s", ">"},
	{"XACK", "s", "g1", "30-0", "31-0", "9-9"},
	{"XCLAIM", "s", "g1", "frank", "0", "32-0", "33-0"},
	{"XCLAIM", "s", "g1", "frank", "0", "34-0", "JUSTID"},
	{"XCLAIM", "s", "g1", "gina", "0", "35-0", "IDLE", "5000", "RETRYCOUNT", "9"},
	{"XCLAIM", "s", "g1", "gina", "0", "36-0", "TIME", "@PAST"},
	{"XCLAIM", "s", "g1", "gina", "0", "50-0", "FORCE"},
	{"XCLAIM", "s", "g1", "gina", "0", "51-0", "FORCE", "JUSTID", "LASTID", "52-0"},
	{"XCLAIM", "s", "g1", "hank", "0", "LASTID", "55-0"},
	{"XCLAIM", "s", "g1", "hank", "100000000", "37-0"},
	{"XDEL", "s", "38-0", "39-0", "51-0"},
	{"XCLAIM", "s", "g1", "ivan", "0", "38-0"},
	{"XAUTOCLAIM", "s", "g1", "judy", "0", "0", "COUNT", "3"},
	{"XAUTOCLAIM", "s", "g1", "judy", "0", "0", "COUNT", "100", "JUSTID"},
	{"XAUTOCLAIM", "s", "g3", "kate", "0", "0"},
	{"XGROUP", "SETID", "s", "g2", "40-0"},
	{"XGROUP", "SETID", "s", "g2", "41-0", "ENTRIESREAD", "20"},
	{"XREADGROUP", "GROUP", "g2", "dave", "COUNT", "2", "STREAMS", "s", ">"},
	{"XGROUP", "CREATECONSUMER", "s", "g2", "leo"},
	{"XGROUP", "DELCONSUMER", "s", "g1", "bob"},
	{"XGROUP", "CREATE", "s", "g4", "$"},
	{"XGROUP", "DESTROY", "s", "g4"},
	{"@block", "XREADGROUP", "GROUP", "g2", "mia", "BLOCK", "0", "STREAMS", "s", ">"},
	{"XADD", "s", "70-0", "f", "v"},
	{"@served"},
	{"@block", "XREADGROUP", "GROUP", "g2", "nick", "NOACK", "BLOCK", "0", "STREAMS", "s", ">"},
	{"XADD", "s", "71-0", "f", "v"},
	{"@served"},
	{"MULTI"},
	{"XADD", "s", "72-0", "f", "v"},
	{"XREADGROUP", "GROUP", "g1", "olga", "STREAMS", "s", ">"},
	{"XACK", "s", "g1", "72-0"},
	{"XCLAIM", "s", "g1", "olga", "0", "70-0"},
	{"XDEL", "s", "71-0"},
	{"EXEC"},
	{"XSETID", "s", "100-0", "ENTRIESADDED", "200", "MAXDELETEDID", "90-0"},
	{"XADD", "s", "100-*", "f", "v"},
	{"XADD", "t", "1-1", "a", "b"},
	{"XSETID", "t", "5-5"},
	{"XGROUP", "CREATE", "t", "g", "0"},
	{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "t", ">"},
	{"XDEL", "t", "1-1"},
	{"XAUTOCLAIM", "t", "g", "d", "0", "0"},
	{"XGROUP", "CREATE", "u", "g", "$", "MKSTREAM"},
}

// streamReplState is what the replication test compares of a server.
// noReadCounters leaves out the groups' entries-read and lag: Redis 7.0
// propagates a group read as XCLAIM ... LASTID, which moves the group's
// last ID on a replica but not its read counter, so that a replica's
// counters differ from its master's (redis-server's own replicas' too).
func streamReplState(t *testing.T, c *Conn, noReadCounters bool) []string {
	t.Helper()
	var out []string
	for _, key := range []string{"s", "t", "u"} {
		out = append(out, c.Do("XRANGE", key, "-", "+"))
		full := parseResp(t, c.Do("XINFO", "STREAM", key, "FULL", "COUNT", "0"))
		blurStreamFull(t, full)
		if groups := full.field("groups"); noReadCounters && groups != nil {
			for _, g := range groups.elems {
				for _, f := range []string{"entries-read", "lag"} {
					if v := g.field(f); v != nil {
						*v = respNode{kind: '+', line: "SKIPPED"}
					}
				}
			}
		}
		out = append(out, full.String())
		groups := parseResp(t, c.Do("XINFO", "GROUPS", key))
		for _, g := range groups.elems {
			name := g.field("name").line
			out = append(out, c.Do("XPENDING", key, name))
			ext := parseResp(t, c.Do("XPENDING", key, name, "-", "+", "1000"))
			blurPendingExt(t, ext)
			out = append(out, ext.String())
		}
	}
	return out
}

// TestStreamReplication writes streamReplScript to a zredis master with
// a redis-server replica, and to a redis-server master with one too
// (and, the other way round, with a zredis replica): each replica must
// hold what its master holds, and the pairs the same (times compared
// loosely; the delivery times the replicas get are the masters',
// through XCLAIM ... TIME).
func TestStreamReplication(t *testing.T) {
	RequireRedis(t)
	past := strconv.FormatInt(time.Now().UnixMilli()-1000*1000, 10)
	var states [3][2][]string
	// The third pair: redis-server's stream applied by a zredis replica.
	for i, pair := range [][2]string{{"zredis", "redis"}, {"redis", "redis"}, {"redis", "zredis"}} {
		name := pair[0] + " master, " + pair[1] + " replica"
		master := StartServer(t, pair[0])
		var replica *Proc
		if pair[1] == "redis" {
			replica = startReplica(t, master)
		} else {
			replica = StartZredis(t, "--replicaof", "127.0.0.1", strconv.Itoa(master.Port))
		}
		waitLinkUp(t, replica)
		mc, rc := Dial(t, master.Addr), Dial(t, replica.Addr)
		rc.Do("CONFIG", "SET", "stream-node-max-entries", "4")
		blocked := Dial(t, master.Addr)
		for _, step := range streamReplScript {
			switch step[0] {
			case "@fill":
				from, _ := strconv.Atoi(step[2])
				to, _ := strconv.Atoi(step[3])
				for ms := from; ms <= to; ms++ {
					mc.Do("XADD", step[1], strconv.Itoa(ms)+"-0", "n", strconv.Itoa(ms), "pad", strings.Repeat("p", ms%7))
				}
				continue
			case "@block":
				blocked.Send(Encode(step[1:]...))
				waitBlocked(t, mc, 1)
				continue
			case "@served":
				if r, err := blocked.ReadErr(20 * time.Second); err != nil {
					t.Fatalf("%s: blocked client: %v (%q)", name, err, r)
				}
				continue
			}
			args := append([]string(nil), step...)
			for j, a := range args {
				if a == "@PAST" {
					args[j] = past
				}
			}
			if r := mc.Do(args...); strings.HasPrefix(r, "-") {
				t.Errorf("%s: %q: %q", name, args, r)
			}
		}
		waitConverged(t, master, replica)
		ms, rs := streamReplState(t, mc, true), streamReplState(t, rc, true)
		for j := range ms {
			if ms[j] != rs[j] {
				t.Errorf("%s: the master and its replica differ:\n master:  %s\n replica: %s", name,
					shortReply(ms[j], rs[j]), shortReply(rs[j], ms[j]))
			}
		}
		states[i][0], states[i][1] = streamReplState(t, mc, false), streamReplState(t, rc, false)
	}
	// Each compared with the redis-server pair's (states[1]): the zredis
	// master, its replica, and the zredis replica of redis-server.
	for _, cmp := range []struct {
		label    string
		pair, of int
	}{{"masters", 0, 0}, {"replicas of zredis and of redis-server", 0, 1}, {"replicas of redis-server", 2, 1}} {
		label := cmp.label
		z, r := states[cmp.pair][cmp.of], states[1][cmp.of]
		for j := range max(len(z), len(r)) {
			if j >= len(z) || j >= len(r) || z[j] != r[j] {
				var zs, rs string
				if j < len(z) {
					zs = z[j]
				}
				if j < len(r) {
					rs = r[j]
				}
				t.Errorf("%s differ (zredis's, redis-server's):\n zredis: %s\n  redis: %s", label, shortReply(zs, rs), shortReply(rs, zs))
			}
		}
	}
}

// ---- a random mix ------------------------------------------------------------------------

// TestStreamRandomOps runs a seeded random mix of every stream command
// on both servers, under small node limits: entries added, deleted and
// trimmed while groups read, acknowledge and claim them.
func TestStreamRandomOps(t *testing.T) {
	d := NewDiff(t)
	t.Cleanup(func() {
		d.DoBoth("CONFIG", "SET", "stream-node-max-entries", "100")
		d.DoBoth("CONFIG", "SET", "stream-node-max-bytes", "4096")
	})
	d.Do("CONFIG", "SET", "stream-node-max-entries", "6")
	d.Do("CONFIG", "SET", "stream-node-max-bytes", "400")
	rng := rand.New(rand.NewPCG(21, 34))
	ms := map[string]int{"x1": 1, "x2": 1}
	keys := []string{"x1", "x2"}
	groups := []string{"ga", "gb", "gc"}
	consumers := []string{"c1", "c2", "c3", "c4"}
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	id := func(key string) string {
		top := ms[key]
		switch rng.IntN(8) {
		case 0:
			return "-"
		case 1:
			return "+"
		case 2:
			return "(" + strconv.Itoa(rng.IntN(top+2)) + "-" + strconv.Itoa(rng.IntN(3))
		case 3:
			return strconv.Itoa(rng.IntN(top + 2))
		}
		return strconv.Itoa(rng.IntN(top+2)) + "-" + strconv.Itoa(rng.IntN(3))
	}
	strictID := func(key string) string {
		return strconv.Itoa(rng.IntN(ms[key]+2)) + "-" + strconv.Itoa(rng.IntN(3))
	}
	count := func() []string {
		if rng.IntN(3) == 0 {
			return nil
		}
		return []string{"COUNT", strconv.Itoa(rng.IntN(12) - 1)}
	}
	trim := func(key string) []string {
		var args []string
		if rng.IntN(2) == 0 {
			args = []string{"MAXLEN"}
		} else {
			args = []string{"MINID"}
		}
		approx := rng.IntN(2) == 0
		if approx {
			args = append(args, "~")
		} else if rng.IntN(2) == 0 {
			args = append(args, "=")
		}
		if args[0] == "MAXLEN" {
			args = append(args, strconv.Itoa(rng.IntN(150)))
		} else {
			args = append(args, strictID(key))
		}
		if approx && rng.IntN(3) == 0 {
			args = append(args, "LIMIT", strconv.Itoa(rng.IntN(20)))
		}
		return args
	}
	for i := 0; i < 3000; i++ {
		key := pick(keys)
		var cmd []string
		switch rng.IntN(24) {
		case 0, 1, 2, 3, 4:
			if rng.IntN(4) > 0 {
				ms[key] += rng.IntN(2)
			}
			cmd = []string{"XADD", key}
			if rng.IntN(6) == 0 {
				cmd = append(cmd, trim(key)...)
			}
			if rng.IntN(3) == 0 {
				cmd = append(cmd, strconv.Itoa(ms[key])+"-"+strconv.Itoa(rng.IntN(4)))
			} else {
				cmd = append(cmd, strconv.Itoa(ms[key])+"-*")
			}
			cmd = append(cmd, streamFields(rng)...)
		case 5:
			cmd = []string{"XDEL", key, strictID(key), strictID(key)}
		case 6:
			cmd = append([]string{"XTRIM", key}, trim(key)...)
		case 7:
			cmd = append([]string{"XRANGE", key, id(key), id(key)}, count()...)
		case 8:
			cmd = append([]string{"XREVRANGE", key, id(key), id(key)}, count()...)
		case 9:
			cmd = append(append([]string{"XREAD"}, count()...), "STREAMS", "x1", "x2", strictID("x1"), strictID("x2"))
		case 10:
			start := "0"
			switch rng.IntN(3) {
			case 0:
				start = "$"
			case 1:
				start = strictID(key)
			}
			cmd = []string{"XGROUP", "CREATE", key, pick(groups), start}
			if rng.IntN(4) == 0 {
				cmd = append(cmd, "ENTRIESREAD", strconv.Itoa(rng.IntN(30)))
			}
		case 11:
			cmd = []string{"XGROUP", "SETID", key, pick(groups), strictID(key)}
			if rng.IntN(3) == 0 {
				cmd = append(cmd, "ENTRIESREAD", strconv.Itoa(rng.IntN(30)-1))
			}
		case 12:
			switch rng.IntN(4) {
			case 0:
				cmd = []string{"XGROUP", "DESTROY", key, pick(groups)}
			case 1:
				cmd = []string{"XGROUP", "CREATECONSUMER", key, pick(groups), pick(consumers)}
			default:
				cmd = []string{"XGROUP", "DELCONSUMER", key, pick(groups), pick(consumers)}
			}
		case 13, 14, 15:
			cmd = append([]string{"XREADGROUP", "GROUP", pick(groups), pick(consumers)}, count()...)
			if rng.IntN(4) == 0 {
				cmd = append(cmd, "NOACK")
			}
			from := ">"
			if rng.IntN(4) == 0 {
				from = strictID(key)
			}
			cmd = append(cmd, "STREAMS", key, from)
		case 16:
			cmd = []string{"XACK", key, pick(groups), strictID(key), strictID(key), strictID(key)}
		case 17:
			cmd = []string{"XCLAIM", key, pick(groups), pick(consumers), "0", strictID(key), strictID(key)}
			for _, o := range []string{"FORCE", "JUSTID"} {
				if rng.IntN(3) == 0 {
					cmd = append(cmd, o)
				}
			}
			if rng.IntN(3) == 0 {
				cmd = append(cmd, "RETRYCOUNT", strconv.Itoa(rng.IntN(5)))
			}
			if rng.IntN(4) == 0 {
				cmd = append(cmd, "LASTID", strictID(key))
			}
		case 18:
			cmd = []string{"XAUTOCLAIM", key, pick(groups), pick(consumers), "0", id(key)}
			if rng.IntN(2) == 0 {
				cmd = append(cmd, "COUNT", strconv.Itoa(1+rng.IntN(6)))
			}
			if rng.IntN(3) == 0 {
				cmd = append(cmd, "JUSTID")
			}
		case 19:
			if rng.IntN(2) == 0 {
				cmd = []string{"XPENDING", key, pick(groups)}
			} else {
				cmd = []string{"XPENDING", key, pick(groups), id(key), id(key), strconv.Itoa(rng.IntN(10))}
				if rng.IntN(2) == 0 {
					cmd = append(cmd, pick(consumers))
				}
			}
		case 20:
			cmd = []string{"XINFO", "GROUPS", key}
		case 21:
			cmd = []string{"XINFO", "CONSUMERS", key, pick(groups)}
		case 22:
			cmd = []string{"XINFO", "STREAM", key}
		case 23:
			if rng.IntN(10) == 0 {
				ms[key] += 3
				cmd = []string{"XSETID", key, strconv.Itoa(ms[key]) + "-0"}
			} else {
				cmd = []string{"XLEN", key}
			}
		}
		doStream(d, cmd...)
		if i%200 == 0 {
			doStream(d, "XINFO", "STREAM", key, "FULL", "COUNT", "0")
		}
	}
	for _, key := range keys {
		doStream(d, "XINFO", "STREAM", key, "FULL", "COUNT", "0")
	}
}

// TestStreamAutoclaimCursor: XAUTOCLAIM looks at COUNT*10 pending
// entries at most, and its cursor is the next one to look at, whether
// it stopped on COUNT, on attempts, or at the end; deleted entries
// count against COUNT.
func TestStreamAutoclaimCursor(t *testing.T) {
	d := NewDiff(t)
	do := func(args ...string) { doStream(d, args...) }
	for i := 1; i <= 40; i++ {
		do("XADD", "ac", strconv.Itoa(i)+"-0", "n", strconv.Itoa(i))
	}
	do("XGROUP", "CREATE", "ac", "g", "0")
	do("XREADGROUP", "GROUP", "g", "c", "STREAMS", "ac", ">")
	do("XAUTOCLAIM", "ac", "g", "d", "100000000", "0", "COUNT", "1")
	do("XAUTOCLAIM", "ac", "g", "d", "100000000", "11-0", "COUNT", "2")
	do("XAUTOCLAIM", "ac", "g", "d", "100000000", "31-0", "COUNT", "1")
	do("XAUTOCLAIM", "ac", "g", "d", "100000000", "31-0", "COUNT", "2")
	do("XAUTOCLAIM", "ac", "g", "d", "0", "39-0", "COUNT", "1", "JUSTID")
	do("XAUTOCLAIM", "ac", "g", "d", "0", "39-0", "COUNT", "2", "JUSTID")
	do("XAUTOCLAIM", "ac", "g", "d", "0", "40-0", "COUNT", "1", "JUSTID")
	do("XAUTOCLAIM", "ac", "g", "d", "0", "41-0", "COUNT", "1", "JUSTID")
	do("XDEL", "ac", "2-0", "3-0", "4-0", "6-0", "20-0")
	do("XAUTOCLAIM", "ac", "g", "d", "0", "0", "COUNT", "2", "JUSTID")
	do("XAUTOCLAIM", "ac", "g", "d", "0", "0", "COUNT", "2", "JUSTID")
	do("XAUTOCLAIM", "ac", "g", "d", "100000000", "0", "COUNT", "3")
	do("XPENDING", "ac", "g")
	do("XPENDING", "ac", "g", "-", "+", "100", "d")
	do("XTRIM", "ac", "MAXLEN", "0")
	do("XAUTOCLAIM", "ac", "g", "d", "100000000", "0", "COUNT", "4")
	do("XAUTOCLAIM", "ac", "g", "d", "100000000", "0", "COUNT", "100")
	do("XPENDING", "ac", "g")
	do("XINFO", "CONSUMERS", "ac", "g")
}

// TestStreamBlockingNotify: serving a blocked XREADGROUP sends the events
// of the read (a consumer created) after those of the write that served
// it; a stream deleted under a reader, its own.
func TestStreamBlockingNotify(t *testing.T) {
	compareSessions(t, func(s *streamSession) {
		s.do("CONFIG", "SET", "notify-keyspace-events", "KEA")
		sub, r1 := Dial(t, s.p.Addr), Dial(t, s.p.Addr)
		sub.Do("PSUBSCRIBE", "*")
		s.do("XGROUP", "CREATE", "q", "g", "$", "MKSTREAM")
		s.block(r1, 1, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "q", ">")
		s.do("XADD", "q", "1-0", "f", "v")
		s.served(r1, "XREADGROUP")
		s.block(r1, 1, "XREADGROUP", "GROUP", "g", "d", "NOACK", "BLOCK", "0", "STREAMS", "q", ">")
		s.do("MULTI")
		s.do("XADD", "q", "2-0", "f", "v")
		s.do("XADD", "q", "3-0", "f", "v")
		s.do("EXEC")
		s.served(r1, "XREADGROUP NOACK")
		s.block(r1, 1, "XREADGROUP", "GROUP", "g", "e", "BLOCK", "0", "STREAMS", "q", ">")
		s.do("DEL", "q")
		s.served(r1, "XREADGROUP deleted")
		s.do("PUBLISH", notifySentinel, "end")
		s.replies = append(s.replies, readNotifications(t, sub)...)
	})
}

// TestStreamKeyspaceStats: the reads of stream commands count keyspace
// hits and misses as redis-server counts them (XREAD looks its keys up
// twice; the write commands count none).
func TestStreamKeyspaceStats(t *testing.T) {
	d := NewDiff(t)
	d.Do("XADD", "s", "1-0", "f", "v")
	d.Do("XGROUP", "CREATE", "s", "g", "0")
	for _, cmd := range [][]string{
		{"XRANGE", "s", "-", "+"}, {"XRANGE", "nokey", "-", "+"}, {"XREVRANGE", "s", "+", "-"}, {"XLEN", "s"}, {"XLEN", "nokey"},
		{"XREAD", "STREAMS", "s", "nokey", "0", "0"}, {"XREAD", "STREAMS", "s", "$"},
		{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"}, {"XREADGROUP", "GROUP", "g", "c", "STREAMS", "nokey", ">"},
		{"XPENDING", "s", "g"}, {"XPENDING", "nokey", "g"}, {"XACK", "s", "g", "1-0"}, {"XACK", "nokey", "g", "1-0"},
		{"XCLAIM", "s", "g", "c", "0", "1-0"}, {"XCLAIM", "nokey", "g", "c", "0", "1-0"},
		{"XAUTOCLAIM", "s", "g", "c", "0", "0"}, {"XAUTOCLAIM", "nokey", "g", "c", "0", "0"},
		{"XINFO", "STREAM", "s"}, {"XINFO", "GROUPS", "nokey"}, {"XINFO", "CONSUMERS", "s", "g"},
		{"XADD", "s", "2-0", "f", "v"}, {"XADD", "nokey2", "NOMKSTREAM", "*", "f", "v"}, {"XDEL", "nokey", "1-0"},
		{"XTRIM", "nokey", "MAXLEN", "1"}, {"XSETID", "nokey", "1-0"}, {"XGROUP", "CREATE", "nokey", "g", "$"},
	} {
		d.DoBoth("CONFIG", "RESETSTAT")
		d.DoBoth(cmd...)
		for _, f := range []string{"keyspace_hits", "keyspace_misses"} {
			if z, r := infoField(t, d.Z, "stats", f), infoField(t, d.R, "stats", f); z != r {
				t.Errorf("%q: %s %s, redis-server %s", cmd, f, z, r)
			}
		}
	}
}
