// Command recordrdb makes the reference RDB files of testdata/rdb/ and
// their JSON descriptions with a real redis-server: it starts the given
// redis-server on a free loopback port in a temporary directory, writes a
// dataset into it, SAVEs and copies dump.rdb to OUT.rdb; then it starts a
// second redis-server of the same binary on a copy of that file, lets it
// load and run its expiry for a moment, and writes what that server
// shows, key by key (internal/rdbref), to OUT.json.
// tests/rdb_reference_test.go loads each OUT.rdb into zredis and compares
// with OUT.json.
//
// Datasets:
//
//   - basic: every type and encoding (strings int/short/long, lists
//     listpack/quicklist, sets intset/listpack/hashtable, zsets
//     listpack/skiplist, hashes listpack/hashtable, a stream with consumer
//     groups and pending entries), keys with an expiry far in the future,
//     several databases.
//   - hfe (Redis 7.4 and later): hashes with field TTLs — small
//     (listpackex) and big (hashtable with metadata), some fields with a
//     TTL and some without, hashes whose TTLs were all removed again, and
//     hashes with fields whose TTL has already passed in the file (written
//     with active expiry off, so DEBUG must be allowed).
//
// All TTLs are absolute, from 4102444800000 (2100-01-01) on, so that the
// files stay valid.
//
// Usage, from the repository root:
//
//	go run ./scripts/recordrdb -server /path/to/7.2/redis-server -dataset basic -out testdata/rdb/redis-7.2.6
//	go run ./scripts/recordrdb -server /path/to/7.4/redis-server -dataset basic -out testdata/rdb/redis-7.4.1
//	go run ./scripts/recordrdb -server /path/to/7.4/redis-server -dataset hfe -out testdata/rdb/redis-7.4.1-hfe
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/zredis/zredis/internal/rdbref"
	"github.com/zredis/zredis/internal/replycase"
)

// T is 2100-01-01T00:00:00Z in milliseconds: the base of every TTL.
const T = 4102444800000

func main() {
	server := flag.String("server", "redis-server", "redis-server binary to run")
	dataset := flag.String("dataset", "basic", "dataset to write: basic or hfe")
	out := flag.String("out", "", "output path without extension: OUT.rdb and OUT.json are written")
	flag.Parse()
	if *out == "" {
		fatal(errors.New("-out is needed"))
	}
	gen, ok := datasets[*dataset]
	if !ok {
		fatal(fmt.Errorf("unknown dataset %q", *dataset))
	}
	if err := record(*server, *dataset, gen, *out); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "recordrdb:", err)
	os.Exit(1)
}

