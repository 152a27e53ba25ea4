package zmqpub

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testMessage is message i of a test sequence: a value whose size varies
// with i (0 to 2999 bytes) and whose bytes depend on i, and Deadline i.
func testMessage(i int) Message {
	value := make([]byte, (i*7919)%3000)
	for j := range value {
		value[j] = byte(i + j)
	}
	return Message{
		Frames:   [3][]byte{{byte(i), byte(i >> 8), 0, 0}, []byte(fmt.Sprintf("key:%d", i)), value},
		Deadline: int64(i),
	}
}

// fixedMessage is message i with a value of exactly size bytes.
func fixedMessage(i, size int) Message {
	m := testMessage(i)
	m.Frames[2] = make([]byte, size-len(m.Frames[0])-len(m.Frames[1]))
	return m
}

func sameFrames(a, b Message) bool {
	return bytes.Equal(a.Frames[0], b.Frames[0]) && bytes.Equal(a.Frames[1], b.Frames[1]) && bytes.Equal(a.Frames[2], b.Frames[2])
}

func requireSameMessage(t *testing.T, want, got Message) {
	t.Helper()
	require.Equal(t, want.Deadline, got.Deadline)
	for k := range want.Frames {
		require.Equal(t, string(want.Frames[k]), string(got.Frames[k]), "message %d frame %d", want.Deadline, k+1)
	}
}

// logRecorder collects the outbox's log lines.
type logRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (l *logRecorder) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logRecorder) matching(sub string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return out
}

func openTestOutbox(t *testing.T, cfg OutboxConfig) *Outbox {
	t.Helper()
	o, err := OpenOutbox(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { o.Close() })
	return o
}

// takeN takes n messages with Next. A stalled outbox fails the test after
// a generous timeout instead of hanging it.
func takeN(t *testing.T, o *Outbox, n int) []Message {
	t.Helper()
	out, err := collect(o, n)
	require.NoError(t, err)
	return out
}

// collect is takeN for goroutines other than the test's.
func collect(o *Outbox, n int) ([]Message, error) {
	stop := make(chan struct{})
	timer := time.AfterFunc(60*time.Second, func() { close(stop) })
	defer timer.Stop()
	out := make([]Message, 0, n)
	for len(out) < n {
		m, ok := o.Next(stop)
		if !ok {
			return out, fmt.Errorf("outbox stalled after %d of %d messages", len(out), n)
		}
		out = append(out, m)
	}
	return out, nil
}

// putPaced is Put for tests that spill more than maxPendingSpillBytes in
// all and require that nothing is dropped. Put never waits: when the spool
// goroutine is that far behind the producer (a compaction's fsync, a busy
// machine, -race) it drops, by design, and a consumer waiting for every
// message then waits for ones that are nowhere. So the producer waits
// here while the goroutine is more than half the bound behind.
func putPaced(o *Outbox, m Message) {
	for {
		o.mu.Lock()
		behind := o.pending.bytes
		o.mu.Unlock()
		if behind <= maxPendingSpillBytes/2 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	o.Put(m)
}

// requireSequence checks that ms are testMessage(first), testMessage(first+1), ...
func requireSequence(t *testing.T, first int, ms []Message) {
	t.Helper()
	for k, m := range ms {
		want := testMessage(first + k)
		if m.Deadline != want.Deadline || !sameFrames(want, m) {
			require.Equal(t, want.Deadline, m.Deadline, "message %d out of order", k)
			requireSameMessage(t, want, m)
		}
	}
}

// held is how many messages the outbox holds, in memory or spool: right
// after a replay the spool goroutine may be moving them between the two.
func held(st OutboxStats) int64 { return st.Queued + st.Spooled }

func requireEmpty(t *testing.T, o *Outbox) {
	t.Helper()
	st := o.Stats()
	require.Zero(t, st.Queued)
	require.Zero(t, st.QueuedBytes)
	require.Zero(t, st.Spooled)
	require.Zero(t, st.SpooledBytes)
}

func TestOutboxOrderAcrossMemoryAndSpool(t *testing.T) {
	const total = 100_000
	tests := []struct {
		name       string
		concurrent bool // consumer runs during the second half of the puts
	}{
		{"produce then consume", false},
		{"concurrent consumer", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "spool")
			o := openTestOutbox(t, OutboxConfig{HWM: 1000, SpoolPath: path, SpoolMaxBytes: 1 << 30})
			var got []Message
			var collectErr error
			done := make(chan struct{})
			for i := range total {
				if tt.concurrent && i == total/2 {
					// Memory and spool are both in use by now.
					go func() {
						defer close(done)
						got, collectErr = collect(o, total)
					}()
				}
				putPaced(o, testMessage(i)) // 150 MB through the spool
			}
			// A drop would leave collect waiting 60 s for a message that
			// is nowhere; say so now.
			require.Zero(t, o.Stats().Dropped, "dropped while spilling")
			if tt.concurrent {
				<-done
				require.NoError(t, collectErr)
			} else {
				st := o.Stats()
				require.Equal(t, int64(1000), st.Queued)
				require.Equal(t, int64(total-1000), st.Spooled)
				got = takeN(t, o, total)
			}
			requireSequence(t, 0, got)
			st := o.Stats()
			requireEmpty(t, o)
			require.Zero(t, st.Dropped)
			require.Positive(t, st.SpilledTotal)
			if !tt.concurrent {
				require.Equal(t, int64(total-1000), st.SpilledTotal)
			}
			info, err := os.Stat(path)
			require.NoError(t, err)
			require.Equal(t, int64(spoolHeaderSize), info.Size(), "a drained spool is truncated")
		})
	}
}

