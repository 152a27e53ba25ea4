package commands

import (
	"math"
	"math/bits"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// Bitmaps: SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD BITFIELD_RO (Redis
// bitops.c), on the ordinary string type. Bit 0 is the most significant
// bit of the first byte; a string grows, zero-filled, to the highest bit
// written, up to proto-max-bulk-len bytes; a missing key reads as zeros.
func init() {
	const bitmap = "@bitmap"
	register(
		&engine.Command{Name: "setbit", Arity: 4, Flags: engine.Write | engine.DenyOOM, ACL: "@write " + bitmap + " @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "bitmap", Run: setbitCommand},
		&engine.Command{Name: "getbit", Arity: 3, Flags: engine.ReadOnly | engine.Fast, ACL: "@read " + bitmap + " @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "bitmap", Run: getbitCommand},
		&engine.Command{Name: "bitcount", Arity: -2, Flags: engine.ReadOnly, ACL: "@read " + bitmap + " @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "bitmap", Run: bitcountCommand},
		&engine.Command{Name: "bitpos", Arity: -3, Flags: engine.ReadOnly, ACL: "@read " + bitmap + " @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "bitmap", Run: bitposCommand},
		&engine.Command{Name: "bitop", Arity: -4, Flags: engine.Write | engine.DenyOOM, ACL: "@write " + bitmap + " @slow", FirstKey: 2, LastKey: -1, KeyStep: 1, Group: "bitmap", Run: bitopCommand},
		&engine.Command{Name: "bitfield", Arity: -2, Flags: engine.Write | engine.DenyOOM, ACL: "@write " + bitmap + " @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "bitmap", Run: bitfieldCommand, KeyFlags: bitfieldKeyFlags},
		&engine.Command{Name: "bitfield_ro", Arity: -2, Flags: engine.ReadOnly | engine.Fast, ACL: "@read " + bitmap + " @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "bitmap", Run: bitfieldRoCommand},
	)
}

// bitfieldKeyFlags is BITFIELD's key access (db.c bitfieldGetKeys): read
// only when every subcommand is GET (or OVERFLOW); a SET, an INCRBY or a
// syntax error makes it a read-write access.
func bitfieldKeyFlags(args [][]byte, _ int) []string {
	for i := 2; i < len(args); i++ {
		rest := len(args) - i - 1
		switch a := args[i]; {
		case engine.EqualFold(a, "get") && rest >= 2:
			i += 2
		case engine.EqualFold(a, "overflow") && rest >= 1:
			i++
		default:
			return bitfieldKeyFlagsRW
		}
	}
	return bitfieldKeyFlagsRO
}

var (
	bitfieldKeyFlagsRO = []string{"RO", "access"}
	bitfieldKeyFlagsRW = []string{"RW", "access", "update"}
)

// Errors of bitops.c.
const (
	errBitOffset    = "ERR bit offset is not an integer or out of range"
	errBitValue     = "ERR bit is not an integer or out of range"
	errBitArg       = "ERR The bit argument must be 1 or 0."
	errBitopNot     = "ERR BITOP NOT must be called with a single source key."
	errBitfieldType = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."
	errOverflowType = "ERR Invalid OVERFLOW type specified"
	errBitfieldRO   = "ERR BITFIELD_RO only supports the GET subcommand"
)

// bitOffset parses a bit offset (getBitOffsetFromArgument): a non-negative
// integer, whose byte is below proto-max-bulk-len (but for the master's
// stream and the AOF); with width > 0, "#n" means n*width. false means
// the error reply was written.
func bitOffset(c *engine.Ctx, arg []byte, width int) (uint64, bool) {
	hash := width > 0 && len(arg) > 0 && arg[0] == '#'
	if hash {
		arg = arg[1:]
	}
	n, ok := engine.ParseInt(arg)
	if ok && hash {
		if n > math.MaxInt64/int64(width) || n < math.MinInt64/int64(width) {
			ok = false // Redis's multiplication wraps; any such offset is out of range
		} else {
			n *= int64(width)
		}
	}
	obey := c.Client.Master || c.Client.Replaying
	if !ok || n < 0 || !obey && n>>3 >= maxBulkLen(c) {
		c.Error(errBitOffset)
		return 0, false
	}
	return uint64(n), true
}

// lookupBitString looks key up for reading as a string: nil for a missing
// key; false after a WRONGTYPE reply.
func lookupBitString(c *engine.Ctx, key []byte) ([]byte, bool) {
	e := c.DB.Lookup(key)
	if e == nil {
		return nil, true
	}
	if e.Type() != keyspace.TypeString {
		c.Error(engine.ErrWrongType)
		return nil, false
	}
	return e.Str(), true
}

// stringForBits is lookupStringForBitCommand: key's string, made private
// for a change and grown (zero-filled) so that bit maxbit is in it; a
// missing key is created. grown reports a new key or a longer string.
// nil after a WRONGTYPE reply.
func stringForBits(c *engine.Ctx, key []byte, maxbit uint64) (e *keyspace.Entry, grown bool) {
	size := int(maxbit>>3) + 1
	e = c.DB.LookupWrite(key)
	if e == nil {
		ne := keyspace.NewString(make([]byte, size), 0)
		ne.MarkRaw()
		e = c.DB.Put(key, ne)
		c.Notify(config.NotifyNew, "new", key)
		return e, true
	}
	if e.Type() != keyspace.TypeString {
		c.Error(engine.ErrWrongType)
		return nil, false
	}
	cur := e.Str()
	if len(cur) < size {
		cur = append(cur, make([]byte, size-len(cur))...)
		grown = true
	}
	e.SetStr(cur)
	e.MarkRaw()
	return e, grown
}

// SETBIT key offset 0|1: the bit's previous value.
func setbitCommand(c *engine.Ctx) {
	off, ok := bitOffset(c, c.Args[2], 0)
	if !ok {
		return
	}
	on, ok := engine.ParseInt(c.Args[3])
	if !ok || on&^1 != 0 {
		c.Error(errBitValue)
		return
	}
	e, grown := stringForBits(c, c.Args[1], off)
	if e == nil {
		return
	}
	p := e.Str()
	byteIdx, mask := off>>3, byte(1)<<(7-off&7)
	old := p[byteIdx]&mask != 0
	if grown || old != (on == 1) {
		if on == 1 {
			p[byteIdx] |= mask
		} else {
			p[byteIdx] &^= mask
		}
		c.Dirty(1)
		c.Notify(config.NotifyString, "setbit", c.Args[1])
	}
	if old {
		c.W.Int(1)
	} else {
		c.W.Int(0)
	}
}

// GETBIT key offset
func getbitCommand(c *engine.Ctx) {
	off, ok := bitOffset(c, c.Args[2], 0)
	if !ok {
		return
	}
	p, ok := lookupBitString(c, c.Args[1])
	if !ok {
		return
	}
	if i := off >> 3; i < uint64(len(p)) && p[i]&(1<<(7-off&7)) != 0 {
		c.W.Int(1)
		return
	}
	c.W.Int(0)
}

// bitUnit reads BITCOUNT's and BITPOS's BIT|BYTE: true for BIT; false
// ok after the syntax error reply.
func bitUnit(c *engine.Ctx, a []byte) (isBit, ok bool) {
	switch {
	case engine.EqualFold(a, "bit"):
		return true, true
	case engine.EqualFold(a, "byte"):
		return false, true
	}
	c.Error(engine.ErrSyntax)
	return false, false
}

// bitRange resolves BITCOUNT's and BITPOS's start and end (byte or, with
// isBit, bit indexes, negative from the end) over a string of n bytes, as
// bitcountCommand: first and last bytes, and the masks of the bits of
// those bytes that are outside a bit range. start > end means empty.
func bitRange(start, end int64, n int64, isBit bool) (from, to int64, firstMask, lastMask byte) {
	total := n
	if isBit {
		total <<= 3
	}
	if start < 0 {
		start += total
	}
	if end < 0 {
		end += total
	}
	start, end = max(start, 0), max(end, 0)
	if end >= total {
		end = total - 1
	}
	if isBit && start <= end {
		firstMask = ^byte((1<<(8-start&7))-1) & 0xff
		lastMask = byte(1<<(7-end&7)) - 1
		start >>= 3
		end >>= 3
	}
	return start, end, firstMask, lastMask
}

// BITCOUNT key [start end [BYTE|BIT]]
func bitcountCommand(c *engine.Ctx) {
	// A missing key counts 0 before the arguments are read, as in Redis.
	e := c.DB.Lookup(c.Args[1])
	if e == nil {
		c.W.Int(0)
		return
	}
	if e.Type() != keyspace.TypeString {
		c.Error(engine.ErrWrongType)
		return
	}
	p := e.Str()
	var start, end int64
	var firstMask, lastMask byte
	switch len(c.Args) {
	case 2:
		start, end = 0, int64(len(p))-1
	case 4, 5:
		s, ok := c.IntArg(2)
		if !ok {
			return
		}
		e, ok := c.IntArg(3)
		if !ok {
			return
		}
		if s < 0 && e < 0 && s > e {
			c.W.Int(0)
			return
		}
		isBit := false
		if len(c.Args) == 5 {
			if isBit, ok = bitUnit(c, c.Args[4]); !ok {
				return
			}
		}
		start, end, firstMask, lastMask = bitRange(s, e, int64(len(p)), isBit)
	default:
		c.Error(engine.ErrSyntax)
		return
	}
	if start > end {
		c.W.Int(0)
		return
	}
	count := popcount(p[start : end+1])
	if firstMask != 0 {
		count -= bits.OnesCount8(p[start] & firstMask)
	}
	if lastMask != 0 {
		count -= bits.OnesCount8(p[end] & lastMask)
	}
	c.W.Int(int64(count))
}

// popcount counts the set bits of p.
func popcount(p []byte) int {
	n := 0
	for len(p) >= 8 {
		n += bits.OnesCount64(uint64(p[0]) | uint64(p[1])<<8 | uint64(p[2])<<16 | uint64(p[3])<<24 |
			uint64(p[4])<<32 | uint64(p[5])<<40 | uint64(p[6])<<48 | uint64(p[7])<<56)
		p = p[8:]
	}
	for _, b := range p {
		n += bits.OnesCount8(b)
	}
	return n
}

// bitpos is redisBitpos: the position of the first bit equal to bit in
// p; for 1, -1 when there is none; for 0, len(p)*8 when there is none
// (the string reads as zero-padded on the right).
func bitpos(p []byte, bit int) int64 {
	for i, b := range p {
		if bit == 1 && b != 0 {
			return int64(i)*8 + int64(bits.LeadingZeros8(b))
		}
		if bit == 0 && b != 0xff {
			return int64(i)*8 + int64(bits.LeadingZeros8(^b))
		}
	}
	if bit == 1 {
		return -1
	}
	return int64(len(p)) * 8
}

// BITPOS key bit [start [end [BYTE|BIT]]]
func bitposCommand(c *engine.Ctx) {
	bit, ok := c.IntArg(2)
	if !ok {
		return
	}
	if bit != 0 && bit != 1 {
		c.Error(errBitArg)
		return
	}
	e := c.DB.Lookup(c.Args[1])
	if e == nil {
		if bit == 1 {
			c.W.Int(-1)
		} else {
			c.W.Int(0)
		}
		return
	}
	if e.Type() != keyspace.TypeString {
		c.Error(engine.ErrWrongType)
		return
	}
	p := e.Str()
	n := int64(len(p))
	var start, end int64
	var firstMask, lastMask byte
	endGiven := false
	switch len(c.Args) {
	case 3:
		start, end = 0, n-1
	case 4, 5, 6:
		s, ok := c.IntArg(3)
		if !ok {
			return
		}
		isBit := false
		if len(c.Args) == 6 {
			if isBit, ok = bitUnit(c, c.Args[5]); !ok {
				return
			}
		}
		var e int64
		if len(c.Args) >= 5 {
			if e, ok = c.IntArg(4); !ok {
				return
			}
			endGiven = true
		} else if isBit {
			e = n<<3 + 7
		} else {
			e = n - 1
		}
		start, end, firstMask, lastMask = bitRange(s, e, n, isBit)
	default:
		c.Error(engine.ErrSyntax)
		return
	}
	if start > end {
		c.W.Int(-1)
		return
	}
	b := int(bit)
	bytes := end - start + 1
	var pos int64
	func() {
		if firstMask != 0 {
			var tmp byte
			if b == 1 {
				tmp = p[start] &^ firstMask
			} else {
				tmp = p[start] | firstMask
			}
			if lastMask != 0 && bytes == 1 {
				if b == 1 {
					tmp &^= lastMask
				} else {
					tmp |= lastMask
				}
			}
			pos = bitpos([]byte{tmp}, b)
			if bytes == 1 || pos != -1 && pos != 8 {
				return
			}
			start++
			bytes--
		}
		cur := bytes
		if lastMask != 0 {
			cur--
		}
		if cur > 0 {
			pos = bitpos(p[start:start+cur], b)
			if bytes == cur || pos != -1 && pos != cur<<3 {
				return
			}
			start += cur
			bytes -= cur
		}
		var tmp byte
		if b == 1 {
			tmp = p[end] &^ lastMask
		} else {
			tmp = p[end] | lastMask
		}
		pos = bitpos([]byte{tmp}, b)
	}()
	// With an explicit end, clear bits past the range do not count.
	if endGiven && b == 0 && pos == bytes<<3 {
		c.W.Int(-1)
		return
	}
	if pos != -1 {
		pos += start << 3
	}
	c.W.Int(pos)
}

// BITOP AND|OR|XOR|NOT destkey key [key ...]: the length of the result,
// stored as a new string (no deadline), or destkey deleted when it is
// empty.
func bitopCommand(c *engine.Ctx) {
	op := c.Args[1]
	switch {
	case engine.EqualFold(op, "and"), engine.EqualFold(op, "or"), engine.EqualFold(op, "xor"):
	case engine.EqualFold(op, "not"):
		if len(c.Args) != 4 {
			c.Error(errBitopNot)
			return
		}
	default:
		c.Error(engine.ErrSyntax)
		return
	}
	srcs := make([][]byte, 0, len(c.Args)-3)
	maxLen := 0
	for _, k := range c.Args[3:] {
		p, ok := lookupBitString(c, k)
		if !ok {
			return
		}
		srcs = append(srcs, p)
		maxLen = max(maxLen, len(p))
	}
	dst := c.Args[2]
	if maxLen == 0 {
		if c.DB.Delete(dst) {
			c.Dirty(1)
			c.Notify(config.NotifyGeneric, "del", dst)
		}
		c.W.Int(0)
		return
	}
	res := make([]byte, maxLen)
	at := func(p []byte, i int) byte {
		if i < len(p) {
			return p[i]
		}
		return 0
	}
	opc := op[0] | 0x20
	for i := range res {
		out := at(srcs[0], i)
		switch opc {
		case 'n':
			out = ^out
		case 'a':
			for _, p := range srcs[1:] {
				out &= at(p, i)
			}
		case 'o':
			for _, p := range srcs[1:] {
				out |= at(p, i)
			}
		case 'x':
			for _, p := range srcs[1:] {
				out ^= at(p, i)
			}
		}
		res[i] = out
	}
	fresh := c.Notifies(config.NotifyNew) && !c.DB.Exists(dst)
	e := keyspace.NewString(res, 0)
	e.MarkRaw()
	c.DB.Put(dst, e)
	c.Dirty(1)
	if fresh {
		c.Notify(config.NotifyNew, "new", dst) // setKey's dbAdd
	}
	c.Notify(config.NotifyString, "set", dst)
	c.W.Int(int64(maxLen))
}

// Overflow behaviours of BITFIELD.
const (
	overflowWrap = iota
	overflowSat
	overflowFail
)

// Operations of BITFIELD.
const (
	bfGet = iota
	bfSet
	bfIncrBy
)

type bitfieldOp struct {
	offset   uint64
	value    int64 // SET's value or INCRBY's increment
	op       int
	overflow int
	bits     int
	signed   bool
}

// bitfieldType parses i<bits> (1..64) or u<bits> (1..63).
func bitfieldType(c *engine.Ctx, arg []byte) (signed bool, width int, ok bool) {
	if len(arg) == 0 || arg[0] != 'i' && arg[0] != 'u' {
		c.Error(errBitfieldType)
		return false, 0, false
	}
	signed = arg[0] == 'i'
	n, ok := engine.ParseInt(arg[1:])
	if !ok || n < 1 || signed && n > 64 || !signed && n > 63 {
		c.Error(errBitfieldType)
		return false, 0, false
	}
	return signed, int(n), true
}

func bitfieldCommand(c *engine.Ctx)   { bitfield(c, false) }
func bitfieldRoCommand(c *engine.Ctx) { bitfield(c, true) }

// bitfield is BITFIELD key [GET type offset] [SET type offset value]
// [INCRBY type offset increment] [OVERFLOW WRAP|SAT|FAIL] ... and, with
// ro, BITFIELD_RO, which takes GET only (bitfieldGeneric).
func bitfield(c *engine.Ctx, ro bool) {
	var ops []bitfieldOp
	overflow := overflowWrap
	readOnly := true
	var highest uint64
	args := c.Args
	for j := 2; j < len(args); j++ {
		rest := len(args) - j - 1
		sub := args[j]
		var op int
		switch {
		case engine.EqualFold(sub, "get") && rest >= 2:
			op = bfGet
		case engine.EqualFold(sub, "set") && rest >= 3:
			op = bfSet
		case engine.EqualFold(sub, "incrby") && rest >= 3:
			op = bfIncrBy
		case engine.EqualFold(sub, "overflow") && rest >= 1:
			j++
			switch t := args[j]; {
			case engine.EqualFold(t, "wrap"):
				overflow = overflowWrap
			case engine.EqualFold(t, "sat"):
				overflow = overflowSat
			case engine.EqualFold(t, "fail"):
				overflow = overflowFail
			default:
				c.Error(errOverflowType)
				return
			}
			continue
		default:
			c.Error(engine.ErrSyntax)
			return
		}
		signed, width, ok := bitfieldType(c, args[j+1])
		if !ok {
			return
		}
		off, ok := bitOffset(c, args[j+2], width)
		if !ok {
			return
		}
		var v int64
		if op != bfGet {
			readOnly = false
			highest = max(highest, off+uint64(width)-1)
			if v, ok = c.IntArg(j + 3); !ok {
				return
			}
		}
		ops = append(ops, bitfieldOp{offset: off, value: v, op: op, overflow: overflow, bits: width, signed: signed})
		if op == bfGet {
			j += 2
		} else {
			j += 3
		}
	}
	var p []byte
	grown := false
	var e *keyspace.Entry
	if readOnly {
		var ok bool
		if p, ok = lookupBitString(c, c.Args[1]); !ok {
			return
		}
	} else {
		if ro {
			c.Error(errBitfieldRO)
			return
		}
		if e, grown = stringForBits(c, c.Args[1], highest); e == nil {
			return
		}
		p = e.Str()
	}
	c.W.Array(len(ops))
	changes := 0
	for _, o := range ops {
		if o.op == bfGet {
			var buf [9]byte
			i := o.offset >> 3
			for k := range buf {
				if i+uint64(k) >= uint64(len(p)) {
					break
				}
				buf[k] = p[i+uint64(k)]
			}
			rel := o.offset - i*8
			if o.signed {
				c.W.Int(getSignedBits(buf[:], rel, o.bits))
			} else {
				c.W.Int(int64(getUnsignedBits(buf[:], rel, o.bits)))
			}
			continue
		}
		if o.signed {
			old := getSignedBits(p, o.offset, o.bits)
			var val, ret int64
			var over int
			var wrapped int64
			if o.op == bfIncrBy {
				over, wrapped = signedOverflow(old, o.value, o.bits, o.overflow)
				val = old + o.value
				if over != 0 {
					val = wrapped
				}
				ret = val
			} else {
				val = o.value
				over, wrapped = signedOverflow(val, 0, o.bits, o.overflow)
				if over != 0 {
					val = wrapped
				}
				ret = old
			}
			if over != 0 && o.overflow == overflowFail {
				c.W.Null()
				continue
			}
			c.W.Int(ret)
			setBits(p, o.offset, o.bits, uint64(val))
			if grown || old != val {
				changes++
			}
			continue
		}
		old := getUnsignedBits(p, o.offset, o.bits)
		var val, ret uint64
		var over int
		var wrapped uint64
		if o.op == bfIncrBy {
			val = old + uint64(o.value)
			over, wrapped = unsignedOverflow(old, o.value, o.bits, o.overflow)
			if over != 0 {
				val = wrapped
			}
			ret = val
		} else {
			val = uint64(o.value)
			over, wrapped = unsignedOverflow(val, 0, o.bits, o.overflow)
			if over != 0 {
				val = wrapped
			}
			ret = old
		}
		if over != 0 && o.overflow == overflowFail {
			c.W.Null()
			continue
		}
		c.W.Int(int64(ret))
		setBits(p, o.offset, o.bits, val)
		if grown || old != val {
			changes++
		}
	}
	if changes > 0 {
		c.Dirty(changes)
		c.Notify(config.NotifyString, "setbit", c.Args[1])
	}
}

// getUnsignedBits reads width bits of p from bit offset, most significant
// first (getUnsignedBitfield).
func getUnsignedBits(p []byte, offset uint64, width int) uint64 {
	var v uint64
	for j := 0; j < width; j++ {
		b := p[offset>>3] >> (7 - offset&7) & 1
		v = v<<1 | uint64(b)
		offset++
	}
	return v
}

// getSignedBits is getUnsignedBits as a two's complement integer.
func getSignedBits(p []byte, offset uint64, width int) int64 {
	v := int64(getUnsignedBits(p, offset, width))
	if width < 64 && v&(1<<(width-1)) != 0 {
		v |= -1 << width
	}
	return v
}

// setBits writes the low width bits of v at bit offset (setUnsignedBitfield).
func setBits(p []byte, offset uint64, width int, v uint64) {
	for j := 0; j < width; j++ {
		bit := byte(v>>(width-1-j)) & 1
		shift := 7 - offset&7
		p[offset>>3] = p[offset>>3]&^(1<<shift) | bit<<shift
		offset++
	}
}

// unsignedOverflow is checkUnsignedBitfieldOverflow: 1 for an overflow,
// -1 for an underflow, 0 when value+incr fits in width bits; limit is
// what to store instead (wrapped, or saturated).
func unsignedOverflow(value uint64, incr int64, width, how int) (int, uint64) {
	maxv := uint64(1)<<width - 1
	maxIncr := int64(maxv - value)
	minIncr := -int64(value)
	wrap := func() uint64 { return (value + uint64(incr)) &^ (math.MaxUint64 << width) }
	switch {
	case value > maxv || incr > 0 && incr > maxIncr:
		if how == overflowWrap {
			return 1, wrap()
		}
		return 1, maxv
	case incr < 0 && incr < minIncr:
		if how == overflowWrap {
			return 1, wrap()
		}
		return -1, 0
	}
	return 0, 0
}

// signedOverflow is checkSignedBitfieldOverflow.
func signedOverflow(value, incr int64, width, how int) (int, int64) {
	maxv := int64(math.MaxInt64)
	if width < 64 {
		maxv = 1<<(width-1) - 1
	}
	minv := -maxv - 1
	maxIncr := int64(uint64(maxv) - uint64(value))
	minIncr := minv - value
	wrap := func() int64 {
		c := uint64(value) + uint64(incr)
		if width < 64 {
			mask := uint64(math.MaxUint64) << width
			if c&(1<<(width-1)) != 0 {
				c |= mask
			} else {
				c &^= mask
			}
		}
		return int64(c)
	}
	switch {
	case value > maxv || width != 64 && incr > maxIncr || value >= 0 && incr > 0 && incr > maxIncr:
		if how == overflowWrap {
			return 1, wrap()
		}
		return 1, maxv
	case value < minv || width != 64 && incr < minIncr || value < 0 && incr < 0 && incr < minIncr:
		if how == overflowWrap {
			return 1, wrap()
		}
		return -1, minv
	}
	return 0, 0
}
