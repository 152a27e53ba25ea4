package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// errEmptyKey marks a value with no elements, which Redis skips when it
// loads a file (older versions could write them) and refuses in RESTORE.
var errEmptyKey = errors.New("empty key")

// corrupt reports a structure that cannot be valid.
func corrupt(format string, args ...any) error { return fmt.Errorf(format, args...) }

// decoder reads values from a source.
type decoder struct {
	src *source
	opt LoadOptions
	// scratch buffers for elements handed to the keyspace (which copies).
	a, b, blob []byte
}

// readLen reads a length, or the special encoding when enc is set.
func (d *decoder) readLen() (n uint64, enc bool, err error) {
	c, err := d.src.readByte()
	if err != nil {
		return 0, false, err
	}
	switch c >> 6 {
	case lenEnc:
		return uint64(c & 0x3f), true, nil
	case len6Bit:
		return uint64(c & 0x3f), false, nil
	case len14Bit:
		c2, err := d.src.readByte()
		if err != nil {
			return 0, false, err
		}
		return uint64(c&0x3f)<<8 | uint64(c2), false, nil
	}
	switch c {
	case len32Bit:
		b, err := d.src.next(4)
		if err != nil {
			return 0, false, err
		}
		return uint64(binary.BigEndian.Uint32(b)), false, nil
	case len64Bit:
		b, err := d.src.next(8)
		if err != nil {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(b), false, nil
	}
	return 0, false, corrupt("Unknown length encoding %d in rdbLoadLen()", c>>6)
}

// readCount reads a plain length (an element count).
func (d *decoder) readCount() (uint64, error) {
	n, enc, err := d.readLen()
	if err == nil && enc {
		err = corrupt("unexpected string encoding %d where a length was expected", n)
	}
	return n, err
}

// readString appends the next string (raw, integer-encoded or LZF) to
// dst and returns it.
func (d *decoder) readString(dst []byte) ([]byte, error) {
	n, enc, err := d.readLen()
	if err != nil {
		return dst, err
	}
	if !enc {
		return d.src.appendN(dst, n)
	}
	switch n {
	case encInt8:
		c, err := d.src.readByte()
		return strconv.AppendInt(dst, int64(int8(c)), 10), err
	case encInt16:
		b, err := d.src.next(2)
		if err != nil {
			return dst, err
		}
		return strconv.AppendInt(dst, int64(int16(binary.LittleEndian.Uint16(b))), 10), nil
	case encInt32:
		b, err := d.src.next(4)
		if err != nil {
			return dst, err
		}
		return strconv.AppendInt(dst, int64(int32(binary.LittleEndian.Uint32(b))), 10), nil
	case encLZF:
		clen, err := d.readCount()
		if err != nil {
			return dst, err
		}
		ulen, err := d.readCount()
		if err != nil {
			return dst, err
		}
		if !d.src.fits(clen) {
			return dst, d.src.truncatedErr()
		}
		if clen == 0 || ulen > clen*lzfMaxRatio || ulen > math.MaxInt32*64 {
			return dst, errLZF
		}
		d.src.lzfInput, err = d.src.appendN(d.src.lzfInput[:0], clen)
		if err != nil {
			return dst, err
		}
		return lzfDecompress(dst, d.src.lzfInput, int(ulen))
	}
	return dst, corrupt("Unknown RDB string encoding type %d", n)
}

// readBinaryDouble reads a little-endian IEEE 754 double (ZSET_2).
func (d *decoder) readBinaryDouble() (float64, error) {
	b, err := d.src.next(8)
	if err != nil {
		return 0, err
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
}

// readTextDouble reads a double of the old ZSET type: a length byte
// (253 NaN, 254 +inf, 255 -inf) and that many characters.
func (d *decoder) readTextDouble() (float64, error) {
	c, err := d.src.readByte()
	if err != nil {
		return 0, err
	}
	switch c {
	case 253:
		return math.NaN(), nil
	case 254:
		return math.Inf(1), nil
	case 255:
		return math.Inf(-1), nil
	}
	b, err := d.src.next(int(c))
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return 0, corrupt("invalid double value %q", b)
	}
	return v, nil
}
