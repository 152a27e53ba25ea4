package tests

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/persistence/rdb"
)

// redis-cli's own modes against zredis, each next to redis-server 7.0
// doing the same: --replica (REPLCONF capa eof, REPLCONF rdb-filter-only
// "", SYNC: an RDB without keys between EOF marks, then the stream),
// --functions-rdb (the same with rdb-only 1 and the "functions" filter,
// written to a file), and the cluster commands a non-cluster server
// refuses.

// cliProc is a redis-cli running in one of its modes, its standard
// output and error read line by line.
type cliProc struct {
	t     *testing.T
	cmd   *exec.Cmd
	lines chan string
	mu    sync.Mutex
	all   []string
}

// startCLI starts redis-cli against p with args; it is killed when the
// test ends, or when ctx is done.
func startCLI(t *testing.T, ctx context.Context, p *Proc, args ...string) *cliProc {
	t.Helper()
	bin := requireRedisCLI(t)
	cmd := exec.CommandContext(ctx, bin, append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(p.Port)}, args...)...)
	// Its progress goes to stderr, the commands to stdout: one pipe keeps
	// their order.
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = pw, pw
	require.NoError(t, cmd.Start())
	pw.Close()
	c := &cliProc{t: t, cmd: cmd, lines: make(chan string, 10000)}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		pr.Close()
	})
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			c.mu.Lock()
			c.all = append(c.all, sc.Text())
			c.mu.Unlock()
			c.lines <- sc.Text()
		}
	}()
	return c
}

// waitLine reads lines until one contains s, and returns it; the test
// fails when redis-cli ends or ctx is done first.
func (c *cliProc) waitLine(ctx context.Context, s string) string {
	c.t.Helper()
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("redis-cli ended before printing %q:\n%s", s, c.output())
			}
			if strings.Contains(l, s) {
				return l
			}
		case <-ctx.Done():
			c.t.Fatalf("redis-cli did not print %q: %v\n%s", s, ctx.Err(), c.output())
		}
	}
}

// stop kills redis-cli and waits for it and for the end of its output.
func (c *cliProc) stop() {
	c.cmd.Process.Kill()
	c.cmd.Wait()
	for range c.lines {
	}
}

// output is everything redis-cli printed so far.
func (c *cliProc) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.all, "\n")
}

// cliDigits normalizes the numbers of redis-cli's transcripts (byte
// counts), which depend on the RDB's aux fields.
var cliDigits = regexp.MustCompile(`[0-9]+`)

// TestRedisCliReplica: redis-cli --replica synchronises (an RDB without
// keys, diskless even for its SYNC, after repl-diskless-sync-delay),
// then shows every command of the stream, with no error on the way;
// what it prints up to the first command is what it prints against
// redis-server 7.0.
func TestRedisCliReplica(t *testing.T) {
	requireRedisCLI(t)
	transcripts := map[string]string{}
	onBothConfigured(t, []string{"--repl-diskless-sync-delay", "1"}, func(t *testing.T, p *Proc) {
		c := Dial(t, p.Addr)
		for i := 0; i < 5; i++ {
			require.Equal(t, "+OK\r\n", c.Do("SET", "key:"+strconv.Itoa(i), strings.Repeat("v", 100)))
		}
		require.Equal(t, "+OK\r\n", c.Do("SELECT", "2"))
		require.Equal(t, ":1\r\n", c.Do("SADD", "set", "m"))
		require.Equal(t, "+OK\r\n", c.Do("SELECT", "0"))

		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cli := startCLI(t, ctx, p, "--replica")
		sync := cli.waitLine(ctx, "SYNC with master, discarding")
		assert.Equal(t, "SYNC with master, discarding bytes of bulk transfer until EOF marker...", sync)
		done := cli.waitLine(ctx, "SYNC done")
		assert.Regexp(t, `^SYNC done after \d+ bytes\. Logging commands from master\.$`, done)
		require.Equal(t, "+OK\r\n", c.Do("SET", "seen-by-cli", "42"))
		// The stream carries the command as the client wrote it.
		cli.waitLine(ctx, `"SET","seen-by-cli","42"`)
		require.Equal(t, ":1\r\n", c.Do("del", "key:0"))
		cli.waitLine(ctx, `"del","key:0"`)
		cli.stop()

		out := cli.output()
		assert.NotContains(t, out, "ERR", "redis-cli --replica printed an error")
		// The transcript up to the SET, without the replication PINGs
		// (whose time depends on the server's cron).
		var lines []string
		for _, l := range strings.Split(out, "\n") {
			if l != `"ping"` {
				lines = append(lines, cliDigits.ReplaceAllString(l, "N"))
			}
			if strings.Contains(l, "seen-by-cli") {
				break
			}
		}
		transcripts[p.Name] = strings.Join(lines, "\n")
		// The master saw the replica go.
		waitFor(t, func() bool { return infoField(t, c, "replication", "connected_slaves") == "0" })
	})
	if z, r := transcripts["zredis"], transcripts["redis"]; z != "" && r != "" {
		assert.Equal(t, r, z, "redis-cli --replica's transcript")
	}
}

