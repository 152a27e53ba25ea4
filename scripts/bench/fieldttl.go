package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// The field-TTL throughput part: the per-field hash TTL commands of
// Redis 7.4 (HPEXPIRE, HEXPIRE, HTTL) and 8.0 (HSETEX) under
// redis-benchmark, at each pipeline depth, as the throughput grid runs
// its cells. redis-server 7.0, the grid's reference, has none of them:
// zredis runs alone, with a redis-server 7.4 (or later) beside it when
// -redis74 names one; runs then alternate between the two and the ratio
// is taken per round, as in the grid. A command the reference is too old
// for (HSETEX before 8.0) runs on zredis alone.

// Every test works on hfieldKeys hashes hb:000000000000 ..
// hb:000000009999 (redis-benchmark's hb:__rand_int__ under -r
// hfieldKeys), each of fields f1..f5; f4 and f5 have a one-hour TTL, so
// the hashes are of the kind that has volatile fields (7.4 stores them
// in another encoding) and HTTL reads a TTL that is there.
const (
	hfieldKeys   = 10000
	hfieldFields = 5
)

// fieldTest is one field-TTL workload and the Redis version that has its
// command.
type fieldTest struct {
	test
	since [2]int // major, minor
}

// fieldArgs is the redis-benchmark arguments of a field-TTL test: -r
// first, which overrides runBench's keyspaceSize (redis-benchmark reads
// its options in order and takes the first argument that is not one as
// the command).
func fieldArgs(args ...string) func(int) []string {
	return fixed(append([]string{"-r", strconv.Itoa(hfieldKeys)}, args...)...)
}

var fieldTests = []fieldTest{
	{test{"HPEXPIRE", fieldArgs("HPEXPIRE", "hb:__rand_int__", "3600000", "FIELDS", "1", "f1"), fillFieldHashes}, [2]int{7, 4}},
	{test{"HEXPIRE", fieldArgs("HEXPIRE", "hb:__rand_int__", "3600", "FIELDS", "1", "f1"), fillFieldHashes}, [2]int{7, 4}},
	{test{"HSETEX PX", fieldArgs("HSETEX", "hb:__rand_int__", "PX", "3600000", "FIELDS", "1", "f2", "xxx"), fillFieldHashes}, [2]int{8, 0}},
	{test{"HTTL", fieldArgs("HTTL", "hb:__rand_int__", "FIELDS", "1", "f4"), fillFieldHashes}, [2]int{7, 4}},
}

// fillFieldHashes puts the hfieldKeys hashes into their starting state:
// deleted first, so that no TTL a previous run gave survives.
func fillFieldHashes(rc *rconn, _, _ int) error {
	return rc.load(3*hfieldKeys, fieldHashCmd)
}

// fieldHashCmd appends the i-th of fillFieldHashes' commands: DEL, HSET
// and HPEXPIRE of each hash in turn.
func fieldHashCmd(b []byte, i int) []byte {
	key := fmt.Sprintf("hb:%012d", i/3)
	switch i % 3 {
	case 0:
		return appendCmd(b, "DEL", key)
	case 1:
		b = appendArray(b, 2+2*hfieldFields)
		b = appendBulk(b, "HSET")
		b = appendBulk(b, key)
		for f := 1; f <= hfieldFields; f++ {
			b = appendBulkNum(b, "f", f)
			b = appendBulk(b, "xxx")
		}
		return b
	}
	return appendCmd(b, "HPEXPIRE", key, "3600000", "FIELDS", "2", "f4", "f5")
}

var versionRE = regexp.MustCompile(`\bv=(\d+)\.(\d+)`)

// serverVersion reads major and minor out of bin --version.
func serverVersion(bin string) (v [2]int, ok bool) {
	return parseVersion(firstLine(bin, "--version"))
}

// parseVersion reads major and minor out of a --version line ("Redis
// server v=7.4.1 ..."); ok is false when it holds no version.
func parseVersion(line string) (v [2]int, ok bool) {
	m := versionRE.FindStringSubmatch(line)
	if m == nil {
		return v, false
	}
	v[0], _ = strconv.Atoi(m[1])
	v[1], _ = strconv.Atoi(m[2])
	return v, true
}

// refLabel names the reference of the field-TTL parts.
func refLabel(v [2]int) string { return fmt.Sprintf("redis %d.%d", v[0], v[1]) }

