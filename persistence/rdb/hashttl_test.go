package rdb

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/listpack"
)

// fieldTTL is one field of a test hash: its value and TTL (0 = none).
type fieldTTL struct {
	f, v string
	at   int64
}

// ttlHash builds a hash as HSET then HPEXPIREAT would, under Redis's
// default limits.
func ttlHash(fields []fieldTTL) *keyspace.Hash {
	lim := keyspace.HashLimits{MaxEntries: defaultHashMaxListpackEntries, MaxValue: defaultHashMaxListpackValue}
	h := keyspace.NewHash()
	for _, fv := range fields {
		h.Set([]byte(fv.f), []byte(fv.v), lim)
	}
	for _, fv := range fields {
		if fv.at != 0 {
			h.SetFieldTTL([]byte(fv.f), fv.at)
		}
	}
	return h
}

// ttlHashes are hashes with field TTLs in both encodings: small ones
// (7.4's listpackex), a small one of long values and a big one (a table),
// with TTLs shared, past, at the 48-bit limit, and integer-looking data.
func ttlHashes() map[string][]fieldTTL {
	const at = 1_900_000_000_000
	big := make([]fieldTTL, 600)
	for i := range big {
		big[i] = fieldTTL{f: "field" + strconv.Itoa(i), v: "value" + strconv.Itoa(i)}
		if i%3 == 0 {
			big[i].at = at + int64(i%7)*1000
		}
	}
	return map[string][]fieldTTL{
		"small":        {{"a", "1", at + 3000}, {"b", "two", 0}, {"c", "3", at + 1000}, {"d", "", 0}, {"e", "five", at + 2000}},
		"small shared": {{"x", "1", at}, {"y", "2", at}, {"z", "3", at}},
		"small past":   {{"gone", "v", 1000}, {"kept", "v", 0}, {"soon", "v", 2000}},
		"small max":    {{"far", "v", fieldTTLMax}, {"near", "v", at}},
		"ints":         {{"1", "-1", at}, {"200", "300000", 0}, {"-5", "9223372036854775807", at + 1}},
		"long values":  {{"f1", strings.Repeat("v", 100), at}, {"f2", "short", 0}, {"f3", "x", at + 5}},
		"big":          big,
	}
}

// wantEncoding is the encoding of a test hash under Redis's defaults:
// "listpack" for the small form, listpackex included (see encodingOf).
func wantEncoding(name string) string {
	if name == "big" || name == "long values" {
		return "hashtable"
	}
	return "listpack"
}

// encodingOf is e's encoding with Redis 7.4's listpackex (a small hash
// with field TTLs) said "listpack", as wantEncoding says it.
func encodingOf(e *keyspace.Entry) string {
	if enc := e.Encoding(); enc != "listpackex" {
		return enc
	}
	return "listpack"
}

// checkTTLHash compares a hash with the fields and TTLs it should hold.
func checkTTLHash(t *testing.T, name string, want []fieldTTL, h *keyspace.Hash) {
	t.Helper()
	require.Equal(t, len(want), h.Len(), name)
	for _, fv := range want {
		v, ok := h.Get([]byte(fv.f))
		require.True(t, ok, "%s: field %q", name, fv.f)
		assert.Equal(t, fv.v, string(v), "%s: value of %q", name, fv.f)
		assert.Equal(t, fv.at, h.FieldTTL([]byte(fv.f)), "%s: TTL of %q", name, fv.f)
	}
}

