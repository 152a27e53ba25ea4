package keyspace

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/redisconv"
)

func setMembers(s *Set) []string {
	var out []string
	s.Each(func(m Member) bool {
		out = append(out, m.String())
		return true
	})
	sort.Strings(out)
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkHashSet verifies the hashtable's invariants: every member in the
// bucket its hash selects, directory ranges consistent, counts right.
func checkHashSet(t *testing.T, s *Set) {
	t.Helper()
	h := s.ht
	require.NotNil(t, h)
	require.Len(t, h.dir, 1<<h.depth)
	total := 0
	h.eachBucket(func(b *bucket) bool {
		n := 0
		if b.empty {
			n++
			assert.Same(t, b, h.bucketOf(hashString("")))
		}
		live, long := 0, 0
		for _, v := range b.slots {
			if v != 0 {
				m := b.str(v)
				n++
				assert.Same(t, b, h.bucketOf(hashString(m)), "member %q", m)
				at, _ := b.find(hashString(m), m)
				assert.GreaterOrEqual(t, at, 0, "member %q not reachable", m)
				assert.Equal(t, memberTag(hashString(m)), v&^refMask, "tag of %q", m)
				if ref := v & refMask; ref < bigRef {
					live += recLen(b.arena, ref-1)
				} else {
					long++
				}
			}
		}
		assert.Equal(t, n, b.n)
		// Every record is live or counted as a hole, and the holes were
		// compacted away before they passed half of the arena.
		assert.Equal(t, len(b.arena), live+b.holes)
		assert.LessOrEqual(t, b.holes*2, len(b.arena))
		assert.Len(t, b.big, long)
		total += n
		return true
	})
	assert.Equal(t, total, h.n)
}

func TestSetIntParse(t *testing.T) {
	for _, tc := range []struct {
		in string
		v  int64
		ok bool
	}{
		{"0", 0, true}, {"-1", -1, true}, {"123", 123, true},
		{"9223372036854775807", 9223372036854775807, true},
		{"-9223372036854775808", -9223372036854775808, true},
		{"9223372036854775808", 0, false}, {"-9223372036854775809", 0, false},
		{"", 0, false}, {"-", 0, false}, {"-0", 0, false}, {"01", 0, false},
		{"+1", 0, false}, {" 1", 0, false}, {"1 ", 0, false}, {"1a", 0, false},
		{"123456789012345678901", 0, false},
	} {
		v, ok := redisconv.ParseInt(tc.in)
		assert.Equal(t, tc.ok, ok, tc.in)
		assert.Equal(t, tc.v, v, tc.in)
		vb, okb := redisconv.ParseInt([]byte(tc.in))
		assert.Equal(t, ok, okb)
		assert.Equal(t, v, vb)
	}
}

func TestSetEncodings(t *testing.T) {
	s := NewSet()
	assert.Equal(t, "intset", s.Encoding())
	assert.True(t, s.Add([]byte("3"), 4))
	assert.True(t, s.Add([]byte("-1"), 4))
	assert.False(t, s.Add([]byte("3"), 4))
	assert.True(t, s.AddInt(2, 4))
	assert.False(t, s.AddInt(2, 4))
	assert.Equal(t, []int64{-1, 2, 3}, s.Ints())
	assert.True(t, s.Has([]byte("2")))
	assert.False(t, s.Has([]byte("02")))
	assert.False(t, s.Has([]byte("x")))
	assert.False(t, s.Remove([]byte("x")))
	assert.True(t, s.Add([]byte("7"), 4))
	assert.Equal(t, "intset", s.Encoding())
	// Past the limit: hashtable, and never back.
	assert.True(t, s.Add([]byte("8"), 4))
	assert.Equal(t, "hashtable", s.Encoding())
	assert.Nil(t, s.Ints())
	assert.Equal(t, []string{"-1", "2", "3", "7", "8"}, setMembers(s))
	for _, m := range []string{"-1", "2", "3", "7"} {
		assert.True(t, s.Remove([]byte(m)))
	}
	assert.Equal(t, "hashtable", s.Encoding())
	assert.Equal(t, 1, s.Len())

	// A non-integer converts at once.
	s = NewSet()
	s.Add([]byte("1"), 512)
	s.Add([]byte("a"), 512)
	assert.Equal(t, "hashtable", s.Encoding())
	assert.True(t, s.Has([]byte("1")))
	assert.True(t, s.HasMember(Member{Int: 1, IsInt: true}))
	assert.True(t, s.HasMember(Member{Str: "a"}))

	assert.Equal(t, "intset", NewSetFor([]byte("12")).Encoding())
	assert.Equal(t, "hashtable", NewSetFor([]byte("012")).Encoding())
	assert.Equal(t, TypeSet, s.Type())
	var o Object = s
	_, ok := o.(Encoder)
	assert.True(t, ok)
}

func TestSetHasMemberAcrossEncodings(t *testing.T) {
	is := NewSet()
	is.Add([]byte("5"), 512)
	assert.True(t, is.HasMember(Member{Str: "5"}))
	assert.False(t, is.HasMember(Member{Str: "05"}))
	assert.False(t, is.HasMember(Member{Str: "x"}))
	assert.True(t, is.HasMember(Member{Int: 5, IsInt: true}))
}

// The hashtable against a map model, through splits, shrinking tables
// and rebuilds, with the empty member.
func TestSetHashtableModel(t *testing.T) {
	s := NewSetFor([]byte("x"))
	model := map[string]bool{}
	r := rand.New(rand.NewPCG(1, 2))
	key := func() string {
		if r.IntN(500) == 0 {
			return ""
		}
		return "m" + strconv.Itoa(r.IntN(6000))
	}
	for round := 0; round < 2; round++ {
		for i := 0; i < 20000; i++ {
			k := key()
			assert.Equal(t, !model[k], s.Add([]byte(k), 512))
			model[k] = true
		}
		checkHashSet(t, s)
		require.Equal(t, len(model), s.Len())
		require.Equal(t, sortedKeys(model), setMembers(s))
		for i := 0; i < 30000; i++ {
			k := key()
			assert.Equal(t, model[k], s.Remove([]byte(k)))
			delete(model, k)
			if i%7 == 0 {
				assert.Equal(t, model[k], s.Has([]byte(k)))
			}
		}
		checkHashSet(t, s)
		require.Equal(t, sortedKeys(model), setMembers(s))
	}
	for k := range model {
		s.Remove([]byte(k))
	}
	assert.Equal(t, 0, s.Len())
	assert.Equal(t, uint8(0), s.ht.depth, "rebuilt small")
}

func TestSetCloneIsDeep(t *testing.T) {
	for _, s := range []*Set{NewSet(), NewSetFor([]byte("a"))} {
		for i := 0; i < 3000; i++ {
			s.Add([]byte(strconv.Itoa(i)), 512)
		}
		c := s.Clone().(*Set)
		assert.Equal(t, s.Encoding(), c.Encoding())
		s.Add([]byte("new"), 512)
		s.Remove([]byte("5"))
		assert.False(t, c.Has([]byte("new")))
		assert.True(t, c.Has([]byte("5")))
		assert.Equal(t, 3000, c.Len())
		checkHashSet(t, c)
	}
	s := NewSet()
	s.Add([]byte("1"), 512)
	c := s.Clone().(*Set)
	s.Add([]byte("2"), 512)
	assert.Equal(t, []int64{1}, c.Ints())
}

func TestSetRandomAndRemoveMember(t *testing.T) {
	for _, s := range []*Set{NewSet(), NewSetFor([]byte("a"))} {
		for i := 0; i < 2000; i++ {
			s.Add([]byte(strconv.Itoa(i)), 512)
		}
		s.Add([]byte(""), 512)
		seen := map[string]bool{}
		for i := 0; i < 40000; i++ {
			m := s.Random()
			require.True(t, s.HasMember(m))
			seen[m.String()] = true
		}
		// Every member is drawn (2001 members, 40000 draws).
		assert.Greater(t, len(seen), 1990)
		for s.Len() > 0 {
			m := s.Random()
			n := s.Len()
			s.RemoveMember(m)
			require.Equal(t, n-1, s.Len())
			require.False(t, s.HasMember(m))
		}
	}
}

func TestSetReplace(t *testing.T) {
	s := NewSetFor([]byte("a"))
	s.Add([]byte("a"), 512)
	o := NewSet()
	o.Add([]byte("1"), 512)
	s.Replace(o)
	assert.Equal(t, "intset", s.Encoding())
	assert.Equal(t, []int64{1}, s.Ints())
}

func TestSetScanIntset(t *testing.T) {
	s := NewSet()
	for _, v := range []string{"3", "1", "2"} {
		s.Add([]byte(v), 512)
	}
	var got []string
	next := s.Scan(12345, 1, func(m Member) { got = append(got, m.String()) })
	assert.Equal(t, uint64(0), next)
	assert.Equal(t, []string{"1", "2", "3"}, got)
}

// SSCAN's guarantee: members present for the whole scan are returned at
// least once however the set grows (splits) and shrinks (table shrinks,
// rebuilds) between calls, and a scan without changes returns every
// member exactly once.
func TestSetScanGuarantee(t *testing.T) {
	const keep, tmp = 300, 12000
	s := NewSetFor([]byte("x"))
	for i := 0; i < keep; i++ {
		s.Add([]byte("keep"+strconv.Itoa(i)), 512)
	}
	s.Add([]byte(""), 512)

	// No changes: exactly once each.
	counts := map[string]int{}
	cursor, calls := uint64(0), 0
	for {
		cursor = s.Scan(cursor, 10, func(m Member) { counts[m.Str]++ })
		calls++
		if cursor == 0 {
			break
		}
	}
	assert.Len(t, counts, keep+1)
	for k, n := range counts {
		require.Equal(t, 1, n, k)
	}
	assert.Greater(t, calls, 20)

	for _, count := range []int{2, 20} {
		seen := map[string]bool{}
		cursor := uint64(0)
		grown, shrunk := false, false
		for step := 0; ; step++ {
			cursor = s.Scan(cursor, count, func(m Member) { seen[m.Str] = true })
			if cursor == 0 {
				break
			}
			switch step % 12 {
			case 3: // grow: splits
				for i := 0; i < tmp; i++ {
					s.Add([]byte("tmp"+strconv.Itoa(i)), 512)
				}
				grown = grown || s.ht.depth >= 4
			case 9: // shrink back: table shrinks and a rebuild
				d := s.ht.depth
				for i := 0; i < tmp; i++ {
					s.Remove([]byte("tmp" + strconv.Itoa(i)))
				}
				shrunk = shrunk || s.ht.depth < d
			}
		}
		assert.True(t, grown && shrunk, "count %d: the scan saw no split or no rebuild", count)
		for i := 0; i < keep; i++ {
			require.True(t, seen["keep"+strconv.Itoa(i)], "count %d: keep%d missed", count, i)
		}
		require.True(t, seen[""], "count %d: empty member missed", count)
		for i := 0; i < tmp; i++ {
			s.Remove([]byte("tmp" + strconv.Itoa(i)))
		}
		checkHashSet(t, s)
	}

	// Any cursor value is valid and terminates.
	n := 0
	for c := s.Scan(^uint64(0)-5, 10, func(Member) { n++ }); c != 0; c = s.Scan(c, 10, func(Member) { n++ }) {
	}
	assert.LessOrEqual(t, n, keep+1)
}

// longMember is a member too long for a bucket's arena (kept in big).
func longMember(i int) string { return strings.Repeat("L", bigMember) + strconv.Itoa(i) }

// Members of every record form (one- and two-byte length headers, long
// ones out of the arena, the empty one) against a map model, through
// splits, compactions, table shrinks and rebuilds.
func TestSetHashtableRecordForms(t *testing.T) {
	s := NewSetFor([]byte("x"))
	model := map[string]bool{}
	r := rand.New(rand.NewPCG(3, 4))
	key := func() string {
		i := r.IntN(4000)
		switch i % 5 {
		case 0:
			return longMember(i)
		case 1:
			return strings.Repeat("y", 120+i%16) + strconv.Itoa(i) // 127/128 bytes
		case 2:
			if i%50 == 2 {
				return ""
			}
		}
		return "m" + strconv.Itoa(i)
	}
	for round := 0; round < 3; round++ {
		for i := 0; i < 8000; i++ {
			k := key()
			require.Equal(t, !model[k], s.Add([]byte(k), 512), "add %q", k)
			model[k] = true
		}
		checkHashSet(t, s)
		require.Equal(t, sortedKeys(model), setMembers(s))
		for i := 0; i < 12000; i++ {
			k := key()
			require.Equal(t, model[k], s.Remove([]byte(k)), "remove %q", k)
			delete(model, k)
		}
		checkHashSet(t, s)
		require.Equal(t, sortedKeys(model), setMembers(s))
	}
}

// A removed record stays in the arena as a hole until the holes pass
// half of it; then the bucket copies its records into a new arena.
func TestSetArenaHolesCompact(t *testing.T) {
	s := NewSetFor([]byte("x"))
	for i := 0; i < 300; i++ {
		s.Add(fmt.Appendf(nil, "m%04d", i), 512) // 6-byte records
	}
	b := s.ht.dir[0]
	require.Zero(t, b.holes)
	arena := unsafe.SliceData(b.arena)
	for i := 0; i < 150; i++ {
		require.True(t, s.Remove(fmt.Appendf(nil, "m%04d", i)))
	}
	assert.Same(t, arena, unsafe.SliceData(b.arena), "compacted before half")
	assert.Equal(t, 150*6, b.holes)
	assert.Equal(t, 300*6, len(b.arena))
	require.True(t, s.Remove([]byte("m0150")))
	assert.NotSame(t, arena, unsafe.SliceData(b.arena), "not compacted past half")
	assert.Zero(t, b.holes)
	assert.Equal(t, 149*6, len(b.arena))
	checkHashSet(t, s)
	for i := 151; i < 300; i++ {
		require.True(t, s.Has(fmt.Appendf(nil, "m%04d", i)))
	}
}

// Members handed out stay intact whatever the set does after: appends,
// compactions, table resizes, splits, rebuilds, and their own removal
// (SPOP writes and propagates a member it removed).
func TestSetViewsSurvive(t *testing.T) {
	s := NewSetFor([]byte("x"))
	for i := 0; i < 2000; i++ {
		s.Add([]byte("m"+strconv.Itoa(i)), 512)
	}
	s.Add([]byte(longMember(1)), 512)
	views := map[string]string{}
	s.Each(func(m Member) bool {
		views[strings.Clone(m.Str)] = m.Str
		return true
	})
	for i := 0; i < 500; i++ {
		m := s.Random()
		want := strings.Clone(m.Str)
		s.RemoveMember(m)
		views[want] = m.Str
	}
	for i := 0; i < 20000; i++ { // splits, appends
		s.Add([]byte("n"+strconv.Itoa(i)), 512)
	}
	for i := 0; i < 20000; i++ { // compactions, shrinks, a rebuild
		s.Remove([]byte("n" + strconv.Itoa(i)))
	}
	for s.Len() > 0 {
		s.RemoveMember(s.Random())
	}
	for want, v := range views {
		require.Equal(t, want, v)
	}
}

// A split gives each half its own arena holding just its records.
func TestSetSplitArenas(t *testing.T) {
	s := NewSetFor([]byte("x"))
	s.Add(nil, 512)
	n := 0
	for s.ht.depth == 0 {
		s.Add([]byte("m"+strconv.Itoa(n)), 512)
		n++
	}
	require.Equal(t, bucketSlots*3/4, n, "split as the table, the empty member counted, would pass 3/4")
	// The arenas are checked as the split leaves them, split called
	// directly: the member added after a split may find its half's
	// arena full to its size class and grow it by half (about 2% of
	// hash seeds did).
	s = NewSetFor([]byte("x"))
	s.Add(nil, 512)
	for i := 0; i < n-1; i++ {
		s.Add([]byte("m"+strconv.Itoa(i)), 512)
	}
	require.Zero(t, s.ht.depth)
	s.ht.split(s.ht.dir[0])
	parent := map[*byte]bool{}
	for _, b := range s.ht.dir {
		require.Equal(t, uint8(1), b.depth)
		require.Zero(t, b.holes)
		assert.LessOrEqual(t, cap(b.arena), len(b.arena)+len(b.arena)/4+64, "arena room")
		parent[unsafe.SliceData(b.arena)] = true
	}
	assert.Len(t, parent, 2)
	s.Add([]byte("m"+strconv.Itoa(n-1)), 512)
	checkHashSet(t, s)
	require.Equal(t, n+1, s.Len())
	for i := 0; i < n; i++ {
		require.True(t, s.Has([]byte("m"+strconv.Itoa(i))))
	}
	assert.True(t, s.Has(nil))
}

// A split whose members all go to one half grows that half's table
// (a bucket past bucketSlots, as a rebuild can leave, splitting).
func TestSetSplitSkewed(t *testing.T) {
	s := NewSetFor([]byte("x"))
	h := s.ht
	var ms []string
	for i := 0; len(ms) < 2000; i++ {
		if m := "m" + strconv.Itoa(i); hashString(m)>>63 == 0 {
			ms = append(ms, m)
		}
	}
	for _, m := range ms {
		h.dir[0].put(hashString(m), []byte(m))
		h.n++
	}
	h.split(h.dir[0])
	checkHashSet(t, s)
	require.Equal(t, 2000, h.dir[0].n)
	require.Zero(t, h.dir[1].n)
	assert.Empty(t, h.dir[1].arena)
	for _, m := range ms {
		require.True(t, s.Has([]byte(m)))
	}
}

// The empty member is kept beside the table, not in the arena, and goes
// through splits, scans, draws and clones like any other.
func TestSetEmptyMember(t *testing.T) {
	s := NewSetFor([]byte("x"))
	require.True(t, s.Add(nil, 512))
	require.False(t, s.Add([]byte{}, 512))
	assert.Empty(t, s.ht.dir[0].arena)
	assert.Equal(t, 1, s.Len())
	assert.True(t, s.Has(nil))
	assert.Equal(t, "", s.Random().Str)
	assert.Equal(t, []string{""}, setMembers(s))
	for i := 0; i < 3000; i++ {
		s.Add([]byte("m"+strconv.Itoa(i)), 512)
	}
	c := s.Clone().(*Set)
	require.True(t, s.Remove(nil))
	assert.False(t, s.Has(nil))
	assert.True(t, c.Has(nil))
	found := false
	for cur := c.Scan(0, 100, func(m Member) { found = found || m.Str == "" }); cur != 0; {
		cur = c.Scan(cur, 100, func(m Member) { found = found || m.Str == "" })
	}
	assert.True(t, found)
	checkHashSet(t, s)
	checkHashSet(t, c)
	assert.Equal(t, 3000, s.Len())
	assert.Equal(t, 3001, c.Len())
}

// A clone shares the arenas of the original: adds to either (into the
// spare room of what was one array), removals of long members (which
// move big entries) and compactions must not show in the other.
func TestSetCloneIsolation(t *testing.T) {
	s := NewSetFor([]byte("x"))
	model := map[string]bool{}
	for i := 0; i < 3000; i++ {
		k := "m" + strconv.Itoa(i)
		if i%10 == 0 {
			k = longMember(i)
		}
		s.Add([]byte(k), 512)
		model[k] = true
	}
	c := s.Clone().(*Set)
	cm := maps.Clone(model)
	for i := 0; i < 3000; i++ {
		s.Add([]byte("s"+strconv.Itoa(i)), 512)
		model["s"+strconv.Itoa(i)] = true
		c.Add([]byte("c"+strconv.Itoa(i)), 512)
		cm["c"+strconv.Itoa(i)] = true
	}
	for i := 0; i < 3000; i += 2 {
		k := "m" + strconv.Itoa(i)
		if i%10 == 0 {
			k = longMember(i)
		}
		s.Remove([]byte(k))
		delete(model, k)
	}
	for i := 1; i < 3000; i += 2 {
		c.Remove([]byte("m" + strconv.Itoa(i)))
		delete(cm, "m"+strconv.Itoa(i))
	}
	checkHashSet(t, s)
	checkHashSet(t, c)
	require.Equal(t, sortedKeys(model), setMembers(s))
	require.Equal(t, sortedKeys(cm), setMembers(c))
}

// A snapshot reads the original while the writer changes its clone, or
// the reverse: neither writes bytes the other reads (run with -race).
func TestSetCloneWhileRead(t *testing.T) {
	for _, writeClone := range []bool{true, false} {
		s := NewSetFor([]byte("x"))
		for i := 0; i < 5000; i++ {
			s.Add([]byte("m"+strconv.Itoa(i)), 512)
		}
		c := s.Clone().(*Set)
		read, write := s, c
		if !writeClone {
			read, write = c, s
		}
		done := make(chan int)
		go func() {
			n := 0
			for k := 0; k < 10; k++ {
				read.Each(func(m Member) bool {
					n += len(m.Str)
					return true
				})
				read.Has([]byte("m4999"))
			}
			done <- n
		}()
		for i := 0; i < 5000; i++ {
			write.Add([]byte("w"+strconv.Itoa(i)), 512)
			write.Remove([]byte("m" + strconv.Itoa(i)))
		}
		sum := 0
		for i := 0; i < 5000; i++ {
			sum += len("m" + strconv.Itoa(i))
		}
		assert.Equal(t, 10*sum, <-done)
		assert.Equal(t, 5000, read.Len())
	}
}

func TestSetMemberBytes(t *testing.T) {
	assert.Equal(t, "-42", string(Member{Int: -42, IsInt: true}.Bytes(nil)))
	assert.Equal(t, "ab", string(Member{Str: "ab"}.Bytes(nil)))
	assert.Equal(t, "7", Member{Int: 7, IsInt: true}.String())
}

// BenchmarkSetMemory reports the heap cost per member of a 1M-member
// set of short members (redis-server 7.0: about 56 bytes for
// "member:N").
func BenchmarkSetMemory(b *testing.B) {
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		s := NewSetFor([]byte("m"))
		for j := 0; j < 1_000_000; j++ {
			s.Add([]byte("member:"+strconv.Itoa(j)), 512)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/1e6, "bytes/member")
		runtime.KeepAlive(s)
	}
}