func record(bin, name string, gen func(*writer) []rdbref.Expired, out string) error {
	// 1. Write the dataset and save it.
	s1, err := start(bin, "")
	if err != nil {
		return err
	}
	w := &writer{c: s1.c}
	if _, err := w.do("FLUSHALL"); err != nil {
		s1.stop()
		return err
	}
	expired := gen(w)
	if w.err == nil {
		_, w.err = w.do("SAVE")
	}
	version := s1.version
	rdbPath := filepath.Join(s1.dir, "dump.rdb")
	if w.err == nil {
		w.err = copyFile(rdbPath, out+".rdb")
	}
	s1.stop()
	if w.err != nil {
		return w.err
	}

	// 2. Load it into a fresh server and describe what it shows.
	dir, err := os.MkdirTemp("", "recordrdb")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := copyFile(out+".rdb", filepath.Join(dir, "dump.rdb")); err != nil {
		return err
	}
	s2, err := start(bin, dir)
	if err != nil {
		return err
	}
	defer s2.stop()
	// Let active expiry remove what was already expired in the file.
	time.Sleep(2 * time.Second)
	opt := rdbref.Options{NoFieldTTL: !atLeast(version, 7, 4)}
	dbs, err := rdbref.Describe(s2.addr, opt)
	if err != nil {
		return err
	}
	hdr := make([]byte, 9)
	f, err := os.Open(out + ".rdb")
	if err != nil {
		return err
	}
	_, err = io.ReadFull(f, hdr)
	f.Close()
	if err != nil || string(hdr[:5]) != "REDIS" {
		return fmt.Errorf("%s.rdb: bad header %q", out, hdr)
	}
	rdbVersion, _ := strconv.Atoi(string(hdr[5:]))
	desc := &rdbref.File{
		Comment: fmt.Sprintf("What redis %s shows after loading %s (written by the same server from the %q dataset of "+
			"scripts/recordrdb): every key of every database; field_pexpiretime is HPEXPIRETIME of every field (-1: no TTL%s).",
			version, filepath.Base(out)+".rdb", name, map[bool]string{true: "; this server has no field TTLs, so all are -1", false: ""}[opt.NoFieldTTL]),
		Server:       "redis " + version,
		RDB:          filepath.Base(out) + ".rdb",
		RDBVersion:   rdbVersion,
		Dataset:      name,
		ExpiredInRDB: expired,
		DBs:          dbs,
	}
	for _, e := range expired {
		keys := dbs[strconv.Itoa(e.DB)]
		k, ok := keys[e.Key]
		if e.KeyGone {
			if ok {
				return fmt.Errorf("db %d key %q: expected gone after loading, is there", e.DB, e.Key)
			}
			continue
		}
		if !ok {
			return fmt.Errorf("db %d key %q: expected after loading, is not there", e.DB, e.Key)
		}
		for _, fld := range e.Fields {
			if _, there := k.FieldPExpireTime[fld]; there {
				return fmt.Errorf("db %d key %q field %q: expired in the file, still shown after loading", e.DB, e.Key, fld)
			}
		}
	}
	if err := os.WriteFile(out+".json", desc.Encode(), 0o644); err != nil {
		return err
	}
	n := 0
	for _, keys := range dbs {
		n += len(keys)
	}
	fmt.Printf("wrote %s.rdb (RDB version %d, redis %s) and %s.json: %d keys in %d databases\n",
		out, rdbVersion, version, out, n, len(dbs))
	return nil
}

// atLeast reports whether version (x.y.z) is at least major.minor.
func atLeast(version string, major, minor int) bool {
	p := strings.Split(version, ".")
	if len(p) < 2 {
		return false
	}
	x, _ := strconv.Atoi(p[0])
	y, _ := strconv.Atoi(p[1])
	return x > major || (x == major && y >= minor)
}

// ---- the server -------------------------------------------------------------

type server struct {
	cmd     *exec.Cmd
	dir     string
	ownDir  bool
	addr    string
	c       *replycase.Conn
	version string
}

// start runs bin on a free loopback port in dir (a new temporary
// directory when ""), without automatic saves, with DEBUG allowed from
// loopback, and connects to it.
func start(bin, dir string) (*server, error) {
	s := &server{dir: dir}
	if dir == "" {
		d, err := os.MkdirTemp("", "recordrdb")
		if err != nil {
			return nil, err
		}
		s.dir, s.ownDir = d, true
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	s.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s.cmd = exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", s.dir,
		"--dbfilename", "dump.rdb", "--save", "", "--appendonly", "no", "--enable-debug-command", "local",
		"--logfile", filepath.Join(s.dir, "server.log"))
	s.cmd.Dir = s.dir
	if err := s.cmd.Start(); err != nil {
		s.cleanup()
		return nil, err
	}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		c, err := replycase.Dial(s.addr)
		if err != nil {
			continue
		}
		r, err := c.Do("PING")
		if err != nil || r.Str != "PONG" { // LOADING while it reads the file
			c.Close()
			continue
		}
		s.c = c
		r, err = c.Do("INFO", "server")
		if err != nil {
			break
		}
		for _, line := range strings.Split(r.Str, "\r\n") {
			if v, ok := strings.CutPrefix(line, "redis_version:"); ok {
				s.version = v
			}
		}
		return s, nil
	}
	s.stop()
	return nil, fmt.Errorf("%s did not start on %s", bin, s.addr)
}

func (s *server) stop() {
	if s.c != nil {
		s.c.Close()
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cleanup()
}

func (s *server) cleanup() {
	if s.ownDir {
		os.RemoveAll(s.dir)
	}
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o644)
}

