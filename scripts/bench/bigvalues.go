package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// bigSizes are the value sizes of the large-value benchmark: mail bodies
// of 10 MB and 100 MB.
var bigSizes = []int{10 << 20, 100 << 20}

// bigRounds is how many times each value is set, read and deleted. One
// command of 10 MB takes 6-10 ms on either server, the spread coming
// from the machine (page faults, scheduling): with three rounds the
// median of one server moved by a fifth from one run to the next (SET
// ratios of 0.86 to 1.35 for the same two builds), with seven less.
const bigRounds = 7

// bigShape is where the value is kept: a string (SET, GET) or a hash
// field (HSETNX, HGET), where python-slimta's queue keeps a message's
// pickled envelope.
type bigShape struct {
	name     string // "" for strings, as the summary's first sections
	set      string // the command up to the value's length: "*3...$"
	setReply string
	get      string
}

var bigShapes = []bigShape{
	{"", "*3\r\n$3\r\nSET\r\n$8\r\nbigvalue\r\n$", "+OK\r\n", "*2\r\n$3\r\nGET\r\n$8\r\nbigvalue\r\n"},
	{"in a hash field", "*4\r\n$6\r\nHSETNX\r\n$8\r\nbigvalue\r\n$8\r\nenvelope\r\n$", ":1\r\n",
		"*3\r\n$4\r\nHGET\r\n$8\r\nbigvalue\r\n$8\r\nenvelope\r\n"},
}

// bigResult is one size on one server.
type bigResult struct {
	set, get                    time.Duration // median per command
	rssSet, rssGet, rssDel, hwm int64         // bytes
}

// bigValuesBench sets, reads back and deletes a value of each size on
// a fresh zredis and redis-server pair, from a client that already
// holds the value, and prints the time per SET and GET and the
// processes' resident memory (VmRSS after each step, VmHWM: the peak).
func bigValuesBench(ctx context.Context, o options, w io.Writer) error {
	for _, shape := range bigShapes {
		if err := bigValuesShape(ctx, o, w, shape); err != nil {
			return err
		}
	}
	return nil
}

func bigValuesShape(ctx context.Context, o options, w io.Writer, shape bigShape) error {
	if shape.name == "" {
		fmt.Fprintf(w, "\nlarge values: %d rounds of SET, GET, DEL of one value on fresh servers; median time per command; RSS after the last round's step, peak = VmHWM\n", bigRounds)
	} else {
		fmt.Fprintf(w, "\nlarge values %s: %d rounds of HSETNX, HGET, DEL of one value on fresh servers, as above\n", shape.name, bigRounds)
	}
	fmt.Fprintf(w, "%-7s %-7s %9s %9s %10s %10s %10s %10s\n", "size", "server", "SET ms", "GET ms", "RSS SET", "RSS GET", "RSS DEL", "peak RSS")
	for _, size := range bigSizes {
		val := make([]byte, size)
		for i := range val {
			val[i] = byte(i * 31)
		}
		var res [2]bigResult
		for i, name := range []string{"zredis", "redis"} {
			bin := o.zredisBin
			if name == "redis" {
				bin = o.redisBin
			}
			s, err := startServer(ctx, name, bin, noSave()...)
			if err != nil {
				return err
			}
			res[i], err = bigValuesRun(s, shape, val)
			s.stop()
			if err != nil {
				return fmt.Errorf("%s, %d MB values: %v", name, size>>20, err)
			}
			r := res[i]
			fmt.Fprintf(w, "%-7s %-7s %9.1f %9.1f %7d MB %7d MB %7d MB %7d MB\n", fmt.Sprintf("%d MB", size>>20), name,
				ms(r.set), ms(r.get), r.rssSet>>20, r.rssGet>>20, r.rssDel>>20, r.hwm>>20)
		}
		z, r := res[0], res[1]
		fmt.Fprintf(w, "%-7s %-7s %9.2f %9.2f %10.2f %10.2f %10.2f %10.2f\n", "", "ratio",
			ms(z.set)/ms(r.set), ms(z.get)/ms(r.get), ratio(z.rssSet, r.rssSet), ratio(z.rssGet, r.rssGet),
			ratio(z.rssDel, r.rssDel), ratio(z.hwm, r.hwm))
		for _, f := range bigFigures(shape, size, z, r) {
			o.sum.add(f)
		}
	}
	return nil
}

