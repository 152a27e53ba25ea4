package main

import (
	"math"
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
