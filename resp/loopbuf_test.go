package resp

import (
	"errors"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var errNoInput = errors.New("no input this turn")

// turnReader hands out its input a chunk per turn of a simulated loop.
type turnReader struct {
	data  []byte
	chunk int
	left  int // what this turn may still read
}

func (t *turnReader) Read(p []byte) (int, error) {
	if t.left == 0 || len(t.data) == 0 {
		return 0, errNoInput
	}
	n := copy(p[:min(len(p), t.left)], t.data)
	t.data, t.left = t.data[n:], t.left-n
	return n, nil
}

// TestLoopBuffersShared runs readers that share one loop's buffer, as a
// loop's connections do, in turns: each turn one reader reads a random
// piece of its pipelines and gives the buffer back, and now and then one
// keeps its batch past its turn (a blocked command, a paused client)
// while the others read. Every command must arrive whole and unchanged,
// including the kept batches, checked after the others' turns.
func TestLoopBuffersShared(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	lb := NewLoopBuffers()
	type client struct {
		src   *turnReader
		rd    *Reader
		want  cmds
		got   cmds
		batch [][][]byte
		kept  cmds // the batch kept past its turn, as it was read
	}
	clients := make([]*client, 8)
	for i := range clients {
		c := &client{src: &turnReader{}}
		for n := rng.Intn(200); n >= 0; n-- {
			args := make([]string, 1+rng.Intn(4))
			for j := range args {
				size := rng.Intn(60)
				if rng.Intn(40) == 0 {
					size = BigArg + rng.Intn(BigArg) // an argument of its own
				} else if rng.Intn(20) == 0 {
					size = 3000 + rng.Intn(9000) // a pipeline past the buffer
				}
				args[j] = strings.Repeat(string(rune('a'+rng.Intn(26))), size)
			}
			c.src.data = append(c.src.data, mb(args...)...)
			c.want = append(c.want, args)
		}
		c.rd = NewReader(c.src, Limits{})
		c.rd.UseLoop(lb)
		clients[i] = c
	}
	asStrings := func(b [][][]byte) cmds {
		var out cmds
		for _, cmd := range b {
			c := make([]string, len(cmd))
			for j, a := range cmd {
				c[j] = string(a)
			}
			out = append(out, c)
		}
		return out
	}
	for turn := 0; turn < 100000; turn++ {
		c := clients[rng.Intn(len(clients))]
		if c.kept != nil {
			// Its batch was in use while the others read.
			require.Equal(t, c.kept, asStrings(c.batch), "a kept batch changed")
			c.got = append(c.got, c.kept...)
			c.kept = nil
			c.rd.DoneWithShared()
			continue
		}
		c.src.left = 1 + rng.Intn(40000)
		for {
			var err error
			c.batch, err = c.rd.ReadBatch(c.batch[:0])
			if len(c.batch) == 0 {
				require.ErrorIs(t, err, errNoInput)
				break
			}
			if rng.Intn(10) == 0 {
				c.rd.KeepShared()
				c.kept = asStrings(c.batch)
				break
			}
			c.got = append(c.got, asStrings(c.batch)...)
		}
		if c.kept == nil {
			c.rd.DoneWithShared()
		}
		done := true
		for _, c := range clients {
			done = done && len(c.src.data) == 0 && c.kept == nil
		}
		if done {
			break
		}
	}
	for i, c := range clients {
		require.Equal(t, len(c.want), len(c.got), "client %d", i)
		require.Equal(t, c.want, c.got, "client %d", i)
	}
	require.LessOrEqual(t, len(lb.spares), maxSpareBufs)
}

// TestLoopBuffersIdleReader: a reader that ran all it read holds no
// buffer once it gave the loop's back, and the next reader reads into
// that same buffer.
func TestLoopBuffersIdleReader(t *testing.T) {
	lb := NewLoopBuffers()
	a := NewReader(&turnReader{data: []byte(mb("PING")), left: 100}, Limits{})
	b := NewReader(&turnReader{data: []byte(mb("ECHO", "x")), left: 100}, Limits{})
	a.UseLoop(lb)
	b.UseLoop(lb)
	batch, err := a.ReadBatch(nil)
	require.NoError(t, err)
	require.Equal(t, "PING", string(batch[0][0]))
	shared := &a.buf[0]
	a.DoneWithShared()
	require.Nil(t, a.buf)
	require.EqualValues(t, QueryBufSize, a.Allocated(), "CLIENT LIST shows Redis's buffer until the idle release")
	batch, err = b.ReadBatch(nil)
	require.NoError(t, err)
	require.Equal(t, "ECHO", string(batch[0][0]))
	require.Same(t, shared, &b.buf[0])
	b.DoneWithShared()
	require.True(t, a.Release(nil))
	require.Zero(t, a.Allocated())
}
