package rdb

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/keyspace"
)

// streamState is everything persistence keeps of a stream, in the form
// XINFO STREAM key FULL reports it, so that a stream of ours and one of
// redis-server compare field by field.
type streamState struct {
	Length       int64
	RaxKeys      int64 // nodes
	RaxNodes     int64
	LastID       string
	MaxDeletedID string
	EntriesAdded int64
	FirstID      string // recorded-first-entry-id
	Entries      [][]string
	Groups       []groupState
}

type groupState struct {
	Name        string
	LastID      string
	EntriesRead int64  // -1: unknown (a null reply)
	Lag         string // "nil" when unknown
	PEL         []pendingState
	Consumers   []consumerState
}

type pendingState struct {
	ID       string
	Consumer string
	Time     int64
	Count    int64
}

type consumerState struct {
	Name    string
	Seen    int64
	Pending []string
}

// stateOf reads a stream of ours.
func stateOf(s *keyspace.Stream) streamState {
	st := streamState{
		Length: int64(s.Length()), RaxKeys: int64(s.NodeCount()), RaxNodes: int64(s.RaxNodes()),
		LastID: s.LastID.String(), MaxDeletedID: s.MaxDeletedID.String(), EntriesAdded: int64(s.EntriesAdded),
		FirstID: s.FirstID.String(), Entries: [][]string{}, Groups: []groupState{},
	}
	s.Range(keyspace.StreamID{}, keyspace.MaxStreamID, false, func(e *keyspace.StreamEntry) bool {
		row := []string{e.ID.String()}
		for _, x := range e.FV {
			row = append(row, string(x.AppendTo(nil)))
		}
		st.Entries = append(st.Entries, row)
		return true
	})
	s.Groups(func(g *keyspace.StreamGroup) bool {
		gs := groupState{Name: g.Name, LastID: g.LastID.String(), EntriesRead: g.EntriesRead, Lag: "nil",
			PEL: []pendingState{}, Consumers: []consumerState{}}
		if lag, ok := s.Lag(g); ok {
			gs.Lag = strconv.FormatInt(lag, 10)
		}
		g.PendingRange(keyspace.StreamID{}, func(n *keyspace.StreamNACK) bool {
			owner := ""
			if n.Consumer != nil {
				owner = n.Consumer.Name
			}
			gs.PEL = append(gs.PEL, pendingState{n.ID.String(), owner, n.DeliveryTime, int64(n.DeliveryCount)})
			return true
		})
		g.Consumers(func(c *keyspace.StreamConsumer) bool {
			cs := consumerState{Name: c.Name, Seen: c.SeenTime, Pending: []string{}}
			c.PendingRange(keyspace.StreamID{}, func(n *keyspace.StreamNACK) bool {
				cs.Pending = append(cs.Pending, n.ID.String())
				return true
			})
			gs.Consumers = append(gs.Consumers, cs)
			return true
		})
		st.Groups = append(st.Groups, gs)
		return true
	})
	return st
}

// streamBuilder drives a keyspace.Stream as the stream commands do,
// with Redis's default node limits unless set.
type streamBuilder struct {
	s                    *keyspace.Stream
	maxBytes, maxEntries int64
	now                  int64
}

func newStreamBuilder() *streamBuilder {
	return &streamBuilder{s: keyspace.NewStream(), maxBytes: 4096, maxEntries: 100, now: 1700000000000}
}

func (b *streamBuilder) add(ms, seq uint64, fv ...string) {
	b.s.Append(keyspace.StreamID{Ms: ms, Seq: seq}, toBytes(fv), b.maxBytes, b.maxEntries)
}

// del is XDEL of one ID.
func (b *streamBuilder) del(ms, seq uint64) {
	id := keyspace.StreamID{Ms: ms, Seq: seq}
	s := b.s
	if !s.Delete(id) {
		panic("no entry " + id.String())
	}
	if s.MaxDeletedID.Less(id) {
		s.MaxDeletedID = id
	}
	switch {
	case s.Length() == 0:
		s.FirstID = keyspace.StreamID{}
	case id == s.FirstID:
		s.FirstID = s.EdgeID(true, true)
	}
}

