package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Differential tests of keyspace notifications: the same commands run on
// zredis and on a real redis-server 7.0, each with a PSUBSCRIBE '*'
// connection listening, must publish the same messages on the same
// channels in the same order.

// notifySentinel is the channel the harness publishes on to mark the end
// of a run: every event the commands caused was published before it.
const notifySentinel = "zredis-test-notify-end"

// notifySleep is a pseudo-command for diffNotifications: {notifySleep,
// "50"} pauses 50 ms on both servers (for a deadline to pass) instead of
// sending a command.
const notifySleep = "__SLEEP_MS__"

// diffNotifications sets notify-keyspace-events to flags on zredis and on
// redis-server (the shared pair of NewDiff, flushed first), listens with
// PSUBSCRIBE * on each, runs cmds in order on both (their replies must
// match too), then publishes a sentinel and requires the two sequences of
// messages (channel and payload) up to it to be identical. The setting is
// cleared again when the test ends.
//
// An element {notifySleep, "<ms>"} sleeps instead of sending a command.
// Active expiry runs on different schedules in the two servers: let a
// deadline pass with a sleep longer than it and read the key (GET) before
// anything else touches it, so that both report the expiry at that point.
func diffNotifications(t *testing.T, flags string, cmds ...[]string) {
	t.Helper()
	d := NewDiff(t)
	t.Cleanup(func() {
		d.Z.Do("CONFIG", "SET", "notify-keyspace-events", "")
		d.R.Do("CONFIG", "SET", "notify-keyspace-events", "")
	})
	d.Do("CONFIG", "SET", "notify-keyspace-events", flags)
	zsub, rsub := Dial(t, shared.z.Addr), Dial(t, shared.r.Addr)
	for _, sub := range []*Conn{zsub, rsub} {
		if got, want := sub.Do("PSUBSCRIBE", "*"), "*3\r\n$10\r\npsubscribe\r\n$1\r\n*\r\n:1\r\n"; got != want {
			t.Fatalf("PSUBSCRIBE *: %q, want %q", got, want)
		}
	}
	for _, cmd := range cmds {
		if len(cmd) == 2 && cmd[0] == notifySleep {
			ms, err := strconv.Atoi(cmd[1])
			if err != nil {
				t.Fatalf("bad sleep %q", cmd)
			}
			time.Sleep(time.Duration(ms) * time.Millisecond)
			continue
		}
		d.Do(cmd...)
	}
	d.DoBoth("PUBLISH", notifySentinel, "end")
	z, r := readNotifications(t, zsub), readNotifications(t, rsub)
	diffCases.Add(1)
	if strings.Join(z, "\n") != strings.Join(r, "\n") {
		t.Errorf("notifications differ (flags %q, commands %q):\n zredis:\n  %s\n  redis:\n  %s",
			flags, cmds, strings.Join(z, "\n  "), strings.Join(r, "\n  "))
	}
}

// readNotifications reads pmessage frames from a PSUBSCRIBE * connection
// until the sentinel and returns them as "channel -> payload" lines.
func readNotifications(t *testing.T, sub *Conn) []string {
	t.Helper()
	var out []string
	for {
		raw, err := sub.ReadErr(10 * time.Second)
		if err != nil {
			t.Fatalf("reading notifications: %v (after %q; got %q)", err, out, raw)
		}
		f := decodeFrame(raw)
		if len(f) != 4 || f[0] != "pmessage" || f[1] != "*" {
			t.Fatalf("unexpected frame %q (after %q)", raw, out)
		}
		if f[2] == notifySentinel {
			return out
		}
		out = append(out, f[2]+" -> "+f[3])
	}
}

