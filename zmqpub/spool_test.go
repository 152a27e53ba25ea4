package zmqpub

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

const spoolTestMessages = 10

// writeSpool leaves at path a spool holding testMessage(0..n-1), written
// by Close from memory.
func writeSpool(t *testing.T, path string, n int) {
	t.Helper()
	o, err := OpenOutbox(OutboxConfig{HWM: n, SpoolPath: path, SpoolMaxBytes: 1 << 30})
	require.NoError(t, err)
	for i := range n {
		o.Put(testMessage(i))
	}
	require.NoError(t, o.Close())
}

// recordOffset is where record k of a spool written by writeSpool starts.
func recordOffset(k int) int64 {
	off := int64(spoolHeaderSize)
	for j := range k {
		m := testMessage(j)
		off += int64(recordOverhead + m.Size())
	}
	return off
}

func editFile(t *testing.T, path string, edit func([]byte) []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, edit(data), 0o600))
}

// requireReplay opens the spool at path, checks that it replays
// testMessage(0..want-1) and that a message Put afterwards follows them
// (the file was cut at its last good record), and returns the log.
func requireReplay(t *testing.T, path string, want int) *logRecorder {
	t.Helper()
	logs := &logRecorder{}
	o := openTestOutbox(t, OutboxConfig{HWM: 100, SpoolPath: path, SpoolMaxBytes: 1 << 30, Logf: logs.logf})
	require.Equal(t, int64(want), held(o.Stats()))
	o.Put(testMessage(want))
	requireSequence(t, 0, takeN(t, o, want+1))
	requireEmpty(t, o)
	return logs
}

func TestSpoolWrittenAsDocumented(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool")
	writeSpool(t, path, 2)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, recordOffset(2), int64(len(data)))
	require.Equal(t, spoolMagic, string(data[:8]))
	require.Equal(t, uint32(spoolVersion), binary.LittleEndian.Uint32(data[8:]))
	require.Equal(t, uint64(spoolHeaderSize), binary.LittleEndian.Uint64(data[16:]))

	rec := data[recordOffset(1):]
	m := testMessage(1)
	bodyLen := binary.LittleEndian.Uint32(rec)
	require.Equal(t, uint32(recordFixedBody+m.Size()), bodyLen)
	require.Equal(t, crc32.Checksum(rec[8:8+bodyLen], crcTable), binary.LittleEndian.Uint32(rec[4:]))
	require.Equal(t, uint64(1), binary.LittleEndian.Uint64(rec[8:]), "deadline")
	require.Equal(t, uint64(0), binary.LittleEndian.Uint64(rec[16:]), "sequence")
	for k, f := range m.Frames {
		require.Equal(t, uint32(len(f)), binary.LittleEndian.Uint32(rec[24+4*k:]))
	}
	require.Equal(t, uint32(0), binary.LittleEndian.Uint32(rec[36:]), "no id")
	require.Equal(t, string(m.Frames[0])+string(m.Frames[1])+string(m.Frames[2]), string(rec[40:]))
}

// A message's journal sequence and id travel through the spool.
func TestSpoolKeepsSequenceAndID(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool")
	o := openTestOutbox(t, OutboxConfig{HWM: 1, SpoolPath: path, SpoolMaxBytes: 1 << 30})
	for i := range 3 {
		m := testMessage(i)
		m.Seq = uint64(100 + i)
		m.ID = AppendMessageID(nil, int64(i), m.Frames[0], m.Frames[1])
		o.Put(m)
	}
	require.NoError(t, o.Close())
	o = openTestOutbox(t, OutboxConfig{HWM: 100, SpoolPath: path, SpoolMaxBytes: 1 << 30})
	for i, m := range takeN(t, o, 3) {
		require.Equal(t, uint64(100+i), m.Seq)
		require.Equal(t, AppendMessageID(nil, int64(i), m.Frames[0], m.Frames[1]), m.ID)
	}
}

// A version 1 spool (no sequence, no id) left by an older zredis is
// converted when opened and replayed whole, in order.
func TestSpoolVersion1IsConverted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool")
	hdr := spoolHeader(spoolHeaderSize)
	binary.LittleEndian.PutUint32(hdr[8:], 1)
	data := hdr
	for i := range spoolTestMessages {
		m := testMessage(i)
		body := binary.LittleEndian.AppendUint64(nil, uint64(m.Deadline))
		for _, f := range m.Frames {
			body = binary.LittleEndian.AppendUint32(body, uint32(len(f)))
		}
		for _, f := range m.Frames {
			body = append(body, f...)
		}
		data = binary.LittleEndian.AppendUint32(data, uint32(len(body)))
		data = binary.LittleEndian.AppendUint32(data, crc32.Checksum(body, crcTable))
		data = append(data, body...)
	}
	require.NoError(t, os.WriteFile(path, data, 0o600))
	requireReplay(t, path, spoolTestMessages)
	converted, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, uint32(spoolVersion), binary.LittleEndian.Uint32(converted[8:]))
}

