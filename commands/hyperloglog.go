package commands

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// HyperLogLog: PFADD PFCOUNT PFMERGE PFDEBUG PFSELFTEST (Redis
// hyperloglog.c). An HLL is an ordinary string holding Redis's exact
// layout, so that a value written by either server counts the same in the
// other: a 16-byte header ("HYLL", the encoding, three zero bytes, the
// cached cardinality little-endian with bit 63 set when stale), then
// 16384 registers of 6 bits, either dense (12288 bytes) or sparse
// (run-length opcodes ZERO, XZERO, VAL), sparse until a register passes
// 32 or the string would pass hll-sparse-max-bytes.
func init() {
	const hll = "@hyperloglog"
	register(
		&engine.Command{Name: "pfadd", Arity: -2, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write " + hll + " @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "hyperloglog", Run: pfaddCommand},
		&engine.Command{Name: "pfcount", Arity: -2, Flags: engine.ReadOnly, ACL: "@read " + hll + " @slow", FirstKey: 1, LastKey: -1, KeyStep: 1, Group: "hyperloglog", Run: pfcountCommand, FlagsFor: mayReplicate},
		&engine.Command{Name: "pfmerge", Arity: -2, Flags: engine.Write | engine.DenyOOM, ACL: "@write " + hll + " @slow", FirstKey: 1, LastKey: -1, KeyStep: 1, Group: "hyperloglog", Run: pfmergeCommand},
		&engine.Command{Name: "pfdebug", Arity: 3, Flags: engine.Write | engine.DenyOOM | engine.Admin, ACL: "@write " + hll + " @admin @slow @dangerous", FirstKey: 2, LastKey: 2, KeyStep: 1, Group: "hyperloglog", Run: pfdebugCommand},
		&engine.Command{Name: "pfselftest", Arity: 1, Flags: engine.Admin, ACL: hll + " @admin @slow @dangerous", Group: "hyperloglog", Run: pfselftestCommand},
	)
}

// mayReplicate adds may_replicate, which Redis 7.0 gives PFCOUNT (it may
// write the cached cardinality) without showing it in COMMAND: CLIENT
// PAUSE WRITE holds it.
func mayReplicate(_ *engine.Dispatcher, cmd *engine.Command, _ [][]byte) engine.Flag {
	return cmd.Flags | engine.MayReplicate
}

// Errors of hyperloglog.c.
const (
	errHLLWrongType = "WRONGTYPE Key is not a valid HyperLogLog string value."
	errHLLCorrupt   = "INVALIDOBJ Corrupted HLL object detected"
)

// The layout (hyperloglog.c's defines).
const (
	hllP         = 14
	hllQ         = 64 - hllP
	hllRegisters = 1 << hllP
	hllBits      = 6
	hllRegMax    = 1<<hllBits - 1
	hllHdrSize   = 16
	hllDenseSize = hllHdrSize + (hllRegisters*hllBits+7)/8
	hllDense     = 0
	hllSparse    = 1

	sparseValMaxValue = 32
	sparseValMaxLen   = 4
	sparseZeroMaxLen  = 64
	sparseXZeroMaxLen = 16384

	hllAlphaInf = 0.721347520444481703680 // 0.5/ln(2)
)

// Sparse opcodes: ZERO 00xxxxxx (1..64 zero registers), XZERO 01xxxxxx
// xxxxxxxx (1..16384), VAL 1vvvvvxx (1..4 registers of value 1..32).
func spIsZero(b byte) bool     { return b&0xc0 == 0 }
func spIsXZero(b byte) bool    { return b&0xc0 == 0x40 }
func spIsVal(b byte) bool      { return b&0x80 != 0 }
func spZeroLen(b byte) int     { return int(b&0x3f) + 1 }
func spXZeroLen(b, c byte) int { return (int(b&0x3f)<<8 | int(c)) + 1 }
func spValValue(b byte) int    { return int(b>>2&0x1f) + 1 }
func spValLen(b byte) int      { return int(b&0x3) + 1 }
func spVal(val, n int) byte    { return byte((val-1)<<2|(n-1)) | 0x80 }
func spZero(n int) byte        { return byte(n - 1) }
func spXZero(n int) (byte, byte) {
	l := n - 1
	return byte(l>>8) | 0x40, byte(l)
}

