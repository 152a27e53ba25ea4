package rdb

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/listpack"
)

// smallDataset has every type and encoding in a few hundred bytes.
func smallDataset() dataset {
	ds := dataset{}
	ds.put(0, "s", value{typ: keyspace.TypeString, str: []byte("hello")})
	ds.put(0, "i", value{typ: keyspace.TypeString, str: []byte("-70000")})
	ds.put(0, "z", value{typ: keyspace.TypeString, str: bytes.Repeat([]byte("ab"), 30)})
	ds.put(0, "l", value{typ: keyspace.TypeList, list: toBytes([]string{"a", "1", "bb"}), expireAt: 1e13})
	ds.put(0, "si", value{typ: keyspace.TypeSet, set: []string{"1", "2"}})
	ds.put(0, "ss", value{typ: keyspace.TypeSet, set: []string{"x", "y"}})
	ds.put(1, "zl", value{typ: keyspace.TypeZSet, zset: map[string]float64{"a": 1, "b": 2.5}})
	ds.put(1, "zs", value{typ: keyspace.TypeZSet, zset: map[string]float64{string(bytes.Repeat([]byte("m"), 70)): 3}})
	ds.put(1, "hl", value{typ: keyspace.TypeHash, hash: [][2]string{{"f", "v"}, {"n", "12"}}})
	ds.put(1, "hh", value{typ: keyspace.TypeHash, hash: [][2]string{{"f", string(bytes.Repeat([]byte("v"), 70))}}})
	return ds
}

