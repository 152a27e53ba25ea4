package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/zmqpub"
)

// readCommand reads one command (an array of bulk strings) as its
// arguments.
func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if line[0] != '*' {
		return nil, fmt.Errorf("not an array: %q", line)
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil {
		return nil, err
	}
	args := make([]string, n)
	for i := range args {
		h, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		if h[0] != '$' {
			return nil, fmt.Errorf("not a bulk string: %q", h)
		}
		size, err := strconv.Atoi(strings.TrimSpace(h[1:]))
		if err != nil {
			return nil, err
		}
		b := make([]byte, size+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		args[i] = string(b[:size])
	}
	return args, nil
}

// commands runs gen for k in 0..n-1 and parses what it appended.
func commands(t *testing.T, n int, gen func(b []byte, k int) []byte) [][]string {
	var b []byte
	for k := 0; k < n; k++ {
		b = gen(b, k)
	}
	r := bufio.NewReader(bytes.NewReader(b))
	var out [][]string
	for {
		args, err := readCommand(r)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		out = append(out, args)
	}
	require.Len(t, out, n)
	return out
}

func TestFieldTestArgs(t *testing.T) {
	seen := map[string]bool{}
	for _, ft := range fieldTests {
		args := ft.args(1024)
		// -r before the command, so that it overrides runBench's.
		assert.Equal(t, []string{"-r", "10000"}, args[:2], ft.name)
		assert.Equal(t, "hb:__rand_int__", args[3], ft.name)
		assert.False(t, seen[ft.name], ft.name)
		seen[ft.name] = true
	}
	assert.Equal(t, []string{"-r", "10000", "HPEXPIRE", "hb:__rand_int__", "3600000", "FIELDS", "1", "f1"}, fieldTests[0].args(3))
}

func TestFieldHashCmds(t *testing.T) {
	cmds := commands(t, 3*hfieldKeys, fieldHashCmd)
	assert.Equal(t, []string{"DEL", "hb:000000000000"}, cmds[0])
	assert.Equal(t, []string{"HSET", "hb:000000000000", "f1", "xxx", "f2", "xxx", "f3", "xxx", "f4", "xxx", "f5", "xxx"}, cmds[1])
	assert.Equal(t, []string{"HPEXPIRE", "hb:000000000000", "3600000", "FIELDS", "2", "f4", "f5"}, cmds[2])
	// The last hash is the last name hb:__rand_int__ takes under -r.
	assert.Equal(t, []string{"HPEXPIRE", "hb:000000009999", "3600000", "FIELDS", "2", "f4", "f5"}, cmds[len(cmds)-1])
}

func TestParseVersion(t *testing.T) {
	v, ok := parseVersion("Redis server v=7.4.1 sha=00000000:1 malloc=jemalloc-5.3.0 bits=64 build=857944c67534cf8c")
	require.True(t, ok)
	assert.Equal(t, [2]int{7, 4}, v)
	_, ok = parseVersion("(exec: not found)")
	assert.False(t, ok)
	assert.True(t, atLeast([2]int{7, 4}, [2]int{7, 4}))
	assert.True(t, atLeast([2]int{8, 0}, [2]int{7, 4}))
	assert.False(t, atLeast([2]int{7, 4}, [2]int{8, 0}))
	assert.False(t, atLeast([2]int{7, 2}, [2]int{7, 4}))
}

func TestVolatileFieldCmds(t *testing.T) {
	cmds := commands(t, 2*lagHashes, volatileFieldCmd)
	per := lagVolatile / lagHashes
	assert.Equal(t, "HSET", cmds[0][0])
	assert.Equal(t, "volf:0", cmds[0][1])
	assert.Len(t, cmds[0], 2+2*per)
	last := cmds[len(cmds)-1]
	assert.Equal(t, []string{"HPEXPIRE", "volf:999", "3600000", "FIELDS", strconv.Itoa(per), "f0"}, last[:6])
	assert.Len(t, last, 5+per)
	assert.Equal(t, "f999", last[len(last)-1])
}

func TestFieldDeadlineCmds(t *testing.T) {
	at := func(i int) string { return strconv.Itoa(1000000 + i/50) }
	cmds := commands(t, lagHashes+lagKeys, func(b []byte, k int) []byte { return fieldDeadlineCmd(b, "lagf", at, k) })
	// The HSETs first, one per hash, holding every field that the
	// HPEXPIREATs then name, in that hash.
	fields := map[string]string{}
	for _, c := range cmds[:lagHashes] {
		require.Equal(t, "HSET", c[0])
		require.Len(t, c, 2+2*lagKeys/lagHashes)
		for j := 2; j < len(c); j += 2 {
			fields[c[j]] = c[1]
		}
	}
	require.Len(t, fields, lagKeys)
	for i, c := range cmds[lagHashes:] {
		require.Equal(t, "HPEXPIREAT", c[0])
		require.Equal(t, []string{"FIELDS", "1"}, c[3:5])
		assert.Equal(t, fields[c[5]], c[1], c[5])
		assert.Equal(t, fmt.Sprintf("lagf:%d", i%lagHashes), c[1])
		d, ok := nameDeadline(c[5])
		require.True(t, ok, c[5])
		assert.Equal(t, c[2], strconv.FormatInt(d.UnixMilli(), 10))
	}
	assert.Equal(t, []string{"HPEXPIREAT", "lagf:999", "1001999", "FIELDS", "1", "1001999:99999"}, cmds[len(cmds)-1])
}

func TestKeyDeadlineCmds(t *testing.T) {
	at := func(i int) string { return strconv.Itoa(2000000 + i/50) }
	cmds := commands(t, 2*lagKeys, func(b []byte, k int) []byte { return keyDeadlineCmd(b, "lagf", at, k) })
	assert.Equal(t, []string{"HSET", "lagf:2000000:0", "f", "v"}, cmds[0])
	assert.Equal(t, []string{"HPEXPIREAT", "lagf:2000000:0", "2000000", "FIELDS", "1", "f"}, cmds[1])
	assert.Equal(t, []string{"HPEXPIREAT", "lagf:2001999:99999", "2001999", "FIELDS", "1", "f"}, cmds[len(cmds)-1])
	d, ok := nameDeadline(cmds[len(cmds)-1][1])
	require.True(t, ok)
	assert.Equal(t, int64(2001999), d.UnixMilli())
}

func TestFieldDeadlinesSpread(t *testing.T) {
	first, at := fieldDeadlines()
	assert.Equal(t, strconv.FormatInt(first.UnixMilli(), 10), at(0))
	last, _ := strconv.ParseInt(at(lagKeys-1), 10, 64)
	assert.Equal(t, first.UnixMilli()+lagSpread.Milliseconds()-1, last)
	assert.WithinDuration(t, time.Now().Add(lagLead), first, 100*time.Millisecond)
}

func TestNameDeadline(t *testing.T) {
	for name, want := range map[string]int64{
		"1700000000123:42":      1700000000123,
		"lagf:1700000000123:42": 1700000000123,
		"lagf-off:5:0":          5,
	} {
		d, ok := nameDeadline(name)
		require.True(t, ok, name)
		assert.Equal(t, want, d.UnixMilli(), name)
	}
	for _, bad := range []string{"", "f", "lagf:x:1", "lagf:12"} {
		_, ok := nameDeadline(bad)
		assert.False(t, ok, bad)
	}
}

// hashFieldsFrames builds a hash-fields message: frame 3 as a hash's
// (zmqpub.Encode of a hash), the header's type 6.
func hashFieldsFrames(key string, parts ...string) [][]byte {
	var ps [][]byte
	for _, p := range parts {
		ps = append(ps, []byte(p))
	}
	f := zmqpub.Encode(3, zmqpub.TypeHash, []byte(key), ps)
	binary.NativeEndian.PutUint16(f[0][2:], uint16(typeHashFields))
	return f[:]
}

func TestDecodeHashFields(t *testing.T) {
	frames := hashFieldsFrames("lagf:7", "100:7", "v", "100:1007", "w")
	for name, decode := range map[string]func([][]byte) ([]byte, [][]byte, error){
		"decodeHashFields": decodeHashFields,
		"readHashFields":   readHashFields, // where zmqpub.Decode refuses type 6
	} {
		key, pairs, err := decode(frames)
		require.NoError(t, err, name)
		assert.Equal(t, "lagf:7", string(key), name)
		assert.Equal(t, [][]byte{[]byte("100:7"), []byte("v"), []byte("100:1007"), []byte("w")}, pairs, name)
	}

	// Another type is not ours.
	h := zmqpub.Encode(0, zmqpub.TypeHash, []byte("k"), [][]byte{[]byte("f"), []byte("v")})
	_, _, err := decodeHashFields(h[:])
	assert.Error(t, err)

	// Damaged frames are refused, not read past their end.
	for name, damage := range map[string]func(f [][]byte){
		"odd count":      func(f [][]byte) { binary.NativeEndian.PutUint32(f[2], 3) },
		"count too big":  func(f [][]byte) { binary.NativeEndian.PutUint32(f[2], 1000) },
		"short item":     func(f [][]byte) { f[2] = f[2][:len(f[2])-1] },
		"trailing bytes": func(f [][]byte) { f[2] = append(f[2], 0) },
		"short key":      func(f [][]byte) { f[1] = f[1][:len(f[1])-1] },
	} {
		f := hashFieldsFrames("lagf:7", "100:7", "v")
		f[2] = bytes.Clone(f[2])
		damage(f)
		_, _, err := readHashFields(f)
		assert.Error(t, err, name)
		_, _, err = decodeHashFields(f)
		assert.Error(t, err, name)
	}
}

func TestLagFigures(t *testing.T) {
	z := lagResult{received: 100, p50: time.Millisecond, p99: 2 * time.Millisecond, max: notReceived,
		pingIdle: time.Millisecond, pingListener: time.Millisecond, pingOff: time.Millisecond}
	r := z
	r.p50, r.max = 4*time.Millisecond, 8*time.Millisecond
	figs := lagFigures("field lag (keys), vs 7.4", "fields received", "fields", z, &r)
	require.Len(t, figs, 7)
	assert.Equal(t, "fields received", figs[0].name)
	assert.Equal(t, neither, figs[0].better)
	assert.Equal(t, 0.25, figs[1].ratio)                               // lag p50
	assert.True(t, math.IsNaN(figs[3].z) && math.IsNaN(figs[3].ratio)) // lag max: never received
	assert.Equal(t, 8.0, figs[3].r)

	alone := lagFigures("field lag (hashes)", "fields received", "fields", z, nil)
	for _, f := range alone {
		assert.True(t, math.IsNaN(f.r) && math.IsNaN(f.ratio), f.name)
	}
	assert.Equal(t, 1.0, alone[1].z)
}

func TestFieldSummaryAlone(t *testing.T) {
	c := &fieldCell{cell: cell{z: []result{{rps: 100, p99: 2}, {err: "boom"}, {rps: 300, p99: 1}}}}
	s := fieldSummary(c)
	assert.Equal(t, 2, s.ok)
	assert.Equal(t, 200.0, s.zRPS)
	assert.Equal(t, 1.5, s.zP99)
	assert.Equal(t, "zredis: boom", s.firstErr)
	assert.True(t, math.IsNaN(s.rRPS) && math.IsNaN(s.rpsRatio) && math.IsNaN(s.p99Ratio))

	// With the reference, as the grid's cells.
	c.onRef = true
	c.r = []result{{rps: 50, p99: 1}, {rps: 1, p99: 1}, {rps: 100, p99: 1}}
	s = fieldSummary(c)
	assert.Equal(t, 2.5, s.rpsRatio)
}

func TestFieldTTLFigures(t *testing.T) {
	cells := []*fieldCell{
		{cell: cell{pipeline: 1, test: test{name: "HPEXPIRE"}, z: []result{{rps: 200, p99: 1}}, r: []result{{rps: 100, p99: 2}}}, onRef: true},
		{cell: cell{pipeline: 1, test: test{name: "HSETEX PX"}, z: []result{{rps: 300, p99: 1}}}},
	}
	var b bytes.Buffer
	figs := reportFieldTTL(&b, options{pipelines: []int{1}, clients: 50, rounds: 1}, "redis 7.4", true, cells)
	var names []string
	for _, f := range figs {
		names = append(names, f.section+"|"+f.name)
	}
	assert.Equal(t, []string{
		"field TTL rps, vs 7.4|P1 HPEXPIRE", "field TTL rps, vs 7.4|P1 HSETEX PX", "field TTL rps, vs 7.4|P1 geomean (1 cells)",
		"field TTL p99, vs 7.4|P1 HPEXPIRE", "field TTL p99, vs 7.4|P1 HSETEX PX", "field TTL p99, vs 7.4|P1 geomean (1 cells)",
	}, names)
	assert.Equal(t, 2.0, figs[0].ratio)
	assert.True(t, math.IsNaN(figs[1].ratio)) // HSETEX: zredis alone
	assert.Equal(t, 300.0, figs[1].z)
	assert.Regexp(t, `HSETEX PX\s+0\s+300\s+-\s+-`, b.String())

	b.Reset()
	cells[0].onRef, cells[0].r = false, nil
	figs = reportFieldTTL(&b, options{pipelines: []int{1}, clients: 50, rounds: 1}, "redis 7.4", false, cells)
	assert.Equal(t, "field TTL rps", figs[0].section)
	assert.Len(t, figs, 4) // no geomean without a ratio
	assert.Contains(t, b.String(), "zredis alone")
	assert.Regexp(t, `HPEXPIRE\s+0\s+200\s+1\.000\s`, b.String())
}
