package keyspace

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// listModel is the obvious slice-based list the ring buffer must agree
// with.
type listModel []string

func listContents(l *List) []string {
	out := make([]string, l.Len())
	for i := range out {
		out[i] = string(l.At(i))
	}
	return out
}

func bs(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, x := range s {
		out[i] = []byte(x)
	}
	return out
}

func TestListPushPop(t *testing.T) {
	l := NewList()
	assert.Equal(t, TypeList, l.Type())
	assert.Equal(t, "quicklist", l.Encoding())
	assert.Nil(t, l.Pop(true))
	assert.Nil(t, l.Pop(false))
	l.PushCopy(true, bs("a", "b", "c")) // LPUSH a b c -> c b a
	l.PushCopy(false, bs("x", "y"))
	require.Equal(t, []string{"c", "b", "a", "x", "y"}, listContents(l))
	assert.Equal(t, "c", string(l.Pop(true)))
	assert.Equal(t, "y", string(l.Pop(false)))
	require.Equal(t, []string{"b", "a", "x"}, listContents(l))
	for l.Len() > 0 {
		l.Pop(true)
	}
	assert.Nil(t, l.cs, "an empty list keeps no chunks")
}

func TestListPushCopies(t *testing.T) {
	l := NewList()
	buf := []byte("abc")
	l.PushCopy(false, [][]byte{buf[:1], buf[1:]})
	buf[0], buf[1] = 'X', 'Y'
	assert.Equal(t, []string{"a", "bc"}, listContents(l))
	// Elements of one push do not overlap: appending to one cannot
	// overwrite the next.
	e := l.At(0)
	_ = append(e, 'Z')
	assert.Equal(t, []string{"a", "bc"}, listContents(l))
}

func TestListIndex(t *testing.T) {
	l := NewList()
	l.PushCopy(false, bs("a", "b", "c"))
	for _, tc := range []struct {
		idx  int64
		pos  int
		okay bool
	}{
		{0, 0, true}, {2, 2, true}, {3, 0, false}, {-1, 2, true}, {-3, 0, true}, {-4, 0, false},
		{-1 << 63, 0, false}, {1<<63 - 1, 0, false},
	} {
		pos, ok := l.Index(tc.idx)
		assert.Equal(t, tc.okay, ok, "%d", tc.idx)
		if ok {
			assert.Equal(t, tc.pos, pos, "%d", tc.idx)
		}
	}
}

func TestListCloneIsDeep(t *testing.T) {
	l := NewList()
	l.PushCopy(false, bs("a", "bb", "", "ccc"))
	l.Pop(true)
	l.PushCopy(true, bs("z"))
	c := l.Clone().(*List)
	require.Equal(t, listContents(l), listContents(c))
	c.Set(0, []byte("changed"))
	c.Pop(false)
	c.PushCopy(false, bs("new"))
	assert.Equal(t, []string{"z", "bb", "", "ccc"}, listContents(l))
	assert.Equal(t, []string{"changed", "bb", "", "new"}, listContents(c))
	assert.Equal(t, 0, NewList().Clone().Len())
}

func TestListRemove(t *testing.T) {
	for _, tc := range []struct {
		limit    int64
		fromTail bool
		want     []string
		removed  int64
	}{
		{0, false, []string{"b", "c", "b"}, 4},
		{1, false, []string{"b", "a", "c", "a", "b", "a"}, 1},
		{2, false, []string{"b", "c", "a", "b", "a"}, 2},
		{1, true, []string{"a", "b", "a", "c", "a", "b"}, 1},
		{3, true, []string{"a", "b", "c", "b"}, 3},
		{0, true, []string{"b", "c", "b"}, 4},
		{100, true, []string{"b", "c", "b"}, 4},
	} {
		l := NewList()
		l.PushCopy(false, bs("a", "b", "a", "c", "a", "b", "a"))
		got := l.Remove([]byte("a"), tc.limit, tc.fromTail)
		assert.Equal(t, tc.removed, got, "%+v", tc)
		assert.Equal(t, tc.want, listContents(l), "%+v", tc)
	}
}

