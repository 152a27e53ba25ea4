package rdb

import (
	"bytes"
	"testing"

	"github.com/zredis/zredis/keyspace"
)

// FuzzLoad feeds arbitrary bytes to Load, both as a sized input and as a
// stream: it must return (an error or not) without panicking, and what it
// loads must be writable again.
func FuzzLoad(f *testing.F) {
	f.Add(fileBytes(f, smallDataset(), WriterOptions{Compress: true, Checksum: true}))
	f.Add(fileBytes(f, smallDataset(), WriterOptions{}))
	f.Add(legacyFile(0, false))
	f.Add(streamsV1File(testStreams()))
	var streams bytes.Buffer
	w, _ := NewWriter(&streams, WriterOptions{Compress: true})
	_ = w.SelectDB(0, 1, 0)
	for k, s := range testStreams() {
		_ = w.WriteEntry(k, keyspace.NewObject(s, 0))
	}
	_ = w.Close()
	f.Add(streams.Bytes())
	f.Add([]byte("REDIS0010\xff\x00\x00\x00\x00\x00\x00\x00\x00"))
	// Redis 7.4's hashes with field TTLs, and the SLOT_INFO opcode.
	f.Add(ttlFile(f, WriterOptions{Compress: true, Checksum: true}))
	f.Add(ttlFile(f, WriterOptions{}))
	f.Add([]byte("REDIS0012\xfe\x00\xfb\x01\x00\xf4\x41\x05\x01\x00\x00\x01k\x01v\xff\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var entries []*keyspace.Entry
		fn := func(_ int, _ string, e *keyspace.Entry) error {
			entries = append(entries, e)
			return nil
		}
		_, _ = Load(bytes.NewReader(data), DefaultLoadOptions(), fn)
		_, _ = Load(onlyReader{bytes.NewReader(data)}, DefaultLoadOptions(), fn)
		for _, e := range entries {
			if _, err := Restore(Dump(e), DefaultLoadOptions()); err != nil {
				t.Fatalf("a loaded value does not survive DUMP/RESTORE: %v", err)
			}
		}
	})
}

// FuzzRestore feeds arbitrary payloads to Restore, with the checksum
// fixed so that the value decoder is reached.
func FuzzRestore(f *testing.F) {
	for _, keys := range smallDataset() {
		for _, v := range keys {
			f.Add(Dump(buildEntry(v)))
		}
	}
	for _, s := range testStreams() {
		f.Add(Dump(keyspace.NewObject(s, 0)))
	}
	for _, fields := range ttlHashes() {
		f.Add(Dump(keyspace.NewObject(ttlHash(fields), 0)))
	}
	f.Add(payload(typeHashListpackExPreGA, func(e *encoder) { e.writeString(lpOf("a", "1", "#5000", "b", "2", "#0")) }))
	f.Add(payload(typeHashMetadataPreGA, metadata(nil, 2, uint64(7000), "a", "1", uint64(0), "b", "2")))
	f.Add(payload(typeSetListpack, func(e *encoder) { e.writeString(lpOf("3", "1", "x")) }))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = Restore(data, DefaultLoadOptions())
		if len(data) < 2 {
			return
		}
		sealed := appendCRC(append(bytes.Clone(data), 10, 0))
		e, err := Restore(sealed, DefaultLoadOptions())
		if err == nil {
			if _, err := Restore(Dump(e), DefaultLoadOptions()); err != nil {
				t.Fatalf("a restored value does not survive DUMP/RESTORE: %v", err)
			}
		}
	})
}
