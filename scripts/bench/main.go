// Command bench runs redis-benchmark against zredis-server and a real
// redis-server side by side and prints, per test, value size and
// pipeline depth, the median throughput and p99 latency of each and
// their ratios; with -valkey a valkey-server (8.0) runs beside them as a
// third server.
//
// Both servers listen on free loopback ports, each in its own temporary
// directory, and run for the whole benchmark; the runs alternate between
// them (zredis, redis, zredis, redis, ...) so that drift in the machine's
// load affects both alike. Each round runs every (pipeline, size, test)
// triple once on each server; a ratio is taken per round from the two
// adjacent runs, and the table shows the median over the rounds. Tests
// put their keys into a fixed state before every run (setup.go). With
// -valkey the runs go zredis, redis, valkey, and every cell has the
// ratios zredis/valkey next to zredis/redis.
//
// Then, each on fresh servers and each skipped by its flag: the RSS per
// element of nine shapes loaded with redis-cli --pipe (memory.go), SET
// with one replica attached (replica.go), the AOF and BGSAVE parts
// (persist.go), SET under eviction (evict.go), TLS (tls.go), 10 MB and
// 100 MB values (bigvalues.go), the expiry lag (lag.go), the stress
// cases: abusive clients, a huge multibulk, a subscriber that never
// reads, 10,000 idle connections (stress.go), and the hash field TTLs of
// Redis 7.4 and 8.0: the throughput of HEXPIRE and its kin
// (fieldttl.go) and the lag of field expiry (fieldlag.go). The
// redis-server next to zredis is 7.0, which has no field TTLs: those two
// parts measure zredis alone, and a redis-server 7.4 next to it when
// -redis74 names one. Every part adds its figures to one closing table,
// also written as CSV and drawn as an SVG bar chart of the ratios
// (summary.go). With -against-self a second redis-server stands in for
// zredis: the ratios then show the harness's own noise. Of the parts
// after the grid the memory and stress parts measure the -valkey server
// too.
//
// -io-threads N (N > 1) starts every server with N I/O threads (the
// main thread counted, as their io-threads is; zredis's N event loops) and
// runs N redis-benchmark processes at once against every server, each
// with its share of the clients and requests, so that one client thread
// does not bound a threaded server (processes, not redis-benchmark
// --threads N, whose rps is rounded: see benchProcs).
//
// It builds nothing: `make bench` builds bin/zredis-server first.
//
//	go run ./scripts/bench [-rounds 3] [-n 0] [-clients 50] [-quick]
//	    [-tests all|none|set,get,...] [-sizes 3,1024] [-memn 1000000]
//	    [-memory=false] [-replica=false] [-persist=false] [-evict=false]
//	    [-tls=false] [-bigvalues=false] [-lag=false]
//	    [-fieldttl=false] [-fieldlag=false] [-redis74 path/to/redis-server]
//	    [-stress=false] [-stress-cases abusive,huge,non-reading,idle]
//	    [-valkey path/to/valkey-server] [-io-threads 2]
//	    [-csv bench-out/bench.csv] [-svg bench-out/bench.svg] [-against-self]
package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha1"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// keyspaceSize is redis-benchmark's -r: keys are spread over this many
// random names, which GET's and EXPIRE's setup fills (fillKeys), and the
// keyspace stays small.
const keyspaceSize = 100000

// test is one redis-benchmark workload, run once per value size (-sizes).
type test struct {
	name string
	// args returns the redis-benchmark arguments that select the test
	// with values of size bytes: -d for redis-benchmark's own tests, a
	// literal value for a command given on the command line (7.0's
	// redis-benchmark has no __data__ placeholder there).
	args func(size int) []string
	// setup, when set, prepares the test's keys on a server before each
	// run of n requests with values of size bytes (see setup.go); it is
	// not timed.
	setup func(rc *rconn, n, size int) error
}

// builtin selects redis-benchmark's own test t, whose values are -d bytes.
func builtin(t string) func(int) []string {
	return func(size int) []string { return []string{"-t", t, "-d", strconv.Itoa(size)} }
}

// command is a command line for redis-benchmark; "$value" in args is
// replaced by a value of the run's size and "$member" by member(size).
func command(args ...string) func(int) []string {
	return func(size int) []string {
		out := make([]string, len(args))
		for i, a := range args {
			switch a {
			case "$value":
				a = value(size)
			case "$member":
				a = member(size)
			}
			out[i] = a
		}
		return out
	}
}

// fixed is a test's arguments that do not depend on the value size.
func fixed(args ...string) func(int) []string {
	return func(int) []string { return args }
}

// value is a value of size bytes, "xxx" at redis-benchmark's default 3.
func value(size int) string { return strings.Repeat("x", size) }

// member is a set or sorted-set member for a run with values of size
// bytes: redis-benchmark's own element:__rand_int__ (20 bytes once the
// placeholder is replaced) up to that size, padded to size beyond it.
func member(size int) string {
	const m = "element:__rand_int__"
	const replaced = len("element:") + 12
	if size <= replaced {
		return m
	}
	return m + strings.Repeat("x", size-replaced)
}