// bigFigures are the summary's figures for one value size.
func bigFigures(shape bigShape, size int, z, r bigResult) []figure {
	mb := func(n int64) float64 { return float64(n) / (1 << 20) }
	section := fmt.Sprintf("large values, %d MB", size>>20)
	if shape.name != "" {
		section = fmt.Sprintf("large values %s, %d MB", shape.name, size>>20)
	}
	var out []figure
	for _, f := range []struct {
		name, unit string
		z, r       float64
	}{
		{"SET time", "ms", ms(z.set), ms(r.set)},
		{"GET time", "ms", ms(z.get), ms(r.get)},
		{"peak RSS (VmHWM)", "MB", mb(z.hwm), mb(r.hwm)},
		{"RSS after the SETs", "MB", mb(z.rssSet), mb(r.rssSet)},
		{"RSS after the GETs", "MB", mb(z.rssGet), mb(r.rssGet)},
		{"RSS after DEL", "MB", mb(z.rssDel), mb(r.rssDel)},
	} {
		out = append(out, figure{section: section, name: f.name, unit: f.unit, z: f.z, r: f.r,
			ratio: ratioOf(f.z, f.r), better: lower})
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ratio(a, b int64) float64 { return float64(a) / float64(b) }

func bigValuesRun(s *server, shape bigShape, val []byte) (bigResult, error) {
	var res bigResult
	nc, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.port), 5*time.Second)
	if err != nil {
		return res, err
	}
	defer nc.Close()
	pid := s.cmd.Process.Pid
	got := make([]byte, len(val)+64)
	hdr := []byte(fmt.Sprintf("%s%d\r\n", shape.set, len(val)))
	wantGet := fmt.Sprintf("$%d\r\n", len(val))
	var sets, gets []float64
	for round := 0; round < bigRounds; round++ {
		nc.SetDeadline(time.Now().Add(replyTimeout))
		start := time.Now()
		if _, err := (&net.Buffers{hdr, val, []byte("\r\n")}).WriteTo(nc); err != nil {
			return res, err
		}
		if err := expect(nc, got, shape.setReply); err != nil {
			return res, err
		}
		sets = append(sets, float64(time.Since(start)))
		if res.rssSet, err = procStatus(pid, "VmRSS:"); err != nil {
			return res, err
		}

		start = time.Now()
		if _, err := nc.Write([]byte(shape.get)); err != nil {
			return res, err
		}
		n := len(wantGet) + len(val) + 2
		if _, err := io.ReadFull(nc, got[:n]); err != nil {
			return res, err
		}
		gets = append(gets, float64(time.Since(start)))
		if string(got[:len(wantGet)]) != wantGet || !bytes.Equal(got[len(wantGet):n-2], val) {
			return res, fmt.Errorf("GET returned other bytes than SET stored")
		}
		if res.rssGet, err = procStatus(pid, "VmRSS:"); err != nil {
			return res, err
		}

		if _, err := nc.Write([]byte("*2\r\n$3\r\nDEL\r\n$8\r\nbigvalue\r\n")); err != nil {
			return res, err
		}
		if err := expect(nc, got, ":1\r\n"); err != nil {
			return res, err
		}
	}
	// Give a release of freed memory its moment (both servers do it in
	// the background), then take the lowest reading.
	res.rssDel = 1 << 62
	for i := 0; i < 20; i++ {
		v, err := procStatus(pid, "VmRSS:")
		if err != nil {
			return res, err
		}
		res.rssDel = min(res.rssDel, v)
		time.Sleep(100 * time.Millisecond)
	}
	res.hwm, err = procStatus(pid, "VmHWM:")
	res.set = time.Duration(median(sets))
	res.get = time.Duration(median(gets))
	return res, err
}

// expect reads len(want) bytes and checks them.
func expect(nc net.Conn, buf []byte, want string) error {
	if _, err := io.ReadFull(nc, buf[:len(want)]); err != nil {
		return err
	}
	if string(buf[:len(want)]) != want {
		return fmt.Errorf("got %q, want %q", buf[:len(want)], want)
	}
	return nil
}

// procStatus reads a kB field of /proc/<pid>/status, in bytes.
func procStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, field); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}
