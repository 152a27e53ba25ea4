package rdb

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/zredis/zredis/internal/testsupport"
)

// realRedis is a redis-server 7.0 started by a test in a directory of
// its own, stopped when the test ends.
type realRedis struct {
	dir    string
	client *redis.Client
	proc   *testsupport.Proc
}

// redisPath returns redis-server's path, skipping the test when it is
// not installed.
func redisPath(t testing.TB) string {
	t.Helper()
	path := testsupport.RedisServerPath()
	if path == "" {
		t.Skip("redis-server not installed: skipping comparison with Redis 7.0")
	}
	out, err := exec.Command(path, "--version").Output()
	if err != nil || !strings.Contains(string(out), "v=7.0.") {
		t.Skipf("redis-server is not Redis 7.0 (%q): skipping", strings.TrimSpace(string(out)))
	}
	return path
}

// startRedis starts redis-server in dir (which may hold its dump.rdb)
// with the extra directives args, and waits until it answers PING.
func startRedis(t testing.TB, dir string, args ...string) *realRedis {
	t.Helper()
	path := redisPath(t)
	argv := []string{"--dir", dir, "--save", "", "--appendonly", "no", "--daemonize", "no",
		"--logfile", filepath.Join(dir, "redis.log"), "--enable-debug-command", "yes"}
	argv = append(argv, args...)
	// Loading a big dump.rdb can take a while.
	p := testsupport.Start(t, testsupport.Options{Name: "redis", Bin: path, Args: argv, ReadyTimeout: 30 * time.Second})
	r := &realRedis{dir: dir, proc: p,
		client: redis.NewClient(&redis.Options{Addr: p.Addr, MaxRetries: -1})}
	t.Cleanup(func() { _ = r.client.Close() })
	return r
}
