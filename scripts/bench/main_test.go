package main

import (
	"bufio"
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCSV(t *testing.T) {
	out := `"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
"SETEX key:__rand_int__ 100 xxx","165289.25","0.182","0.048","0.167","0.287","0.455","0.863"
`
	r, err := parseCSV([]byte(out))
	require.NoError(t, err)
	assert.Equal(t, result{rps: 165289.25, p50: 0.167, p99: 0.455}, r)

	for _, bad := range []string{
		"",
		`"test","rps"` + "\n",
		`"test","rps"` + "\n" + `"SET","1"` + "\n",
		`"test","rps","p50_latency_ms","p99_latency_ms"` + "\n" + `"SET","x","1","2"` + "\n",
	} {
		_, err := parseCSV([]byte(bad))
		assert.Error(t, err, "%q", bad)
	}
}

func TestMedianRoundN(t *testing.T) {
	assert.True(t, math.IsNaN(median(nil)))
	assert.Equal(t, 2.0, median([]float64{3, 1, 2}))
	assert.Equal(t, 2.5, median([]float64{4, 1, 3, 2}))

	for _, tc := range []struct {
		in   float64
		want int
	}{{0, 10000}, {9999, 10000}, {387654, 390000}, {3125000, 3100000}, {12345, 12000}} {
		assert.Equal(t, tc.want, roundN(tc.in), "%v", tc.in)
	}
}

func TestSummarizeSkipsFailedRounds(t *testing.T) {
	c := &cell{
		z: []result{{rps: 100, p99: 2}, {err: "boom"}, {rps: 300, p99: 1}},
		r: []result{{rps: 200, p99: 1}, {rps: 1, p99: 1}, {rps: 300, p99: 1}},
	}
	s := summarize(c)
	assert.Equal(t, 2, s.ok)
	assert.Equal(t, "zredis: boom", s.firstErr)
	assert.Equal(t, 200.0, s.zRPS)
	assert.Equal(t, 250.0, s.rRPS)
	assert.Equal(t, 0.75, s.rpsRatio)
	assert.Equal(t, 1.5, s.p99Ratio)
}

func TestSelectTests(t *testing.T) {
	all, err := selectTests("all")
	require.NoError(t, err)
	assert.Equal(t, len(tests), len(all))

	none, err := selectTests("")
	require.NoError(t, err)
	assert.Empty(t, none)

	// Table order, whatever the order asked for; names case-insensitive.
	got, err := selectTests("RPOP, lpush,mset")
	require.NoError(t, err)
	var names []string
	for _, tc := range got {
		names = append(names, tc.name)
	}
	assert.Equal(t, []string{"MSET (10 keys)", "LPUSH", "RPOP"}, names)

	_, err = selectTests("set,nosuch")
	assert.ErrorContains(t, err, "nosuch")
}

func TestEveryTestHasAUniqueKey(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range tests {
		k := testKey(tc)
		assert.False(t, seen[k], k)
		seen[k] = true
	}
}

func TestAppendCommands(t *testing.T) {
	assert.Equal(t, "*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n", string(appendCmd(nil, "DEL", "k")))
	assert.Equal(t, "$8\r\nfield:42\r\n", string(appendBulkNum(nil, "field:", 42)))
	assert.Equal(t, "$1\r\n0\r\n", string(appendBulkNum(nil, "", 0)))
}

// Every memory case's commands are well-formed RESP arrays of bulk
// strings.
func TestMemCasesWellFormed(t *testing.T) {
	for _, mc := range memCases {
		for _, i := range []int{0, 7, memElements - 1} {
			b := mc.gen(nil, i)
			// A command is an array of bulk strings, which readReply
			// parses like an array reply.
			rc := &rconn{r: bufio.NewReader(bytes.NewReader(b))}
			_, err := rc.readReply()
			assert.NoError(t, err, "%s %d: %q", mc.name, i, b)
			assert.Zero(t, rc.r.Buffered(), "%s %d: trailing bytes in %q", mc.name, i, b)
		}
	}
}

func TestReadReply(t *testing.T) {
	in := "+OK\r\n:12\r\n$3\r\nabc\r\n$-1\r\n*2\r\n$1\r\na\r\n:1\r\n-ERR boom\r\n*2\r\n-ERR x\r\n:1\r\n"
	rc := &rconn{r: bufio.NewReader(strings.NewReader(in))}
	for _, want := range []string{"OK", "12", "abc", "", ""} {
		got, err := rc.readReply()
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	_, err := rc.readReply()
	assert.EqualError(t, err, "ERR boom")
	_, err = rc.readReply()
	assert.EqualError(t, err, "ERR x")
	_, err = rc.readReply()
	assert.Error(t, err) // EOF
}

func TestInfoField(t *testing.T) {
	info := "# Memory\r\nused_memory:123\r\nused_memory_human:123B\r\n"
	v, err := infoField(info, "used_memory")
	require.NoError(t, err)
	assert.Equal(t, int64(123), v)
	_, err = infoField(info, "used_memory_rss")
	assert.Error(t, err)
}
