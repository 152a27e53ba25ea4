package tests

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// HyperLogLog compared with redis-server: the replies, the estimates and
// the very bytes of the strings (sparse and dense), so that a value
// written by one server counts the same in the other.

var hllCases = [][]string{
	{"PFADD", "h"},
	{"GET", "h"},
	{"PFADD", "h"},
	{"PFADD", "h", "a", "b", "c"},
	{"PFADD", "h", "a"},
	{"PFCOUNT", "h"},
	{"GET", "h"},
	{"PFCOUNT", "h"},
	{"PFCOUNT", "nokey"},
	{"PFCOUNT", "h", "nokey"},
	{"PFDEBUG", "ENCODING", "h"},
	{"PFDEBUG", "DECODE", "h"},
	{"PFADD", "h2", "c", "d", "e"},
	{"PFCOUNT", "h", "h2"},
	{"PFMERGE", "m", "h", "h2"},
	{"GET", "m"},
	{"PFCOUNT", "m"},
	{"PFMERGE", "m"},
	{"PFMERGE", "empty"},
	{"GET", "empty"},
	{"SET", "s", "not an hll at all"},
	{"PFADD", "s", "x"},
	{"PFCOUNT", "s"},
	{"PFCOUNT", "h", "s"},
	{"PFMERGE", "m", "s"},
	{"PFMERGE", "s", "h"},
	{"PFDEBUG", "ENCODING", "s"},
	{"LPUSH", "l", "x"},
	{"PFADD", "l", "x"},
	{"PFCOUNT", "l"},
	{"SET", "short", "HYLL"},
	{"PFCOUNT", "short"},
	{"PFDEBUG", "GETREG", "nokey"},
	{"PFDEBUG", "BOGUS", "nokey"},
	{"PFDEBUG", "BOGUS", "h"},
	{"PFDEBUG", "TODENSE", "h2"},
	{"PFDEBUG", "TODENSE", "h2"},
	{"PFDEBUG", "ENCODING", "h2"},
	{"PFDEBUG", "DECODE", "h2"},
	{"STRLEN", "h2"},
	{"PFCOUNT", "h2"},
	{"PFADD", "h2", "z"},
	{"GET", "h2"},
	{"PFMERGE", "h", "h2"},
	{"PFDEBUG", "ENCODING", "h"},
	{"GET", "h"},
	{"PFCOUNT", "h"},
	// A corrupt sparse HLL (a VAL running past the last register).
	{"SETRANGE", "bad", "0", "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff\x83"},
	{"PFCOUNT", "bad"},
	{"PFADD", "bad", "q"},
	{"PFCOUNT", "bad", "h"},
	{"PFDEBUG", "TODENSE", "bad"},
	{"PFDEBUG", "DECODE", "bad"},
	// Zero runs past the last register.
	{"SETRANGE", "bad2", "0", "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff\x7f\xff"},
	{"PFCOUNT", "bad2"},
	{"PFCOUNT", "bad2", "h"},
	{"PFMERGE", "bad2m", "bad2"},
	{"PFADD", "bad2", "x"},
	// A dense one of the wrong length.
	{"SETRANGE", "badd", "0", "HYLL\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80"},
	{"PFCOUNT", "badd"},
}

func TestHyperLogLogDifferential(t *testing.T) {
	d := NewDiff(t)
	for _, c := range hllCases {
		d.Do(c...)
	}
}

// Many elements: the sparse form grows until hll-sparse-max-bytes and
// turns dense; estimates, encodings and bytes match at every step, and a
// value copied from one server counts the same in the other.
func TestHyperLogLogGrowth(t *testing.T) {
	d := NewDiff(t)
	rng := rand.New(rand.NewPCG(9, 9))
	for _, key := range []string{"g1", "g2", "g3"} {
		n := 0
		for step := 0; step < 40; step++ {
			args := []string{"PFADD", key}
			for j := rng.IntN(300); j >= 0; j-- {
				args = append(args, "el:"+strconv.Itoa(rng.IntN(100000)))
				n++
			}
			d.Do(args...)
			d.Do("PFCOUNT", key)
			d.Do("PFDEBUG", "ENCODING", key)
			if step%10 == 0 {
				d.Do("GET", key)
			}
		}
		d.Do("GET", key)
	}
	d.Do("PFCOUNT", "g1", "g2", "g3")
	d.Do("PFMERGE", "gm", "g1", "g2")
	d.Do("GET", "gm")
	d.Do("PFCOUNT", "gm")
	d.Do("PFDEBUG", "GETREG", "g1")
	d.Do("GET", "g1")
	d.DoBoth("CONFIG", "SET", "hll-sparse-max-bytes", "100")
	d.Do("PFADD", "small", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r", "s")
	d.Do("PFDEBUG", "ENCODING", "small")
	d.Do("GET", "small")
	d.DoBoth("CONFIG", "SET", "hll-sparse-max-bytes", "3000")

	// A value written by one server, counted by the other.
	for _, key := range []string{"g1", "g3", "small"} {
		z, r := d.Z.Do("GET", key), d.R.Do("GET", key)
		_, zval, _ := strings.Cut(strings.TrimSuffix(z, "\r\n"), "\r\n")
		_, rval, _ := strings.Cut(strings.TrimSuffix(r, "\r\n"), "\r\n")
		d.Z.Do("SET", "from-redis", rval)
		d.R.Do("SET", "from-zredis", zval)
		if zc, rc := d.Z.Do("PFCOUNT", "from-redis"), d.R.Do("PFCOUNT", "from-zredis"); zc != rc {
			t.Errorf("%s: zredis counts redis-server's value %q, redis-server counts zredis's %q", key, zc, rc)
		}
	}
}

func TestHyperLogLogSelfTest(t *testing.T) {
	p := StartZredis(t)
	if got := Dial(t, p.Addr).Do("PFSELFTEST"); got != "+OK\r\n" {
		t.Fatalf("PFSELFTEST: %q", got)
	}
}
