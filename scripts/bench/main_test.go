package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCSV(t *testing.T) {
	out := `"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
"SETEX key:__rand_int__ 100 xxx","165289.25","0.182","0.048","0.167","0.287","0.455","0.863"
`
	r, err := parseCSV([]byte(out))
	require.NoError(t, err)
	assert.Equal(t, result{rps: 165289.25, p50: 0.167, p99: 0.455}, r)

	for _, bad := range []string{
		"",
		`"test","rps"` + "\n",
		`"test","rps"` + "\n" + `"SET","1"` + "\n",
		`"test","rps","p50_latency_ms","p99_latency_ms"` + "\n" + `"SET","x","1","2"` + "\n",
	} {
		_, err := parseCSV([]byte(bad))
		assert.Error(t, err, "%q", bad)
	}
}

func TestMedianRoundN(t *testing.T) {
	assert.True(t, math.IsNaN(median(nil)))
	assert.Equal(t, 2.0, median([]float64{3, 1, 2}))
	assert.Equal(t, 2.5, median([]float64{4, 1, 3, 2}))

	for _, tc := range []struct {
		in   float64
		want int
	}{{0, 10000}, {9999, 10000}, {387654, 390000}, {3125000, 3100000}, {12345, 12000}} {
		assert.Equal(t, tc.want, roundN(tc.in), "%v", tc.in)
	}
}

func TestSummarizeSkipsFailedRounds(t *testing.T) {
	c := &cell{
		z: []result{{rps: 100, p99: 2}, {err: "boom"}, {rps: 300, p99: 1}},
		r: []result{{rps: 200, p99: 1}, {rps: 1, p99: 1}, {rps: 300, p99: 1}},
	}
	s := summarize(c)
	assert.Equal(t, 2, s.ok)
	assert.Equal(t, "zredis: boom", s.firstErr)
	assert.Equal(t, 200.0, s.zRPS)
	assert.Equal(t, 250.0, s.rRPS)
	assert.Equal(t, 0.75, s.rpsRatio)
	assert.Equal(t, 1.5, s.p99Ratio)
}

func TestSelectTests(t *testing.T) {
	all, err := selectTests("all")
	require.NoError(t, err)
	assert.Equal(t, len(tests), len(all))

	none, err := selectTests("")
	require.NoError(t, err)
	assert.Empty(t, none)

	// Table order, whatever the order asked for; names case-insensitive.
	got, err := selectTests("RPOP, lpush,mset")
	require.NoError(t, err)
	var names []string
	for _, tc := range got {
		names = append(names, tc.name)
	}
	assert.Equal(t, []string{"MSET (10 keys)", "LPUSH", "RPOP"}, names)

	_, err = selectTests("set,nosuch")
	assert.ErrorContains(t, err, "nosuch")
}

func TestEveryTestHasAUniqueKey(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range tests {
		k := testKey(tc)
		assert.False(t, seen[k], k)
		seen[k] = true
	}
}

func TestAppendCommands(t *testing.T) {
	assert.Equal(t, "*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n", string(appendCmd(nil, "DEL", "k")))
	assert.Equal(t, "$8\r\nfield:42\r\n", string(appendBulkNum(nil, "field:", 42)))
	assert.Equal(t, "$1\r\n0\r\n", string(appendBulkNum(nil, "", 0)))
}

// Every memory shape's commands are well-formed RESP arrays of bulk
// strings, and loading n elements adds n elements.
func TestMemShapesWellFormed(t *testing.T) {
	for _, sh := range memShapes {
		var buf bytes.Buffer
		const n = 1003 // not a multiple of any batch
		require.NoError(t, writeShape(&buf, sh, 0, n))
		loaded := buf.String()
		// A command is an array of bulk strings, which readReply
		// parses like an array reply.
		rc := &rconn{r: bufio.NewReader(&buf)}
		cmds := 0
		for rc.r.Buffered() > 0 || buf.Len() > 0 {
			_, err := rc.readReply()
			require.NoError(t, err, sh.name)
			cmds++
		}
		assert.Equal(t, (n+sh.per-1)/sh.per, cmds, sh.name)
		// The second load's first command makes new elements only.
		first := string(sh.gen(nil, secondLoad(sh, n), 1))
		assert.NotContains(t, loaded, first, sh.name)
	}
	// One element per argument after the key (two for field/value and
	// score/member pairs).
	small, err := selectShapes("small-hashes")
	require.NoError(t, err)
	assert.Equal(t, "*12\r\n$4\r\nHSET\r\n$6\r\nhash:1\r\n"+
		"$6\r\nfield1\r\n$10\r\nv000000005\r\n$6\r\nfield2\r\n$10\r\nv000000006\r\n"+
		"$6\r\nfield3\r\n$10\r\nv000000007\r\n$6\r\nfield4\r\n$10\r\nv000000008\r\n"+
		"$6\r\nfield5\r\n$10\r\nv000000009\r\n", string(small[0].gen(nil, 5, 5)))
	assert.Equal(t, "$10\r\nm123456789\r\n", string(appendTen(nil, 'm', 123456789)))
}

