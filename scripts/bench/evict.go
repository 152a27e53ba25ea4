package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
)

// evictBench runs SET of 1 kB values over keyspaceSize random keys (about
// 100 MB) on a fresh pair of servers with maxmemory 32mb and allkeys-lru,
// so that nearly every SET evicts a key; a first run fills the servers
// and is not counted. It prints the median throughput, p99 and the RSS
// each server ended with.
func evictBench(ctx context.Context, o options, w io.Writer) error {
	const n = 200000
	fmt.Fprintf(w, "Eviction: SET -d 1000, %d clients, pipeline 1, maxmemory 32mb allkeys-lru; median of %d round(s)\n", o.clients, o.rounds)
	var servers [2]*server
	for i, name := range []string{"zredis", "redis"} {
		bin := o.zredisBin
		if name == "redis" {
			bin = o.redisBin
		}
		s, err := startServer(ctx, name, bin, noSave("--maxmemory", "32mb", "--maxmemory-policy", "allkeys-lru")...)
		if err != nil {
			for _, s := range servers[:i] {
				s.stop()
			}
			return err
		}
		servers[i] = s
	}
	defer servers[0].stop()
	defer servers[1].stop()
	c := &cell{pipeline: 1, test: test{name: "SET", args: fixed("-t", "set", "-d", "1000")}}
	var rps, p99 [2][]float64
	for round := -1; round < o.rounds; round++ {
		for i, s := range servers {
			res, err := runBench(ctx, o, s, c, n)
			if err != nil {
				return err
			}
			if res.err != "" {
				return fmt.Errorf("%s: %s", s.name, res.err)
			}
			if round >= 0 {
				rps[i], p99[i] = append(rps[i], res.rps), append(p99[i], res.p99)
			}
		}
	}
	fmt.Fprintf(w, "%12s %12s %9s %11s %11s %10s %10s\n", "zredis rps", "redis rps", "ratio", "zredis p99", "redis p99", "zredis RSS", "redis RSS")
	z, r := median(rps[0]), median(rps[1])
	zp, rp := median(p99[0]), median(p99[1])
	fmt.Fprintf(w, "%12.0f %12.0f %9.2f %11.3f %11.3f %9dM %9dM\n\n", z, r, z/r, zp, rp,
		vmRSS(servers[0])>>20, vmRSS(servers[1])>>20)
	o.sum.add(figure{section: "eviction: throughput", name: "SET 1000B, maxmemory 32mb", unit: "rps", z: z, r: r, ratio: ratioOf(z, r), better: higher})
	o.sum.add(figure{section: "eviction: p99", name: "SET 1000B, maxmemory 32mb", unit: "ms", z: zp, r: rp, ratio: ratioOf(zp, rp), better: lower})
	return nil
}

// vmRSS is a server's resident set size (0 where /proc has none).
func vmRSS(s *server) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	m := regexp.MustCompile(`(?m)^VmRSS:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		return 0
	}
	kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return kb << 10
}
