package server

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/persistence/rdb"
)

// readPayload reads a full synchronisation's RDB from a replica's
// connection: `$EOF:<mark>` and the bytes up to the mark (diskless), or
// `$<length>` and that many bytes, after the newlines that keep a waiting
// replica alive. It reports whether the payload was diskless.
func (c *client) readPayload(timeout time.Duration) (payload []byte, diskless bool) {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(timeout))
	var head string
	for head == "" {
		l, err := c.rd.ReadString('\n')
		require.NoError(c.t, err)
		head = strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r")
	}
	require.True(c.t, strings.HasPrefix(head, "$"), "payload header %q", head)
	if mark, ok := strings.CutPrefix(head, "$EOF:"); ok {
		require.Len(c.t, mark, 40)
		var b []byte
		for !bytes.HasSuffix(b, []byte(mark)) {
			x, err := c.rd.ReadByte()
			require.NoError(c.t, err)
			b = append(b, x)
		}
		return b[:len(b)-len(mark)], true
	}
	n, err := strconv.Atoi(head[1:])
	require.NoError(c.t, err)
	b := make([]byte, n)
	_, err = io.ReadFull(c.rd, b)
	require.NoError(c.t, err)
	return b, false
}

// loadPayload decodes an RDB and returns its aux fields and its keys.
func loadPayload(t *testing.T, payload []byte) (aux map[string]string, keys []string) {
	t.Helper()
	info, err := rdb.Load(bytes.NewReader(payload), rdb.DefaultLoadOptions(), func(db int, key string, _ *keyspace.Entry) error {
		keys = append(keys, strconv.Itoa(db)+":"+key)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, int64(len(payload)), info.Size, "bytes after the RDB")
	aux = map[string]string{}
	for _, kv := range info.Aux {
		aux[kv[0]] = kv[1]
	}
	return aux, keys
}

// A replica that asked for a filtered RDB (REPLCONF rdb-filter-only, as
// redis-cli --replica and --functions-rdb do) gets one without keys, with
// the usual aux fields, always diskless even where the others get a file
// (repl-diskless-sync no, or SYNC), as in Redis 7.0; then the stream, or
// with rdb-only nothing more.
func TestReplicaRDBFilter(t *testing.T) {
	for _, tc := range []struct {
		name     string
		diskless string
		filter   string
		rdbOnly  bool
		psync    bool
	}{
		{"replica mode, disk-based server", "no", "", false, false},
		{"replica mode, diskless server", "yes", "", false, false},
		{"functions rdb", "no", "functions", true, false},
		{"functions rdb, diskless server", "yes", "functions", true, false},
		{"psync", "no", "functions", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, "repl-diskless-sync "+tc.diskless, "repl-diskless-sync-delay 0")
			c := dial(t, ts.addr)
			require.Equal(t, "+OK", c.do("SET", "k0", "v"))
			require.Equal(t, "+OK", c.do("SELECT", "3"))
			require.Equal(t, "+OK", c.do("SET", "k3", "v", "EX", "100"))

			r := dial(t, ts.addr)
			require.Equal(t, "+OK", r.do("REPLCONF", "capa", "eof"))
			if tc.rdbOnly {
				require.Equal(t, "+OK", r.do("REPLCONF", "rdb-only", "1"))
			}
			require.Equal(t, "+OK", r.do("REPLCONF", "rdb-filter-only", tc.filter))
			if tc.psync {
				r.send("PSYNC", "?", "-1")
				l, err := r.line(5 * time.Second)
				require.NoError(t, err)
				require.True(t, strings.HasPrefix(l, "+FULLRESYNC "), l)
			} else {
				r.send("SYNC")
			}
			payload, diskless := r.readPayload(10 * time.Second)
			assert.True(t, diskless, "a filtered RDB is sent diskless")
			aux, keys := loadPayload(t, payload)
			assert.Empty(t, keys)
			for _, f := range []string{"redis-ver", "redis-bits", "ctime", "used-mem", "repl-stream-db", "repl-id", "repl-offset", "aof-base"} {
				assert.Contains(t, aux, f)
			}
			assert.Contains(t, ts.log.String(), "Starting BGSAVE for SYNC with target: replicas sockets")

			if tc.rdbOnly {
				assert.True(t, r.closed(10*time.Second), "an rdb-only replica is closed after its RDB")
				return
			}
			// The stream starts at the first ACK; what was written
			// meanwhile was kept for it.
			require.Equal(t, "+OK", c.do("SET", "after", "1"))
			r.send("REPLCONF", "ACK", "0")
			for {
				l, err := r.line(10 * time.Second)
				require.NoError(t, err)
				if l == "after" {
					break
				}
			}
		})
	}
}

// Replicas waiting together for a diskless RDB share one only when they
// asked for the same filter (shouldStartChildReplication): a filtered one
// and an ordinary one get each their own, the ordinary one with the keys.
func TestReplicaRDBFilterGrouping(t *testing.T) {
	ts := startServer(t, "repl-diskless-sync yes", "repl-diskless-sync-delay 1")
	c := dial(t, ts.addr)
	require.Equal(t, "+OK", c.do("SET", "k", "v"))

	filtered := dial(t, ts.addr)
	require.Equal(t, "+OK", filtered.do("REPLCONF", "capa", "eof"))
	require.Equal(t, "+OK", filtered.do("REPLCONF", "rdb-filter-only", ""))
	full := dial(t, ts.addr)
	require.Equal(t, "+OK", full.do("REPLCONF", "capa", "eof"))
	filtered.send("PSYNC", "?", "-1")
	full.send("PSYNC", "?", "-1")
	for _, r := range []*client{filtered, full} {
		l, err := r.line(10 * time.Second)
		for err == nil && strings.TrimSpace(l) == "" { // newlines while waiting
			l, err = r.line(10 * time.Second)
		}
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(l, "+FULLRESYNC "), l)
	}
	p, diskless := filtered.readPayload(10 * time.Second)
	require.True(t, diskless)
	_, keys := loadPayload(t, p)
	assert.Empty(t, keys)
	p, diskless = full.readPayload(10 * time.Second)
	require.True(t, diskless)
	_, keys = loadPayload(t, p)
	assert.Equal(t, []string{"0:k"}, keys)
	assert.Equal(t, 2, strings.Count(ts.log.String(), "Starting BGSAVE for SYNC with target: replicas sockets"))
}