// murmurHash64A is Redis's endian-neutral MurmurHash2, 64-bit.
func murmurHash64A(key []byte, seed uint64) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := seed ^ uint64(len(key))*m
	n := len(key) &^ 7
	for i := 0; i < n; i += 8 {
		k := binary.LittleEndian.Uint64(key[i:])
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
	}
	tail := key[n:]
	switch len(tail) {
	case 7:
		h ^= uint64(tail[6]) << 48
		fallthrough
	case 6:
		h ^= uint64(tail[5]) << 40
		fallthrough
	case 5:
		h ^= uint64(tail[4]) << 32
		fallthrough
	case 4:
		h ^= uint64(tail[3]) << 24
		fallthrough
	case 3:
		h ^= uint64(tail[2]) << 16
		fallthrough
	case 2:
		h ^= uint64(tail[1]) << 8
		fallthrough
	case 1:
		h ^= uint64(tail[0])
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// hllPatLen is the register an element hashes to and the length of the
// 000..1 pattern that follows (hllPatLen).
func hllPatLen(ele []byte) (index int, count uint8) {
	hash := murmurHash64A(ele, 0xadc83b19)
	index = int(hash & (hllRegisters - 1))
	hash >>= hllP
	hash |= 1 << hllQ
	count = 1
	for bit := uint64(1); hash&bit == 0; bit <<= 1 {
		count++
	}
	return index, count
}

// denseGet and denseSet read and write register i of dense registers
// (HLL_DENSE_GET_REGISTER, HLL_DENSE_SET_REGISTER); the byte after the
// last register, which Redis finds in the string's terminator, reads as
// zero.
func denseGet(regs []byte, i int) uint8 {
	b := i * hllBits / 8
	fb := uint(i * hllBits & 7)
	b0 := uint(regs[b])
	var b1 uint
	if b+1 < len(regs) {
		b1 = uint(regs[b+1])
	}
	return uint8((b0>>fb | b1<<(8-fb)) & hllRegMax)
}

func denseSet(regs []byte, i int, v uint8) {
	b := i * hllBits / 8
	fb := uint(i * hllBits & 7)
	regs[b] &^= byte(hllRegMax << fb)
	regs[b] |= byte(uint(v) << fb)
	if b+1 < len(regs) {
		regs[b+1] &^= byte(hllRegMax >> (8 - fb))
		regs[b+1] |= byte(uint(v) >> (8 - fb))
	}
}

// denseSetMax raises register i to count (hllDenseSet): true if it did.
func denseSetMax(regs []byte, i int, count uint8) bool {
	if count > denseGet(regs, i) {
		denseSet(regs, i, count)
		return true
	}
	return false
}

// newHLL is an empty HLL, sparse (createHLLObject).
func newHLL() []byte {
	s := make([]byte, hllHdrSize, hllHdrSize+2*((hllRegisters+sparseXZeroMaxLen-1)/sparseXZeroMaxLen))
	copy(s, "HYLL")
	s[4] = hllSparse
	for left := hllRegisters; left > 0; {
		n := min(left, sparseXZeroMaxLen)
		b0, b1 := spXZero(n)
		s = append(s, b0, b1)
		left -= n
	}
	return s
}

// hllValid is isHLLObjectOrReply's test of a string's bytes.
func hllValid(s []byte) bool {
	if len(s) < hllHdrSize || string(s[:4]) != "HYLL" || s[4] > hllSparse {
		return false
	}
	return s[4] != hllDense || len(s) == hllDenseSize
}

// hllLookup reads key as an HLL: nil for a missing key; false after a
// WRONGTYPE reply.
func hllLookup(c *engine.Ctx, e *keyspace.Entry) ([]byte, bool) {
	if e == nil {
		return nil, true
	}
	if e.Type() != keyspace.TypeString {
		c.Error(engine.ErrWrongType)
		return nil, false
	}
	if !hllValid(e.Str()) {
		c.Error(errHLLWrongType)
		return nil, false
	}
	return e.Str(), true
}

func hllInvalidate(s []byte) { s[15] |= 0x80 }

// sparseToDense returns the dense form of a sparse HLL (hllSparseToDense);
// false when the opcodes do not cover exactly the 16384 registers.
func sparseToDense(s []byte) ([]byte, bool) {
	if s[4] == hllDense {
		return s, true
	}
	d := make([]byte, hllDenseSize)
	copy(d, s[:hllHdrSize])
	d[4] = hllDense
	regs := d[hllHdrSize:]
	idx, ok := sparseRuns(s[hllHdrSize:], func(first, n, v int) {
		for i := first; v > 0 && i < first+n; i++ {
			denseSet(regs, i, uint8(v))
		}
	})
	if !ok || idx != hllRegisters {
		return s, false
	}
	return d, true
}

// sparseSet raises register index of a sparse HLL to count
// (hllSparseSet), splitting the opcode that covers it and merging equal
// neighbours, or turning the HLL dense when count does not fit a VAL or
// the string would pass maxBytes. It returns the HLL (perhaps a new
// slice) and 1 when it changed, 0 when not, -1 for corrupt opcodes.
func sparseSet(s []byte, index int, count uint8, maxBytes int) ([]byte, int) {
	if count > sparseValMaxValue {
		return promote(s, index, count)
	}
	p, end := hllHdrSize, len(s)
	first, prev, span := 0, -1, 0
	for p < end {
		oplen := 1
		switch b := s[p]; {
		case spIsZero(b):
			span = spZeroLen(b)
		case spIsVal(b):
			span = spValLen(b)
		default:
			if p+1 >= end {
				return s, -1
			}
			span = spXZeroLen(b, s[p+1])
			oplen = 2
		}
		if index <= first+span-1 {
			break
		}
		prev = p
		p += oplen
		first += span
	}
	if span == 0 || p >= end {
		return s, -1
	}
	b := s[p]
	isZero, isXZero := spIsZero(b), spIsXZero(b)
	var runlen int
	switch {
	case isZero:
		runlen = spZeroLen(b)
	case isXZero:
		runlen = spXZeroLen(b, s[p+1])
	default:
		runlen = spValLen(b)
	}
	updated := false
	if !isZero && !isXZero {
		if spValValue(b) >= int(count) {
			return s, 0
		}
		if runlen == 1 {
			s[p] = spVal(int(count), 1)
			updated = true
		}
	}
	if !updated && isZero && runlen == 1 {
		s[p] = spVal(int(count), 1)
		updated = true
	}
	if !updated {
		var seq [5]byte
		n := 0
		last := first + span - 1
		zeros := func(l int) {
			if l > sparseZeroMaxLen {
				seq[n], seq[n+1] = spXZero(l)
				n += 2
			} else {
				seq[n] = spZero(l)
				n++
			}
		}
		if isZero || isXZero {
			if index != first {
				zeros(index - first)
			}
			seq[n] = spVal(int(count), 1)
			n++
			if index != last {
				zeros(last - index)
			}
		} else {
			cur := spValValue(b)
			if index != first {
				seq[n] = spVal(cur, index-first)
				n++
			}
			seq[n] = spVal(int(count), 1)
			n++
			if index != last {
				seq[n] = spVal(cur, last-index)
				n++
			}
		}
		oldlen := 1
		if isXZero {
			oldlen = 2
		}
		delta := n - oldlen
		if delta > 0 && len(s)+delta > maxBytes {
			return promote(s, index, count)
		}
		ns := make([]byte, 0, len(s)+delta+3)
		ns = append(ns, s[:p]...)
		ns = append(ns, seq[:n]...)
		ns = append(ns, s[p+oldlen:]...)
		s = ns
		end = len(s)
	}
	// Merge adjacent VALs of one value, from the opcode before the change,
	// over up to 5 opcodes.
	q := prev
	if q < 0 {
		q = hllHdrSize
	}
	for scan := 5; q < end && scan > 0; {
		scan--
		switch {
		case spIsXZero(s[q]):
			q += 2
			continue
		case spIsZero(s[q]):
			q++
			continue
		}
		if q+1 < end && spIsVal(s[q+1]) {
			v1, v2 := spValValue(s[q]), spValValue(s[q+1])
			if l := spValLen(s[q]) + spValLen(s[q+1]); v1 == v2 && l <= sparseValMaxLen {
				s[q+1] = spVal(v1, l)
				s = append(s[:q], s[q+1:]...)
				end--
				continue
			}
		}
		q++
	}
	hllInvalidate(s)
	return s, 1
}

// promote turns a sparse HLL dense, then raises register index to count.
func promote(s []byte, index int, count uint8) ([]byte, int) {
	d, ok := sparseToDense(s)
	if !ok {
		return s, -1
	}
	denseSetMax(d[hllHdrSize:], index, count)
	return d, 1
}

// sparseRuns walks sparse opcodes in order, calling fn with the first
// register, the number of registers and the value (0 for ZERO and XZERO)
// of each run. It returns the number of registers the opcodes cover, and
// false for an XZERO cut short or a VAL run past the last register (whose
// registers fn is not given; a ZERO run may pass it, and fn must not
// index registers for one).
func sparseRuns(ops []byte, fn func(first, n, val int)) (int, bool) {
	idx := 0
	for p := 0; p < len(ops); {
		b := ops[p]
		var n, v int
		switch {
		case spIsZero(b):
			n = spZeroLen(b)
			p++
		case spIsXZero(b):
			if p+1 >= len(ops) {
				return idx, false
			}
			n = spXZeroLen(b, ops[p+1])
			p += 2
		default:
			n, v = spValLen(b), spValValue(b)
			if n+idx > hllRegisters {
				return idx, false
			}
			p++
		}
		fn(idx, n, v)
		idx += n
	}
	return idx, true
}

// hllAdd adds ele to the HLL s (hllAdd): 1 when a register changed.
func hllAdd(s, ele []byte, maxBytes int) ([]byte, int) {
	index, count := hllPatLen(ele)
	switch s[4] {
	case hllDense:
		if denseSetMax(s[hllHdrSize:], index, count) {
			return s, 1
		}
		return s, 0
	case hllSparse:
		return sparseSet(s, index, count, maxBytes)
	}
	return s, -1
}

// hllHisto is the histogram of register values of s; false for sparse
// opcodes that do not cover 16384 registers.
func hllHisto(s []byte, histo *[64]int) bool {
	regs := s[hllHdrSize:]
	if s[4] == hllDense {
		for i := 0; i < hllRegisters; i++ {
			histo[denseGet(regs, i)]++
		}
		return true
	}
	idx, ok := sparseRuns(regs, func(_, n, v int) { histo[v] += n })
	return ok && idx == hllRegisters
}

// hllEstimate is hllCount's estimate from a register histogram (Ertl's
// estimator, as Redis 7.0).
func hllEstimate(histo *[64]int) uint64 {
	m := float64(hllRegisters)
	z := m * hllTau((m-float64(histo[hllQ+1]))/m)
	for j := hllQ; j >= 1; j-- {
		z += float64(histo[j])
		z *= 0.5
	}
	z += m * hllSigma(float64(histo[0])/m)
	return uint64(math.Round(hllAlphaInf * m * m / z))
}

func hllSigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		prev := z
		z += x * y
		y += y
		if prev == z {
			return z
		}
	}
}