// ---- datasets ---------------------------------------------------------------

// writer sends commands and keeps the first error.
type writer struct {
	c   *replycase.Conn
	err error
}

func (w *writer) do(args ...string) (replycase.Reply, error) {
	if w.err != nil {
		return replycase.Reply{}, w.err
	}
	r, err := w.c.Do(args...)
	if err == nil && r.Type == replycase.Error {
		err = fmt.Errorf("%.200q: %s", args, r.Str)
	}
	w.err = err
	return r, err
}

// cmd sends a command built from strings and integers.
func (w *writer) cmd(args ...any) replycase.Reply {
	s := make([]string, 0, len(args))
	for _, a := range args {
		switch v := a.(type) {
		case string:
			s = append(s, v)
		case []string:
			s = append(s, v...)
		case int:
			s = append(s, strconv.Itoa(v))
		case int64:
			s = append(s, strconv.FormatInt(v, 10))
		default:
			panic(fmt.Sprintf("argument %v", a))
		}
	}
	r, _ := w.do(s...)
	return r
}

var datasets = map[string]func(*writer) []rdbref.Expired{
	"basic": basic,
	"hfe":   hfe,
}

// seq returns prefix0 ... prefix(n-1), or with values, prefix0 v0 ...
func seq(prefix string, n int, values bool) []string {
	var out []string
	for i := range n {
		out = append(out, prefix+strconv.Itoa(i))
		if values {
			out = append(out, "v"+strconv.Itoa(i))
		}
	}
	return out
}

// noise is n printable characters that LZF does not shrink much.
func noise(n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 1))
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = chars[r.IntN(len(chars))]
	}
	return string(b)
}

func basic(w *writer) []rdbref.Expired {
	w.cmd("SELECT", 0)
	// Strings.
	w.cmd("SET", "str:int", "12345")
	w.cmd("SET", "str:negint", "-42")
	w.cmd("SET", "str:int64", "9223372036854775807")
	w.cmd("SET", "str:notint", "007")
	w.cmd("SET", "str:short", "hello")
	w.cmd("SET", "str:empty", "")
	w.cmd("SET", "str:utf8", "héllo wörld ✓")
	w.cmd("SET", "str:long:lzf", strings.Repeat("abcdefgh", 1000))
	w.cmd("SET", "str:long:noise", noise(600, 1))
	w.cmd("SET", "str:ttl", "expires in 2100")
	w.cmd("PEXPIREAT", "str:ttl", T)
	// Lists.
	w.cmd("RPUSH", "list:small", "a", "b", "1", "-2", "", strings.Repeat("x", 100))
	var items []string
	for i := range 2000 {
		items = append(items, fmt.Sprintf("item:%d:%s", i, noise(20, uint64(i))))
	}
	w.cmd("RPUSH", "list:big", items)
	w.cmd("RPUSH", "list:ttl", "x", "y")
	w.cmd("PEXPIREAT", "list:ttl", T+1)
	// Sets.
	w.cmd("SADD", "set:intset", "1", "2", "3", "-5", "1000000", "9223372036854775807")
	var ints []string
	for i := range 300 {
		ints = append(ints, strconv.Itoa(i*7-1000))
	}
	w.cmd("SADD", "set:intset:big", ints)
	w.cmd("SADD", "set:small", "apple", "banana", "cherry", "1")
	w.cmd("SADD", "set:big", seq("member:", 600, false))
	w.cmd("SADD", "set:longmember", "a", strings.Repeat("m", 100))
	// Sorted sets.
	w.cmd("ZADD", "zset:small", "1", "a", "2.5", "b", "-3", "c", "+inf", "d", "-inf", "e", "0.1", "f")
	var zargs []string
	for i := range 300 {
		zargs = append(zargs, strconv.FormatFloat(float64(i)*1.5-100, 'f', -1, 64), "z:"+strconv.Itoa(i))
	}
	w.cmd("ZADD", "zset:big", zargs)
	w.cmd("ZADD", "zset:ttl", "1", "one")
	w.cmd("PEXPIREAT", "zset:ttl", T+2)
	// Hashes.
	w.cmd("HSET", "hash:small", "f1", "v1", "f2", "2", "f3", "")
	w.cmd("HSET", "hash:big", seq("field:", 600, true))
	w.cmd("HSET", "hash:longvalue", "short", "1", "long", strings.Repeat("v", 100))
	w.cmd("HSET", "hash:ttl", "a", "1")
	w.cmd("PEXPIREAT", "hash:ttl", T+3)
	// A stream with two consumer groups, pending entries and a deletion.
	for i := 1; i <= 10; i++ {
		w.cmd("XADD", "stream", fmt.Sprintf("%d-%d", 1700000000000+int64(i), i%3), "n", strconv.Itoa(i), "data", noise(10, uint64(100+i)))
	}
	w.cmd("XGROUP", "CREATE", "stream", "g1", "0")
	w.cmd("XREADGROUP", "GROUP", "g1", "alice", "COUNT", 3, "STREAMS", "stream", ">")
	w.cmd("XREADGROUP", "GROUP", "g1", "bob", "COUNT", 2, "STREAMS", "stream", ">")
	w.cmd("XACK", "stream", "g1", "1700000000001-1")
	w.cmd("XCLAIM", "stream", "g1", "bob", "0", "1700000000002-2")
	w.cmd("XGROUP", "CREATE", "stream", "g2", "$")
	w.cmd("XGROUP", "CREATECONSUMER", "stream", "g2", "carol")
	w.cmd("XDEL", "stream", "1700000000007-1")
	w.cmd("XADD", "stream:empty", "1-1", "a", "b")
	w.cmd("XDEL", "stream:empty", "1-1")
	w.cmd("XGROUP", "CREATE", "stream:empty", "g", "0")
	// Other databases.
	w.cmd("SELECT", 1)
	w.cmd("SET", "db1:str", "one")
	w.cmd("HSET", "db1:hash", "x", "1", "y", "2")
	w.cmd("PEXPIREAT", "db1:hash", T+4)
	w.cmd("SELECT", 5)
	w.cmd("ZADD", "db5:zset", "1", "a", "2", "b")
	w.cmd("SET", "db5:ttl", "v")
	w.cmd("PEXPIREAT", "db5:ttl", T+5)
	w.cmd("SELECT", 15)
	w.cmd("RPUSH", "db15:list", "last", "db")
	w.cmd("SELECT", 0)
	return nil
}

