package keyspace

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testLimits = HashLimits{MaxEntries: 128, MaxValue: 64}

func hashContents(h *Hash) map[string]string {
	m := map[string]string{}
	h.Range(func(f, v []byte) bool {
		m[string(f)] = string(v)
		return true
	})
	return m
}

func TestHashSmallOrderAndUpdates(t *testing.T) {
	h := NewHash()
	assert.True(t, h.Set([]byte("a"), []byte("1"), testLimits))
	assert.True(t, h.Set([]byte("b"), []byte("22"), testLimits))
	assert.True(t, h.Set([]byte("c"), []byte(""), testLimits))
	steps := []struct {
		f, v string
		want []string
	}{
		{"b", "x", []string{"a", "1", "b", "x", "c", ""}},                                     // same length shorter
		{"b", "a much longer value", []string{"a", "1", "b", "a much longer value", "c", ""}}, // grows
		{"a", "", []string{"a", "", "b", "a much longer value", "c", ""}},                     // shrinks
		{"c", "3", []string{"a", "", "b", "a much longer value", "c", "3"}},                   // last one
	}
	for _, s := range steps {
		assert.False(t, h.Set([]byte(s.f), []byte(s.v), testLimits))
		var got []string
		for _, b := range h.Pairs(nil) {
			got = append(got, string(b))
		}
		assert.Equal(t, s.want, got, "after %s=%s", s.f, s.v)
	}
	assert.Equal(t, 3, h.Len())
	assert.Equal(t, "listpack", h.Encoding())
	assert.True(t, h.Delete([]byte("b")))
	assert.False(t, h.Delete([]byte("b")))
	v, ok := h.Get([]byte("c"))
	assert.True(t, ok)
	assert.Equal(t, "3", string(v))
	assert.True(t, h.Delete([]byte("a")))
	assert.True(t, h.Delete([]byte("c")))
	assert.Equal(t, 0, h.Len())
}

func TestHashConversion(t *testing.T) {
	cases := []struct {
		name string
		f, v string
		n    int
		want string
	}{
		{"few short", "f", "v", 128, "listpack"},
		{"too many", "f", "v", 129, "hashtable"},
		{"long value", "f", string(make([]byte, 65)), 1, "hashtable"},
		{"long field", string(make([]byte, 65)), "v", 1, "hashtable"},
		{"value at limit", "f", string(make([]byte, 64)), 1, "listpack"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := NewHash()
			for i := 0; i < c.n; i++ {
				h.Set([]byte(fmt.Sprint(c.f, i)), []byte(c.v), testLimits)
			}
			assert.Equal(t, c.want, h.Encoding())
			assert.Equal(t, c.n, h.Len())
		})
	}
	h := NewHash()
	h.Set([]byte("a"), []byte("b"), testLimits)
	h.Convert(testLimits, []byte("x"))
	assert.Equal(t, "listpack", h.Encoding())
	h.Convert(testLimits, []byte("x"), make([]byte, 65))
	assert.Equal(t, "hashtable", h.Encoding())
	assert.Equal(t, map[string]string{"a": "b"}, hashContents(h))
}

// TestHashModel compares both forms with a Go map over random operations.
func TestHashModel(t *testing.T) {
	for _, lim := range []HashLimits{testLimits, {MaxEntries: 0, MaxValue: 64}} {
		h := NewHash()
		model := map[string]string{}
		r := rand.New(rand.NewPCG(1, 2))
		for i := 0; i < 20000; i++ {
			f := fmt.Sprint("f", r.IntN(400))
			switch r.IntN(3) {
			case 0, 1:
				v := fmt.Sprint("v", r.IntN(1000))
				_, had := model[f]
				assert.Equal(t, !had, h.Set([]byte(f), []byte(v), lim))
				model[f] = v
			case 2:
				_, had := model[f]
				assert.Equal(t, had, h.Delete([]byte(f)))
				delete(model, f)
			}
			if i%997 == 0 {
				require.Equal(t, model, hashContents(h))
				c := h.Clone().(*Hash)
				h.Set([]byte("clone-check"), []byte("x"), lim)
				h.Delete([]byte("clone-check"))
				require.Equal(t, model, hashContents(c))
			}
			require.Equal(t, len(model), h.Len())
		}
		for f, v := range model {
			got, ok := h.Get([]byte(f))
			require.True(t, ok)
			require.Equal(t, v, string(got))
		}
	}
}