var tests = []test{
	{"SET", builtin("set"), nil},
	{"GET", builtin("get"), fillKeys},
	{"INCR", builtin("incr"), nil},
	{"MSET (10 keys)", builtin("mset"), nil},
	{"SETEX", command("SETEX", "key:__rand_int__", "100", "$value"), nil},
	{"EXPIRE", command("EXPIRE", "key:__rand_int__", "100"), fillKeys},
	{"SADD", command("SADD", "myset", "$member"), delKey("myset")},
	{"ZADD", command("ZADD", "myzset", "__rand_int__", "$member"), delKey("myzset")},
	{"HSET", builtin("hset"), delKey("myhash")},
	{"LPUSH", builtin("lpush"), delKey("mylist")},
	{"RPOP", builtin("rpop"), fillList},
	{"ZRANGEBYSCORE", command("ZRANGEBYSCORE", "myzset", "0", "1000", "LIMIT", "0", "10"), fillZset},
	{"HGETALL (10 f)", command("HGETALL", "myhash"), fillHash},
	{"EVALSHA (rate limit)", command("EVALSHA", rateLimitSHA, "1", "ratelimit:__rand_int__"), loadScript(rateLimitScript)},
	{"XADD", command("XADD", "mystream", "*", "field", "$value"), delKey("mystream")},
	{"XREADGROUP (COUNT 1)", command("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "mystream", ">"), fillStream},
	{"SETBIT", command("SETBIT", "bits:__rand_int__", "100", "1"), nil},
	{"BITCOUNT (1 kB)", command("BITCOUNT", "mybits"), fillBits},
	{"PFADD", command("PFADD", "myhll", "$member"), delKey("myhll")},
	{"PFCOUNT (10k)", command("PFCOUNT", "myhll"), fillHLL},
	{"GEOSEARCH (10 km, 10)", command("GEOSEARCH", "mygeo", "FROMLONLAT", "13.36", "38.11", "BYRADIUS", "10", "km", "ASC", "COUNT", "10"), fillGeo},
}

// rateLimitScript is a small script of the kind mail stacks run with
// EVALSHA: a counter per key that starts a window when it is new.
const rateLimitScript = "local n = redis.call('INCR', KEYS[1]) if n == 1 then redis.call('EXPIRE', KEYS[1], 60) end return n"

var rateLimitSHA = func() string {
	sum := sha1.Sum([]byte(rateLimitScript))
	return hex.EncodeToString(sum[:])
}()

// testKeys are the names -tests knows, in the table's order.
func testKeys() []string {
	var names []string
	for _, t := range tests {
		names = append(names, testKey(t))
	}
	return names
}

// testKey is the name -tests matches: the test name's first word,
// lower-cased ("mset" for "MSET (10 keys)").
func testKey(t test) string {
	k, _, _ := strings.Cut(t.name, " ")
	return strings.ToLower(k)
}

// selectTests returns the tests named in spec (comma-separated, case-
// insensitive, see testKey) in the table's order; "all" selects every
// test and "" or "none" none.
func selectTests(spec string) ([]test, error) {
	spec = strings.TrimSpace(strings.ToLower(spec))
	switch spec {
	case "all":
		return tests, nil
	case "", "none":
		return nil, nil
	}
	want := map[string]bool{}
	for _, n := range strings.Split(spec, ",") {
		want[strings.TrimSpace(n)] = true
	}
	var out []test
	for _, t := range tests {
		if want[testKey(t)] {
			out = append(out, t)
			delete(want, testKey(t))
		}
	}
	if len(want) > 0 {
		var unknown []string
		for n := range want {
			unknown = append(unknown, n)
		}
		sort.Strings(unknown)
		return nil, fmt.Errorf("unknown test(s) %s; known: %s", strings.Join(unknown, ","), strings.Join(testKeys(), ","))
	}
	return out, nil
}

type options struct {
	rounds    int
	n         int
	clients   int
	pipelines []int
	sizes     []int // value bytes of the throughput tests
	tests     []test
	memory    bool
	memN      int // elements per memory shape
	lag       bool
	// journal is the expiry journal's cost (journal.go); journalBaseline
	// an earlier zredis build measured beside it.
	journal         bool
	journalBaseline string
	fieldTTL        bool // HEXPIRE and kin under redis-benchmark (fieldttl.go)
	fieldLag        bool // the lag of hash field expiry (fieldlag.go)
	persist         bool
	bgsave          bool
	bigValues       bool
	evict           bool
	tls             bool
	replica         bool
	stress          bool   // abusive clients, huge requests, slow subscribers, idle connections (stress.go)
	stressCases     string // the stress cases to run: names' first words, comma-separated ("": all)
	memShapes       string // the memory shapes to load: names with hyphens, comma-separated ("": all)
	target          time.Duration
	// settle is how long a server must have used no CPU after a test's
	// setup and after a run before the run's CPU is read and the next
	// run starts (see settle).
	settle    time.Duration
	zredisBin string
	redisBin  string
	// redis74Bin is a redis-server 7.4 for the field-TTL parts, which
	// 7.0 (redisBin) cannot run; "" leaves zredis alone there.
	redis74Bin string
	redis74Ver [2]int // its major and minor version, 7.4 or later
	benchBin   string
	cliBin     string
	// valkeyBin is a valkey-server measured as a third server in the
	// throughput grid and the memory part; "" leaves it out.
	valkeyBin string
	// self is set when the binary in zredis's place is a redis-server
	// (-against-self): the run then shows the harness's noise floor.
	self bool
	sum  *summaryTable // the closing table every part adds its figures to
}

// ioThreads is -io-threads: above 1, the I/O threads of every server
// (zredis's event loops) and the redis-benchmark processes of a run. It is set once, before any server starts, and read where every
// part starts its servers and runs its benchmarks (startServerIn,
// benchProcs), which then need no options passed down.
var ioThreads int

// result is one redis-benchmark run.
type result struct {
	rps       float64
	p50, p99  float64 // milliseconds
	cpuPerReq float64 // server CPU time per request, microseconds
	clientCPU float64 // redis-benchmark's CPU use over the run, in cores
	err       string  // non-empty when the run failed
}

// server is a running server process.
type server struct {
	name   string
	port   int
	dir    string
	zredis bool // a zredis-server, not a redis-server
	cmd    *exec.Cmd
	out    *bytes.Buffer
	done   chan struct{}
}

func main() {
	os.Exit(run())
}

func run() int {
	var o options
	var pipes, sizes string
	var quick, self bool
	var testSpec, csvPath, svgPath string
	flag.IntVar(&o.rounds, "rounds", 3, "rounds; each runs every test once on each server")
	flag.IntVar(&o.n, "n", 0, "requests per run (0: calibrated per test, size and pipeline so a run takes about -target)")
	flag.IntVar(&o.clients, "clients", 50, "parallel connections (redis-benchmark -c)")
	flag.StringVar(&pipes, "pipelines", "1,16", "pipeline depths (redis-benchmark -P), comma-separated")
	flag.StringVar(&sizes, "sizes", "3,1024", "value sizes in bytes of the throughput tests (redis-benchmark -d), comma-separated")
	flag.DurationVar(&o.target, "target", 2500*time.Millisecond, "wanted duration of one run when -n is 0")
	flag.DurationVar(&o.settle, "settle", 500*time.Millisecond, "after a test's setup and after each measured run, wait until the server has used no CPU for this long (0: no wait), so that the work a run left for the server's idle time counts in its CPU a request and does not slow the next server's run, and the setup's does neither")
	flag.BoolVar(&quick, "quick", false, "smoke run: 1 round of about 0.3 s runs, -memn 100000 unless given")
	flag.StringVar(&testSpec, "tests", "all", "throughput tests to run, comma-separated ("+strings.Join(testKeys(), ",")+"), all, or none")
	flag.BoolVar(&o.memory, "memory", true, "after the throughput tests, run the memory benchmark (RSS per element, nine shapes) on fresh servers")
	flag.IntVar(&o.memN, "memn", memElements, "elements loaded per memory shape")
	flag.StringVar(&o.memShapes, "memory-shapes", "", "with -memory, only these shapes (names with hyphens for spaces, comma-separated: strings,strings-with-TTL,small-hashes,...)")
	flag.BoolVar(&o.replica, "replica", true, "then run SET with one replica attached (zredis->zredis, redis->redis)")
	flag.BoolVar(&o.lag, "lag", true, "then run the expiry-lag benchmark on fresh servers")
	flag.BoolVar(&o.journal, "journal", true, "then run the expiry journal's cost (zredis, AOF on: journal on against off) on fresh servers")
	flag.StringVar(&o.journalBaseline, "journal-baseline", "", "an earlier zredis-server build to run in the journal part too (\"\": none)")
	flag.BoolVar(&o.fieldTTL, "fieldttl", true, "then run HPEXPIRE, HEXPIRE, HSETEX and HTTL on fresh servers (zredis; redis 7.4 too with -redis74)")
	flag.BoolVar(&o.fieldLag, "fieldlag", true, "then run the hash-field expiry-lag benchmark on fresh servers (zredis; redis 7.4 too with -redis74)")
	flag.StringVar(&o.redis74Bin, "redis74", "", "redis-server 7.4 binary for the field-TTL parts (\"\": zredis alone there, no ratios)")
	flag.StringVar(&o.valkeyBin, "valkey", "", "valkey-server binary, a third server in the throughput grid, the memory and the stress parts (\"\": none)")
	flag.IntVar(&ioThreads, "io-threads", 0, "above 1: every server runs with --io-threads N (zredis: N event loops), and every run is N redis-benchmark processes at once")
	flag.BoolVar(&o.persist, "persist", true, "then run the persistence benchmarks (SET with the AOF, BGSAVE, start-up) on fresh servers")
	flag.BoolVar(&o.bigValues, "bigvalues", true, "then run the large-value benchmark (SET, GET, DEL of 10 MB and 100 MB values: time and RSS) on fresh servers")
	flag.BoolVar(&o.evict, "evict", true, "then run SET under eviction (maxmemory 32mb, allkeys-lru) on fresh servers")
	flag.BoolVar(&o.tls, "tls", true, "then run SET and GET over TLS (redis-benchmark --tls) on fresh servers")
	flag.StringVar(&o.stressCases, "stress-cases", "", "with -stress, only these cases (first word of their names, comma-separated: abusive,huge,non-reading,idle)")
	flag.BoolVar(&o.stress, "stress", true, "then run the stress cases (abusive clients, a huge multibulk, a non-reading subscriber, 10k idle connections: RSS and PING latency) on fresh servers")
	flag.BoolVar(&o.bgsave, "bgsave", true, "with -persist, also run the BGSAVE and start-up part (false: the AOF part only)")
	flag.StringVar(&o.zredisBin, "zredis", "bin/zredis-server", "zredis-server binary (a redis-server here measures the noise floor, as -against-self)")
	flag.StringVar(&o.redisBin, "redis", "redis-server", "redis-server binary")
	flag.BoolVar(&self, "against-self", false, "run -redis in zredis's place too: ratios of redis-server against itself, the harness's noise floor")
	flag.StringVar(&o.benchBin, "benchmark", "redis-benchmark", "redis-benchmark binary")
	flag.StringVar(&o.cliBin, "cli", "redis-cli", "redis-cli binary (the memory part loads with redis-cli --pipe)")
	flag.StringVar(&csvPath, "csv", "bench-out/bench.csv", "write the summary table as CSV to this file (\"\": none)")
	flag.StringVar(&svgPath, "svg", "bench-out/bench.svg", "write the plot of the ratios as SVG to this file (\"\": none)")
	flag.Parse()
	memNSet := false
	flag.Visit(func(f *flag.Flag) { memNSet = memNSet || f.Name == "memn" })
	if quick {
		o.rounds = 1
		o.target = 300 * time.Millisecond
		if !memNSet {
			o.memN = memElements / 10
		}
	}
	var err error
	if o.pipelines, err = parseInts(pipes); err != nil {
		fmt.Fprintf(os.Stderr, "bench: -pipelines: %v\n", err)
		return 2
	}
	if o.sizes, err = parseInts(sizes); err != nil {
		fmt.Fprintf(os.Stderr, "bench: -sizes: %v\n", err)
		return 2
	}
	if o.tests, err = selectTests(testSpec); err != nil {
		fmt.Fprintln(os.Stderr, "bench: -tests:", err)
		return 2
	}
	if o.rounds < 1 || o.clients < 1 || o.n < 0 || o.memN < 1 || ioThreads < 0 {
		fmt.Fprintln(os.Stderr, "bench: -rounds, -clients and -memn must be at least 1, -n and -io-threads at least 0")
		return 2
	}
	if self {
		o.zredisBin = o.redisBin
	}
	bins := []*string{&o.zredisBin, &o.redisBin, &o.benchBin}
	if o.memory {
		bins = append(bins, &o.cliBin)
	}
	if o.redis74Bin != "" {
		bins = append(bins, &o.redis74Bin)
	}
	if o.valkeyBin != "" {
		bins = append(bins, &o.valkeyBin)
	}
	for _, b := range bins {
		if strings.ContainsRune(*b, '/') {
			if _, err := os.Stat(*b); err != nil {
				hint := "make bench builds bin/zredis-server"
				switch b {
				case &o.redis74Bin:
					hint = "-redis74 names a redis-server 7.4"
				case &o.valkeyBin:
					hint = "-valkey names a valkey-server"
				}
				fmt.Fprintf(os.Stderr, "bench: %v (%s)\n", err, hint)
				return 2
			}
			continue
		}
		p, err := exec.LookPath(*b)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: %s not found (make deps installs it)\n", *b)
			return 2
		}
		*b = p
	}
	if o.redis74Bin != "" {
		// Checked now, not when its parts come after the others.
		v, ok := serverVersion(o.redis74Bin)
		if !ok || !atLeast(v, [2]int{7, 4}) {
			fmt.Fprintf(os.Stderr, "bench: -redis74 %s is not a redis-server 7.4 or later (%s)\n", o.redis74Bin, firstLine(o.redis74Bin, "--version"))
			return 2
		}
		o.redis74Ver = v
	}
	o.self = !isZredis(o.zredisBin)
	o.sum = &summaryTable{}

	// Ctrl-C or SIGTERM cancels ctx: the running redis-benchmark is
	// killed and the deferred stops take the servers down.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	machine := printMachine(o)
	if o.self {
		fmt.Println("\nnoise floor: the \"zredis\" side is a second redis-server (" + o.zredisBin + "); every ratio is redis against itself")
	}
	fmt.Println()

	parts := []struct {
		on  bool
		run func(context.Context, options, io.Writer) error
	}{
		{len(o.tests) > 0, throughput},
		{o.memory, memoryBench},
		{o.replica, replicaBench},
		{o.persist, aofBench},
		{o.persist && o.bgsave, persistBench},
		{o.evict, evictBench},
		{o.tls, tlsBench},
		{o.bigValues, bigValuesBench},
		{o.lag, lagBench},
		{o.journal && !o.self, journalBench},
		{o.fieldTTL, fieldTTLBench},
		{o.fieldLag, fieldLagBench},
		{o.stress, stressBench},
	}
	rc := 0
	for _, p := range parts {
		if !p.on {
			continue
		}
		if err := p.run(ctx, o, os.Stdout); err != nil {
			if ctx.Err() != nil {
				fmt.Fprintln(os.Stderr, "bench: interrupted")
				return 130
			}
			// The summary still shows what the parts before measured.
			fmt.Fprintln(os.Stderr, "bench:", err)
			rc = 1
			break
		}
	}

	o.sum.print(os.Stdout, o.self)
	refs := "redis-server"
	if o.valkeyBin != "" {
		refs = "redis-server and valkey-server"
	}
	title := "zredis / " + refs + ", " + time.Now().Format("2006-01-02 15:04") + ", " + machine
	if o.self {
		title = "noise floor: redis-server / " + refs + ", " + time.Now().Format("2006-01-02 15:04") + ", " + machine
	}
	if ioThreads > 1 {
		title += fmt.Sprintf(", io-threads %d", ioThreads)
	}
	for _, out := range []struct {
		path  string
		write func(io.Writer) error
	}{
		{csvPath, o.sum.writeCSV},
		{svgPath, func(w io.Writer) error { return o.sum.writeSVG(w, title) }},
	} {
		if out.path == "" {
			continue
		}
		if err := writeFile(out.path, out.write); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			rc = 1
			continue
		}
		fmt.Println("wrote", out.path)
	}
	return rc
}

