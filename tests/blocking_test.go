package tests

import (
	"strings"
	"testing"
	"time"
)

// Blocking list and sorted-set commands: what is deterministic (answers
// when data is there, errors, short timeouts, MULTI) is compared with
// redis-server; waking is checked end to end on zredis.

func TestBlockingDiffImmediate(t *testing.T) {
	d := NewDiff(t)
	d.Do("RPUSH", "l1", "a", "b", "c")
	d.Do("RPUSH", "l2", "x")
	d.Do("BLPOP", "missing", "l1", "l2", "0")
	d.Do("BRPOP", "missing", "l1", "l2", "0")
	d.Do("BRPOP", "l2", "1")
	d.Do("EXISTS", "l2")
	d.Do("BLPOP", "l1", "l1", "0.5")
	d.Do("EXISTS", "l1")
	d.Do("RPUSH", "src", "1", "2", "3")
	d.Do("BLMOVE", "src", "dst", "LEFT", "RIGHT", "0")
	d.Do("BLMOVE", "src", "dst", "right", "left", "0")
	d.Do("BRPOPLPUSH", "src", "dst", "0")
	d.Do("EXISTS", "src")
	d.Do("LRANGE", "dst", "0", "-1")
	d.Do("BRPOPLPUSH", "dst", "dst", "0")
	d.Do("LRANGE", "dst", "0", "-1")
	d.Do("RPUSH", "m", "1", "2", "3", "4", "5")
	d.Do("BLMPOP", "0", "2", "nokey", "m", "LEFT")
	d.Do("BLMPOP", "0", "1", "m", "RIGHT", "COUNT", "2")
	d.Do("BLMPOP", "0", "1", "m", "left", "count", "10")
	d.Do("EXISTS", "m")
	d.Do("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d")
	d.Do("BZPOPMIN", "nokey", "z", "0")
	d.Do("BZPOPMAX", "z", "0")
	d.Do("BZMPOP", "0", "2", "nokey", "z", "MIN")
	d.Do("BZMPOP", "0", "1", "z", "max", "COUNT", "5")
	d.Do("EXISTS", "z")
	d.Do("ZADD", "z2", "1.5", "m")
	d.Do("BZPOPMIN", "z2", "0.01")
	d.Do("RPUSH", "t", "a")
	d.Do("BLPOP", "t", "-0.0001")
	d.Do("RPUSH", "t", "a")
	d.Do("BLPOP", "t", "1e15")
}

func TestBlockingDiffErrors(t *testing.T) {
	d := NewDiff(t)
	d.Do("SET", "s", "v")
	d.Do("RPUSH", "l", "a")
	d.Do("ZADD", "z", "1", "a")
	for _, args := range [][]string{
		{"BRPOP", "s", "l", "0"},
		{"BLPOP", "missing", "s", "l", "0"},
		{"BLPOP", "l"},
		{"BRPOPLPUSH", "s", "d", "0"},
		{"BRPOPLPUSH", "l", "s", "0"},
		{"BRPOPLPUSH", "l", "d", "x"},
		{"BLMOVE", "l", "d", "UP", "LEFT", "0"},
		{"BLMOVE", "l", "d", "LEFT", "DOWN", "0"},
		{"BLMOVE", "l", "d", "LEFT", "LEFT", "-2"},
		{"BLMOVE", "s", "d", "LEFT", "LEFT", "0"},
		{"BLMPOP", "x", "1", "l", "LEFT"},
		{"BLMPOP", "-1", "1", "l", "LEFT"},
		{"BLMPOP", "0", "0", "l", "LEFT"},
		{"BLMPOP", "0", "x", "l", "LEFT"},
		{"BLMPOP", "0", "2", "l", "LEFT"},
		{"BLMPOP", "0", "1", "l", "UP"},
		{"BLMPOP", "0", "1", "l", "LEFT", "COUNT", "0"},
		{"BLMPOP", "0", "1", "l", "LEFT", "COUNT"},
		{"BLMPOP", "0", "1", "l", "LEFT", "COUNT", "1", "COUNT", "1"},
		{"BLMPOP", "0", "1", "l", "LEFT", "foo"},
		{"BLMPOP", "0", "1", "s", "LEFT"},
		{"BLMPOP", "0", "1", "l"},
		{"BZPOPMIN", "s", "0"},
		{"BZPOPMAX", "z", "x"},
		{"BZPOPMIN", "l", "0"},
		{"BZPOPMAX", "z", "-0.5"},
		{"BZMPOP", "0", "1", "z", "MID"},
		{"BZMPOP", "0", "1", "z", "MIN", "COUNT", "-1"},
		{"BZMPOP", "0", "0", "z", "MIN"},
		{"BZMPOP", "-1", "1", "z", "MIN"},
		{"BZMPOP", "0", "5", "z", "MIN"},
		{"BZMPOP", "0", "1", "s", "MAX"},
	} {
		d.Do(args...)
	}
	// Timeouts: each parsed on a list holding data, so that an accepted
	// one answers at once.
	for _, v := range []string{"abc", "-1", "nan", "inf", "", "1e30", "-inf", "9223372036854775",
		"1e16", "1e20", " 1", "0x10", "0x1.8", "-0x1", "0x", "1.5", "-0.0001", "1e15", "+3", ".5"} {
		d.Do("RPUSH", "tl", "a")
		d.Do("BLPOP", "tl", v)
		d.Do("DEL", "tl")
	}
}

