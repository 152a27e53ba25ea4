package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The memory benchmark measures memory as a user sees it: the growth of
// the server process's resident set (VmRSS) from a fresh, idle server to
// the same server holding -memn elements of one shape, loaded with
// redis-cli --pipe. Every shape gets a fresh server of each kind, one
// after the other, so that nothing one shape left behind (freed but
// retained pages, a grown hash table) is counted for the next.
//
// Three readings per shape and server, each as growth over the fresh
// server divided by the elements:
//   - RSS: one second after the load, as a user's ps shows it;
//   - RSS after MEMORY PURGE: zredis runs a full collection and returns
//     free pages to the OS, redis-server asks jemalloc to purge;
//   - used_memory (after the purge): redis's bytes allocated through
//     zmalloc; for zredis the Go heap's live objects (allocator_allocated),
//     since its used_memory is an estimate kept per key.
//
// Then -memn more elements of the shape (the next keys, members or
// fields: the same big key grows) are loaded, and the RSS growth over
// the reading after MEMORY PURGE is the "second load". The first load's
// growth holds, besides the elements, what a server takes on at its
// first load whatever its size: for zredis the runtime's metadata for
// a larger heap and its first collections (about 1.2 MB measured with
// runtime/metrics for a million list elements), the binary's function
// tables those collections read as they scan stacks (file pages,
// 0.1-0.8 MB), less the start-up garbage the first collection frees
// for reuse. The second load's growth is the elements' alone, and where
// the first million left a hash table just grown (or about to grow),
// the second shows the other side of its steps.

// memElements is -memn's default: elements loaded per shape.
const memElements = 1000000

// memSettle is the pause between the end of a load and the RSS reading.
const memSettle = time.Second

// memShape is one memory workload. Loading n elements sends commands
// of up to per elements each; gen appends the command that adds
// elements first .. first+count-1.
type memShape struct {
	name string
	desc string
	per  int
	gen  func(b []byte, first, count int) []byte
}

// Keys, members, fields and values are 10 bytes where the shape allows
// ("v000000042", "m000000042"), not decimal-looking, so redis-server
// keeps them as strings as the mail queue's ids would be.
var memShapes = []memShape{
	{"strings", "SET key:N v<9 digits> (10-byte values)", 1, func(b []byte, first, _ int) []byte {
		b = appendArray(b, 3)
		b = appendBulk(b, "SET")
		b = appendBulkNum(b, "key:", first)
		return appendTen(b, 'v', first)
	}},
	{"strings with TTL", "SETEX key:N 86400 v<9 digits>", 1, func(b []byte, first, _ int) []byte {
		b = appendArray(b, 4)
		b = appendBulk(b, "SETEX")
		b = appendBulkNum(b, "key:", first)
		b = appendBulk(b, "86400")
		return appendTen(b, 'v', first)
	}},
	// A deadline of its own for each key, later than the one before (a
	// queue's messages arriving a millisecond or more apart): the
	// expiry index holds one deadline per key, where SETEX's load at a
	// million a second gives a few hundred keys each millisecond.
	{"strings with own TTL", "PSETEX key:N 86400000+N v<9 digits> (a deadline each)", 1, func(b []byte, first, _ int) []byte {
		b = appendArray(b, 4)
		b = appendBulk(b, "PSETEX")
		b = appendBulkNum(b, "key:", first)
		b = appendBulkNum(b, "", 86_400_000+first)
		return appendTen(b, 'v', first)
	}},
	// Five fields per hash: a message's metadata; redis-server keeps a
	// hash this small as a listpack. An element is one field.
	{"small hashes", "HSET hash:N field1..field5 with 10-byte values; n/5 hashes, per field", smallHashFields, func(b []byte, first, count int) []byte {
		b = appendArray(b, 2+2*count)
		b = appendBulk(b, "HSET")
		b = appendBulkNum(b, "hash:", first/smallHashFields)
		for j := 0; j < count; j++ {
			b = appendBulkNum(b, "field", j+1)
			b = appendTen(b, 'v', first+j)
		}
		return b
	}},
	{"hash fields", "one hash, HSET bighash f<9 digits> v<9 digits>", 100, func(b []byte, first, count int) []byte {
		b = appendArray(b, 2+2*count)
		b = appendBulk(b, "HSET")
		b = appendBulk(b, "bighash")
		for i := first; i < first+count; i++ {
			b = appendTen(b, 'f', i)
			b = appendTen(b, 'v', i)
		}
		return b
	}},
	{"set members", "one set, SADD bigset m<9 digits>", 100, func(b []byte, first, count int) []byte {
		b = appendArray(b, 2+count)
		b = appendBulk(b, "SADD")
		b = appendBulk(b, "bigset")
		for i := first; i < first+count; i++ {
			b = appendTen(b, 'm', i)
		}
		return b
	}},
	{"zset members", "one sorted set, ZADD bigzset N m<9 digits>", 100, func(b []byte, first, count int) []byte {
		b = appendArray(b, 2+2*count)
		b = appendBulk(b, "ZADD")
		b = appendBulk(b, "bigzset")
		for i := first; i < first+count; i++ {
			b = appendBulkNum(b, "", i)
			b = appendTen(b, 'm', i)
		}
		return b
	}},
	{"stream entries", "one stream, XADD bigstream * f v<9 digits>", 1, func(b []byte, first, _ int) []byte {
		b = appendArray(b, 5)
		b = appendBulk(b, "XADD")
		b = appendBulk(b, "bigstream")
		b = appendBulk(b, "*")
		b = appendBulk(b, "f")
		return appendTen(b, 'v', first)
	}},
	{"list elements", "one list, RPUSH biglist v<9 digits>", 100, func(b []byte, first, count int) []byte {
		b = appendArray(b, 2+count)
		b = appendBulk(b, "RPUSH")
		b = appendBulk(b, "biglist")
		for i := first; i < first+count; i++ {
			b = appendTen(b, 'v', i)
		}
		return b
	}},
}