func TestSpoolTornTail(t *testing.T) {
	last := recordOffset(spoolTestMessages - 1)
	tests := []struct {
		name string
		edit func([]byte) []byte
		want int
	}{
		{"last byte cut", func(b []byte) []byte { return b[:len(b)-1] }, spoolTestMessages - 1},
		{"cut inside the record header", func(b []byte) []byte { return b[:last+5] }, spoolTestMessages - 1},
		{"cut after the fixed fields", func(b []byte) []byte { return b[:last+recordOverhead+1] }, spoolTestMessages - 1},
		{"checksum of the last record", func(b []byte) []byte { b[len(b)-1] ^= 0xff; return b }, spoolTestMessages - 1},
		{"partial record appended", func(b []byte) []byte { return append(b, 0x10, 0, 0) }, spoolTestMessages},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "spool")
			writeSpool(t, path, spoolTestMessages)
			editFile(t, path, tt.edit)
			logs := requireReplay(t, path, tt.want)
			require.NotEmpty(t, logs.matching("torn last record"))
		})
	}
}

func TestSpoolCorruptRecordStopsReplay(t *testing.T) {
	const bad = 5
	at := recordOffset(bad)
	tests := []struct {
		name string
		edit func([]byte)
		log  string
	}{
		{"body byte flipped", func(b []byte) { b[at+recordOverhead+2] ^= 0x01 }, "corrupt record at offset"},
		{"deadline flipped", func(b []byte) { b[at+8] ^= 0x80 }, "checksum mismatch"},
		{"length below the fixed fields", func(b []byte) { binary.LittleEndian.PutUint32(b[at:], 3) }, "body length too small"},
		{"length past the end of the file", func(b []byte) { binary.LittleEndian.PutUint32(b[at:], 0xffffffff) }, "claims"},
		{"frame lengths that do not add up", func(b []byte) {
			binary.LittleEndian.PutUint32(b[at+24:], 1<<30)
			bodyLen := binary.LittleEndian.Uint32(b[at:])
			binary.LittleEndian.PutUint32(b[at+4:], crc32.Checksum(b[at+8:at+8+int64(bodyLen)], crcTable))
		}, "do not add up"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "spool")
			writeSpool(t, path, spoolTestMessages)
			editFile(t, path, func(b []byte) []byte { tt.edit(b); return b })
			logs := requireReplay(t, path, bad)
			require.NotEmpty(t, logs.matching(tt.log))
		})
	}
}

func TestSpoolHeader(t *testing.T) {
	tests := []struct {
		name    string
		content func(valid []byte) []byte
		want    int
		log     string
		err     string
	}{
		{"empty file", func([]byte) []byte { return nil }, 0, "", ""},
		{"torn header", func([]byte) []byte { return []byte(spoolMagic[:5]) }, 0, "torn header", ""},
		{"bad head checksum", func(b []byte) []byte { b[24] ^= 0xff; return b }, spoolTestMessages, "bad head offset", ""},
		{"head past the end", func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[16:], 1<<40)
			binary.LittleEndian.PutUint32(b[24:], crc32.Checksum(b[16:24], crcTable))
			return b
		}, spoolTestMessages, "bad head offset", ""},
		{"unknown version", func(b []byte) []byte { b[8] = 99; return b }, 0, "", "unsupported version 99"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "spool")
			writeSpool(t, path, spoolTestMessages)
			editFile(t, path, tt.content)
			if tt.err != "" {
				_, err := OpenOutbox(OutboxConfig{HWM: 10, SpoolPath: path, SpoolMaxBytes: 1 << 20})
				require.ErrorContains(t, err, tt.err)
				return
			}
			logs := requireReplay(t, path, tt.want)
			if tt.log != "" {
				require.NotEmpty(t, logs.matching(tt.log))
			}
		})
	}
}

func TestSpoolCompactsDeliveredPrefix(t *testing.T) {
	saved := spoolCompactAtHead
	spoolCompactAtHead = 16 << 10
	t.Cleanup(func() { spoolCompactAtHead = saved })

	const total = 1000
	path := filepath.Join(t.TempDir(), "spool")
	o := openTestOutbox(t, OutboxConfig{HWM: 10, SpoolPath: path, SpoolMaxBytes: 1 << 30})
	for i := range total {
		o.Put(testMessage(i))
	}
	requireSequence(t, 0, takeN(t, o, 600))
	// The refills that brought message 599 into memory compacted the file
	// once its delivered prefix outgrew the unread rest.
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Less(t, info.Size(), recordOffset(total)-recordOffset(500))

	requireSequence(t, 600, takeN(t, o, total-600))
	requireEmpty(t, o)
}