func TestBlockingDiffTimeout(t *testing.T) {
	d := NewDiff(t)
	d.Do("BLPOP", "q", "0.01")
	d.Do("BRPOP", "q1", "q2", "0.01")
	d.Do("BRPOPLPUSH", "q", "d", "0.01")
	d.Do("BLMOVE", "q", "d", "LEFT", "RIGHT", "0.01")
	d.Do("BLMPOP", "0.01", "2", "q", "q2", "LEFT")
	d.Do("BZPOPMIN", "z", "0.01")
	d.Do("BZPOPMAX", "z", "0.01")
	d.Do("BZMPOP", "0.01", "1", "z", "MIN", "COUNT", "2")
	d.Do("EXISTS", "q", "d", "z")
}

func TestBlockingDiffMulti(t *testing.T) {
	d := NewDiff(t)
	d.Do("MULTI")
	d.Do("BLPOP", "q", "0")
	d.Do("BRPOPLPUSH", "q", "d", "0")
	d.Do("BLMOVE", "q", "d", "LEFT", "LEFT", "0")
	d.Do("BLMPOP", "0", "1", "q", "LEFT")
	d.Do("BZPOPMIN", "z", "0")
	d.Do("BZMPOP", "0", "1", "z", "MAX")
	d.Do("RPUSH", "q", "a", "b")
	d.Do("BLPOP", "q", "0")
	d.Do("BLMOVE", "q", "d", "LEFT", "LEFT", "0")
	d.Do("EXEC")
	d.Do("LRANGE", "d", "0", "-1")
}

// ---- end to end -------------------------------------------------------------

