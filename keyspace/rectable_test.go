package keyspace

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// checkRecTable checks a table's invariants: every record's tag is its
// member's, and it sits at or after its home (in old, at or after the
// first slot not yet moved) with no empty slot between, where find
// finds it; old's slots below moved are empty; n counts the records.
func checkRecTable(t *testing.T, tb *recTable) {
	t.Helper()
	n := 0
	check := func(a *slotArray, from int) {
		for i := range a.tags {
			if a.tags[i] == 0 {
				continue
			}
			require.GreaterOrEqual(t, i, from, "a record below the moved slots")
			x := recHash(a.recs[i])
			require.Equal(t, tagOf(x), a.tags[i])
			home := int(x >> a.shift)
			require.LessOrEqual(t, home, i)
			for j := max(home, from); j < i; j++ {
				require.NotZero(t, a.tags[j], "a hole in a cluster")
			}
			fa, fi := tb.find(bytesOf(recKey(a.recs[i])), x)
			require.True(t, fa == a && fi == i, "find missed a record")
			n++
		}
	}
	check(&tb.cur, 0)
	if tb.resizing() {
		check(&tb.old, tb.moved)
	}
	require.Equal(t, tb.n, n)
}

// A table past resizeSyncHomes grows and shrinks a step at a time: a
// model of adds, replacements and deletions, growing, then draining,
// with lookups, scans that start before and end after resizes, clones
// and random draws along the way.
func TestRecTableIncrementalResize(t *testing.T) {
	h := NewHash()
	lim := HashLimits{MaxEntries: 0, MaxValue: 0, Overwrite: true}
	model := map[string]string{}
	r := rand.New(rand.NewPCG(3, 4))
	sawGrowth, sawShrink, scans := false, false, 0
	type scanState struct {
		cursor uint64
		stable map[string]bool // present from the scan's start, not deleted since
		seen   map[string]bool
	}
	var sc *scanState
	startScan := func() {
		sc = &scanState{stable: map[string]bool{}, seen: map[string]bool{}}
		for f := range model {
			sc.stable[f] = true
		}
	}
	startScan()
	const grow, drain = 60000, 50000
	for i := 0; i < grow+drain; i++ {
		f := fmt.Sprint("f", r.IntN(20000+i/2))
		k := r.IntN(10)
		if i >= grow { // every field in turn, and a few new ones
			if k == 0 {
				nf := fmt.Sprint("n", r.IntN(1000))
				_, had := model[nf]
				require.Equal(t, !had, h.Set([]byte(nf), []byte("v"), lim))
				model[nf] = "v"
			}
			f, k = fmt.Sprint("f", i-grow), 8
		}
		switch {
		case k < 7:
			v := fmt.Sprint("v", r.IntN(100))
			_, had := model[f]
			require.Equal(t, !had, h.Set([]byte(f), []byte(v), lim))
			model[f] = v
		case k < 9:
			_, had := model[f]
			require.Equal(t, had, h.Delete([]byte(f)))
			delete(model, f)
			delete(sc.stable, f)
		default:
			got, ok := h.Get([]byte(f))
			want, had := model[f]
			require.Equal(t, had, ok)
			require.Equal(t, want, string(got))
		}
		tb := h.tab()
		if tb == nil {
			continue
		}
		if tb.resizing() {
			if tb.cur.bits() > tb.old.bits() {
				sawGrowth = true
			} else {
				sawShrink = true
			}
		}
		// One HSCAN call of 10 every 4 writes: a scan spans about
		// 10,000 writes, and growths.
		if i%4 == 0 {
			sc.cursor = h.Scan(sc.cursor, 10, func(f, v []byte) { sc.seen[string(f)] = true })
			if sc.cursor == 0 {
				for f := range sc.stable {
					require.True(t, sc.seen[f], "scan missed %q", f)
				}
				scans++
				startScan()
			}
		}
		if i%4999 == 0 {
			checkRecTable(t, &tb.recTable)
			require.Equal(t, model, hashContents(h))
			c := h.Clone().(*Hash)
			checkRecTable(t, &c.tab().recTable)
			h.Set([]byte("clone-check"), []byte("x"), lim)
			h.Delete([]byte("clone-check"))
			require.Equal(t, model, hashContents(c))
			f, v := h.Random()
			require.Equal(t, model[string(f)], string(v))
		}
		require.Equal(t, len(model), h.Len())
	}
	require.True(t, sawGrowth, "no growth was incremental")
	require.True(t, sawShrink, "no shrink was incremental")
	require.Less(t, len(model), 1000)
	require.GreaterOrEqual(t, scans, 3)
	checkRecTable(t, &h.tab().recTable)
	require.Equal(t, model, hashContents(h))
}

