package rdb

import (
	"path/filepath"
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

// redisPath returns the path of redis-server 7.0, or ends the test as
// testsupport.RequireRedis does.
func redisPath(t testing.TB) string {
	t.Helper()
	return testsupport.RequireRedis(t)
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