// parseInts parses a comma-separated list of positive integers.
func parseInts(spec string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(spec, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("bad value %q in %q", f, spec)
		}
		out = append(out, v)
	}
	return out, nil
}

// writeFile creates path (and its directory) and fills it with write.
func writeFile(path string, write func(io.Writer) error) error {
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %v", path, err)
	}
	return f.Close()
}

// isZredis reports whether bin is a zredis-server (its --version says so).
func isZredis(bin string) bool {
	out, _ := exec.Command(bin, "--version").CombinedOutput()
	return strings.Contains(string(out), "zredis")
}

// noSave is the arguments both servers get everywhere unless a part asks
// for persistence: no RDB snapshots, no AOF.
func noSave(extra ...string) []string {
	return append([]string{"--save", "", "--appendonly", "no"}, extra...)
}

// throughput runs the redis-benchmark tests on a fresh pair of servers,
// a fresh trio with -valkey, and prints the tables.
func throughput(ctx context.Context, o options, w io.Writer) error {
	z, err := startServer(ctx, "zredis", o.zredisBin, noSave()...)
	if err != nil {
		return err
	}
	defer z.stop()
	r, err := startServer(ctx, "redis", o.redisBin, noSave()...)
	if err != nil {
		return err
	}
	defer r.stop()
	servers := []*server{z, r}
	var v *server
	valkeyAddr := ""
	if o.valkeyBin != "" {
		if v, err = startServer(ctx, "valkey", o.valkeyBin, noSave()...); err != nil {
			return err
		}
		defer v.stop()
		servers = append(servers, v)
		valkeyAddr = fmt.Sprintf("  valkey: 127.0.0.1:%d", v.port)
	}
	fmt.Fprintf(w, "zredis: 127.0.0.1:%d  redis: 127.0.0.1:%d%s  clients: %d  keyspace (-r): %d  value sizes: %v bytes\n\n",
		z.port, r.port, valkeyAddr, o.clients, keyspaceSize, o.sizes)

	res, err := benchmarkWith(ctx, o, z, r, v)
	if err != nil {
		return err
	}
	report(w, o, res)
	for _, s := range servers {
		if s.exited() {
			return fmt.Errorf("%s exited during the benchmark:\n%s", s.name, s.out)
		}
	}
	return nil
}

