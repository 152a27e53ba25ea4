package commands

import (
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// String commands: LCS (Redis t_string.c).
func init() {
	register(
		&engine.Command{Name: "lcs", Arity: -3, Flags: engine.ReadOnly, ACL: "@read @string @slow", FirstKey: 1, LastKey: 2, KeyStep: 1, Group: "string", Run: lcsCommand},
	)
}

// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN] (t_string.c
// lcsCommand): the longest common subsequence of two strings, missing
// keys counting as empty. Options are parsed after the type check, as in
// Redis. The dynamic-programming table is the one Redis builds, and its
// walk back from the end (ties go to j) decides which of several equally
// long subsequences and match ranges are reported, so it is followed
// step by step.
func lcsCommand(c *engine.Ctx) {
	ea, eb := c.DB.Lookup(c.Args[1]), c.DB.Lookup(c.Args[2])
	if (ea != nil && ea.Type() != keyspace.TypeString) || (eb != nil && eb.Type() != keyspace.TypeString) {
		c.Error(engine.ErrLCSNotString)
		return
	}
	var a, b []byte
	if ea != nil {
		a = ea.Str()
	}
	if eb != nil {
		b = eb.Str()
	}
	var getLen, getIdx, withMatchLen bool
	var minMatchLen int64
	for j := 3; j < len(c.Args); j++ {
		opt := c.Args[j]
		switch {
		case engine.EqualFold(opt, "idx"):
			getIdx = true
		case engine.EqualFold(opt, "len"):
			getLen = true
		case engine.EqualFold(opt, "withmatchlen"):
			withMatchLen = true
		case engine.EqualFold(opt, "minmatchlen") && j+1 < len(c.Args):
			n, ok := c.IntArg(j + 1)
			if !ok {
				return
			}
			minMatchLen = max(n, 0)
			j++
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	if getLen && getIdx {
		c.Error(engine.ErrLCSLenAndIdx)
		return
	}
	if uint64(len(a)) >= 1<<32-2 || uint64(len(b)) >= 1<<32-2 {
		c.Error(engine.ErrLCSTooLong)
		return
	}
	alen, blen := len(a), len(b)
	cells := uint64(alen+1) * uint64(blen+1)
	if cells > 1<<61 {
		c.Error(engine.ErrLCSAlloc)
		return
	}
	if limit := maxBulkLen(c); limit >= 0 && cells*4 > uint64(limit) {
		c.Error(engine.ErrLCSMemory)
		return
	}
	if getLen {
		c.W.Int(int64(lcsLength(a, b)))
		return
	}

	w := blen + 1 // LCS(i,j) = lcs[i*w+j]: a[:i] against b[:j]
	lcs := make([]uint32, cells)
	for i := 1; i <= alen; i++ {
		row, prev := lcs[i*w:(i+1)*w], lcs[(i-1)*w:i*w]
		for j := 1; j <= blen; j++ {
			if a[i-1] == b[j-1] {
				row[j] = prev[j-1] + 1
			} else {
				row[j] = max(prev[j], row[j-1])
			}
		}
	}
	total := lcs[alen*w+blen]
	result := make([]byte, total)
	idx := int(total)

	mark, ranges := 0, 0
	if getIdx {
		c.W.Map(2)
		c.W.BulkString("matches")
		mark = c.W.DeferArray()
	}
	// aStart == alen means no range is open.
	aStart, aEnd, bStart, bEnd := alen, 0, 0, 0
	for i, j := alen, blen; i > 0 && j > 0; {
		emit := false
		if a[i-1] == b[j-1] {
			result[idx-1] = a[i-1]
			switch {
			case aStart == alen:
				aStart, aEnd, bStart, bEnd = i-1, i-1, j-1, j-1
			case aStart == i && bStart == j: // contiguous: extend backward
				aStart--
				bStart--
			default:
				emit = true
			}
			if aStart == 0 || bStart == 0 {
				emit = true // the walk ends on the next step
			}
			idx--
			i--
			j--
		} else {
			if lcs[(i-1)*w+j] > lcs[i*w+j-1] {
				i--
			} else {
				j--
			}
			if aStart != alen {
				emit = true
			}
		}
		if emit {
			matchLen := aEnd - aStart + 1
			if getIdx && (minMatchLen == 0 || int64(matchLen) >= minMatchLen) {
				if withMatchLen {
					c.W.Array(3)
				} else {
					c.W.Array(2)
				}
				c.W.Array(2)
				c.W.Int(int64(aStart))
				c.W.Int(int64(aEnd))
				c.W.Array(2)
				c.W.Int(int64(bStart))
				c.W.Int(int64(bEnd))
				if withMatchLen {
					c.W.Int(int64(matchLen))
				}
				ranges++
			}
			aStart = alen
		}
	}
	if getIdx {
		c.W.FillArray(mark, ranges)
		c.W.BulkString("len")
		c.W.Int(int64(total))
		return
	}
	c.W.Bulk(result)
}

// lcsLength is the length of the longest common subsequence of a and b,
// in two rows of the table (LCS ... LEN needs no walk back).
func lcsLength(a, b []byte) uint32 {
	prev := make([]uint32, len(b)+1)
	row := make([]uint32, len(b)+1)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			if a[i-1] == b[j-1] {
				row[j] = prev[j-1] + 1
			} else {
				row[j] = max(prev[j], row[j-1])
			}
		}
		prev, row = row, prev
	}
	return prev[len(b)]
}