func TestHashCloneIsDeep(t *testing.T) {
	for _, n := range []int{3, 300} {
		h := NewHash()
		for i := 0; i < n; i++ {
			h.Set([]byte(fmt.Sprint(i)), []byte("v"), testLimits)
		}
		c := h.Clone().(*Hash)
		h.Set([]byte("0"), []byte("changed"), testLimits)
		h.Delete([]byte("1"))
		v, _ := c.Get([]byte("0"))
		assert.Equal(t, "v", string(v))
		assert.Equal(t, n, c.Len())
		assert.Equal(t, h.Encoding(), c.Encoding())
	}
}

func scanAllFields(h *Hash, count int, between func()) map[string]bool {
	seen := map[string]bool{}
	cursor := uint64(0)
	for {
		cursor = h.Scan(cursor, count, func(f, v []byte) { seen[string(f)] = true })
		if cursor == 0 {
			return seen
		}
		if between != nil {
			between()
		}
	}
}

func TestHashScan(t *testing.T) {
	small := NewHash()
	small.Set([]byte("a"), []byte("1"), testLimits)
	small.Set([]byte("b"), []byte("2"), testLimits)
	var got []string
	next := small.Scan(12345, 1, func(f, v []byte) { got = append(got, string(f)+"="+string(v)) })
	assert.Equal(t, uint64(0), next)
	assert.Equal(t, []string{"a=1", "b=2"}, got)

	for _, count := range []int{5, 64, 1 << 20} {
		h := NewHash()
		for i := 0; i < 500; i++ {
			h.Set([]byte(fmt.Sprint("s", i)), []byte("v"), testLimits)
		}
		step := 0
		r := rand.New(rand.NewPCG(3, 4))
		seen := scanAllFields(h, count, func() {
			// Grow and shrink between calls: tables resize both ways.
			step++
			switch step % 20 {
			case 0:
				for j := 0; j < 10000; j++ {
					h.Set([]byte(fmt.Sprint("t", r.IntN(1<<30))), []byte("x"), testLimits)
				}
			case 10:
				var del [][]byte
				h.Range(func(f, v []byte) bool {
					if f[0] == 't' {
						del = append(del, append([]byte(nil), f...))
					}
					return true
				})
				for _, f := range del {
					h.Delete(f)
				}
			}
		})
		for i := 0; i < 500; i++ {
			require.True(t, seen[fmt.Sprint("s", i)], "count %d: s%d missed", count, i)
		}
	}
}

func TestHashRandom(t *testing.T) {
	for _, n := range []int{5, 1000} {
		h := NewHash()
		for i := 0; i < n; i++ {
			h.Set([]byte(fmt.Sprint(i)), []byte(fmt.Sprint("v", i)), testLimits)
		}
		seen := map[string]int{}
		for i := 0; i < 20*n; i++ {
			f, v := h.Random()
			require.Equal(t, "v"+string(f), string(v))
			seen[string(f)]++
		}
		assert.Greater(t, len(seen), n*9/10)
	}
}

func TestHashMemoryUsage(t *testing.T) {
	h := NewHash()
	h.Set([]byte("a"), []byte("b"), testLimits)
	small := h.MemoryUsage(5)
	assert.Greater(t, small, int64(16))
	for i := 0; i < 1000; i++ {
		h.Set([]byte(fmt.Sprint("field:", i)), []byte(fmt.Sprint("value:", i)), testLimits)
	}
	all, sampled := h.MemoryUsage(0), h.MemoryUsage(5)
	assert.Greater(t, all, int64(1000*40))
	assert.InDelta(t, float64(all), float64(sampled), float64(all)/5)
}