// decodeFrame decodes a flat RESP2 array of bulk strings and integers (a
// pub/sub frame) into its elements; a null bulk string becomes "(nil)",
// an integer ":n". Anything else is returned whole as the only element.
func decodeFrame(raw string) []string {
	rd := bufio.NewReader(strings.NewReader(raw))
	head, err := rd.ReadString('\n')
	if err != nil || !strings.HasPrefix(head, "*") {
		return []string{raw}
	}
	n, err := strconv.Atoi(strings.TrimRight(head[1:], "\r\n"))
	if err != nil || n < 0 {
		return []string{raw}
	}
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		var b bytes.Buffer
		if readRaw(rd, &b) != nil {
			return []string{raw}
		}
		e := b.String()
		switch {
		case strings.HasPrefix(e, "$-1"):
			out = append(out, "(nil)")
		case strings.HasPrefix(e, "$"):
			i := strings.Index(e, "\r\n")
			out = append(out, e[i+2:len(e)-2])
		case strings.HasPrefix(e, ":"):
			out = append(out, strings.TrimRight(e, "\r\n"))
		default:
			return []string{raw}
		}
	}
	return out
}

// nc builds one command line for the tables below.
func nc(args ...string) []string { return args }

// sleepMs is the pseudo-command that pauses ms milliseconds.
func sleepMs(ms int) []string { return []string{notifySleep, fmt.Sprint(ms)} }

// TestNotifyGeneric covers the generic key commands: DEL UNLINK EXPIRE
// (and a deadline in the past, which 7.0 reports as del) PERSIST RENAME
// RENAMENX MOVE COPY, under several flag strings.
func TestNotifyGeneric(t *testing.T) {
	cmds := [][]string{
		nc("SET", "a", "1"), nc("SET", "b", "2"), nc("SET", "c", "3"),
		nc("DEL", "a", "missing", "b"),
		nc("UNLINK", "c", "c"),
		nc("SET", "k", "v"),
		nc("EXPIRE", "k", "100"), nc("PEXPIRE", "k", "100000"),
		nc("EXPIREAT", "k", farSec), nc("PEXPIREAT", "k", farSec+"000"),
		nc("EXPIRE", "k", "100", "NX"), nc("EXPIRE", "missing", "100"),
		nc("PERSIST", "k"), nc("PERSIST", "k"),
		nc("EXPIRE", "k", "-1"), nc("EXISTS", "k"),
		nc("SET", "k", "v"), nc("PEXPIREAT", "k", "1"),
		nc("SET", "k", "v"), nc("EXPIREAT", "k", "1", "GT"),
		nc("SET", "s", "v"), nc("SET", "d", "w"),
		nc("RENAME", "s", "d"), nc("RENAME", "d", "d"), nc("RENAME", "missing", "x"),
		nc("SET", "s", "v"), nc("RENAMENX", "s", "d"), nc("RENAMENX", "s", "e"),
		nc("MOVE", "e", "3"), nc("MOVE", "e", "3"), nc("SET", "e", "x"), nc("MOVE", "e", "3"),
		nc("COPY", "d", "d2"), nc("COPY", "d", "d2"), nc("COPY", "d", "d2", "REPLACE"),
		nc("COPY", "d", "e", "DB", "4"), nc("SELECT", "4"), nc("DEL", "e"), nc("SELECT", "0"),
		nc("FLUSHDB"),
	}
	for _, flags := range []string{"KEA", "Kg", "Eg", "KE$", "Ex", "gE", "A", "KA"} {
		t.Run(flags, func(t *testing.T) { diffNotifications(t, flags, cmds...) })
	}
}