func TestPipeErrors(t *testing.T) {
	ok := "All data transferred. Waiting for the last reply...\nLast reply received from server.\nerrors: 0, replies: 1000\n"
	assert.NoError(t, pipeErrors(ok))
	assert.ErrorContains(t, pipeErrors("ERR x\nerrors: 3, replies: 1000\n"), "3 error replies")
	assert.Error(t, pipeErrors("Error writing to the server: Connection reset by peer\n"))
}

func TestTestArgs(t *testing.T) {
	byKey := map[string]test{}
	for _, tc := range tests {
		byKey[testKey(tc)] = tc
	}
	assert.Equal(t, []string{"-t", "set", "-d", "1024"}, byKey["set"].args(1024))
	setex := byKey["setex"].args(1024)
	assert.Equal(t, []string{"SETEX", "key:__rand_int__", "100"}, setex[:3])
	assert.Len(t, setex[3], 1024)
	assert.Equal(t, []string{"SETEX", "key:__rand_int__", "100", "xxx"}, byKey["setex"].args(3))
	// Members: redis-benchmark's own at the small size, padded to the
	// size once __rand_int__ is replaced by its 12 digits.
	assert.Equal(t, []string{"SADD", "myset", "element:__rand_int__"}, byKey["sadd"].args(3))
	m := byKey["zadd"].args(1024)[3]
	assert.Len(t, strings.Replace(m, "__rand_int__", "000000000042", 1), 1024)
	assert.Equal(t, "value:1xx", pad("value:1", 9))
	assert.Equal(t, "value:10", pad("value:10", 3))
}

func TestGeomean(t *testing.T) {
	assert.InDelta(t, 2.0, geomean([]float64{1, 4}), 1e-12)
	assert.InDelta(t, 1.0, geomean([]float64{0.5, 2, 1}), 1e-12)
	// Failed cells (NaN) and nonsense are left out; none left is NaN.
	assert.InDelta(t, 3.0, geomean([]float64{3, math.NaN(), 0, -1}), 1e-12)
	assert.True(t, math.IsNaN(geomean(nil)))
}

func TestThroughputFigures(t *testing.T) {
	set := test{name: "SET"}
	cells := []*cell{
		{pipeline: 1, size: 3, test: set, z: []result{{rps: 200, p99: 1}}, r: []result{{rps: 100, p99: 2}}},
		{pipeline: 1, size: 1024, test: set, z: []result{{rps: 50, p99: 1}}, r: []result{{rps: 100, p99: 1}}},
		{pipeline: 16, size: 3, test: set, z: []result{{err: "boom"}}, r: []result{{rps: 100, p99: 1}}},
	}
	figs := throughputFigures([]int{1, 16}, cells)
	var names []string
	for _, f := range figs {
		names = append(names, f.section+"|"+f.name)
	}
	assert.Equal(t, []string{
		"throughput|P1 SET 3B", "throughput|P1 SET 1024B", "throughput|P1 geomean (2 cells)", "throughput|P16 SET 3B",
		"p99 latency|P1 SET 3B", "p99 latency|P1 SET 1024B", "p99 latency|P1 geomean (2 cells)", "p99 latency|P16 SET 3B",
	}, names)
	assert.Equal(t, 2.0, figs[0].ratio)
	assert.InDelta(t, 1.0, figs[2].ratio, 1e-12) // sqrt(2 * 0.5)
	assert.True(t, math.IsNaN(figs[3].ratio))    // every round failed
	assert.InDelta(t, math.Sqrt(0.5), figs[6].ratio, 1e-12)
	assert.Equal(t, 1, figs[0].leads())
	assert.Equal(t, -1, figs[1].leads())
	assert.Equal(t, 1, figs[4].leads()) // p99 0.5: lower is better
	assert.Equal(t, 0, figs[3].leads())
}