// read is XREADGROUP ... COUNT n STREAMS key > for consumer c.
func (b *streamBuilder) read(group, consumer string, n int) {
	g := b.s.Group([]byte(group))
	c := g.Consumer([]byte(consumer))
	if c == nil {
		c = g.CreateConsumer([]byte(consumer), b.now)
	}
	c.SeenTime = b.now
	start, _ := g.LastID.Incr()
	b.s.Range(start, keyspace.MaxStreamID, false, func(e *keyspace.StreamEntry) bool {
		g.AddPending(e.ID, c, b.now)
		g.LastID = e.ID
		n--
		return n > 0
	})
	b.now += 7
}

// testStreams are streams of every shape persistence must keep.
func testStreams() map[string]*keyspace.Stream {
	out := map[string]*keyspace.Stream{}

	b := newStreamBuilder()
	b.add(1, 1, "name", "alice", "age", "30")
	b.add(1, 2, "name", "bob", "age", "-31")
	b.add(2, 0, "other", "9223372036854775807")
	b.add(2, 5, "name", "carol", "age", "x\x00y")
	out["plain"] = b.s

	// Several nodes, tombstones, a node emptied by deletions, entries
	// with the master fields and without.
	b = newStreamBuilder()
	b.maxEntries = 10
	for i := uint64(1); i <= 95; i++ {
		if i%4 == 0 {
			b.add(1000+i, i, "f", strconv.Itoa(int(i)), "extra", "e")
		} else {
			b.add(1000+i, i, "f", strconv.Itoa(int(i)), "g", string(bytes.Repeat([]byte{'v'}, int(i))))
		}
	}
	for i := uint64(1); i <= 10; i++ {
		b.del(1000+i, i) // the whole first node
	}
	for _, i := range []uint64{11, 12, 33, 57, 95} {
		b.del(1000+i, i)
	}
	out["nodes"] = b.s

	// Big values: nodes cut by stream-node-max-bytes, LZF-compressible.
	b = newStreamBuilder()
	for i := uint64(0); i < 12; i++ {
		b.add(5000, i, "blob", string(bytes.Repeat([]byte("0123456789"), 150+int(i)*20)))
	}
	out["big"] = b.s

	// Groups: pending entries over consumers, a consumer without any, a
	// group with an unknown read counter, names that are integers, a
	// pending entry whose entry was deleted.
	b = newStreamBuilder()
	for i := uint64(1); i <= 30; i++ {
		b.add(100, i, "k", strconv.Itoa(int(i)))
	}
	g1 := b.s.CreateGroup([]byte("g1"), keyspace.StreamID{}, 0)
	b.read("g1", "alice", 10)
	b.read("g1", "bob", 5)
	g1.Ack(keyspace.StreamID{Ms: 100, Seq: 3})
	n := g1.Pending(keyspace.StreamID{Ms: 100, Seq: 4})
	g1.Claim(n, g1.Consumer([]byte("bob")))
	n.DeliveryCount = 3
	n.DeliveryTime = 1700000099999
	g1.CreateConsumer([]byte("carol"), 1700000000123)
	b.s.CreateGroup([]byte("123"), keyspace.StreamID{Ms: 100, Seq: 30}, 30)
	b.read("123", "456", 1) // nothing after the last ID: only the consumer
	b.s.CreateGroup([]byte("unknown"), keyspace.StreamID{Ms: 100, Seq: 7}, keyspace.InvalidEntriesRead)
	b.read("unknown", "dave", 2)
	b.del(100, 5) // pending in g1 for alice
	b.del(100, 1)
	out["groups"] = b.s

	// No entries left, groups remain.
	b = newStreamBuilder()
	b.add(5, 5, "a", "b")
	b.s.CreateGroup([]byte("g"), keyspace.StreamID{}, 0)
	b.read("g", "c", 1)
	b.del(5, 5)
	b.s.Group([]byte("g")).CreateConsumer([]byte("idle"), 1700000000001)
	out["empty with groups"] = b.s

	// XGROUP CREATE ... MKSTREAM on nothing: no entry ever.
	s := keyspace.NewStream()
	s.CreateGroup([]byte("g"), keyspace.StreamID{}, 0)
	out["mkstream"] = s

	// XADD MAXLEN 0: a last ID and nothing else.
	b = newStreamBuilder()
	b.add(9, 9, "x", "y")
	b.s.Trim(keyspace.TrimArgs{Strategy: keyspace.TrimMaxLen, MaxLen: 0})
	out["maxlen 0"] = b.s
	return out
}