// TestRedisCliFunctionsRDB: redis-cli --functions-rdb <file> exits 0 and
// writes a valid RDB holding the function libraries and no keys, with
// the aux fields of a replication RDB, the same ones redis-server writes.
func TestRedisCliFunctionsRDB(t *testing.T) {
	requireRedisCLI(t)
	type result struct {
		aux        []string
		transcript string
	}
	results := map[string]result{}
	onBothConfigured(t, []string{"--repl-diskless-sync-delay", "0"}, func(t *testing.T, p *Proc) {
		c := Dial(t, p.Addr)
		for i := 0; i < 5; i++ {
			require.Equal(t, "+OK\r\n", c.Do("SET", "key:"+strconv.Itoa(i), "v", "EX", "1000"))
		}
		require.Equal(t, ":3\r\n", c.Do("RPUSH", "list", "a", "b", "c"))
		require.Equal(t, "$4\r\necho\r\n", c.Do("FUNCTION", "LOAD", libEcho))

		file := filepath.Join(t.TempDir(), "functions.rdb")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, requireRedisCLI(t), "-h", "127.0.0.1", "-p", strconv.Itoa(p.Port), "--functions-rdb", file)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Run(), "redis-cli --functions-rdb:\n%s", out.String())
		assert.NotContains(t, out.String(), "ERR")
		assert.Contains(t, out.String(), "Transfer finished with success")

		data, err := os.ReadFile(file)
		require.NoError(t, err)
		var keys []string
		info, err := rdb.Load(bytes.NewReader(data), rdb.DefaultLoadOptions(), func(db int, key string, _ *keyspace.Entry) error {
			keys = append(keys, key)
			return nil
		})
		require.NoError(t, err, "the file is not a valid RDB")
		assert.Equal(t, int64(len(data)), info.Size, "bytes after the RDB's end")
		assert.Empty(t, keys)
		assert.Equal(t, []string{libEcho}, info.Functions)
		assert.NotZero(t, info.Checksum)
		var aux []string
		for _, kv := range info.Aux {
			aux = append(aux, kv[0])
		}
		check, err := exec.Command(RequireTool(t, "redis-check-rdb"), file).CombinedOutput()
		require.NoError(t, err, "%s", check)
		assert.Contains(t, string(check), "RDB looks OK")
		assert.Contains(t, string(check), "[info] 0 keys read")
		// The server still has its keys, and the connection is gone.
		assert.Equal(t, ":6\r\n", c.Do("DBSIZE"))
		waitFor(t, func() bool { return infoField(t, c, "replication", "connected_slaves") == "0" })
		transcript := strings.ReplaceAll(out.String(), file, "FILE")
		results[p.Name] = result{aux: aux, transcript: cliDigits.ReplaceAllString(transcript, "N")}
	})
	if z, ok := results["zredis"]; ok {
		if r, ok := results["redis"]; ok {
			assert.Equal(t, r.aux, z.aux, "the aux fields")
			assert.Equal(t, r.transcript, z.transcript, "redis-cli's transcript")
		}
	}
}