// With valkey in the cells, its figures follow each redis section in
// sections of their own, paired with zredis round by round apart from
// redis: a round whose redis run failed still counts against valkey.
func TestThroughputFiguresValkey(t *testing.T) {
	set := test{name: "SET"}
	cells := []*cell{
		{pipeline: 1, size: 3, test: set,
			z: []result{{rps: 200, p99: 1}, {rps: 100, p99: 1}},
			r: []result{{rps: 100, p99: 2}, {err: "boom"}},
			v: []result{{rps: 400, p99: 1}, {rps: 100, p99: 2}}},
	}
	figs := throughputFigures([]int{1}, cells)
	var names []string
	for _, f := range figs {
		names = append(names, f.section+"|"+f.name)
	}
	assert.Equal(t, []string{
		"throughput|P1 SET 3B", "throughput|P1 geomean (1 cells)",
		"throughput, vs valkey|P1 SET 3B", "throughput, vs valkey|P1 geomean (1 cells)",
		"p99 latency|P1 SET 3B", "p99 latency|P1 geomean (1 cells)",
		"p99 latency, vs valkey|P1 SET 3B", "p99 latency, vs valkey|P1 geomean (1 cells)",
	}, names)
	assert.Equal(t, 2.0, figs[0].ratio)
	assert.Equal(t, 250.0, figs[2].r)                  // valkey's median over both rounds
	assert.InDelta(t, (0.5+1)/2, figs[2].ratio, 1e-12) // median of 200/400 and 100/100
	assert.InDelta(t, (1+0.5)/2, figs[6].ratio, 1e-12) // p99: 1/1 and 1/2
	assert.Equal(t, -1, figs[2].leads())

	sv := summarizeValkey(cells[0])
	assert.Equal(t, 2, sv.ok)
	assert.Equal(t, "", sv.firstErr)
	assert.Equal(t, "redis: boom", summarize(cells[0]).firstErr)
	n, first := failedRuns(cells[0].r)
	assert.Equal(t, 1, n)
	assert.Equal(t, "boom", first)

	// No valkey: no valkey sections, and summarizeValkey has nothing.
	cells[0].v = nil
	assert.Len(t, throughputFigures([]int{1}, cells), 4)
	assert.Equal(t, 0, summarizeValkey(cells[0]).ok)
	assert.True(t, math.IsNaN(summarizeValkey(cells[0]).rpsRatio))
}

// -io-threads splits a run over as many redis-benchmark processes, each
// with its share of the clients and the requests.
func TestBenchProcs(t *testing.T) {
	defer func(n int) { ioThreads = n }(ioThreads)
	ioThreads = 0
	assert.Equal(t, 1, benchProcs(50, 1000))
	ioThreads = 1
	assert.Equal(t, 1, benchProcs(50, 1000))
	ioThreads = 2
	assert.Equal(t, 2, benchProcs(50, 1000))
	assert.Equal(t, 1, benchProcs(1, 1000))
	assert.Equal(t, 1, benchProcs(50, 1))
	assert.Equal(t, []int{17, 17, 16}, []int{share(50, 3, 0), share(50, 3, 1), share(50, 3, 2)})
	assert.Equal(t, []int{25, 25}, []int{share(50, 2, 0), share(50, 2, 1)})

	r := combine([]result{{rps: 100, p50: 1, p99: 2}, {rps: 300, p50: 3, p99: 4}})
	assert.Equal(t, result{rps: 400, p50: 2, p99: 3}, r)
	one := result{rps: 5, p50: 1, p99: 2}
	assert.Equal(t, one, combine([]result{one}))

	// The test's arguments stay last: the first non-option is the command.
	c := &cell{pipeline: 16, size: 3, test: test{name: "SETEX", args: command("SETEX", "k", "100", "$value")}}
	args := benchArgs(options{clients: 25}, &server{port: 6379}, c, 1000)
	assert.Equal(t, []string{"-c", "25", "-n", "1000"}, args[4:8])
	assert.Equal(t, []string{"--csv", "SETEX", "k", "100", "xxx"}, args[len(args)-5:])
}