func TestSpoolRecordsLargerThanAReadChunk(t *testing.T) {
	sizes := []int{20, spoolReadChunk + 5, 20, 3 * spoolReadChunk, spoolReadChunk - recordOverhead, 20}
	path := filepath.Join(t.TempDir(), "spool")
	o := openTestOutbox(t, OutboxConfig{HWM: 1, SpoolPath: path, SpoolMaxBytes: 1 << 30})
	want := make([]Message, len(sizes))
	for i, size := range sizes {
		want[i] = fixedMessage(i, size)
		for j := range want[i].Frames[2] {
			want[i].Frames[2][j] = byte(i * j)
		}
		o.Put(want[i])
	}
	require.Equal(t, int64(len(sizes)-1), o.Stats().SpilledTotal)
	got := takeN(t, o, len(sizes))
	for i := range want {
		requireSameMessage(t, want[i], got[i])
	}
	requireEmpty(t, o)
}

func TestSpoolRandomDamageReplaysAPrefix(t *testing.T) {
	dir := t.TempDir()
	pristine := filepath.Join(dir, "pristine")
	writeSpool(t, pristine, spoolTestMessages)
	valid, err := os.ReadFile(pristine)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		damaged := append([]byte(nil), valid...)
		firstDamage := int64(len(damaged))
		switch round % 3 {
		case 0: // flip bits in one byte past the header
			at := spoolHeaderSize + rng.IntN(len(damaged)-spoolHeaderSize)
			damaged[at] ^= byte(1 + rng.IntN(255))
			firstDamage = int64(at)
		case 1: // cut the file short
			at := spoolHeaderSize + rng.IntN(len(damaged)-spoolHeaderSize)
			damaged = damaged[:at]
			firstDamage = int64(at)
		case 2: // overwrite a run of bytes with noise
			at := spoolHeaderSize + rng.IntN(len(damaged)-spoolHeaderSize)
			end := min(len(damaged), at+1+rng.IntN(64))
			for i := at; i < end; i++ {
				damaged[i] = byte(rng.Uint32())
			}
			firstDamage = int64(at)
		}
		// Records wholly before the damage must all come back.
		intact := 0
		for intact < spoolTestMessages && recordOffset(intact+1) <= firstDamage {
			intact++
		}
		path := filepath.Join(dir, fmt.Sprintf("spool-%d", round))
		require.NoError(t, os.WriteFile(path, damaged, 0o600))
		o, err := OpenOutbox(OutboxConfig{HWM: 100, SpoolPath: path, SpoolMaxBytes: 1 << 30})
		require.NoError(t, err)
		n := int(held(o.Stats()))
		require.GreaterOrEqual(t, n, intact, "round %d", round)
		require.LessOrEqual(t, n, spoolTestMessages, "round %d", round)
		requireSequence(t, 0, takeN(t, o, n))
		require.NoError(t, o.Close())
	}
}

// FuzzSpoolOpen feeds arbitrary bytes after a valid header: opening and
// draining must never panic, and whatever replays must be whole records.
func FuzzSpoolOpen(f *testing.F) {
	dir := f.TempDir()
	pristine := filepath.Join(dir, "pristine")
	o, err := OpenOutbox(OutboxConfig{HWM: 10, SpoolPath: pristine, SpoolMaxBytes: 1 << 20})
	require.NoError(f, err)
	for i := range 3 {
		o.Put(fixedMessage(i, 40))
	}
	require.NoError(f, o.Close())
	valid, err := os.ReadFile(pristine)
	require.NoError(f, err)
	f.Add(valid[spoolHeaderSize:])
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, records []byte) {
		path := filepath.Join(t.TempDir(), "spool")
		require.NoError(t, os.WriteFile(path, append(spoolHeader(spoolHeaderSize), records...), 0o600))
		o, err := OpenOutbox(OutboxConfig{HWM: 10, SpoolPath: path, SpoolMaxBytes: 1 << 20})
		require.NoError(t, err)
		defer o.Close()
		st := o.Stats()
		heldBytes := st.QueuedBytes + st.SpooledBytes
		require.LessOrEqual(t, heldBytes, int64(len(records)))
		got := takeN(t, o, int(held(st)))
		var total int64
		for i := range got {
			total += int64(got[i].Size())
		}
		require.Equal(t, heldBytes, total)
	})
}

// The messages a journal holds leave the spool; the others stay, in order.
func TestDropJournaledFromSpool(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool")
	n, err := DropJournaledFromSpool(path, nil)
	require.NoError(t, err)
	require.Zero(t, n, "no spool")
	o := openTestOutbox(t, OutboxConfig{HWM: 1, SpoolPath: path, SpoolMaxBytes: 1 << 30})
	for i := range 10 {
		m := testMessage(i)
		if i%2 == 1 {
			m.Seq = uint64(i)
		}
		o.Put(m)
	}
	require.NoError(t, o.Close())
	n, err = DropJournaledFromSpool(path, nil)
	require.NoError(t, err)
	require.Equal(t, int64(5), n)
	o = openTestOutbox(t, OutboxConfig{HWM: 100, SpoolPath: path, SpoolMaxBytes: 1 << 30})
	got := takeN(t, o, 5)
	for k, m := range got {
		requireSameMessage(t, testMessage(2*k), m)
	}
	requireEmpty(t, o)
}