// TestNotifyStrings covers the string commands.
func TestNotifyStrings(t *testing.T) {
	cmds := [][]string{
		nc("SET", "k", "v"), nc("SET", "k", "v", "NX"), nc("SET", "k", "w", "XX", "GET"),
		nc("SET", "k", "v", "EX", "100"), nc("SET", "k", "v", "PX", "100000", "GET"),
		nc("SET", "k", "v", "EXAT", farSec), nc("SET", "k", "v", "KEEPTTL"),
		nc("SET", "k", "v", "EX", "0"), nc("SET", "k", "v", "BAD"),
		nc("SETNX", "k", "x"), nc("SETNX", "n", "x"),
		nc("SETEX", "e", "100", "v"), nc("PSETEX", "e", "100000", "v"), nc("SETEX", "e", "-1", "v"),
		nc("GETSET", "g", "1"), nc("GETSET", "g", "2"),
		nc("GETDEL", "g"), nc("GETDEL", "g"),
		nc("SET", "x", "v"), nc("GETEX", "x"), nc("GETEX", "x", "EX", "100"), nc("GETEX", "x", "PERSIST"),
		nc("GETEX", "x", "PERSIST"), nc("GETEX", "x", "PXAT", farSec+"000"), nc("GETEX", "x", "EXAT", "1"),
		nc("GETEX", "x", "EX", "10"),
		nc("APPEND", "a", "x"), nc("APPEND", "a", "yz"),
		nc("SETRANGE", "r", "0", ""), nc("SETRANGE", "r", "2", "ab"), nc("SETRANGE", "r", "0", ""),
		nc("SETRANGE", "r", "0", "z"),
		nc("MSET", "m1", "1", "m2", "2", "m1", "3"), nc("MSETNX", "m1", "1", "m3", "3"), nc("MSETNX", "m4", "4", "m5", "5"),
		nc("INCR", "i"), nc("DECR", "i"), nc("INCRBY", "i", "5"), nc("DECRBY", "i", "2"),
		nc("INCR", "a"), nc("INCRBYFLOAT", "f", "1.5"), nc("INCRBYFLOAT", "f", "0.25"), nc("INCRBYFLOAT", "a", "1"),
		nc("GET", "k"), nc("MGET", "k", "n"), nc("STRLEN", "k"), nc("GETRANGE", "k", "0", "-1"),
		nc("LPUSH", "l", "x"), nc("SET", "l", "v", "GET"), nc("APPEND", "l", "x"), nc("INCR", "l"),
	}
	for _, flags := range []string{"KEA", "K$", "E$", "Eg$", "Kg"} {
		t.Run(flags, func(t *testing.T) { diffNotifications(t, flags, cmds...) })
	}
}

// TestNotifyExpired lets deadlines pass and reads the keys, so that both
// servers report the expiry before the next command; x alone, and with
// the other classes.
func TestNotifyExpired(t *testing.T) {
	// One key per sleep: Redis's active expiry samples keys at random,
	// so two keys expiring in one window may be reported in any order.
	// PEXPIRE a 50, not 1: redis-server deletes a key at once (a del
	// event) when the deadline it computed from the command's start has
	// passed by the time it checks, which a busy machine makes happen.
	cmds := [][]string{
		nc("SET", "a", "1"), nc("PEXPIRE", "a", "50"), sleepMs(150), nc("GET", "a"),
		nc("SET", "b", "2", "PX", "1"), sleepMs(60), nc("GET", "b"),
		nc("SET", "c", "3"), nc("GETEX", "c", "PX", "1"), sleepMs(60), nc("EXISTS", "c"),
		nc("SET", "d", "3"),
	}
	for _, flags := range []string{"Ex", "Kx", "KEA", "KEg$"} {
		t.Run(flags, func(t *testing.T) { diffNotifications(t, flags, cmds...) })
	}
}

// TestNotifyOff checks that nothing is published without flags, or with
// classes but neither K nor E.
func TestNotifyOff(t *testing.T) {
	cmds := [][]string{nc("SET", "a", "1"), nc("DEL", "a"), nc("INCR", "i"), nc("EXPIRE", "i", "10")}
	for _, flags := range []string{"", "A", "KE", "K", "E"} {
		t.Run(flags, func(t *testing.T) { diffNotifications(t, flags, cmds...) })
	}
}

