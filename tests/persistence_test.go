package tests

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// End-to-end persistence: RDB and AOF written by one server and read by
// the other (zredis and a real redis-server 7.0), SAVE/BGSAVE/SHUTDOWN,
// crashes under write load, and expiry across restarts.

// dataset renders every key of every database of the server at addr:
// type, value in a canonical order, and whether it has a TTL (the TTL
// itself, rounded to seconds, when long).
func dataset(t *testing.T, addr string) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	for db := 0; db < 16; db++ {
		c := redis.NewClient(&redis.Options{Addr: addr, DB: db, ReadTimeout: time.Minute})
		var cursor uint64
		for {
			keys, next, err := c.Scan(ctx, cursor, "*", 1000).Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range keys {
				out[fmt.Sprintf("%d/%q", db, k)] = describeKey(t, c, k)
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
		c.Close()
	}
	return out
}

func describeKey(t *testing.T, c *redis.Client, k string) string {
	t.Helper()
	ctx := context.Background()
	typ := c.Type(ctx, k).Val()
	var v string
	switch typ {
	case "string":
		v = strconv.Quote(c.Get(ctx, k).Val())
	case "list":
		v = fmt.Sprintf("%q", c.LRange(ctx, k, 0, -1).Val())
	case "set":
		m := c.SMembers(ctx, k).Val()
		sort.Strings(m)
		v = fmt.Sprintf("%q", m)
	case "zset":
		v = fmt.Sprintf("%v", c.ZRangeWithScores(ctx, k, 0, -1).Val())
	case "hash":
		h := c.HGetAll(ctx, k).Val()
		keys := make([]string, 0, len(h))
		for f := range h {
			keys = append(keys, f)
		}
		sort.Strings(keys)
		for _, f := range keys {
			v += fmt.Sprintf("%q=%q ", f, h[f])
		}
	}
	ttl := c.PTTL(ctx, k).Val()
	switch {
	case ttl < 0:
		v += " ttl:none"
	case ttl > time.Hour:
		v += " ttl:" + strconv.Itoa(int(ttl.Round(time.Minute)/time.Minute)) + "m"
	default:
		v += " ttl:yes"
	}
	return typ + " " + v
}

// fillDataset stores every type in small and large encodings, in
// several databases, with binary keys and values and deadlines.
func fillDataset(t *testing.T, addr string) {
	t.Helper()
	ctx := context.Background()
	for _, db := range []int{0, 3, 15} {
		c := redis.NewClient(&redis.Options{Addr: addr, DB: db})
		p := c.Pipeline()
		p.Set(ctx, "str", "value", 0)
		p.Set(ctx, "int", "12345", 0)
		p.Set(ctx, "neg", "-9223372036854775808", 0)
		p.Set(ctx, "bin\x00\xff", "v\x00\xff\r\n", 0)
		p.Set(ctx, "empty", "", 0)
		p.Set(ctx, "long", strings.Repeat("abcdefgh", 5000), 0) // LZF-compressible
		p.Set(ctx, "ttl", "x", 2*time.Hour)
		p.RPush(ctx, "lsmall", "a", "b", "1", "")
		for i := 0; i < 300; i++ {
			p.RPush(ctx, "lbig", strings.Repeat("x", i%70)+strconv.Itoa(i))
		}
		p.SAdd(ctx, "sint", 1, 2, 3, -5)
		p.SAdd(ctx, "sstr", "a", "b", "c")
		for i := 0; i < 700; i++ {
			p.SAdd(ctx, "sbig", "m"+strconv.Itoa(i))
			p.SAdd(ctx, "sintbig", i*3)
		}
		p.ZAdd(ctx, "zsmall", redis.Z{Score: 1.5, Member: "a"}, redis.Z{Score: -2, Member: "b"})
		for i := 0; i < 300; i++ {
			p.ZAdd(ctx, "zbig", redis.Z{Score: float64(i) / 3, Member: "m" + strconv.Itoa(i)})
		}
		p.ZAdd(ctx, "zinf", redis.Z{Score: math.Inf(1), Member: "inf"})
		p.HSet(ctx, "hsmall", "f", "v", "n", "1")
		for i := 0; i < 700; i++ {
			p.HSet(ctx, "hbig", "f"+strconv.Itoa(i), strconv.Itoa(i))
		}
		p.HSet(ctx, "httl", "f", "v")
		p.Expire(ctx, "httl", 3*time.Hour)
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
}

func requireSameDataset(t *testing.T, want, got map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("key %s:\n want %.300s\n got  %.300s", k, v, got[k])
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Fatalf("unexpected key %s", k)
		}
	}
}

