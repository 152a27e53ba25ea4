package aof

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// parseSimple is an independent, strict reader of RESP multibulks, to
// compare our loader against.
func parseSimple(t *testing.T, data []byte) []command {
	t.Helper()
	r := bufio.NewReader(bytes.NewReader(data))
	line := func() string {
		l, err := r.ReadString('\n')
		require.NoError(t, err)
		require.True(t, strings.HasSuffix(l, "\r\n"))
		return l[:len(l)-2]
	}
	var out []command
	for {
		if _, err := r.Peek(1); err == io.EOF {
			return out
		}
		l := line()
		if strings.HasPrefix(l, "#") {
			continue
		}
		require.Equal(t, byte('*'), l[0])
		n, err := strconv.Atoi(l[1:])
		require.NoError(t, err)
		c := make(command, n)
		for i := range c {
			l := line()
			require.Equal(t, byte('$'), l[0])
			size, err := strconv.Atoi(l[1:])
			require.NoError(t, err)
			buf := make([]byte, size+2)
			_, err = io.ReadFull(r, buf)
			require.NoError(t, err)
			require.Equal(t, "\r\n", string(buf[size:]))
			c[i] = string(buf[:size])
		}
		out = append(out, c)
	}
}

// TestLoadWhatRedisWrote writes through a real redis-server 7.0 with
// appendonly yes and loads its directory.
func TestLoadWhatRedisWrote(t *testing.T) {
	needRedis(t, "redis-cli")
	dir := t.TempDir()
	srv := startRedis(t, dir, "--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--appendfsync", "always")
	sent := encode(
		command{"SET", "a", "1"},
		command{"SELECT", "3"},
		command{"SET", "bin\x00key", "\x00\r\n\xff"},
		command{"RPUSH", "l", "x", "y"},
		command{"MULTI"}, command{"SET", "t", "1"}, command{"INCR", "t"}, command{"EXEC"},
		command{"SELECT", "0"},
		command{"SET", "e", "v", "EX", "100"},
		command{"HSET", "h", "f", "v"},
		command{"DEL", "a"},
	)
	replies := srv.raw(t, sent)
	require.NotContains(t, replies, "-ERR")
	srv.stop()

	aofDir := filepath.Join(dir, DefaultDirName)
	m, err := ReadManifest(filepath.Join(aofDir, ManifestName(DefaultFileName)))
	require.NoError(t, err)
	require.Len(t, m.Incr, 1)
	rec := &recorder{}
	st, err := Load(aofDir, ManifestName(DefaultFileName), LoadOptions{Exec: rec.exec})
	require.NoError(t, err)
	require.Equal(t, 2, st.Files)
	want := parseSimple(t, readFile(t, filepath.Join(aofDir, m.Incr[0].Name)))
	require.Equal(t, want, rec.cmds)
	// Redis's propagated forms: SET ... EX becomes an absolute PXAT.
	require.Contains(t, rec.cmds, command{"SET", "bin\x00key", "\x00\r\n\xff"})
	require.Contains(t, rec.cmds, command{"MULTI"})
	var setE command
	for _, c := range rec.cmds {
		if len(c) > 1 && c[1] == "e" {
			setE = c
		}
	}
	require.Equal(t, []string{"SET", "e", "v", "PXAT"}, []string(setE[:4]))
}

// dumpFromRedis makes an RDB with redis-server itself: a few keys, SAVE.
func dumpFromRedis(t *testing.T) ([]byte, map[string]string) {
	dir := t.TempDir()
	srv := startRedis(t, dir)
	srv.raw(t, encode(command{"SET", "rdbkey", "rdbval"}, command{"SELECT", "2"}, command{"SET", "rdb2", "\x00\xff"}, command{"SAVE"}))
	srv.stop()
	return readFile(t, filepath.Join(dir, "dump.rdb")), map[string]string{"0/rdbkey": "rdbval", "2/rdb2": "\x00\xff"}
}