// cell holds the runs of one (pipeline, value size, test) triple.
type cell struct {
	pipeline int
	size     int // value bytes
	test     test
	n        int
	z, r     []result // one per round
	v        []result // valkey's, one per round; empty without -valkey
}

// benchmark runs o's cells on z and r, alternating between them.
func benchmark(ctx context.Context, o options, z, r *server) ([]*cell, error) {
	return benchmarkWith(ctx, o, z, r, nil)
}

// benchmarkWith is benchmark with a third server v (valkey) after r in
// every round when v is not nil.
func benchmarkWith(ctx context.Context, o options, z, r, v *server) ([]*cell, error) {
	var cells []*cell
	for _, p := range o.pipelines {
		for _, size := range o.sizes {
			for _, t := range o.tests {
				cells = append(cells, &cell{pipeline: p, size: size, test: t, n: o.n})
			}
		}
	}
	if o.n == 0 {
		// Calibrate on redis-server; all servers then run the same n.
		// The zredis and valkey runs are warm-ups of the same size, so no
		// server starts the measured rounds cold.
		fmt.Printf("calibrating -n for %v per run...\n", o.target)
		co := o
		co.settle = 0 // n only; the rounds' runs are the measured ones
		for _, c := range cells {
			probe := 20000 * c.pipeline
			if _, err := runBench(ctx, co, z, c, probe); err != nil {
				return nil, err
			}
			res, err := runBench(ctx, co, r, c, probe)
			if err != nil {
				return nil, err
			}
			if v != nil {
				if _, err := runBench(ctx, co, v, c, probe); err != nil {
					return nil, err
				}
			}
			c.n = probe
			if res.err == "" && res.rps > 0 {
				c.n = roundN(res.rps * o.target.Seconds())
			}
		}
	}
	for round := 1; round <= o.rounds; round++ {
		fmt.Printf("round %d/%d\n", round, o.rounds)
		for _, c := range cells {
			zr, err := runBench(ctx, o, z, c, c.n)
			if err != nil {
				return nil, err
			}
			rr, err := runBench(ctx, o, r, c, c.n)
			if err != nil {
				return nil, err
			}
			c.z = append(c.z, zr)
			c.r = append(c.r, rr)
			line := fmt.Sprintf("  P%-3d %5dB %-15s n=%-9d zredis %s   redis %s", c.pipeline, c.size, c.test.name, c.n, brief(zr), brief(rr))
			if v != nil {
				vr, err := runBench(ctx, o, v, c, c.n)
				if err != nil {
					return nil, err
				}
				c.v = append(c.v, vr)
				line += "   valkey " + brief(vr)
			}
			fmt.Println(line)
		}
	}
	fmt.Println()
	return cells, nil
}