func TestHashTableInvariant(t *testing.T) {
	h := NewHash()
	keys := make([]string, 0, 3000)
	for i := 0; i < 3000; i++ {
		k := fmt.Sprint("k", i)
		keys = append(keys, k)
		h.Set([]byte(k), []byte("v"), testLimits)
	}
	sort.Strings(keys)
	for i, k := range keys {
		if i%2 == 0 {
			require.True(t, h.Delete([]byte(k)))
		}
	}
	checkRecTable(t, &h.tab().recTable)
}

// BenchmarkHashMemory reports the heap bytes per field of a large hash
// (fields "field:N", values "value:N") and of many small ones.
func BenchmarkHashMemory(b *testing.B) {
	const n = 1_000_000
	lim := HashLimits{MaxEntries: 512, MaxValue: 64}
	measure := func(build func() any) float64 {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		keep := build()
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(keep)
		return float64(after.HeapAlloc - before.HeapAlloc)
	}
	for i := 0; i < b.N; i++ {
		big := measure(func() any {
			h := NewHash()
			for j := 0; j < n; j++ {
				h.Set([]byte(fmt.Sprint("field:", j)), []byte(fmt.Sprint("value:", j)), lim)
			}
			return h
		})
		small := measure(func() any {
			hs := make([]*Hash, n)
			for j := range hs {
				h := NewHash()
				h.Set([]byte("id"), []byte(fmt.Sprint(j)), lim)
				h.Set([]byte("sender"), []byte(fmt.Sprintf("user%d@example.com", j)), lim)
				h.Set([]byte("retries"), []byte("0"), lim)
				h.Set([]byte("size"), []byte("12345"), lim)
				hs[j] = h
			}
			return hs
		})
		b.ReportMetric(big/n, "B/field-1M-field-hash")
		b.ReportMetric(small/n, "B/hash-1M-4-field-hashes")
	}
}

// TestHashScanDeleteAll deletes every field an HSCAN returns, which
// removes fields in hash order: the table must stay correct and its
// shrinks must not thrash.
func TestHashScanDeleteAll(t *testing.T) {
	h := NewHash()
	for i := 0; i < 20000; i++ {
		h.Set([]byte(fmt.Sprint("f", i)), []byte("v"), testLimits)
	}
	cursor := uint64(0)
	for {
		var seen [][]byte
		cursor = h.Scan(cursor, 100, func(f, v []byte) { seen = append(seen, append([]byte(nil), f...)) })
		for _, f := range seen {
			require.True(t, h.Delete(f))
		}
		if cursor == 0 {
			break
		}
	}
	require.Equal(t, 0, h.Len())
}

// With Overwrite, a large form's value takes a new value of its length
// in its record: a view of the old value sees the new bytes. A value of
// another length, a write without Overwrite, and a hash a COPY shares
// records with all get a new record, and views keep the old value.
func TestHashOverwriteInPlace(t *testing.T) {
	over := testLimits
	over.Overwrite = true
	h := NewHash()
	h.Convert(HashLimits{MaxValue: -1}, nil)
	h.Set([]byte("f"), []byte("aaaa"), over)
	v, _ := h.Get([]byte("f"))
	h.Set([]byte("f"), []byte("bbbb"), over)
	assert.Equal(t, "bbbb", string(v), "same length: in place")

	h.Set([]byte("f"), []byte("cc"), over)
	assert.Equal(t, "bbbb", string(v), "another length: a new record")
	v, _ = h.Get([]byte("f"))
	h.Set([]byte("f"), []byte("dd"), testLimits)
	assert.Equal(t, "cc", string(v), "without Overwrite: a new record")

	e := newEnv(t)
	e.do(func(db *DB) {
		db.Put([]byte("src"), NewObject(h, 0))
		db.Put([]byte("dst"), db.LookupNoTouch([]byte("src")).Copy())
	})
	e.do(func(db *DB) {
		src := db.LookupWrite([]byte("src")).Obj().(*Hash)
		dst := db.LookupWrite([]byte("dst")).Obj().(*Hash)
		src.Set([]byte("f"), []byte("ee"), over)
		dst.Set([]byte("f"), []byte("ff"), over)
		assert.Equal(t, map[string]string{"f": "ee"}, hashContents(src))
		assert.Equal(t, map[string]string{"f": "ff"}, hashContents(dst))
	})
}