// smallHashFields is the number of fields of each small hash.
const smallHashFields = 5

// appendTen appends the 10-byte bulk string c followed by i in nine
// zero-padded digits.
func appendTen(b []byte, c byte, i int) []byte {
	b = append(b, "$10\r\n"...)
	b = append(b, c)
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], int64(i%1000000000), 10)
	for k := len(d); k < 9; k++ {
		b = append(b, '0')
	}
	b = append(b, d...)
	return append(b, '\r', '\n')
}

// secondLoad is where a second load of sh after n elements starts: at
// the next command's batch, whose elements (a small hash's fields) the
// first load has not begun.
func secondLoad(sh memShape, n int) int { return (n + sh.per - 1) / sh.per * sh.per }

// writeShape writes the commands that load n elements of sh to w, from
// element from on.
func writeShape(w io.Writer, sh memShape, from, n int) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var buf []byte
	for first := from; first < from+n; first += sh.per {
		buf = sh.gen(buf[:0], first, min(sh.per, from+n-first))
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// memResult is one shape on one server; memory in bytes.
type memResult struct {
	rss0, rss, rssPurged int64 // VmRSS: fresh, after the load, after MEMORY PURGE
	rss2                 int64 // VmRSS after the second load
	used0, used          int64 // used_memory (see above): fresh, after the purge
	load                 time.Duration
}

// perElement is the growth from fresh to after over n elements.
func perElement(before, after int64, n int) float64 {
	return float64(after-before) / float64(n)
}

// memSide is one kind of server the memory part loads.
type memSide struct{ name, bin string }

// memoryBench loads each shape into a fresh server of each kind (zredis,
// redis, and valkey with -valkey) and prints the growth per element and
// the ratios.
func memoryBench(ctx context.Context, o options, w io.Writer) error {
	sides := []memSide{{"zredis", o.zredisBin}, {"redis", o.redisBin}}
	if o.valkeyBin != "" {
		sides = append(sides, memSide{"valkey", o.valkeyBin})
	}
	shapes, err := selectShapes(o.memShapes)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "memory: %d elements per shape loaded with redis-cli --pipe into a fresh server of each kind\n", o.memN)
	res := make([][]memResult, len(shapes))
	for i, sh := range shapes {
		res[i] = make([]memResult, len(sides))
		for j, side := range sides {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s, err := startServer(ctx, side.name, side.bin, noSave()...)
			if err != nil {
				return err
			}
			m, err := memoryShape(ctx, o, s, sh)
			if err == nil && s.exited() {
				err = fmt.Errorf("exited:\n%s", s.out)
			}
			s.stop()
			if err != nil {
				return fmt.Errorf("memory, %s on %s: %v", sh.name, side.name, err)
			}
			res[i][j] = m
			fmt.Fprintf(w, "  %-17s %-6s RSS %4d -> %5d MB (%5d after PURGE, %5d after a second load)  used_memory +%d MB  load %5.2f s\n",
				sh.name, side.name, m.rss0>>20, m.rss>>20, m.rssPurged>>20, m.rss2>>20, (m.used-m.used0)>>20, m.load.Seconds())
		}
	}
	fmt.Fprintln(w)
	reportMemory(w, o, shapes, sides, res)
	return nil
}