// waitBlocked waits until INFO clients reports n blocked clients.
func waitBlocked(t *testing.T, c *Conn, n int) {
	t.Helper()
	want := "blocked_clients:" + itoa(n) + "\r"
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if strings.Contains(c.Do("INFO", "clients"), want) {
			return
		}
	}
	t.Fatalf("never saw %q", want)
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func TestBlockingWakeOrder(t *testing.T) {
	z := StartZredis(t)
	ctl := Dial(t, z.Addr)
	a, b := Dial(t, z.Addr), Dial(t, z.Addr)
	a.Send(Encode("BLPOP", "q", "0"))
	waitBlocked(t, ctl, 1)
	b.Send(Encode("BLPOP", "other", "q", "0"))
	waitBlocked(t, ctl, 2)
	if got := ctl.Do("RPUSH", "q", "x"); got != ":1\r\n" {
		t.Fatalf("RPUSH answered %q: the push must be counted before waking", got)
	}
	if got := a.Read(); got != "*2\r\n$1\r\nq\r\n$1\r\nx\r\n" {
		t.Fatalf("first waiter got %q", got)
	}
	waitBlocked(t, ctl, 1)
	ctl.Do("RPUSH", "q", "y", "z")
	if got := b.Read(); got != "*2\r\n$1\r\nq\r\n$1\r\ny\r\n" {
		t.Fatalf("second waiter got %q", got)
	}
	waitBlocked(t, ctl, 0)
	if got := ctl.Do("LRANGE", "q", "0", "-1"); got != "*1\r\n$1\r\nz\r\n" {
		t.Fatalf("list left %q", got)
	}
	// A blocked client goes on with its pipeline once served.
	a.Send(append(Encode("BRPOP", "q2", "0"), Encode("PING")...))
	waitBlocked(t, ctl, 1)
	ctl.Do("LPUSH", "q2", "v")
	if got := a.Read(); got != "*2\r\n$2\r\nq2\r\n$1\r\nv\r\n" {
		t.Fatalf("BRPOP got %q", got)
	}
	if got := a.Read(); got != "+PONG\r\n" {
		t.Fatalf("pipelined PING got %q", got)
	}
	if got := ctl.Do("EXISTS", "q2"); got != ":0\r\n" {
		t.Fatalf("emptied list kept: %q", got)
	}
}

func TestBlockingWakeAfterExec(t *testing.T) {
	z := StartZredis(t)
	ctl := Dial(t, z.Addr)
	a := Dial(t, z.Addr)
	a.Send(Encode("BLPOP", "q", "0"))
	waitBlocked(t, ctl, 1)
	ctl.Do("MULTI")
	ctl.Do("RPUSH", "q", "a")
	ctl.Do("LPOP", "q")
	ctl.Do("RPUSH", "q", "b", "c")
	if got := ctl.Do("EXEC"); got != "*3\r\n:1\r\n$1\r\na\r\n:2\r\n" {
		t.Fatalf("EXEC got %q", got)
	}
	if got := a.Read(); got != "*2\r\n$1\r\nq\r\n$1\r\nb\r\n" {
		t.Fatalf("waiter got %q, want the element left after EXEC", got)
	}
}

func TestBlockingDisconnect(t *testing.T) {
	z := StartZredis(t)
	ctl := Dial(t, z.Addr)
	a, b := Dial(t, z.Addr), Dial(t, z.Addr)
	a.Send(Encode("BLPOP", "q", "0"))
	waitBlocked(t, ctl, 1)
	b.Send(Encode("BLPOP", "q", "0"))
	waitBlocked(t, ctl, 2)
	a.nc.Close()
	waitBlocked(t, ctl, 1)
	ctl.Do("RPUSH", "q", "x")
	if got := b.Read(); got != "*2\r\n$1\r\nq\r\n$1\r\nx\r\n" {
		t.Fatalf("remaining waiter got %q", got)
	}
	waitBlocked(t, ctl, 0)
}

func TestBlockingClientUnblock(t *testing.T) {
	z := StartZredis(t)
	ctl := Dial(t, z.Addr)
	a := Dial(t, z.Addr)
	id := strings.TrimSpace(strings.TrimPrefix(a.Do("CLIENT", "ID"), ":"))
	if got := ctl.Do("CLIENT", "UNBLOCK", id); got != ":0\r\n" {
		t.Fatalf("unblocking a client not blocked: %q", got)
	}
	a.Send(Encode("BLPOP", "q", "0"))
	waitBlocked(t, ctl, 1)
	if got := ctl.Do("CLIENT", "LIST", "ID", id); !strings.Contains(got, "flags=b ") {
		t.Fatalf("CLIENT LIST: %q", got)
	}
	if got := ctl.Do("CLIENT", "UNBLOCK", id); got != ":1\r\n" {
		t.Fatalf("CLIENT UNBLOCK: %q", got)
	}
	if got := a.Read(); got != "*-1\r\n" {
		t.Fatalf("TIMEOUT unblock got %q", got)
	}
	a.Send(Encode("BZPOPMIN", "z", "0"))
	waitBlocked(t, ctl, 1)
	if got := ctl.Do("CLIENT", "UNBLOCK", id, "ERROR"); got != ":1\r\n" {
		t.Fatalf("CLIENT UNBLOCK ERROR: %q", got)
	}
	if got := a.Read(); got != "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n" {
		t.Fatalf("ERROR unblock got %q", got)
	}
	waitBlocked(t, ctl, 0)
	if got := a.Do("PING"); got != "+PONG\r\n" {
		t.Fatalf("after unblock: %q", got)
	}
	ctl.Do("RPUSH", "q", "x")
	if got := ctl.Do("LLEN", "q"); got != ":1\r\n" {
		t.Fatalf("an unblocked client still took an element: %q", got)
	}
}