// While a snapshot is live, DB.SnapshotLive says so, and a hash written
// then without Overwrite leaves the snapshot's records as they were.
func TestHashOverwriteUnderSnapshot(t *testing.T) {
	e := newEnv(t)
	e.do(func(db *DB) {
		h := NewHash()
		h.Convert(HashLimits{MaxValue: -1}, nil)
		h.Set([]byte("f"), []byte("old"), testLimits)
		db.Put([]byte("h"), NewObject(h, 0))
		assert.False(t, db.SnapshotLive())
	})
	var snap *Snapshot
	e.ks.Exec(func() { snap = e.ks.Snapshot() })
	write := func(v string) {
		e.do(func(db *DB) {
			lim := testLimits
			lim.Overwrite = !db.SnapshotLive()
			db.LookupWrite([]byte("h")).Obj().(*Hash).Set([]byte("f"), []byte(v), lim)
		})
	}
	write("new")
	write("two")
	var seen string
	snap.ForEach(0, func(k string, en *Entry) bool {
		v, _ := en.Obj().(*Hash).Get([]byte("f"))
		seen = string(v)
		return true
	})
	assert.Equal(t, "old", seen)
	e.do(func(db *DB) { assert.True(t, db.SnapshotLive()) })
	snap.Release()
	e.do(func(db *DB) { assert.False(t, db.SnapshotLive()) })
	write("end")
	e.do(func(db *DB) {
		v, _ := db.LookupNoTouch([]byte("h")).Obj().(*Hash).Get([]byte("f"))
		assert.Equal(t, "end", string(v))
	})
}

// Snapshots read hashes without the lock while a writer rewrites their
// values at the same length with Overwrite = !SnapshotLive, between
// COPYs, renames and deadline lookups: no snapshot sees a value change
// under it (a torn value here, a race under -race).
func TestHashOverwriteWhileSnapshotsRead(t *testing.T) {
	e := newEnv(t)
	lim := HashLimits{MaxEntries: 1, MaxValue: 1}
	const nkeys, nf = 20, 40
	val := func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i%26)}, 100) }
	e.do(func(db *DB) {
		for k := 0; k < nkeys; k++ {
			h := NewHash()
			for f := 0; f < nf; f++ {
				h.Set([]byte(fmt.Sprint("f", f)), val(0), lim)
			}
			db.Put([]byte(fmt.Sprint("h", k)), NewObject(h, 0))
		}
	})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // snapshot reader
		defer wg.Done()
		for i := 0; i < 200; i++ {
			var s *Snapshot
			e.ks.Exec(func() { s = e.ks.Snapshot() })
			s.ForEach(0, func(k string, en *Entry) bool {
				if h, ok := en.Obj().(*Hash); ok {
					h.Range(func(f, v []byte) bool {
						first := v[0]
						for _, c := range v {
							if c != first {
								t.Errorf("torn value in snapshot %s %s", k, f)
								return false
							}
						}
						return true
					})
				}
				return true
			})
			s.Release()
		}
		close(stop)
	}()
	n := 0
	for {
		select {
		case <-stop:
			wg.Wait()
			return
		default:
		}
		n++
		e.do(func(db *DB) {
			l := lim
			l.Overwrite = !db.SnapshotLive()
			k := []byte(fmt.Sprint("h", n%nkeys))
			switch n % 7 {
			case 3:
				db.Put([]byte(fmt.Sprint("h", (n+1)%nkeys)), db.LookupNoTouch(k).Copy())
			case 5:
				db.Put([]byte("tmp"), db.Take(k))
				db.Put(k, db.Take([]byte("tmp")))
			case 6:
				db.lookupMeta(k)
			default:
				en := db.LookupWrite(k)
				h := en.Obj().(*Hash)
				for f := 0; f < nf; f++ {
					h.Set([]byte(fmt.Sprint("f", f)), val(n), l)
				}
			}
		})
		e.ks.EndCommand(true)
	}
}

