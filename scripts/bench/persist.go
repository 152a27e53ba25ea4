package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"context"
)

// The persistence benchmark: a BGSAVE of persistKeys keys while another
// client measures SET round trips (p99 idle and during the save), a second
// BGSAVE while keys are overwritten for the memory it keeps alive (see
// saveMemory), then the start-up time of each server loading the file it
// wrote.
const (
	persistKeys  = 1000000
	persistValue = 100 // bytes per value
)

type persistResult struct {
	idleP99, saveP99 time.Duration
	saveTime         time.Duration
	extraMem         int64 // see saveMemory
	written          int64 // memory of the keys overwritten during that save (see saveMemory)
	writtenKeys      int
	dataMem          int64 // used_memory growth from loading the keys
	fileSize         int64
	loadTime         time.Duration
}

func persistBench(ctx context.Context, o options, w io.Writer) error {
	var res [2]persistResult
	for i, name := range []string{"zredis", "redis"} {
		bin := o.zredisBin
		if name == "redis" {
			bin = o.redisBin
		}
		r, err := persistRun(ctx, name, bin)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		res[i] = r
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.3f", float64(d)/1e6) }
	mb := func(n int64) string { return fmt.Sprintf("%.1f", float64(n)/(1<<20)) }
	fmt.Fprintf(w, "persistence: BGSAVE of %d keys (%d-byte values) while one client SETs; then a restart loading the file\n", persistKeys, persistValue)
	fmt.Fprintln(w, "extra memory: a second BGSAVE while one client overwrites random keys; zredis = peak growth of the Go heap")
	fmt.Fprintln(w, "after a full GC (MEMORY PURGE every 50 ms), redis = rdb_last_cow_size; data written = keys overwritten x memory per key")
	fmt.Fprintf(w, "%-36s %12s %12s\n", "", "zredis", "redis")
	fmt.Fprintf(w, "%-36s %12s %12s\n", "SET p99 ms, idle", ms(res[0].idleP99), ms(res[1].idleP99))
	fmt.Fprintf(w, "%-36s %12s %12s\n", "SET p99 ms, during BGSAVE", ms(res[0].saveP99), ms(res[1].saveP99))
	fmt.Fprintf(w, "%-36s %12s %12s\n", "BGSAVE duration ms", ms(res[0].saveTime), ms(res[1].saveTime))
	fmt.Fprintf(w, "%-36s %12s %12s\n", "data loaded, MB (heap / used_memory)", mb(res[0].dataMem), mb(res[1].dataMem))
	fmt.Fprintf(w, "%-36s %12d %12d\n", "keys overwritten during BGSAVE", res[0].writtenKeys, res[1].writtenKeys)
	fmt.Fprintf(w, "%-36s %12s %12s\n", "data written during BGSAVE, MB", mb(res[0].written), mb(res[1].written))
	fmt.Fprintf(w, "%-36s %12s %12s\n", "extra memory during BGSAVE, MB", mb(res[0].extraMem), mb(res[1].extraMem))
	ratio := func(r persistResult) string {
		if r.written == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", float64(r.extraMem)/float64(r.written))
	}
	fmt.Fprintf(w, "%-36s %12s %12s\n", "extra memory / data written", ratio(res[0]), ratio(res[1]))
	fmt.Fprintf(w, "%-36s %12s %12s\n", "RDB file, MB", mb(res[0].fileSize), mb(res[1].fileSize))
	fmt.Fprintf(w, "%-36s %12s %12s\n", "start-up loading the RDB, ms", ms(res[0].loadTime), ms(res[1].loadTime))
	fmt.Fprintln(w)
	for _, f := range []struct {
		name string
		z, r time.Duration
	}{
		{"SET p99, idle", res[0].idleP99, res[1].idleP99},
		{"SET p99, during BGSAVE", res[0].saveP99, res[1].saveP99},
		{"BGSAVE duration", res[0].saveTime, res[1].saveTime},
		{"start-up loading the RDB", res[0].loadTime, res[1].loadTime},
	} {
		z, r := float64(f.z)/1e6, float64(f.r)/1e6
		o.sum.add(figure{section: "persistence", name: f.name, unit: "ms", z: z, r: r, ratio: ratioOf(z, r), better: lower})
	}
	z, r := float64(res[0].extraMem)/(1<<20), float64(res[1].extraMem)/(1<<20)
	o.sum.add(figure{section: "persistence", name: "extra memory during BGSAVE", unit: "MB", z: z, r: r, ratio: ratioOf(z, r), better: lower})
	return nil
}

func persistRun(ctx context.Context, name, bin string) (persistResult, error) {
	var res persistResult
	s, err := startServer(ctx, name, bin, "--save", "", "--appendonly", "no")
	if err != nil {
		return res, err
	}
	defer s.stop()
	rc, err := dialServer(s)
	if err != nil {
		return res, err
	}
	defer rc.Close()
	before, err := usedMemory(rc)
	if err != nil {
		return res, err
	}
	value := string(make([]byte, persistValue))
	if err := rc.load(persistKeys, func(b []byte, i int) []byte {
		b = appendArray(b, 3)
		b = appendBulk(b, "SET")
		b = appendBulkNum(b, "key:", i)
		return appendBulk(b, value)
	}); err != nil {
		return res, err
	}
	after, err := usedMemory(rc)
	if err != nil {
		return res, err
	}
	res.dataMem = after - before
	setter, err := dialServer(s)
	if err != nil {
		return res, err
	}
	defer setter.Close()
	// Idle p99 over a second of SETs, as long as the save lasts: on a VM
	// a few thousand samples give a p99 that varies twofold run to run.
	idle := make(chan struct{})
	time.AfterFunc(time.Second, func() { close(idle) })
	if res.idleP99, err = setP99(setter, 0, idle); err != nil {
		return res, err
	}

	// BGSAVE, with SETs timed until it ends and memory sampled.
	if _, err := rc.do("BGSAVE"); err != nil {
		return res, err
	}
	start := time.Now()
	done := make(chan struct{})
	var sampleErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		sampleErr = waitBGSave(rc, 10*time.Millisecond, nil)
	}()
	res.saveP99, err = setP99(setter, 0, done)
	wg.Wait()
	res.saveTime = time.Since(start)
	if err != nil {
		return res, err
	}
	if sampleErr != nil {
		return res, sampleErr
	}
	if fi, err := os.Stat(filepath.Join(s.dir, "dump.rdb")); err == nil {
		res.fileSize = fi.Size()
	}
	if err := saveMemory(rc, setter, s.zredis, &res); err != nil {
		return res, err
	}

	// Start-up: a new server on the same file, timed to its first PONG.
	dir := s.dir
	s.dir = "" // keep the file for the restart; removed below
	s.stop()
	defer os.RemoveAll(dir)
	t0 := time.Now()
	s2, err := startServerIn(ctx, name, bin, dir, "--save", "", "--appendonly", "no")
	if err != nil {
		return res, err
	}
	res.loadTime = time.Since(t0)
	defer s2.stop()
	rc2, err := dialServer(s2)
	if err != nil {
		return res, err
	}
	defer rc2.Close()
	n, err := rc2.do("DBSIZE")
	if err != nil {
		return res, err
	}
	// The keys plus the probes SET during the save.
	if got, _ := strconv.Atoi(n); got < persistKeys {
		return res, fmt.Errorf("%s loaded %s keys of %d", name, n, persistKeys)
	}
	return res, nil
}

