package tests

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// Bitmaps (SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD BITFIELD_RO)
// compared with redis-server: replies, errors, the strings they leave.

var bitmapCases = [][]string{
	{"SETBIT", "b", "7", "1"},
	{"SETBIT", "b", "7", "1"},
	{"SETBIT", "b", "7", "0"},
	{"SETBIT", "b", "100", "1"},
	{"GET", "b"},
	{"STRLEN", "b"},
	{"OBJECT", "ENCODING", "b"},
	{"GETBIT", "b", "100"},
	{"GETBIT", "b", "101"},
	{"GETBIT", "b", "100000"},
	{"GETBIT", "nokey", "3"},
	{"SETBIT", "b", "-1", "1"},
	{"SETBIT", "b", "x", "1"},
	{"SETBIT", "b", "4294967296", "1"},
	{"SETBIT", "b", "1", "2"},
	{"SETBIT", "b", "1", "-1"},
	{"SETBIT", "b", "1", "x"},
	{"SETBIT", "b", "#1", "1"},
	{"GETBIT", "b", "-1"},
	{"GETBIT", "b", "4294967296"},
	{"LPUSH", "list", "a"},
	{"SETBIT", "list", "1", "1"},
	{"GETBIT", "list", "1"},
	{"BITCOUNT", "list"},
	{"BITPOS", "list", "1"},
	{"BITFIELD", "list", "GET", "u8", "0"},
	{"BITOP", "AND", "d", "b", "list"},

	// Integers stored as such are read as their text.
	{"SET", "n", "123"},
	{"GETBIT", "n", "2"},
	{"BITCOUNT", "n"},
	{"BITPOS", "n", "1"},
	{"SETBIT", "n", "1", "1"},
	{"GET", "n"},
	{"OBJECT", "ENCODING", "n"},

	// BITCOUNT.
	{"SET", "s", "foobar"},
	{"BITCOUNT", "s"},
	{"BITCOUNT", "s", "0", "0"},
	{"BITCOUNT", "s", "1", "1"},
	{"BITCOUNT", "s", "1", "1", "BYTE"},
	{"BITCOUNT", "s", "5", "30", "BIT"},
	{"BITCOUNT", "s", "-3", "-1", "bit"},
	{"BITCOUNT", "s", "-1", "-3"},
	{"BITCOUNT", "s", "-100", "100"},
	{"BITCOUNT", "s", "3", "2"},
	{"BITCOUNT", "s", "0"},
	{"BITCOUNT", "s", "0", "1", "BOTH"},
	{"BITCOUNT", "s", "a", "1"},
	{"BITCOUNT", "s", "0", "1", "BIT", "x"},
	{"BITCOUNT", "nokey"},
	{"BITCOUNT", "nokey", "x"},
	{"SET", "e", ""},
	{"BITCOUNT", "e"},
	{"BITCOUNT", "e", "0", "-1", "BIT"},

	// BITPOS.
	{"SET", "p", "\xff\xf0\x00"},
	{"BITPOS", "p", "0"},
	{"BITPOS", "p", "1"},
	{"BITPOS", "p", "0", "2"},
	{"BITPOS", "p", "1", "2"},
	{"BITPOS", "p", "0", "0", "0"},
	{"BITPOS", "p", "0", "0", "-1"},
	{"BITPOS", "p", "1", "7", "15", "BIT"},
	{"BITPOS", "p", "0", "7", "15", "BIT"},
	{"BITPOS", "p", "0", "3", "9", "BIT"},
	{"BITPOS", "p", "1", "12", "-1", "BIT"},
	{"BITPOS", "p", "0", "0", "11", "BIT"},
	{"BITPOS", "p", "0", "0", "12", "BIT"},
	{"BITPOS", "p", "1", "-5", "-1", "bit"},
	{"BITPOS", "p", "0", "5"},
	{"BITPOS", "p", "2"},
	{"BITPOS", "p", "x"},
	{"BITPOS", "p", "1", "0", "1", "WORD"},
	{"BITPOS", "p", "1", "0", "1", "BIT", "x"},
	{"BITPOS", "nokey", "0"},
	{"BITPOS", "nokey", "1"},
	{"SET", "ones", "\xff\xff"},
	{"BITPOS", "ones", "0"},
	{"BITPOS", "ones", "0", "0"},
	{"BITPOS", "ones", "0", "0", "-1"},
	{"BITPOS", "ones", "0", "0", "15", "BIT"},
	{"BITPOS", "e", "0"},
	{"BITPOS", "e", "1"},

	// BITOP.
	{"SET", "x1", "\x0f\xf0abc"},
	{"SET", "x2", "\xff\x00a"},
	{"BITOP", "AND", "r", "x1", "x2"},
	{"GET", "r"},
	{"BITOP", "or", "r", "x1", "x2", "nokey"},
	{"GET", "r"},
	{"BITOP", "XOR", "r", "x1", "x2", "x1"},
	{"GET", "r"},
	{"BITOP", "NOT", "r", "x1"},
	{"GET", "r"},
	{"OBJECT", "ENCODING", "r"},
	{"BITOP", "NOT", "r", "x1", "x2"},
	{"BITOP", "NAND", "r", "x1"},
	{"EXPIRE", "r", "100"},
	{"BITOP", "AND", "r", "x1"},
	{"TTL", "r"},
	{"BITOP", "AND", "r", "nokey", "nokey2"},
	{"EXISTS", "r"},
	{"BITOP", "AND", "r", "nokey"},

	// BITFIELD.
	{"BITFIELD", "f", "SET", "i8", "0", "-100", "GET", "i8", "0", "GET", "u8", "0", "GET", "u4", "0", "GET", "i4", "4"},
	{"BITFIELD", "f", "INCRBY", "u2", "100", "1", "OVERFLOW", "SAT", "INCRBY", "u2", "102", "1"},
	{"BITFIELD", "f", "OVERFLOW", "WRAP", "INCRBY", "u8", "#1", "300", "INCRBY", "i8", "#2", "200"},
	{"BITFIELD", "f", "OVERFLOW", "SAT", "INCRBY", "u8", "#1", "300", "INCRBY", "i8", "#2", "200", "INCRBY", "i8", "#2", "-400"},
	{"BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "u8", "#1", "300", "SET", "i8", "#3", "200", "SET", "u8", "#3", "200"},
	{"BITFIELD", "f", "SET", "i64", "8", "-1", "GET", "i64", "8", "GET", "u63", "8", "INCRBY", "i64", "8", "-9223372036854775807"},
	{"BITFIELD", "f", "OVERFLOW", "SAT", "INCRBY", "i64", "8", "-9223372036854775807", "INCRBY", "i64", "8", "9223372036854775807", "INCRBY", "i64", "8", "9223372036854775807"},
	{"BITFIELD", "f", "OVERFLOW", "WRAP", "SET", "u63", "3", "-1", "GET", "u63", "3", "SET", "i1", "0", "1", "GET", "i1", "0"},
	{"GET", "f"},
	{"BITFIELD", "f", "GET", "u64", "0"},
	{"BITFIELD", "f", "GET", "i65", "0"},
	{"BITFIELD", "f", "GET", "i0", "0"},
	{"BITFIELD", "f", "GET", "x8", "0"},
	{"BITFIELD", "f", "GET", "i8", "-1"},
	{"BITFIELD", "f", "GET", "i8", "#-1"},
	{"BITFIELD", "f", "GET", "i8", "#x"},
	{"BITFIELD", "f", "SET", "i8", "0", "x"},
	{"BITFIELD", "f", "OVERFLOW", "MAYBE"},
	{"BITFIELD", "f", "OVERFLOW"},
	{"BITFIELD", "f", "GET", "i8"},
	{"BITFIELD", "f", "FOO", "i8", "0"},
	{"BITFIELD", "f"},
	{"BITFIELD", "nokey", "GET", "u8", "0", "GET", "i16", "#100"},
	{"EXISTS", "nokey"},
	{"BITFIELD", "g", "GET", "u8", "100000", "SET", "u8", "0", "0"},
	{"STRLEN", "g"},
	{"BITFIELD", "g", "SET", "u8", "0", "0"},
	{"BITFIELD_RO", "f", "GET", "i8", "0", "GET", "u4", "#3"},
	{"BITFIELD_RO", "f", "SET", "i8", "0", "1"},
	{"BITFIELD_RO", "f", "INCRBY", "i8", "0", "1"},
	{"BITFIELD_RO", "nokey", "GET", "i8", "0"},
	{"BITFIELD_RO", "f"},
	{"BITFIELD", "big", "SET", "u8", "4294967296", "1"},
	{"SETBIT", "big", "4294967296", "1"},
	{"CONFIG", "SET", "proto-max-bulk-len", "1000000"},
	{"SETBIT", "big", "8000000", "1"},
	{"SETBIT", "big", "7999999", "1"},
	{"STRLEN", "big"},
	{"CONFIG", "SET", "proto-max-bulk-len", "536870912"},
	{"DEL", "big"},
}

func TestBitmapDifferential(t *testing.T) {
	d := NewDiff(t)
	for _, c := range bitmapCases {
		d.Do(c...)
	}
}

// A random mix of bit writes and reads, on both servers: the same
// replies, and the same strings at the end.
func TestBitmapRandomDifferential(t *testing.T) {
	d := NewDiff(t)
	rng := rand.New(rand.NewPCG(7, 11))
	types := []string{"u1", "u3", "u8", "u13", "u31", "u63", "i1", "i5", "i8", "i16", "i33", "i64"}
	num := func() string {
		switch rng.IntN(4) {
		case 0:
			return strconv.FormatInt(rng.Int64(), 10)
		case 1:
			return strconv.FormatInt(-rng.Int64(), 10)
		default:
			return strconv.Itoa(rng.IntN(600) - 300)
		}
	}
	for i := 0; i < 600; i++ {
		key := "rb" + strconv.Itoa(rng.IntN(3))
		switch rng.IntN(6) {
		case 0:
			d.Do("SETBIT", key, strconv.Itoa(rng.IntN(300)), strconv.Itoa(rng.IntN(2)))
		case 1:
			d.Do("BITCOUNT", key, strconv.Itoa(rng.IntN(80)-40), strconv.Itoa(rng.IntN(80)-40), []string{"BIT", "BYTE"}[rng.IntN(2)])
		case 2:
			d.Do("BITPOS", key, strconv.Itoa(rng.IntN(2)), strconv.Itoa(rng.IntN(80)-40), strconv.Itoa(rng.IntN(80)-40), []string{"BIT", "BYTE"}[rng.IntN(2)])
		case 3:
			args := []string{"BITFIELD", key, "OVERFLOW", []string{"WRAP", "SAT", "FAIL"}[rng.IntN(3)]}
			for j := 0; j < 3; j++ {
				op := []string{"GET", "SET", "INCRBY"}[rng.IntN(3)]
				args = append(args, op, types[rng.IntN(len(types))], strconv.Itoa(rng.IntN(200)))
				if op != "GET" {
					args = append(args, num())
				}
			}
			d.Do(args...)
		case 4:
			d.Do("BITOP", []string{"AND", "OR", "XOR"}[rng.IntN(3)], "rbdst", "rb0", "rb1", "rb2")
			d.Do("GET", "rbdst")
		case 5:
			d.Do("BITPOS", key, strconv.Itoa(rng.IntN(2)))
		}
	}
	for i := 0; i < 3; i++ {
		d.Do("GET", "rb"+strconv.Itoa(i))
	}
}
