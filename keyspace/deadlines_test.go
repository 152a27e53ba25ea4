package keyspace

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// model is what the index must hold: key -> deadline.
type model map[string]int64

func (m model) check(t *testing.T, d *deadlines) {
	t.Helper()
	require.Equal(t, len(m), d.len())
	got := model{}
	last := int64(-1)
	d.scan(func(x deadline) bool {
		require.GreaterOrEqual(t, x.at, last, "scan out of deadline order")
		last = x.at
		_, dup := got[x.key]
		require.False(t, dup, "key %q indexed twice", x.key)
		got[x.key] = x.at
		return true
	})
	require.Equal(t, m, got)
	if len(m) > 0 {
		min, ok := d.min()
		require.True(t, ok)
		earliest := int64(1 << 62)
		for _, at := range m {
			earliest = min64(earliest, at)
		}
		require.Equal(t, earliest, min.at)
		require.Equal(t, m[min.key], min.at)
		r, ok := d.random()
		require.True(t, ok)
		require.Equal(t, m[r.key], r.at)
	} else {
		_, ok := d.min()
		require.False(t, ok)
		_, ok = d.random()
		require.False(t, ok)
	}
}

// entries gives each key one entry, as the table would hold it.
type entries map[string]*Entry

func (es entries) get(k string) *Entry {
	if e, ok := es[k]; ok {
		return e
	}
	e, _ := newEntry(k, 0, true)
	es[k] = e
	return e
}

func min64(a, b int64) int64 {
	if a < b {
		return a
	}
	return b
}

// TestDeadlinesBuckets walks a deadline through its three shapes (one
// key, a bucket scanned, a bucket indexed) and back to empty, moving keys between deadlines
// as SETEX and EXPIRE do, against a model.
func TestDeadlinesBuckets(t *testing.T) {
	ent := entries{}.get
	d := newDeadlines()
	m := model{}
	for _, n := range []int{1, 2, bucketScanMax, bucketScanMax + 1, 3 * bucketScanMax} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			// n keys at deadline 100, interleaved with keys at 50 and 200.
			for i := 0; i < n; i++ {
				k := fmt.Sprintf("k%d-%d", n, i)
				d.add(100, ent(k))
				m[k] = 100
				if i%3 == 0 {
					o := fmt.Sprintf("o%d-%d", n, i)
					d.add(50+int64(i%2)*150, ent(o))
					m[o] = 50 + int64(i%2)*150
				}
			}
			m.check(t, &d)
			// Deleting a key that is not there, or at another deadline,
			// changes nothing.
			require.False(t, d.del(100, ent("absent")))
			require.False(t, d.del(101, ent(fmt.Sprintf("k%d-0", n))))
			m.check(t, &d)
			// Move every other key to 300.
			for i := 0; i < n; i += 2 {
				k := fmt.Sprintf("k%d-%d", n, i)
				require.True(t, d.del(100, ent(k)))
				d.add(300, ent(k))
				m[k] = 300
			}
			m.check(t, &d)
			// Drain 100 and 300 through min, as the expiry engine does.
			for {
				x, ok := d.min()
				if !ok || x.at > 300 {
					break
				}
				require.True(t, d.del(x.at, x.e))
				delete(m, x.key)
			}
			m.check(t, &d)
		})
	}
	// The hot bucket must not outlive its deadline's slot.
	d.add(7, ent("a"))
	d.add(7, ent("b"))
	d.del(7, ent("a"))
	d.del(7, ent("b"))
	d.add(7, ent("c"))
	m["c"] = 7
	m.check(t, &d)
}

// TestDeadlinesRandomOps checks the index against the model over a long
// random sequence on few deadlines, so that every shape change happens
// many times.
func TestDeadlinesRandomOps(t *testing.T) {
	ent := entries{}.get
	d := newDeadlines()
	m := model{}
	keys := make([]string, 5000)
	for i := range keys {
		keys[i] = fmt.Sprintf("key:%d", i)
	}
	seed := uint64(1)
	next := func(n int) int {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int(seed>>33) % n
	}
	for step := 0; step < 300_000; step++ {
		k := keys[next(len(keys))]
		at, had := m[k]
		if had {
			require.True(t, d.del(at, ent(k)))
			delete(m, k)
		}
		if next(4) != 0 {
			at := int64(next(6))
			d.add(at, ent(k))
			m[k] = at
		}
		if step%20_000 == 0 {
			m.check(t, &d)
		}
	}
	m.check(t, &d)
	// Expire everything in order.
	var order []int64
	for {
		x, ok := d.min()
		if !ok {
			break
		}
		order = append(order, x.at)
		d.del(x.at, x.e)
	}
	require.True(t, sort.SliceIsSorted(order, func(i, j int) bool { return order[i] < order[j] }))
	require.Len(t, order, len(m))
}