func TestOutboxMemoryBounds(t *testing.T) {
	tests := []struct {
		name        string
		hwm         int
		maxMem      int64
		spool       bool
		wantQueued  int64
		wantSpooled int64
		wantDropped int64
	}{
		{"byte bound spills", 0, 10_000, true, 10, 40, 0},
		{"byte bound drops without spool", 0, 10_000, false, 10, 0, 40},
		{"count bound first", 5, 10_000, true, 5, 45, 0},
		{"byte bound first", 20, 3_500, true, 3, 47, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := OutboxConfig{HWM: tt.hwm, MaxMemBytes: tt.maxMem}
			if tt.spool {
				cfg.SpoolPath, cfg.SpoolMaxBytes = filepath.Join(t.TempDir(), "spool"), 1<<30
			}
			o := openTestOutbox(t, cfg)
			for i := range 50 {
				o.Put(fixedMessage(i, 1000))
			}
			st := o.Stats()
			require.Equal(t, tt.wantQueued, st.Queued)
			require.Equal(t, tt.wantQueued*1000, st.QueuedBytes)
			require.LessOrEqual(t, st.QueuedBytes, tt.maxMem)
			require.Equal(t, tt.wantSpooled, st.Spooled)
			require.Equal(t, tt.wantSpooled*1000, st.SpooledBytes)
			require.Equal(t, tt.wantDropped, st.Dropped)
			require.Equal(t, tt.wantDropped*1000, st.DroppedBytes)

			got := takeN(t, o, int(tt.wantQueued+tt.wantSpooled))
			for k, m := range got {
				require.Equal(t, int64(k), m.Deadline)
			}
			requireEmpty(t, o)
		})
	}
}

func TestOutboxOversizeMessageMovesThroughSpool(t *testing.T) {
	o := openTestOutbox(t, OutboxConfig{HWM: 10, MaxMemBytes: 100, SpoolPath: filepath.Join(t.TempDir(), "spool"), SpoolMaxBytes: 1 << 20})
	o.Put(fixedMessage(0, 50))
	o.Put(fixedMessage(1, 5000)) // larger than memory's byte bound
	o.Put(fixedMessage(2, 50))
	got := takeN(t, o, 3)
	for k, m := range got {
		require.Equal(t, int64(k), m.Deadline)
	}
	require.Len(t, got[1].Frames[2], 5000-len(got[1].Frames[0])-len(got[1].Frames[1]))
	requireEmpty(t, o)
}