func hllTau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		prev := z
		y *= 0.5
		z -= (1 - x) * (1 - x) * y
		if prev == z {
			return z / 3
		}
	}
}

// hllMerge raises max[i] to each register of s (hllMerge); false for
// corrupt sparse opcodes.
func hllMerge(max *[hllRegisters]uint8, s []byte) bool {
	regs := s[hllHdrSize:]
	if s[4] == hllDense {
		for i := range max {
			if v := denseGet(regs, i); v > max[i] {
				max[i] = v
			}
		}
		return true
	}
	i, ok := sparseRuns(regs, func(first, n, v int) {
		for j := first; v > 0 && j < first+n; j++ {
			max[j] = maxU8(max[j], uint8(v))
		}
	})
	return ok && i == hllRegisters
}

func maxU8(a, b uint8) uint8 {
	if a > b {
		return a
	}
	return b
}

func sparseMaxBytes(c *engine.Ctx) int { return int(c.Config().IntOf(hllSparseMaxBytes)) }

var hllSparseMaxBytes = config.KeyOf("hll-sparse-max-bytes")

// PFADD key [element ...]: 1 when the HLL was created or a register changed.
func pfaddCommand(c *engine.Ctx) {
	key := c.Args[1]
	e := c.DB.LookupWrite(key)
	s, ok := hllLookup(c, e)
	if !ok {
		return
	}
	updated := 0
	if e == nil {
		s = newHLL()
		updated++
	}
	maxBytes := sparseMaxBytes(c)
	for _, ele := range c.Args[2:] {
		var r int
		s, r = hllAdd(s, ele, maxBytes)
		switch r {
		case 1:
			updated++
		case -1:
			// What was added before the corrupt opcode stays, as in
			// Redis, which changes the string in place. (A new HLL is
			// never corrupt: e is set.)
			if e != nil {
				e.SetStr(s)
				e.MarkRaw()
			}
			c.Error(errHLLCorrupt)
			return
		}
	}
	if updated > 0 {
		hllInvalidate(s)
	}
	if e == nil {
		ne := keyspace.NewString(s, 0)
		ne.MarkRaw()
		c.DB.Put(key, ne)
		c.Notify(config.NotifyNew, "new", key)
	} else {
		e.SetStr(s)
		e.MarkRaw()
	}
	if updated > 0 {
		c.Dirty(updated)
		c.Notify(config.NotifyString, "pfadd", key)
		c.W.Int(1)
		return
	}
	c.W.Int(0)
}

