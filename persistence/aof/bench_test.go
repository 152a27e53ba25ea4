package aof

import (
	"github.com/zredis/zredis/resp"

	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// benchAppendWait runs Append+Wait of a SET from `clients` goroutines and
// reports throughput and fsyncs per second.
func benchAppendWait(b *testing.B, policy Policy, clients int) {
	w, err := OpenWriter(b.TempDir(), prefix, nil, WriterOptions{Policy: policy})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	value := make([]byte, 64)
	var n atomic.Int64
	b.SetParallelism(max(1, clients/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	start := time.Now()
	before := w.Status().Fsyncs
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			t := w.Append(0, [][]byte{[]byte("SET"), []byte(fmt.Sprintf("key:%d", i)), value})
			if err := w.Wait(t); err != nil {
				b.Error(err)
				return
			}
		}
	})
	elapsed := time.Since(start).Seconds()
	fsyncs := w.Status().Fsyncs - before
	b.ReportMetric(float64(b.N)/elapsed, "ops/s")
	b.ReportMetric(float64(fsyncs)/elapsed, "fsyncs/s")
	if fsyncs > 0 {
		b.ReportMetric(float64(b.N)/float64(fsyncs), "writes/fsync")
	}
}

func BenchmarkAppendWaitAlways1(b *testing.B)    { benchAppendWait(b, Always, 1) }
func BenchmarkAppendWaitAlways50(b *testing.B)   { benchAppendWait(b, Always, 50) }
func BenchmarkAppendWaitEverySec50(b *testing.B) { benchAppendWait(b, EverySec, 50) }
func BenchmarkAppendWaitNo50(b *testing.B)       { benchAppendWait(b, No, 50) }

// BenchmarkAppend is the cost Append adds under the keyspace lock.
func BenchmarkAppend(b *testing.B) {
	w, err := OpenWriter(b.TempDir(), prefix, nil, WriterOptions{Policy: No})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	argv := [][]byte{[]byte("SET"), []byte("key:000000"), make([]byte, 64)}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.Append(0, argv)
	}
}

// BenchmarkLoad replays an incremental file of 1M SETs (no-op Exec).
func BenchmarkLoad(b *testing.B) {
	const n = 1_000_000
	dir := b.TempDir()
	var data []byte
	data = resp.AppendSelect(data, 0)
	value := make([]byte, 32)
	for i := 0; i < n; i++ {
		data = resp.AppendCommand(data, []byte("SET"), []byte(fmt.Sprintf("key:%08d", i)), value)
	}
	writeDir(b, dir, []byte{}, data)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st, err := Load(dir, ManifestName(prefix), LoadOptions{Exec: func([][]byte) error { return nil }})
		if err != nil || st.Commands != n+1 {
			b.Fatal(err, st)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "cmds/s")
}