// TestDeadlineBucketShrinks grows one deadline's bucket to 10,000 keys,
// deletes most of them, at random or in expiry order, and checks that the
// bucket holds the rest and has shrunk: a set at least an eighth full,
// or a slice again at bucketSliceMax keys and below.
func TestDeadlineBucketShrinks(t *testing.T) {
	const grown = 10_000
	for _, keep := range []int{1000, 100, 10} {
		for _, byMin := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d/min=%v", keep, byMin), func(t *testing.T) {
				ent := entries{}.get
				d := newDeadlines()
				m := model{}
				keys := make([]string, grown)
				for i := range keys {
					keys[i] = fmt.Sprintf("k%d", i)
					d.add(42, ent(keys[i]))
					m[keys[i]] = 42
				}
				b := bucketAt(t, &d, 42)
				require.Nil(t, b.ents)
				full := len(b.set)
				require.GreaterOrEqual(t, full*5, grown*8, "set over 5/8 full")
				rng := rand.New(rand.NewPCG(1, uint64(keep)))
				for len(m) > keep {
					var k string
					if byMin {
						// As the expiry engine does: the entry min gives,
						// then its delete, a call at a time.
						x, ok := d.min()
						require.True(t, ok)
						k = x.key
					} else {
						i := rng.IntN(len(keys))
						k, keys[i] = keys[i], keys[len(keys)-1]
						keys = keys[:len(keys)-1]
						if _, ok := m[k]; !ok {
							continue
						}
					}
					require.True(t, d.del(42, ent(k)))
					delete(m, k)
					if len(m)%997 == 0 {
						m.check(t, &d)
					}
				}
				m.check(t, &d)
				require.Same(t, b, bucketAt(t, &d, 42), "the slot's bucket was replaced")
				require.Equal(t, keep, b.len())
				if keep <= bucketSliceMax {
					require.Nil(t, b.set)
					require.Len(t, b.ents, keep)
				} else {
					require.Nil(t, b.ents)
					require.Less(t, len(b.set), full)
					require.GreaterOrEqual(t, keep*8, len(b.set), "set under 1/8 full")
					require.Equal(t, setSizeFor(keep), len(b.set))
				}
				for range 1000 {
					if e := b.pick(); m[e.Key()] != 42 || ent(e.Key()) != e {
						t.Fatalf("pick gave %q, not an entry of the bucket", e.Key())
					}
				}
				// The shrunk bucket grows again, and drains to empty.
				for i := range grown {
					k := fmt.Sprintf("again%d", i)
					d.add(42, ent(k))
					m[k] = 42
				}
				m.check(t, &d)
				require.Same(t, b, bucketAt(t, &d, 42))
				for k := range m {
					require.True(t, d.del(42, ent(k)))
					delete(m, k)
				}
				m.check(t, &d)
			})
		}
	}
}

// bucketAt is the bucket of deadline at, which must have one.
func bucketAt(t *testing.T, d *deadlines, at int64) *dbucket {
	t.Helper()
	s, ok := d.tr.Get(dslot{at: at})
	require.True(t, ok)
	require.NotNil(t, s.b)
	return s.b
}

// scan calls fn in deadline order until it returns false (the tests'
// view of the whole index).
func (d *deadlines) scan(fn func(deadline) bool) {
	d.tr.Scan(func(s dslot) bool {
		if s.b == nil {
			return fn(deadline{s.at, s.e.Key(), s.e})
		}
		return s.b.each(func(e *Entry) bool { return fn(deadline{s.at, e.Key(), e}) })
	})
}

// each calls fn for every entry until it returns false.
func (b *dbucket) each(fn func(*Entry) bool) bool {
	list := b.ents
	if b.set != nil {
		list = b.set
	}
	for i := len(list) - 1; i >= 0; i-- {
		if e := list[i]; e != nil && !fn(e) {
			return false
		}
	}
	return true
}