// TestFieldTTLsRoundTrip: hashes with field TTLs written to a file (of
// version 12) and to DUMP payloads come back with every TTL, in the
// encoding they had, as types 25 (small) and 24 (table).
func TestFieldTTLsRoundTrip(t *testing.T) {
	hashes := ttlHashes()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, WriterOptions{Compress: true, Checksum: true, FieldTTLs: true})
	require.NoError(t, err)
	require.NoError(t, w.SelectDB(0, len(hashes)+1, 1))
	for _, name := range sortedKeys(hashes) {
		e := keyspace.NewObject(ttlHash(hashes[name]), 0)
		require.Equal(t, wantEncoding(name), encodingOf(e), name)
		require.NoError(t, w.WriteEntry(name, e))

		p := Dump(e)
		wantType := byte(typeHashListpackEx)
		if wantEncoding(name) == "hashtable" {
			wantType = typeHashMetadata
		}
		assert.Equal(t, wantType, p[0], "%s: type of the payload", name)
		assert.Equal(t, uint16(VersionFieldTTLs), binary.LittleEndian.Uint16(p[len(p)-10:]), "%s: payload version", name)
		r, err := Restore(p, DefaultLoadOptions())
		require.NoError(t, err, name)
		checkTTLHash(t, name, hashes[name], r.Obj().(*keyspace.Hash))
		assert.Equal(t, wantEncoding(name), encodingOf(r), name)
	}
	require.NoError(t, w.WriteEntry("plain", keyspace.NewString([]byte("v"), 1e13)))
	require.NoError(t, w.Close())
	file := buf.Bytes()
	require.Equal(t, "REDIS0012", string(file[:9]))

	loaded := map[string]*keyspace.Entry{}
	info, err := Load(bytes.NewReader(file), DefaultLoadOptions(), func(_ int, k string, e *keyspace.Entry) error {
		loaded[k] = e
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 12, info.Version)
	require.Len(t, loaded, len(hashes)+1)
	for name, want := range hashes {
		checkTTLHash(t, name, want, loaded[name].Obj().(*keyspace.Hash))
		assert.Equal(t, wantEncoding(name), encodingOf(loaded[name]), name)
	}
	assert.Equal(t, int64(1e13), loaded["plain"].ExpireAt())

	// Stored in a keyspace, a loaded hash is indexed for field expiry.
	ks := keyspace.New(1, keyspace.SystemClock{})
	ks.Exec(func() {
		for k, e := range loaded {
			ks.DB(0).Insert(k, e)
		}
		assert.Equal(t, len(hashes), ks.DB(0).VolatileHashes())
	})
}

