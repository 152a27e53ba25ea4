package bus

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func name(c byte) Name {
	var n Name
	copy(n[:], strings.Repeat(string(c), NameLen))
	return n
}

func header(t Type) Header {
	h := Header{Type: t, Port: 7000, CPort: 17000, CurrentEpoch: 7, ConfigEpoch: 3, Offset: 12345,
		Sender: name('a'), ReplicaOf: name('b'), IP: "127.0.0.1", Flags: FlagReplica, State: 1, MFlags: [3]uint8{MFlagPaused, 0, 0}}
	h.Slots.Set(0)
	h.Slots.Set(5460)
	h.Slots.Set(Slots - 1)
	return h
}

// Every type goes out and comes back as it was, at the length Redis
// expects of it.
func TestRoundTrip(t *testing.T) {
	var upd Bitmap
	upd.Set(42)
	for _, m := range []*Message{
		{Header: header(Ping)},
		{Header: header(Pong), Gossip: []Gossip{
			{Name: name('c'), PingSent: 1, PongReceived: 2, IP: "127.0.0.2", Port: 7001, CPort: 17001, Flags: FlagMaster | FlagPFail, PPort: 0},
			{Name: name('d'), IP: "::1", Port: 7002, CPort: 17002, Flags: FlagReplica},
		}, Hostname: "node-1.example"},
		{Header: header(Meet), Hostname: "1234567"}, // hostname and NUL fill 8 bytes exactly
		{Header: header(Fail), About: name('e')},
		{Header: header(Publish), Channel: []byte("ch"), Payload: []byte("hello")},
		{Header: header(PublishShard), Channel: []byte{}, Payload: []byte{}},
		{Header: header(FailoverAuthRequest)},
		{Header: header(FailoverAuthAck)},
		{Header: header(MFStart)},
		{Header: header(Update), UpdateEpoch: 9, UpdateNode: name('f'), UpdateSlots: upd},
		{Header: header(Module), ModuleID: 77, ModuleType: 3, Payload: []byte("payload")},
	} {
		b := m.Append(nil)
		n, err := FrameLen(b[:8], 1<<20)
		require.NoError(t, err, m.Type)
		require.Equal(t, len(b), n, m.Type)
		got, err := Parse(b)
		require.NoError(t, err, m.Type)
		if m.Hostname != "" {
			require.Equal(t, mflagExtData, got.MFlags[0]&mflagExtData, m.Type)
			got.MFlags[0] &^= mflagExtData
		}
		if len(m.Gossip) == 0 && got.Gossip != nil {
			require.Empty(t, got.Gossip)
			got.Gossip = nil
		}
		if len(got.Channel) == 0 && len(m.Channel) == 0 {
			got.Channel, got.Payload = m.Channel, m.Payload
		}
		require.Equal(t, m, got, m.Type)
	}
	// Sizes from cluster.h.
	require.Len(t, (&Message{Header: header(Fail)}).Append(nil), HeaderLen+40)
	require.Len(t, (&Message{Header: header(Update)}).Append(nil), FullLen)
	require.Len(t, (&Message{Header: header(Ping), Gossip: make([]Gossip, 3)}).Append(nil), HeaderLen+3*104)
	require.Len(t, (&Message{Header: header(Ping), Hostname: "12345678"}).Append(nil), HeaderLen+8+16)
}