func TestOutboxDropsPastBothBounds(t *testing.T) {
	logs := &logRecorder{}
	const size = 100
	spoolMax := int64(5 * (size + recordOverhead)) // room for five records
	o := openTestOutbox(t, OutboxConfig{HWM: 10, SpoolPath: filepath.Join(t.TempDir(), "spool"), SpoolMaxBytes: spoolMax, Logf: logs.logf})
	for i := range 30 {
		o.Put(fixedMessage(i, size))
	}
	st := o.Stats()
	require.Equal(t, OutboxStats{
		Queued: 10, QueuedBytes: 10 * size,
		Spooled: 5, SpooledBytes: 5 * size,
		SpilledTotal: 5,
		Dropped:      15, DroppedBytes: 15 * size,
	}, st)

	dropLines := logs.matching("dropped")
	require.NotEmpty(t, dropLines)
	require.Less(t, len(dropLines), 15, "drop lines are rate-limited")
	require.Contains(t, dropLines[0], "dropped 1 expiry messages")
	require.NotEmpty(t, logs.matching("spilling to the spool"))

	// The survivors are the oldest fifteen, in order.
	got := takeN(t, o, 15)
	for k, m := range got {
		require.Equal(t, int64(k), m.Deadline)
	}
	requireEmpty(t, o)
}

func TestOutboxSpoolDisabled(t *testing.T) {
	tests := []struct {
		name string
		cfg  OutboxConfig
	}{
		{"no path", OutboxConfig{HWM: 10, SpoolMaxBytes: 1 << 20}},
		{"no size", OutboxConfig{HWM: 10, SpoolPath: "spool"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.cfg.SpoolPath != "" {
				tt.cfg.SpoolPath = filepath.Join(t.TempDir(), tt.cfg.SpoolPath)
			}
			o := openTestOutbox(t, tt.cfg)
			for i := range 25 {
				o.Put(testMessage(i))
			}
			st := o.Stats()
			require.Equal(t, int64(10), st.Queued)
			require.Zero(t, st.Spooled)
			require.Zero(t, st.SpilledTotal)
			require.Equal(t, int64(15), st.Dropped)
			requireSequence(t, 0, takeN(t, o, 10))
		})
	}
}

func TestOutboxReplayAfterClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool")
	cfg := OutboxConfig{HWM: 100, SpoolPath: path, SpoolMaxBytes: 1 << 30}
	o, err := OpenOutbox(cfg)
	require.NoError(t, err)
	for i := range 1000 {
		o.Put(testMessage(i))
	}
	// Taking more than half of memory makes the spool refill it, so the
	// spool's head has usually moved when Close puts memory back in front
	// of it; the result must be the same either way.
	requireSequence(t, 0, takeN(t, o, 60))
	require.NoError(t, o.Close())
	require.NoError(t, o.Close(), "Close is idempotent")
	st := o.Stats()
	require.Zero(t, st.Queued)
	require.Equal(t, int64(940), st.Spooled)

	o.Put(testMessage(5000))
	require.Equal(t, int64(1), o.Stats().Dropped, "Put after Close drops")
	_, ok := o.Next(nil)
	require.False(t, ok, "Next after Close")

	o2 := openTestOutbox(t, cfg)
	require.Equal(t, int64(940), held(o2.Stats()), "the spool goroutine may already be refilling memory")
	// New messages queue behind the replayed ones.
	for i := 1000; i < 1100; i++ {
		o2.Put(testMessage(i))
	}
	requireSequence(t, 60, takeN(t, o2, 1040))
	requireEmpty(t, o2)
}

func TestOutboxReplayOfMemoryOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool")
	cfg := OutboxConfig{HWM: 100, SpoolPath: path, SpoolMaxBytes: 1 << 30}
	o, err := OpenOutbox(cfg)
	require.NoError(t, err)
	for i := range 50 {
		o.Put(testMessage(i))
	}
	require.Zero(t, o.Stats().SpilledTotal)
	require.NoError(t, o.Close())

	o2 := openTestOutbox(t, cfg)
	requireSequence(t, 0, takeN(t, o2, 50))
	require.NoError(t, o2.Close())

	// Everything was delivered: the next run starts empty.
	o3 := openTestOutbox(t, cfg)
	requireEmpty(t, o3)
}

func TestOutboxCloseWithoutSpoolDrops(t *testing.T) {
	o, err := OpenOutbox(OutboxConfig{HWM: 100})
	require.NoError(t, err)
	for i := range 7 {
		o.Put(fixedMessage(i, 10))
	}
	require.NoError(t, o.Close())
	st := o.Stats()
	require.Equal(t, int64(7), st.Dropped)
	require.Equal(t, int64(70), st.DroppedBytes)
	require.Zero(t, st.Queued)
}