// streamPayload round-trips s through DUMP/RESTORE.
func restoreStream(t *testing.T, s *keyspace.Stream) *keyspace.Stream {
	t.Helper()
	e, err := Restore(Dump(keyspace.NewObject(s, 0)), DefaultLoadOptions())
	require.NoError(t, err)
	require.Equal(t, keyspace.TypeStream, e.Type())
	return e.Obj().(*keyspace.Stream)
}

func TestStreamRoundTrip(t *testing.T) {
	streams := testStreams()
	require.Greater(t, streams["nodes"].NodeCount(), 5)
	require.Greater(t, streams["big"].NodeCount(), 2)
	for name, s := range streams {
		t.Run(name, func(t *testing.T) {
			want := stateOf(s)
			got := restoreStream(t, s)
			assert.Equal(t, want, stateOf(got))
			// The same bytes again: nodes, IDs, groups, all of it.
			assert.Equal(t, Dump(keyspace.NewObject(s, 0)), Dump(keyspace.NewObject(got, 0)))
			// A loaded stream takes new entries where Redis would.
			got.Append(keyspace.StreamID{Ms: 1 << 50}, toBytes([]string{"new", "1"}), 4096, 100)
			assert.Equal(t, s.Length()+1, got.Length())
		})
	}
	// A file of all of them, with and without compression, a deadline
	// on one.
	for _, opt := range []WriterOptions{{Compress: true, Checksum: true}, {}} {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, opt)
		require.NoError(t, err)
		require.NoError(t, w.SelectDB(0, len(streams), 1))
		keys := sortedKeys(streams)
		for i, k := range keys {
			at := int64(0)
			if i == 0 {
				at = 4102444800000
			}
			require.NoError(t, w.WriteEntry(k, keyspace.NewObject(streams[k], at)))
		}
		require.NoError(t, w.Close())
		var loaded []string
		_, err = Load(bytes.NewReader(buf.Bytes()), DefaultLoadOptions(), func(db int, key string, e *keyspace.Entry) error {
			require.Equal(t, keyspace.TypeStream, e.Type())
			assert.Equal(t, stateOf(streams[key]), stateOf(e.Obj().(*keyspace.Stream)), key)
			if key == keys[0] {
				assert.Equal(t, int64(4102444800000), e.ExpireAt())
			}
			loaded = append(loaded, key)
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, keys, loaded)
	}
}

// TestStreamPayloadLayout checks the bytes of a small stream against the
// layout of rdbSaveObject, field by field.
func TestStreamPayloadLayout(t *testing.T) {
	b := newStreamBuilder()
	b.add(1, 1, "f", "v")
	b.s.CreateGroup([]byte("g"), keyspace.StreamID{}, 0)
	b.read("g", "c", 1)
	var lp []byte
	b.s.Nodes(func(_ keyspace.StreamID, l []byte) bool {
		lp = l
		return true
	})
	id11 := []byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1}
	seen := binary.LittleEndian.AppendUint64(nil, uint64(b.now-7))
	lpEnc := encoder{compress: true}
	lpEnc.writeString(lp)
	var want []byte
	want = append(want, typeStreamListpacks2, 1) // one node
	want = append(want, 16)
	want = append(want, id11...)
	want = append(want, lpEnc.buf...)
	want = append(want, 1, 1, 1, 1, 1, 0, 0, 1) // length, last, first, max deleted, added
	want = append(want, 1, 1, 'g', 1, 1, 0)     // groups; name, last ID, entries read
	want = append(want, 1)                      // the group's PEL
	want = append(want, id11...)
	want = append(want, seen...)
	want = append(want, 1)         // delivery count
	want = append(want, 1, 1, 'c') // consumers, name
	want = append(want, seen...)
	want = append(want, 1) // its PEL
	want = append(want, id11...)
	got := Dump(keyspace.NewObject(b.s, 0))
	assert.Equal(t, want, got[:len(got)-10])
}

// streamBody encodes a type-19 value by hand from its parts, for the
// corruption cases.
type streamBody struct {
	nodes      [][2][]byte // master key, listpack
	length     uint64
	groups     []rawGroup
	noTrailing bool
}