// TestRedisLoadsWhatWeWrote writes a directory with our Writer (base as
// commands, empty, or an RDB Redis made; with and without a rewrite) and
// starts redis-server on it: every key must be there, and
// redis-check-aof must accept the manifest.
func TestRedisLoadsWhatWeWrote(t *testing.T) {
	needRedis(t, "redis-cli", "redis-check-aof")
	rdb, rdbKeys := dumpFromRedis(t)
	tests := []struct {
		name    string
		base    func(mod *model) (rdb bool, write func(io.Writer) error)
		rewrite bool
	}{
		{name: "empty base", base: func(*model) (bool, func(io.Writer) error) { return false, nil }},
		{name: "commands base", base: func(mod *model) (bool, func(io.Writer) error) {
			mod.data["7/based"] = "yes"
			b := mod.base()
			return false, func(w io.Writer) error { _, err := w.Write(b); return err }
		}},
		{name: "rdb base", base: func(mod *model) (bool, func(io.Writer) error) {
			for k, v := range rdbKeys {
				mod.data[k] = v
			}
			return true, func(w io.Writer) error { _, err := w.Write(rdb); return err }
		}},
		{name: "after rewrite", rewrite: true, base: func(*model) (bool, func(io.Writer) error) { return false, nil }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			aofDir := filepath.Join(root, "ourdir")
			mod := newModel()
			isRDB, write := tc.base(mod)
			w, err := OpenWriter(aofDir, "zz.aof", nil, WriterOptions{Policy: Always, RDBBase: isRDB, WriteBase: write, Timestamps: true})
			require.NoError(t, err)
			apply := func(db int, c command) Ticket {
				mod.db = db
				if strings.EqualFold(c[0], "SET") || strings.EqualFold(c[0], "DEL") {
					require.NoError(t, mod.exec(argvOf(c)))
				}
				return w.Append(db, argvOf(c))
			}
			apply(0, command{"SET", "a", "1"})
			apply(5, command{"SET", "bin\x00", "\x00\r\n\xff"})
			apply(5, command{"MULTI"})
			apply(5, command{"SET", "t1", "x"})
			apply(5, command{"SET", "t2", "y"})
			apply(5, command{"EXEC"})
			apply(0, command{"SET", "ttl", "z", "PXAT", fmt.Sprint(time.Now().Add(time.Hour).UnixMilli())})
			require.NoError(t, w.Wait(apply(0, command{"DEL", "a"})))
			if tc.rewrite {
				rw, err := w.StartRewrite()
				require.NoError(t, err)
				snap := mod.base()
				rw.Cut()
				apply(1, command{"SET", "after", "cut"})
				require.NoError(t, rw.Commit(false, func(out io.Writer) error { _, err := out.Write(snap); return err }))
				require.NoError(t, w.Wait(apply(1, command{"SET", "after2", "commit"})))
			}
			require.NoError(t, w.Close())

			out, err := exec.Command("redis-check-aof", filepath.Join(aofDir, "zz.aof.manifest")).CombinedOutput()
			require.NoError(t, err, "%s", out)

			srv := startRedis(t, root, "--appendonly", "yes", "--appenddirname", "ourdir", "--appendfilename", "zz.aof")
			ctx := context.Background()
			count := 0
			for db := 0; db < 16; db++ {
				c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", srv.port), DB: db})
				n, err := c.DBSize(ctx).Result()
				require.NoError(t, err)
				count += int(n)
				for k, v := range mod.data {
					if !strings.HasPrefix(k, fmt.Sprintf("%d/", db)) {
						continue
					}
					got, err := c.Get(ctx, k[strings.IndexByte(k, '/')+1:]).Result()
					require.NoError(t, err, k)
					require.Equal(t, v, got, k)
				}
				if db == 0 {
					ttl, err := c.PTTL(ctx, "ttl").Result()
					require.NoError(t, err)
					require.Greater(t, ttl, 59*time.Minute)
				}
				c.Close()
			}
			require.Equal(t, len(mod.data), count)
			srv.stop()
			require.NotContains(t, srv.output(), "Bad file format")
		})
	}
}

// TestOurCheckOnRedisFiles: our checker accepts what Redis wrote.
func TestOurCheckOnRedisFiles(t *testing.T) {
	needRedis(t, "redis-cli")
	dir := t.TempDir()
	srv := startRedis(t, dir, "--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--aof-timestamp-enabled", "yes")
	srv.raw(t, encode(command{"SET", "a", "1"}, command{"MULTI"}, command{"SET", "b", "2"}, command{"EXEC"}))
	srv.stop()
	var out bytes.Buffer
	code := Check([]string{"zredis-check-aof", filepath.Join(dir, DefaultDirName, ManifestName(DefaultFileName))},
		CheckOptions{Stdout: &out})
	require.Equal(t, 0, code, out.String())
	require.Contains(t, out.String(), "All AOF files and manifest are valid")
	_ = os.Remove
}