// What Redis drops is refused, with its warning.
func TestParseRefuses(t *testing.T) {
	ping := (&Message{Header: header(Ping), Gossip: make([]Gossip, 2), Hostname: "host"}).Append(nil)
	set16 := func(b []byte, off int, v uint16) []byte {
		b = bytes.Clone(b)
		binary.BigEndian.PutUint16(b[off:], v)
		return b
	}
	set32 := func(b []byte, off int, v uint32) []byte {
		b = bytes.Clone(b)
		binary.BigEndian.PutUint32(b[off:], v)
		return b
	}
	extAt := HeaderLen + 2*gossipLen
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"short", ping[:HeaderLen-1], "shorter"},
		{"version", set16(ping, offVer, 2), "version"},
		{"count past the end", set16(ping, offCount, 100), "Received invalid ping packet of length 2480 but expected length 12656"},
		{"one gossip too few", set16(ping, offCount, 1), "Received a ping packet without proper padding (0 bytes)"},
		{"extension not padded", set32(ping, extAt, 12), "Received a ping packet without proper padding (12 bytes)"},
		{"extension past the end", set32(ping, extAt, 64), "Received invalid ping packet with extension data that exceeds total packet length (2480)"},
		{"zero-length extension", set32(ping, extAt, 0), "without proper padding (0 bytes)"},
		{"extension header cut", set16(ping[:extAt+4], offExtensions, 1), "exceeds total packet length"},
		{"more extensions than sent", set16(ping, offExtensions, 2), "exceeds total packet length"},
		{"fail too long", append((&Message{Header: header(Fail)}).Append(nil), 0), "Received invalid fail packet of length 2297 but expected length 2296"},
		{"publish lengths", set32((&Message{Header: header(Publish), Channel: []byte("c"), Payload: []byte("m")}).Append(nil), HeaderLen, 1<<31), "expected length"},
		{"update short", (&Message{Header: header(Update)}).Append(nil)[:FullLen-1], "Received invalid update packet"},
		{"auth-req with data", append((&Message{Header: header(FailoverAuthRequest)}).Append(nil), 1, 2, 3), "Received invalid auth-req packet"},
		{"module lengths", set32((&Message{Header: header(Module), Payload: []byte("x")}).Append(nil), HeaderLen+8, 5), "expected length"},
	} {
		_, err := Parse(tc.b)
		require.ErrorContains(t, err, tc.want, tc.name)
	}
	// An unknown type is well formed, as Redis takes it.
	m, err := Parse(set16(ping, offType, 200))
	require.NoError(t, err)
	require.False(t, m.Type.Known())
}

func TestFrameLen(t *testing.T) {
	b := (&Message{Header: header(Fail)}).Append(nil)
	n, err := FrameLen(b, 1<<20)
	require.NoError(t, err)
	require.Equal(t, HeaderLen+40, n)
	for _, bad := range [][]byte{
		[]byte("RCmc\x00\x00\x10\x00"),
		[]byte("RCmb\x00\x00\x00\x10"), // shorter than a header
		[]byte("RCmb\xff\xff\xff\xff"), // past the bound
		[]byte("RCmb"),
	} {
		_, err := FrameLen(bad, 1<<20)
		require.ErrorIs(t, err, ErrBadFrame, "%q", bad)
	}
}

// Random and mangled input never panics Parse.
func TestParseGarbage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	seeds := [][]byte{
		(&Message{Header: header(Pong), Gossip: make([]Gossip, 3), Hostname: "h"}).Append(nil),
		(&Message{Header: header(Publish), Channel: []byte("c"), Payload: []byte("m")}).Append(nil),
		(&Message{Header: header(Module), Payload: []byte("m")}).Append(nil),
		(&Message{Header: header(Update)}).Append(nil),
	}
	for i := 0; i < 20000; i++ {
		b := bytes.Clone(seeds[i%len(seeds)])
		for k := rng.IntN(8); k >= 0; k-- {
			switch rng.IntN(3) {
			case 0:
				b[rng.IntN(len(b))] = byte(rng.Uint32())
			case 1:
				// The counts and lengths that steer the parse.
				off := []int{offCount, offExtensions, offType, HeaderLen, HeaderLen + 4, HeaderLen + 8, len(b) - 8}[rng.IntN(7)]
				if off+1 < len(b) {
					b[off] ^= byte(1 << rng.IntN(8))
					b[off+1] ^= byte(rng.Uint32())
				}
			case 2:
				b = b[:HeaderLen+rng.IntN(len(b)-HeaderLen+1)]
			}
		}
		b[offMflags] |= byte(rng.IntN(2)) * mflagExtData
		Parse(b)
	}
}

// TestBitmapWords checks Count and Next, which read the bitmap a word at
// a time, against the slot-by-slot definition on random bitmaps of every
// density and on the edges (slot 0, the last slot, word boundaries).
func TestBitmapWords(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 40; round++ {
		var b Bitmap
		density := r.IntN(101)
		for s := 0; s < Slots; s++ {
			if r.IntN(100) < density {
				b.Set(s)
			}
		}
		if round%4 == 0 {
			b.Set(0)
			b.Set(Slots - 1)
			b.Set(63)
			b.Clear(64)
		}
		want := 0
		for s := 0; s < Slots; s++ {
			if b.Has(s) {
				want++
			}
		}
		if got := b.Count(); got != want {
			t.Fatalf("Count = %d, want %d", got, want)
		}
		for _, set := range []bool{true, false} {
			next := Slots
			for s := Slots - 1; s >= 0; s-- {
				if b.Has(s) == set {
					next = s
				}
				if got := b.Next(s, set); got != next {
					t.Fatalf("Next(%d, %v) = %d, want %d", s, set, got, next)
				}
			}
			if got := b.Next(Slots, set); got != Slots {
				t.Fatalf("Next(Slots, %v) = %d", set, got)
			}
		}
	}
}