type rawGroup struct {
	name      string
	pel       []uint64 // seqs of IDs 1-seq
	consumers []rawConsumer
}

type rawConsumer struct {
	name string
	pel  []uint64
}

func rawID(seq uint64) []byte {
	k := keyspace.StreamID{Ms: 1, Seq: seq}.Encode()
	return k[:]
}

func (sb streamBody) payload() []byte {
	e := encoder{}
	e.buf = append(e.buf, typeStreamListpacks2)
	e.writeLen(uint64(len(sb.nodes)))
	for _, n := range sb.nodes {
		e.writeString(n[0])
		e.writeString(n[1])
	}
	e.writeLen(sb.length)
	for i := 0; i < 7; i++ {
		e.writeLen(1)
	}
	e.writeLen(uint64(len(sb.groups)))
	for _, g := range sb.groups {
		e.writeString([]byte(g.name))
		e.writeLen(1)
		e.writeLen(1)
		e.writeLen(1)
		e.writeLen(uint64(len(g.pel)))
		for _, s := range g.pel {
			e.buf = append(e.buf, rawID(s)...)
			e.buf = binary.LittleEndian.AppendUint64(e.buf, 5)
			e.writeLen(1)
		}
		e.writeLen(uint64(len(g.consumers)))
		for _, c := range g.consumers {
			e.writeString([]byte(c.name))
			e.buf = binary.LittleEndian.AppendUint64(e.buf, 5)
			e.writeLen(uint64(len(c.pel)))
			for _, s := range c.pel {
				e.buf = append(e.buf, rawID(s)...)
			}
		}
	}
	return appendCRC(append(e.buf, 10, 0))
}

// oneNode is a node of the stream 1-1 f v, 1-2 f v.
func oneNode() [2][]byte {
	b := newStreamBuilder()
	b.add(1, 1, "f", "v")
	b.add(1, 2, "f", "w")
	var n [2][]byte
	b.s.Nodes(func(m keyspace.StreamID, lp []byte) bool {
		k := m.Encode()
		n = [2][]byte{k[:], bytes.Clone(lp)}
		return true
	})
	return n
}

