package keyspace

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

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
		if rng.IntN(50) == 0 {
			v += strings.Repeat("x", 3000) // fills chunks by bytes
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
// queue's read side.
func BenchmarkListLPop(b *testing.B) {
	l := NewList()
	for i := 0; i < b.N; i++ {
		l.Push(false, benchListValue)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
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
		require.LessOrEqual(t, len(c.ends), listChunkElems)
	}
	require.Equal(t, l.n, total)
	for _, c := range l.cs[:l.c0] {
		require.Nil(t, c)
	}
}

func TestListChunking(t *testing.T) {
	l := NewList()
	for i := 0; i < 5000; i++ {
		l.Push(i%3 != 0, []byte(fmt.Sprint(i)))
	}
	checkListInvariants(t, l)
	require.Greater(t, len(l.cs)-l.c0, 5000/listChunkElems)
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
