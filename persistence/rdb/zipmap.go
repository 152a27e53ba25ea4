package rdb

import (
	"encoding/binary"
	"errors"
)

// Zipmap, the small hash encoding of Redis 2.x (zipmap.c), read from old
// RDB files only:
//
//	<count u8, 254 = unknown> (<len> field <len> <free u8> value <free bytes>)... 0xFF
//
// where <len> is one byte below 254, or 254 and a u32 LE.

var errZipmap = errors.New("zipmap integrity check failed")

// zipmapEach validates a zipmap and calls fn for each field and value.
func zipmapEach(zm []byte, fn func(f, v []byte) error) (int, error) {
	if len(zm) < 2 {
		return 0, errZipmap
	}
	want := int(zm[0])
	p, count := 1, 0
	readLen := func() (int, bool) {
		if p >= len(zm) {
			return 0, false
		}
		c := zm[p]
		if c < 254 {
			p++
			return int(c), true
		}
		if c != 254 || len(zm)-p < 5 {
			return 0, false
		}
		n := binary.LittleEndian.Uint32(zm[p+1:])
		p += 5
		if uint64(n) > uint64(len(zm)) {
			return 0, false
		}
		return int(n), true
	}
	for {
		if p >= len(zm) {
			return 0, errZipmap
		}
		if zm[p] == 0xFF {
			p++
			break
		}
		fl, ok := readLen()
		if !ok || len(zm)-p < fl {
			return 0, errZipmap
		}
		f := zm[p : p+fl : p+fl]
		p += fl
		vl, ok := readLen()
		if !ok || p >= len(zm) {
			return 0, errZipmap
		}
		free := int(zm[p])
		p++
		if len(zm)-p < vl+free {
			return 0, errZipmap
		}
		v := zm[p : p+vl : p+vl]
		p += vl + free
		if err := fn(f, v); err != nil {
			return 0, err
		}
		count++
	}
	if p != len(zm) || (want != 254 && want != count) {
		return 0, errZipmap
	}
	return count, nil
}
