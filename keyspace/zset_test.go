package keyspace

import (
	"bytes"
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func zmembers(z *ZSet) []string {
	var out []string
	z.Ascend(0, func(m string, s float64) bool {
		out = append(out, m+"="+strconv.FormatFloat(s, 'g', -1, 64))
		return true
	})
	return out
}

func TestZSetOrderAndRank(t *testing.T) {
	z := NewZSet()
	require.True(t, z.Set([]byte("b"), 1, false))
	require.True(t, z.Set([]byte("a"), 1, false))
	require.True(t, z.Set([]byte("c"), 0, false))
	require.False(t, z.Set([]byte("c"), 2, false))
	assert.Equal(t, []string{"a=1", "b=1", "c=2"}, zmembers(z))
	for i, m := range []string{"a", "b", "c"} {
		r, ok := z.Rank([]byte(m))
		require.True(t, ok)
		assert.Equal(t, i, r)
	}
	_, ok := z.Rank([]byte("x"))
	assert.False(t, ok)
	assert.True(t, z.Remove([]byte("a")))
	assert.False(t, z.Remove([]byte("a")))
	assert.Equal(t, 2, z.Len())
	m, s := z.At(1)
	assert.Equal(t, "c", m)
	assert.Equal(t, 2.0, s)
}

func TestZSetNegativeZeroKeepsScore(t *testing.T) {
	z := NewZSet()
	z.Set([]byte("a"), 0, false)
	z.Set([]byte("a"), -1*0.0, false)
	s, _ := z.Score([]byte("a"))
	assert.Equal(t, 0.0, s)
}

func TestZSetBounds(t *testing.T) {
	z := NewZSet()
	for i := 0; i < 10; i++ {
		z.Set([]byte{byte('a' + i)}, float64(i), false)
	}
	cases := []struct {
		r          ScoreRange
		start, end int
	}{
		{ScoreRange{Min: 2, Max: 4}, 2, 5},
		{ScoreRange{Min: 2, Max: 4, MinEx: true}, 3, 5},
		{ScoreRange{Min: 2, Max: 4, MaxEx: true}, 2, 4},
		{ScoreRange{Min: 5, Max: 1}, 5, 2},
		{ScoreRange{Min: -1e300, Max: 1e300}, 0, 10},
	}
	for _, c := range cases {
		s, e := z.ScoreBounds(c.r)
		assert.Equal(t, c.start, s, "%+v", c.r)
		assert.Equal(t, c.end, e, "%+v", c.r)
	}
	lz := NewZSet()
	for _, m := range []string{"a", "b", "c", "d"} {
		lz.Set([]byte(m), 0, false)
	}
	s, e := lz.LexBounds(LexBound{NegInf: true, Ex: true}, LexBound{PosInf: true, Ex: true})
	assert.Equal(t, [2]int{0, 4}, [2]int{s, e})
	s, e = lz.LexBounds(LexBound{Value: "b"}, LexBound{Value: "c", Ex: true})
	assert.Equal(t, [2]int{1, 2}, [2]int{s, e})
	s, e = lz.LexBounds(LexBound{Value: "b", Ex: true}, LexBound{Value: "d"})
	assert.Equal(t, [2]int{2, 4}, [2]int{s, e})
}

func TestZSetCloneIsolated(t *testing.T) {
	z := NewZSet()
	for i := 0; i < 1000; i++ {
		z.Set([]byte(strconv.Itoa(i)), float64(i), false)
	}
	c := z.Clone().(*ZSet)
	c.Set([]byte("5"), -1, false)
	c.DeleteRange(0, 10)
	c.Pop(true)
	assert.Equal(t, 1000, z.Len())
	s, _ := z.Score([]byte("5"))
	assert.Equal(t, 5.0, s)
	m, _ := z.At(999)
	assert.Equal(t, "999", m)
	assert.Equal(t, 989, c.Len())
}

func TestZSetEncoding(t *testing.T) {
	z := NewZSet()
	assert.Equal(t, "listpack", z.Encoding())
	for i := 0; i < ZSetListpackEntries; i++ {
		z.Grow(1, ZSetListpackEntries, ZSetListpackValue)
		z.Set([]byte(strconv.Itoa(i)), 1, false)
	}
	assert.Equal(t, "listpack", z.Encoding())
	z.Grow(1, ZSetListpackEntries, ZSetListpackValue)
	assert.Equal(t, "skiplist", z.Encoding())
	z.Fit(ZSetListpackEntries, ZSetListpackValue)
	assert.Equal(t, "listpack", z.Encoding())
	z.Set(make([]byte, 65), 1, false)
	z.Fit(ZSetListpackEntries, ZSetListpackValue)
	assert.Equal(t, "skiplist", z.Encoding())
}

// TestZSetRandomAgainstModel checks ranks, bounds and deletions against a
// sorted slice.
func TestZSetRandomAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	z := NewZSet()
	model := map[string]float64{}
	for i := 0; i < 3000; i++ {
		m := strconv.Itoa(rng.Intn(500))
		switch rng.Intn(3) {
		case 0, 1:
			sc := float64(rng.Intn(50))
			z.Set([]byte(m), sc, false)
			model[m] = sc
		case 2:
			assert.Equal(t, z.Remove([]byte(m)), func() bool { _, ok := model[m]; delete(model, m); return ok }())
		}
	}
	type it struct {
		m string
		s float64
	}
	var sorted []it
	for m, s := range model {
		sorted = append(sorted, it{m, s})
	}
	sort.Slice(sorted, func(i, j int) bool {
		return sorted[i].s < sorted[j].s || sorted[i].s == sorted[j].s && sorted[i].m < sorted[j].m
	})
	require.Equal(t, len(sorted), z.Len())
	for i, x := range sorted {
		r, ok := z.Rank([]byte(x.m))
		require.True(t, ok)
		require.Equal(t, i, r)
	}
	s, e := z.ScoreBounds(ScoreRange{Min: 10, Max: 20})
	cnt := 0
	for _, x := range sorted {
		if x.s >= 10 && x.s <= 20 {
			cnt++
		}
	}
	assert.Equal(t, cnt, e-s)
	n := z.DeleteRange(s, e)
	assert.Equal(t, cnt, n)
	assert.Equal(t, len(sorted)-cnt, z.Len())
	assert.Equal(t, z.dict.n, z.tree.Len())
}

