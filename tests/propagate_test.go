package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zredis/zredis/internal/testsupport"
)

// End-to-end write propagation: the same commands sent to zredis and to
// a real redis-server 7.0, both writing their AOF with appendfsync
// always; after every step the commands the step added to zredis's
// incremental AOF file must be those redis-server added to its own (the
// deterministic, absolute forms: SET ... PXAT, PEXPIREAT, SREM for SPOP,
// LPOP for a served BLPOP, MULTI ... EXEC around several). The in-process
// differential (commands/propagate_test.go) covers expired keys, which
// both servers' active expiry would make time-dependent here.

// aofPropScript: "@block cmd..." sends a blocking command from a second
// client, "@served" reads its reply once a later step served it;
// "@random cmd..." has a random reply (SPOP).
var aofPropScript = [][]string{
	{"set", "k", "v"}, {"set", "k", "v", "ex", "100"}, {"set", "k", "v", "keepttl", "GET"},
	{"setex", "k", "1000", "v"}, {"psetex", "k", "500000", "w"}, {"getset", "k", "x"},
	{"getex", "k", "ex", "1000"}, {"getex", "k", "persist"}, {"getex", "k", "exat", "1"}, {"getdel", "k"},
	{"set", "k", "v"}, {"getdel", "k"}, {"incrbyfloat", "f", "1.5"}, {"hincrbyfloat", "h", "x", "0.25"},
	{"set", "e", "v"}, {"expire", "e", "100", "nx"}, {"pexpire", "e", "300000", "gt"},
	{"expireat", "e", "2000000000"}, {"pexpireat", "e", "2000000000001"}, {"persist", "e"},
	{"expire", "e", "-1"}, {"expire", "e", "10"},
	{"sadd", "s", "a"}, {"spop", "s"}, {"sadd", "s", "1", "2", "3", "4", "5", "6"}, {"@random", "spop", "s", "2"},
	{"@random", "spop", "s", "9"},
	{"rpush", "l", "a", "b", "c", "d", "e"}, {"lmpop", "1", "l", "left"}, {"blpop", "l", "0"},
	{"blmove", "l", "d", "RIGHT", "left", "0"}, {"blmpop", "0", "1", "l", "right", "count", "9"},
	{"ltrim", "d", "0", "-1"}, {"ltrim", "d", "1", "-1"},
	{"zadd", "z", "1", "a", "2", "b", "3", "c"}, {"zmpop", "1", "z", "max"}, {"bzpopmin", "z", "0"},
	{"@block", "blpop", "q1", "5"}, {"rpush", "q1", "x"}, {"@served"},
	{"@block", "blmove", "q2", "d2", "LEFT", "Right", "5"}, {"rpush", "q2", "x"}, {"@served"},
	{"@block", "bzmpop", "5", "1", "z2", "MAX", "COUNT", "5"}, {"zadd", "z2", "1", "a", "2", "b"}, {"@served"},
	{"multi"}, {"set", "t", "1"}, {"get", "t"}, {"exec"},
	{"multi"}, {"select", "3"}, {"set", "x", "1"}, {"select", "0"}, {"incr", "t"}, {"exec"},
	{"move", "t", "5"}, {"swapdb", "0", "1"}, {"flushdb"}, {"flushall"},
}

func TestAOFPropagationMatchesRedis(t *testing.T) {
	args := []string{"--appendonly", "yes", "--appendfsync", "always"}
	r := newAOFProp(t, StartRedis(t, args...))
	z := newAOFProp(t, StartZredis(t, args...))
	for i, step := range aofPropScript {
		name := fmt.Sprintf("step %d %q", i, step)
		random := false
		switch step[0] {
		case "@block":
			r.block(step[1:])
			z.block(step[1:])
			continue
		case "@served":
			if rr, zr := r.blocker.Read(), z.blocker.Read(); rr != zr {
				t.Fatalf("%s: blocked client's replies differ: redis %q, zredis %q", name, rr, zr)
			}
			continue
		case "@random":
			random = true
			step = step[1:]
		}
		rr, zr := r.main.Do(step...), z.main.Do(step...)
		if !random && rr != zr {
			t.Fatalf("%s: replies differ: redis %q, zredis %q", name, rr, zr)
		}
		ra, za := r.appended(), z.appended()
		if !testsupport.SamePropagation(ra, za) {
			t.Fatalf("%s:\nredis-server AOF: %q\nzredis AOF:       %q", name, ra, za)
		}
	}
}

// aofProp is a server writing an AOF, a client and a client for
// blocking commands.
type aofProp struct {
	t             *testing.T
	main, blocker *Conn
	aof           string // the incremental file
	consumed      int    // bytes of it already parsed
}

func newAOFProp(t *testing.T, p *Proc) *aofProp {
	t.Helper()
	a := &aofProp{t: t, main: Dial(t, p.Addr), blocker: Dial(t, p.Addr)}
	dir := filepath.Join(p.Dir, "appendonlydir")
	manifest, err := os.ReadFile(filepath.Join(dir, "appendonly.aof.manifest"))
	if err != nil {
		t.Fatalf("%s: %v", p.Name, err)
	}
	for _, line := range strings.Split(string(manifest), "\n") {
		if f := strings.Fields(line); len(f) == 6 && f[0] == "file" && f[5] == "i" {
			a.aof = filepath.Join(dir, f[1])
		}
	}
	if a.aof == "" {
		t.Fatalf("%s: no incremental file in the manifest:\n%s", p.Name, manifest)
	}
	return a
}

// block sends a blocking command from the second client and waits until
// the server counts it blocked.
func (a *aofProp) block(args []string) {
	a.t.Helper()
	a.blocker.Send(Encode(args...))
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if strings.Contains(a.main.Do("INFO", "clients"), "blocked_clients:1\r\n") {
			return
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("%q never blocked", args)
		}
	}
}