// copyFile copies src to dst.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestRDBSaveAndRestart(t *testing.T) {
	dir := t.TempDir()
	z := StartZredis(t, "--dir", dir, "--save", "")
	fillDataset(t, z.Addr)
	want := dataset(t, z.Addr)
	c := Dial(t, z.Addr)
	if got := c.Do("SAVE"); got != "+OK\r\n" {
		t.Fatalf("SAVE: %q", got)
	}
	z.Stop()
	z2 := StartZredis(t, "--dir", dir, "--save", "")
	requireSameDataset(t, want, dataset(t, z2.Addr))
}

// zredis's dump.rdb loads in redis-server, and redis-check-rdb accepts it;
// redis-server's dump.rdb loads in zredis.
func TestRDBInterchangeWithRedis(t *testing.T) {
	zdir, rdir := t.TempDir(), t.TempDir()
	z := StartZredis(t, "--dir", zdir, "--save", "")
	fillDataset(t, z.Addr)
	want := dataset(t, z.Addr)
	if got := Dial(t, z.Addr).Do("SAVE"); got != "+OK\r\n" {
		t.Fatalf("SAVE: %q", got)
	}
	if out, err := exec.Command("redis-check-rdb", filepath.Join(zdir, "dump.rdb")).CombinedOutput(); err != nil {
		t.Fatalf("redis-check-rdb refuses zredis's file: %v\n%s", err, out)
	}
	copyFile(t, filepath.Join(zdir, "dump.rdb"), filepath.Join(rdir, "dump.rdb"))
	r := StartRedis(t, "--dir", rdir)
	requireSameDataset(t, want, dataset(t, r.Addr))

	// And back: redis saves, zredis loads.
	if got := Dial(t, r.Addr).Do("SAVE"); got != "+OK\r\n" {
		t.Fatalf("redis SAVE: %q", got)
	}
	zdir2 := t.TempDir()
	copyFile(t, filepath.Join(rdir, "dump.rdb"), filepath.Join(zdir2, "dump.rdb"))
	z2 := StartZredis(t, "--dir", zdir2, "--save", "")
	requireSameDataset(t, want, dataset(t, z2.Addr))
}