// waitBGSave polls INFO persistence every interval until no background
// save runs, calling sample (when set) before each poll.
func waitBGSave(rc *rconn, interval time.Duration, sample func() error) error {
	for {
		if sample != nil {
			if err := sample(); err != nil {
				return err
			}
		}
		info, err := rc.do("INFO", "persistence")
		if err != nil {
			return err
		}
		if v, _ := infoField(info, "rdb_bgsave_in_progress"); v == 0 {
			return nil
		}
		time.Sleep(interval)
	}
}

// saveMemory measures what a BGSAVE keeps alive for its point-in-time
// view: a second save while setter overwrites existing keys (same value
// size) as fast as it can. zredis: the peak of used_memory sampled after
// a full collection (MEMORY PURGE), every 50 ms, above its value before
// the save, so that garbage not yet collected does not count; redis:
// rdb_last_cow_size, what the forked child's pages cost. The data written
// is the keys overwritten times the memory one key takes (from loading).
func saveMemory(rc, setter *rconn, zredis bool, res *persistResult) error {
	base, err := usedMemory(rc)
	if err != nil {
		return err
	}
	if _, err := rc.do("BGSAVE"); err != nil {
		return err
	}
	done := make(chan struct{})
	var written int
	var setErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		value := string(make([]byte, persistValue))
		r := rand.New(rand.NewPCG(1, 2))
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, setErr = setter.do("SET", "key:"+strconv.Itoa(r.IntN(persistKeys)), value); setErr != nil {
				return
			}
			written++
		}
	}()
	var peak int64
	err = waitBGSave(rc, 50*time.Millisecond, func() error {
		if !zredis {
			return nil
		}
		used, err := usedMemory(rc)
		peak = max(peak, used)
		return err
	})
	close(done)
	wg.Wait()
	if err == nil {
		err = setErr
	}
	if err != nil {
		return err
	}
	if zredis {
		res.extraMem = max(peak-base, 0)
	} else {
		info, err := rc.do("INFO", "persistence")
		if err != nil {
			return err
		}
		res.extraMem, _ = infoField(info, "rdb_last_cow_size")
	}
	res.written = int64(written) * res.dataMem / persistKeys
	res.writtenKeys = written
	return nil
}