// atLeast reports whether version v is want or later.
func atLeast(v, want [2]int) bool {
	return v[0] > want[0] || v[0] == want[0] && v[1] >= want[1]
}

// fieldCell is one (pipeline, test) pair; r is empty when the reference
// does not run the test.
type fieldCell struct {
	cell
	onRef bool
}

// fieldTTLBench runs the field-TTL tests on a fresh zredis, and a fresh
// redis-server 7.4 with -redis74, and prints one table per pipeline.
func fieldTTLBench(ctx context.Context, o options, w io.Writer) error {
	if o.self {
		fmt.Fprintln(w, "field TTL throughput: skipped, the redis-server in zredis's place (-against-self) has no field TTLs")
		fmt.Fprintln(w)
		return nil
	}
	z, err := startServer(ctx, "zredis", o.zredisBin, noSave()...)
	if err != nil {
		return err
	}
	defer z.stop()
	var ref *server
	var refVer [2]int
	refName := "redis 7.4"
	if o.redis74Bin != "" {
		refVer, refName = o.redis74Ver, refLabel(o.redis74Ver)
		if ref, err = startServer(ctx, "redis74", o.redis74Bin, noSave()...); err != nil {
			return err
		}
		defer ref.stop()
	}
	servers := []*server{z}
	if ref != nil {
		servers = append(servers, ref)
		fmt.Fprintf(w, "field TTL throughput: zredis 127.0.0.1:%d  %s 127.0.0.1:%d  clients: %d  hashes (-r): %d of %d fields\n",
			z.port, refName, ref.port, o.clients, hfieldKeys, hfieldFields)
	} else {
		fmt.Fprintf(w, "field TTL throughput: zredis 127.0.0.1:%d alone (redis-server 7.0 has no field TTLs; -redis74 adds a 7.4)  clients: %d  hashes (-r): %d of %d fields\n",
			z.port, o.clients, hfieldKeys, hfieldFields)
	}

	var cells []*fieldCell
	for _, p := range o.pipelines {
		for _, t := range fieldTests {
			cells = append(cells, &fieldCell{cell: cell{pipeline: p, size: 3, test: t.test, n: o.n},
				onRef: ref != nil && atLeast(refVer, t.since)})
		}
	}
	// Both servers of a cell run the same n: calibrated on the reference
	// where it runs the test (as the grid calibrates on redis-server),
	// on zredis where it does not. The other server's probe is a warm-up.
	if o.n == 0 {
		fmt.Printf("calibrating -n for %v per run...\n", o.target)
		for _, c := range cells {
			probe := 20000 * c.pipeline
			var res result
			for _, s := range servers {
				if s == ref && !c.onRef {
					continue
				}
				if res, err = runBench(ctx, o, s, &c.cell, probe); err != nil {
					return err
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
			zr, err := runBench(ctx, o, z, &c.cell, c.n)
			if err != nil {
				return err
			}
			c.z = append(c.z, zr)
			line := fmt.Sprintf("  P%-3d %-10s n=%-9d zredis %s", c.pipeline, c.test.name, c.n, brief(zr))
			if c.onRef {
				rr, err := runBench(ctx, o, ref, &c.cell, c.n)
				if err != nil {
					return err
				}
				c.r = append(c.r, rr)
				line += "   " + refName + " " + brief(rr)
			}
			fmt.Println(line)
		}
	}
	fmt.Println()
	for _, s := range servers {
		if s.exited() {
			return fmt.Errorf("%s exited during the benchmark:\n%s", s.name, s.out)
		}
	}
	for _, f := range reportFieldTTL(w, o, refName, ref != nil, cells) {
		o.sum.add(f)
	}
	return nil
}

// fieldSummary is summarize for a field cell: of zredis alone, with no
// reference figures, where the reference does not run the test.
func fieldSummary(c *fieldCell) summary {
	if c.onRef {
		return summarize(&c.cell)
	}
	s := summary{rRPS: math.NaN(), rpsRatio: math.NaN(), rP99: math.NaN(), p99Ratio: math.NaN(),
		rCPU: math.NaN(), cpuRatio: math.NaN()}
	var zr, zp, zc, cl []float64
	for _, a := range c.z {
		if a.err != "" {
			if s.firstErr == "" {
				s.firstErr = "zredis: " + a.err
			}
			continue
		}
		s.ok++
		zr, zp, zc, cl = append(zr, a.rps), append(zp, a.p99), append(zc, a.cpuPerReq), append(cl, a.clientCPU)
	}
	s.zRPS, s.zP99, s.zCPU, s.clientCPU = median(zr), median(zp), median(zc), median(cl)
	return s
}

// reportFieldTTL prints the tables and returns the summary's figures:
// rps and p99 per cell, and per pipeline the geometric mean of the
// ratios of the cells that have one.
func reportFieldTTL(w io.Writer, o options, refName string, ref bool, cells []*fieldCell) []figure {
	dash := func(v float64, prec int) string {
		if math.IsNaN(v) {
			return "-"
		}
		return strconv.FormatFloat(v, 'f', prec, 64)
	}
	// The summary's redis column is the reference here, not 7.0: its
	// sections say which, when there is one.
	ver := strings.TrimPrefix(refName, "redis ")
	rpsSec, p99Sec := "field TTL rps", "field TTL p99"
	if ref {
		rpsSec, p99Sec = rpsSec+", vs "+ver, p99Sec+", vs "+ver
	}
	var errs []string
	var rps, p99 []figure
	for _, p := range o.pipelines {
		if ref {
			fmt.Fprintf(w, "field TTL, pipeline %d, %d clients, median of %d round(s); ratio = zredis/%s per round, then median; p99 in ms\n",
				p, o.clients, o.rounds, refName)
			fmt.Fprintf(w, "%-10s %9s %11s %11s %9s %11s %11s %9s %9s %7s\n",
				"test", "n", "zredis rps", ver+" rps", "rps ratio", "zredis p99", ver+" p99", "p99 ratio", "z cpu/op", "client")
		} else {
			fmt.Fprintf(w, "field TTL, pipeline %d, %d clients, median of %d round(s), zredis alone; p99 in ms\n", p, o.clients, o.rounds)
			fmt.Fprintf(w, "%-10s %9s %11s %11s %9s %7s\n", "test", "n", "zredis rps", "zredis p99", "z cpu/op", "client")
		}
		var rr, pr []float64
		for _, c := range cells {
			if c.pipeline != p {
				continue
			}
			s := fieldSummary(c)
			switch {
			case s.ok == 0:
				fmt.Fprintf(w, "%-10s %9d %11s\n", c.test.name, c.n, "failed")
			case !ref:
				fmt.Fprintf(w, "%-10s %9d %11.0f %11.3f %9.2f %7.2f\n", c.test.name, c.n, s.zRPS, s.zP99, s.zCPU, s.clientCPU)
			default:
				fmt.Fprintf(w, "%-10s %9d %11.0f %11s %9s %11.3f %11s %9s %9.2f %7.2f\n",
					c.test.name, c.n, s.zRPS, dash(s.rRPS, 0), dash(s.rpsRatio, 2), s.zP99, dash(s.rP99, 3), dash(s.p99Ratio, 2),
					s.zCPU, s.clientCPU)
			}
			if s.firstErr != "" {
				errs = append(errs, fmt.Sprintf("P%d %s (%d/%d rounds failed): %s", p, c.test.name, o.rounds-s.ok, o.rounds, s.firstErr))
			}
			name := fmt.Sprintf("P%d %s", p, c.test.name)
			rps = append(rps, figure{section: rpsSec, name: name, unit: "rps",
				z: s.zRPS, r: s.rRPS, ratio: s.rpsRatio, better: higher})
			p99 = append(p99, figure{section: p99Sec, name: name, unit: "ms",
				z: s.zP99, r: s.rP99, ratio: s.p99Ratio, better: lower})
			if s.ok > 0 && !math.IsNaN(s.rpsRatio) {
				rr, pr = append(rr, s.rpsRatio), append(pr, s.p99Ratio)
			}
		}
		if len(rr) > 0 {
			rps = append(rps, figure{section: rpsSec, name: fmt.Sprintf("P%d geomean (%d cells)", p, len(rr)),
				unit: "rps", z: math.NaN(), r: math.NaN(), ratio: geomean(rr), better: higher})
			p99 = append(p99, figure{section: p99Sec, name: fmt.Sprintf("P%d geomean (%d cells)", p, len(pr)),
				unit: "ms", z: math.NaN(), r: math.NaN(), ratio: geomean(pr), better: lower})
		}
		fmt.Fprintln(w)
	}
	if len(errs) > 0 {
		fmt.Fprintln(w, "failed runs (left out of the medians):")
		for _, e := range errs {
			fmt.Fprintln(w, "  "+e)
		}
		fmt.Fprintln(w)
	}
	return append(rps, p99...)
}