func TestListTrimInsert(t *testing.T) {
	l := NewList()
	l.PushCopy(false, bs("a", "b", "c", "d", "e"))
	l.Trim(1, 3)
	assert.Equal(t, []string{"b", "c", "d"}, listContents(l))
	l.Insert(0, []byte("0"))
	l.Insert(4, []byte("4"))
	l.Insert(2, []byte("m"))
	assert.Equal(t, []string{"0", "b", "m", "c", "d", "4"}, listContents(l))
	assert.Equal(t, 2, l.Find([]byte("m")))
	assert.Equal(t, -1, l.Find([]byte("zz")))
	l.Trim(1, 0)
	assert.Equal(t, 0, l.Len())
}

// TestListAgainstModel applies random operations to a List and to a
// plain slice and requires the same contents after each, across ring
// growth, wrap-around and shrinking.
func TestListAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	l := NewList()
	var m listModel
	for step := 0; step < 20000; step++ {
		v := fmt.Sprint(rng.IntN(5))
		switch rng.IntN(50) {
		case 0:
			v += strings.Repeat("x", 3000) // fills chunks by bytes
		case 1, 2:
			// The longest element a narrow chunk takes; v+"x" widens it.
			v += strings.Repeat("y", narrowMax-1)
		}
		switch op := rng.IntN(9); {
		case op < 2:
			l.PushCopy(true, bs(v))
			m = append(listModel{v}, m...)
		case op < 4:
			l.PushCopy(false, bs(v, v+"x"))
			m = append(m, v, v+"x")
		case op == 4 && len(m) > 0:
			require.Equal(t, m[0], string(l.Pop(true)))
			m = m[1:]
		case op == 5 && len(m) > 0:
			require.Equal(t, m[len(m)-1], string(l.Pop(false)))
			m = m[:len(m)-1]
		case op == 6:
			i := rng.IntN(len(m) + 1)
			l.Insert(i, []byte(v))
			m = append(m[:i], append(listModel{v}, m[i:]...)...)
		case op == 7 && len(m) > 0:
			limit := int64(rng.IntN(3))
			fromTail := rng.IntN(2) == 0
			l.Remove([]byte(v), limit, fromTail)
			m = modelRemove(m, v, limit, fromTail)
		case op == 8 && len(m) > 0 && rng.IntN(3) == 0:
			i := rng.IntN(len(m))
			l.Set(i, []byte(v))
			m[i] = v
		case op == 8 && len(m) > 2 && rng.IntN(20) == 0:
			s := rng.IntN(len(m))
			e := s + rng.IntN(len(m)-s)
			l.Trim(s, e)
			m = append(listModel(nil), m[s:e+1]...)
		}
		require.Equal(t, append([]string{}, m...), listContents(l), "step %d", step)
		if step%97 == 0 {
			checkListInvariants(t, l)
			c := l.Clone().(*List)
			require.Equal(t, listContents(l), listContents(c))
			checkListInvariants(t, c)
			var rev []string
			if l.Len() > 0 {
				l.Each(l.Len()-1, true, func(i int, v []byte) bool {
					require.Equal(t, string(l.At(i)), string(v))
					rev = append(rev, string(v))
					return true
				})
			}
			require.Len(t, rev, l.Len())
		}
		if len(m) == 0 {
			require.Equal(t, 0, l.Len())
		}
	}
}

func modelRemove(m listModel, v string, limit int64, fromTail bool) listModel {
	var removed int64
	keep := make([]bool, len(m))
	for k := range m {
		i := k
		if fromTail {
			i = len(m) - 1 - k
		}
		if m[i] == v && (limit == 0 || removed < limit) {
			removed++
			continue
		}
		keep[i] = true
	}
	out := listModel{}
	for i, x := range m {
		if keep[i] {
			out = append(out, x)
		}
	}
	return out
}

func BenchmarkListPushPop(b *testing.B) {
	l := NewList()
	v := [][]byte{[]byte("message-id-0123456789")}
	for i := 0; i < b.N; i++ {
		l.PushCopy(false, v)
		if l.Len() > 1000 {
			l.Pop(true)
		}
	}
}

