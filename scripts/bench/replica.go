package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The replica benchmark: redis-benchmark's SET against a master with one
// replica of its own kind attached (zredis -> zredis next to redis ->
// redis), at each pipeline depth, paired per round as the throughput
// grid is. Before every run the master's replica has caught up with
// everything before it (its acknowledged offset equals the master's), so
// a run does not pay for the replication of the one before. The masters
// sync without delay (repl-diskless-sync-delay 0).

// replicaTimeout bounds the wait for the replica's first sync and for it
// to catch up before a run.
const replicaTimeout = time.Minute

// startReplicated starts a master and one replica of bin and waits until
// the replica is online.
func startReplicated(ctx context.Context, name, bin string) (master, replica *server, err error) {
	master, err = startServer(ctx, name, bin, noSave("--repl-diskless-sync-delay", "0")...)
	if err != nil {
		return nil, nil, err
	}
	replica, err = startServer(ctx, name+"-replica", bin, noSave("--replicaof", "127.0.0.1", strconv.Itoa(master.port))...)
	if err != nil {
		master.stop()
		return nil, nil, err
	}
	rc, err := dialServer(master)
	if err == nil {
		err = waitReplica(rc)
		rc.Close()
	}
	if err != nil {
		replica.stop()
		master.stop()
		return nil, nil, fmt.Errorf("%s: replica: %v", name, err)
	}
	return master, replica, nil
}

var slaveLine = regexp.MustCompile(`(?m)^slave0:.*\bstate=([a-z_]+),offset=(\d+)`)

// replicaState reads the master's first replica's state and acknowledged
// offset, and the master's own offset, from INFO replication.
func replicaState(info string) (state string, acked, offset int64, err error) {
	m := slaveLine.FindStringSubmatch(info)
	if m == nil {
		return "", 0, 0, errors.New("no replica in INFO replication")
	}
	acked, _ = strconv.ParseInt(m[2], 10, 64)
	offset, err = infoField(info, "master_repl_offset")
	return m[1], acked, offset, err
}

// waitReplica waits until the master on rc has a replica online that
// has acknowledged all the master's stream (replicas acknowledge once a
// second).
func waitReplica(rc *rconn) error {
	deadline := time.Now().Add(replicaTimeout)
	var last string
	for time.Now().Before(deadline) {
		info, err := rc.do("INFO", "replication")
		if err != nil {
			return err
		}
		state, acked, offset, err := replicaState(info)
		if err == nil && state == "online" && acked >= offset {
			return nil
		}
		last = strings.TrimSpace(info)
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("replica not caught up within %v:\n%s", replicaTimeout, last)
}

func replicaBench(ctx context.Context, o options, w io.Writer) error {
	zm, zr, err := startReplicated(ctx, "zredis", o.zredisBin)
	if err != nil {
		return err
	}
	defer zr.stop()
	defer zm.stop()
	rm, rr, err := startReplicated(ctx, "redis", o.redisBin)
	if err != nil {
		return err
	}
	defer rr.stop()
	defer rm.stop()
	fmt.Fprintf(w, "one replica attached: zredis 127.0.0.1:%d -> :%d, redis 127.0.0.1:%d -> :%d\n",
		zm.port, zr.port, rm.port, rr.port)

	ro := o
	ro.sizes = o.sizes[:1]
	ro.tests = []test{{"SET", builtin("set"), func(rc *rconn, _, _ int) error { return waitReplica(rc) }}}
	cells, err := benchmark(ctx, ro, zm, rm)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "SET with one replica, %d clients, value %d bytes, median of %d round(s); ratio = zredis/redis per round, then median\n",
		o.clients, ro.sizes[0], o.rounds)
	fmt.Fprintf(w, "%-10s %9s %11s %11s %9s %11s %11s %9s\n", "pipeline", "n", "zredis rps", "redis rps", "rps ratio", "zredis p99", "redis p99", "p99 ratio")
	for _, c := range cells {
		s := summarize(c)
		if s.ok == 0 {
			return fmt.Errorf("SET with a replica, P%d: %s", c.pipeline, s.firstErr)
		}
		fmt.Fprintf(w, "%-10s %9d %11.0f %11.0f %9.2f %11.3f %11.3f %9.2f\n", fmt.Sprintf("P%d", c.pipeline), c.n,
			s.zRPS, s.rRPS, s.rpsRatio, s.zP99, s.rP99, s.p99Ratio)
		name := fmt.Sprintf("P%d SET %dB", c.pipeline, c.size)
		o.sum.add(figure{section: "one replica: throughput", name: name, unit: "rps", z: s.zRPS, r: s.rRPS, ratio: s.rpsRatio, better: higher})
		o.sum.add(figure{section: "one replica: p99", name: name, unit: "ms", z: s.zP99, r: s.rP99, ratio: s.p99Ratio, better: lower})
	}
	fmt.Fprintln(w)
	for _, s := range []*server{zm, zr, rm, rr} {
		if s.exited() {
			return fmt.Errorf("%s exited during the replica benchmark:\n%s", s.name, s.out)
		}
	}
	return nil
}
