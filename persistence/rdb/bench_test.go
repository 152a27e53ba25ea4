package rdb

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/zredis/zredis/keyspace"
)

// stringsFile is an RDB file of n small string keys (as a cache of
// session tokens would be), a tenth of them with a deadline.
func stringsFile(b testing.TB, n int) []byte {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, WriterOptions{Compress: true, Checksum: true})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.SelectDB(0, n, n/10); err != nil {
		b.Fatal(err)
	}
	val := []byte("value-0123456789")
	for i := 0; i < n; i++ {
		var at int64
		if i%10 == 0 {
			at = 4102444800000
		}
		if err := w.WriteEntry("key:"+strconv.Itoa(i), keyspace.NewString(val, at)); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkLoadStrings loads 1M small string keys per iteration and
// reports keys/s.
func BenchmarkLoadStrings(b *testing.B) {
	const n = 1_000_000
	file := stringsFile(b, n)
	b.SetBytes(int64(len(file)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		info, err := Load(bytes.NewReader(file), DefaultLoadOptions(), func(int, string, *keyspace.Entry) error { return nil })
		if err != nil || info.Keys != n {
			b.Fatal(err, info.Keys)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "keys/s")
}

// BenchmarkWriteStrings writes 1M small string keys per iteration.
func BenchmarkWriteStrings(b *testing.B) {
	const n = 1_000_000
	keys := make([]string, n)
	entries := make([]*keyspace.Entry, n)
	for i := range keys {
		keys[i] = "key:" + strconv.Itoa(i)
		entries[i] = keyspace.NewString([]byte("value-0123456789"), 0)
	}
	var buf bytes.Buffer
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf.Reset()
		w, _ := NewWriter(&buf, WriterOptions{Compress: true, Checksum: true})
		_ = w.SelectDB(0, n, 0)
		for j, k := range keys {
			if err := w.WriteEntry(k, entries[j]); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "keys/s")
}

// BenchmarkWriteMixed writes collections (lists, hashes, sorted sets)
// with compression, for byte throughput.
func BenchmarkWriteMixed(b *testing.B) {
	ds := makeDataset(0)
	var entries []*keyspace.Entry
	var keys []string
	for k, v := range ds[0] {
		keys = append(keys, k)
		entries = append(entries, buildEntry(v))
	}
	var buf bytes.Buffer
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf.Reset()
		w, _ := NewWriter(&buf, WriterOptions{Compress: true, Checksum: true})
		_ = w.SelectDB(0, len(keys), 0)
		for j, k := range keys {
			_ = w.WriteEntry(k, entries[j])
		}
		_ = w.Close()
	}
	b.SetBytes(int64(buf.Len()))
}

// BenchmarkLoadStringsFile is BenchmarkLoadStrings from a file on disk,
// where Load knows the size.
func BenchmarkLoadStringsFile(b *testing.B) {
	const n = 1_000_000
	path := filepath.Join(b.TempDir(), "dump.rdb")
	if err := os.WriteFile(path, stringsFile(b, n), 0o644); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		info, err := Load(f, DefaultLoadOptions(), func(int, string, *keyspace.Entry) error { return nil })
		f.Close()
		if err != nil || info.Keys != n {
			b.Fatal(err, info.Keys)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "keys/s")
}
