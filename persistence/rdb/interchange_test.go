package rdb

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/internal/testsupport"
	"github.com/zredis/zredis/keyspace"
)

// loadAll loads a file into db -> key -> entry.
func loadAll(t *testing.T, path string, opt LoadOptions) (Info, map[int]map[string]*keyspace.Entry) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	got := map[int]map[string]*keyspace.Entry{}
	info, err := Load(f, opt, func(db int, key string, e *keyspace.Entry) error {
		if got[db] == nil {
			got[db] = map[string]*keyspace.Entry{}
		}
		require.NotContains(t, got[db], key, "duplicate key")
		got[db][key] = e
		return nil
	})
	require.NoError(t, err)
	return info, got
}

// redisConfigs are the configurations the interchange tests run under:
// Redis's defaults, and thresholds that force the other encodings.
var redisConfigs = []struct {
	name string
	args []string
	opt  LoadOptions
	// packedThreshold, when set, makes Redis store list elements of at
	// least that size in plain quicklist nodes.
	packedThreshold int
}{
	{name: "defaults", opt: DefaultLoadOptions()},
	{name: "no compression no checksum", args: []string{"--rdbcompression", "no", "--rdbchecksum", "no"}, opt: DefaultLoadOptions()},
	{name: "large listpacks, compressed list nodes", args: []string{
		"--list-max-listpack-size", "4", "--list-compress-depth", "1",
		"--hash-max-listpack-entries", "2000", "--hash-max-listpack-value", "300",
		"--zset-max-listpack-entries", "1000", "--zset-max-listpack-value", "300",
		"--set-max-intset-entries", "2000"},
		opt: LoadOptions{HashMaxListpackEntries: 2000, HashMaxListpackValue: 300, SetMaxIntsetEntries: 2000,
			ZSetMaxListpackEntries: 1000, ZSetMaxListpackValue: 300}},
	{name: "no listpacks, plain list nodes", args: []string{
		"--hash-max-listpack-entries", "0", "--zset-max-listpack-entries", "0", "--set-max-intset-entries", "0"},
		opt:             LoadOptions{HashMaxListpackValue: 64, ZSetMaxListpackValue: 64},
		packedThreshold: 5000},
}

// TestLoadRedisFile fills a real Redis with every type in its encodings,
// saves, and loads the file: every key, value and deadline must be what
// was stored, and every encoding what Redis itself reports.
func TestLoadRedisFile(t *testing.T) {
	redisPath(t)
	for _, cfg := range redisConfigs {
		t.Run(cfg.name, func(t *testing.T) {
			dir := t.TempDir()
			r := startRedis(t, dir, cfg.args...)
			ctx := context.Background()
			if cfg.packedThreshold > 0 {
				require.NoError(t, r.client.Do(ctx, "DEBUG", "QUICKLIST-PACKED-THRESHOLD", cfg.packedThreshold).Err())
			}
			ds := makeDataset(time.Now().UnixMilli())
			fillRedis(t, r.client, ds)
			require.NoError(t, r.client.Save(ctx).Err())

			info, got := loadAll(t, filepath.Join(dir, "dump.rdb"), cfg.opt)
			assert.Equal(t, 10, info.Version)
			assert.Equal(t, ds.count(), info.Keys)
			assert.Contains(t, info.Aux, [2]string{"redis-ver", "7.0.15"})
			encs := map[int]map[string]string{}
			for db, keys := range ds {
				encs[db] = map[string]string{}
				for k, want := range keys {
					e := got[db][k]
					require.NotNil(t, e, "key %q of db %d", k, db)
					checkEntry(t, k, want, e)
					encs[db][k] = e.Encoding()
				}
			}
			// Redis's own encodings after loading the same file.
			require.NoError(t, r.client.Do(ctx, "DEBUG", "RELOAD").Err())
			checkRedis(t, r.client, ds, encs)
		})
	}
}

// writeDataset writes the dataset's entries (as the keyspace builds
// them) to path and returns their encodings.
func writeDataset(t *testing.T, path string, ds dataset, opt WriterOptions) map[int]map[string]string {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := NewWriter(f, opt)
	require.NoError(t, err)
	encs := map[int]map[string]string{}
	for _, db := range dbOrder(ds) {
		keys := ds[db]
		expires := 0
		for _, v := range keys {
			if v.expireAt != 0 {
				expires++
			}
		}
		require.NoError(t, w.SelectDB(db, len(keys), expires))
		encs[db] = map[string]string{}
		for _, k := range sortedKeys(keys) {
			e := buildEntry(keys[k])
			encs[db][k] = e.Encoding()
			require.NoError(t, w.WriteEntry(k, e))
		}
	}
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
	return encs
}