// TestNotifyOverwritesAndLazyExpiry: overwriting a key of another type
// is a plain "set"; a write to a key past its deadline reports the expiry
// first; SWAPDB and FLUSHALL publish nothing.
func TestNotifyOverwritesAndLazyExpiry(t *testing.T) {
	cmds := [][]string{
		nc("RPUSH", "l", "a"), nc("SET", "l", "v"), nc("SADD", "s", "m"), nc("MSET", "s", "1", "t", "2"),
		nc("SET", "e", "v", "PX", "1"), sleepMs(60), nc("SET", "e", "w"),
		nc("SET", "f", "1", "PX", "1"), sleepMs(60), nc("INCR", "f"),
		nc("SET", "g", "1", "PX", "1"), sleepMs(60), nc("APPEND", "g", "x"),
		nc("SET", "h", "1", "PX", "1"), sleepMs(60), nc("RENAME", "h", "h2"),
		nc("SET", "r", "v", "EX", "100"), nc("RENAME", "r", "r2"), nc("TTL", "r2"),
		nc("SWAPDB", "0", "1"), nc("SWAPDB", "0", "1"), nc("FLUSHALL"),
	}
	for _, flags := range []string{"KEA", "Ex$"} {
		t.Run(flags, func(t *testing.T) { diffNotifications(t, flags, cmds...) })
	}
}

// TestNotifyNew covers the n class (new keys), which 'A' leaves out.
func TestNotifyNew(t *testing.T) {
	cmds := [][]string{
		nc("SET", "a", "1"), nc("SET", "a", "2"), nc("GET", "a"), nc("GET", "nokey"), nc("MGET", "a", "x", "y"),
		nc("EXISTS", "nokey"), nc("TTL", "nokey"), nc("TYPE", "nokey"), nc("STRLEN", "nokey"),
		nc("INCR", "i"), nc("APPEND", "ap", "x"), nc("SETRANGE", "sr", "1", "x"), nc("INCRBYFLOAT", "f", "1"),
		nc("MSET", "m1", "1", "a", "3"), nc("GETSET", "gs", "1"), nc("GETDEL", "nokey"), nc("GETEX", "nokey"),
		nc("SET", "r", "v"), nc("RENAME", "r", "r2"), nc("SET", "r3", "v"), nc("RENAME", "r2", "r3"),
		nc("COPY", "r3", "c1"), nc("MOVE", "c1", "2"),
		nc("SET", "e", "v", "PX", "1"), sleepMs(60), nc("GET", "e"),
		nc("SET", "e2", "v", "PX", "1"), sleepMs(60), nc("SET", "e2", "w"),
	}
	for _, flags := range []string{"KEn", "KEA", "KEAn", "Kn$", "Eng"} {
		t.Run(flags, func(t *testing.T) { diffNotifications(t, flags, cmds...) })
	}
}

// TestNotifyKeymiss covers the m class: every read that finds no key.
func TestNotifyKeymiss(t *testing.T) {
	cmds := [][]string{
		nc("SET", "a", "1"), nc("GET", "a"), nc("GET", "nokey"), nc("MGET", "a", "x", "y"),
		nc("EXISTS", "nokey"), nc("TTL", "nokey"), nc("TYPE", "nokey"), nc("STRLEN", "nokey"),
		nc("GETDEL", "nokey"), nc("GETEX", "nokey"), nc("GETRANGE", "nokey", "0", "1"),
		nc("HGET", "nokey", "f"), nc("SMEMBERS", "nokey"), nc("LRANGE", "nokey", "0", "1"), nc("ZSCORE", "nokey", "m"),
		nc("OBJECT", "ENCODING", "nokey"), nc("OBJECT", "FREQ", "nokey"), nc("MEMORY", "USAGE", "nokey"),
		nc("SET", "e", "v", "PX", "1"), sleepMs(60), nc("GET", "e"),
		nc("INCR", "i"), nc("APPEND", "ap", "x"), nc("SET", "n", "v", "NX"),
	}
	for _, flags := range []string{"Km", "Em", "KEA", "KEAm", "Emx"} {
		t.Run(flags, func(t *testing.T) { diffNotifications(t, flags, cmds...) })
	}
}