// TestZSetCloneWhileRead mutates a clone while another goroutine reads
// the original, as a snapshot does (run with -race).
func TestZSetCloneWhileRead(t *testing.T) {
	z := NewZSet()
	for i := 0; i < 5000; i++ {
		z.Set([]byte(strconv.Itoa(i)), float64(i%100), false)
	}
	done := make(chan int)
	go func() {
		n := 0
		for k := 0; k < 20; k++ {
			z.Ascend(0, func(string, float64) bool { n++; return true })
			z.Rank([]byte("4999"))
		}
		done <- n
	}()
	c := z.Clone().(*ZSet)
	for i := 0; i < 5000; i += 3 {
		c.Set([]byte(strconv.Itoa(i)), -1, false)
		c.Remove([]byte(strconv.Itoa(i + 1)))
	}
	c.DeleteRange(0, 100)
	assert.Equal(t, 20*5000, <-done)
	assert.Equal(t, 5000, z.Len())
	s, _ := z.Score([]byte("3"))
	assert.Equal(t, 3.0, s)
}

func TestZSetDeleteRangeLarge(t *testing.T) {
	for _, r := range [][2]int{{0, 1000}, {100, 900}, {0, 10}, {990, 1000}, {500, 520}, {-5, 2000}} {
		z := NewZSet()
		for i := 0; i < 1000; i++ {
			z.Set([]byte(strconv.Itoa(i)), float64(i), false)
		}
		orig := z.Clone().(*ZSet)
		lo, hi := max(r[0], 0), min(r[1], 1000)
		require.Equal(t, hi-lo, z.DeleteRange(r[0], r[1]), "%v", r)
		require.Equal(t, 1000-(hi-lo), z.Len())
		require.Equal(t, z.Len(), z.tree.Len())
		for i := 0; i < 1000; i++ {
			_, ok := z.Score([]byte(strconv.Itoa(i)))
			require.Equal(t, i < lo || i >= hi, ok, "%v %d", r, i)
			if ok {
				rank, _ := z.Rank([]byte(strconv.Itoa(i)))
				want := i
				if i >= hi {
					want -= hi - lo
				}
				require.Equal(t, want, rank)
			}
		}
		require.Equal(t, 1000, orig.Len())
		m, _ := orig.At(999)
		require.Equal(t, "999", m)
		z.Set([]byte("new"), 0.5, false)
		require.Equal(t, 1000-(hi-lo)+1, z.Len())
	}
}

// AscendScores visits exactly the items ScoreBounds delimits, in order.
func TestZSetAscendScoresMatchesScoreBounds(t *testing.T) {
	z := NewZSet()
	z.MarkBig()
	for i := 0; i < 2000; i++ {
		z.Set([]byte("m"+strconv.Itoa(i)), float64(rand.Intn(300))/2, false)
	}
	for i := 0; i < 200; i++ {
		r := ScoreRange{Min: float64(rand.Intn(320)-10) / 2, Max: float64(rand.Intn(320)-10) / 2,
			MinEx: rand.Intn(2) == 0, MaxEx: rand.Intn(2) == 0}
		from, to := z.ScoreBounds(r)
		var want []string
		for j := from; j < to; j++ {
			m, _ := z.At(j)
			want = append(want, m)
		}
		var got []string
		z.AscendScores(r, func(m string, _ float64) bool {
			got = append(got, m)
			return true
		})
		require.Equal(t, want, got, "%+v", r)
	}
}