// BGSAVE writes a point-in-time view while writes go on.
func TestBGSAVEWhileWriting(t *testing.T) {
	dir := t.TempDir()
	z := StartZredis(t, "--dir", dir, "--save", "")
	ctx := context.Background()
	c := goRedis(t, z.Addr, 0)
	p := c.Pipeline()
	for i := 0; i < 50000; i++ {
		p.Set(ctx, "k:"+strconv.Itoa(i), "v"+strconv.Itoa(i), 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	ctl := Dial(t, z.Addr)
	before := ctl.Do("LASTSAVE")
	if got := ctl.Do("BGSAVE"); got != "+Background saving started\r\n" {
		t.Fatalf("BGSAVE: %q", got)
	}
	// Writes during the save change nothing in the file.
	for i := 0; i < 1000; i++ {
		c.Set(ctx, "k:"+strconv.Itoa(i), "changed", 0)
		c.Set(ctx, "new:"+strconv.Itoa(i), "x", 0)
	}
	waitInfo(t, ctl, "rdb_bgsave_in_progress", "0", 30*time.Second)
	if info := infoExpiry(t, ctl); info["rdb_last_bgsave_status"] != "ok" || info["rdb_saves"] != "1" {
		t.Fatalf("INFO persistence: %v", info)
	}
	if after := ctl.Do("LASTSAVE"); after < before { // same width: a Unix time
		t.Fatalf("LASTSAVE went back: %q before %q", after, before)
	}
	z.Stop()
	z2 := StartZredis(t, "--dir", dir, "--save", "")
	got := dataset(t, z2.Addr)
	// The file holds the dataset as of BGSAVE's reply: the snapshot is
	// taken before it, so no write made after the reply is in it.
	if len(got) != 50000 {
		t.Fatalf("%d keys after reload, want the 50000 of the snapshot", len(got))
	}
	for i := 0; i < 1000; i++ {
		if v := got[fmt.Sprintf("0/%q", "k:"+strconv.Itoa(i))]; strings.Contains(v, "changed") {
			t.Fatalf("k:%d holds a value written after BGSAVE: %s", i, v)
		}
	}
}

// With save points configured, SIGTERM saves; a key whose deadline passes
// while the server is down is expired right after loading and its expiry
// message, with its value, is sent.
func TestShutdownSavesAndExpiryAfterRestart(t *testing.T) {
	requirePythonZMQ(t)
	dir := t.TempDir()
	ep := zmqEndpoint(t)
	args := []string{"--dir", dir, "--save", "3600 1", "--expiry-zmq-endpoints", ep}
	z := StartZredis(t, args...)
	c := Dial(t, z.Addr)
	c.Do("SET", "keep", "v")
	c.Do("SET", "dies", "archived value", "PX", "700")
	c.Do("HSET", "hdies", "f", "v")
	c.Do("PEXPIRE", "hdies", "700")
	z.Stop() // SIGTERM: saves, as save points are set
	time.Sleep(time.Second)
	l := startListener(t, []string{ep})
	z2 := StartZredis(t, args...)
	got := l.recv(t, 2, 30*time.Second)
	seen := map[string]bool{}
	for _, d := range got {
		seen[msgKey(d)] = true
	}
	for _, want := range []string{
		`db=0 type=string key="dies" "archived value"`,
		`db=0 type=hash key="hdies" "f" "v"`,
	} {
		if !seen[want] {
			t.Fatalf("missing %s in %v", want, seen)
		}
	}
	if got := Dial(t, z2.Addr).Do("GET", "keep"); got != "$1\r\nv\r\n" {
		t.Fatalf("keep: %q", got)
	}
}

// DUMP and RESTORE produce and take Redis's serialization: a payload
// dumped by one server restores in the other.
func TestDumpRestoreInterchange(t *testing.T) {
	z := StartZredis(t)
	r := StartRedis(t)
	fillDataset(t, z.Addr)
	fillDataset(t, r.Addr)
	ctx := context.Background()
	zc, rc := goRedis(t, z.Addr, 0), goRedis(t, r.Addr, 0)
	for _, k := range []string{"str", "int", "long", "lsmall", "lbig", "sint", "sstr", "sbig", "zsmall", "zbig", "hsmall", "hbig", "bin\x00\xff", "empty"} {
		zp, err := zc.Dump(ctx, k).Result()
		if err != nil {
			t.Fatalf("zredis DUMP %q: %v", k, err)
		}
		rp, err := rc.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if err := rc.RestoreReplace(ctx, "from-z:"+k, 0, zp).Err(); err != nil {
			t.Fatalf("redis RESTORE of zredis's %q: %v", k, err)
		}
		if err := zc.RestoreReplace(ctx, "from-r:"+k, 0, rp).Err(); err != nil {
			t.Fatalf("zredis RESTORE of redis's %q: %v", k, err)
		}
		if a, b := describeKey(t, rc, "from-z:"+k), describeKey(t, rc, k); a != b {
			t.Fatalf("%q restored in redis: %s, want %s", k, a, b)
		}
		if a, b := describeKey(t, zc, "from-r:"+k), describeKey(t, zc, k); a != b {
			t.Fatalf("%q restored in zredis: %s, want %s", k, a, b)
		}
	}
	d := NewDiff(t)
	d.Do("SET", "k", "v")
	d.Do("RESTORE", "k", "0", "garbage")
	d.Do("RESTORE", "nokey", "0", "garbage")
	d.Do("RESTORE", "k", "x", "garbage")
	d.Do("RESTORE", "k", "-1", "garbage")
	d.Do("RESTORE", "k", "0", "garbage", "FOO")
	d.Do("DUMP", "nokey")
	// A relative TTL whose deadline wraps past int64 counts as already
	// expired: nothing is stored.
	payload, err := rc.Dump(ctx, "str").Result()
	if err != nil {
		t.Fatal(err)
	}
	d.Do("RESTORE", "huge", "9223372036854775807", payload)
	d.Do("PTTL", "huge")
	d.Do("RESTORE", "huge", "9223372036854775807", payload, "REPLACE")
	d.Do("EXISTS", "huge")
}

// appendfsync always: every acknowledged write survives a kill -9 at any
// moment, and nothing half-applied appears.
func TestAOFCrashUnderLoad(t *testing.T) {
	rounds := 20
	if testing.Short() {
		rounds = 3
	}
	checked, lost, lostWrites := crashRounds(t, "always", rounds)
	t.Logf("appendfsync always: %d rounds, %d acknowledged counters checked, %d behind (%d writes)", rounds, checked, lost, lostWrites)
	if lost != 0 {
		t.Fatalf("%d acknowledged counters lost writes", lost)
	}
}

// appendfsync everysec: replies go out once the write is in the kernel,
// as Redis writes the AOF before replying, so a kill -9 (the machine stays
// up) loses nothing acknowledged either; only a power loss may lose the
// last second.
func TestAOFCrashEverysec(t *testing.T) {
	checked, lost, lostWrites := crashRounds(t, "everysec", 5)
	t.Logf("appendfsync everysec: 5 rounds, %d acknowledged counters checked, %d behind (%d writes)", checked, lost, lostWrites)
	if lost != 0 {
		t.Fatalf("%d acknowledged counters lost writes", lost)
	}
}

// crashRounds runs rounds of: start zredis on the same AOF, check every
// counter acknowledged so far, have 50 clients INCR their own counter
// (half of them 8 at a time in a pipeline),
// kill -9 the server after 50-300 ms. It returns the counters checked,
// those found behind their acknowledged value, and by how many writes.
func crashRounds(t *testing.T, policy string, rounds int) (checked, lost int, lostWrites int64) {
	dir := t.TempDir()
	args := []string{"--dir", dir, "--save", "", "--appendonly", "yes", "--appendfsync", policy}
	acked := map[string]int64{} // counter key -> highest acknowledged INCR result
	for round := 0; round <= rounds; round++ {
		z := StartZredis(t, args...)
		ctx := context.Background()
		c := goRedis(t, z.Addr, 0)
		for k, v := range acked {
			got, err := c.Get(ctx, k).Int64()
			if err != nil && err != redis.Nil {
				t.Fatalf("round %d: GET %s: %v", round, k, err)
			}
			if got < v {
				lost++
				lostWrites += v - got
				acked[k] = got // what a client would see from now on
			}
			checked++
		}
		if round == rounds {
			break
		}
		var mu sync.Mutex
		var stop atomic.Bool
		var wg sync.WaitGroup
		for w := 0; w < 50; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				cl := redis.NewClient(&redis.Options{Addr: z.Addr, MaxRetries: -1})
				defer cl.Close()
				key := "ctr:" + strconv.Itoa(w)
				for !stop.Load() {
					var n int64
					var err error
					if w%2 == 0 {
						n, err = cl.Incr(ctx, key).Result()
					} else {
						// Half the clients pipeline 8 INCRs: their next
						// input arrives while replies wait for the AOF.
						var cmds []redis.Cmder
						cmds, err = cl.Pipelined(ctx, func(p redis.Pipeliner) error {
							for range 8 {
								p.Incr(ctx, key)
							}
							return nil
						})
						if err == nil {
							n = cmds[len(cmds)-1].(*redis.IntCmd).Val()
						}
					}
					if err != nil {
						return
					}
					mu.Lock()
					if n > acked[key] {
						acked[key] = n
					}
					mu.Unlock()
				}
			}(w)
		}
		time.Sleep(time.Duration(50+rand.IntN(250)) * time.Millisecond)
		z.Signal(syscall.SIGKILL) // kill -9, mid-write
		stop.Store(true)
		wg.Wait()
		<-z.Done()
	}
	return checked, lost, lostWrites
}