func brief(r result) string {
	if r.err != "" {
		return "error"
	}
	return fmt.Sprintf("%10.0f rps p99 %6.3f ms cpu %5.2f µs", r.rps, r.p99, r.cpuPerReq)
}

// roundN rounds a request count to two significant digits, at least 10000.
func roundN(x float64) int {
	if x < 10000 {
		return 10000
	}
	e := math.Pow(10, math.Floor(math.Log10(x))-1)
	return int(math.Round(x/e) * e)
}

// runBench runs one redis-benchmark; with -io-threads N, N of them at
// once, each with its share of the clients and requests (see benchProcs).
// A failure of the benchmarked server (an error reply, a closed
// connection) is a result with err set; an error is returned only when
// the benchmark itself could not run or was interrupted.
func runBench(ctx context.Context, o options, s *server, c *cell, n int) (result, error) {
	// A hung server must not hang the benchmark: allow far more than the
	// run should take.
	rctx, cancel := context.WithTimeout(ctx, 20*o.target+2*time.Minute)
	defer cancel()
	if c.test.setup != nil {
		if err := prepare(s, c.test, n, c.size); err != nil {
			return result{}, fmt.Errorf("%s: preparing %s: %v", s.name, c.test.name, err)
		}
		// What the setup left (the garbage of a key it replaced) is not
		// the run's work.
		settle(ctx, s, o.settle)
	}
	procs := benchProcs(o.clients, n)
	cmds := make([]*exec.Cmd, procs)
	stdouts, stderrs := make([]bytes.Buffer, procs), make([]bytes.Buffer, procs)
	for i := range cmds {
		po := o
		po.clients = share(o.clients, procs, i)
		cmds[i] = exec.CommandContext(rctx, o.benchBin, benchArgs(po, s, c, share(n, procs, i))...)
		cmds[i].Stdout, cmds[i].Stderr = &stdouts[i], &stderrs[i]
	}
	cpu0 := s.cpuTime()
	start := time.Now()
	errs := make([]error, procs)
	for i, cmd := range cmds {
		errs[i] = cmd.Start()
	}
	for i, cmd := range cmds {
		if errs[i] == nil {
			errs[i] = cmd.Wait()
		}
	}
	wall := time.Since(start)
	settle(ctx, s, o.settle)
	cpu1 := s.cpuTime()
	if ctx.Err() != nil {
		return result{}, ctx.Err()
	}
	if s.exited() {
		return result{}, fmt.Errorf("%s exited:\n%s", s.name, s.out)
	}
	if errors.Is(rctx.Err(), context.DeadlineExceeded) {
		return result{err: "timed out"}, nil
	}
	var parts []result
	var clientCPU time.Duration
	for i, cmd := range cmds {
		res, perr := parseCSV(stdouts[i].Bytes())
		if err := cmp.Or(errs[i], perr); err != nil {
			return result{err: err.Error() + ": " + strings.TrimSpace(stderrs[i].String()+" "+stdouts[i].String())}, nil
		}
		parts = append(parts, res)
		if ps := cmd.ProcessState; ps != nil {
			clientCPU += ps.UserTime() + ps.SystemTime()
		}
	}
	res := combine(parts)
	res.cpuPerReq = float64((cpu1 - cpu0).Microseconds()) / float64(n)
	if wall > 0 {
		res.clientCPU = clientCPU.Seconds() / wall.Seconds()
	}
	return res, nil
}

// settle waits until s has used no CPU for quiet (a clock tick at most:
// /proc counts in 10 ms), or settleMax at the most. runBench calls it
// after a test's setup and after the run. zredis does work a run left
// when it falls idle: 300 ms after its last command it collects the
// garbage and hands free pages back, when its heap grew beyond its data
// (server/memrelease.go). In a grid
// that runs the servers one after the other on one machine, that
// collection fell in the next server's run: in a pipeline-1 grid of 1 KiB
// values, 8 of 21 redis-server runs had one in them, 29-53 ms of a heap
// of 330-590 MB on both cores, while the client that bounds those runs
// needs one; and zredis's CPU a request left it out. Waiting after the
// setup too keeps the collection of what the setup replaced (a sorted
// set of 100,000 members of 1 KiB for ZRANGEBYSCORE) out of the run and
// of its CPU, as redis-server frees such a key within the setup's DEL.
func settle(ctx context.Context, s *server, quiet time.Duration) {
	if quiet <= 0 {
		return
	}
	const step = 50 * time.Millisecond
	const settleMax = 5 * time.Second
	deadline := time.Now().Add(settleMax)
	last, since := s.cpuTime(), time.Now()
	for time.Since(since) < quiet && time.Now().Before(deadline) {
		if !sleepCtx(ctx, step) {
			return
		}
		if now := s.cpuTime(); now-last > 10*time.Millisecond {
			last, since = now, time.Now()
		}
	}
}

