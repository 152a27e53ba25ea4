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
	d.checkBlocks(t)
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

// checkBlocks verifies the blocks' invariants: linked both ways in
// deadline order, none empty, each sorted, at or after its bound and
// before the next block's, the directory holding exactly their bounds,
// the slots outside [lo, hi) cleared (the collector must not keep
// entries through them), and no block under a quarter full with a
// neighbour that has room for it.
func (d *deadlines) checkBlocks(t *testing.T) {
	t.Helper()
	var blocks []*dblock
	for b := d.head; b != nil; b = b.next {
		if len(blocks) > 0 {
			require.Same(t, blocks[len(blocks)-1], b.prev)
		} else {
			require.Nil(t, b.prev)
		}
		blocks = append(blocks, b)
	}
	require.Same(t, d.tail, lastOr(blocks))
	var dir []*dblock
	d.dir.Scan(func(r dref) bool {
		require.Equal(t, r.b.bound, r.bound)
		dir = append(dir, r.b)
		return true
	})
	require.Equal(t, blocks, dir, "the directory's blocks are not the list's")
	last := int64(-1 << 62)
	for bi, b := range blocks {
		require.True(t, 0 <= b.lo && b.lo < b.hi && b.hi <= blockSlots, "block %d: lo %d hi %d", bi, b.lo, b.hi)
		require.LessOrEqual(t, b.bound, b.s[b.lo].at, "block %d's bound", bi)
		require.Greater(t, b.bound, last, "block %d's bound is not after the slots before", bi)
		for i := range b.s {
			s := b.s[i]
			if i < int(b.lo) || i >= int(b.hi) {
				require.Equal(t, dslot{}, s, "block %d: slot %d outside [%d, %d) not cleared", bi, i, b.lo, b.hi)
				continue
			}
			require.NotNil(t, s.p)
			require.Greater(t, s.at, last, "block %d slot %d out of order", bi, i)
			last = s.at
		}
		if b.len() < blockSlots/4 {
			if bi > 0 {
				require.Greater(t, blocks[bi-1].len()+b.len(), blockSlots, "block %d (%d slots) fits in the one before", bi, b.len())
			}
			if bi+1 < len(blocks) {
				require.Greater(t, blocks[bi+1].len()+b.len(), blockSlots, "block %d (%d slots) has room for the next", bi, b.len())
			}
		}
	}
}

func lastOr(bs []*dblock) *dblock {
	if len(bs) == 0 {
		return nil
	}
	return bs[len(bs)-1]
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

// TestDeadlineBlocks gives most keys a deadline of their own, over many
// blocks: in increasing order (the blocks fill up), then each before
// every other (the head's bound moves down), then at random
// (splits in the middle), moved and deleted at random (merges), against
// the model; random draws every deadline; the expiry order drains it.
func TestDeadlineBlocks(t *testing.T) {
	ent := entries{}.get
	d := newDeadlines()
	m := model{}
	const n = 20_000
	for i := range n {
		k := fmt.Sprintf("inc%d", i)
		d.add(int64(1_000_000+i), ent(k))
		m[k] = int64(1_000_000 + i)
	}
	m.check(t, &d)
	for b := d.head; b != d.tail; b = b.next {
		require.Equal(t, blockSlots, b.len(), "a block of an increasing load not full")
	}
	// Deadlines before every other: the head takes them and splits.
	for i := range 2000 {
		k := fmt.Sprintf("dec%d", i)
		d.add(int64(999_999-i), ent(k))
		m[k] = int64(999_999 - i)
	}
	m.check(t, &d)

	seen := map[string]bool{}
	for range 40 * len(m) {
		x, ok := d.random()
		require.True(t, ok)
		seen[x.key] = true
	}
	require.Len(t, seen, len(m), "random never drew some of the deadlines")

	rng := rand.New(rand.NewPCG(7, 11))
	keys := make([]string, 3*n)
	for i := range keys {
		keys[i] = fmt.Sprintf("key%d", i)
	}
	for step := range 200_000 {
		k := keys[rng.IntN(len(keys))]
		if at, had := m[k]; had {
			require.True(t, d.del(at, ent(k)))
			delete(m, k)
		}
		if rng.IntN(3) != 0 {
			at := rng.Int64N(2_000_000)
			if rng.IntN(8) == 0 {
				at = 100 * rng.Int64N(100) // shared deadlines
			}
			d.add(at, ent(k))
			m[k] = at
		}
		if step%25_000 == 0 {
			m.check(t, &d)
			require.False(t, d.del(-5, ent(k)))
		}
	}
	m.check(t, &d)
	slots, blocks := 0, 0
	for b := d.head; b != nil; b = b.next {
		slots += b.len()
		blocks++
	}
	require.GreaterOrEqual(t, 2*slots, blocks*blockSlots, "blocks under half full on average")

	// Delete at random down to a few, then expire the rest in order.
	for k, at := range m {
		if len(m) <= 300 {
			break
		}
		require.True(t, d.del(at, ent(k)))
		delete(m, k)
	}
	m.check(t, &d)
	last := int64(-1 << 62)
	for len(m) > 0 {
		x, ok := d.min()
		require.True(t, ok)
		require.GreaterOrEqual(t, x.at, last)
		last = x.at
		require.True(t, d.del(x.at, x.e))
		delete(m, x.key)
		if len(m)%50 == 0 {
			m.check(t, &d)
		}
	}
	m.check(t, &d)
	require.Nil(t, d.head)
	require.Nil(t, d.tail)
	require.Zero(t, d.dir.Len())
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
				require.GreaterOrEqual(t, full*3, grown*4, "set over 3/4 full")
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
					require.GreaterOrEqual(t, len(b.set), setSizeFor(keep), "set over 1/2 full after shrinking")
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
	blk, i, ok := d.find(at)
	require.True(t, ok)
	b := blk.s[i].bucket()
	require.NotNil(t, b)
	return b
}

// scan calls fn in deadline order until it returns false (the tests'
// view of the whole index).
func (d *deadlines) scan(fn func(deadline) bool) {
	for b := d.head; b != nil; b = b.next {
		for i := b.lo; i < b.hi; i++ {
			s := &b.s[i]
			bk := s.bucket()
			if bk == nil {
				if !fn(deadline{s.at, s.entry().Key(), s.entry()}) {
					return
				}
				continue
			}
			if !bk.each(func(e *Entry) bool { return fn(deadline{s.at, e.Key(), e}) }) {
				return
			}
		}
	}
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