// shapeFlag is a shape's name as -memory-shapes takes it: hyphens for
// spaces ("strings-with-TTL").
func shapeFlag(sh memShape) string { return strings.ReplaceAll(sh.name, " ", "-") }

// selectShapes returns the shapes -memory-shapes names, in the table's
// order ("": all of them).
func selectShapes(spec string) ([]memShape, error) {
	if spec == "" {
		return memShapes, nil
	}
	want := strings.Split(spec, ",")
	var shapes []memShape
	for _, sh := range memShapes {
		if slices.Contains(want, shapeFlag(sh)) {
			shapes = append(shapes, sh)
		}
	}
	if len(shapes) != len(want) {
		names := make([]string, len(memShapes))
		for i, sh := range memShapes {
			names[i] = shapeFlag(sh)
		}
		return nil, fmt.Errorf("-memory-shapes %q: the shapes are %s", spec, strings.Join(names, ","))
	}
	return shapes, nil
}

// reportMemory prints one table of zredis (sides[0], res[shape][0])
// against each other side, and adds the figures to the summary: those
// against valkey in sections of their own (", vs valkey"), each after
// its redis one.
func reportMemory(w io.Writer, o options, shapes []memShape, sides []memSide, res [][]memResult) {
	n := o.memN
	// figs[metric][ref]: the summary's figures, added metric by metric.
	figs := make([][][]figure, 4)
	for m := range figs {
		figs[m] = make([][]figure, len(sides))
	}
	for j := 1; j < len(sides); j++ {
		ref := sides[j].name
		suffix := ""
		if ref != "redis" {
			suffix = ", vs " + ref
		}
		r0 := ref[:1] // the columns' prefix, as "z" is zredis's
		fmt.Fprintf(w, "memory: growth per element over %d elements from a fresh server; ratio = zredis/%s\n", n, ref)
		if j == 1 {
			fmt.Fprintf(w, "RSS: VmRSS %v after the load; purged: VmRSS after MEMORY PURGE; used: used_memory (zredis: Go heap live objects); 2nd: VmRSS growth of a second load of as many\n", memSettle)
		}
		fmt.Fprintf(w, "%-17s %9s %9s %6s %9s %9s %6s %9s %9s %6s %9s %9s %6s %8s %8s\n", "shape (B/elem)",
			"z RSS", r0+" RSS", "ratio", "z purged", r0+" purged", "ratio", "z used", r0+" used", "ratio", "z 2nd", r0+" 2nd", "ratio", "z load", r0+" load")
		for i, sh := range shapes {
			z, r := res[i][0], res[i][j]
			zr, rr := perElement(z.rss0, z.rss, n), perElement(r.rss0, r.rss, n)
			zp, rp := perElement(z.rss0, z.rssPurged, n), perElement(r.rss0, r.rssPurged, n)
			zu, ru := perElement(z.used0, z.used, n), perElement(r.used0, r.used, n)
			z2, r2 := perElement(z.rssPurged, z.rss2, n), perElement(r.rssPurged, r.rss2, n)
			fmt.Fprintf(w, "%-17s %9.1f %9.1f %6.2f %9.1f %9.1f %6.2f %9.1f %9.1f %6.2f %9.1f %9.1f %6.2f %7.2fs %7.2fs\n", sh.name,
				zr, rr, ratioOf(zr, rr), zp, rp, ratioOf(zp, rp), zu, ru, ratioOf(zu, ru), z2, r2, ratioOf(z2, r2), z.load.Seconds(), r.load.Seconds())
			figs[0][j] = append(figs[0][j], figure{section: "memory (RSS)" + suffix, name: sh.name, unit: "B/elem", z: zr, r: rr, ratio: ratioOf(zr, rr), better: lower})
			figs[1][j] = append(figs[1][j], figure{section: "memory (RSS, purged)" + suffix, name: sh.name, unit: "B/elem", z: zp, r: rp, ratio: ratioOf(zp, rp), better: lower})
			figs[2][j] = append(figs[2][j], figure{section: "memory (used_memory)" + suffix, name: sh.name, unit: "B/elem", z: zu, r: ru, ratio: ratioOf(zu, ru), better: neither})
			figs[3][j] = append(figs[3][j], figure{section: "memory (RSS, second load)" + suffix, name: sh.name, unit: "B/elem", z: z2, r: r2, ratio: ratioOf(z2, r2), better: lower})
		}
		fmt.Fprintln(w)
	}
	for _, metric := range figs {
		for _, ref := range metric {
			for _, f := range ref {
				o.sum.add(f)
			}
		}
	}
	fmt.Fprintln(w, "shapes:")
	for _, sh := range shapes {
		fmt.Fprintf(w, "  %-17s %s\n", sh.name, sh.desc)
	}
	fmt.Fprintln(w)
}