// The memory part with valkey: a table per reference, and the summary's
// valkey sections each after its redis one.
func TestReportMemoryValkey(t *testing.T) {
	sides := []memSide{{"zredis", ""}, {"redis", ""}, {"valkey", ""}}
	res := make([][]memResult, len(memShapes))
	for i := range res {
		res[i] = []memResult{{rss: 100 << 20, used: 50 << 20}, {rss: 200 << 20, used: 100 << 20}, {rss: 400 << 20, used: 100 << 20}}
	}
	o := options{memN: 1 << 20, sum: &summaryTable{}}
	var b bytes.Buffer
	reportMemory(&b, o, memShapes, sides, res)
	out := b.String()
	assert.Contains(t, out, "ratio = zredis/redis\n")
	assert.Contains(t, out, "ratio = zredis/valkey\n")
	assert.Regexp(t, `strings\s+100\.0\s+400\.0\s+0\.25 `, out)
	var sections []string
	for _, f := range o.sum.grouped() {
		if len(sections) == 0 || sections[len(sections)-1] != f.section {
			sections = append(sections, f.section)
		}
	}
	assert.Equal(t, []string{"memory (RSS)", "memory (RSS), vs valkey", "memory (RSS, purged)", "memory (RSS, purged), vs valkey",
		"memory (used_memory)", "memory (used_memory), vs valkey", "memory (RSS, second load)", "memory (RSS, second load), vs valkey"}, sections)
	assert.Len(t, o.sum.figs, 8*len(memShapes))
}

func sampleSummary() *summaryTable {
	t := &summaryTable{}
	t.add(figure{section: "throughput", name: "P1 SET 3B", unit: "rps", z: 150000, r: 100000, ratio: 1.5, better: higher})
	t.add(figure{section: "throughput", name: "P1 geomean (1 cells)", unit: "rps", z: math.NaN(), r: math.NaN(), ratio: 1.5, better: higher})
	t.add(figure{section: "memory (RSS)", name: "strings <10 B>", unit: "B/elem", z: 120.5, r: 60.25, ratio: 2, better: lower})
	t.add(figure{section: "memory (used_memory)", name: "strings", unit: "B/elem", z: 80, r: 60, ratio: 80.0 / 60, better: neither})
	t.add(figure{section: "large values, 10 MB", name: "SET time", unit: "ms", z: 20, r: 10, ratio: 2, better: lower})
	t.add(figure{section: "large values, 10 MB", name: "peak RSS (VmHWM)", unit: "MB", z: 100, r: 200, ratio: 0.5, better: lower})
	return t
}

func TestSummaryGrouped(t *testing.T) {
	s := &summaryTable{}
	for _, f := range []string{"a:1", "b:1", "a:2", "c:1", "b:2"} {
		sec, name, _ := strings.Cut(f, ":")
		s.add(figure{section: sec, name: name})
	}
	var got []string
	for _, f := range s.grouped() {
		got = append(got, f.section+":"+f.name)
	}
	assert.Equal(t, []string{"a:1", "a:2", "b:1", "b:2", "c:1"}, got)
}

func TestSummaryCSV(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, sampleSummary().writeCSV(&b))
	rows, err := csv.NewReader(&b).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 7)
	assert.Equal(t, []string{"section", "figure", "unit", "zredis", "redis", "ratio", "better"}, rows[0])
	assert.Equal(t, []string{"throughput", "P1 SET 3B", "rps", "150000", "100000", "1.5", "higher"}, rows[1])
	assert.Equal(t, []string{"throughput", "P1 geomean (1 cells)", "rps", "", "", "1.5", "higher"}, rows[2])
	assert.Equal(t, []string{"memory (RSS)", "strings <10 B>", "B/elem", "120.5", "60.25", "2", "lower"}, rows[3])
	assert.Equal(t, "", rows[4][6])
}

