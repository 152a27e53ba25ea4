package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	if got := percentile(nil, 0.99); got != 0 {
		t.Errorf("percentile(nil) = %v, want 0", got)
	}
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.99, 99 * time.Millisecond}, {1, 100 * time.Millisecond}, {0.5, 50 * time.Millisecond}, {0, time.Millisecond}} {
		if got := percentile(ds, c.q); got != c.want {
			t.Errorf("percentile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if ds[0] != 100*time.Millisecond {
		t.Error("percentile sorted its argument")
	}
}

func TestSumOmem(t *testing.T) {
	list := "id=3 addr=127.0.0.1:1 omem=1024 tot-mem=5\nid=4 addr=127.0.0.1:2 omem=2048 tot-mem=5\n"
	if got, ok := sumOmem(list); !ok || got != 3072 {
		t.Errorf("sumOmem = %d, %v; want 3072, true", got, ok)
	}
	if _, ok := sumOmem(""); ok {
		t.Error("sumOmem of an empty list found omem")
	}
}

// No line of the abusive payloads may be a command that changes or stops
// the server: garbage has no letters at all.
func TestAbusePatterns(t *testing.T) {
	g := garbage(1<<16, 7)
	for _, c := range g {
		if c < 0x80 && c != '\n' {
			t.Fatalf("garbage holds byte %#x", c)
		}
	}
	if !bytes.Equal(g, garbage(1<<16, 7)) {
		t.Error("garbage is not the same for the same seed")
	}
	names := map[string]bool{}
	for _, p := range abusePatterns {
		if len(p.payload) == 0 || names[p.name] {
			t.Errorf("pattern %q empty or twice", p.name)
		}
		names[p.name] = true
		up := strings.ToUpper(string(p.payload))
		for _, bad := range []string{"SHUTDOWN", "FLUSH", "DEBUG", "CONFIG", "SLAVEOF", "REPLICAOF"} {
			if strings.Contains(up, bad) {
				t.Errorf("pattern %q holds %s", p.name, bad)
			}
		}
	}
}

func TestStressTableAndFigures(t *testing.T) {
	c := stressCase{name: "case", cols: []stressCol{{"a", true}, {"b", false}}}
	res := []stressResult{
		{server: "zredis", peak: 4 << 20, after: 2 << 20, pings: 10, p99: 2 * time.Millisecond, max: 4 * time.Millisecond, alive: true,
			out: stressOut{vals: []float64{2, 5}, notes: []string{"a note"}}},
		{server: "redis", peak: 2 << 20, after: 2 << 20, pings: 10, p99: time.Millisecond, max: 2 * time.Millisecond, alive: true,
			out: stressOut{vals: []float64{1, math.NaN()}}},
		{server: "third", peak: 1 << 20, alive: false, out: stressOut{vals: []float64{math.NaN(), 1}}},
	}
	var b bytes.Buffer
	stressTable(&b, c, res)
	out := b.String()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 7 { // header, 3 servers, 2 ratio rows, 1 note
		t.Fatalf("table has %d lines:\n%s", len(lines), out)
	}
	ratio := strings.Fields(lines[4])
	// zredis/redis, peak, after, p99, max, pings, timeouts, errors, a, b
	want := []string{"zredis/redis", "2.00", "1.00", "2.00", "2.00", "-", "-", "-", "2.00", "-"}
	if strings.Join(ratio, " ") != strings.Join(want, " ") {
		t.Errorf("ratio row %q, want %q", ratio, want)
	}
	if !strings.Contains(lines[3], "NO") || !strings.Contains(out, "zredis: a note") {
		t.Errorf("table misses the dead server or the note:\n%s", out)
	}
	figs := stressFigures(c, res)
	if len(figs) != 2 || figs[0].ratio != 2 || figs[1].ratio != 2 || figs[1].z != 4 {
		t.Errorf("figures %+v", figs)
	}
}

func TestStressCasesWellFormed(t *testing.T) {
	for _, c := range stressCases {
		if c.name == "" || c.title == "" || c.run == nil {
			t.Errorf("case %+v incomplete", c.name)
		}
	}
}