// benchListValue is the memory benchmark's element: 10 bytes.
var benchListValue = []byte("v000000001")

// benchPush is RPUSH (or LPUSH) of one element to a list that grows to
// 64k elements, then starts again, so that small lists' growth counts
// too.
func benchPush(b *testing.B, front bool) {
	l := NewList()
	for i := 0; i < b.N; i++ {
		l.Push(front, benchListValue)
		if l.Len() == 1<<16 {
			l = NewList()
		}
	}
}

func BenchmarkListRPush(b *testing.B) { benchPush(b, false) }
func BenchmarkListLPush(b *testing.B) { benchPush(b, true) }

// BenchmarkListLPop pops from the head of a list filled by RPUSH, the
// queue's read side, a million elements (refilled untimed) at a time.
func BenchmarkListLPop(b *testing.B) {
	l := NewList()
	for i := 0; i < b.N; i++ {
		if l.Len() == 0 {
			b.StopTimer()
			for k := 0; k < min(b.N-i, 1<<20); k++ {
				l.Push(false, benchListValue)
			}
			b.StartTimer()
		}
		l.Pop(true)
	}
}

// benchList is a list of n 10-byte elements, half pushed at each end.
func benchList(n int) *List {
	l := NewList()
	for i := 0; i < n; i++ {
		l.Push(i%2 == 0, benchListValue)
	}
	return l
}

// BenchmarkListLRange reads 100 elements (LRANGE) from positions spread
// over a 100k-element list; one op is one element.
func BenchmarkListLRange(b *testing.B) {
	l := benchList(100000)
	b.ResetTimer()
	for i := 0; i < b.N; i += 100 {
		from := (i * 7919) % (l.Len() - 100)
		k := 0
		l.Each(from, false, func(_ int, v []byte) bool {
			k++
			return k < 100
		})
	}
}

// BenchmarkListIndex is LINDEX at positions spread over a 100k-element
// list.
func BenchmarkListIndex(b *testing.B) {
	l := benchList(100000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = l.At((i * 7919) % l.Len())
	}
}

// BenchmarkListSet is LSET of a 10-byte element at positions spread
// over a 100k-element list: a chunk rewritten each time.
func BenchmarkListSet(b *testing.B) {
	l := benchList(100000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l.Set((i*7919)%l.Len(), benchListValue)
	}
}

// BenchmarkListInsert is LINSERT at positions spread over a list that
// starts at 100k elements, rebuilt every 100k inserts.
func BenchmarkListInsert(b *testing.B) {
	l := benchList(100000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%100000 == 99999 {
			b.StopTimer()
			l = benchList(100000)
			b.StartTimer()
		}
		l.Insert(1+(i*7919)%(l.Len()-1), benchListValue)
	}
}

// checkListInvariants verifies the chunk bookkeeping: no empty chunk,
// positions contiguous from head, lengths adding up.
func checkListInvariants(t *testing.T, l *List) {
	t.Helper()
	if l.n == 0 {
		require.Empty(t, l.cs[l.c0:])
		return
	}
	pos, total := l.head, 0
	for _, c := range l.cs[l.c0:] {
		require.Positive(t, c.count())
		require.Equal(t, pos, c.start)
		pos += c.count()
		total += c.count()
		require.LessOrEqual(t, int(c.lo), int(c.n))
		require.LessOrEqual(t, c.used(), len(c.buf))
		if c.n > 1 {
			require.LessOrEqual(t, c.used(), listChunkBytes, "only an element alone may exceed a chunk")
		}
		end, ordered := c.size, true
		for k := int(c.n) - 1; k >= 0; k-- {
			ordered = ordered && c.off(k) <= end
			end = c.off(k)
		}
		require.True(t, ordered, "the offsets are in order")
		require.Zero(t, end)
		if !c.narrow {
			require.Equal(t, c.size&0xffff, c.slot(int(c.n)), "the last slot holds the data's end")
			continue
		}
		sum := 0
		for k := 0; k < int(c.n); k++ {
			require.Equal(t, sum, c.off(k), "element %d starts where the lengths before it end", k)
			require.LessOrEqual(t, c.length(k), narrowMax)
			sum += c.length(k)
		}
		require.Equal(t, c.size, sum, "the lengths add up to the data")
	}
	require.Equal(t, l.n, total)
	for _, c := range l.cs[:l.c0] {
		require.Nil(t, c)
	}
}