// TestRedisLoadsOurFile writes entries built with the keyspace API and
// starts a real Redis on the file: values, deadlines and OBJECT ENCODING
// must match, and redis-check-rdb must accept the file.
func TestRedisLoadsOurFile(t *testing.T) {
	redisPath(t)
	for _, opt := range []WriterOptions{{Compress: true, Checksum: true}, {}} {
		t.Run("compress="+strconv.FormatBool(opt.Compress), func(t *testing.T) {
			dir := t.TempDir()
			ds := makeDataset(time.Now().UnixMilli())
			encs := writeDataset(t, filepath.Join(dir, "ours.rdb"), ds, opt)
			r := startRedis(t, dir, "--dbfilename", "ours.rdb")
			checkRedis(t, r.client, ds, encs)

			check := testsupport.RequireTool(t, "redis-check-rdb")
			out, err := exec.Command(check, filepath.Join(dir, "ours.rdb")).CombinedOutput()
			assert.NoError(t, err, "redis-check-rdb: %s", out)
			assert.Contains(t, string(out), "RDB looks OK")
			// And we load our own file back.
			_, got := loadAll(t, filepath.Join(dir, "ours.rdb"), DefaultLoadOptions())
			for db, keys := range ds {
				for k, want := range keys {
					checkEntry(t, k, want, got[db][k])
					assert.Equal(t, encs[db][k], got[db][k].Encoding(), k)
				}
			}
		})
	}
}

// sameBytes are the keys of makeDataset whose DUMP payload does not
// depend on hashtable order nor on the history of LZF's hash table.
var sameBytes = map[string]bool{
	"empty": true, "int small": true, "int negative": true, "int 16": true, "int 32": true, "int 64": true,
	"not int": true, "binary\x00key\xff": true, "lzf": true, "embstr": true, "random big": true,
	"repetitive big": true, "ttl string": true, "list small": true, "list ints": true, "list big elements": true,
	"set intset": true, "set intset 64": true, "zset small": true, "zset special": true, "zset big": true,
	"zset long member": true, "hash small": true, "hash ints": true, "hash binary": true,
}

// TestDumpRestoreWithRedis checks DUMP payloads both ways: Redis's
// payloads restore here, and ours restore in Redis.
func TestDumpRestoreWithRedis(t *testing.T) {
	dir := t.TempDir()
	r := startRedis(t, dir)
	ctx := context.Background()
	ds := makeDataset(time.Now().UnixMilli())
	db0 := dataset{0: ds[0]}
	fillRedis(t, r.client, db0)

	restored := dataset{}
	encs := map[int]map[string]string{5: {}}
	for k, want := range ds[0] {
		want.expireAt = 0 // a payload has no deadline
		payload, err := r.client.Dump(ctx, k).Result()
		require.NoError(t, err)
		e, err := Restore([]byte(payload), DefaultLoadOptions())
		require.NoError(t, err, k)
		checkEntry(t, k, want, e)
		redisEnc, err := r.client.ObjectEncoding(ctx, k).Result()
		require.NoError(t, err)
		assert.Equal(t, redisEnc, e.Encoding(), "encoding of %q", k)

		// Our payload of the same value, into db 5. Where the encoding
		// fixes the bytes (no hashtable order), they are Redis's bytes.
		ours := Dump(buildEntry(want))
		if sameBytes[k] {
			assert.Equal(t, []byte(payload), ours, "DUMP payload of %q", k)
		}
		p := r.client.Pipeline()
		p.Select(ctx, 5)
		p.Restore(ctx, k, 0, string(ours))
		_, err = p.Exec(ctx)
		require.NoError(t, err, k)
		restored.put(5, k, want)
		encs[5][k] = buildEntry(want).Encoding()
	}
	checkRedis(t, r.client, restored, encs)
}

func TestRestoreErrors(t *testing.T) {
	good := Dump(keyspace.NewString([]byte("hello"), 0))
	e, err := Restore(good, DefaultLoadOptions())
	require.NoError(t, err)
	assert.Equal(t, "hello", string(e.Str()))

	newer := bytes.Clone(good)
	newer[len(newer)-10] = 11
	badSum := bytes.Clone(good)
	badSum[len(badSum)-1] ^= 1
	// A valid footer over a value that does not decode.
	reseal := func(body []byte) []byte {
		p := append(bytes.Clone(body), 10, 0)
		return appendCRC(p)
	}
	cases := []struct {
		name    string
		payload []byte
		want    error
	}{
		{"short", []byte("abc"), ErrDumpPayload},
		{"newer version", newer, ErrDumpPayload},
		{"bad checksum", badSum, ErrDumpPayload},
		{"unknown type", reseal([]byte{8, 1, 'a'}), ErrBadDataFormat},
		{"truncated value", reseal([]byte{0, 10, 'a'}), ErrBadDataFormat},
		{"stream", reseal([]byte{19, 0}), ErrBadDataFormat},
		{"stream of Redis 6.2", reseal([]byte{15, 0, 1, 0, 0}), ErrBadDataFormat},
		{"empty list", reseal([]byte{18, 0}), ErrBadDataFormat},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Restore(tc.payload, DefaultLoadOptions())
			assert.ErrorIs(t, err, tc.want)
		})
	}
}

func appendCRC(p []byte) []byte {
	sum := CRC64(p)
	for i := 0; i < 8; i++ {
		p = append(p, byte(sum>>(8*i)))
	}
	return p
}