// TestStreamCorruption: what rdbLoadObject refuses is refused, with its
// message, and RESTORE answers Bad data format.
func TestStreamCorruption(t *testing.T) {
	node := oneNode()
	good := streamBody{nodes: [][2][]byte{node}, length: 2, groups: []rawGroup{{name: "g", pel: []uint64{1, 2},
		consumers: []rawConsumer{{name: "a", pel: []uint64{1}}, {name: "b", pel: []uint64{2}}}}}}
	e, err := Restore(good.payload(), DefaultLoadOptions())
	require.NoError(t, err)
	st := stateOf(e.Obj().(*keyspace.Stream))
	require.Len(t, st.Entries, 2)
	require.Equal(t, []pendingState{{"1-1", "a", 5, 1}, {"1-2", "b", 5, 1}}, st.Groups[0].PEL)

	badLP := bytes.Clone(node[1])
	badLP[len(badLP)-2] ^= 0x7f // the last lp-count
	emptyLP := []byte{7, 0, 0, 0, 0, 0, 0xff}
	// A node of the same entries claiming another master: its first
	// entry is not the master entry.
	mod := func(f func(sb *streamBody)) streamBody {
		sb := good
		sb.groups = []rawGroup{{name: "g", pel: []uint64{1, 2},
			consumers: []rawConsumer{{name: "a", pel: []uint64{1}}, {name: "b", pel: []uint64{2}}}}}
		f(&sb)
		return sb
	}
	cases := []struct {
		name string
		body streamBody
		want string
	}{
		{"short node key", mod(func(sb *streamBody) { sb.nodes = [][2][]byte{{node[0][:15], node[1]}} }),
			"Stream node key entry is not the size of a stream ID"},
		{"bad listpack", mod(func(sb *streamBody) { sb.nodes = [][2][]byte{{node[0], badLP}} }),
			"Stream listpack integrity check failed."},
		{"empty listpack", mod(func(sb *streamBody) { sb.nodes = [][2][]byte{{node[0], emptyLP}} }),
			"Stream listpack integrity check failed."},
		{"not a listpack", mod(func(sb *streamBody) { sb.nodes = [][2][]byte{{node[0], []byte("12")}} }),
			"Stream listpack integrity check failed."},
		{"node twice", mod(func(sb *streamBody) { sb.nodes = [][2][]byte{node, node} }),
			"Listpack re-added with existing key"},
		{"length without nodes", mod(func(sb *streamBody) { sb.nodes = nil; sb.groups = nil }),
			"Stream length inconsistent with rax entries"},
		{"group twice", mod(func(sb *streamBody) { sb.groups = append(sb.groups, rawGroup{name: "g"}) }),
			"Duplicated consumer group name g"},
		{"PEL entry twice", mod(func(sb *streamBody) { sb.groups[0].pel = []uint64{1, 2, 1} }),
			"Duplicated global PEL entry loading stream consumer group"},
		{"consumer twice", mod(func(sb *streamBody) {
			sb.groups[0].consumers = append(sb.groups[0].consumers, rawConsumer{name: "a"})
		}), "Duplicate stream consumer detected."},
		{"consumer entry not in group PEL", mod(func(sb *streamBody) { sb.groups[0].consumers[0].pel = []uint64{1, 3} }),
			"Consumer entry not found in group global PEL"},
		{"consumer entry twice", mod(func(sb *streamBody) { sb.groups[0].consumers[0].pel = []uint64{1, 1} }),
			"Duplicated consumer PEL entry  loading a stream consumer group"},
		{"PEL entry without consumer", mod(func(sb *streamBody) { sb.groups[0].consumers[1].pel = nil }),
			"Stream CG PEL entry without consumer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.body.payload()
			_, err := Restore(p, DefaultLoadOptions())
			assert.ErrorIs(t, err, ErrBadDataFormat)
			file := append([]byte("REDIS0010"), p[:len(p)-10]...)
			file = append(file[:9], append([]byte{typeStreamListpacks2, 1, 'k'}, file[10:]...)...)
			file = append(file, opEOF)
			file = append(file, make([]byte, 8)...)
			_, err = loadBytes(file)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}

	// Redis loads nodes in any order (the rax sorts them), and gives an
	// entry two consumers list to the last.
	b := newStreamBuilder()
	b.maxEntries = 1
	b.add(1, 1, "f", "v")
	b.add(1, 2, "f", "w")
	var nodes [][2][]byte
	b.s.Nodes(func(m keyspace.StreamID, lp []byte) bool {
		k := m.Encode()
		nodes = append([][2][]byte{{k[:], lp}}, nodes...)
		return true
	})
	twice := mod(func(sb *streamBody) {
		sb.nodes = nodes
		sb.groups[0].consumers[0].pel = []uint64{1, 2}
	})
	e, err = Restore(twice.payload(), DefaultLoadOptions())
	require.NoError(t, err)
	st = stateOf(e.Obj().(*keyspace.Stream))
	assert.Equal(t, [][]string{{"1-1", "f", "v"}, {"1-2", "f", "w"}}, st.Entries)
	assert.Equal(t, []pendingState{{"1-1", "a", 5, 1}, {"1-2", "b", 5, 1}}, st.Groups[0].PEL)
	assert.Equal(t, []consumerState{{"a", 5, []string{"1-1"}}, {"b", 5, []string{"1-2"}}}, st.Groups[0].Consumers)
}

// TestStreamTruncatedAndFlipped: every cut of a stream payload fails,
// and no changed byte panics.
func TestStreamTruncatedAndFlipped(t *testing.T) {
	for name, s := range testStreams() {
		p := Dump(keyspace.NewObject(s, 0))
		body := p[:len(p)-10]
		for cut := 0; cut < len(body); cut++ {
			_, err := Restore(appendCRC(append(bytes.Clone(body[:cut]), 10, 0)), DefaultLoadOptions())
			assert.Error(t, err, "%s cut at %d", name, cut)
		}
		if len(body) > 3000 {
			continue
		}
		for i := 1; i < len(body); i++ {
			for _, x := range []byte{0x01, 0x80, 0xFF} {
				c := bytes.Clone(body)
				c[i] ^= x
				e, err := Restore(appendCRC(append(c, 10, 0)), DefaultLoadOptions())
				if err == nil {
					// Whatever loads can be read and saved again.
					stateOf(e.Obj().(*keyspace.Stream))
					_, err = Restore(Dump(e), DefaultLoadOptions())
					assert.NoError(t, err, "%s flip 0x%02x at %d", name, x, i)
				}
			}
		}
	}
}

// writeStreamV1 writes s as Redis 5 to 6.2 did (STREAM_LISTPACKS, type
// 15): no first ID, tombstone ID, entries-added nor read counters.
func writeStreamV1(e *encoder, s *keyspace.Stream) {
	e.writeLen(uint64(s.NodeCount()))
	s.Nodes(func(master keyspace.StreamID, lp []byte) bool {
		k := master.Encode()
		e.writeString(k[:])
		e.writeString(lp)
		return true
	})
	e.writeLen(s.Length())
	e.writeID(s.LastID)
	e.writeLen(uint64(s.GroupCount()))
	s.Groups(func(g *keyspace.StreamGroup) bool {
		e.writeStringFromString(g.Name)
		e.writeID(g.LastID)
		e.writeLen(uint64(g.PendingCount()))
		g.PendingRange(keyspace.StreamID{}, func(n *keyspace.StreamNACK) bool {
			e.writeRawID(n.ID)
			e.buf = binary.LittleEndian.AppendUint64(e.buf, uint64(n.DeliveryTime))
			e.writeLen(n.DeliveryCount)
			return true
		})
		e.writeLen(uint64(g.ConsumerCount()))
		g.Consumers(func(c *keyspace.StreamConsumer) bool {
			e.writeStringFromString(c.Name)
			e.buf = binary.LittleEndian.AppendUint64(e.buf, uint64(c.SeenTime))
			e.writeLen(uint64(c.PendingCount()))
			c.PendingRange(keyspace.StreamID{}, func(n *keyspace.StreamNACK) bool {
				e.writeRawID(n.ID)
				return true
			})
			return true
		})
		return true
	})
}

// streamsV1File is an RDB file of version 9 (Redis 6.2) with the
// streams as type 15.
func streamsV1File(streams map[string]*keyspace.Stream) []byte {
	e := encoder{}
	e.buf = append(e.buf, "REDIS0009"...)
	e.buf = append(e.buf, opSelectDB, 0)
	for _, k := range sortedKeys(streams) {
		e.buf = append(e.buf, typeStreamListpacks)
		e.writeString([]byte(k))
		writeStreamV1(&e, streams[k])
	}
	e.buf = append(e.buf, opEOF)
	return binary.LittleEndian.AppendUint64(e.buf, CRC64(e.buf))
}

// TestLoadStreamV1 loads streams of Redis 6.2's format: the 7.0 fields
// are derived as rdbLoadObject derives them.
func TestLoadStreamV1(t *testing.T) {
	streams := testStreams()
	got := map[string]*keyspace.Stream{}
	_, err := Load(bytes.NewReader(streamsV1File(streams)), DefaultLoadOptions(), func(_ int, k string, e *keyspace.Entry) error {
		got[k] = e.Obj().(*keyspace.Stream)
		return nil
	})
	require.NoError(t, err)
	require.Len(t, got, len(streams))
	for k, s := range streams {
		g := got[k]
		want := stateOf(s)
		have := stateOf(g)
		assert.Equal(t, want.Entries, have.Entries, k)
		assert.Equal(t, want.LastID, have.LastID, k)
		assert.Equal(t, s.Length(), g.EntriesAdded, k)
		assert.Equal(t, "0-0", have.MaxDeletedID, k)
		if s.Length() == 0 {
			assert.Equal(t, keyspace.MaxStreamID, g.FirstID, k) // streamGetEdgeID of nothing
		} else {
			assert.Equal(t, want.Entries[0][0], have.FirstID, k)
		}
		for i, gs := range have.Groups {
			assert.Equal(t, want.Groups[i].PEL, gs.PEL, k)
			assert.Equal(t, want.Groups[i].Consumers, gs.Consumers, k)
			assert.Equal(t, g.EstimateDistance(g.Group([]byte(gs.Name)).LastID), gs.EntriesRead, k)
		}
	}
	assert.Equal(t, int64(0), got["mkstream"].Group([]byte("g")).EntriesRead)
	assert.Equal(t, fmt.Sprint(keyspace.InvalidEntriesRead), fmt.Sprint(got["nodes"].EstimateDistance(keyspace.StreamID{Ms: 1050})))
}