func TestListChunking(t *testing.T) {
	l := NewList()
	for i := 0; i < 20000; i++ {
		l.Push(i%3 != 0, []byte(fmt.Sprint(i)))
	}
	checkListInvariants(t, l)
	require.Greater(t, len(l.cs)-l.c0, 3, "the elements fill several chunks")
	big := strings.Repeat("b", 3*listChunkBytes)
	l.Insert(2500, []byte(big))
	l.Set(10, []byte(big))
	checkListInvariants(t, l)
	assert.Equal(t, big, string(l.At(2500)))
	assert.Equal(t, big, string(l.At(10)))
	// A queue: pushes at the tail, pops at the head, keeps its chunk
	// slice bounded.
	q := NewList()
	for i := 0; i < 200000; i++ {
		q.Push(false, []byte("message"))
		if q.Len() > 1000 {
			q.Pop(true)
		}
	}
	assert.Less(t, cap(q.cs), 64)
	checkListInvariants(t, q)
}

// requireList checks l against want element by element: At, Each both
// ways from every end and from the middle, and the chunk invariants.
func requireList(t *testing.T, want []string, l *List) {
	t.Helper()
	checkListInvariants(t, l)
	require.Equal(t, len(want), l.Len())
	if len(want) == 0 {
		return
	}
	require.Equal(t, want, listContents(l))
	for _, from := range []int{0, len(want) / 2, len(want) - 1} {
		var fwd, back []string
		badIndex := false
		l.Each(from, false, func(i int, v []byte) bool {
			badIndex = badIndex || i != from+len(fwd)
			fwd = append(fwd, string(v))
			return true
		})
		l.Each(from, true, func(i int, v []byte) bool {
			badIndex = badIndex || i != from-len(back)
			back = append(back, string(v))
			return true
		})
		require.False(t, badIndex, "Each's positions")
		require.Equal(t, want[from:], fwd)
		slices.Reverse(back)
		require.Equal(t, want[:from+1], back)
	}
}

// TestListLargeElements: elements too large for a chunk, and for 16-bit
// offsets, live alone in theirs, among small ones, pushed and popped at
// both ends, replaced and inserted in the middle.
func TestListLargeElements(t *testing.T) {
	huge := strings.Repeat("h", 70000)    // beyond 16 bits
	large := strings.Repeat("L", 20000)   // beyond a chunk, within 16 bits
	edge := strings.Repeat("e", 1<<16)    // the first size past 16 bits
	under := strings.Repeat("u", 1<<16-1) // the last within
	l := NewList()
	var m []string
	push := func(front bool, v string) {
		l.Push(front, []byte(v))
		if front {
			m = append([]string{v}, m...)
		} else {
			m = append(m, v)
		}
	}
	for i := 0; i < 3000; i++ {
		push(i%2 == 0, fmt.Sprint(i))
		switch i {
		case 500:
			push(false, huge)
		case 900:
			push(true, large)
		case 1500:
			push(false, edge)
		case 2000:
			push(true, under)
		}
	}
	requireList(t, m, l)
	for _, v := range []string{huge, large, edge, under} {
		require.GreaterOrEqual(t, l.Find([]byte(v)), 0)
	}
	// Replace small elements with large ones and back, insert large ones
	// into the middle of full chunks, at both ends' kinds of chunk.
	for _, i := range []int{10, 1000, 1600, 2900} {
		l.Set(i, []byte(huge))
		m[i] = huge
		requireList(t, m, l)
		l.Insert(i+1, []byte(edge))
		m = slices.Insert(m, i+1, edge)
		requireList(t, m, l)
		l.Set(i, []byte("small"))
		m[i] = "small"
		requireList(t, m, l)
	}
	c := l.Clone().(*List)
	requireList(t, m, c)
	l.Insert(5, []byte(huge))
	m = slices.Insert(m, 5, huge)
	require.Equal(t, int64(2), l.Remove([]byte(huge), 2, true))
	m = modelRemove(m, huge, 2, true)
	require.Equal(t, -1, l.Find([]byte(huge)))
	requireList(t, m, l)
	// Pop everything from alternate ends.
	for front := true; l.Len() > 0; front = !front {
		want := m[len(m)-1]
		if front {
			want, m = m[0], m[1:]
		} else {
			m = m[:len(m)-1]
		}
		require.Equal(t, want, string(l.Pop(front)))
	}
	requireList(t, nil, l)
	assert.NotEmpty(t, listContents(c), "the clone is a list of its own")
}

