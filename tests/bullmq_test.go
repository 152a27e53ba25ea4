package tests

// BullMQ, the Node.js job queue, against zredis: no job moves without one
// of its Lua scripts (EVALSHA, cmsgpack, cjson), and its events are a
// stream that QueueEvents reads with XREAD BLOCK. testdata/bullmq/bullmq.js
// drives queues, workers (concurrency, attempts and backoff, delays,
// priorities, progress, the rate limiter, pause and resume, clean,
// obliterate, flows, deduplication, job schedulers, the stalled-jobs
// checker, the relay) and checks each outcome against what redis-server
// 7.0 gives. It runs with the exact versions of testdata/bullmq's
// package-lock.json, which make test installs there (scripts/deps.sh:
// npm ci into testdata/bullmq/node_modules, git-ignored).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zredis/zredis/internal/testsupport"
)

const bullmqDir = "testdata/bullmq"

// bullmqTimeout bounds one run of bullmq.js, which takes a few seconds
// (its sections run side by side): only a hang reaches it.
const bullmqTimeout = 50 * time.Second

// requireBullMQ returns the node executable, or ends the test
// (testsupport.Require) when node 18 or later or the pinned BullMQ is not
// installed (make deps installs both).
func requireBullMQ(t *testing.T) string {
	t.Helper()
	node := RequireTool(t, "node")
	out, err := exec.Command(node, "--version").Output()
	m := regexp.MustCompile(`^v(\d+)\.`).FindSubmatch(out)
	if err == nil && m == nil {
		err = fmt.Errorf("node --version printed %q", out)
	}
	testsupport.Require(t, "node 18 or later", err)
	if major, _ := strconv.Atoi(string(m[1])); major < 18 {
		testsupport.Require(t, "node 18 or later", fmt.Errorf("node is %s", strings.TrimSpace(string(out))))
	}
	var pinned, installed struct {
		Version      string
		Dependencies map[string]string
	}
	if b, err := os.ReadFile(filepath.Join(bullmqDir, "package.json")); err != nil || json.Unmarshal(b, &pinned) != nil {
		t.Fatalf("reading %s/package.json: %v", bullmqDir, err)
	}
	b, err := os.ReadFile(filepath.Join(bullmqDir, "node_modules", "bullmq", "package.json"))
	if err == nil {
		err = json.Unmarshal(b, &installed)
	}
	if err == nil && installed.Version != pinned.Dependencies["bullmq"] {
		err = fmt.Errorf("found version %q", installed.Version)
	}
	testsupport.Require(t, fmt.Sprintf("bullmq %s in %s/node_modules", pinned.Dependencies["bullmq"], bullmqDir), err)
	return node
}

// TestBullMQ runs bullmq.js against zredis and, beside it, against
// redis-server (which proves the script's expectations right), and
// requires every section to pass with no error reply but the one each
// server answers ioredis's connection set-up with.
func TestBullMQ(t *testing.T) {
	node := requireBullMQ(t)
	t.Run("zredis", func(t *testing.T) {
		t.Parallel()
		// As redis-server 7.0, zredis has no CLIENT SETINFO (7.2).
		runBullMQ(t, node, StartZredis(t), "client: ERR unknown subcommand 'SETINFO'. Try CLIENT HELP.")
	})
	t.Run("redis-server", func(t *testing.T) {
		t.Parallel()
		// Redis 7.0 has no CLIENT SETINFO (7.2), which ioredis sends and
		// ignores the error of.
		runBullMQ(t, node, StartRedis(t), "client: ERR unknown subcommand 'SETINFO'. Try CLIENT HELP.")
	})
}

// runBullMQ runs bullmq.js against p and checks its report: an "ok"
// line per section, then the error replies its connections got.
func runBullMQ(t *testing.T, node string, p *Proc, allowedError string) {
	ctx, cancel := context.WithTimeout(context.Background(), bullmqTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "bullmq.js", strconv.Itoa(p.Port))
	cmd.Dir = bullmqDir
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	out := stdout.Bytes()
	t.Logf("bullmq.js against %s: %v", p.Name, time.Since(start).Round(time.Millisecond))
	if stderr.Len() > 0 {
		t.Logf("bullmq.js's stderr:\n%s", stderr.Bytes())
	}
	if ctx.Err() != nil {
		t.Fatalf("bullmq.js did not finish within %v:\n%s", bullmqTimeout, out)
	}
	if err != nil {
		t.Fatalf("bullmq.js: %v\n%s", err, out)
	}
	sections := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		switch {
		case strings.HasPrefix(line, "ok "):
			sections++
		case strings.HasPrefix(line, "redis-errors "):
			var errs map[string]int
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "redis-errors ")), &errs); err != nil {
				t.Fatalf("bullmq.js's error report %q: %v", line, err)
			}
			for msg, n := range errs {
				if msg != allowedError {
					t.Errorf("%d error replies %q", n, msg)
				}
			}
		default:
			t.Errorf("bullmq.js: %s", line)
		}
	}
	if sections == 0 {
		t.Errorf("bullmq.js ran no section:\n%s", out)
	}
}
