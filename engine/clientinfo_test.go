package engine

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/zredis/zredis/resp"
)

// clientInfoFields parses a CLIENT LIST line into its fields.
func clientInfoFields(line string) map[string]string {
	f := map[string]string{}
	for _, kv := range strings.Fields(line) {
		k, v, _ := strings.Cut(kv, "=")
		f[k] = v
	}
	return f
}

// CLIENT LIST of a client that CLIENT PAUSE holds, or that blocks, and
// of query buffers as Redis 7.0 (jemalloc) sizes them.
func TestClientInfoHeldAndQueryBuffer(t *testing.T) {
	cl := &Client{ID: 3, W: resp.NewWriter(), LastCmd: "set"}
	f := clientInfoFields(ClientInfoString(cl, 0, 0))
	assert.Equal(t, map[string]string{"flags": "N", "qbuf": "0", "qbuf-free": "0", "argv-mem": "0", "tot-mem": "17160"},
		map[string]string{"flags": f["flags"], "qbuf": f["qbuf"], "qbuf-free": f["qbuf-free"], "argv-mem": f["argv-mem"], "tot-mem": f["tot-mem"]},
		"no buffer yet: Redis's empty sds, 768 + 8 + 16384")

	cl.Paused, cl.PausedArgs = true, [][]byte{[]byte("set"), []byte("k"), []byte("v")}
	cl.QueryBufAlloc.Store(resp.QueryBufSize)
	cl.QueryBuf.Store(20)
	f = clientInfoFields(ClientInfoString(cl, 0, 0))
	assert.Equal(t, "b", f["flags"])
	assert.Equal(t, "20", f["qbuf"])
	assert.Equal(t, "20454", f["qbuf-free"])
	assert.Equal(t, "5", f["argv-mem"])
	assert.Equal(t, "37661", f["tot-mem"], "768 + 20480 + 16384 + 5 + 3 pointers")

	cl.Paused, cl.PausedArgs = false, nil
	cl.Blocked = true
	cl.ctx.Args = [][]byte{[]byte("blpop"), []byte("l"), []byte("0")}
	cl.QueryBuf.Store(0)
	f = clientInfoFields(ClientInfoString(cl, 0, 0))
	assert.Equal(t, "b", f["flags"])
	assert.Equal(t, "7", f["argv-mem"])

	cl.Blocked = false
	f = clientInfoFields(ClientInfoString(cl, 0, 0))
	assert.Equal(t, "0", f["argv-mem"], "a command done frees its arguments")

	cl.QueryBufAlloc.Store(100002)
	f = clientInfoFields(ClientInfoString(cl, 0, 0))
	assert.Equal(t, "100002", f["qbuf-free"])
	assert.Equal(t, "131840", f["tot-mem"], "768 + 114688 + 16384")
}

func TestJemallocSize(t *testing.T) {
	for n, want := range map[int64]int64{
		100: 100, 16384: 16384, 16385: 20480, 20480: 20480, 32768: 32768, 40000: 40960,
		100002: 114688, 300002: 327680, 1 << 20: 1 << 20,
	} {
		assert.Equal(t, want, jemallocSize(n), "%d", n)
	}
}
