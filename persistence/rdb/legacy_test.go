package rdb

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/redisconv"
)

// The encodings of Redis before 7.0 (ziplist, zipmap, quicklist of
// ziplists, linked list, text scores) are built here by hand, since
// Redis 7.0 no longer writes them; Redis 7.0 loading the same file is
// the reference.

// buildZiplist encodes elements as ziplist.c does.
func buildZiplist(elems []string) []byte {
	var body []byte
	prev, last := 0, 0
	for _, e := range elems {
		last = zlHeaderSize + len(body)
		start := len(body)
		if prev < 254 {
			body = append(body, byte(prev))
		} else {
			body = append(body, 0xFE)
			body = binary.LittleEndian.AppendUint32(body, uint32(prev))
		}
		if v, ok := redisconv.ParseInt([]byte(e)); ok {
			switch {
			case v >= 0 && v <= 12:
				body = append(body, 0xF1+byte(v))
			case v >= -128 && v <= 127:
				body = append(body, 0xFE, byte(v))
			case v >= -32768 && v <= 32767:
				body = append(body, 0xC0)
				body = binary.LittleEndian.AppendUint16(body, uint16(v))
			case v >= -(1<<23) && v < 1<<23:
				body = append(body, 0xF0, byte(v), byte(v>>8), byte(v>>16))
			case v >= -(1<<31) && v < 1<<31:
				body = append(body, 0xD0)
				body = binary.LittleEndian.AppendUint32(body, uint32(v))
			default:
				body = append(body, 0xE0)
				body = binary.LittleEndian.AppendUint64(body, uint64(v))
			}
		} else {
			n := len(e)
			switch {
			case n < 64:
				body = append(body, byte(n))
			case n < 16384:
				body = append(body, 0x40|byte(n>>8), byte(n))
			default:
				body = append(body, 0x80)
				body = binary.BigEndian.AppendUint32(body, uint32(n))
			}
			body = append(body, e...)
		}
		prev = len(body) - start
	}
	if len(elems) == 0 {
		last = zlHeaderSize
	}
	zl := binary.LittleEndian.AppendUint32(nil, uint32(zlHeaderSize+len(body)+1))
	zl = binary.LittleEndian.AppendUint32(zl, uint32(last))
	zl = binary.LittleEndian.AppendUint16(zl, uint16(len(elems)))
	zl = append(zl, body...)
	return append(zl, 0xFF)
}

// buildZipmap encodes field/value pairs as zipmap.c does.
func buildZipmap(pairs []string) []byte {
	zm := []byte{byte(len(pairs) / 2)}
	putLen := func(n int) {
		if n < 254 {
			zm = append(zm, byte(n))
		} else {
			zm = append(zm, 254)
			zm = binary.LittleEndian.AppendUint32(zm, uint32(n))
		}
	}
	for i := 0; i < len(pairs); i += 2 {
		putLen(len(pairs[i]))
		zm = append(zm, pairs[i]...)
		putLen(len(pairs[i+1]))
		zm = append(zm, 2) // two free bytes after the value
		zm = append(zm, pairs[i+1]...)
		zm = append(zm, 0, 0)
	}
	return append(zm, 0xFF)
}