// TestFieldTTLsLayout: the bytes of types 25 and 24 are 7.4's: the
// earliest TTL first; in the listpack, triples in TTL order with the
// fields without TTL last (TTL 0); in the table form, TTLs relative to
// the earliest, plus one.
func TestFieldTTLsLayout(t *testing.T) {
	small := ttlHashes()["small"]
	p := Dump(keyspace.NewObject(ttlHash(small), 0))
	require.Equal(t, byte(typeHashListpackEx), p[0])
	assert.Equal(t, uint64(1_900_000_001_000), binary.LittleEndian.Uint64(p[1:9]))
	d := &decoder{src: newBytesSource(p[9 : len(p)-10])}
	lp, err := d.readBlob()
	require.NoError(t, err)
	require.Zero(t, d.src.avail(), "the listpack ends the value")
	var got []string
	_, err = listpack.Each(lp, func(e listpack.Entry) error {
		got = append(got, string(e.AppendTo(nil)))
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []string{
		"c", "3", "1900000001000", "e", "five", "1900000002000", "a", "1", "1900000003000",
	}, got[:9])
	assert.ElementsMatch(t, []string{"b", "two", "0", "d", "", "0"}, got[9:])

	// The table form: min, count, then per field ttl-min+1 (or 0),
	// field, value.
	long := ttlHashes()["long values"]
	p = Dump(keyspace.NewObject(ttlHash(long), 0))
	require.Equal(t, byte(typeHashMetadata), p[0])
	minTTL := binary.LittleEndian.Uint64(p[1:9])
	assert.Equal(t, uint64(1_900_000_000_000), minTTL)
	d = &decoder{src: newBytesSource(p[9 : len(p)-10])}
	n, err := d.readCount()
	require.NoError(t, err)
	require.Equal(t, uint64(3), n)
	rel := map[string]uint64{}
	for i := 0; i < 3; i++ {
		ttl, err := d.readCount()
		require.NoError(t, err)
		f, err := d.readString(nil)
		require.NoError(t, err)
		_, err = d.readString(nil)
		require.NoError(t, err)
		rel[string(f)] = ttl
	}
	assert.Equal(t, map[string]uint64{"f1": 1, "f2": 0, "f3": 6}, rel)
}

// TestNoFieldTTLsWritesVersion10: a dataset without field TTLs is written
// as before, version 10 (what Redis 7.0 reads), byte for byte what a
// version-12 file of it holds after the header; a hash left in the
// listpackex form after its last TTL went is a plain HASH_LISTPACK, and
// its DUMP payload says 10. A hash with field TTLs cannot go into a
// version-10 file.
func TestNoFieldTTLsWritesVersion10(t *testing.T) {
	for _, opt := range []WriterOptions{{Compress: true, Checksum: true}, {}} {
		v10 := fileBytes(t, makeDataset(1e12), opt)
		opt.FieldTTLs = true
		v12 := fileBytes(t, makeDataset(1e12), opt)
		require.Equal(t, "REDIS0010", string(v10[:9]))
		require.Equal(t, "REDIS0012", string(v12[:9]))
		ctime := func(b []byte) []byte { // the ctime aux field may differ by a second
			i := bytes.Index(b, []byte("ctime"))
			return b[i+5 : i+11]
		}
		copy(ctime(v12), ctime(v10))
		n := len(v10) - 8
		if opt.Checksum {
			assert.Equal(t, v10[9:n], v12[9:n])
		} else {
			assert.Equal(t, v10[9:], v12[9:])
		}
	}

	h := ttlHash([]fieldTTL{{"a", "1", 1e12}, {"b", "2", 0}})
	h.SetFieldTTL([]byte("a"), 0)
	e := keyspace.NewObject(h, 0)
	require.False(t, HasFieldTTLs(e))
	require.Equal(t, "listpack", encodingOf(e))
	p := Dump(e)
	assert.Equal(t, byte(typeHashListpack), p[0])
	assert.Equal(t, uint16(Version), binary.LittleEndian.Uint16(p[len(p)-10:]))

	w, err := NewWriter(&bytes.Buffer{}, WriterOptions{})
	require.NoError(t, err)
	require.NoError(t, w.SelectDB(0, 1, 0))
	require.NoError(t, w.WriteEntry("plain", e))
	err = w.WriteEntry("ttl", keyspace.NewObject(ttlHash(ttlHashes()["small"]), 0))
	assert.ErrorIs(t, err, ErrFieldTTLs)
}

// TestFieldTTLsLoadLimits: a loaded hash takes the encoding 7.4 gives it
// under the configured limits: a listpackex beyond the entries limit
// becomes a table, a table form within the limits a listpackex, unless
// a field or value is too long for it.
func TestFieldTTLsLoadLimits(t *testing.T) {
	small := ttlHashes()["small"]
	opt := DefaultLoadOptions()
	opt.HashMaxListpackEntries = 3
	e, err := Restore(Dump(keyspace.NewObject(ttlHash(small), 0)), opt)
	require.NoError(t, err)
	assert.Equal(t, "hashtable", e.Encoding())
	checkTTLHash(t, "small", small, e.Obj().(*keyspace.Hash))

	long := ttlHashes()["long values"]
	opt = DefaultLoadOptions()
	opt.HashMaxListpackValue = 200
	e, err = Restore(Dump(keyspace.NewObject(ttlHash(long), 0)), opt)
	require.NoError(t, err)
	assert.Equal(t, "listpack", encodingOf(e))
	checkTTLHash(t, "long values", long, e.Obj().(*keyspace.Hash))

	// 7.4 keeps a listpackex as it is but for its count, as a listpack.
	opt = DefaultLoadOptions()
	opt.HashMaxListpackValue = 10
	e, err = Restore(Dump(keyspace.NewObject(ttlHash(long[1:]), 0)), opt)
	require.NoError(t, err)
	assert.Equal(t, "listpack", encodingOf(e))
}

// lpOf builds a listpack of elements (as lpAppend: integers as such),
// with "#n" for the integer n when it does not read as one.
func lpOf(elems ...string) []byte {
	var lb listpack.Builder
	lb.Reset(nil)
	for _, s := range elems {
		if strings.HasPrefix(s, "#") {
			v, _ := strconv.ParseInt(s[1:], 10, 64)
			lb.AppendInt(v)
			continue
		}
		lb.Append([]byte(s))
	}
	return lb.Finish()
}

// payload seals a value of type t as a DUMP payload of version 12.
func payload(t byte, fill func(e *encoder)) []byte {
	e := encoder{}
	e.buf = append(e.buf, t)
	fill(&e)
	e.buf = binary.LittleEndian.AppendUint16(e.buf, VersionFieldTTLs)
	return appendCRC(e.buf)
}

// listpackEx is a type-25 value: the earliest TTL, then the listpack.
func listpackEx(minTTL uint64, lp []byte) func(e *encoder) {
	return func(e *encoder) {
		e.buf = binary.LittleEndian.AppendUint64(e.buf, minTTL)
		e.writeString(lp)
	}
}

// metadata is a type-24 (or 22 without minTTL) value of (ttl, field,
// value) triples, ttl as stored.
func metadata(minTTL *uint64, count int, triples ...any) func(e *encoder) {
	return func(e *encoder) {
		if minTTL != nil {
			e.buf = binary.LittleEndian.AppendUint64(e.buf, *minTTL)
		}
		e.writeLen(uint64(count))
		for i := 0; i+2 < len(triples); i += 3 {
			e.writeLen(triples[i].(uint64))
			e.writeString([]byte(triples[i+1].(string)))
			e.writeString([]byte(triples[i+2].(string)))
		}
	}
}

func u64(v uint64) *uint64 { return &v }

// TestFieldTTLsPreGA: the forms of 7.4's release candidates load with
// their TTLs: 23 is 25 without the header, 22 has absolute TTLs.
func TestFieldTTLsPreGA(t *testing.T) {
	e, err := Restore(payload(typeHashListpackExPreGA, func(e *encoder) {
		e.writeString(lpOf("a", "1", "#5000", "b", "2", "#0"))
	}), DefaultLoadOptions())
	require.NoError(t, err)
	checkTTLHash(t, "23", []fieldTTL{{"a", "1", 5000}, {"b", "2", 0}}, e.Obj().(*keyspace.Hash))
	assert.Equal(t, "listpack", encodingOf(e))

	e, err = Restore(payload(typeHashMetadataPreGA, metadata(nil, 2, uint64(7000), "a", "1", uint64(0), "b", "2")), DefaultLoadOptions())
	require.NoError(t, err)
	checkTTLHash(t, "22", []fieldTTL{{"a", "1", 7000}, {"b", "2", 0}}, e.Obj().(*keyspace.Hash))

	e, err = Restore(payload(typeHashMetadata, metadata(u64(7000), 2, uint64(1), "a", "1", uint64(11), "b", "2")), DefaultLoadOptions())
	require.NoError(t, err)
	checkTTLHash(t, "24", []fieldTTL{{"a", "1", 7000}, {"b", "2", 7010}}, e.Obj().(*keyspace.Hash))

	// No field with a TTL: a plain hash, as 7.4 would report it.
	e, err = Restore(payload(typeHashListpackEx, listpackEx(0, lpOf("a", "1", "#0"))), DefaultLoadOptions())
	require.NoError(t, err)
	assert.False(t, HasFieldTTLs(e))
	assert.Equal(t, "listpack", encodingOf(e))
}

// corruptTTLPayloads are malformed hashes with field TTLs, as DUMP
// payloads.
func corruptTTLPayloads() map[string][]byte {
	const max = fieldTTLMax
	return map[string][]byte{
		"lpex ttl order":        payload(typeHashListpackEx, listpackEx(0, lpOf("a", "1", "#200", "b", "2", "#100"))),
		"lpex ttl after none":   payload(typeHashListpackEx, listpackEx(0, lpOf("a", "1", "#0", "b", "2", "#100"))),
		"lpex ttl string":       payload(typeHashListpackEx, listpackEx(0, lpOf("a", "1", "soon"))),
		"lpex ttl negative":     payload(typeHashListpackEx, listpackEx(0, lpOf("a", "1", "#-1"))),
		"lpex ttl beyond 48bit": payload(typeHashListpackEx, listpackEx(0, lpOf("a", "1", "#"+strconv.FormatUint(max+1, 10)))),
		"lpex pairs":            payload(typeHashListpackEx, listpackEx(0, lpOf("a", "1", "#0", "b"))),
		"lpex duplicate":        payload(typeHashListpackEx, listpackEx(0, lpOf("a", "1", "#10", "a", "2", "#20"))),
		"lpex empty":            payload(typeHashListpackEx, listpackEx(0, lpOf())),
		"lpex bad listpack":     payload(typeHashListpackEx, listpackEx(0, []byte{1, 2, 3})),
		"lpex no header":        payload(typeHashListpackEx, func(e *encoder) { e.buf = append(e.buf, 1, 2) }),
		"lp23 ttl order":        payload(typeHashListpackExPreGA, func(e *encoder) { e.writeString(lpOf("a", "1", "#9", "b", "2", "#8")) }),
		"meta min invalid":      payload(typeHashMetadata, metadata(u64(max+2), 1, uint64(0), "a", "1")),
		"meta min none":         payload(typeHashMetadata, metadata(u64(max+1), 1, uint64(1), "a", "1")),
		"meta ttl beyond":       payload(typeHashMetadata, metadata(u64(max-1), 1, uint64(3), "a", "1")),
		"meta ttl wraps":        payload(typeHashMetadata, metadata(u64(5), 1, ^uint64(0), "a", "1")),
		"meta pre-ga beyond":    payload(typeHashMetadataPreGA, metadata(nil, 1, uint64(max+1), "a", "1")),
		"meta duplicate":        payload(typeHashMetadata, metadata(u64(9), 2, uint64(1), "a", "1", uint64(0), "a", "2")),
		"meta big duplicate":    payload(typeHashMetadata, metadata(u64(9), 600, append(bigTriples(599), uint64(0), "f0", "again")...)),
		"meta empty":            payload(typeHashMetadata, metadata(u64(9), 0)),
		"meta short":            payload(typeHashMetadata, metadata(u64(9), 3, uint64(1), "a", "1")),
		"meta huge count":       payload(typeHashMetadata, func(e *encoder) { e.buf = append(e.buf, make([]byte, 8)...); e.writeLen(1 << 62) }),
		"meta no header":        payload(typeHashMetadata, func(e *encoder) { e.buf = append(e.buf, 1, 2, 3) }),
	}
}

// TestFieldTTLsCorrupt: malformed hashes with field TTLs are refused,
// as 7.4's deep sanitization refuses them, without a panic.
func TestFieldTTLsCorrupt(t *testing.T) {
	for name, p := range corruptTTLPayloads() {
		_, err := Restore(p, DefaultLoadOptions())
		assert.ErrorIs(t, err, ErrBadDataFormat, name)
		// In a file: an error, or for an empty value a skipped key.
		file := append([]byte("REDIS0012"), p[0], 1, 'k')
		file = append(file, p[1:len(p)-10]...)
		file = append(file, opEOF, 0, 0, 0, 0, 0, 0, 0, 0)
		info, err := Load(bytes.NewReader(file), DefaultLoadOptions(), nil)
		if strings.HasSuffix(name, "empty") {
			require.NoError(t, err, name)
			assert.Equal(t, 1, info.EmptyKeysSkipped, name)
			continue
		}
		assert.Error(t, err, name)
		if testing.Verbose() {
			t.Logf("%s: %v", name, err)
		}
	}
}

func bigTriples(n int) []any {
	out := make([]any, 0, 3*n)
	for i := 0; i < n; i++ {
		out = append(out, uint64(i%2), "f"+strconv.Itoa(i), "v")
	}
	return out
}

// ttlDataset is a file of hashes with field TTLs beside other keys.
func ttlFile(t testing.TB, opt WriterOptions) []byte {
	opt.FieldTTLs = true
	var buf bytes.Buffer
	w, err := NewWriter(&buf, opt)
	require.NoError(t, err)
	hashes := ttlHashes()
	delete(hashes, "big") // the truncation tests cut at every byte
	require.NoError(t, w.SelectDB(0, len(hashes)+1, 0))
	for _, name := range sortedKeys(hashes) {
		require.NoError(t, w.WriteEntry(name, keyspace.NewObject(ttlHash(hashes[name]), 0)))
	}
	require.NoError(t, w.WriteEntry("s", keyspace.NewString([]byte("v"), 0)))
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// TestFieldTTLsTruncatedAndFlipped: a file with field TTLs cut at any
// byte is an error; with any byte flipped, an error (the checksum) and
// never a panic, also with the checksum off.
func TestFieldTTLsTruncatedAndFlipped(t *testing.T) {
	full := ttlFile(t, WriterOptions{Compress: true, Checksum: true})
	n, err := loadBytes(full)
	require.NoError(t, err)
	require.Equal(t, len(ttlHashes()), n)
	for cut := 0; cut < len(full); cut++ {
		_, err := loadBytes(full[:cut])
		require.Error(t, err, "cut at %d", cut)
		_, err = Load(onlyReader{bytes.NewReader(full[:cut])}, DefaultLoadOptions(), nil)
		require.Error(t, err, "stream cut at %d", cut)
	}
	for _, opt := range []WriterOptions{{Compress: true, Checksum: true}, {}} {
		full := ttlFile(t, opt)
		for i := 9; i < len(full); i++ {
			for _, x := range []byte{0x01, 0x80, 0xFF} {
				c := bytes.Clone(full)
				c[i] ^= x
				_, err := loadBytes(c)
				if opt.Checksum && i < len(full)-8 {
					assert.Error(t, err, "flip 0x%02x at %d", x, i)
				}
			}
		}
	}
	for name, fields := range ttlHashes() {
		if len(fields) > 100 {
			continue // cut at every byte: the small ones say it
		}
		p := Dump(keyspace.NewObject(ttlHash(fields), 0))
		body := p[:len(p)-10]
		for cut := 0; cut < len(body); cut++ {
			_, err := Restore(appendCRC(append(bytes.Clone(body[:cut]), 12, 0)), DefaultLoadOptions())
			require.Error(t, err, "%s cut at %d", name, cut)
		}
	}
}

// TestRestoreVersions: payloads of versions up to 12 are accepted (7.2's
// 11 included), 13 is not.
func TestRestoreVersions(t *testing.T) {
	p := Dump(keyspace.NewString([]byte("v"), 0))
	body := p[:len(p)-10]
	for v := 1; v <= 13; v++ {
		q := appendCRC(binary.LittleEndian.AppendUint16(bytes.Clone(body), uint16(v)))
		_, err := Restore(q, DefaultLoadOptions())
		if v <= MaxVersion {
			assert.NoError(t, err, "version %d", v)
		} else {
			assert.ErrorIs(t, err, ErrDumpPayload, "version %d", v)
		}
	}
	codes := DumpFunctions([]string{"#!lua name=x\nredis.register_function('f', function() return 1 end)"})
	q := appendCRC(binary.LittleEndian.AppendUint16(bytes.Clone(codes[:len(codes)-10]), 12))
	_, err := RestoreFunctions(q, false)
	assert.NoError(t, err)
}

// TestSetListpack: Redis 7.2's SET_LISTPACK loads as the set 7.0 would
// build: an intset for few integers, else a hashtable; duplicates and
// an empty listpack as 7.2 treats them.
func TestSetListpack(t *testing.T) {
	set := func(lp []byte) []byte {
		return payload(typeSetListpack, func(e *encoder) { e.writeString(lp) })
	}
	members := func(e *keyspace.Entry) []string {
		var out []string
		e.Obj().(*keyspace.Set).Each(func(m keyspace.Member) bool {
			out = append(out, m.String())
			return true
		})
		return out
	}
	e, err := Restore(set(lpOf("3", "1", "-2")), DefaultLoadOptions())
	require.NoError(t, err)
	assert.Equal(t, "intset", e.Encoding())
	assert.ElementsMatch(t, []string{"3", "1", "-2"}, members(e))

	e, err = Restore(set(lpOf("1", "a", "")), DefaultLoadOptions())
	require.NoError(t, err)
	assert.Equal(t, "hashtable", e.Encoding())
	assert.ElementsMatch(t, []string{"1", "a", ""}, members(e))

	opt := DefaultLoadOptions()
	opt.SetMaxIntsetEntries = 2
	e, err = Restore(set(lpOf("1", "2", "3")), opt)
	require.NoError(t, err)
	assert.Equal(t, "hashtable", e.Encoding())

	for name, lp := range map[string][]byte{"duplicate": lpOf("a", "b", "a"), "int duplicate": lpOf("7", "#7"), "empty": lpOf(), "bad": {9, 9}} {
		_, err := Restore(set(lp), DefaultLoadOptions())
		assert.ErrorIs(t, err, ErrBadDataFormat, name)
	}
}

// TestStreamListpacks3: Redis 7.2's stream type carries each consumer's
// active-time after its seen-time; it loads with the rest intact.
func TestStreamListpacks3(t *testing.T) {
	s := keyspace.NewStream()
	s.Append(keyspace.StreamID{Ms: 5, Seq: 1}, [][]byte{[]byte("f"), []byte("v")}, 4096, 100)
	g := s.CreateGroup([]byte("g"), keyspace.StreamID{Ms: 5, Seq: 1}, 1)
	c := g.CreateConsumer([]byte("alice"), 0)
	c.SeenTime = 1234
	require.True(t, g.LoadPending(&keyspace.StreamNACK{ID: keyspace.StreamID{Ms: 5, Seq: 1}, DeliveryTime: 99, DeliveryCount: 2}))
	g.LoadConsumerPending(c, keyspace.StreamID{Ms: 5, Seq: 1})
	p := Dump(keyspace.NewObject(s, 0))
	require.Equal(t, byte(typeStreamListpacks2), p[0])
	// The consumer's seen-time is the only 1234 of the payload: the
	// active-time goes right after it.
	seen := binary.LittleEndian.AppendUint64(nil, 1234)
	i := bytes.Index(p, seen)
	require.Positive(t, i)
	body := append(bytes.Clone(p[:i+8]), binary.LittleEndian.AppendUint64(nil, 5678)...)
	body = append(body, p[i+8:len(p)-10]...)
	body[0] = typeStreamListpacks3
	q := appendCRC(binary.LittleEndian.AppendUint16(body, 11))
	e, err := Restore(q, DefaultLoadOptions())
	require.NoError(t, err)
	got := e.Obj().(*keyspace.Stream)
	assert.Equal(t, uint64(1), got.Length())
	var names []string
	got.Groups(func(g *keyspace.StreamGroup) bool {
		g.Consumers(func(c *keyspace.StreamConsumer) bool {
			names = append(names, fmt.Sprintf("%s %d %d", c.Name, c.SeenTime, c.PendingCount()))
			return true
		})
		return true
	})
	assert.Equal(t, []string{"alice 1234 1"}, names)
	// Cut anywhere, it is an error.
	for cut := 0; cut < len(body); cut++ {
		_, err := Restore(appendCRC(append(bytes.Clone(body[:cut]), 11, 0)), DefaultLoadOptions())
		require.Error(t, err, "cut at %d", cut)
	}
}

// TestSlotInfoSkipped: the SLOT_INFO opcode of 7.4's cluster nodes is
// skipped, as 7.4 skips it outside cluster mode.
func TestSlotInfoSkipped(t *testing.T) {
	// SELECTDB 0, RESIZEDB 1 0, SLOT_INFO of slot 261 (a 14-bit
	// length) with one key and no deadline, then the key.
	file := []byte("REDIS0012\xfe\x00\xfb\x01\x00\xf4\x41\x05\x01\x00\x00\x01k\x01v\xff")
	file = append(file, make([]byte, 8)...)
	var keys []string
	_, err := Load(bytes.NewReader(file), DefaultLoadOptions(), func(_ int, k string, _ *keyspace.Entry) error {
		keys = append(keys, k)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"k"}, keys)
	_, err = loadBytes([]byte("REDIS0012\xf4\x01\x01"))
	assert.Error(t, err)
}

// TestCheckSubexpires: the checker counts the hashes with field TTLs of
// a version-12 file, as 7.4's redis-check-rdb does, and says nothing of
// them for an older file.
func TestCheckSubexpires(t *testing.T) {
	var out strings.Builder
	_, err := Check(bytes.NewReader(ttlFile(t, WriterOptions{Checksum: true})), "ttl.rdb", &out)
	require.NoError(t, err)
	assert.Contains(t, out.String(), "[info] 7 keys read\n[info] 0 expires\n[info] 0 already expired\n[info] 6 subexpires\n")
	out.Reset()
	_, err = Check(bytes.NewReader(fileBytes(t, smallDataset(), WriterOptions{Checksum: true})), "old.rdb", &out)
	require.NoError(t, err)
	assert.NotContains(t, out.String(), "subexpires")
}
