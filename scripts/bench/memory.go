package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// memElements is the number of elements each memory case loads.
const memElements = 1000000

// memCase is one memory workload: count commands, the i-th built by gen,
// adding memElements elements in all.
type memCase struct {
	name  string
	count int
	gen   func(b []byte, i int) []byte
}

var memCases = []memCase{
	{"hash, 1M fields", memElements, func(b []byte, i int) []byte {
		b = appendArray(b, 4)
		b = appendBulk(b, "HSET")
		b = appendBulk(b, "bighash")
		b = appendBulkNum(b, "field:", i)
		return appendBulkNum(b, "value:", i)
	}},
	{"set, 1M members", memElements, func(b []byte, i int) []byte {
		b = appendArray(b, 3)
		b = appendBulk(b, "SADD")
		b = appendBulk(b, "bigset")
		return appendBulkNum(b, "member:", i)
	}},
	{"zset, 1M members", memElements, func(b []byte, i int) []byte {
		b = appendArray(b, 4)
		b = appendBulk(b, "ZADD")
		b = appendBulk(b, "bigzset")
		b = appendBulkNum(b, "", i)
		return appendBulkNum(b, "member:", i)
	}},
	// Four 10-byte fields with 10-byte values: small enough for Redis's
	// listpack encoding.
	{"1M hashes, 4 f", memElements, func(b []byte, i int) []byte {
		b = appendArray(b, 10)
		b = appendBulk(b, "HSET")
		b = appendBulkNum(b, "hash:", i)
		for f := 1; f <= 4; f++ {
			b = appendBulkNum(b, "fieldname", f)
			b = appendBulkNum(b, "v:", 10000000+i%10000000)
		}
		return b
	}},
}

// memResult is one case on one server.
type memResult struct {
	before, after int64 // used_memory, bytes
	load          time.Duration
}

func (m memResult) perElement() float64 {
	return float64(m.after-m.before) / memElements
}

// memoryBench loads each case into a fresh zredis and redis-server pair
// (FLUSHALL between cases) and prints used_memory growth per element.
func memoryBench(ctx context.Context, o options, w io.Writer) error {
	z, err := startServer(ctx, "zredis", o.zredisBin)
	if err != nil {
		return err
	}
	defer z.stop()
	r, err := startServer(ctx, "redis", o.redisBin, "--save", "", "--appendonly", "no")
	if err != nil {
		return err
	}
	defer r.stop()
	fmt.Fprintf(w, "memory: zredis 127.0.0.1:%d  redis 127.0.0.1:%d\n", z.port, r.port)

	res := make([][2]memResult, len(memCases))
	for i, mc := range memCases {
		for j, s := range []*server{z, r} {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			m, err := memoryCase(s, mc)
			if err != nil {
				return fmt.Errorf("memory %s on %s: %v", mc.name, s.name, err)
			}
			res[i][j] = m
			fmt.Fprintf(w, "  %-17s %-6s used_memory %11d -> %11d  load %5.2f s\n",
				mc.name, s.name, m.before, m.after, m.load.Seconds())
		}
	}
	fmt.Fprintln(w)
	reportMemory(w, res)
	for _, s := range []*server{z, r} {
		if s.exited() {
			return fmt.Errorf("%s exited during the memory benchmark:\n%s", s.name, s.out)
		}
	}
	return nil
}

func reportMemory(w io.Writer, res [][2]memResult) {
	fmt.Fprintf(w, "memory: growth per element over %d elements; ratio = zredis/redis\n", memElements)
	fmt.Fprintln(w, "zredis: Go heap's live objects (INFO allocator_allocated) read after MEMORY PURGE (forced GC):")
	fmt.Fprintln(w, "  live objects only, no goroutine stacks, runtime metadata, or free heap spans held by the runtime")
	fmt.Fprintln(w, "redis used_memory = bytes allocated through zmalloc (jemalloc), without allocator fragmentation")
	fmt.Fprintf(w, "%-17s %14s %14s %7s %12s %12s\n", "case", "zredis B/elem", "redis B/elem", "ratio", "zredis load", "redis load")
	for i, mc := range memCases {
		zm, rm := res[i][0], res[i][1]
		zb, rb := zm.perElement(), rm.perElement()
		ratio := "-"
		if rb > 0 {
			ratio = fmt.Sprintf("%.2f", zb/rb)
		}
		fmt.Fprintf(w, "%-17s %14.1f %14.1f %7s %11.2fs %11.2fs\n",
			mc.name, zb, rb, ratio, zm.load.Seconds(), rm.load.Seconds())
	}
	fmt.Fprintln(w)
}

// memoryCase empties s, loads mc and returns used_memory before and after.
func memoryCase(s *server, mc memCase) (memResult, error) {
	rc, err := dialServer(s)
	if err != nil {
		return memResult{}, err
	}
	defer rc.Close()
	var m memResult
	if _, err := rc.do("FLUSHALL"); err != nil {
		return m, err
	}
	if m.before, err = usedMemory(rc); err != nil {
		return m, err
	}
	start := time.Now()
	if err := rc.load(mc.count, mc.gen); err != nil {
		return m, err
	}
	m.load = time.Since(start)
	if m.after, err = usedMemory(rc); err != nil {
		return m, err
	}
	return m, nil
}

// usedMemory runs MEMORY PURGE (on zredis a forced GC that returns freed
// memory to the OS; on redis jemalloc's purge) and reads the memory the
// server's data holds: redis's used_memory (bytes allocated through
// zmalloc); for zredis the Go heap's live objects (allocator_allocated,
// from runtime/metrics), since its used_memory is an estimate kept per
// key that does not see what a snapshot keeps alive.
func usedMemory(rc *rconn) (int64, error) {
	if _, err := rc.do("MEMORY", "PURGE"); err != nil {
		return 0, err
	}
	info, err := rc.do("INFO", "memory")
	if err != nil {
		return 0, err
	}
	if strings.Contains(info, "\ngc_cycles:") { // zredis
		return infoField(info, "allocator_allocated")
	}
	return infoField(info, "used_memory")
}

// infoField returns the integer field name of an INFO reply.
func infoField(info, name string) (int64, error) {
	for _, l := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimRight(l, "\r"), ":")
		if ok && k == name {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in INFO", name)
}