func TestBlockingZset(t *testing.T) {
	z := StartZredis(t)
	ctl := Dial(t, z.Addr)
	a, b, m := Dial(t, z.Addr), Dial(t, z.Addr), Dial(t, z.Addr)
	a.Send(Encode("BZPOPMIN", "z", "0"))
	waitBlocked(t, ctl, 1)
	b.Send(Encode("BZPOPMAX", "z", "0"))
	waitBlocked(t, ctl, 2)
	m.Send(Encode("BZMPOP", "0", "1", "z", "MIN", "COUNT", "5"))
	waitBlocked(t, ctl, 3)
	ctl.Do("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d")
	if got := a.Read(); got != "*3\r\n$1\r\nz\r\n$1\r\na\r\n$1\r\n1\r\n" {
		t.Fatalf("BZPOPMIN got %q", got)
	}
	if got := b.Read(); got != "*3\r\n$1\r\nz\r\n$1\r\nd\r\n$1\r\n4\r\n" {
		t.Fatalf("BZPOPMAX got %q", got)
	}
	if got := m.Read(); got != "*2\r\n$1\r\nz\r\n*2\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n" {
		t.Fatalf("BZMPOP got %q", got)
	}
	if got := ctl.Do("EXISTS", "z"); got != ":0\r\n" {
		t.Fatalf("emptied zset kept: %q", got)
	}
	// ZUNIONSTORE into a key makes it ready too.
	a.Send(Encode("BZPOPMIN", "u", "0"))
	waitBlocked(t, ctl, 1)
	ctl.Do("ZADD", "src", "7", "m")
	ctl.Do("ZUNIONSTORE", "u", "1", "src")
	if got := a.Read(); got != "*3\r\n$1\r\nu\r\n$1\r\nm\r\n$1\r\n7\r\n" {
		t.Fatalf("BZPOPMIN after ZUNIONSTORE got %q", got)
	}
}

func TestBlockingMoveChain(t *testing.T) {
	z := StartZredis(t)
	ctl := Dial(t, z.Addr)
	a, b, c := Dial(t, z.Addr), Dial(t, z.Addr), Dial(t, z.Addr)
	c.Send(Encode("BLPOP", "l3", "0"))
	waitBlocked(t, ctl, 1)
	b.Send(Encode("BRPOPLPUSH", "l2", "l3", "0"))
	waitBlocked(t, ctl, 2)
	a.Send(Encode("BLMOVE", "l1", "l2", "LEFT", "RIGHT", "0"))
	waitBlocked(t, ctl, 3)
	ctl.Do("RPUSH", "l1", "v")
	if got := a.Read(); got != "$1\r\nv\r\n" {
		t.Fatalf("BLMOVE got %q", got)
	}
	if got := b.Read(); got != "$1\r\nv\r\n" {
		t.Fatalf("BRPOPLPUSH got %q", got)
	}
	if got := c.Read(); got != "*2\r\n$2\r\nl3\r\n$1\r\nv\r\n" {
		t.Fatalf("BLPOP got %q", got)
	}
	waitBlocked(t, ctl, 0)
	if got := ctl.Do("EXISTS", "l1", "l2", "l3"); got != ":0\r\n" {
		t.Fatalf("keys left: %q", got)
	}
	// Timeout on zredis itself.
	if got := a.Do("BLMPOP", "0.05", "1", "none", "LEFT"); got != "*-1\r\n" {
		t.Fatalf("BLMPOP timeout got %q", got)
	}
}

