package rdb

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zredis/zredis/keyspace"
)

// value is the expected content of one key.
type value struct {
	typ      keyspace.Type
	str      []byte
	list     [][]byte
	set      []string
	zset     map[string]float64
	hash     [][2]string // in insertion order
	expireAt int64       // Unix ms, 0 = none
}

// dataset is db -> key -> value.
type dataset map[int]map[string]value

func (ds dataset) put(db int, key string, v value) {
	if ds[db] == nil {
		ds[db] = map[string]value{}
	}
	ds[db][key] = v
}

func (ds dataset) count() int {
	n := 0
	for _, keys := range ds {
		n += len(keys)
	}
	return n
}

func seq(n int, f func(i int) string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func toBytes(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// makeDataset returns values of every type in their small and large
// encodings, with deadlines, several databases and binary keys.
func makeDataset(nowMs int64) dataset {
	rng := rand.New(rand.NewPCG(7, 8))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return b
	}
	ds := dataset{}
	str := func(s []byte) value { return value{typ: keyspace.TypeString, str: s} }
	ds.put(0, "empty", str([]byte{}))
	ds.put(0, "int small", str([]byte("123")))
	ds.put(0, "int negative", str([]byte("-5")))
	ds.put(0, "int 16", str([]byte("-30000")))
	ds.put(0, "int 32", str([]byte("2147483647")))
	ds.put(0, "int 64", str([]byte("9223372036854775807")))
	ds.put(0, "not int", str([]byte("007")))
	ds.put(0, "binary\x00key\xff", str([]byte("bin\x00\x01\x02\xff")))
	ds.put(0, "lzf", str(bytes.Repeat([]byte("compress me "), 20)))
	ds.put(0, "embstr", str([]byte("a string of forty bytes ..............")))
	ds.put(0, "random big", str(random(200000)))
	ds.put(0, "repetitive big", str(bytes.Repeat([]byte("0123456789"), 100000)))
	v := str([]byte("with ttl"))
	v.expireAt = nowMs + 3600_000
	ds.put(0, "ttl string", v)

	list := func(elems []string) value { return value{typ: keyspace.TypeList, list: toBytes(elems)} }
	ds.put(0, "list small", list([]string{"a", "1", "-200", "x y z", ""}))
	ds.put(0, "list ints", list(seq(300, func(i int) string { return strconv.Itoa(i*i*1000 - 50000) })))
	ds.put(0, "list long", list(seq(20000, func(i int) string { return fmt.Sprintf("element-%d", i) })))
	ds.put(0, "list big elements", list(seq(20, func(i int) string { return string(bytes.Repeat([]byte{byte('a' + i)}, 10000)) })))
	v = list([]string{"q1", "q2"})
	v.expireAt = nowMs + 7200_000
	ds.put(1, "ttl list", v)

	set := func(members []string) value { return value{typ: keyspace.TypeSet, set: members} }
	ds.put(0, "set intset", set([]string{"1", "2", "3", "-7"}))
	ds.put(0, "set intset 64", set([]string{"9223372036854775807", "-9223372036854775808", "0", "100000"}))
	ds.put(0, "set strings", set([]string{"a", "b", "c", ""}))
	ds.put(0, "set big ints", set(seq(1000, func(i int) string { return strconv.Itoa(i * 3) })))
	ds.put(0, "set big strings", set(seq(700, func(i int) string { return fmt.Sprintf("member:%d", i) })))

	zset := func(n int, f func(i int) (string, float64)) value {
		z := map[string]float64{}
		for i := 0; i < n; i++ {
			m, s := f(i)
			z[m] = s
		}
		return value{typ: keyspace.TypeZSet, zset: z}
	}
	ds.put(0, "zset small", zset(5, func(i int) (string, float64) { return "m" + strconv.Itoa(i), float64(i) * 1.5 }))
	ds.put(0, "zset special", value{typ: keyspace.TypeZSet, zset: map[string]float64{
		"inf": math.Inf(1), "-inf": math.Inf(-1), "tenth": 0.1, "big": 1e300, "neg": -12345.678, "int": 42, "zero": 0, "5": 5}})
	ds.put(0, "zset big", zset(300, func(i int) (string, float64) { return "member" + strconv.Itoa(i), float64(i%17) / 3 }))
	ds.put(0, "zset long member", zset(3, func(i int) (string, float64) { return string(bytes.Repeat([]byte{'m'}, 70+i)), float64(-i) }))
	v = zset(2, func(i int) (string, float64) { return strconv.Itoa(i), 1 })
	v.expireAt = nowMs + 60_000
	ds.put(2, "ttl zset", v)

	hash := func(n int, f func(i int) (string, string)) value {
		h := make([][2]string, n)
		for i := range h {
			h[i][0], h[i][1] = f(i)
		}
		return value{typ: keyspace.TypeHash, hash: h}
	}
	ds.put(0, "hash small", hash(4, func(i int) (string, string) { return "f" + strconv.Itoa(i), strconv.Itoa(i * 1000) }))
	ds.put(0, "hash ints", hash(10, func(i int) (string, string) { return strconv.Itoa(i), strconv.Itoa(-i) }))
	ds.put(0, "hash big", hash(1000, func(i int) (string, string) { return "field" + strconv.Itoa(i), "value" + strconv.Itoa(i) }))
	ds.put(0, "hash long value", hash(3, func(i int) (string, string) { return "f" + strconv.Itoa(i), string(bytes.Repeat([]byte{'v'}, 65+i)) }))
	ds.put(0, "hash binary", hash(2, func(i int) (string, string) { return "\x00" + strconv.Itoa(i), "\xff\x00" }))
	v = hash(1, func(int) (string, string) { return "lock", "owner" })
	v.expireAt = nowMs + 30_000
	ds.put(3, "ttl hash", v)
	v = hash(600, func(i int) (string, string) { return "k" + strconv.Itoa(i), "v" })
	v.expireAt = nowMs + 90_000
	ds.put(3, "ttl big hash", v)
	ds.put(15, "last db", str([]byte("x")))
	return ds
}

// fillRedis stores the dataset in a real Redis.
func fillRedis(t *testing.T, c *redis.Client, ds dataset) {
	ctx := context.Background()
	for db, keys := range ds {
		p := c.Pipeline()
		p.Select(ctx, db)
		for k, v := range keys {
			switch v.typ {
			case keyspace.TypeString:
				p.Set(ctx, k, v.str, 0)
			case keyspace.TypeList:
				for i := 0; i < len(v.list); i += 1000 {
					args := make([]any, 0, 1000)
					for _, e := range v.list[i:min(i+1000, len(v.list))] {
						args = append(args, e)
					}
					p.RPush(ctx, k, args...)
				}
			case keyspace.TypeSet:
				args := make([]any, len(v.set))
				for i, m := range v.set {
					args[i] = m
				}
				p.SAdd(ctx, k, args...)
			case keyspace.TypeZSet:
				zs := make([]redis.Z, 0, len(v.zset))
				for m, s := range v.zset {
					zs = append(zs, redis.Z{Member: m, Score: s})
				}
				p.ZAdd(ctx, k, zs...)
			case keyspace.TypeHash:
				args := make([]any, 0, 2*len(v.hash))
				for _, fv := range v.hash {
					args = append(args, fv[0], fv[1])
				}
				p.HSet(ctx, k, args...)
			}
			if v.expireAt != 0 {
				p.PExpireAt(ctx, k, timeMs(v.expireAt))
			}
		}
		_, err := p.Exec(ctx)
		require.NoError(t, err)
	}
}

// buildEntry makes the keyspace entry of a value as the commands would
// (encodings chosen with Redis's default thresholds).
func buildEntry(v value) *keyspace.Entry {
	switch v.typ {
	case keyspace.TypeList:
		l := keyspace.NewList()
		for _, e := range v.list {
			l.Push(false, e)
		}
		return keyspace.NewObject(l, v.expireAt)
	case keyspace.TypeSet:
		s := keyspace.NewSetFor([]byte(v.set[0]))
		for _, m := range v.set {
			s.Add([]byte(m), defaultSetMaxIntsetEntries)
		}
		return keyspace.NewObject(s, v.expireAt)
	case keyspace.TypeZSet:
		z := keyspace.NewZSet()
		for _, m := range sortedKeys(v.zset) {
			z.Grow(len(m), defaultZSetMaxListpackEntries, defaultZSetMaxListpackValue)
			z.Set([]byte(m), v.zset[m], false)
		}
		return keyspace.NewObject(z, v.expireAt)
	case keyspace.TypeHash:
		h := keyspace.NewHash()
		lim := keyspace.HashLimits{MaxEntries: defaultHashMaxListpackEntries, MaxValue: defaultHashMaxListpackValue}
		for _, fv := range v.hash {
			h.Set([]byte(fv[0]), []byte(fv[1]), lim)
		}
		return keyspace.NewObject(h, v.expireAt)
	}
	return keyspace.NewString(v.str, v.expireAt)
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// checkEntry compares a loaded entry with the expected value.
func checkEntry(t *testing.T, key string, want value, e *keyspace.Entry) {
	t.Helper()
	require.Equal(t, want.typ, e.Type(), key)
	assert.Equal(t, want.expireAt, e.ExpireAt(), "deadline of %q", key)
	switch want.typ {
	case keyspace.TypeString:
		assert.True(t, bytes.Equal(want.str, e.Str()), "string %q", key)
	case keyspace.TypeList:
		l := e.Obj().(*keyspace.List)
		var got [][]byte
		l.Each(0, false, func(_ int, v []byte) bool {
			got = append(got, bytes.Clone(v))
			return true
		})
		assert.Equal(t, want.list, got, "list %q", key)
	case keyspace.TypeSet:
		s := e.Obj().(*keyspace.Set)
		var got []string
		s.Each(func(m keyspace.Member) bool {
			got = append(got, m.String())
			return true
		})
		assert.ElementsMatch(t, want.set, got, "set %q", key)
	case keyspace.TypeZSet:
		z := e.Obj().(*keyspace.ZSet)
		got := map[string]float64{}
		z.Ascend(0, func(m string, s float64) bool {
			got[m] = s
			return true
		})
		assert.Equal(t, want.zset, got, "zset %q", key)
	case keyspace.TypeHash:
		h := e.Obj().(*keyspace.Hash)
		got := map[string]string{}
		h.Range(func(f, v []byte) bool {
			got[string(f)] = string(v)
			return true
		})
		wantMap := map[string]string{}
		for _, fv := range want.hash {
			wantMap[fv[0]] = fv[1]
		}
		assert.Equal(t, wantMap, got, "hash %q", key)
	}
}

// checkRedis compares the content of a real Redis with the dataset,
// and each key's OBJECT ENCODING with the encoding of the entry encs
// holds for it.
func checkRedis(t *testing.T, c *redis.Client, ds dataset, encs map[int]map[string]string) {
	ctx := context.Background()
	for db, keys := range ds {
		conn := c.Conn()
		require.NoError(t, conn.Select(ctx, db).Err())
		n, err := conn.DBSize(ctx).Result()
		require.NoError(t, err)
		assert.Equal(t, int64(len(keys)), n, "keys in db %d", db)
		for k, want := range keys {
			typ, err := conn.Type(ctx, k).Result()
			require.NoError(t, err)
			require.Equal(t, want.typ.String(), typ, k)
			switch want.typ {
			case keyspace.TypeString:
				got, err := conn.Get(ctx, k).Bytes()
				require.NoError(t, err)
				assert.True(t, bytes.Equal(want.str, got), "string %q", k)
			case keyspace.TypeList:
				got, err := conn.LRange(ctx, k, 0, -1).Result()
				require.NoError(t, err)
				wantS := make([]string, len(want.list))
				for i, e := range want.list {
					wantS[i] = string(e)
				}
				assert.Equal(t, wantS, got, "list %q", k)
			case keyspace.TypeSet:
				got, err := conn.SMembers(ctx, k).Result()
				require.NoError(t, err)
				assert.ElementsMatch(t, want.set, got, "set %q", k)
			case keyspace.TypeZSet:
				got, err := conn.ZRangeWithScores(ctx, k, 0, -1).Result()
				require.NoError(t, err)
				gotMap := map[string]float64{}
				for _, z := range got {
					gotMap[z.Member.(string)] = z.Score
				}
				assert.Equal(t, want.zset, gotMap, "zset %q", k)
			case keyspace.TypeHash:
				got, err := conn.HGetAll(ctx, k).Result()
				require.NoError(t, err)
				wantMap := map[string]string{}
				for _, fv := range want.hash {
					wantMap[fv[0]] = fv[1]
				}
				assert.Equal(t, wantMap, got, "hash %q", k)
			}
			at, err := conn.PExpireTime(ctx, k).Result()
			require.NoError(t, err)
			if want.expireAt == 0 {
				assert.Equal(t, int64(-1), int64(at), "deadline of %q", k)
			} else {
				assert.Equal(t, want.expireAt, at.Milliseconds(), "deadline of %q", k)
			}
			if encs != nil {
				enc, err := conn.ObjectEncoding(ctx, k).Result()
				require.NoError(t, err)
				assert.Equal(t, encs[db][k], enc, "OBJECT ENCODING %q", k)
			}
		}
		require.NoError(t, conn.Close())
	}
}

// entryOrder returns a dataset's databases in ascending order.
func dbOrder(ds dataset) []int {
	dbs := make([]int, 0, len(ds))
	for db := range ds {
		dbs = append(dbs, db)
	}
	slices.Sort(dbs)
	return dbs
}

func timeMs(ms int64) time.Time { return time.UnixMilli(ms) }