// TestRedisCliClusterDiff: without cluster support, CLUSTER (every
// subcommand), READONLY, READWRITE and ASKING are refused as
// redis-server 7.0 refuses them, after the arity and subcommand checks,
// and they are described as it describes them (COMMAND INFO and DOCS,
// ACL categories).
func TestRedisCliClusterDiff(t *testing.T) {
	d := NewDiff(t)
	for _, args := range [][]string{
		{"CLUSTER"},
		{"CLUSTER", "INFO"},
		{"CLUSTER", "NODES"},
		{"CLUSTER", "SLOTS"},
		{"CLUSTER", "SHARDS"},
		{"CLUSTER", "MYID"},
		{"CLUSTER", "LINKS"},
		{"CLUSTER", "HELP"},
		{"cluster", "help"},
		{"CLUSTER", "KEYSLOT", "foo"},
		{"CLUSTER", "COUNTKEYSINSLOT", "1"},
		{"CLUSTER", "GETKEYSINSLOT", "1", "10"},
		{"CLUSTER", "ADDSLOTS", "1", "2"},
		{"CLUSTER", "MEET", "127.0.0.1", "1"},
		{"CLUSTER", "RESET", "HARD"},
		{"CLUSTER", "FAILOVER"},
		{"CLUSTER", "SETSLOT", "1", "STABLE"},
		{"CLUSTER", "NOSUCH"},
		{"CLUSTER", "INFO", "x"},
		{"CLUSTER", "KEYSLOT"},
		{"CLUSTER", "HELP", "x"},
		{"READONLY"},
		{"READWRITE"},
		{"ASKING"},
		{"readonly", "x"},
		{"READWRITE", "x"},
		{"ASKING", "x"},
		{"COMMAND", "INFO", "asking", "readonly", "readwrite", "cluster|info", "cluster|reset", "cluster|help"},
		{"COMMAND", "DOCS", "asking"},
		{"COMMAND", "DOCS", "cluster|nodes"},
		{"COMMAND", "GETKEYS", "CLUSTER", "INFO"},
		{"COMMAND", "GETKEYS", "READONLY"},
	} {
		d.Do(args...)
	}
	d.DoSorted("COMMAND", "LIST", "FILTERBY", "PATTERN", "cluster*")
	d.DoSorted("COMMAND", "LIST", "FILTERBY", "PATTERN", "read*")
	// The container: its subcommands come in hash-table order.
	for _, name := range []string{"cluster", "readonly", "readwrite", "asking"} {
		z := cmdParse(t, d.Z.Do("COMMAND", "INFO", name))
		r := cmdParse(t, d.R.Do("COMMAND", "INFO", name))
		require.Len(t, z.elems, 1, name)
		require.Len(t, r.elems, 1, name)
		cmdCompareInfo(t, name, z.elems[0], r.elems[0])
		z = cmdParse(t, d.Z.Do("COMMAND", "DOCS", name))
		r = cmdParse(t, d.R.Do("COMMAND", "DOCS", name))
		require.Len(t, z.elems, 2, name)
		require.Len(t, r.elems, 2, name)
		cmdCompareDocs(t, name, z.elems[1], r.elems[1])
	}

	// In a transaction they are queued, then refused by EXEC.
	d.Do("MULTI")
	d.Do("READONLY")
	d.Do("CLUSTER", "INFO")
	d.Do("CLUSTER", "NOSUCH")
	d.Do("EXEC")
	d.Do("MULTI")
	d.Do("ASKING")
	d.Do("CLUSTER", "KEYSLOT", "k")
	d.Do("EXEC")

	// ACL categories: READONLY, READWRITE and ASKING are @connection,
	// CLUSTER INFO is not; CLUSTER RESET is @admin and @dangerous.
	const user = "rediscli-cluster-diff"
	d.Do("ACL", "SETUSER", user, "on", "nopass", "+@connection", "+cluster|myid")
	defer d.DoBoth("ACL", "DELUSER", user)
	for _, args := range [][]string{
		{"READONLY"}, {"READWRITE"}, {"ASKING"}, {"CLUSTER", "INFO"}, {"CLUSTER", "MYID"}, {"CLUSTER", "RESET"},
	} {
		d.Do(append([]string{"ACL", "DRYRUN", user}, args...)...)
	}
	d.Do("ACL", "SETUSER", user, "reset", "on", "nopass", "+@all", "-@dangerous")
	for _, args := range [][]string{
		{"CLUSTER", "INFO"}, {"CLUSTER", "RESET"}, {"CLUSTER", "ADDSLOTS", "1"}, {"CLUSTER", "SLAVES", "x"}, {"READWRITE"},
	} {
		d.Do(append([]string{"ACL", "DRYRUN", user}, args...)...)
	}

	// redis-cli prints the refusals as redis-server's.
	requireRedisCLI(t)
	for _, args := range [][]string{{"CLUSTER", "INFO"}, {"CLUSTER", "NODES"}, {"READONLY"}, {"READWRITE"}, {"ASKING"}} {
		cmdCompare(t, "redis-cli "+strings.Join(args, " "), cli(t, shared.z, nil, args...), cli(t, shared.r, nil, args...))
	}
}