// A key that RENAME, MOVE or COPY creates wakes the clients blocked on it,
// as Redis's dbAdd signals every key it adds; the same sequence runs on
// both servers and must give the same replies.
func TestBlockingWakeByKeyCreation(t *testing.T) {
	servers := []*Proc{StartZredis(t), StartRedis(t)}
	var got [][]string
	for _, s := range servers {
		ctl, w := Dial(t, s.Addr), Dial(t, s.Addr)
		var replies []string
		step := func(blockCmd []string, prep [][]string) {
			w.Send(Encode(blockCmd...))
			waitBlocked(t, ctl, 1)
			for _, p := range prep {
				replies = append(replies, ctl.Do(p...))
			}
			replies = append(replies, w.Read())
		}
		step([]string{"BLPOP", "dst", "0"}, [][]string{{"RPUSH", "src", "a"}, {"RENAME", "src", "dst"}})
		step([]string{"BZPOPMIN", "zdst", "0"}, [][]string{{"ZADD", "zsrc", "1", "m"}, {"RENAMENX", "zsrc", "zdst"}})
		step([]string{"BRPOP", "moved", "0"}, [][]string{{"SELECT", "1"}, {"RPUSH", "moved", "b"}, {"MOVE", "moved", "0"}, {"SELECT", "0"}})
		step([]string{"BLPOP", "copy", "0"}, [][]string{{"RPUSH", "orig", "c"}, {"COPY", "orig", "copy"}})
		ctl.Do("SELECT", "2")
		ctl.Do("RPUSH", "orig2", "d")
		// COPY into another database wakes a client blocked there.
		w.Do("SELECT", "3")
		step([]string{"BLPOP", "c3", "0"}, [][]string{{"COPY", "orig2", "c3", "DB", "3"}})
		// SWAPDB gives database 3 a list its client waits for.
		ctl.Do("SELECT", "4")
		ctl.Do("RPUSH", "s4", "e")
		step([]string{"BRPOP", "s4", "0"}, [][]string{{"SWAPDB", "3", "4"}})
		got = append(got, replies)
	}
	want := []string{
		":1\r\n", "+OK\r\n", "*2\r\n$3\r\ndst\r\n$1\r\na\r\n",
		":1\r\n", ":1\r\n", "*3\r\n$4\r\nzdst\r\n$1\r\nm\r\n$1\r\n1\r\n",
		"+OK\r\n", ":1\r\n", ":1\r\n", "+OK\r\n", "*2\r\n$5\r\nmoved\r\n$1\r\nb\r\n",
		":1\r\n", ":1\r\n", "*2\r\n$4\r\ncopy\r\n$1\r\nc\r\n",
		":1\r\n", "*2\r\n$2\r\nc3\r\n$1\r\nd\r\n",
		"+OK\r\n", "*2\r\n$2\r\ns4\r\n$1\r\ne\r\n",
	}
	for i, g := range got {
		if strings.Join(g, "|") != strings.Join(want, "|") {
			t.Fatalf("server %d replies\n got %q\nwant %q", i, g, want)
		}
	}
}

