package expiry

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/zmqpub"
)

func TestMessageTypeOfStream(t *testing.T) {
	code, ok := messageType(keyspace.TypeStream)
	require.True(t, ok)
	assert.Equal(t, zmqpub.TypeStream, code)
	assert.Equal(t, zmqpub.Type(5), code)
}

// A stream's entries go out in ID order with their own fields, the
// deleted one left out, integers as XRANGE writes them, whatever the
// nodes' layout.
func TestStreamEntries(t *testing.T) {
	for _, maxEntries := range []int64{0, 2} { // one node; a node per two entries
		t.Run("node-max-entries="+strconv.Itoa(int(maxEntries)), func(t *testing.T) {
			s := keyspace.NewStream()
			add := func(ms, seq uint64, fv ...string) {
				var b [][]byte
				for _, x := range fv {
					b = append(b, []byte(x))
				}
				s.Append(keyspace.StreamID{Ms: ms, Seq: seq}, b, 4096, maxEntries)
			}
			add(1700000000000, 0, "type", "mail", "to", "a@example.org")
			add(1700000000000, 1, "type", "mail", "to", "gone@example.org")
			add(1700000000000, 2, "type", "mail", "to", "b@example.org") // the master's fields
			add(1700000000005, 0, "n", "-12", "n", "007", "bin", "\x00\xff")
			add(1700000000005, 1, "empty", "")
			require.True(t, s.Delete(keyspace.StreamID{Ms: 1700000000000, Seq: 1}))

			got := streamEntries(s)
			want := []zmqpub.StreamEntry{
				{ID: []byte("1700000000000-0"), Fields: bs("type", "mail", "to", "a@example.org")},
				{ID: []byte("1700000000000-2"), Fields: bs("type", "mail", "to", "b@example.org")},
				{ID: []byte("1700000000005-0"), Fields: bs("n", "-12", "n", "007", "bin", "\x00\xff")},
				{ID: []byte("1700000000005-1"), Fields: bs("empty", "")},
			}
			assert.Equal(t, want, got)
			for _, e := range got {
				assert.Equal(t, len(e.ID), cap(e.ID), "an ID is capped")
				assert.Equal(t, len(e.Fields), cap(e.Fields), "an entry's fields are capped")
			}

			frames := zmqpub.EncodeStream(3, []byte("events"), got)
			d, err := zmqpub.Decode(frames[:])
			require.NoError(t, err)
			assert.Equal(t, zmqpub.Decoded{DB: 3, Type: zmqpub.TypeStream, Key: []byte("events"), Entries: want}, d)
		})
	}
}

func TestStreamEntriesOfAnEmptyStream(t *testing.T) {
	s := keyspace.NewStream()
	assert.Empty(t, streamEntries(s))
	s.Append(keyspace.StreamID{Ms: 1}, bs("f", "v"), 4096, 0)
	require.True(t, s.Delete(keyspace.StreamID{Ms: 1}))
	got := streamEntries(s)
	assert.Empty(t, got)
	frames := zmqpub.EncodeStream(0, []byte("s"), got)
	assert.Equal(t, []byte{0, 0, 0, 0}, frames[2])
}

func bs(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}