// PFCOUNT key [key ...]: the estimate of one HLL, its cache updated (a
// write, propagated), or of the union of several.
func pfcountCommand(c *engine.Ctx) {
	if len(c.Args) > 2 {
		var max [hllRegisters]uint8
		for _, k := range c.Args[1:] {
			s, ok := hllLookup(c, c.DB.Lookup(k))
			if !ok {
				return
			}
			if s != nil && !hllMerge(&max, s) {
				c.Error(errHLLCorrupt)
				return
			}
		}
		var histo [64]int
		for _, v := range max {
			histo[v]++
		}
		c.W.Int(int64(hllEstimate(&histo)))
		return
	}
	s, ok := hllLookup(c, c.DB.Lookup(c.Args[1]))
	if !ok {
		return
	}
	if s == nil {
		c.W.Int(0)
		return
	}
	if s[15]&0x80 == 0 {
		c.W.Int(int64(binary.LittleEndian.Uint64(s[8:16])))
		return
	}
	var histo [64]int
	if !hllHisto(s, &histo) {
		c.Error(errHLLCorrupt)
		return
	}
	card := hllEstimate(&histo)
	e := c.DB.LookupWrite(c.Args[1])
	s = e.Str()
	binary.LittleEndian.PutUint64(s[8:16], card)
	e.MarkRaw()
	c.Dirty(1)
	c.W.Int(int64(card))
}