// appended parses the commands added to the AOF since the last call,
// one line each.
func (a *aofProp) appended() []string {
	a.t.Helper()
	data, err := os.ReadFile(a.aof)
	if err != nil {
		a.t.Fatal(err)
	}
	rd := bufio.NewReader(bytes.NewReader(data[a.consumed:]))
	out := []string{}
	for {
		args, err := aofPropRead(rd)
		if err == io.EOF {
			break
		}
		if err != nil {
			a.t.Fatalf("%s at byte %d: %v", a.aof, a.consumed, err)
		}
		out = append(out, strings.Join(args, " "))
	}
	a.consumed = len(data)
	return out
}

// aofPropRead reads one command (an array of bulk strings) of an AOF.
func aofPropRead(rd *bufio.Reader) ([]string, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(line, "*"), "\r\n"))
	if err != nil || line[0] != '*' {
		return nil, fmt.Errorf("not a command: %q", line)
	}
	args := make([]string, n)
	for i := range args {
		if line, err = rd.ReadString('\n'); err != nil {
			return nil, err
		}
		size, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(line, "$"), "\r\n"))
		if err != nil || line[0] != '$' || size < 0 {
			return nil, fmt.Errorf("not a bulk string: %q", line)
		}
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return nil, err
		}
		args[i] = string(buf[:size])
	}
	return args, nil
}

// TestLazyExpireWrapMatchesRedis: the DELs of keys a command expires
// lazily join its unit, wrapped in MULTI ... EXEC when it has more than
// one command, except for a command that touches arbitrary keys (SCAN,
// RANDOMKEY) sent at top level, whose DELs go out bare as active
// expiry's do (Redis 7.0.15 propagatePendingCommands; the Tcl suite's
// "SCAN/RANDOMKEY: Lazy-expire should not be wrapped in MULTI/EXEC").
// Inside an EXEC or a script they are wrapped again. Active expiry is
// off (DEBUG SET-ACTIVE-EXPIRE 0) so that the keys stay until a command
// meets them; which key SCAN meets first is the hash table's, so the
// DELs' keys are compared as a set.
func TestLazyExpireWrapMatchesRedis(t *testing.T) {
	args := []string{"--appendonly", "yes", "--appendfsync", "always", "--enable-debug-command", "yes"}
	r := newAOFProp(t, StartRedis(t, args...))
	z := newAOFProp(t, StartZredis(t, args...))
	for _, tc := range []struct {
		name string
		keys int        // expired keys foo1..fooN made before the run
		run  [][]string // the commands whose propagation is compared
	}{
		{"SCAN", 2, [][]string{{"scan", "0"}}},
		{"SCAN MATCH COUNT", 3, [][]string{{"scan", "0", "match", "foo*", "count", "100"}}},
		{"SCAN of one expired key", 1, [][]string{{"scan", "0"}}},
		// Keys the pattern leaves out are not expired (scanGenericCommand
		// filters by pattern first); TYPE does not matter.
		{"SCAN MATCH one of them", 3, [][]string{{"scan", "0", "match", "foo1"}}},
		{"SCAN MATCH none of them", 2, [][]string{{"scan", "0", "match", "bar*"}}},
		{"SCAN TYPE", 2, [][]string{{"scan", "0", "type", "hash"}}},
		{"SCAN MATCH TYPE", 3, [][]string{{"scan", "0", "match", "foo[12]", "type", "string"}}},
		{"RANDOMKEY", 2, [][]string{{"randomkey"}}},
		{"MGET", 2, [][]string{{"mget", "foo1", "foo2"}}},
		{"EXISTS", 2, [][]string{{"exists", "foo1", "foo2"}}},
		{"KEYS", 2, [][]string{{"keys", "*"}}},
		{"DBSIZE then SCAN", 2, [][]string{{"dbsize"}, {"scan", "0"}}},
		{"SCAN in a transaction", 2, [][]string{{"multi"}, {"scan", "0"}, {"exec"}}},
		{"RANDOMKEY in a transaction", 2, [][]string{{"multi"}, {"randomkey"}, {"exec"}}},
		{"SCAN in a script", 2, [][]string{{"eval", "return redis.call('scan', '0')[1]", "0"}}},
	} {
		var got [2][]string
		for i, p := range []*aofProp{r, z} {
			p.main.Do("DEBUG", "SET-ACTIVE-EXPIRE", "0")
			p.main.Do("FLUSHALL")
			for k := 1; k <= tc.keys; k++ {
				p.main.Do("SET", "foo"+strconv.Itoa(k), "bar", "PX", "1")
			}
			time.Sleep(5 * time.Millisecond)
			p.appended()
			for _, step := range tc.run {
				p.main.Do(step...)
			}
			got[i] = p.appended()
			p.main.Do("DEBUG", "SET-ACTIVE-EXPIRE", "1")
		}
		rs, rk := lazyDelShape(got[0])
		zs, zk := lazyDelShape(got[1])
		diffCases.Add(1)
		if !slices.Equal(rs, zs) || !slices.Equal(rk, zk) {
			t.Errorf("%s:\nredis-server AOF: %q\nzredis AOF:       %q", tc.name, got[0], got[1])
		}
	}
}

// lazyDelShape is a run of propagated commands with the keys of its
// DELs replaced by "*", and those keys, sorted.
func lazyDelShape(cmds []string) (shape, keys []string) {
	for _, c := range cmds {
		if k, ok := strings.CutPrefix(c, "DEL "); ok {
			keys = append(keys, k)
			c = "DEL *"
		}
		shape = append(shape, c)
	}
	slices.Sort(keys)
	return shape, keys
}