func TestOutboxRequeue(t *testing.T) {
	tests := []struct {
		name  string
		hwm   int
		total int
		take  int
		spool bool
	}{
		{"memory", 100, 5, 3, false},
		{"past HWM", 5, 5, 3, false},
		{"with spool", 5, 20, 4, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := OutboxConfig{HWM: tt.hwm}
			if tt.spool {
				cfg.SpoolPath, cfg.SpoolMaxBytes = filepath.Join(t.TempDir(), "spool"), 1<<30
			}
			o := openTestOutbox(t, cfg)
			for i := range tt.total {
				o.Put(testMessage(i))
			}
			taken := takeN(t, o, tt.take)
			if !tt.spool {
				// Refill the memory to its bound before requeueing.
				for i := tt.total; o.Stats().Queued < int64(tt.hwm); i++ {
					o.Put(testMessage(i))
					tt.total++
				}
			}
			before := o.Stats()
			o.Requeue(taken)
			if !tt.spool { // with a spool, a refill may run concurrently
				after := o.Stats()
				require.Equal(t, before.Queued+int64(tt.take), after.Queued, "Requeue may pass HWM")
			}
			requireSequence(t, 0, takeN(t, o, tt.total))
			requireEmpty(t, o)
		})
	}
}

func TestOutboxRequeueAfterCloseDrops(t *testing.T) {
	o, err := OpenOutbox(OutboxConfig{HWM: 10})
	require.NoError(t, err)
	o.Put(fixedMessage(0, 10))
	taken := takeN(t, o, 1)
	require.NoError(t, o.Close())
	o.Requeue(taken)
	require.Equal(t, int64(1), o.Stats().Dropped)
}

func TestOutboxSetLimits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool")
	o := openTestOutbox(t, OutboxConfig{HWM: 10, SpoolPath: path})
	for i := range 10 {
		o.Put(testMessage(i))
	}
	o.Put(testMessage(10))
	require.Equal(t, int64(1), o.Stats().Dropped, "spool size 0: past HWM drops")

	// Lowering HWM keeps what is queued; new messages spill.
	o.SetLimits(5, 0, 1<<30)
	require.Equal(t, int64(10), o.Stats().Queued)
	for i := 11; i < 20; i++ {
		o.Put(testMessage(i))
	}
	st := o.Stats()
	require.Equal(t, int64(10), st.Queued)
	require.Equal(t, int64(9), st.Spooled)

	// Raising it lets the spool refill memory up to the new bound.
	o.SetLimits(1000, 0, 1<<30)
	got := takeN(t, o, 19)
	requireSequence(t, 0, got[:10])
	requireSequence(t, 11, got[10:])
	for i := 20; i < 30; i++ {
		o.Put(testMessage(i))
	}
	st = o.Stats()
	require.Equal(t, int64(10), st.Queued, "spool drained: memory takes new messages")
	require.Zero(t, st.Spooled)
	require.Equal(t, int64(9), st.SpilledTotal)
}

func TestOutboxNextWaitsAndStops(t *testing.T) {
	o := openTestOutbox(t, OutboxConfig{HWM: 10})

	stop := make(chan struct{})
	close(stop)
	_, ok := o.Next(stop)
	require.False(t, ok, "closed stop")

	got := make(chan Message)
	go func() {
		m, ok := o.Next(nil)
		if ok {
			got <- m
		}
		close(got)
	}()
	o.Put(testMessage(7))
	requireSameMessage(t, testMessage(7), <-got)

	// A waiting Next returns false when the outbox closes.
	waiting := make(chan bool)
	go func() {
		_, ok := o.Next(nil)
		waiting <- ok
	}()
	require.NoError(t, o.Close())
	require.False(t, <-waiting)
}

func TestOutboxConcurrentCountsAddUp(t *testing.T) {
	const producers, perProducer = 4, 25_000
	path := filepath.Join(t.TempDir(), "spool")
	// A small spool so that some messages drop while others spill.
	o := openTestOutbox(t, OutboxConfig{HWM: 500, MaxMemBytes: 1 << 20, SpoolPath: path, SpoolMaxBytes: 4 << 20})

	stop := make(chan struct{})
	var delivered int64
	consumerDone := make(chan error, 1)
	go func() {
		last := make([]int64, producers)
		for i := range last {
			last[i] = -1
		}
		n := 0
		for {
			m, ok := o.Next(stop)
			if !ok {
				consumerDone <- nil
				return
			}
			n++
			if n%97 == 0 {
				o.Requeue([]Message{m}) // a listener died holding it
				continue
			}
			p, seq := m.Deadline/perProducer, m.Deadline%perProducer
			if seq <= last[p] {
				consumerDone <- fmt.Errorf("producer %d: message %d after %d", p, seq, last[p])
				return
			}
			last[p] = seq
			delivered++
		}
	}()

	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range perProducer {
				m := testMessage(i)
				m.Deadline = int64(p*perProducer + i)
				o.Put(m)
			}
		})
	}
	wg.Wait()
	require.Eventually(t, func() bool {
		st := o.Stats()
		return st.Queued == 0 && st.Spooled == 0
	}, 60*time.Second, time.Millisecond)
	close(stop)
	require.NoError(t, <-consumerDone)

	st := o.Stats()
	require.Equal(t, int64(producers*perProducer), delivered+st.Queued+st.Spooled+st.Dropped)
	require.Positive(t, st.SpilledTotal)
	t.Logf("delivered %d, spilled %d, dropped %d", delivered, st.SpilledTotal, st.Dropped)
}