// zsetConsistent checks that the tree and the table hold the same
// records, each at or after its home slot with no empty slot between.
func zsetConsistent(t *testing.T, z *ZSet) {
	t.Helper()
	require.Equal(t, z.dict.n, z.tree.Len())
	z.tree.Scan(func(it zitem) bool {
		m := bytesOf(zrecMember(it.rec))
		r := z.dict.lookup(m)
		require.NotNil(t, r, "%q not in the table", m)
		require.Same(t, it.rec, r, "%q", m)
		require.Equal(t, it.score, zrecScore(it.rec), "%q", m)
		return true
	})
	checkRecTable(t, z.dict)
}

// The empty member (whose bytes would start past its record's end) and
// members of one, two and three uvarint length bytes, in both encodings.
func TestZSetMemberLengths(t *testing.T) {
	members := []string{"", "a", strings.Repeat("b", 127), strings.Repeat("c", 128), strings.Repeat("d", 20000)}
	for _, big := range []bool{false, true} {
		z := NewZSet()
		if big {
			z.MarkBig()
		}
		for _, m := range members {
			require.True(t, z.Set([]byte(m), 1, false))
		}
		for i, m := range members {
			s, ok := z.Score([]byte(m))
			require.True(t, ok)
			require.Equal(t, 1.0, s)
			r, ok := z.Rank([]byte(m))
			require.True(t, ok)
			require.Equal(t, i, r, "%d bytes", len(m))
			got, _ := z.At(i)
			require.Equal(t, m, got)
		}
		var scanned []string
		cursor := uint64(0)
		for {
			cursor = z.Scan(cursor, 2, func(m []byte, s float64) { scanned = append(scanned, string(m)) })
			if cursor == 0 {
				break
			}
		}
		assert.ElementsMatch(t, members, scanned)
		var ranged []string
		z.AscendScores(ScoreRange{Min: 1, Max: 1}, func(m string, _ float64) bool {
			ranged = append(ranged, m)
			return true
		})
		assert.Equal(t, members, ranged)
		require.False(t, z.Set([]byte(""), 2, false))
		m, s := z.At(len(members) - 1)
		assert.Equal(t, "", m)
		assert.Equal(t, 2.0, s)
		zsetConsistent(t, z)
		for _, m := range members {
			require.True(t, z.Remove([]byte(m)))
		}
		require.Equal(t, 0, z.Len())
		zsetConsistent(t, z)
	}
}

// Fit turns the -0 scores of a set it makes a listpack into 0 and keeps
// the tree and the table agreeing.
func TestZSetFitNegativeZero(t *testing.T) {
	z := NewZSet()
	z.MarkBig()
	negZero := math.Copysign(0, -1)
	z.Set([]byte("a"), negZero, false)
	z.Set([]byte("b"), 0, false)
	z.Set([]byte("c"), negZero, false)
	z.Set([]byte("d"), -1, false)
	c := z.Clone().(*ZSet)
	z.Fit(ZSetListpackEntries, ZSetListpackValue)
	assert.Equal(t, "listpack", z.Encoding())
	for _, m := range []string{"a", "b", "c"} {
		s, _ := z.Score([]byte(m))
		assert.False(t, math.Signbit(s), m)
	}
	assert.Equal(t, []string{"d=-1", "a=0", "b=0", "c=0"}, zmembers(z))
	zsetConsistent(t, z)
	// The clone shares the old records, which Fit did not change.
	s, _ := c.Score([]byte("a"))
	assert.True(t, math.Signbit(s))
	zsetConsistent(t, c)
}

