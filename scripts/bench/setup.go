package main

import (
	"fmt"
	"strconv"
	"strings"
)

// The collection tests' keys are redis-benchmark's own (myset, myhash,
// mylist; myzset for the custom ZADD and ZRANGEBYSCORE). Each test's
// setup puts its key into a fixed state before every run on either
// server, so a run measures the same work whatever ran before it and the
// two servers start every run from the same data.

// zrangeMembers is the size of myzset for ZRANGEBYSCORE: members
// element:0 .. element:99999 with score = N, so the range 0..1000 holds
// 1001 members and LIMIT 0 10 returns the first 10.
const zrangeMembers = 100000

// hgetallFields is the size of myhash for HGETALL: field:N -> value:N.
const hgetallFields = 10

// delKey returns a setup that deletes key: the test starts from nothing.
func delKey(key string) func(*rconn, int, int) error {
	return func(rc *rconn, _, _ int) error {
		_, err := rc.do("DEL", key)
		return err
	}
}

// loadScript caches body on the server (SCRIPT LOAD), for EVALSHA.
func loadScript(body string) func(*rconn, int, int) error {
	return func(rc *rconn, _, _ int) error {
		_, err := rc.do("SCRIPT", "LOAD", body)
		return err
	}
}

// fillKeys sets every key redis-benchmark's key:__rand_int__ can name
// under -r keyspaceSize (key:000000000000 .. key:000000099999) to a value
// of size bytes, so GET finds a value of the run's size and EXPIRE finds
// a key (SET also drops the TTL a previous EXPIRE run left).
func fillKeys(rc *rconn, _, size int) error {
	v := value(size)
	return rc.load(keyspaceSize, func(b []byte, i int) []byte {
		b = appendArray(b, 3)
		b = appendBulk(b, "SET")
		b = appendBulk(b, fmt.Sprintf("key:%012d", i))
		return appendBulk(b, v)
	})
}

// fillList leaves mylist holding exactly n elements of size bytes ("xxx"
// at redis-benchmark's default 3), so each of the n RPOPs of the run pops
// one.
func fillList(rc *rconn, n, size int) error {
	if _, err := rc.do("DEL", "mylist"); err != nil {
		return err
	}
	const per = 1000 // elements per RPUSH
	cmds := (n + per - 1) / per
	v := value(size)
	return rc.load(cmds, func(b []byte, i int) []byte {
		k := min(per, n-i*per)
		b = appendArray(b, 2+k)
		b = appendBulk(b, "RPUSH")
		b = appendBulk(b, "mylist")
		for j := 0; j < k; j++ {
			b = appendBulk(b, v)
		}
		return b
	})
}

// fillZset leaves myzset holding zrangeMembers members, each padded to
// size bytes when size is longer than its name.
func fillZset(rc *rconn, _, size int) error {
	if _, err := rc.do("DEL", "myzset"); err != nil {
		return err
	}
	const per = 1000
	return rc.load(zrangeMembers/per, func(b []byte, i int) []byte {
		b = appendArray(b, 2+2*per)
		b = appendBulk(b, "ZADD")
		b = appendBulk(b, "myzset")
		for j := i * per; j < (i+1)*per; j++ {
			b = appendBulkNum(b, "", j)
			b = appendBulk(b, pad(fmt.Sprintf("element:%d", j), size))
		}
		return b
	})
}

// fillHash leaves myhash holding hgetallFields fields with values of
// size bytes (value:N, padded when size is longer).
func fillHash(rc *rconn, _, size int) error {
	if _, err := rc.do("DEL", "myhash"); err != nil {
		return err
	}
	args := []string{"HSET", "myhash"}
	for i := 0; i < hgetallFields; i++ {
		args = append(args, fmt.Sprintf("field:%d", i), pad(fmt.Sprintf("value:%d", i), size))
	}
	_, err := rc.do(args...)
	return err
}

// pad returns s padded with 'x' to size bytes, or s when it is as long.
func pad(s string, size int) string {
	if len(s) >= size {
		return s
	}
	return s + strings.Repeat("x", size-len(s))
}

// fillStream leaves mystream holding n entries (field -> a value of size
// bytes) and a group g at its start, so each of the run's n XREADGROUP
// COUNT 1 calls delivers one new entry.
func fillStream(rc *rconn, n, size int) error {
	if _, err := rc.do("DEL", "mystream"); err != nil {
		return err
	}
	v := value(size)
	if err := rc.load(n, func(b []byte, i int) []byte {
		b = appendArray(b, 5)
		b = appendBulk(b, "XADD")
		b = appendBulk(b, "mystream")
		b = appendBulk(b, "*")
		b = appendBulk(b, "field")
		return appendBulk(b, v)
	}); err != nil {
		return err
	}
	_, err := rc.do("XGROUP", "CREATE", "mystream", "g", "0")
	return err
}

// fillBits leaves mybits a 1 kB bitmap with every seventh bit set.
func fillBits(rc *rconn, _, _ int) error {
	if _, err := rc.do("DEL", "mybits"); err != nil {
		return err
	}
	return rc.load(8192/7+1, func(b []byte, i int) []byte {
		b = appendArray(b, 4)
		b = appendBulk(b, "SETBIT")
		b = appendBulk(b, "mybits")
		b = appendBulkNum(b, "", i*7)
		return appendBulk(b, "1")
	})
}

// hllElements is the size of myhll for PFCOUNT: dense.
const hllElements = 10000

// fillHLL leaves myhll counting hllElements elements.
func fillHLL(rc *rconn, _, _ int) error {
	if _, err := rc.do("DEL", "myhll"); err != nil {
		return err
	}
	const per = 100
	return rc.load(hllElements/per, func(b []byte, i int) []byte {
		b = appendArray(b, 2+per)
		b = appendBulk(b, "PFADD")
		b = appendBulk(b, "myhll")
		for j := i * per; j < (i+1)*per; j++ {
			b = appendBulkNum(b, "element:", j)
		}
		return b
	})
}

// geoPoints is the size of mygeo for GEOSEARCH: points on a grid of
// about 0.02 degrees around Palermo (13.36, 38.11), 2 degrees wide.
const geoPoints = 10000

func fillGeo(rc *rconn, _, _ int) error {
	if _, err := rc.do("DEL", "mygeo"); err != nil {
		return err
	}
	const per = 100
	return rc.load(geoPoints/per, func(b []byte, i int) []byte {
		b = appendArray(b, 2+3*per)
		b = appendBulk(b, "GEOADD")
		b = appendBulk(b, "mygeo")
		for j := i * per; j < (i+1)*per; j++ {
			b = appendBulk(b, strconv.FormatFloat(12.36+float64(j%100)*0.02, 'f', 4, 64))
			b = appendBulk(b, strconv.FormatFloat(37.11+float64(j/100)*0.02, 'f', 4, 64))
			b = appendBulkNum(b, "place:", j)
		}
		return b
	})
}