// zredis's AOF directory loads in redis-server and redis-check-aof accepts
// it; redis-server's loads in zredis.
func TestAOFInterchangeWithRedis(t *testing.T) {
	zdir := t.TempDir()
	args := []string{"--dir", zdir, "--save", "", "--appendonly", "yes"}
	z := StartZredis(t, args...)
	fillDataset(t, z.Addr)
	c := Dial(t, z.Addr)
	c.Do("MULTI")
	c.Do("INCRBYFLOAT", "f", "1.5")
	c.Do("SETEX", "setex", "3600", "v")
	c.Do("EXEC")
	want := dataset(t, z.Addr)
	z.Stop()
	manifest := filepath.Join(zdir, "appendonlydir", "appendonly.aof.manifest")
	if out, err := exec.Command("redis-check-aof", manifest).CombinedOutput(); err != nil {
		t.Fatalf("redis-check-aof refuses zredis's AOF: %v\n%s", err, out)
	}
	rdir := t.TempDir()
	if out, err := exec.Command("cp", "-r", filepath.Join(zdir, "appendonlydir"), rdir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	r := StartRedis(t, "--dir", rdir, "--appendonly", "yes")
	requireSameDataset(t, want, dataset(t, r.Addr))
	// And back: a directory redis wrote (after a rewrite too) loads in zredis.
	rc := Dial(t, r.Addr)
	rc.Do("SET", "after", "rewrite")
	rc.Do("BGREWRITEAOF")
	waitInfo(t, rc, "aof_rewrite_in_progress", "0", 30*time.Second)
	rc.Do("SET", "incr", "after")
	want = dataset(t, r.Addr)
	r.Stop()
	zdir2 := t.TempDir()
	if out, err := exec.Command("cp", "-r", filepath.Join(rdir, "appendonlydir"), zdir2).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	z2 := StartZredis(t, "--dir", zdir2, "--save", "", "--appendonly", "yes")
	requireSameDataset(t, want, dataset(t, z2.Addr))
}

// A background save that fails leaves the server up; with save points and
// stop-writes-on-bgsave-error (Redis's defaults) writes answer MISCONF
// until a save succeeds again. The failure is made with a directory in
// the way of dbfilename, which stops even root.
func TestFailedBGSAVEMisconf(t *testing.T) {
	dir := t.TempDir()
	z := StartZredis(t, "--dir", dir, "--save", "3600 1")
	c := Dial(t, z.Addr)
	if err := os.Mkdir(filepath.Join(dir, "dump.rdb"), 0o755); err != nil {
		t.Fatal(err)
	}
	c.Do("SET", "k", "v")
	if got := c.Do("BGSAVE"); got != "+Background saving started\r\n" {
		t.Fatalf("BGSAVE: %q", got)
	}
	waitInfo(t, c, "rdb_last_bgsave_status", "err", 30*time.Second)
	for _, cmd := range [][]string{{"SET", "k", "v2"}, {"PING"}} {
		if got := c.Do(cmd...); !strings.HasPrefix(got, "-MISCONF Redis is configured to save RDB snapshots") {
			t.Fatalf("%v after a failed save: %q", cmd, got)
		}
	}
	if got := c.Do("GET", "k"); got != "$1\r\nv\r\n" {
		t.Fatalf("GET: %q", got)
	}
	if err := os.Remove(filepath.Join(dir, "dump.rdb")); err != nil {
		t.Fatal(err)
	}
	c.Do("BGSAVE")
	waitInfo(t, c, "rdb_last_bgsave_status", "ok", 30*time.Second)
	if got := c.Do("SET", "k", "v3"); got != "+OK\r\n" {
		t.Fatalf("SET after a good save: %q", got)
	}
}

// The check tools, through zredis-server too, accept what zredis wrote.
func TestCheckToolsAcceptOurFiles(t *testing.T) {
	dir := t.TempDir()
	z := StartZredis(t, "--dir", dir, "--save", "", "--appendonly", "yes")
	fillDataset(t, z.Addr)
	if got := Dial(t, z.Addr).Do("SAVE"); got != "+OK\r\n" {
		t.Fatalf("SAVE: %q", got)
	}
	z.Stop()
	for _, args := range [][]string{
		{"--check-rdb", filepath.Join(dir, "dump.rdb")},
		{"--check-aof", filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest")},
	} {
		out, err := exec.Command(zredisBin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("zredis-server %v: %v\n%s", args, err, out)
		}
	}
}

// CONFIG SET appendfsync takes effect on a running server; writes go on
// being logged under each policy.
func TestConfigSetAppendfsync(t *testing.T) {
	dir := t.TempDir()
	z := StartZredis(t, "--dir", dir, "--save", "", "--appendonly", "yes", "--appendfsync", "everysec")
	c := Dial(t, z.Addr)
	for i, policy := range []string{"always", "no", "everysec", "always"} {
		if got := c.Do("CONFIG", "SET", "appendfsync", policy); got != "+OK\r\n" {
			t.Fatalf("CONFIG SET appendfsync %s: %q", policy, got)
		}
		if got := c.Do("SET", "k"+strconv.Itoa(i), policy); got != "+OK\r\n" {
			t.Fatalf("SET under %s: %q", policy, got)
		}
	}
	want := dataset(t, z.Addr)
	z.Stop()
	z2 := StartZredis(t, "--dir", dir, "--save", "", "--appendonly", "yes")
	requireSameDataset(t, want, dataset(t, z2.Addr))
}

// startOnFullDisk starts zredis with the AOF on under policy, its
// incremental file a link to /dev/full: every write to it fails (ENOSPC).
func startOnFullDisk(t *testing.T, policy string) *Proc {
	// A device of the machine (Linux has it), not a missing install: it
	// stays a skip under ZREDIS_TEST_REQUIRE_ALL.
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	dir := t.TempDir()
	args := []string{"--dir", dir, "--save", "", "--appendonly", "yes", "--appendfsync", policy}
	StartZredis(t, args...).Stop()
	incr := filepath.Join(dir, "appendonlydir", "appendonly.aof.1.incr.aof")
	if err := os.Remove(incr); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/full", incr); err != nil {
		t.Fatal(err)
	}
	return StartZredis(t, args...)
}

// A disk that refuses the AOF's writes (the incremental file made a link
// to /dev/full, where every write fails with ENOSPC) never takes the
// server down: writes answer MISCONF, reads go on, and it still shuts
// down when asked.
func TestAOFWriteFailureMisconf(t *testing.T) {
	z2 := startOnFullDisk(t, "everysec")
	c := Dial(t, z2.Addr)
	c.Do("SET", "a", "1") // its write fails; under everysec the reply goes out, as Redis's
	waitInfo(t, c, "aof_last_write_status", "err", 30*time.Second)
	if got := c.Do("SET", "b", "2"); !strings.HasPrefix(got, "-MISCONF Errors writing to the AOF file:") {
		t.Fatalf("SET with a failing AOF: %q", got)
	}
	if got := c.Do("GET", "a"); got != "$1\r\n1\r\n" {
		t.Fatalf("GET: %q", got)
	}
	z2.Stop()
	if code, ok := z2.Wait(30 * time.Second); !ok || code != 0 {
		t.Fatalf("exit %d (exited %v)", code, ok)
	}
}

// Under appendfsync always a write is acknowledged only once it is on
// disk. When the AOF cannot be written the server exits with status 1, as
// Redis 7.0 does ("Can't recover from AOF write error when the AOF fsync
// policy is 'always'. Exiting..."): the command already ran, and a retried
// write or fsync could report success after the kernel dropped the pages.
// The SET is never answered.
func TestAOFAlwaysWriteFailureExits(t *testing.T) {
	z2 := startOnFullDisk(t, "always")
	held := Dial(t, z2.Addr)
	held.Send(Encode("SET", "a", "1"))
	if got, err := held.ReadErr(10 * time.Second); err == nil {
		t.Fatalf("SET answered %q although the AOF cannot be written", got)
	}
	code, ok := z2.Wait(30 * time.Second)
	if !ok || code != 1 {
		t.Fatalf("exit %d (exited %v), want 1\n%s", code, ok, z2.Output())
	}
	if out := z2.Output(); !strings.Contains(out, "Can't recover from AOF write error when the AOF fsync policy is 'always'. Exiting...") {
		t.Fatalf("no exit reason in the log:\n%s", out)
	}
}

// CONFIG SET appendonly yes turns the AOF on while clients write, as
// Redis's does: a base from that instant plus every change after it, in a
// directory redis-server loads; appendonly no turns it off, and what was
// written after that is not in the AOF. An AOF directory from an earlier
// time is replaced, not loaded.
func TestConfigSetAppendonly(t *testing.T) {
	dir := t.TempDir()
	z := StartZredis(t, "--dir", dir, "--save", "", "--appendonly", "yes")
	Dial(t, z.Addr).Do("SET", "stale", "from an earlier AOF")
	z.Stop()

	z = StartZredis(t, "--dir", dir, "--save", "", "--appendonly", "no")
	fillDataset(t, z.Addr)
	c := Dial(t, z.Addr)
	c.Do("DEL", "stale")
	stop := make(chan struct{})
	var writes sync.WaitGroup
	writes.Add(1)
	go func() { // writes go on while the base is written
		defer writes.Done()
		w := goRedis(t, z.Addr, 2)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := w.Set(context.Background(), fmt.Sprint("during:", i%500), i, 0).Err(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	if got := c.Do("CONFIG", "SET", "appendonly", "yes"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET appendonly yes: %q", got)
	}
	waitInfo(t, c, "aof_rewrite_in_progress", "0", 30*time.Second)
	close(stop)
	writes.Wait()
	if got := infoExpiry(t, c)["aof_enabled"]; got != "1" {
		t.Fatalf("aof_enabled %q", got)
	}
	c.Do("HSET", "after:on", "f", "v")
	want := dataset(t, z.Addr)
	if got := c.Do("CONFIG", "SET", "appendonly", "no"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET appendonly no: %q", got)
	}
	c.Do("SET", "after:off", "not in the AOF")
	if got := infoExpiry(t, c)["aof_enabled"]; got != "0" {
		t.Fatalf("aof_enabled %q after appendonly no", got)
	}
	z.Stop()

	r := StartRedis(t, "--dir", dir, "--appendonly", "yes")
	requireSameDataset(t, want, dataset(t, r.Addr))
	r.Stop()
	z = StartZredis(t, "--dir", dir, "--save", "", "--appendonly", "yes")
	requireSameDataset(t, want, dataset(t, z.Addr))
}

// BGSAVE and BGREWRITEAOF inside MULTI are scheduled for after the
// transaction, and BGREWRITEAOF with the AOF off writes a directory with
// a base alone, as redis-server 7.0 does; both servers load it.
func TestScheduledSaveAndRewriteWithAOFOff(t *testing.T) {
	for _, name := range []string{"redis", "zredis"} {
		dir := t.TempDir()
		start := StartZredis
		if name == "redis" {
			start = StartRedis
		}
		p := start(t, "--dir", dir, "--save", "", "--appendonly", "no")
		c := Dial(t, p.Addr)
		c.Do("SET", "k", "v")
		c.Do("HSET", "h", "f", "v")
		c.Do("MULTI")
		c.Do("BGSAVE")
		c.Do("BGREWRITEAOF")
		if got := c.Do("EXEC"); got != "*2\r\n+Background saving scheduled\r\n+Background append only file rewriting scheduled\r\n" {
			t.Fatalf("%s: EXEC: %q", name, got)
		}
		deadline := time.Now().Add(30 * time.Second)
		manifest := filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest")
		for {
			info := infoExpiry(t, c)
			_, errRDB := os.Stat(filepath.Join(dir, "dump.rdb"))
			_, errAOF := os.Stat(manifest)
			if errRDB == nil && errAOF == nil && info["rdb_bgsave_in_progress"] == "0" && info["aof_rewrite_in_progress"] == "0" && info["aof_rewrite_scheduled"] == "0" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the scheduled save and rewrite did not happen", name)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if got := c.Do("BGREWRITEAOF"); got != "+Background append only file rewriting started\r\n" {
			t.Fatalf("%s: BGREWRITEAOF with the AOF off: %q", name, got)
		}
		waitInfo(t, c, "aof_rewrite_in_progress", "0", 30*time.Second)
		data, err := os.ReadFile(manifest)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(data); got != "file appendonly.aof.2.base.rdb seq 2 type b\n" {
			t.Fatalf("%s: manifest %q", name, got)
		}
		want := dataset(t, p.Addr)
		p.Stop()
		for _, loader := range []func(testing.TB, ...string) *Proc{StartRedis, StartZredis} {
			l := loader(t, "--dir", dir, "--save", "", "--appendonly", "yes")
			requireSameDataset(t, want, dataset(t, l.Addr))
			l.Stop()
		}
	}
}

// CONFIG SET appendonly flipped again and again while clients write under
// appendfsync always: no write hangs or fails (the first base of each
// turn-on runs while writes are held for the AOF), and the directory the
// last turn-on wrote loads with what was written up to its last
// turn-off.
func TestAppendonlyToggledUnderLoad(t *testing.T) {
	dir := t.TempDir()
	z := StartZredis(t, "--dir", dir, "--save", "", "--appendonly", "no", "--appendfsync", "always")
	ctx := context.Background()
	stop := make(chan struct{})
	var writers sync.WaitGroup
	for w := 0; w < 8; w++ {
		writers.Add(1)
		go func(w int) {
			defer writers.Done()
			cl := goRedis(t, z.Addr, 0)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := cl.Set(ctx, fmt.Sprintf("w%d:%d", w, i%200), i, 0).Err(); err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
			}
		}(w)
	}
	c := Dial(t, z.Addr)
	for round := 0; round < 10; round++ {
		if got := c.Do("CONFIG", "SET", "appendonly", "yes"); got != "+OK\r\n" {
			t.Fatalf("round %d: appendonly yes: %q", round, got)
		}
		waitInfo(t, c, "aof_rewrite_in_progress", "0", 30*time.Second)
		time.Sleep(20 * time.Millisecond)
		if round < 9 {
			if got := c.Do("CONFIG", "SET", "appendonly", "no"); got != "+OK\r\n" {
				t.Fatalf("round %d: appendonly no: %q", round, got)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	close(stop)
	writers.Wait()
	want := dataset(t, z.Addr)
	z.Stop()
	z = StartZredis(t, "--dir", dir, "--save", "", "--appendonly", "yes")
	requireSameDataset(t, want, dataset(t, z.Addr))
}

// CONFIG SET appendonly yes while a rewrite runs answers OK and turns the
// AOF on once the rewrite ends, as Redis schedules it: here yes, no, yes
// in a row, the second yes meeting the first one's base still being
// written.
func TestAppendonlyYesDuringRewrite(t *testing.T) {
	dir := t.TempDir()
	z := StartZredis(t, "--dir", dir, "--save", "", "--appendonly", "no")
	ctx := context.Background()
	cl := goRedis(t, z.Addr, 0)
	pipe := cl.Pipeline()
	for i := 0; i < 200000; i++ {
		pipe.Set(ctx, fmt.Sprint("k", i), i, 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	c := Dial(t, z.Addr)
	for _, v := range []string{"yes", "no", "yes"} {
		if got := c.Do("CONFIG", "SET", "appendonly", v); got != "+OK\r\n" {
			t.Fatalf("CONFIG SET appendonly %s: %q", v, got)
		}
	}
	if got := infoExpiry(t, c)["aof_enabled"]; got != "1" {
		t.Fatalf("aof_enabled %q right after", got)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !fileExists(filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest")) || infoExpiry(t, c)["aof_rewrite_in_progress"] != "0" {
		if time.Now().After(deadline) {
			t.Fatal("the AOF was not turned on")
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.Do("SET", "after", "on")
	z.Stop()
	z = StartZredis(t, "--dir", dir, "--save", "", "--appendonly", "yes")
	c = Dial(t, z.Addr)
	for cmd, want := range map[[2]string]string{
		{"DBSIZE", ""}:     ":200001\r\n",
		{"GET", "k199999"}: "$6\r\n199999\r\n",
		{"GET", "after"}:   "$2\r\non\r\n",
	} {
		args := []string{cmd[0]}
		if cmd[1] != "" {
			args = append(args, cmd[1])
		}
		if got := c.Do(args...); got != want {
			t.Fatalf("%v after the restart: %q, want %q", args, got, want)
		}
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// A write followed in the same pipeline by CONFIG SET appendonly no is
// answered only once the old AOF has it on disk (under always), as
// Redis's stopAppendOnly flushes and fsyncs first: on a disk that refuses
// the write, the SET is never acknowledged and its connection is closed.
func TestAppendonlyNoAfterWriteInOneBatch(t *testing.T) {
	z := startOnFullDisk(t, "always")
	c := Dial(t, z.Addr)
	c.Send(append(Encode("SET", "a", "1"), Encode("CONFIG", "SET", "appendonly", "no")...))
	if got, err := c.ReadErr(10 * time.Second); err == nil {
		t.Fatalf("SET answered %q although its AOF write failed", got)
	}
}