// memoryShape reads s's memory fresh, loads n elements of sh through
// redis-cli --pipe and reads it again.
func memoryShape(ctx context.Context, o options, s *server, sh memShape) (memResult, error) {
	var m memResult
	rc, err := dialServer(s)
	if err != nil {
		return m, err
	}
	defer rc.Close()
	pid := s.cmd.Process.Pid
	if m.used0, err = usedMemory(rc); err != nil {
		return m, err
	}
	if m.rss0, err = procStatus(pid, "VmRSS:"); err != nil {
		return m, err
	}
	start := time.Now()
	if err := pipeLoad(ctx, o.cliBin, s.port, func(w io.Writer) error { return writeShape(w, sh, 0, o.memN) }); err != nil {
		return m, err
	}
	m.load = time.Since(start)
	time.Sleep(memSettle)
	if m.rss, err = procStatus(pid, "VmRSS:"); err != nil {
		return m, err
	}
	if m.used, err = usedMemory(rc); err != nil {
		return m, err
	}
	time.Sleep(100 * time.Millisecond) // jemalloc's purge and Go's scavenger return pages asynchronously
	if m.rssPurged, err = procStatus(pid, "VmRSS:"); err != nil {
		return m, err
	}
	if err := pipeLoad(ctx, o.cliBin, s.port, func(w io.Writer) error { return writeShape(w, sh, secondLoad(sh, o.memN), o.memN) }); err != nil {
		return m, err
	}
	time.Sleep(memSettle)
	m.rss2, err = procStatus(pid, "VmRSS:")
	return m, err
}

// pipeLoad runs redis-cli --pipe against port with what write produces
// on its standard input, and fails unless every reply was a success.
func pipeLoad(ctx context.Context, cli string, port int, write func(io.Writer) error) error {
	cmd := exec.CommandContext(ctx, cli, "-h", "127.0.0.1", "-p", strconv.Itoa(port), "--pipe")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	werr := write(in)
	in.Close()
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("redis-cli --pipe: %v\n%s", err, out.String())
	}
	if werr != nil {
		return werr
	}
	return pipeErrors(out.String())
}

var pipeSummary = regexp.MustCompile(`errors: (\d+), replies: (\d+)`)

// pipeErrors checks redis-cli --pipe's closing line "errors: E,
// replies: R".
func pipeErrors(out string) error {
	m := pipeSummary.FindStringSubmatch(out)
	if m == nil {
		return fmt.Errorf("redis-cli --pipe: no summary line in %q", out)
	}
	if m[1] != "0" {
		return fmt.Errorf("redis-cli --pipe: %s error replies:\n%s", m[1], strings.TrimSpace(out))
	}
	return nil
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