func BenchmarkSetAddHas(b *testing.B) {
	s := NewSetFor([]byte("m"))
	keys := make([][]byte, 1<<16)
	for i := range keys {
		keys[i] = []byte("member:" + strconv.Itoa(i))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := keys[i&(len(keys)-1)]
		s.Add(k, 512)
		s.Has(k)
	}
}

// benchMember is the memory benchmark's set member: "m" and 9 digits.
func benchMember(buf []byte, i int) []byte {
	return strconv.AppendInt(append(buf[:0], 'm'), int64(100_000_000+i), 10)
}

// benchSet is a hashtable set of n benchMembers.
func benchSet(n int) *Set {
	s := NewSetFor([]byte("m"))
	var buf []byte
	for i := 0; i < n; i++ {
		buf = benchMember(buf, i)
		s.Add(buf, 512)
	}
	return s
}

// BenchmarkSetAdd is SADD of new members into sets growing to 1M.
func BenchmarkSetAdd(b *testing.B) {
	var s *Set
	var buf []byte
	for i := 0; i < b.N; i++ {
		if i%(1<<20) == 0 {
			s = NewSetFor([]byte("m"))
		}
		buf = benchMember(buf, i)
		s.Add(buf, 512)
	}
}

// BenchmarkSetHas is SISMEMBER on a 1M-member set, of members and of
// strangers.
func BenchmarkSetHas(b *testing.B) {
	const n = 1 << 20
	s := benchSet(n)
	b.Run("hit", func(b *testing.B) {
		var buf []byte
		for i := 0; i < b.N; i++ {
			buf = benchMember(buf, i*7919%n)
			if !s.Has(buf) {
				b.Fatal("missing")
			}
		}
	})
	b.Run("miss", func(b *testing.B) {
		var buf []byte
		for i := 0; i < b.N; i++ {
			buf = benchMember(buf, n+i*7919%n)
			if s.Has(buf) {
				b.Fatal("found")
			}
		}
	})
}

// BenchmarkSetEach is SMEMBERS of a 1M-member set: an op is one member.
func BenchmarkSetEach(b *testing.B) {
	s := benchSet(1 << 20)
	b.ResetTimer()
	total := 0
	for total < b.N {
		s.Each(func(m Member) bool {
			total++
			return total < b.N
		})
	}
}

// BenchmarkSetPop is SPOP (a random draw, then its removal) from a set
// of 1M members, refilled when it empties.
func BenchmarkSetPop(b *testing.B) {
	const n = 1 << 20
	s := benchSet(n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if s.Len() == 0 {
			b.StopTimer()
			s = benchSet(n)
			b.StartTimer()
		}
		s.RemoveMember(s.Random())
	}
}