func hfe(w *writer) []rdbref.Expired {
	long := strings.Repeat("L", 100)
	w.cmd("SELECT", 0)
	// Baseline keys without field TTLs.
	w.cmd("SET", "plain:string", "s")
	w.cmd("HSET", "plain:hash", "a", "1", "b", "2")
	w.cmd("HSET", "plain:bighash", seq("f", 600, true))

	// listpackex: some fields with a TTL, some without.
	w.cmd("HSET", "hfe:lp:mixed", "a", "1", "b", "2", "c", "3", "d", "4", "e", "5", "f", "6")
	w.cmd("HPEXPIREAT", "hfe:lp:mixed", T+2, "FIELDS", 1, "d")
	w.cmd("HPEXPIREAT", "hfe:lp:mixed", T+1, "FIELDS", 1, "b")
	w.cmd("HPEXPIREAT", "hfe:lp:mixed", T+3, "FIELDS", 1, "f")
	// listpackex: every field with a TTL, two the same.
	w.cmd("HSET", "hfe:lp:all", "x", "10", "y", "20", "z", "30")
	w.cmd("HPEXPIREAT", "hfe:lp:all", T+5, "FIELDS", 2, "x", "z")
	w.cmd("HPEXPIREAT", "hfe:lp:all", T+4, "FIELDS", 1, "y")
	// listpackex whose TTLs were all removed again.
	w.cmd("HSET", "hfe:lp:persisted", "p", "1", "q", "2")
	w.cmd("HPEXPIREAT", "hfe:lp:persisted", T+6, "FIELDS", 2, "p", "q")
	w.cmd("HPERSIST", "hfe:lp:persisted", "FIELDS", 2, "p", "q")
	// listpackex with an integer value and an empty one.
	w.cmd("HSET", "hfe:lp:values", "int", "-123456789", "empty", "", "big", "9223372036854775807")
	w.cmd("HPEXPIREAT", "hfe:lp:values", T+7, "FIELDS", 2, "int", "empty")

	// Hashtables with metadata: over hash-max-listpack-entries (512),
	// every 7th field with its own TTL.
	w.cmd("HSET", "hfe:ht:mixed", seq("field:", 600, true))
	for i := 0; i < 600; i += 7 {
		w.cmd("HPEXPIREAT", "hfe:ht:mixed", T+10+int64(i), "FIELDS", 1, "field:"+strconv.Itoa(i))
	}
	// A hashtable because of a long value.
	w.cmd("HSET", "hfe:ht:longvalue", "a", "1", "long", long, "c", "3")
	w.cmd("HPEXPIREAT", "hfe:ht:longvalue", T+8, "FIELDS", 2, "long", "c")
	// A hashtable whose TTLs were all removed again.
	w.cmd("HSET", "hfe:ht:persisted", seq("f", 600, true))
	w.cmd("HPEXPIREAT", "hfe:ht:persisted", T+9, "FIELDS", 3, "f1", "f2", "f3")
	w.cmd("HPERSIST", "hfe:ht:persisted", "FIELDS", 3, "f1", "f2", "f3")
	// Field TTLs and a key TTL together.
	w.cmd("HSET", "hfe:lp:keyttl", "a", "1", "b", "2")
	w.cmd("HPEXPIREAT", "hfe:lp:keyttl", T+11, "FIELDS", 1, "a")
	w.cmd("PEXPIREAT", "hfe:lp:keyttl", T+100)
	w.cmd("HSET", "hfe:ht:keyttl", "a", "1", "long", long)
	w.cmd("HPEXPIREAT", "hfe:ht:keyttl", T+12, "FIELDS", 1, "long")
	w.cmd("PEXPIREAT", "hfe:ht:keyttl", T+101)
	// Another database.
	w.cmd("SELECT", 3)
	w.cmd("HSET", "hfe:db3", "k", "v", "k2", "v2")
	w.cmd("HPEXPIREAT", "hfe:db3", T+13, "FIELDS", 1, "k2")
	w.cmd("SELECT", 0)

	// Fields whose TTL has passed when the file is written: active
	// expiry off, a TTL of 1 ms, a pause, then SAVE (by the caller; the
	// server is stopped without active expiry being turned on again).
	w.cmd("DEBUG", "SET-ACTIVE-EXPIRE", 0)
	w.cmd("HSET", "hfe:past:lp", "live", "1", "gone", "2", "live2", "3", "gone2", "4")
	w.cmd("HPEXPIREAT", "hfe:past:lp", T+20, "FIELDS", 1, "live2")
	w.cmd("HSET", "hfe:past:ht", seq("f", 600, true))
	w.cmd("HPEXPIREAT", "hfe:past:ht", T+21, "FIELDS", 2, "f10", "f11")
	w.cmd("HSET", "hfe:past:all", "x", "1", "y", "2")
	w.cmd("HSET", "hfe:past:all:ht", "x", long)
	w.cmd("HPEXPIRE", "hfe:past:lp", 1, "FIELDS", 2, "gone", "gone2")
	w.cmd("HPEXPIRE", "hfe:past:ht", 1, "FIELDS", 3, "f1", "f2", "f3")
	w.cmd("HPEXPIRE", "hfe:past:all", 1, "FIELDS", 2, "x", "y")
	w.cmd("HPEXPIRE", "hfe:past:all:ht", 1, "FIELDS", 1, "x")
	time.Sleep(50 * time.Millisecond)
	return []rdbref.Expired{
		{DB: 0, Key: "hfe:past:lp", Fields: []string{"gone", "gone2"}},
		{DB: 0, Key: "hfe:past:ht", Fields: []string{"f1", "f2", "f3"}},
		{DB: 0, Key: "hfe:past:all", Fields: []string{"x", "y"}, KeyGone: true},
		{DB: 0, Key: "hfe:past:all:ht", Fields: []string{"x"}, KeyGone: true},
	}
}