// benchProcs is the number of redis-benchmark processes of a run of n
// requests from clients connections: -io-threads (above 1), as long as
// each gets a client and a request, else one. Several processes, not
// redis-benchmark --threads: a threaded redis-benchmark notices that the
// run is done only on its 250 ms throughput tick, so its run time, and
// with it rps, is rounded up to a multiple of 250 ms (a run of 1.05 s
// counts as 1.25 s).
func benchProcs(clients, n int) int {
	if ioThreads > 1 {
		return max(1, min(ioThreads, clients, n))
	}
	return 1
}

// share is the i-th of procs parts of total: the remainder goes to the
// first ones.
func share(total, procs, i int) int {
	s := total / procs
	if i < total%procs {
		s++
	}
	return s
}

// combine is the result of the processes of one run, which start
// together and, with equal shares, end close together against the same
// server: rps is their sum, and p50 and p99 their means, since the
// percentiles of their runs cannot be merged from --csv and each process
// sees the same server.
func combine(parts []result) result {
	if len(parts) == 1 {
		return parts[0]
	}
	var r result
	for _, p := range parts {
		r.rps += p.rps
		r.p50 += p.p50 / float64(len(parts))
		r.p99 += p.p99 / float64(len(parts))
	}
	return r
}

// benchArgs is redis-benchmark's command line for a run of n requests
// of c on s from o.clients connections: the options, then the test's
// arguments, which end with the command where the test gives one.
func benchArgs(o options, s *server, c *cell, n int) []string {
	args := []string{"-h", "127.0.0.1", "-p", strconv.Itoa(s.port),
		"-c", strconv.Itoa(o.clients), "-n", strconv.Itoa(n), "-P", strconv.Itoa(c.pipeline),
		"-r", strconv.Itoa(keyspaceSize), "--csv"}
	return append(args, c.test.args(c.size)...)
}

// prepare runs t's setup on s for a run of n requests with values of
// size bytes.
func prepare(s *server, t test, n, size int) error {
	rc, err := dialServer(s)
	if err != nil {
		return err
	}
	defer rc.Close()
	return t.setup(rc, n, size)
}