func TestOutboxSeveralConsumers(t *testing.T) {
	const total = 20_000
	o := openTestOutbox(t, OutboxConfig{HWM: 100, SpoolPath: filepath.Join(t.TempDir(), "spool"), SpoolMaxBytes: 1 << 30})
	delivered := make(chan int64, total)
	stopAll := make(chan struct{})
	consume := func(stop <-chan struct{}, leaveAfter int, leave func()) {
		for n := 0; ; n++ {
			if n == leaveAfter {
				leave()
			}
			m, ok := o.Next(stop)
			if !ok {
				return
			}
			delivered <- m.Deadline
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { consume(stopAll, -1, nil) })
	wg.Go(func() { consume(stopAll, -1, nil) })
	// A third consumer leaves early: wake-ups it took must not be lost.
	early := make(chan struct{})
	wg.Go(func() { consume(early, 100, func() { close(early) }) })
	for i := range total {
		o.Put(testMessage(i))
	}
	seen := make([]bool, total)
	timeout := time.After(60 * time.Second)
	for range total {
		select {
		case d := <-delivered:
			require.False(t, seen[d], "message %d delivered twice", d)
			seen[d] = true
		case <-timeout:
			t.Fatalf("outbox stalled: %+v", o.Stats())
		}
	}
	close(stopAll)
	wg.Wait()
	require.Zero(t, o.Stats().Dropped)
	requireEmpty(t, o)
}

func TestOpenOutboxRefusesForeignFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	content := []byte("these are someone's notes, not a spool file\n")
	require.NoError(t, os.WriteFile(path, content, 0o600))
	_, err := OpenOutbox(OutboxConfig{HWM: 10, SpoolPath: path, SpoolMaxBytes: 1 << 20})
	require.ErrorContains(t, err, "not a spool file")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, content, after, "left untouched")
}

// benchMessage is a typical small expiry message: a 40-byte key and a
// 100-byte string value.
func benchMessage() Message {
	return Message{
		Frames:   [3][]byte{make([]byte, 4), make([]byte, 44), make([]byte, 104)},
		Deadline: 1,
	}
}

// BenchmarkPut measures Put on the memory path. Memory is emptied
// outside the timer every 64Ki messages.
func BenchmarkPut(b *testing.B) {
	const batch = 1 << 16
	o, err := OpenOutbox(OutboxConfig{HWM: batch})
	require.NoError(b, err)
	defer o.Close()
	m := benchMessage()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		o.Put(m)
		if (i+1)%batch == 0 {
			b.StopTimer()
			for range batch {
				o.Next(nil)
			}
			b.StartTimer()
		}
	}
	b.StopTimer()
	require.Zero(b, o.Stats().Dropped)
}

// BenchmarkPutSpill measures Put when memory is full and every message
// goes to the spool (the spool goroutine writes them concurrently). If
// the disk falls behind by more than the spill buffer, Put drops; the
// dropped/op metric says how often.
func BenchmarkPutSpill(b *testing.B) {
	o, err := OpenOutbox(OutboxConfig{HWM: 1, SpoolPath: filepath.Join(b.TempDir(), "spool"), SpoolMaxBytes: 1 << 40})
	require.NoError(b, err)
	m := benchMessage()
	o.Put(m) // fills memory
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		o.Put(m)
	}
	b.StopTimer()
	st := o.Stats()
	b.ReportMetric(float64(st.Dropped)/float64(b.N), "dropped/op")
	require.NoError(b, o.Close())
}