// setP99 times SETs one at a time: n of them, or until done is closed.
func setP99(rc *rconn, n int, done <-chan struct{}) (time.Duration, error) {
	var rtts []time.Duration
	for i := 0; ; i++ {
		if n > 0 && i >= n {
			break
		}
		if done != nil {
			select {
			case <-done:
				n = -1
			default:
			}
			if n < 0 {
				break
			}
		}
		start := time.Now()
		if _, err := rc.do("SET", "probe:"+strconv.Itoa(i%1000), "v"); err != nil {
			return 0, err
		}
		rtts = append(rtts, time.Since(start))
	}
	if len(rtts) == 0 {
		return 0, nil
	}
	slices.Sort(rtts)
	return rtts[min(len(rtts)-1, len(rtts)*99/100)], nil
}

// aofBench runs redis-benchmark's SET (50 clients, pipeline 1) against
// both servers with appendonly yes, under appendfsync always and
// everysec, rounds times in alternation, and prints the median rps and
// their ratio. Under always a write is acknowledged once on disk: zredis
// shares one fsync among the clients waiting (group commit).
func aofBench(ctx context.Context, o options, w io.Writer) error {
	fmt.Fprintf(w, "AOF: SET, %d clients, pipeline 1, appendonly yes; median of %d round(s)\n", o.clients, o.rounds)
	fmt.Fprintf(w, "%-10s %12s %12s %9s %11s %11s\n", "appendfsync", "zredis rps", "redis rps", "ratio", "zredis p99", "redis p99")
	for _, policy := range []struct {
		name string
		n    int
	}{{"always", 100000}, {"everysec", 300000}} {
		var servers [2]*server
		for i, name := range []string{"zredis", "redis"} {
			bin := o.zredisBin
			if name == "redis" {
				bin = o.redisBin
			}
			s, err := startServer(ctx, name, bin, "--save", "", "--appendonly", "yes", "--appendfsync", policy.name)
			if err != nil {
				for _, s := range servers[:i] {
					s.stop()
				}
				return err
			}
			servers[i] = s
		}
		c := &cell{pipeline: 1, test: test{name: "SET", args: fixed("-t", "set")}}
		var zr, rr []float64
		var zp, rp []float64
		for round := 0; round < o.rounds; round++ {
			for i, s := range servers {
				res, err := runBench(ctx, o, s, c, policy.n)
				if err != nil {
					servers[0].stop()
					servers[1].stop()
					return err
				}
				if res.err != "" {
					servers[0].stop()
					servers[1].stop()
					return fmt.Errorf("%s appendfsync %s: %s", s.name, policy.name, res.err)
				}
				if i == 0 {
					zr, zp = append(zr, res.rps), append(zp, res.p99)
				} else {
					rr, rp = append(rr, res.rps), append(rp, res.p99)
				}
			}
		}
		servers[0].stop()
		servers[1].stop()
		z, r := median(zr), median(rr)
		fmt.Fprintf(w, "%-10s %12.0f %12.0f %9.2f %11.3f %11.3f\n", policy.name, z, r, z/r, median(zp), median(rp))
		name := "SET, appendfsync " + policy.name
		o.sum.add(figure{section: "AOF: throughput", name: name, unit: "rps", z: z, r: r, ratio: ratioOf(z, r), better: higher})
		o.sum.add(figure{section: "AOF: p99", name: name, unit: "ms", z: median(zp), r: median(rp),
			ratio: ratioOf(median(zp), median(rp)), better: lower})
	}
	fmt.Fprintln(w)
	return nil
}