// legacyFile builds a version-9 file with every pre-7.0 encoding; big
// adds values large enough to take the large encodings.
func legacyFile(nowMs int64, big bool) []byte {
	e := encoder{}
	e.buf = append(e.buf, "REDIS0009"...)
	e.buf = append(e.buf, opAux)
	e.writeString([]byte("redis-ver"))
	e.writeString([]byte("5.0.7"))
	e.buf = append(e.buf, opSelectDB, 0)
	key := func(t byte, k string) {
		e.buf = append(e.buf, t)
		e.writeString([]byte(k))
	}
	many := func(n int, f func(i int) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	key(typeList, "linked list")
	e.writeLen(3)
	for _, s := range []string{"a", "12", "ccc"} {
		e.writeString([]byte(s))
	}
	key(typeListZiplist, "ziplist list")
	e.writeString(buildZiplist([]string{"x", "0", "12", "13", "-100", "30000", "-8000000", "2000000000", "-9000000000000", "long" + string(bytes.Repeat([]byte("."), 300))}))
	key(typeListQuicklist, "quicklist v1")
	e.writeLen(3)
	e.writeString(buildZiplist(many(50, strconv.Itoa)))
	e.writeString(buildZiplist(nil)) // an empty node is skipped
	tail := []string{"tail"}
	if big {
		tail = append(tail, string(bytes.Repeat([]byte("y"), 20000)))
	}
	e.writeString(buildZiplist(tail))
	// Text scores, with an expiry in seconds.
	e.buf = append(e.buf, opExpireTime)
	e.buf = binary.LittleEndian.AppendUint32(e.buf, uint32(nowMs/1000+3600))
	key(typeZSet, "text zset")
	e.writeLen(4)
	for _, ms := range [][2]string{{"a", "1.5"}, {"b", "-3"}, {"c", "inf"}, {"d", "-inf"}} {
		e.writeString([]byte(ms[0]))
		switch ms[1] {
		case "inf":
			e.buf = append(e.buf, 254)
		case "-inf":
			e.buf = append(e.buf, 255)
		default:
			e.buf = append(e.buf, byte(len(ms[1])))
			e.buf = append(e.buf, ms[1]...)
		}
	}
	key(typeZSetZiplist, "ziplist zset")
	e.writeString(buildZiplist([]string{"one", "1", "two", "2.5", "three", "-7"}))
	if big {
		key(typeZSetZiplist, "ziplist zset big")
		e.writeString(buildZiplist(many(400, func(i int) string {
			if i%2 == 0 {
				return "m" + strconv.Itoa(i)
			}
			return strconv.Itoa(i)
		})))
	}
	key(typeHashZipmap, "zipmap hash")
	e.writeString(buildZipmap([]string{"f1", "v1", "f2", "22", "long", string(bytes.Repeat([]byte("z"), 70))}))
	key(typeHashZiplist, "ziplist hash")
	e.writeString(buildZiplist([]string{"name", "zredis", "n", "5", "neg", "-123456"}))
	if big {
		key(typeHashZiplist, "ziplist hash big")
		e.writeString(buildZiplist(many(1200, func(i int) string { return "h" + strconv.Itoa(i) })))
	}
	e.buf = append(e.buf, opEOF)
	return binary.LittleEndian.AppendUint64(e.buf, CRC64(e.buf))
}

// entryValue turns a loaded entry back into a value.
func entryValue(e *keyspace.Entry) value {
	v := value{typ: e.Type(), expireAt: e.ExpireAt()}
	switch o := e.Obj().(type) {
	case nil:
		v.str = e.Str()
	case *keyspace.List:
		o.Each(0, false, func(_ int, b []byte) bool {
			v.list = append(v.list, bytes.Clone(b))
			return true
		})
	case *keyspace.Set:
		o.Each(func(m keyspace.Member) bool {
			v.set = append(v.set, m.String())
			return true
		})
	case *keyspace.ZSet:
		v.zset = map[string]float64{}
		o.Ascend(0, func(m string, s float64) bool {
			v.zset[m] = s
			return true
		})
	case *keyspace.Hash:
		o.Range(func(f, val []byte) bool {
			v.hash = append(v.hash, [2]string{string(f), string(val)})
			return true
		})
	}
	return v
}

// TestLoadLegacyEncodings loads a file with the encodings of Redis 2.x
// to 6.x and checks that Redis 7.0, loading the same file, holds the
// same values, deadlines and encodings.
func TestLoadLegacyEncodings(t *testing.T) {
	dir := t.TempDir()
	now := time.Now().UnixMilli()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "old.rdb"), legacyFile(now, true), 0o644))
	info, got := loadAll(t, filepath.Join(dir, "old.rdb"), DefaultLoadOptions())
	assert.Equal(t, 9, info.Version)
	assert.Equal(t, 9, info.Keys)

	ds := dataset{}
	encs := map[int]map[string]string{0: {}}
	for k, e := range got[0] {
		ds.put(0, k, entryValue(e))
		encs[0][k] = e.Encoding()
	}
	assert.Equal(t, []string{"a", "12", "ccc"}, func() []string {
		var out []string
		for _, b := range ds[0]["linked list"].list {
			out = append(out, string(b))
		}
		return out
	}())
	assert.Equal(t, (now/1000+3600)*1000, ds[0]["text zset"].expireAt)
	assert.Equal(t, "hashtable", encs[0]["zipmap hash"], "a zipmap value longer than 64 bytes converts")
	assert.Equal(t, "skiplist", encs[0]["ziplist zset big"])
	assert.Len(t, ds[0]["quicklist v1"].list, 52)

	redisPath(t)
	r := startRedis(t, dir, "--dbfilename", "old.rdb")
	checkRedis(t, r.client, ds, encs)
}

// TestLegacyZiplistIntegrity checks that ziplist corruption is caught.
func TestLegacyZiplistIntegrity(t *testing.T) {
	zl := buildZiplist([]string{"a", "1000", string(bytes.Repeat([]byte("b"), 300)), "c"})
	n, err := zlEach(zl, nil)
	require.NoError(t, err)
	assert.Equal(t, 4, n)
	for i := 0; i < len(zl); i++ {
		_, err := zlEach(zl[:i], nil)
		assert.Error(t, err, "cut at %d", i)
		for _, x := range []byte{1, 0x80, 0xFF} {
			c := bytes.Clone(zl)
			c[i] ^= x
			_, _ = zlEach(c, nil) // must not panic
		}
	}
	_, err = zipmapEach(buildZipmap([]string{"f", "v"})[:4], func(f, v []byte) error { return nil })
	assert.Error(t, err)
}
