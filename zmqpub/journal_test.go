package zmqpub

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// openTestJournal opens the journal in dir, attached, and returns what it
// replayed.
func openTestJournal(t *testing.T, dir string, logs *logRecorder) (*Journal, []Message) {
	t.Helper()
	var replayed []Message
	logf := func(string, ...any) {}
	if logs != nil {
		logf = logs.logf
	}
	j, count, _, err := OpenJournal(dir, logf, func(m Message) { replayed = append(replayed, m) })
	require.NoError(t, err)
	require.Equal(t, int64(len(replayed)), count)
	j.Attach(true)
	t.Cleanup(func() { j.Close() })
	return j, replayed
}

// addN adds testMessage(from..from+n-1) and returns them with their
// sequence numbers.
func addN(j *Journal, from, n int) []Message {
	var out []Message
	for i := from; i < from+n; i++ {
		m := testMessage(i)
		if i%3 == 0 {
			m.ID = AppendMessageID(nil, int64(i), m.Frames[0], m.Frames[1])
		}
		j.Add(&m)
		out = append(out, m)
	}
	return out
}

func requireReplayed(t *testing.T, want, got []Message) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		requireSameMessage(t, want[i], got[i])
		require.Equal(t, want[i].Seq, got[i].Seq)
		require.Equal(t, string(want[i].ID), string(got[i].ID))
	}
}

// What was committed and not handed comes back, in order, after the
// watermark; what was handed does not; sequence numbers go on.
func TestJournalReplaysWhatWasNotHanded(t *testing.T) {
	dir := t.TempDir()
	j, replayed := openTestJournal(t, dir, nil)
	require.Empty(t, replayed)
	msgs := addN(j, 0, 100)
	require.Equal(t, uint64(1), msgs[0].Seq)
	// Handed out of order: 1..40 and 45, so the watermark is 40.
	for i := 39; i >= 0; i-- {
		j.Handed(msgs[i].Seq)
	}
	j.Handed(msgs[44].Seq)
	require.Equal(t, uint64(60), j.Pending())
	require.NoError(t, j.Commit(true))
	// A crash: the files stay as they are (no Close).

	j2, replayed := openTestJournal(t, dir, nil)
	requireReplayed(t, msgs[40:], replayed)
	more := addN(j2, 100, 1)
	require.Equal(t, uint64(101), more[0].Seq, "sequence numbers go on after a restart")
}

// Nothing is journaled while detached (the AOF is off), and what Add
// encoded reaches the file only with Commit.
func TestJournalAttachAndCommit(t *testing.T) {
	dir := t.TempDir()
	j, _ := openTestJournal(t, dir, nil)
	j.Attach(false)
	m := testMessage(1)
	j.Add(&m)
	require.Zero(t, m.Seq)
	j.Attach(true)
	uncommitted := addN(j, 2, 3)
	_, replayed := openTestJournal(t, t.TempDir(), nil)
	require.Empty(t, replayed)
	require.NoError(t, j.Commit(false))
	_, replayed = openTestJournal(t, dir, nil)
	requireReplayed(t, uncommitted, replayed)
}

// Full segments are closed and deleted once every message in them was
// handed; the watermark survives in the next segment's header.
func TestJournalSegmentsRotateAndGo(t *testing.T) {
	defer func(v int64) { journalSegmentBytes = v }(journalSegmentBytes)
	journalSegmentBytes = 20 << 10
	dir := t.TempDir()
	j, _ := openTestJournal(t, dir, nil)
	var all []Message
	for round := range 10 {
		all = append(all, addN(j, round*20, 20)...)
		require.NoError(t, j.Commit(false))
	}
	nums, err := journalSegments(dir)
	require.NoError(t, err)
	require.Greater(t, len(nums), 3)
	for _, m := range all[:150] {
		j.Handed(m.Seq)
	}
	require.NoError(t, j.Commit(false))
	left, err := journalSegments(dir)
	require.NoError(t, err)
	require.Less(t, len(left), len(nums), "segments all handed are deleted")

	_, replayed := openTestJournal(t, dir, nil)
	requireReplayed(t, all[150:], replayed)
}

// A journal whose last record was cut by a crash, or corrupted in the
// middle, or whose header is not a journal's, still opens: the log says
// what was lost.
func TestJournalBadFiles(t *testing.T) {
	write := func(t *testing.T) (string, []Message) {
		dir := t.TempDir()
		j, _ := openTestJournal(t, dir, nil)
		msgs := addN(j, 0, 20)
		require.NoError(t, j.Commit(true))
		return dir, msgs
	}
	segment := func(dir string) string { return filepath.Join(dir, journalPrefix+"1") }
	edit := func(t *testing.T, path string, f func([]byte) []byte) {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, f(data), 0o600))
	}

	t.Run("torn last record", func(t *testing.T) {
		dir, msgs := write(t)
		edit(t, segment(dir), func(b []byte) []byte { return b[:len(b)-3] })
		logs := &logRecorder{}
		_, replayed := openTestJournal(t, dir, logs)
		requireReplayed(t, msgs[:19], replayed)
		require.NotEmpty(t, logs.matching("torn last record"))
	})
	t.Run("corrupt record in the middle", func(t *testing.T) {
		dir, msgs := write(t)
		off := journalHeaderSize
		for i := range 5 {
			off += 8 + journalMessageFixed + msgs[i].Size()
		}
		edit(t, segment(dir), func(b []byte) []byte { b[off+8+3] ^= 0xff; return b })
		logs := &logRecorder{}
		_, replayed := openTestJournal(t, dir, logs)
		requireReplayed(t, msgs[:5], replayed)
		require.NotEmpty(t, logs.matching("corrupt record at offset"))
		require.NotEmpty(t, logs.matching("bytes discarded"))
	})
	t.Run("length past the end", func(t *testing.T) {
		dir, msgs := write(t)
		edit(t, segment(dir), func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[journalHeaderSize:], 0xfffffff0)
			return b
		})
		logs := &logRecorder{}
		_, replayed := openTestJournal(t, dir, logs)
		require.Empty(t, replayed)
		require.NotEmpty(t, logs.matching("claims"))
		_ = msgs
	})
	t.Run("not a journal", func(t *testing.T) {
		dir, _ := write(t)
		edit(t, segment(dir), func(b []byte) []byte { copy(b, "garbage!"); return b })
		logs := &logRecorder{}
		_, replayed := openTestJournal(t, dir, logs)
		require.Empty(t, replayed)
		require.NotEmpty(t, logs.matching("set aside"))
		_, err := os.Stat(segment(dir) + ".bad")
		require.NoError(t, err)
	})
	t.Run("another version", func(t *testing.T) {
		dir, _ := write(t)
		edit(t, segment(dir), func(b []byte) []byte { binary.LittleEndian.PutUint32(b[8:], 9); return b })
		logs := &logRecorder{}
		openTestJournal(t, dir, logs)
		require.NotEmpty(t, logs.matching("unsupported version 9"))
	})
}

func TestWatermark(t *testing.T) {
	var w watermark
	for _, s := range []uint64{3, 2, 200, 5, 1} {
		w.mark(s)
	}
	require.Equal(t, uint64(3), w.done)
	w.mark(4)
	require.Equal(t, uint64(5), w.done)
	for s := uint64(6); s < 200; s++ {
		w.mark(s)
	}
	require.Equal(t, uint64(200), w.done)
	require.Empty(t, w.above)
}