// TestListChunkBoundary: streaming pushes fill chunks to the byte, a
// chunk takes an element that makes it exactly full and not one more,
// and sealed chunks keep no room.
func TestListChunkBoundary(t *testing.T) {
	for _, front := range []bool{false, true} {
		l := NewList()
		v := []byte("v000000001")
		for i := 0; i < 100000; i++ {
			l.Push(front, v)
		}
		checkListInvariants(t, l)
		per := 0 // the elements a narrow chunk holds
		for len(v)*(per+1)+indexBytes(true, per+1) <= listChunkBytes {
			per++
		}
		cs := l.cs[l.c0:]
		assert.Len(t, cs, (100000+per-1)/per, "front=%v", front)
		for k, c := range cs {
			if (front && k == 0) || (!front && k == len(cs)-1) {
				continue // the growing end
			}
			assert.Equal(t, per, c.count())
			assert.Equal(t, listChunkBytes, len(c.buf), "a full chunk is exactly one buffer of the limit")
		}
	}
	// An element that fills the chunk to the byte is taken; one more
	// byte is not: in a wide chunk (its first element is longer than a
	// narrow one takes) and in a narrow one.
	l := NewList()
	l.Push(false, make([]byte, narrowMax+1))
	require.False(t, l.tail().narrow)
	rest := listChunkBytes - l.tail().used() - 2
	l.Push(false, make([]byte, rest))
	require.Len(t, l.cs[l.c0:], 1)
	require.Equal(t, listChunkBytes, l.tail().used())
	l.Push(false, nil)
	require.Len(t, l.cs[l.c0:], 2, "a full chunk takes no empty element either")
	l.Pop(false)
	l.Pop(false)
	l.Push(false, make([]byte, rest+1))
	require.Len(t, l.cs[l.c0:], 2)
	checkListInvariants(t, l)
	l = NewList()
	for l.tail() == nil || l.tail().used() < listChunkBytes-narrowMax {
		l.Push(false, []byte("v000000001"))
	}
	c := l.tail()
	require.True(t, c.narrow)
	rest = listChunkBytes - c.used() - (indexBytes(true, int(c.n)+1) - indexBytes(true, int(c.n)))
	l.Push(false, make([]byte, rest))
	require.Len(t, l.cs[l.c0:], 1)
	require.Equal(t, listChunkBytes, c.used())
	require.True(t, c.narrow)
	l.Push(false, nil)
	require.Len(t, l.cs[l.c0:], 2, "a full chunk takes no empty element either")
	checkListInvariants(t, l)
	// A chunk that stops growing with room left is compacted.
	s := NewList()
	v := []byte("v000000001")
	for i := 0; i < 1000; i++ {
		s.Push(false, v)
	}
	s.Push(true, v)                                            // a head chunk of its own
	s.Push(false, []byte(strings.Repeat("x", listChunkBytes))) // seals the tail
	require.Len(t, s.cs[s.c0:], 3)
	sealed := s.cs[s.c0+1]
	assert.Equal(t, 1000, sealed.count())
	assert.Equal(t, sealed.used(), len(sealed.buf), "a sealed chunk has no room")
	checkListInvariants(t, s)
}