// fileBytes writes a dataset into memory.
func fileBytes(t testing.TB, ds dataset, opt WriterOptions) []byte {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, opt)
	require.NoError(t, err)
	for _, db := range dbOrder(ds) {
		require.NoError(t, w.SelectDB(db, len(ds[db]), 0))
		for _, k := range sortedKeys(ds[db]) {
			require.NoError(t, w.WriteEntry(k, buildEntry(ds[db][k])))
		}
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func loadBytes(b []byte) (int, error) {
	n := 0
	_, err := Load(bytes.NewReader(b), DefaultLoadOptions(), func(int, string, *keyspace.Entry) error {
		n++
		return nil
	})
	return n, err
}

// onlyReader hides Len, so that Load sees a stream of unknown size.
type onlyReader struct{ r *bytes.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

func TestTruncatedFile(t *testing.T) {
	full := fileBytes(t, smallDataset(), WriterOptions{Compress: true, Checksum: true})
	n, err := loadBytes(full)
	require.NoError(t, err)
	require.Equal(t, smallDataset().count(), n)
	// Bytes after the file (an AOF tail) are not part of it.
	info, err := Load(bytes.NewReader(append(bytes.Clone(full), "*1\r\n$4\r\nPING\r\n"...)), DefaultLoadOptions(),
		func(int, string, *keyspace.Entry) error { return nil })
	require.NoError(t, err)
	assert.Equal(t, int64(len(full)), info.Size)
	for cut := 0; cut < len(full); cut++ {
		_, err := loadBytes(full[:cut])
		require.Error(t, err, "file cut at %d of %d", cut, len(full))
		var le *Error
		if cut >= 9 && errors.As(err, &le) {
			assert.LessOrEqual(t, le.Offset, int64(cut))
		}
		_, err = Load(onlyReader{bytes.NewReader(full[:cut])}, DefaultLoadOptions(), func(int, string, *keyspace.Entry) error { return nil })
		require.Error(t, err, "stream cut at %d", cut)
	}
}

func TestFlippedBytes(t *testing.T) {
	for _, opt := range []WriterOptions{{Compress: true, Checksum: true}, {}} {
		full := fileBytes(t, smallDataset(), opt)
		for i := 0; i < len(full); i++ {
			for _, x := range []byte{0x01, 0x80, 0xFF} {
				c := bytes.Clone(full)
				c[i] ^= x
				_, err := loadBytes(c) // never panics
				// A changed version digit can make the file older than version 5,
				// which has no checksum (Redis then loads it too).
				if opt.Checksum && i < len(full)-8 && atoi(c[5:9]) >= 5 {
					assert.Error(t, err, "flip 0x%02x at %d", x, i)
				}
			}
		}
	}
}

func TestTruncatedDumpPayload(t *testing.T) {
	for db, keys := range smallDataset() {
		for k, v := range keys {
			p := Dump(buildEntry(v))
			for cut := 0; cut < len(p); cut++ {
				_, err := Restore(p[:cut], DefaultLoadOptions())
				assert.Error(t, err, "%d/%s cut at %d", db, k, cut)
				// The body cut with a valid footer: a format error.
				body := p[:len(p)-10]
				if cut < len(body) {
					_, err = Restore(appendCRC(append(bytes.Clone(body[:cut]), 10, 0)), DefaultLoadOptions())
					assert.Error(t, err, "%s body cut at %d", k, cut)
				}
			}
		}
	}
}

func TestLoadErrors(t *testing.T) {
	stop := errors.New("stop")
	good := fileBytes(t, smallDataset(), WriterOptions{Checksum: true})
	_, err := Load(bytes.NewReader(good), DefaultLoadOptions(), func(int, string, *keyspace.Entry) error { return stop })
	assert.Same(t, stop, err, "the callback's error is returned as is")

	cases := []struct {
		name string
		file []byte
		want string
	}{
		{"signature", []byte("RADIS0010\xff"), "Wrong signature trying to load DB from file"},
		{"version 13", []byte("REDIS0013\xff"), "Can't handle RDB format version 13"},
		{"version 0", []byte("REDIS0000\xff"), "Can't handle RDB format version 0"},
		{"stream", []byte("REDIS0010\x13\x01k\x01\x01a"), "Stream node key entry is not the size of a stream ID"},
		{"module", []byte("REDIS0010\x07\x01k\x00"), "unsupported type 7 (module"},
		{"unknown", []byte("REDIS0010\x08\x01k\x00"), "unsupported type 8"},
		{"huge string", []byte("REDIS0010\x00\x01k\x81\x7f\xff\xff\xff\xff\xff\xff\xff"), "Unexpected EOF"},
		{"huge lzf", []byte("REDIS0010\x00\x01k\xc3\x02\x81\x7f\xff\xff\xff\xff\xff\xff\xff\x00\x00"), "LZF"},
		{"empty", nil, "Unexpected EOF"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadBytes(tc.file)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			// The same as a stream of unknown size.
			_, err = Load(onlyReader{bytes.NewReader(tc.file)}, DefaultLoadOptions(), func(int, string, *keyspace.Entry) error { return nil })
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	var ve ErrVersion
	_, err = loadBytes([]byte("REDIS0013"))
	assert.ErrorAs(t, err, &ve)

	// Without checksum the footer is zero and is not checked; a version 4
	// file has no footer at all.
	noSum := fileBytes(t, smallDataset(), WriterOptions{})
	info, err := Load(bytes.NewReader(noSum), DefaultLoadOptions(), func(int, string, *keyspace.Entry) error { return nil })
	require.NoError(t, err)
	assert.Zero(t, info.Checksum)
	// A reader that makes no progress is an error, not a hang.
	_, err = Load(stuckReader{}, DefaultLoadOptions(), nil)
	assert.ErrorIs(t, err, io.ErrNoProgress)

	v4 := []byte("REDIS0004\x00\x01k\x01v\xff")
	n, err := loadBytes(v4)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
}

// TestEmptyKeysSkipped: a value without elements is skipped, as Redis
// does, and counted.
func TestEmptyKeysSkipped(t *testing.T) {
	e := encoder{}
	e.buf = append(e.buf, "REDIS0010"...)
	for i, t := range []byte{typeList, typeSet, typeZSet2, typeHash, typeListQuicklist2} {
		e.buf = append(e.buf, t)
		e.writeString([]byte("k" + strconv.Itoa(i)))
		e.writeLen(0)
	}
	e.buf = append(e.buf, typeString, 1, 'k', 1, 'v', opEOF)
	e.buf = append(e.buf, make([]byte, 8)...)
	var keys []string
	info, err := Load(bytes.NewReader(e.buf), DefaultLoadOptions(), func(_ int, k string, _ *keyspace.Entry) error {
		keys = append(keys, k)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"k"}, keys)
	assert.Equal(t, 5, info.EmptyKeysSkipped)
}

// TestDuplicateMembers: Redis refuses duplicates inside a value.
func TestDuplicateMembers(t *testing.T) {
	var lb listpack.Builder
	lb.Reset(nil)
	for _, s := range []string{"f", "1", "f", "2"} {
		lb.Append([]byte(s))
	}
	dupPairs := lb.Finish()
	cases := map[string][]byte{}
	mk := func(name string, t byte, fill func(e *encoder)) {
		e := encoder{}
		e.buf = append(e.buf, t)
		fill(&e)
		cases[name] = e.buf
	}
	mk("set", typeSet, func(e *encoder) { e.writeLen(2); e.writeString([]byte("a")); e.writeString([]byte("a")) })
	mk("hash", typeHash, func(e *encoder) {
		e.writeLen(2)
		for i := 0; i < 2; i++ {
			e.writeString([]byte("f"))
			e.writeString([]byte("v"))
		}
	})
	mk("zset", typeZSet2, func(e *encoder) {
		e.writeLen(2)
		for i := 0; i < 2; i++ {
			e.writeString([]byte("m"))
			e.buf = append(e.buf, make([]byte, 8)...)
		}
	})
	mk("hash listpack", typeHashListpack, func(e *encoder) { e.writeString(dupPairs) })
	mk("zset listpack", typeZSetListpack, func(e *encoder) { e.writeString(dupPairs) })
	for name, body := range cases {
		_, err := Restore(appendCRC(append(body, 10, 0)), DefaultLoadOptions())
		assert.ErrorIs(t, err, ErrBadDataFormat, name)
	}
}

// stuckReader returns nothing, forever.
type stuckReader struct{}

func (stuckReader) Read([]byte) (int, error) { return 0, nil }

func TestWriteEmptyCollection(t *testing.T) {
	w, err := NewWriter(io.Discard, WriterOptions{})
	require.NoError(t, err)
	require.NoError(t, w.SelectDB(0, 1, 0))
	assert.Error(t, w.WriteEntry("k", keyspace.NewObject(keyspace.NewSet(), 0)))
}