// The value's place in a record is found past the field's length prefix,
// whatever that prefix's length.
func TestHashOverwriteFieldLengths(t *testing.T) {
	for _, fl := range []int{0, 1, 127, 128, 16383, 16384} {
		h := NewHash()
		h.Convert(HashLimits{MaxValue: -1}, nil)
		f := bytes.Repeat([]byte("x"), fl)
		over := HashLimits{MaxEntries: 1, MaxValue: 1, Overwrite: true}
		h.Set(f, []byte("aaaa"), over)
		h.Set([]byte("other"), []byte("zzzz"), over)
		v, _ := h.Get(f)
		h.Set(f, []byte("bbbb"), over)
		if string(v) != "bbbb" {
			t.Fatalf("fl %d: not in place: %q", fl, v)
		}
		g, _ := h.Get(f)
		o, _ := h.Get([]byte("other"))
		if string(g) != "bbbb" || string(o) != "zzzz" || h.Len() != 2 {
			t.Fatalf("fl %d: %q %q", fl, g, o)
		}
		h.Set(f, nil, over)
		h.Set(f, nil, over)
		g, _ = h.Get(f)
		if len(g) != 0 {
			t.Fatal("empty")
		}
	}
}

// A record carries both lengths in uvarints of one to three bytes; its
// views, its length and an overwrite in place hold for each, and for an
// empty value at the record's end.
func TestHashRecordLengths(t *testing.T) {
	lens := []int{0, 1, 127, 128, 16383, 16384, StableValueMin}
	for _, fl := range lens {
		for _, vl := range lens {
			f := bytes.Repeat([]byte("f"), fl)
			v := bytes.Repeat([]byte("v"), vl)
			r := makeRec(f, v)
			gf, gv := recSplit(r)
			require.Equal(t, f, gf)
			require.Equal(t, v, gv)
			require.Equal(t, f, recField(r))
			require.Equal(t, uvarintLen(uint64(fl))+fl+uvarintLen(uint64(vl))+vl, hrecLen(r))
			require.Equal(t, vl, cap(gv))

			h := NewHash()
			over := HashLimits{MaxEntries: 0, MaxValue: 0, Overwrite: true}
			h.Set(f, v, over)
			h.Set([]byte("other"), []byte("o"), over)
			w := bytes.Repeat([]byte("w"), vl)
			h.Set(f, w, over)
			got, ok := h.Get(f)
			require.True(t, ok)
			require.Equal(t, w, got)
			o, _ := h.Get([]byte("other"))
			require.Equal(t, "o", string(o))
		}
	}
}

// A tag holds what the tables take from it instead of the record: the
// home slot for every table size up to maxTagBits, and the answer to
// SCAN's position test whenever it says it knows.
func TestTagHomeAndPosition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	hashes := []uint64{0, 1, 1<<33 - 1, 1 << 33, 1<<63 - 1, 1 << 63, math.MaxUint64}
	for range 2000 {
		hashes = append(hashes, rng.Uint64())
	}
	for _, x := range hashes {
		g := tagOf(x)
		require.NotZero(t, g)
		for b := uint(minTableBits); b <= maxTagBits; b++ {
			require.Equal(t, int(x>>(64-b)), tagHome(g, b), "hash %#x, %d bits", x, b)
			cursor := x >> (64 - b) << (64 - b) // a position SCAN hands out
			from, known := tagFrom(g, cursor)
			require.True(t, known)
			require.True(t, from)
			if next := cursor + 1<<(64-b); next > cursor {
				from, known = tagFrom(g, next)
				require.True(t, known)
				require.False(t, from)
			}
		}
		for _, cursor := range []uint64{rng.Uint64(), x, x + 1, x - 1} {
			if from, known := tagFrom(g, cursor); known {
				require.Equal(t, x >= cursor, from, "hash %#x, cursor %#x", x, cursor)
			}
		}
	}
}