// TestListMiddleChanges: LSET, LINSERT and LREM in reversed (head-pushed)
// and forward chunks with skipped elements, against a model, down to
// splitting a full chunk in halves.
func TestListMiddleChanges(t *testing.T) {
	for _, front := range []bool{false, true} {
		l := NewList()
		var m []string
		per := (listChunkBytes - 2) / (5 + 2)
		for i := 0; i < 3*per; i++ {
			v := fmt.Sprintf("%05d", i)
			l.Push(front, []byte(v))
			if front {
				m = append([]string{v}, m...)
			} else {
				m = append(m, v)
			}
		}
		// Skip elements at the non-growing ends.
		for i := 0; i < 7; i++ {
			require.Equal(t, m[0], string(l.Pop(true)))
			require.Equal(t, m[len(m)-1], string(l.Pop(false)))
			m = m[1 : len(m)-1]
		}
		requireList(t, m, l)
		chunks := len(l.cs) - l.c0
		// Inserting into a full chunk splits it in two halves.
		full := -1
		for k := l.c0; k < len(l.cs); k++ {
			if c := l.cs[k]; c.lo == 0 && c.used()+7 > listChunkBytes {
				full = k
				break
			}
		}
		require.GreaterOrEqual(t, full, 0, "a full chunk")
		n := l.cs[full].count()
		i := l.cs[full].start - l.head + n/3
		l.Insert(i, []byte("split"))
		m = slices.Insert(m, i, "split")
		requireList(t, m, l)
		assert.Equal(t, chunks+1, len(l.cs)-l.c0)
		assert.InDelta(t, (n+1)/2, l.cs[full].count(), 1)
		assert.InDelta(t, (n+1)/2, l.cs[full+1].count(), 1)
		for _, i := range []int{0, 1, per / 2, per, len(m) - 2} {
			l.Set(i, []byte("set"))
			m[i] = "set"
			requireList(t, m, l)
			l.Set(i, []byte("setting longer")) // grows the chunk
			m[i] = "setting longer"
			requireList(t, m, l)
			l.Insert(i, []byte("ins"))
			m = slices.Insert(m, i, "ins")
			requireList(t, m, l)
		}
		// LREM rebuilds everything, compacted.
		require.Equal(t, int64(5), l.Remove([]byte("ins"), 0, front))
		m = modelRemove(m, "ins", 0, front)
		requireList(t, m, l)
		for _, c := range l.cs[l.c0:] {
			assert.LessOrEqual(t, len(c.buf)-c.used(), c.used()/8)
		}
	}
}

// TestListCloneCompacts: a clone holds the live elements only, in
// buffers of the exact size, and shares nothing with the original.
func TestListCloneCompacts(t *testing.T) {
	l := NewList()
	var m []string
	for i := 0; i < 5000; i++ {
		v := fmt.Sprint(i)
		l.Push(i%2 == 0, []byte(v))
		if i%2 == 0 {
			m = append([]string{v}, m...)
		} else {
			m = append(m, v)
		}
	}
	for i := 0; i < 100; i++ {
		l.Pop(true)
		l.Pop(false)
	}
	m = m[100 : len(m)-100]
	c := l.Clone().(*List)
	requireList(t, m, c)
	for _, ch := range c.cs[c.c0:] {
		assert.Zero(t, ch.lo)
		assert.Equal(t, ch.used(), len(ch.buf))
	}
	bufs := func(l *List) (n int) {
		for _, ch := range l.cs[l.c0:] {
			n += len(ch.buf)
		}
		return n
	}
	assert.Less(t, bufs(c), bufs(l), "the clone has no room for growth")
	c.Set(0, []byte("changed"))
	c.Push(true, []byte("new"))
	c.Push(false, []byte("new"))
	c.Pop(false)
	requireList(t, m, l)
}

// The chunk header is what memSize counts for it.
func TestListChunkHeader(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(listChunk{}), uintptr(48))
}
