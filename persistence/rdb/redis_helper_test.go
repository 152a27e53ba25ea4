package rdb

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// realRedis is a redis-server 7.0 started by a test in a directory of
// its own, stopped when the test ends.
type realRedis struct {
	dir    string
	client *redis.Client
	cmd    *exec.Cmd
}

// redisPath returns redis-server's path, skipping the test when it is
// not installed.
func redisPath(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed: skipping comparison with Redis 7.0")
	}
	out, err := exec.Command(path, "--version").Output()
	if err != nil || !strings.Contains(string(out), "v=7.0.") {
		t.Skipf("redis-server is not Redis 7.0 (%q): skipping", strings.TrimSpace(string(out)))
	}
	return path
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

// startRedis starts redis-server in dir (which may hold its dump.rdb)
// with the extra directives args, and waits until it answers PING.
func startRedis(t testing.TB, dir string, args ...string) *realRedis {
	t.Helper()
	path := redisPath(t)
	port := freePort(t)
	argv := []string{"--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no",
		"--logfile", filepath.Join(dir, "redis.log"), "--enable-debug-command", "yes"}
	argv = append(argv, args...)
	cmd := exec.Command(path, argv...)
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	r := &realRedis{dir: dir, cmd: cmd,
		client: redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), MaxRetries: -1})}
	t.Cleanup(func() {
		_ = r.client.Close()
		_ = cmd.Process.Kill()
		<-done
	})
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := r.client.Ping(ctx).Err()
		if err == nil {
			return r
		}
		select {
		case werr := <-done:
			done <- werr
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			t.Fatalf("redis-server exited (%v): %s", werr, log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server did not answer: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
