package keyspace

import (
	"bytes"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// A stream under random appends (values of 1 byte to 3 KB, so that tails
// outgrow the chunk's room and nodes close on bytes as well as on
// entries), XDEL, exact and approximate trims and clones agrees with a
// plain list of its entries at every step checked, and a clone keeps
// what it held whatever happens to the stream it was taken from.
func TestStreamAgainstModel(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { streamModelRun(t, seed) })
	}
}

type modelEntry struct {
	id    StreamID
	value []byte
}

func streamModelRun(t *testing.T, seed int64) {
	rng := rand.New(rand.NewSource(seed))
	// Small nodes, so that the stream packs them (streamPackMinNodes)
	// within the run.
	maxBytes := []int64{0, 4096, 1024}[seed%3]
	maxEntries := []int64{7, 10, 0}[seed%3]
	s := NewStream()
	var model []modelEntry
	type snapshot struct {
		s     *Stream
		model []modelEntry
	}
	var clones []snapshot
	next := StreamID{Ms: 1}
	packed := false
	check := func(st *Stream, want []modelEntry) {
		t.Helper()
		i := 0
		st.Range(StreamID{}, MaxStreamID, false, func(e *StreamEntry) bool {
			require.Less(t, i, len(want), "more entries than the model")
			require.Equal(t, want[i].id, e.ID)
			require.True(t, bytes.Equal(want[i].value, e.FV[1].Bytes()), "value of %v", e.ID)
			i++
			return true
		})
		require.Equal(t, len(want), i)
		require.Equal(t, uint64(len(want)), st.Length())
	}
	for step := 0; step < 40000; step++ {
		switch r := rng.Intn(100); {
		case r < 80:
			size := 1 + rng.Intn(40)
			if rng.Intn(20) == 0 {
				size = 500 + rng.Intn(2500)
			}
			v := bytes.Repeat([]byte{byte('a' + step%26)}, size)
			s.Append(next, [][]byte{[]byte("f"), v}, maxBytes, maxEntries)
			model = append(model, modelEntry{next, v})
			next.Seq++
			if rng.Intn(3) == 0 {
				next = StreamID{Ms: next.Ms + 1}
			}
		case r < 92 && len(model) > 0:
			i := rng.Intn(len(model))
			require.True(t, s.Delete(model[i].id))
			model = slices.Delete(model, i, i+1)
		case r < 93:
			// Mostly a little from the head, now and then most of it.
			keep := int64(len(model) - rng.Intn(len(model)/8+1))
			if rng.Intn(10) == 0 {
				keep = int64(rng.Intn(len(model) + 1))
			}
			approx := rng.Intn(2) == 0
			removed := s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: keep, Approx: approx})
			model = model[removed:]
			if !approx {
				require.LessOrEqual(t, int64(len(model)), keep)
			}
		case r < 94 && len(clones) < 8:
			clones = append(clones, snapshot{s.Clone().(*Stream), slices.Clone(model)})
		case r >= 99:
			check(s, model)
		}
		packed = packed || s.NodeCount() > streamPackMinNodes && s.chunk != nil
	}
	require.True(t, packed, "the stream grew to packing its nodes")
	check(s, model)
	for _, c := range clones {
		check(c.s, c.model)
	}
}