// cpuTime is the server process's user+system CPU time so far, from
// /proc (Linux); 0 where it cannot be read.
func (s *server) cpuTime() time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the parenthesised command name; utime and stime are
	// the 14th and 15th fields, in clock ticks (USER_HZ, 100 on Linux).
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// parseCSV reads redis-benchmark 7.0's --csv output: a header row
// ("test","rps","avg_latency_ms",...,"p99_latency_ms",...) and one row per
// test; one run holds one test, so the first row is the result.
func parseCSV(out []byte) (result, error) {
	rows, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil {
		return result{}, err
	}
	if len(rows) < 2 {
		return result{}, errors.New("no result row in redis-benchmark output")
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	get := func(name string) (float64, error) {
		i, ok := col[name]
		if !ok || i >= len(rows[1]) {
			return 0, fmt.Errorf("no %q column in redis-benchmark output", name)
		}
		return strconv.ParseFloat(rows[1][i], 64)
	}
	var r result
	if r.rps, err = get("rps"); err != nil {
		return result{}, err
	}
	if r.p50, err = get("p50_latency_ms"); err != nil {
		return result{}, err
	}
	if r.p99, err = get("p99_latency_ms"); err != nil {
		return result{}, err
	}
	return r, nil
}

// median of xs; NaN when empty.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// summary is one table row of zredis against a reference (r: redis, or
// valkey): medians over the rounds whose two runs both succeeded, and
// the median of the per-round ratios.
type summary struct {
	zRPS, rRPS, rpsRatio float64
	zP99, rP99, p99Ratio float64
	zCPU, rCPU, cpuRatio float64 // server CPU µs per request
	clientCPU            float64 // redis-benchmark's cores, both servers' runs
	ok                   int
	firstErr             string
}

// summarize is c's row of zredis against redis.
func summarize(c *cell) summary { return summarizeRuns(c.z, c.r, "redis") }

// summarizeValkey is c's row of zredis against valkey.
func summarizeValkey(c *cell) summary { return summarizeRuns(c.z, c.v, "valkey") }

// summarizeRuns is the row of zredis's runs z against the reference's
// runs ref (named refName), round by round.
func summarizeRuns(z, ref []result, refName string) summary {
	var s summary
	var zr, rr, rat, zp, rp, prat, zc, rc, crat, cl []float64
	for i := range min(len(z), len(ref)) {
		a, b := z[i], ref[i]
		if a.err != "" || b.err != "" {
			if s.firstErr == "" {
				if a.err != "" {
					s.firstErr = "zredis: " + a.err
				} else {
					s.firstErr = refName + ": " + b.err
				}
			}
			continue
		}
		s.ok++
		zr, rr = append(zr, a.rps), append(rr, b.rps)
		rat = append(rat, a.rps/b.rps)
		zp, rp = append(zp, a.p99), append(rp, b.p99)
		if b.p99 > 0 {
			prat = append(prat, a.p99/b.p99)
		}
		zc, rc = append(zc, a.cpuPerReq), append(rc, b.cpuPerReq)
		if b.cpuPerReq > 0 {
			crat = append(crat, a.cpuPerReq/b.cpuPerReq)
		}
		cl = append(cl, a.clientCPU, b.clientCPU)
	}
	s.zCPU, s.rCPU, s.cpuRatio = median(zc), median(rc), median(crat)
	s.clientCPU = median(cl)
	s.zRPS, s.rRPS, s.rpsRatio = median(zr), median(rr), median(rat)
	s.zP99, s.rP99, s.p99Ratio = median(zp), median(rp), median(prat)
	return s
}

func report(w io.Writer, o options, cells []*cell) {
	valkey := hasValkey(cells)
	bound := "near 1.0"
	if ioThreads > 1 {
		bound = fmt.Sprintf("near %d, its processes", ioThreads)
	}
	// A missing figure (every round of one pair failed) is a dash.
	dash := func(v float64, prec int) string {
		if math.IsNaN(v) {
			return "-"
		}
		return strconv.FormatFloat(v, 'f', prec, 64)
	}
	var errs []string
	for _, p := range o.pipelines {
		if valkey {
			fmt.Fprintf(w, "pipeline %d, %d clients, median of %d round(s); z/r = zredis/redis, z/v = zredis/valkey per round, then median; p99 in ms\n",
				p, o.clients, o.rounds)
			fmt.Fprintf(w, "cpu/op = server CPU µs per request; client = redis-benchmark's CPU in cores, the higher of z/r's and z/v's (%s: the client, not the server, bounds rps)\n", bound)
			fmt.Fprintf(w, "%-15s %6s %9s %11s %11s %11s %7s %7s %10s %10s %10s %7s %7s %8s %8s %8s %7s %7s %6s\n",
				"test", "value", "n", "zredis rps", "redis rps", "valkey rps", "z/r rps", "z/v rps",
				"zredis p99", "redis p99", "valkey p99", "z/r p99", "z/v p99",
				"z cpu/op", "r cpu/op", "v cpu/op", "z/r cpu", "z/v cpu", "client")
		} else {
			fmt.Fprintf(w, "pipeline %d, %d clients, median of %d round(s); ratio = zredis/redis per round, then median; p99 in ms\n",
				p, o.clients, o.rounds)
			fmt.Fprintf(w, "cpu/op = server CPU µs per request; client = redis-benchmark's CPU in cores (%s: the client, not the server, bounds rps)\n", bound)
			fmt.Fprintf(w, "%-15s %6s %9s %11s %11s %9s %11s %11s %9s %9s %9s %9s %7s\n",
				"test", "value", "n", "zredis rps", "redis rps", "rps ratio", "zredis p99", "redis p99", "p99 ratio",
				"z cpu/op", "r cpu/op", "cpu ratio", "client")
		}
		for _, c := range cells {
			if c.pipeline != p {
				continue
			}
			s := summarize(c)
			var sv summary
			if valkey {
				sv = summarizeValkey(c)
			}
			switch {
			case s.ok == 0 && sv.ok == 0:
				fmt.Fprintf(w, "%-15s %5dB %9d %11s\n", c.test.name, c.size, c.n, "failed")
			case valkey:
				// zredis's own figures from whichever pair has them:
				// the same runs, less those whose partner failed.
				zs := s
				if s.ok == 0 {
					zs = sv
				}
				client := s.clientCPU
				if math.IsNaN(client) || sv.clientCPU > client {
					client = sv.clientCPU
				}
				fmt.Fprintf(w, "%-15s %5dB %9d %11.0f %11s %11s %7s %7s %10.3f %10s %10s %7s %7s %8.2f %8s %8s %7s %7s %6.2f\n",
					c.test.name, c.size, c.n, zs.zRPS, dash(s.rRPS, 0), dash(sv.rRPS, 0), dash(s.rpsRatio, 2), dash(sv.rpsRatio, 2),
					zs.zP99, dash(s.rP99, 3), dash(sv.rP99, 3), dash(s.p99Ratio, 2), dash(sv.p99Ratio, 2),
					zs.zCPU, dash(s.rCPU, 2), dash(sv.rCPU, 2), dash(s.cpuRatio, 2), dash(sv.cpuRatio, 2),
					client)
			default:
				fmt.Fprintf(w, "%-15s %5dB %9d %11.0f %11.0f %9.2f %11.3f %11.3f %9.2f %9.2f %9.2f %9.2f %7.2f\n",
					c.test.name, c.size, c.n, s.zRPS, s.rRPS, s.rpsRatio, s.zP99, s.rP99, s.p99Ratio,
					s.zCPU, s.rCPU, s.cpuRatio, s.clientCPU)
			}
			if s.firstErr != "" {
				errs = append(errs, fmt.Sprintf("P%d %dB %s (%d/%d rounds failed): %s",
					p, c.size, c.test.name, o.rounds-s.ok, o.rounds, s.firstErr))
			}
			// zredis's failures are in the line above; valkey's own here.
			if n, first := failedRuns(c.v); n > 0 {
				errs = append(errs, fmt.Sprintf("P%d %dB %s (%d/%d valkey runs failed): valkey: %s",
					p, c.size, c.test.name, n, len(c.v), first))
			}
		}
		fmt.Fprintln(w)
	}
	if len(errs) > 0 {
		fmt.Fprintln(w, "failed runs (left out of the medians):")
		for _, e := range errs {
			fmt.Fprintln(w, "  "+e)
		}
	}
	for _, f := range throughputFigures(o.pipelines, cells) {
		o.sum.add(f)
	}
}

// hasValkey reports whether the cells ran on valkey too (-valkey).
func hasValkey(cells []*cell) bool {
	for _, c := range cells {
		if len(c.v) > 0 {
			return true
		}
	}
	return false
}

// failedRuns counts the runs in rs that failed and returns the first's
// error.
func failedRuns(rs []result) (n int, first string) {
	for _, r := range rs {
		if r.err != "" {
			if n == 0 {
				first = r.err
			}
			n++
		}
	}
	return n, first
}

// throughputFigures are the summary's figures for the throughput grid:
// rps and p99 per cell, then per pipeline the geometric mean of each
// ratio over the cells that ran; with valkey in the cells, the same
// against valkey in sections of their own (", vs valkey"), each after
// its redis one.
func throughputFigures(pipelines []int, cells []*cell) []figure {
	rps, p99 := cellFigures(pipelines, cells, "", summarize)
	if !hasValkey(cells) {
		return append(rps, p99...)
	}
	vrps, vp99 := cellFigures(pipelines, cells, ", vs valkey", summarizeValkey)
	return slices.Concat(rps, vrps, p99, vp99)
}

// cellFigures are the throughput and p99 figures of the cells against
// the reference sum summarizes them with, in sections named with suffix.
func cellFigures(pipelines []int, cells []*cell, suffix string, sum func(*cell) summary) (rps, p99 []figure) {
	rpsSec, p99Sec := "throughput"+suffix, "p99 latency"+suffix
	for _, p := range pipelines {
		var rr, pr []float64
		for _, c := range cells {
			if c.pipeline != p {
				continue
			}
			s := sum(c)
			name := fmt.Sprintf("P%d %s %dB", p, c.test.name, c.size)
			rps = append(rps, figure{section: rpsSec, name: name, unit: "rps",
				z: s.zRPS, r: s.rRPS, ratio: s.rpsRatio, better: higher})
			p99 = append(p99, figure{section: p99Sec, name: name, unit: "ms",
				z: s.zP99, r: s.rP99, ratio: s.p99Ratio, better: lower})
			if s.ok > 0 {
				rr, pr = append(rr, s.rpsRatio), append(pr, s.p99Ratio)
			}
		}
		if len(rr) > 0 {
			rps = append(rps, figure{section: rpsSec, name: fmt.Sprintf("P%d geomean (%d cells)", p, len(rr)),
				unit: "rps", z: math.NaN(), r: math.NaN(), ratio: geomean(rr), better: higher})
			p99 = append(p99, figure{section: p99Sec, name: fmt.Sprintf("P%d geomean (%d cells)", p, len(pr)),
				unit: "ms", z: math.NaN(), r: math.NaN(), ratio: geomean(pr), better: lower})
		}
	}
	return rps, p99
}

// printMachine prints the machine, the kernel and the versions, and
// returns the machine in one line for the plot's title.
func printMachine(o options) string {
	m := fmt.Sprintf("%s, %d CPUs", cpuModel(), runtime.NumCPU())
	fmt.Printf("machine: %s (nproc), %s %s\n", m, runtime.GOOS, runtime.GOARCH)
	fmt.Printf("kernel:  %s\n", firstLine("uname", "-sr"))
	fmt.Printf("go:      %s\n", firstLine("go", "version"))
	fmt.Printf("zredis:  %s\n", firstLine(o.zredisBin, "--version"))
	fmt.Printf("redis:   %s\n", firstLine(o.redisBin, "--version"))
	if o.redis74Bin != "" {
		fmt.Printf("redis74: %s\n", firstLine(o.redis74Bin, "--version"))
	}
	if o.valkeyBin != "" {
		fmt.Printf("valkey:  %s\n", firstLine(o.valkeyBin, "--version"))
	}
	fmt.Printf("bench:   %s\n", firstLine(o.benchBin, "--version"))
	if ioThreads > 1 {
		fmt.Printf("threads: every server --io-threads %d --io-threads-do-reads yes (zredis: %d event loops); %d redis-benchmark processes per run (%d CPUs)\n",
			ioThreads, ioThreads, ioThreads, runtime.NumCPU())
	} else {
		fmt.Printf("threads: io-threads 1 (zredis: one event loop); one redis-benchmark per run (%d CPUs)\n",
			runtime.NumCPU())
	}
	return m
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func firstLine(name string, args ...string) string {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil && len(out) == 0 {
		return "(" + err.Error() + ")"
	}
	l, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return l
}

// ---- servers ---------------------------------------------------------------

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startServer starts bin on a free loopback port in a fresh temporary
// directory and waits until it answers PING. Another process may take
// the port between the probe and the bind, so it retries.
func startServer(ctx context.Context, name, bin string, extra ...string) (*server, error) {
	return startServerIn(ctx, name, bin, "", extra...)
}

// startServerIn is startServer in directory dir ("" for a fresh
// temporary one), which stop removes.
func startServerIn(ctx context.Context, name, bin, dir string, extra ...string) (*server, error) {
	var lastErr error
	given := dir
	abs, err := filepath.Abs(bin)
	if err != nil {
		return nil, err
	}
	zredis := isZredis(abs)
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		dir := given
		if dir == "" {
			if dir, err = os.MkdirTemp("", "zredis-bench-"+name); err != nil {
				return nil, err
			}
		}
		args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir}
		if ioThreads > 1 {
			// Before extra, so that a part's own setting would win. zredis
			// runs that many event loops (io-threads-do-reads is how its
			// loops always work, and a no-op there).
			args = append(args, "--io-threads", strconv.Itoa(ioThreads), "--io-threads-do-reads", "yes")
		}
		args = append(args, extra...)
		s := &server{name: name, port: port, dir: dir, zredis: zredis, out: &bytes.Buffer{}, done: make(chan struct{})}
		s.cmd = exec.Command(abs, args...)
		s.cmd.Dir = dir
		s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
		// Its own process group: a Ctrl-C at the terminal reaches only
		// this program, which stops the servers itself. Pdeathsig takes
		// the server down should this program die without cleaning up.
		s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := s.cmd.Start(); err != nil {
			if given == "" {
				os.RemoveAll(dir)
			}
			return nil, fmt.Errorf("starting %s: %v", name, err)
		}
		go func() { s.cmd.Wait(); close(s.done) }()
		if given != "" {
			s.dir = "" // the caller's: stop leaves it
		}
		if err := waitReady(ctx, s); err != nil {
			s.stop()
			lastErr = fmt.Errorf("%s did not start: %v\n%s", name, err, s.out)
			if ctx.Err() != nil {
				return nil, lastErr
			}
			continue
		}
		return s, nil
	}
	return nil, lastErr
}

func waitReady(ctx context.Context, s *server) error {
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if s.exited() {
			return errors.New("exited")
		}
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.port), 200*time.Millisecond)
		if err == nil {
			c.SetDeadline(time.Now().Add(time.Second))
			c.Write([]byte("PING\r\n"))
			buf := make([]byte, 16)
			n, _ := io.ReadAtLeast(c, buf, 7)
			c.Close()
			if string(buf[:n]) == "+PONG\r\n" {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("no PONG within 15 s")
}

func (s *server) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM, waits up to 10 s, then kills; it removes the
// server's directory.
func (s *server) stop() {
	if !s.exited() {
		s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			s.cmd.Process.Kill()
			<-s.done
		}
	}
	os.RemoveAll(s.dir)
}
