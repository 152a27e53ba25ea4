package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// tlsBench runs SET and GET over TLS (redis-benchmark --tls) on a fresh
// pair of servers with the same certificate, at pipeline 1 and 16, and
// prints the medians and ratios: the cost of zredis's TLS (Go's
// crypto/tls, bridged to the event loops) next to redis-server's
// (OpenSSL). Client certificates are not asked for (tls-auth-clients no).
func tlsBench(ctx context.Context, o options, w io.Writer) error {
	const n = 100000
	dir, err := os.MkdirTemp("", "zredis-bench-tls")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := makeCert(dir); err != nil {
		return err
	}
	ca := filepath.Join(dir, "ca.crt")
	fmt.Fprintf(w, "TLS: redis-benchmark --tls, %d clients, tls-auth-clients no, RSA 2048; median of %d round(s)\n", o.clients, o.rounds)
	var servers [2]*server
	var tlsPorts [2]int
	for i, name := range []string{"zredis", "redis"} {
		bin := o.zredisBin
		if name == "redis" {
			bin = o.redisBin
		}
		port, err := freePort()
		if err != nil {
			return err
		}
		s, err := startServer(ctx, name, bin, "--save", "", "--appendonly", "no", "--tls-port", strconv.Itoa(port),
			"--tls-cert-file", filepath.Join(dir, "server.crt"), "--tls-key-file", filepath.Join(dir, "server.key"),
			"--tls-auth-clients", "no")
		if err != nil {
			for _, s := range servers[:i] {
				s.stop()
			}
			return err
		}
		servers[i], tlsPorts[i] = s, port
	}
	defer servers[0].stop()
	defer servers[1].stop()
	fmt.Fprintf(w, "%-10s %12s %12s %9s %11s %11s\n", "test", "zredis rps", "redis rps", "ratio", "zredis p99", "redis p99")
	for _, pipeline := range []int{1, 16} {
		for _, t := range []string{"set", "get"} {
			c := &cell{pipeline: pipeline, test: test{name: t, args: fixed("--tls", "--cacert", ca, "-t", t)}}
			var rps, p99 [2][]float64
			for round := 0; round < o.rounds; round++ {
				for i, s := range servers {
					viaTLS := *s
					viaTLS.port = tlsPorts[i]
					res, err := runBench(ctx, o, &viaTLS, c, n)
					if err != nil {
						return err
					}
					if res.err != "" {
						return fmt.Errorf("%s: %s", s.name, res.err)
					}
					rps[i], p99[i] = append(rps[i], res.rps), append(p99[i], res.p99)
				}
			}
			z, r := median(rps[0]), median(rps[1])
			zp, rp := median(p99[0]), median(p99[1])
			fmt.Fprintf(w, "%-10s %12.0f %12.0f %9.2f %11.3f %11.3f\n", fmt.Sprintf("P%d %s", pipeline, t), z, r, z/r, zp, rp)
			name := fmt.Sprintf("P%d %s", pipeline, strings.ToUpper(t))
			o.sum.add(figure{section: "TLS: throughput", name: name, unit: "rps", z: z, r: r, ratio: ratioOf(z, r), better: higher})
			o.sum.add(figure{section: "TLS: p99", name: name, unit: "ms", z: zp, r: rp, ratio: ratioOf(zp, rp), better: lower})
		}
	}
	fmt.Fprintln(w)
	return nil
}

// makeCert writes a test CA and a server certificate for 127.0.0.1 to dir
// with openssl.
func makeCert(dir string) error {
	if err := os.WriteFile(filepath.Join(dir, "ext.cnf"), []byte("subjectAltName=IP:127.0.0.1,DNS:localhost\n"), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=bench CA"},
		{"req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"},
		{"x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.crt", "-days", "2", "-extfile", "ext.cnf"},
	} {
		cmd := exec.Command("openssl", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("openssl %v: %v\n%s", args, err, out)
		}
	}
	return nil
}
