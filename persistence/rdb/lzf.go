package rdb

import "errors"

// LZF, as Redis's lzf_c.c / lzf_d.c (HLOG 16, VERY_FAST): the compression
// RDB files use for strings longer than 20 bytes when rdbcompression is on.
//
// Compressed format, one instruction at a time:
//
//	000LLLLL <L+1 bytes>        literal run of L+1 bytes
//	LLLooooo oooooooo           back reference: copy L+2 bytes from o+1 back
//	111ooooo LLLLLLLL oooooooo  back reference: copy L+9 bytes from o+1 back

const (
	lzfHashLog = 16
	lzfHashLen = 1 << lzfHashLog
	lzfMaxLit  = 1 << 5
	lzfMaxOff  = 1 << 13
	lzfMaxRef  = (1 << 8) + (1 << 3)
	// lzfMaxRatio bounds how much one compressed byte can expand: a
	// 3-byte back reference yields at most 264 bytes.
	lzfMaxRatio = 88
)

var errLZF = errors.New("Invalid LZF compressed string")

// lzfCompressor holds the hash table of recent positions. Entries carry
// the epoch of the call that stored them, so the table is never cleared
// and a call only sees its own positions (deterministic output).
type lzfCompressor struct {
	tab   []uint64 // epoch<<32 | position
	epoch uint32
}

// compress appends the LZF form of in to dst, and reports false (dst
// unchanged) when it would not fit in maxOut bytes, which is how Redis
// decides that a string is not worth compressing.
func (c *lzfCompressor) compress(dst, in []byte, maxOut int) ([]byte, bool) {
	n := len(in)
	if n == 0 || maxOut <= 0 || n >= 1<<32-1 {
		return dst, false
	}
	if c.tab == nil {
		c.tab = make([]uint64, lzfHashLen)
	}
	c.epoch++
	if c.epoch == 0 {
		clear(c.tab)
		c.epoch = 1
	}
	ep := uint64(c.epoch) << 32
	base := len(dst)
	// One byte of slack, as Redis allocates: a literal run that ends
	// exactly at the limit opens the next run's header one byte past it
	// before the next check fails the call.
	grown := growLen(dst, maxOut+1)
	out := grown[base:]
	op := 0
	lit := 0
	op++ // start run
	ip := 0
	idx := func(h uint32) uint32 { return ((h >> (3*8 - lzfHashLog)) - h*5) & (lzfHashLen - 1) }
	hval := uint32(in[0])<<8 | uint32(safeAt(in, 1))
	for ip < n-2 {
		hval = hval<<8 | uint32(in[ip+2])
		slot := idx(hval)
		ent := c.tab[slot]
		c.tab[slot] = ep | uint64(ip)
		ref := -1
		if ent>>32 == uint64(c.epoch) {
			ref = int(uint32(ent))
		}
		if ref > 0 && ref < ip {
			off := ip - ref - 1
			// No "ip + 4 < in_end" here: Redis 7.0's lzf_c.c matches up
			// to the last byte.
			if off < lzfMaxOff && in[ref] == in[ip] && in[ref+1] == in[ip+1] && in[ref+2] == in[ip+2] {
				l := 2
				maxlen := n - ip - l
				if maxlen > lzfMaxRef {
					maxlen = lzfMaxRef
				}
				out[op-lit-1] = byte(lit - 1)
				if lit == 0 {
					op--
				}
				if op+3+1 >= maxOut {
					return dst, false
				}
				// lzf_c.c first compares 16 bytes unrolled when maxlen > 16,
				// without looking at maxlen, then goes on byte by byte
				// while len < maxlen: a match that reaches the end of the
				// input from 19 or 20 bytes before it is 2 or 1 byte longer
				// than maxlen. The output must be Redis's, so the same.
				mismatch := false
				if maxlen > 16 {
					for range 16 {
						l++
						if in[ref+l] != in[ip+l] {
							mismatch = true
							break
						}
					}
				}
				for !mismatch {
					l++
					if l >= maxlen || in[ref+l] != in[ip+l] {
						break
					}
				}
				l -= 2
				ip++
				if l < 7 {
					out[op] = byte(off>>8 + l<<5)
					op++
				} else {
					out[op] = byte(off>>8 + 7<<5)
					out[op+1] = byte(l - 7)
					op += 2
				}
				out[op] = byte(off)
				op++
				lit = 0
				op++ // start run
				ip += l + 1
				if ip >= n-2 {
					break
				}
				ip -= 2
				hval = uint32(in[ip])<<8 | uint32(in[ip+1])
				hval = hval<<8 | uint32(in[ip+2])
				c.tab[idx(hval)] = ep | uint64(ip)
				ip++
				hval = hval<<8 | uint32(in[ip+2])
				c.tab[idx(hval)] = ep | uint64(ip)
				ip++
				continue
			}
		}
		if op >= maxOut {
			return dst, false
		}
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == lzfMaxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	if op+3 > maxOut {
		return dst, false
	}
	for ip < n {
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == lzfMaxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	out[op-lit-1] = byte(lit - 1)
	if lit == 0 {
		op--
	}
	if op > maxOut {
		return dst, false
	}
	return grown[:base+op], true
}

func safeAt(b []byte, i int) byte {
	if i < len(b) {
		return b[i]
	}
	return 0
}

// growLen returns b extended to len(b)+n bytes (contents of the new
// bytes unspecified).
func growLen(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b[:len(b)+n]
	}
	nb := make([]byte, len(b)+n, len(b)+n+len(b)/4)
	copy(nb, b)
	return nb
}

// lzfDecompress appends the decompression of in to dst; the result must
// be exactly outLen bytes. Every reference is checked against the input
// and the output written so far.
func lzfDecompress(dst, in []byte, outLen int) ([]byte, error) {
	base := len(dst)
	dst = growLen(dst, outLen)
	out := dst[base:]
	ip, op := 0, 0
	for ip < len(in) {
		ctrl := int(in[ip])
		ip++
		if ctrl < 1<<5 {
			ctrl++
			if op+ctrl > outLen || ip+ctrl > len(in) {
				return dst[:base], errLZF
			}
			copy(out[op:], in[ip:ip+ctrl])
			op += ctrl
			ip += ctrl
			continue
		}
		l := ctrl >> 5
		ref := op - (ctrl&0x1f)<<8 - 1
		if ip >= len(in) {
			return dst[:base], errLZF
		}
		if l == 7 {
			l += int(in[ip])
			ip++
			if ip >= len(in) {
				return dst[:base], errLZF
			}
		}
		ref -= int(in[ip])
		ip++
		l += 2
		if op+l > outLen || ref < 0 {
			return dst[:base], errLZF
		}
		for i := 0; i < l; i++ { // overlapping copies repeat bytes
			out[op] = out[ref]
			op++
			ref++
		}
	}
	if op != outLen {
		return dst[:base], errLZF
	}
	return dst, nil
}
