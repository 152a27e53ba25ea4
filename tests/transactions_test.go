package tests

import (
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// Differential tests of MULTI EXEC DISCARD WATCH UNWATCH. Scenarios that
// need a second client open one more connection to each server (peer);
// expiry is driven by short real deadlines (a few milliseconds) and
// sleeps well past them.

// peer opens a second connection to each of d's servers, itself a Diff.
func (d *Diff) peer() *Diff {
	d.t.Helper()
	return &Diff{t: d.t, Z: Dial(d.t, shared.z.Addr), R: Dial(d.t, shared.r.Addr)}
}

// txStep is one step of a scenario: a command sent by client 0 (the
// Diff's own connection) or 1 (its peer), or by client 0 without
// comparing the replies (2), or a pause.
type txStep struct {
	who   int
	args  []string
	sleep time.Duration
}

func a(args ...string) txStep { return txStep{who: 0, args: args} }
func b(args ...string) txStep { return txStep{who: 1, args: args} }
func pause(ms int) txStep     { return txStep{sleep: time.Duration(ms) * time.Millisecond} }

// setup is a step of client 0 whose reply is not compared.
func setup(args ...string) txStep { return txStep{who: 2, args: args} }

func runTx(t *testing.T, steps []txStep) {
	d := NewDiff(t)
	p := d.peer()
	for _, s := range steps {
		if s.sleep > 0 {
			time.Sleep(s.sleep)
			continue
		}
		switch s.who {
		case 0:
			d.Do(s.args...)
		case 1:
			p.Do(s.args...)
		default:
			d.DoBoth(s.args...)
		}
	}
}

func TestTransactionsDiff(t *testing.T) {
	tests := []struct {
		name  string
		steps []txStep
	}{
		{"queue and exec", []txStep{
			a("MULTI"), a("SET", "a", "1"), a("INCR", "a"), a("GET", "a"), a("MGET", "a", "b"), a("EXEC"),
			a("GET", "a"),
		}},
		{"empty", []txStep{a("MULTI"), a("EXEC")}},
		{"without multi", []txStep{a("EXEC"), a("DISCARD"), a("exec"), a("UNWATCH")}},
		{"arity of the commands", []txStep{
			a("MULTI", "x"), a("EXEC", "x"), a("DISCARD", "x"), a("WATCH"), a("UNWATCH", "x"),
		}},
		{"wrong exec aborts at once", []txStep{
			a("MULTI"), a("SET", "a", "1"), a("EXEC", "x"), a("EXEC"), a("EXISTS", "a"),
		}},
		{"nested multi", []txStep{a("MULTI"), a("MULTI"), a("SET", "a", "1"), a("EXEC"), a("GET", "a")}},
		{"watch inside multi", []txStep{a("MULTI"), a("WATCH", "x"), a("PING"), a("EXEC")}},
		{"unknown command aborts", []txStep{
			a("MULTI"), a("NOSUCH", "x", "y"), a("SET", "a", "1"), a("EXEC"), a("EXISTS", "a"), a("EXEC"),
		}},
		{"arity error aborts", []txStep{a("MULTI"), a("SET", "a"), a("GET", "a"), a("EXEC"), a("EXISTS", "a")}},
		{"unknown subcommand aborts", []txStep{a("MULTI"), a("OBJECT", "nosuch", "k"), a("EXEC")}},
		{"no_multi command aborts", []txStep{a("MULTI"), a("SHUTDOWN"), a("SET", "a", "1"), a("EXEC"), a("EXISTS", "a")}},
		{"run-time errors are elements", []txStep{
			a("SET", "s", "x"), a("RPUSH", "l", "1"),
			a("MULTI"), a("INCR", "s"), a("SET", "b", "1"), a("GET", "l"), a("INCRBY", "b", "x"), a("APPEND", "b", "2"),
			a("EXEC"), a("GET", "b"),
		}},
		{"discard", []txStep{
			a("MULTI"), a("SET", "a", "1"), a("DISCARD"), a("EXISTS", "a"), a("EXEC"), a("DISCARD"),
		}},
		{"discard after an error", []txStep{a("MULTI"), a("NOSUCH"), a("DISCARD"), a("MULTI"), a("PING"), a("EXEC")}},
		{"commands run in place inside multi", []txStep{
			a("MULTI"), a("SET", "a", "1"), a("RESET"), a("EXEC"), a("EXISTS", "a"),
		}},
		{"select across four databases", []txStep{
			a("MULTI"),
			a("SELECT", "1"), a("SET", "k", "one"), a("EXISTS", "k"),
			a("SELECT", "2"), a("SET", "k", "two"), a("DEL", "k"), a("EXISTS", "k"),
			a("SELECT", "3"), a("SET", "k", "three"), a("SETNX", "k", "x"),
			a("SELECT", "4"), a("EXISTS", "k"), a("MSET", "k", "four", "j", "j"),
			a("EXEC"),
			a("GET", "k"), a("SELECT", "1"), a("GET", "k"), a("SELECT", "2"), a("EXISTS", "k"),
			a("SELECT", "3"), a("GET", "k"), a("SELECT", "0"), a("EXISTS", "k"),
		}},
		{"select error inside multi", []txStep{a("MULTI"), a("SELECT", "99"), a("SET", "a", "1"), a("EXEC"), a("EXISTS", "a")}},
		{"keys inside exec", []txStep{
			a("SET", "k1", "1"), a("MULTI"), a("KEYS", "k*"), a("SET", "k2", "2"), a("KEYS", "k2"), a("EXEC"),
		}},
		{"watch a key written by another client", []txStep{
			a("SET", "k", "1"), a("WATCH", "k"), b("SET", "k", "2"), a("MULTI"), a("SET", "k", "3"), a("EXEC"), a("GET", "k"),
		}},
		{"watch untouched", []txStep{
			a("SET", "k", "1"), a("WATCH", "k", "other"), b("SET", "x", "2"), b("GET", "k"), a("MULTI"), a("INCR", "k"), a("EXEC"),
		}},
		{"own write before multi", []txStep{a("WATCH", "k"), a("SET", "k", "1"), a("MULTI"), a("PING"), a("EXEC")}},
		{"exec clears the watch", []txStep{
			a("WATCH", "k"), a("SET", "k", "1"), a("MULTI"), a("EXEC"), a("MULTI"), a("PING"), a("EXEC"),
		}},
		{"discard clears the watch", []txStep{
			a("WATCH", "k"), a("MULTI"), a("DISCARD"), b("SET", "k", "1"), a("MULTI"), a("PING"), a("EXEC"),
		}},
		{"unwatch", []txStep{a("WATCH", "k"), b("SET", "k", "1"), a("UNWATCH"), a("MULTI"), a("PING"), a("EXEC")}},
		// SMOVE changes its destination only when the member is new there.
		{"smove to a set that has the member", []txStep{
			a("SADD", "s", "a", "b"), a("SADD", "d", "a"), a("WATCH", "d"), a("MULTI"), a("SADD", "d", "c"),
			b("SMOVE", "s", "d", "a"), a("EXEC"), a("SCARD", "d"),
		}},
		{"smove adds to the watched set", []txStep{
			a("SADD", "s", "a", "b"), a("SADD", "d", "x"), a("WATCH", "d"), a("MULTI"), a("SADD", "d", "c"),
			b("SMOVE", "s", "d", "a"), a("EXEC"), a("SCARD", "d"),
		}},
		{"watch twice", []txStep{a("WATCH", "k"), a("WATCH", "k", "k"), b("SET", "k", "1"), a("MULTI"), a("EXEC")}},
		{"watch in another database", []txStep{
			a("SELECT", "1"), a("WATCH", "k"), a("SELECT", "0"), b("SET", "k", "1"), a("MULTI"), a("PING"), a("EXEC"),
			a("SELECT", "1"), a("WATCH", "k"), a("SELECT", "0"), b("SELECT", "1"), b("SET", "k", "1"), a("MULTI"), a("EXEC"),
		}},
		{"set then delete still breaks", []txStep{
			a("WATCH", "k"), b("SET", "k", "1"), b("DEL", "k"), a("MULTI"), a("PING"), a("EXEC"),
		}},
		{"deleting a missing key does not", []txStep{
			a("WATCH", "k"), b("DEL", "k"), b("UNLINK", "k"), a("MULTI"), a("PING"), a("EXEC"),
		}},
		{"failed writes do not touch", []txStep{
			a("SET", "k", "abc"), a("RPUSH", "l", "x"), a("WATCH", "k", "l"),
			b("INCR", "k"), b("INCR", "l"), b("SETRANGE", "k", "0", ""), b("PERSIST", "k"), b("EXPIRE", "k", "10", "XX"),
			b("SETNX", "k", "x"), b("SET", "k", "x", "NX"), b("RENAMENX", "l", "k"), b("COPY", "l", "k"),
			a("MULTI"), a("GET", "k"), a("EXEC"),
		}},
		{"append of nothing touches", []txStep{a("SET", "k", "v"), a("WATCH", "k"), b("APPEND", "k", ""), a("MULTI"), a("EXEC")}},
		{"expire touches", []txStep{a("SET", "k", "v"), a("WATCH", "k"), b("EXPIRE", "k", "100"), a("MULTI"), a("EXEC")}},
		{"persist touches", []txStep{a("SET", "k", "v", "EX", "100"), a("WATCH", "k"), b("PERSIST", "k"), a("MULTI"), a("EXEC")}},
		{"rename from", []txStep{a("SET", "k", "v"), a("WATCH", "k"), b("RENAME", "k", "j"), a("MULTI"), a("EXEC")}},
		{"rename to", []txStep{a("SET", "j", "v"), a("WATCH", "k"), b("RENAME", "j", "k"), a("MULTI"), a("EXEC")}},
		{"move from", []txStep{a("SET", "k", "v"), a("WATCH", "k"), b("MOVE", "k", "1"), a("MULTI"), a("EXEC")}},
		{"move into", []txStep{
			a("SELECT", "1"), a("WATCH", "k"), a("SELECT", "0"), b("SET", "k", "v"), b("MOVE", "k", "1"), a("MULTI"), a("EXEC"),
		}},
		{"copy onto", []txStep{a("SET", "j", "v"), a("WATCH", "k"), b("COPY", "j", "k"), a("MULTI"), a("EXEC")}},
		{"copy from does not", []txStep{a("SET", "k", "v"), a("WATCH", "k"), b("COPY", "k", "j"), a("MULTI"), a("PING"), a("EXEC")}},
		{"flushall of a watched key", []txStep{a("SET", "k", "v"), a("WATCH", "k"), b("FLUSHALL"), a("MULTI"), a("EXEC")}},
		{"flushall of a missing key", []txStep{a("WATCH", "k"), b("FLUSHALL"), a("MULTI"), a("PING"), a("EXEC")}},
		{"flushdb of another database", []txStep{
			a("SET", "k", "v"), a("WATCH", "k"), b("SELECT", "1"), b("FLUSHDB"), a("MULTI"), a("PING"), a("EXEC"),
		}},
		{"flushdb of the watched database", []txStep{a("SET", "k", "v"), a("WATCH", "k"), b("FLUSHDB"), a("MULTI"), a("EXEC")}},
		{"swapdb, key in the other database", []txStep{
			b("SELECT", "1"), b("SET", "k", "v"), a("WATCH", "k"), b("SWAPDB", "0", "1"), a("MULTI"), a("EXEC"),
		}},
		{"swapdb, key in neither", []txStep{a("WATCH", "k"), b("SWAPDB", "0", "1"), a("MULTI"), a("PING"), a("EXEC")}},
		{"swapdb of other databases", []txStep{
			a("SET", "k", "v"), a("WATCH", "k"), b("SWAPDB", "1", "2"), a("MULTI"), a("PING"), a("EXEC"),
		}},
		{"past pexpireat deletes", []txStep{a("SET", "k", "v"), a("WATCH", "k"), b("PEXPIREAT", "k", "1"), a("MULTI"), a("EXEC")}},
		// Long enough that the key is still there at WATCH on both
		// servers however slow the machine between the two.
		{"expires after watch", []txStep{
			a("SET", "k", "v", "PX", "300"), a("WATCH", "k"), pause(400), a("MULTI"), a("PING"), a("EXEC"),
		}},
		{"expires after watch, read by another", []txStep{
			a("SET", "k", "v", "PX", "300"), a("WATCH", "k"), pause(400), b("GET", "k"), a("MULTI"), a("PING"), a("EXEC"),
		}},
		{"expired at watch", []txStep{
			a("SET", "k", "v", "PX", "5"), pause(30), a("WATCH", "k"), a("MULTI"), a("PING"), a("EXEC"),
		}},
		{"expired at watch, removed by a read", []txStep{
			a("SET", "k", "v", "PX", "5"), pause(30), a("WATCH", "k"), b("GET", "k"), a("MULTI"), a("PING"), a("EXEC"),
		}},
		{"expired at watch, then written", []txStep{
			a("SET", "k", "v", "PX", "5"), pause(30), a("WATCH", "k"), b("SET", "k", "w"), a("MULTI"), a("PING"), a("EXEC"),
		}},
		{"slimta lock, free", []txStep{
			a("WATCH", "id"), a("TTL", "id"), a("MULTI"), a("SETEX", "id", "120", "locked"), a("EXEC"), a("TTL", "id"),
		}},
		{"slimta lock, taken meanwhile", []txStep{
			a("WATCH", "id"), a("TTL", "id"), b("SETEX", "id", "120", "other"),
			a("MULTI"), a("SETEX", "id", "120", "locked"), a("EXEC"), a("GET", "id"),
		}},
		{"slimta lock, held", []txStep{
			b("SETEX", "id", "120", "other"), a("WATCH", "id"), a("TTL", "id"), a("UNWATCH"), a("GET", "id"),
		}},
		{"discard of a queued echo", []txStep{
			a("MULTI"), a("SET", "k", "v"), a("EXEC"), a("MULTI"), a("ECHO", "x"), a("DISCARD"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runTx(t, tt.steps)
		})
	}
}

// TestTransactionsCompetingLockers runs slimta's lock flow for several
// clients on one free key, on both servers: all WATCH it and read its
// TTL, then each tries SETEX in a transaction; exactly one per round
// wins, and every later EXEC answers the null array.
func TestTransactionsCompetingLockers(t *testing.T) {
	d := NewDiff(t)
	for _, srv := range []string{shared.z.Addr, shared.r.Addr} {
		const lockers = 4
		conns := make([]*Conn, lockers)
		for i := range conns {
			conns[i] = Dial(t, srv)
		}
		for round := 0; round < 20; round++ {
			key := "lock:" + string(rune('a'+round))
			for _, c := range conns {
				if r := c.Do("WATCH", key); r != "+OK\r\n" {
					t.Fatalf("WATCH: %q", r)
				}
				if r := c.Do("TTL", key); r != ":-2\r\n" {
					t.Fatalf("TTL: %q", r)
				}
			}
			won := 0
			for _, c := range conns {
				c.Do("MULTI")
				c.Do("SETEX", key, "120", "locked")
				switch r := c.Do("EXEC"); r {
				case "*1\r\n+OK\r\n":
					won++
				case "*-1\r\n":
				default:
					t.Fatalf("EXEC: %q", r)
				}
			}
			if won != 1 {
				t.Fatalf("round %d on %s: %d winners", round, srv, won)
			}
		}
	}
	_ = d
}

// monitorLine drops the time and the client address of a MONITOR line.
var monitorLine = regexp.MustCompile(`^\+\d+\.\d+ \[(\d+) [^\]]*\]`)

// TestTransactionsMonitor compares what MONITOR shows of transactions:
// MULTI, then the queued commands as EXEC runs them, then EXEC; an
// aborted EXEC alone.
func TestTransactionsMonitor(t *testing.T) {
	d := NewDiff(t)
	mz, mr := Dial(t, shared.z.Addr), Dial(t, shared.r.Addr)
	if z, r := mz.Do("MONITOR"), mr.Do("MONITOR"); z != r {
		t.Fatalf("MONITOR: %q vs %q", z, r)
	}
	steps := [][]string{
		{"MULTI"}, {"SET", "a", "1"}, {"SELECT", "2"}, {"GET", "a"}, {"EXEC"},
		{"MULTI"}, {"NOSUCH"}, {"EXEC"},
		{"WATCH", "a"}, {"SET", "a", "2"}, {"MULTI"}, {"PING"}, {"EXEC"}, {"UNWATCH"},
	}
	for _, s := range steps {
		d.Do(s...)
	}
	const lines = 12 // every step but NOSUCH and the PING of the aborted EXEC
	for i := 0; i < lines; i++ {
		z := monitorLine.ReplaceAllString(mz.Read(), "+T [$1]")
		r := monitorLine.ReplaceAllString(mr.Read(), "+T [$1]")
		diffCases.Add(1)
		if z != r {
			t.Errorf("MONITOR line %d:\n zredis: %q\n  redis: %q", i, z, r)
		}
	}
}

// TestTransactionsCommandStats compares INFO commandstats and errorstats
// after transactions that run, abort and refuse commands: queued commands
// count when EXEC runs them, rejected ones as rejected calls.
func TestTransactionsCommandStats(t *testing.T) {
	d := NewDiff(t)
	d.Do("CONFIG", "RESETSTAT")
	for _, s := range [][]string{
		{"MULTI"}, {"SET", "a", "1"}, {"EXEC"},
		{"MULTI"}, {"SET", "a"}, {"EXEC"},
		{"MULTI"}, {"SET", "a", "1"}, {"EXEC", "x"},
		{"MULTI"}, {"INCR", "nosuch", "x"}, {"SHUTDOWN"}, {"DISCARD"},
		{"SET", "s", "x"}, {"MULTI"}, {"INCR", "s"}, {"EXEC"},
	} {
		d.Do(s...)
	}
	usec := regexp.MustCompile(`usec(_per_call)?=[0-9.]+`)
	stats := func(c *Conn) string {
		raw := c.Do("INFO", "commandstats") + c.Do("INFO", "errorstats")
		var out []string
		for _, l := range strings.Split(raw, "\r\n") {
			if strings.HasPrefix(l, "cmdstat_") || strings.HasPrefix(l, "errorstat_") {
				out = append(out, usec.ReplaceAllString(l, "usec=X"))
			}
		}
		sort.Strings(out)
		return strings.Join(out, "\n")
	}
	z, r := stats(d.Z), stats(d.R)
	diffCases.Add(1)
	if z != r {
		t.Errorf("stats:\n zredis:\n%s\n redis:\n%s", z, r)
	}
}
