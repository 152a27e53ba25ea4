package rdb

import (
	"encoding/binary"
	"errors"
	"math"
)

// Intset (intset.c): <encoding u32 LE: 2, 4 or 8> <length u32 LE> then
// the integers in ascending order, little-endian, each of encoding bytes.

var errIntset = errors.New("intset integrity check failed")

// intsetDecode validates an intset as Redis's deep check does (a valid
// encoding, the size the length implies, not empty, strictly ascending)
// and returns its integers.
func intsetDecode(b []byte) ([]int64, error) {
	if len(b) < 8 {
		return nil, errIntset
	}
	enc := binary.LittleEndian.Uint32(b)
	n := uint64(binary.LittleEndian.Uint32(b[4:]))
	if enc != 2 && enc != 4 && enc != 8 {
		return nil, errIntset
	}
	if 8+n*uint64(enc) != uint64(len(b)) || n == 0 {
		return nil, errIntset
	}
	out := make([]int64, n)
	body := b[8:]
	for i := range out {
		switch enc {
		case 2:
			out[i] = int64(int16(binary.LittleEndian.Uint16(body[i*2:])))
		case 4:
			out[i] = int64(int32(binary.LittleEndian.Uint32(body[i*4:])))
		default:
			out[i] = int64(binary.LittleEndian.Uint64(body[i*8:]))
		}
		if i > 0 && out[i] <= out[i-1] {
			return nil, errIntset
		}
	}
	return out, nil
}

// intsetAppend appends the intset of the ascending integers vs to dst,
// in the smallest encoding that holds them all.
func intsetAppend(dst []byte, vs []int64) []byte {
	enc := uint32(2)
	if len(vs) > 0 {
		lo, hi := vs[0], vs[len(vs)-1]
		switch {
		case lo < math.MinInt32 || hi > math.MaxInt32:
			enc = 8
		case lo < math.MinInt16 || hi > math.MaxInt16:
			enc = 4
		}
	}
	dst = binary.LittleEndian.AppendUint32(dst, enc)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(vs)))
	for _, v := range vs {
		switch enc {
		case 2:
			dst = binary.LittleEndian.AppendUint16(dst, uint16(v))
		case 4:
			dst = binary.LittleEndian.AppendUint32(dst, uint32(v))
		default:
			dst = binary.LittleEndian.AppendUint64(dst, uint64(v))
		}
	}
	return dst
}