// ZSCAN returns every member present for the whole scan while the set
// grows and shrinks between calls (the table resizes both ways), and a
// scan that deletes what it sees empties the set.
func TestZSetScanWhileResizing(t *testing.T) {
	for _, count := range []int{5, 64, 1 << 20} {
		z := NewZSet()
		z.MarkBig()
		for i := 0; i < 500; i++ {
			z.Set([]byte(fmt.Sprint("s", i)), float64(i), false)
		}
		seen := map[string]bool{}
		rng := rand.New(rand.NewSource(int64(count)))
		cursor := uint64(0)
		for step := 1; ; step++ {
			cursor = z.Scan(cursor, count, func(m []byte, s float64) {
				if m[0] == 's' {
					require.Equal(t, fmt.Sprint("s", s), string(m))
				}
				seen[string(m)] = true
			})
			if cursor == 0 {
				break
			}
			// The t members score above every s member: positions 500
			// on are theirs.
			switch step % 20 {
			case 0:
				for j := 0; j < 10000; j++ {
					z.Set([]byte(fmt.Sprint("t", rng.Intn(1<<30))), float64(1000+rng.Intn(1<<30)), false)
				}
			case 10:
				z.DeleteRange(500, z.Len())
			}
		}
		for i := 0; i < 500; i++ {
			require.True(t, seen[fmt.Sprint("s", i)], "count %d: s%d missed", count, i)
		}
		zsetConsistent(t, z)
	}

	z := NewZSet()
	z.MarkBig()
	for i := 0; i < 20000; i++ {
		z.Set([]byte(fmt.Sprint("f", i)), float64(i%7), false)
	}
	cursor := uint64(0)
	for {
		var seen [][]byte
		cursor = z.Scan(cursor, 100, func(m []byte, _ float64) { seen = append(seen, append([]byte(nil), m...)) })
		for _, m := range seen {
			require.True(t, z.Remove(m))
		}
		if cursor == 0 {
			break
		}
	}
	require.Equal(t, 0, z.Len())
	zsetConsistent(t, z)
}

// With overwrite, a new score is written into the member's record (the
// table's slot keeps pointing to it) and the member moves in the order;
// a member of a long name, whose record starts with a longer length, too.
// A set a COPY shares records with gets a new record instead.
func TestZSetRescoreInPlace(t *testing.T) {
	z := NewZSet()
	long := bytes.Repeat([]byte("m"), 300)
	for i, m := range [][]byte{[]byte("a"), []byte("b"), long} {
		z.Set(m, float64(i), false)
	}
	rec := z.lookup(long)
	z.Set(long, -1, true)
	assert.Same(t, rec, z.lookup(long), "rewritten in its record")
	z.Set([]byte("a"), 5, true)
	assert.Equal(t, []string{string(long) + "=-1", "b=1", "a=5"}, zmembers(z))
	s, _ := z.Score(long)
	assert.Equal(t, -1.0, s)

	c := z.Clone().(*ZSet)
	z.Set([]byte("b"), 7, true)
	c.Set([]byte("b"), 8, true)
	assert.Equal(t, []string{string(long) + "=-1", "a=5", "b=7"}, zmembers(z))
	assert.Equal(t, []string{string(long) + "=-1", "a=5", "b=8"}, zmembers(c))

	rec = z.lookup([]byte("a"))
	z.Set([]byte("a"), 9, false)
	assert.NotSame(t, rec, z.lookup([]byte("a")), "without overwrite: a new record")
}

// Snapshots read sorted sets without the lock while a writer moves their
// members' scores with overwrite = !SnapshotLive, between COPYs: every
// record a snapshot reads holds the score its tree item has (a race
// under -race otherwise).
func TestZSetRescoreWhileSnapshotsRead(t *testing.T) {
	e := newEnv(t)
	const keys, members = 10, 50
	e.do(func(db *DB) {
		for k := 0; k < keys; k++ {
			z := NewZSet()
			for m := 0; m < members; m++ {
				z.Set(fmt.Appendf(nil, "m%d", m), float64(m), false)
			}
			db.Put(fmt.Appendf(nil, "z%d", k), NewObject(z, 0))
		}
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 100; i++ {
			var s *Snapshot
			e.ks.Exec(func() { s = e.ks.Snapshot() })
			s.ForEach(0, func(k string, en *Entry) bool {
				z := en.Obj().(*ZSet)
				z.tree.Scan(func(it zitem) bool {
					if zrecScore(it.rec) != it.score {
						t.Errorf("%s: record says %v, item %v", k, zrecScore(it.rec), it.score)
						return false
					}
					return true
				})
				return true
			})
			s.Release()
		}
	}()
	for n := 0; ; n++ {
		select {
		case <-done:
			return
		default:
		}
		e.do(func(db *DB) {
			k := fmt.Appendf(nil, "z%d", n%keys)
			if n%9 == 0 {
				db.Put(fmt.Appendf(nil, "z%d", (n+1)%keys), db.LookupNoTouch(k).Copy())
				return
			}
			z := db.LookupWrite(k).Obj().(*ZSet)
			for m := 0; m < members; m++ {
				z.Set(fmt.Appendf(nil, "m%d", m), float64(n*members+m), !db.SnapshotLive())
			}
		})
		e.ks.EndCommand(true)
	}
}