func TestSummarySVG(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, sampleSummary().writeSVG(&b, "zredis & redis"))
	svg := b.String()
	// Well-formed XML.
	d := xml.NewDecoder(strings.NewReader(svg))
	for {
		_, err := d.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, svg)
	}
	assert.Contains(t, svg, "zredis &amp; redis")
	assert.Contains(t, svg, "strings &lt;10 B&gt;")
	// Five plotted bars (used_memory is not plotted): three leading, two
	// trailing; the line at 1.0 is drawn.
	assert.Equal(t, 5, strings.Count(svg, "<rect x="))
	assert.Equal(t, 3, strings.Count(svg, `fill="#2a9d3a"`))
	assert.Equal(t, 2, strings.Count(svg, `fill="#d1495b"`))
	assert.Contains(t, svg, `stroke="#000"`)
	// Mixed units: in the labels, not the section's heading.
	assert.Contains(t, svg, "SET time (ms)")
	assert.Contains(t, svg, "throughput (rps, higher is better)")
}

func TestNum(t *testing.T) {
	for v, want := range map[float64]string{
		745: "745", 123456.7: "123457", 60.25: "60.2", 0.0456: "0.046", 3: "3",
	} {
		assert.Equal(t, want, num(v), "%v", v)
	}
	assert.Equal(t, "-", num(math.NaN()))
}

func TestSummaryPrint(t *testing.T) {
	var b bytes.Buffer
	sampleSummary().print(&b, false)
	out := b.String()
	assert.Contains(t, out, "P1 SET 3B")
	assert.Regexp(t, `P1 SET 3B\s+rps\s+150000\s+100000\s+1\.50 lead`, out)
	assert.Regexp(t, `strings <10 B>\s+B/elem\s+120\.5\s+60\.2\s+2\.00 trail`, out)
}

func TestReplicaState(t *testing.T) {
	info := "# Replication\r\nrole:master\r\nconnected_slaves:1\r\nslave0:ip=127.0.0.1,port=17002,state=online,offset=120,lag=0\r\nmaster_repl_offset:150\r\n"
	state, acked, offset, err := replicaState(info)
	require.NoError(t, err)
	assert.Equal(t, "online", state)
	assert.Equal(t, int64(120), acked)
	assert.Equal(t, int64(150), offset)
	_, _, _, err = replicaState("# Replication\r\nrole:master\r\nconnected_slaves:0\r\nmaster_repl_offset:0\r\n")
	assert.Error(t, err)
}

func TestParseInts(t *testing.T) {
	v, err := parseInts("3, 1024")
	require.NoError(t, err)
	assert.Equal(t, []int{3, 1024}, v)
	for _, bad := range []string{"", "0", "3,x", "-1"} {
		_, err := parseInts(bad)
		assert.Error(t, err, bad)
	}
}

func TestReadReply(t *testing.T) {
	in := "+OK\r\n:12\r\n$3\r\nabc\r\n$-1\r\n*2\r\n$1\r\na\r\n:1\r\n-ERR boom\r\n*2\r\n-ERR x\r\n:1\r\n"
	rc := &rconn{r: bufio.NewReader(strings.NewReader(in))}
	for _, want := range []string{"OK", "12", "abc", "", ""} {
		got, err := rc.readReply()
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	_, err := rc.readReply()
	assert.EqualError(t, err, "ERR boom")
	_, err = rc.readReply()
	assert.EqualError(t, err, "ERR x")
	_, err = rc.readReply()
	assert.Error(t, err) // EOF
}

func TestInfoField(t *testing.T) {
	info := "# Memory\r\nused_memory:123\r\nused_memory_human:123B\r\n"
	v, err := infoField(info, "used_memory")
	require.NoError(t, err)
	assert.Equal(t, int64(123), v)
	_, err = infoField(info, "used_memory_rss")
	assert.Error(t, err)
}

// TestSelectShapes checks -memory-shapes: hyphenated names, the table's
// order, and an unknown name refused with the list of shapes.
func TestSelectShapes(t *testing.T) {
	all, err := selectShapes("")
	require.NoError(t, err)
	assert.Len(t, all, len(memShapes))
	got, err := selectShapes("list-elements,strings-with-TTL")
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, "strings with TTL", got[0].name)
	assert.Equal(t, "list elements", got[1].name)
	_, err = selectShapes("strings,lists")
	assert.ErrorContains(t, err, "strings,strings-with-TTL,strings-with-own-TTL,small-hashes")
}