// A write moves at most stepSlots slots, and a growth ends before the
// next one starts.
func TestRecTableGrowthSteps(t *testing.T) {
	z := NewZSet()
	growths := 0
	for i := 0; i < 200000; i++ {
		wasGrowing := z.dict.resizing()
		before, bits := z.dict.moved, z.dict.cur.bits()
		z.Set([]byte(fmt.Sprint("m", i)), float64(i), true)
		switch {
		case wasGrowing:
			require.Equal(t, bits, z.dict.cur.bits(), "a growth was finished at once")
			if z.dict.resizing() {
				require.LessOrEqual(t, z.dict.moved-before, stepSlots)
			}
			if i%61 == 0 && i < 30000 {
				checkRecTable(t, z.dict)
			}
		case !wasGrowing && z.dict.resizing():
			growths++
			require.Equal(t, 0, z.dict.moved)
		}
	}
	require.GreaterOrEqual(t, growths, 6)
	zsetConsistent(t, z)
}

// During a growth a random draw is uniform over the records of both
// arrays.
func TestRecTableRandomDuringGrowth(t *testing.T) {
	h := NewHash()
	lim := HashLimits{MaxEntries: 0, MaxValue: 0}
	i := 0
	for ; h.tab() == nil || !h.tab().resizing(); i++ {
		h.Set([]byte(fmt.Sprint("f", i)), []byte("v"), lim)
	}
	for k := 0; k < 5; k++ { // part of the way
		h.Set([]byte(fmt.Sprint("f", i)), []byte("v"), lim)
		i++
	}
	tb := h.tab()
	require.True(t, tb.resizing())
	inOld := map[string]bool{}
	for j := tb.moved; j < len(tb.old.tags); j++ {
		if tb.old.tags[j] != 0 {
			inOld[recKey(tb.old.recs[j])] = true
		}
	}
	require.NotEmpty(t, inOld)
	const draws = 200000
	old := 0
	for k := 0; k < draws; k++ {
		f, _ := h.Random()
		if inOld[string(f)] {
			old++
		}
	}
	want := float64(len(inOld)) / float64(tb.n)
	require.InDelta(t, want, float64(old)/draws, 0.01)
}

// Fields deleted in hash order, as an HSCAN that deletes what it sees,
// leave the rest bunched: a shrink that would make a long cluster is
// given up, at once or part of the way through, and the hash stays
// whole.
func TestRecTableShrinkOfBunchedFields(t *testing.T) {
	h := NewHash()
	lim := HashLimits{MaxEntries: 0, MaxValue: 0}
	model := map[string]bool{}
	for i := 0; i < 40000; i++ {
		f := fmt.Sprint("f", i)
		h.Set([]byte(f), []byte("v"), lim)
		model[f] = true
	}
	var cursor uint64
	calls, gaveUp := 0, false
	for {
		var seen []string
		cursor = h.Scan(cursor, 100, func(f, v []byte) { seen = append(seen, string(f)) })
		for _, f := range seen {
			if len(model) > 50 && model[f] {
				require.True(t, h.Delete([]byte(f)))
				delete(model, f)
			}
		}
		if tb := h.tab(); tb.shrinkBelow != math.MaxInt {
			gaveUp = true
		}
		if calls++; calls%25 == 0 {
			checkRecTable(t, &h.tab().recTable)
		}
		if cursor == 0 {
			break
		}
	}
	require.Len(t, model, 50)
	require.True(t, gaveUp, "no shrink was given up")
	checkRecTable(t, &h.tab().recTable)
	for f := range model {
		_, ok := h.Get([]byte(f))
		require.True(t, ok, f)
	}
	require.Equal(t, 50, h.Len())
}

// An HSCAN call during a resize returns about COUNT fields of each
// array and the rest of their clusters (the old one's are long, at 3/4
// load), not the rest of the old array: cur holds few records as a
// growth starts.
func TestRecTableScanCountDuringResize(t *testing.T) {
	h := NewHash()
	lim := HashLimits{MaxEntries: 0, MaxValue: 0}
	i := 0
	for ; h.tab() == nil || !h.tab().resizing() || h.tab().n < 50000; i++ {
		h.Set([]byte(fmt.Sprint("f", i)), []byte("v"), lim)
	}
	var cursor uint64
	calls, total := 0, 0
	for {
		n := 0
		cursor = h.Scan(cursor, 10, func(f, v []byte) { n++ })
		require.Less(t, n, 1000, "one call returned %d fields", n)
		calls++
		total += n
		if cursor == 0 {
			break
		}
	}
	require.True(t, h.tab().resizing())
	require.GreaterOrEqual(t, total, h.Len())
	require.Greater(t, calls, h.Len()/100)
}

// A slot array of BigTableMin bytes or more is announced before it is
// allocated: a growth's, and a copy's (COPY, a write during a snapshot).
func TestRecTableAnnouncesBigArrays(t *testing.T) {
	var announced []int
	defer func(h func(int)) { BigTableHook = h }(BigTableHook)
	BigTableHook = func(bytes int) { announced = append(announced, bytes) }
	z := NewZSet()
	for i := 0; len(announced) == 0; i++ {
		z.Set([]byte(fmt.Sprint("m", i)), float64(i), true)
	}
	require.GreaterOrEqual(t, announced[0], BigTableMin)
	require.Equal(t, announced[0], len(z.dict.cur.tags)*slotBytes)
	announced = nil
	z.Clone()
	require.NotEmpty(t, announced)
	require.Equal(t, len(z.dict.cur.tags)*slotBytes, announced[0])
}