// PFMERGE destkey [sourcekey ...]: destkey (one of the sources) holds the
// union, dense when a source was.
func pfmergeCommand(c *engine.Ctx) {
	var max [hllRegisters]uint8
	useDense := false
	for _, k := range c.Args[1:] {
		s, ok := hllLookup(c, c.DB.Lookup(k))
		if !ok {
			return
		}
		if s == nil {
			continue
		}
		if s[4] == hllDense {
			useDense = true
		}
		if !hllMerge(&max, s) {
			c.Error(errHLLCorrupt)
			return
		}
	}
	key := c.Args[1]
	e := c.DB.LookupWrite(key)
	var s []byte
	if e == nil {
		s = newHLL()
	} else {
		s = e.Str()
	}
	if useDense {
		var ok bool
		if s, ok = sparseToDense(s); !ok {
			c.Error(errHLLCorrupt)
			return
		}
	}
	maxBytes := sparseMaxBytes(c)
	for j, v := range max {
		if v == 0 {
			continue
		}
		if s[4] == hllDense {
			denseSetMax(s[hllHdrSize:], j, v)
		} else {
			s, _ = sparseSet(s, j, v, maxBytes)
		}
	}
	hllInvalidate(s)
	if e == nil {
		ne := keyspace.NewString(s, 0)
		ne.MarkRaw()
		c.DB.Put(key, ne)
		c.Notify(config.NotifyNew, "new", key)
	} else {
		e.SetStr(s)
		e.MarkRaw()
	}
	c.Notify(config.NotifyString, "pfadd", key)
	c.Dirty(1)
	c.W.OK()
}

// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key
func pfdebugCommand(c *engine.Ctx) {
	sub := string(c.Args[1])
	key := c.Args[2]
	e := c.DB.LookupWrite(key)
	if e == nil {
		c.Error("ERR The specified key does not exist")
		return
	}
	s, ok := hllLookup(c, e)
	if !ok {
		return
	}
	e.MarkRaw()
	switch strings.ToLower(sub) {
	case "getreg":
		if s[4] == hllSparse {
			d, ok := sparseToDense(s)
			if !ok {
				c.Error(errHLLCorrupt)
				return
			}
			s = d
			e.SetStr(s)
			c.Dirty(1)
		}
		c.W.Array(hllRegisters)
		for i := 0; i < hllRegisters; i++ {
			c.W.Int(int64(denseGet(s[hllHdrSize:], i)))
		}
	case "decode":
		if s[4] != hllSparse {
			c.Error("ERR HLL encoding is not sparse")
			return
		}
		var b strings.Builder
		for p := hllHdrSize; p < len(s); {
			switch op := s[p]; {
			case spIsZero(op):
				fmt.Fprintf(&b, "z:%d ", spZeroLen(op))
				p++
			case spIsXZero(op):
				var next byte
				if p+1 < len(s) {
					next = s[p+1]
				}
				fmt.Fprintf(&b, "Z:%d ", spXZeroLen(op, next))
				p += 2
			default:
				fmt.Fprintf(&b, "v:%d,%d ", spValValue(op), spValLen(op))
				p++
			}
		}
		c.W.BulkString(strings.Trim(b.String(), " "))
	case "encoding":
		if s[4] == hllDense {
			c.W.Simple("dense")
		} else {
			c.W.Simple("sparse")
		}
	case "todense":
		if s[4] == hllSparse {
			d, ok := sparseToDense(s)
			if !ok {
				c.Error(errHLLCorrupt)
				return
			}
			e.SetStr(d)
			c.Dirty(1)
			c.W.Int(1)
			return
		}
		c.W.Int(0)
	default:
		c.Error("ERR Unknown PFDEBUG subcommand '" + sub + "'")
	}
}

// PFSELFTEST checks the register access and the estimate's error on
// dense and sparse HLLs (pfselftestCommand).
func pfselftestCommand(c *engine.Ctx) {
	regs := make([]byte, hllDenseSize-hllHdrSize)
	var want [hllRegisters]uint8
	for cycle := 0; cycle < 1000; cycle++ {
		for i := range want {
			want[i] = uint8(rand.IntN(hllRegMax + 1))
			denseSet(regs, i, want[i])
		}
		for i := range want {
			if v := denseGet(regs, i); v != want[i] {
				c.Error(fmt.Sprintf("TESTFAILED Register %d should be %d but is %d", i, want[i], v))
				return
			}
		}
	}
	dense := make([]byte, hllDenseSize)
	copy(dense, "HYLL")
	sparse := newHLL()
	maxBytes := sparseMaxBytes(c)
	relerr := 1.04 / math.Sqrt(hllRegisters)
	checkpoint := uint64(1)
	seed := rand.Uint64()
	var ele [8]byte
	count := func(s []byte) uint64 {
		var h [64]int
		hllHisto(s, &h)
		return hllEstimate(&h)
	}
	for j := uint64(1); j <= 10000000; j++ {
		binary.LittleEndian.PutUint64(ele[:], j^seed)
		hllAdd(dense, ele[:], maxBytes)
		sparse, _ = hllAdd(sparse, ele[:], maxBytes)
		if j != checkpoint {
			continue
		}
		if j < uint64(maxBytes)/2 && sparse[4] != hllSparse {
			c.Error("TESTFAILED sparse encoding not used")
			return
		}
		if count(dense) != count(sparse) {
			c.Error("TESTFAILED dense/sparse disagree")
			return
		}
		abserr := int64(checkpoint) - int64(count(dense))
		maxerr := int64(math.Ceil(relerr * 6 * float64(checkpoint)))
		if j == 10 {
			maxerr = 1
		}
		if abserr < 0 {
			abserr = -abserr
		}
		if abserr > maxerr {
			c.Error(fmt.Sprintf("TESTFAILED Too big error. card:%d abserr:%d", checkpoint, abserr))
			return
		}
		checkpoint *= 10
	}
	c.W.OK()
}