// TestBlockingWakeBySwapDBDiff: SWAPDB serves the clients blocked on a
// key the swap brings into their database (dbSwapDatabases'
// scanDatabaseForReadyKeys), whatever they wait in (lists, sorted sets,
// streams), inside MULTI and scripts too; a key of another type leaves
// them blocked; and a consumer group's reader is unblocked with an error
// when the swap, FLUSHDB or FLUSHALL takes its stream away
// (scanDatabaseForDeletedStreams).
func TestBlockingWakeBySwapDBDiff(t *testing.T) {
	sameOnBoth(t, nil, func(t *testing.T, p *Proc) []string {
		ctl := Dial(t, p.Addr)
		var obs []string
		// blocked sends block (in database 9) after prep ran in database
		// 1 (and prep9 in 9), then runs trigger from database 9 and reads
		// the blocked client's reply, or "still blocked".
		blocked := func(block []string, prep, prep9 [][]string, trigger ...[]string) {
			t.Helper()
			ctl.Do("FLUSHALL")
			for _, in := range []struct {
				db   string
				cmds [][]string
			}{{"1", prep}, {"9", prep9}} {
				ctl.Do("SELECT", in.db)
				for _, c := range in.cmds {
					ctl.Do(c...)
				}
			}
			w := Dial(t, p.Addr)
			w.Do("SELECT", "9")
			w.Send(Encode(block...))
			waitBlocked(t, ctl, 1)
			for _, c := range trigger {
				obs = append(obs, ctl.Do(c...))
			}
			if out, err := w.ReadErr(500 * time.Millisecond); err == nil {
				obs = append(obs, out)
			} else {
				obs = append(obs, "still blocked")
				w.nc.Close()
				waitBlocked(t, ctl, 0)
			}
		}
		swap := []string{"SWAPDB", "1", "9"}
		list := [][]string{{"RPUSH", "k", "a"}}
		zset := [][]string{{"ZADD", "k", "1", "m"}}
		stream := [][]string{{"XADD", "k", "1-1", "f", "v"}}
		group := [][]string{{"XGROUP", "CREATE", "k", "g", "$", "MKSTREAM"}}
		blocked([]string{"BRPOP", "k", "0"}, list, nil, swap)
		blocked([]string{"BLMOVE", "k", "d", "LEFT", "RIGHT", "0"}, list, nil, swap)
		blocked([]string{"BLMPOP", "0", "1", "k", "LEFT"}, list, nil, swap)
		blocked([]string{"BZPOPMIN", "k", "0"}, zset, nil, swap)
		blocked([]string{"BZMPOP", "0", "1", "k", "MAX"}, zset, nil, swap)
		blocked([]string{"XREAD", "BLOCK", "0", "STREAMS", "k", "$"}, stream, nil, swap)
		blocked([]string{"BRPOP", "k", "0"}, [][]string{{"SET", "k", "x"}}, nil, swap)
		blocked([]string{"BRPOP", "k", "0"}, zset, nil, swap)
		blocked([]string{"BRPOP", "k", "0"}, list, nil, []string{"MULTI"}, swap, []string{"EXEC"})
		blocked([]string{"BRPOP", "k", "0"}, list, nil, []string{"MULTI"}, swap, swap, []string{"EXEC"})
		blocked([]string{"BRPOP", "k", "0"}, list, nil, []string{"EVAL", "return redis.call('SWAPDB', 1, 9)", "0"})
		// Consumer groups: the swap brings the stream without the group,
		// or takes the stream away; so do FLUSHDB and FLUSHALL.
		gread := []string{"XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "k", ">"}
		blocked(gread, stream, group, swap)
		blocked(gread, nil, group, swap)
		blocked(gread, [][]string{{"SET", "k", "x"}}, group, swap)
		blocked(gread, nil, group, []string{"SELECT", "9"}, []string{"FLUSHDB"}, []string{"SELECT", "0"})
		blocked(gread, nil, group, []string{"FLUSHALL"})
		return obs
	})
}

// TestBlockingWakeByAnyKeyCreationDiff: every command that creates a key
// wakes the clients blocked on it, as Redis's dbAdd does (SORT ... STORE,
// RESTORE, Z*STORE, a script); a key that expired inside the transaction
// that pushed it is not served, since each waiter is served at its own
// time; and a served BLMOVE's write invalidates the keys its client and
// others track.
func TestBlockingWakeByAnyKeyCreationDiff(t *testing.T) {
	sameOnBoth(t, []string{"--enable-debug-command", "yes"}, func(t *testing.T, p *Proc) []string {
		ctl := Dial(t, p.Addr)
		var obs []string
		blocked := func(block []string, trigger ...[]string) {
			t.Helper()
			w := Dial(t, p.Addr)
			w.Send(Encode(block...))
			waitBlocked(t, ctl, 1)
			for _, c := range trigger {
				obs = append(obs, ctl.Do(c...))
			}
			if out, err := w.ReadErr(500 * time.Millisecond); err == nil {
				obs = append(obs, out)
			} else {
				obs = append(obs, "still blocked")
				w.nc.Close()
				waitBlocked(t, ctl, 0)
			}
		}
		ctl.Do("RPUSH", "src", "3", "1", "2")
		blocked([]string{"BLPOP", "sorted", "0"}, []string{"SORT", "src", "STORE", "sorted"})
		ctl.Do("RPUSH", "l", "x")
		payload := ctl.Do("DUMP", "l")
		dump := payload[strings.Index(payload, "\r\n")+2 : len(payload)-2]
		blocked([]string{"BRPOP", "restored", "0"}, []string{"RESTORE", "restored", "0", dump})
		ctl.Do("ZADD", "z1", "1", "a")
		blocked([]string{"BZPOPMIN", "zu", "0"}, []string{"ZUNIONSTORE", "zu", "1", "z1"})
		blocked([]string{"BLPOP", "scripted", "0"}, []string{"EVAL", "return redis.call('RPUSH', KEYS[1], 'v')", "1", "scripted"})
		blocked([]string{"BRPOP", "k", "0"}, []string{"MULTI"}, []string{"RPUSH", "k", "hello"},
			[]string{"PEXPIRE", "k", "100"}, []string{"DEBUG", "SLEEP", "0.2"}, []string{"EXEC"})

		// A served BLMOVE writes its destination: its client (RESP3,
		// tracking it) and another tracker are told.
		ctl.Do("DEL", "src", "dst")
		tr := Dial(t, p.Addr)
		tr.Do("HELLO", "3")
		tr.Do("CLIENT", "TRACKING", "on")
		tr.Do("LRANGE", "dst", "0", "-1")
		w := Dial(t, p.Addr)
		w.Do("HELLO", "3")
		w.Do("CLIENT", "TRACKING", "on")
		w.Do("LRANGE", "dst", "0", "-1")
		w.Send(Encode("BLMOVE", "src", "dst", "LEFT", "LEFT", "0"))
		waitBlocked(t, ctl, 1)
		obs = append(obs, ctl.Do("RPUSH", "src", "foo"))
		obs = append(obs, w.Read(), w.Read())
		obs = append(obs, tr.Do("PING"))
		return obs
	})
}

// CLIENT PAUSE WRITE holds what may replicate: PUBLISH and SPUBLISH
// (may_replicate, hidden from COMMAND), and an EXEC whose queue holds a
// script that may write (its shebang's flags, as MULTI accumulates
// getCommandFlags); a read-only script's EXEC runs.
func TestPauseWriteHoldsMayReplicateDiff(t *testing.T) {
	sameOnBoth(t, nil, func(t *testing.T, p *Proc) []string {
		ctl := Dial(t, p.Addr)
		var obs []string
		check := func(prep [][]string, cmd []string) {
			t.Helper()
			w := Dial(t, p.Addr)
			for _, c := range prep {
				obs = append(obs, w.Do(c...))
			}
			ctl.Do("CLIENT", "PAUSE", "60000", "WRITE")
			w.Send(Encode(cmd...))
			if out, err := w.ReadErr(300 * time.Millisecond); err == nil {
				obs = append(obs, "ran: "+out)
			} else {
				obs = append(obs, "held", infoField(t, ctl, "clients", "blocked_clients"))
			}
			held := !strings.HasPrefix(obs[len(obs)-1], "ran: ")
			ctl.Do("CLIENT", "UNPAUSE")
			if held {
				obs = append(obs, w.Read())
			}
		}
		check(nil, []string{"PUBLISH", "ch", "m"})
		check(nil, []string{"SPUBLISH", "ch", "m"})
		check([][]string{{"MULTI"}, {"EVAL", "#!lua\nreturn 12", "0"}}, []string{"EXEC"})
		check([][]string{{"MULTI"}, {"EVAL", "#!lua flags=no-writes\nreturn 13", "0"}}, []string{"EXEC"})
		return obs
	})
}
