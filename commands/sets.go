package commands

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/sds"
)

// Set commands (Redis t_set.c).
func init() {
	register(
		&engine.Command{Name: "sadd", Arity: -3, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @set @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "set", Run: saddCommand},
		&engine.Command{Name: "srem", Arity: -3, Flags: engine.Write | engine.Fast, ACL: "@write @set @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "set", Run: sremCommand},
		&engine.Command{Name: "smove", Arity: 4, Flags: engine.Write | engine.Fast, ACL: "@write @set @fast", FirstKey: 1, LastKey: 2, KeyStep: 1, Group: "set", Run: smoveCommand},
		&engine.Command{Name: "sismember", Arity: 3, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @set @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "set", Run: sismemberCommand},
		&engine.Command{Name: "smismember", Arity: -3, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @set @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "set", Run: smismemberCommand},
		&engine.Command{Name: "scard", Arity: 2, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @set @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "set", Run: scardCommand},
		&engine.Command{Name: "spop", Arity: -2, Flags: engine.Write | engine.Fast, ACL: "@write @set @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "set", Run: spopCommand},
		&engine.Command{Name: "srandmember", Arity: -2, Flags: engine.ReadOnly, ACL: "@read @set @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "set", Run: srandmemberCommand},
		&engine.Command{Name: "smembers", Arity: 2, Flags: engine.ReadOnly, ACL: "@read @set @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "set", Run: sinterCommand},
		&engine.Command{Name: "sinter", Arity: -2, Flags: engine.ReadOnly, ACL: "@read @set @slow", FirstKey: 1, LastKey: -1, KeyStep: 1, Group: "set", Run: sinterCommand},
		&engine.Command{Name: "sintercard", Arity: -3, Flags: engine.ReadOnly, ACL: "@read @set @slow", Group: "set", Run: sintercardCommand, Keys: sintercardKeys},
		&engine.Command{Name: "sinterstore", Arity: -3, Flags: engine.Write | engine.DenyOOM, ACL: "@write @set @slow", FirstKey: 1, LastKey: -1, KeyStep: 1, Group: "set", Run: sinterstoreCommand},
		&engine.Command{Name: "sunion", Arity: -2, Flags: engine.ReadOnly, ACL: "@read @set @slow", FirstKey: 1, LastKey: -1, KeyStep: 1, Group: "set", Run: sunionCommand},
		&engine.Command{Name: "sunionstore", Arity: -3, Flags: engine.Write | engine.DenyOOM, ACL: "@write @set @slow", FirstKey: 1, LastKey: -1, KeyStep: 1, Group: "set", Run: sunionstoreCommand},
		&engine.Command{Name: "sdiff", Arity: -2, Flags: engine.ReadOnly, ACL: "@read @set @slow", FirstKey: 1, LastKey: -1, KeyStep: 1, Group: "set", Run: sdiffCommand},
		&engine.Command{Name: "sdiffstore", Arity: -3, Flags: engine.Write | engine.DenyOOM, ACL: "@write @set @slow", FirstKey: 1, LastKey: -1, KeyStep: 1, Group: "set", Run: sdiffstoreCommand},
		&engine.Command{Name: "sscan", Arity: -3, Flags: engine.ReadOnly, ACL: "@read @set @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "set", Run: sscanCommand},
	)
}

// sintercardKeys is SINTERCARD's key positions: numkeys keys from
// argument 2, none when numkeys is not a valid count.
func sintercardKeys(args [][]byte) []int {
	n, ok := engine.ParseInt(args[1])
	if !ok || n < 1 || n > int64(len(args)-2) {
		return nil
	}
	pos := make([]int, n)
	for i := range pos {
		pos[i] = 2 + i
	}
	return pos
}

var setMaxIntsetEntries = config.KeyOf("set-max-intset-entries")

// maxIntset is set-max-intset-entries.
func maxIntset(c *engine.Ctx) int {
	n := c.Config().IntOf(setMaxIntsetEntries)
	if n > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(n)
}

// lookupSet finds the set at key for reading. ok=false means the key
// holds another type and WRONGTYPE was replied; a missing key is a nil
// set with ok=true.
func lookupSet(c *engine.Ctx, key []byte) (*keyspace.Set, bool) {
	e := c.DB.Lookup(key)
	if e == nil {
		return nil, true
	}
	if e.Type() != keyspace.TypeSet {
		c.Error(engine.ErrWrongType)
		return nil, false
	}
	return e.Obj().(*keyspace.Set), true
}

// lookupSetWrite is lookupSet for an in-place change: the set returned
// is private to the live keyspace.
func lookupSetWrite(c *engine.Ctx, key []byte) (*keyspace.Set, bool) {
	e := c.DB.LookupWrite(key)
	if e == nil {
		return nil, true
	}
	if e.Type() != keyspace.TypeSet {
		c.Error(engine.ErrWrongType)
		return nil, false
	}
	return e.Obj().(*keyspace.Set), true
}

// writeMember writes one member as a bulk string.
func writeMember(c *engine.Ctx, m keyspace.Member) {
	if m.IsInt {
		c.W.BulkInt(m.Int)
		return
	}
	c.W.BulkString(m.Str)
}

// writeSetMembers replies with every member of s as a set, in s's
// iteration order (ascending for an intset, as Redis).
func writeSetMembers(c *engine.Ctx, s *keyspace.Set) {
	c.W.Set(s.Len())
	s.Each(func(m keyspace.Member) bool {
		writeMember(c, m)
		return true
	})
}

// ---- SADD SREM SMOVE -----------------------------------------------------

// setAdd stores a new set under key (setTypeCreate then dbAdd), with the
// "new" event dbAdd sends.
func setAdd(c *engine.Ctx, key []byte, first []byte) *keyspace.Set {
	s := keyspace.NewSetFor(first)
	c.DB.PutObject(key, s)
	c.Notify(config.NotifyNew, "new", key)
	return s
}

// setDeleteIfEmpty removes key once its set is empty, with the "del"
// event that follows the command's own (Redis never keeps an empty set).
func setDeleteIfEmpty(c *engine.Ctx, key []byte, s *keyspace.Set) {
	if s.Len() == 0 {
		c.DB.Delete(key)
		c.Notify(config.NotifyGeneric, "del", key)
	}
}

// saddCommand is SADD key member [member ...]: "sadd" when a member was
// added.
func saddCommand(c *engine.Ctx) {
	key := c.Args[1]
	s, ok := lookupSetWrite(c, key)
	if !ok {
		return
	}
	if s == nil {
		s = setAdd(c, key, c.Args[2])
	}
	maxIS := maxIntset(c)
	added := 0
	for _, m := range c.Args[2:] {
		if s.Add(m, maxIS) {
			added++
		}
	}
	if added > 0 {
		c.Notify(config.NotifySet, "sadd", key)
	}
	c.Dirty(added)
	c.W.Int(int64(added))
}

// sremCommand is SREM key member [member ...]: "srem" when a member was
// removed, then "del" when the set went with it.
func sremCommand(c *engine.Ctx) {
	key := c.Args[1]
	s, ok := lookupSetWrite(c, key)
	if !ok {
		return
	}
	removed := 0
	if s != nil {
		for _, m := range c.Args[2:] {
			if s.Remove(m) {
				removed++
				if s.Len() == 0 {
					break
				}
			}
		}
		if removed > 0 {
			c.Notify(config.NotifySet, "srem", key)
			setDeleteIfEmpty(c, key, s)
		}
	}
	c.Dirty(removed)
	c.W.Int(int64(removed))
}

// smoveCommand is SMOVE source destination member: 1 when member was
// moved (or, with source = destination, is a member), 0 otherwise. A
// missing source answers 0 before the destination's type is checked.
// Events, as t_set.c orders them: "srem" on the source, "del" if it went,
// "new" if the destination is created, "sadd" if member was not in it.
func smoveCommand(c *engine.Ctx) {
	srcKey, dstKey, m := c.Args[1], c.Args[2], c.Args[3]
	// Both keys are looked up first, as lookupKeyWrite does: lazy expiry
	// of either, no keyspace hit or miss, no keymiss event. The
	// destination is only read here: it is changed (and its WATCHers
	// told) only if the member is not in it already.
	srcE := c.DB.LookupWrite(srcKey)
	dstE := c.DB.LookupWriteRead(dstKey)
	if srcE == nil {
		c.W.Int(0)
		return
	}
	if srcE.Type() != keyspace.TypeSet || (dstE != nil && dstE.Type() != keyspace.TypeSet) {
		c.Error(engine.ErrWrongType)
		return
	}
	src := srcE.Obj().(*keyspace.Set)
	var dst *keyspace.Set
	if dstE != nil {
		dst = dstE.Obj().(*keyspace.Set)
	}
	if string(srcKey) == string(dstKey) {
		if src.Has(m) {
			c.W.Int(1)
		} else {
			c.W.Int(0)
		}
		return
	}
	if !src.Remove(m) {
		c.W.Int(0)
		return
	}
	c.Notify(config.NotifySet, "srem", srcKey)
	setDeleteIfEmpty(c, srcKey, src)
	if dst == nil {
		dst = setAdd(c, dstKey, m)
	} else if !dst.Has(m) {
		dst, _ = lookupSetWrite(c, dstKey)
	}
	c.Dirty(1)
	if dst.Add(m, maxIntset(c)) {
		c.Dirty(1)
		c.Notify(config.NotifySet, "sadd", dstKey)
	}
	c.W.Int(1)
}

// ---- SISMEMBER SMISMEMBER SCARD -----------------------------------------

func sismemberCommand(c *engine.Ctx) {
	s, ok := lookupSet(c, c.Args[1])
	if !ok {
		return
	}
	if s != nil && s.Has(c.Args[2]) {
		c.W.Int(1)
		return
	}
	c.W.Int(0)
}

func smismemberCommand(c *engine.Ctx) {
	s, ok := lookupSet(c, c.Args[1])
	if !ok {
		return
	}
	c.W.Array(len(c.Args) - 2)
	for _, m := range c.Args[2:] {
		if s != nil && s.Has(m) {
			c.W.Int(1)
		} else {
			c.W.Int(0)
		}
	}
}

func scardCommand(c *engine.Ctx) {
	s, ok := lookupSet(c, c.Args[1])
	if !ok {
		return
	}
	if s == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(s.Len()))
}

// ---- SPOP SRANDMEMBER ----------------------------------------------------

// spopMoveStrategyMul: when fewer than count/5 members would remain,
// SPOP keeps random survivors in a new set instead of drawing the popped
// ones (Redis's SPOP_MOVE_STRATEGY_MUL). The survivors' new set starts
// in the encoding Redis gives it, so OBJECT ENCODING agrees afterwards.
const spopMoveStrategyMul = 5

// spopCommand is SPOP key [count]. Without count: one random member, or
// null. With count (Redis 7.0): a set reply of min(count, size) distinct
// members; the key is deleted when emptied. Either form sends one "spop"
// event, then "del" when the set went. Replication (SREM per member, DEL
// when emptied) is the propagation layer's concern.
func spopCommand(c *engine.Ctx) {
	if len(c.Args) > 3 {
		c.Error(engine.ErrSyntax)
		return
	}
	key := c.Args[1]
	if len(c.Args) == 3 {
		spopWithCount(c, key)
		return
	}
	s, ok := lookupSetWrite(c, key)
	if !ok {
		return
	}
	if s == nil {
		c.W.Null()
		return
	}
	m := s.Random()
	writeMember(c, m)
	s.RemoveMember(m)
	propagateSpop(c, key, m) // SREM key member
	c.Notify(config.NotifySet, "spop", key)
	setDeleteIfEmpty(c, key, s)
	c.Dirty(1)
}

func spopWithCount(c *engine.Ctx, key []byte) {
	n, ok := engine.ParseInt(c.Args[2])
	if !ok || n < 0 {
		c.Error(engine.ErrCountPositive)
		return
	}
	s, ok := lookupSetWrite(c, key)
	if !ok {
		return
	}
	if s == nil || n == 0 {
		c.W.Set(0)
		return
	}
	size := int64(s.Len())
	c.Notify(config.NotifySet, "spop", key)
	if n >= size {
		c.Dirty(int(size))
		writeUnion(c, []*keyspace.Set{s})
		c.DB.Delete(key)
		c.Propagate(propDEL, key) // 7.0: DEL whatever lazyfree says
		c.Notify(config.NotifyGeneric, "del", key)
		return
	}
	count := int(n)
	c.Dirty(count)
	c.W.Set(count)
	remaining := int(size) - count
	if remaining*spopMoveStrategyMul > count {
		for i := 0; i < count; i++ {
			m := s.Random()
			writeMember(c, m)
			s.RemoveMember(m)
			propagateSpop(c, key, m)
		}
		return
	}
	var keep *keyspace.Set
	maxIS := maxIntset(c)
	var buf []byte
	for i := 0; i < remaining; i++ {
		m := s.Random()
		buf = m.Bytes(buf[:0])
		if keep == nil {
			keep = keyspace.NewSetFor(buf)
		}
		keep.Add(buf, maxIS)
		s.RemoveMember(m)
	}
	s.Each(func(m keyspace.Member) bool {
		writeMember(c, m)
		propagateSpop(c, key, m)
		return true
	})
	s.Replace(keep)
}

// srandmemberSubStrategyMul: when count is more than a third of the
// set, SRANDMEMBER removes random members from a copy instead of drawing
// distinct ones (Redis's SRANDMEMBER_SUB_STRATEGY_MUL).
const srandmemberSubStrategyMul = 3

// srandmemberCommand is SRANDMEMBER key [count]. A negative count allows
// repetitions; a positive one gives min(count, size) distinct members
// (the whole set, in its iteration order, when count >= size).
func srandmemberCommand(c *engine.Ctx) {
	if len(c.Args) > 3 {
		c.Error(engine.ErrSyntax)
		return
	}
	if len(c.Args) == 2 {
		s, ok := lookupSet(c, c.Args[1])
		if !ok {
			return
		}
		if s == nil {
			c.W.Null()
			return
		}
		writeMember(c, s.Random())
		return
	}
	l, ok := engine.ParseInt(c.Args[2])
	if !ok {
		c.Error(engine.ErrNotInteger)
		return
	}
	if l == math.MinInt64 {
		c.Error(engine.ErrLongRange)
		return
	}
	uniq := l >= 0
	count := l
	if !uniq {
		count = -l
	}
	s, ok := lookupSet(c, c.Args[1])
	if !ok {
		return
	}
	if s == nil || count == 0 {
		c.W.Array(0)
		return
	}
	size := int64(s.Len())
	if !uniq || count == 1 {
		c.W.Array(int(count))
		for ; count > 0; count-- {
			writeMember(c, s.Random())
		}
		return
	}
	if count >= size {
		c.W.Array(int(size))
		s.Each(func(m keyspace.Member) bool {
			writeMember(c, m)
			return true
		})
		return
	}
	if count*srandmemberSubStrategyMul > size {
		// Copy the members, then drop random ones down to count.
		all := make([]keyspace.Member, 0, size)
		s.Each(func(m keyspace.Member) bool {
			all = append(all, m)
			return true
		})
		for int64(len(all)) > count {
			i := rand.IntN(len(all))
			all[i] = all[len(all)-1]
			all = all[:len(all)-1]
		}
		c.W.Array(len(all))
		for _, m := range all {
			writeMember(c, m)
		}
		return
	}
	picked := make(map[keyspace.Member]struct{}, count)
	for int64(len(picked)) < count {
		picked[s.Random()] = struct{}{}
	}
	c.W.Array(len(picked))
	for m := range picked {
		writeMember(c, m)
	}
}

// ---- SINTER SINTERCARD SINTERSTORE --------------------------------------

// interSets looks up the sets of keys for an intersection: every key is
// type-checked first (WRONGTYPE wins over a missing key), then a missing
// key makes the result empty (empty=true).
func interSets(c *engine.Ctx, keys [][]byte) (sets []*keyspace.Set, empty, ok bool) {
	sets = make([]*keyspace.Set, len(keys))
	for i, k := range keys {
		s, ok := lookupSet(c, k)
		if !ok {
			return nil, false, false
		}
		if s == nil {
			empty = true
		}
		sets[i] = s
	}
	if empty {
		return nil, true, true
	}
	// Smallest first, ties in argument order (glibc's qsort is a merge
	// sort): the result comes out in the order of the first set.
	slices.SortStableFunc(sets, func(a, b *keyspace.Set) int { return a.Len() - b.Len() })
	return sets, false, true
}

// intersect calls fn for each member of sets[0] found in all the others,
// until fn returns false.
func intersect(sets []*keyspace.Set, fn func(m keyspace.Member) bool) {
	sets[0].Each(func(m keyspace.Member) bool {
		for _, o := range sets[1:] {
			if o != sets[0] && !o.HasMember(m) {
				return true
			}
		}
		return fn(m)
	})
}

// sinterCommand is SINTER key [key ...] and SMEMBERS key.
func sinterCommand(c *engine.Ctx) {
	sets, empty, ok := interSets(c, c.Args[1:])
	if !ok {
		return
	}
	if empty {
		c.W.Set(0)
		return
	}
	if len(sets) == 1 {
		writeSetMembers(c, sets[0])
		return
	}
	var out []keyspace.Member
	intersect(sets, func(m keyspace.Member) bool {
		out = append(out, m)
		return true
	})
	c.W.Set(len(out))
	for _, m := range out {
		writeMember(c, m)
	}
}

// sintercardCommand is SINTERCARD numkeys key [key ...] [LIMIT limit]:
// the size of the intersection, counting stopped at limit (0 = none).
func sintercardCommand(c *engine.Ctx) {
	numkeys, ok := engine.ParseInt(c.Args[1])
	if !ok || numkeys < 1 {
		c.Error(engine.ErrNumkeysPositive)
		return
	}
	if numkeys > int64(len(c.Args)-2) {
		c.Error(engine.ErrNumkeysTooMany)
		return
	}
	limit := int64(0)
	for j := 2 + int(numkeys); j < len(c.Args); j++ {
		if engine.EqualFold(c.Args[j], "limit") && j+1 < len(c.Args) {
			j++
			n, ok := engine.ParseInt(c.Args[j])
			if !ok || n < 0 {
				c.Error(engine.ErrLimitNegative)
				return
			}
			limit = n
			continue
		}
		c.Error(engine.ErrSyntax)
		return
	}
	sets, empty, ok := interSets(c, c.Args[2:2+numkeys])
	if !ok {
		return
	}
	card := int64(0)
	if !empty {
		intersect(sets, func(keyspace.Member) bool {
			card++
			return limit == 0 || card < limit
		})
	}
	c.W.Int(card)
}

// sinterstoreCommand is SINTERSTORE destination key [key ...]. The
// result replaces destination (dropping its TTL); an empty result
// deletes it. The reply is the result's size.
func sinterstoreCommand(c *engine.Ctx) {
	dst := c.Args[1]
	sets, empty, ok := interSets(c, c.Args[2:])
	if !ok {
		return
	}
	res := keyspace.NewSet()
	if !empty {
		maxIS := maxIntset(c)
		var buf []byte
		intersect(sets, func(m keyspace.Member) bool {
			if m.IsInt {
				res.AddInt(m.Int, maxIS)
			} else {
				buf = m.Bytes(buf[:0])
				res.Add(buf, maxIS)
			}
			return true
		})
	}
	storeSet(c, dst, res, "sinterstore")
}

// storeSet stores res under dst for the STORE commands, replying with
// the result's size. A non-empty result sends "new" when dst did not
// exist (setKey's dbAdd), then event; an empty one deletes dst and sends
// "del" if there was a key to delete.
func storeSet(c *engine.Ctx, dst []byte, res *keyspace.Set, event string) {
	if res.Len() == 0 {
		if c.DB.Delete(dst) {
			c.Dirty(1)
			c.Notify(config.NotifyGeneric, "del", dst)
		}
		c.W.Int(0)
		return
	}
	existed := c.DB.Exists(dst)
	c.DB.PutObject(dst, res)
	if !existed {
		c.Notify(config.NotifyNew, "new", dst)
	}
	c.Notify(config.NotifySet, event, dst)
	c.Dirty(1)
	c.W.Int(int64(res.Len()))
}

// ---- SUNION SDIFF and their STORE forms ---------------------------------

type setOp uint8

const (
	setOpUnion setOp = iota
	setOpDiff
)

// lookupSets type-checks every key; a missing key is a nil (empty) set.
func lookupSets(c *engine.Ctx, keys [][]byte) ([]*keyspace.Set, bool) {
	sets := make([]*keyspace.Set, len(keys))
	for i, k := range keys {
		s, ok := lookupSet(c, k)
		if !ok {
			return nil, false
		}
		sets[i] = s
	}
	return sets, true
}

// unionDiff computes the union or the difference (the first set minus
// the others) of sets as a new set. The new set ends up in the encoding
// Redis's sunionDiffGenericCommand leaves it in, which decides both
// OBJECT ENCODING of a stored result and the reply's order: Redis
// builds it from an empty intset, and for a difference it picks between
// adding the survivors of the first set (algorithm 1) and adding the
// whole first set then removing the others (algorithm 2), which can turn
// the result into a hashtable on the way.
func unionDiff(c *engine.Ctx, sets []*keyspace.Set, op setOp) *keyspace.Set {
	res := keyspace.NewSet()
	maxIS := maxIntset(c)
	var buf []byte
	add := func(m keyspace.Member) bool {
		if m.IsInt {
			res.AddInt(m.Int, maxIS)
		} else {
			buf = m.Bytes(buf[:0])
			res.Add(buf, maxIS)
		}
		return true
	}
	if op == setOpUnion {
		for _, s := range sets {
			if s != nil {
				s.Each(add)
			}
		}
		return res
	}
	first := sets[0]
	if first == nil {
		return res
	}
	for _, s := range sets[1:] {
		if s == first {
			return res // the same key given again: empty
		}
	}
	var algoOne, algoTwo int64
	for _, s := range sets {
		if s != nil {
			algoOne += int64(first.Len())
			algoTwo += int64(s.Len())
		}
	}
	algoOne /= 2
	if algoOne <= algoTwo {
		first.Each(func(m keyspace.Member) bool {
			for _, s := range sets[1:] {
				if s != nil && s.HasMember(m) {
					return true
				}
			}
			return add(m)
		})
		return res
	}
	first.Each(add)
	for _, s := range sets[1:] {
		if s == nil {
			continue
		}
		s.Each(func(m keyspace.Member) bool {
			buf = m.Bytes(buf[:0])
			res.Remove(buf)
			return res.Len() > 0
		})
		if res.Len() == 0 {
			break
		}
	}
	return res
}

// writeUnion replies with the union of sets (SPOP's whole-set case
// too), in the order Redis's temporary set iterates it.
func writeUnion(c *engine.Ctx, sets []*keyspace.Set) {
	writeResult(c, unionDiff(c, sets, setOpUnion))
}

// writeResult replies with res, SUNION's or SDIFF's temporary set, which
// Redis then frees with freeObjAsync under lazyfree-lazy-server-del.
func writeResult(c *engine.Ctx, res *keyspace.Set) {
	writeSetMembers(c, res)
	c.KS.FreeObject(res, keyspace.FreeServerDel)
}

func sunionDiffGeneric(c *engine.Ctx, op setOp, store bool) {
	keys := c.Args[1:]
	if store {
		keys = c.Args[2:]
	}
	sets, ok := lookupSets(c, keys)
	if !ok {
		return
	}
	res := unionDiff(c, sets, op)
	if store {
		event := "sunionstore"
		if op == setOpDiff {
			event = "sdiffstore"
		}
		storeSet(c, c.Args[1], res, event)
		return
	}
	writeResult(c, res)
}

func sunionCommand(c *engine.Ctx)      { sunionDiffGeneric(c, setOpUnion, false) }
func sunionstoreCommand(c *engine.Ctx) { sunionDiffGeneric(c, setOpUnion, true) }
func sdiffCommand(c *engine.Ctx)       { sunionDiffGeneric(c, setOpDiff, false) }
func sdiffstoreCommand(c *engine.Ctx)  { sunionDiffGeneric(c, setOpDiff, true) }

// ---- SSCAN ---------------------------------------------------------------

// sscanCommand is SSCAN key cursor [MATCH pattern] [COUNT count]. The
// cursor is checked first; a missing key answers an empty, complete
// scan before the options are read, as Redis does. An intset is
// returned whole with cursor 0; a hashtable is walked in hash order
// (keyspace.Set.Scan), which returns every member present for the whole
// scan at least once.
func sscanCommand(c *engine.Ctx) {
	cursor, set, o, ok := beginScan(c, lookupSet)
	if !ok {
		return
	}
	var out []keyspace.Member
	var buf []byte
	next := set.Scan(cursor, int(o.count), func(m keyspace.Member) {
		if o.pattern != nil {
			buf = m.Bytes(buf[:0])
			if !sds.Match(o.pattern, buf, false) {
				return
			}
		}
		out = append(out, m)
	})
	c.W.Array(2)
	c.W.BulkUint(next)
	c.W.Array(len(out))
	for _, m := range out {
		writeMember(c, m)
	}
}

// ---- propagated forms ------------------------------------------------------

// propagateSpop propagates one member popped by SPOP as SREM key member
// (t_set.c): one SREM per member, in the order of the reply.
func propagateSpop(c *engine.Ctx, key []byte, m keyspace.Member) {
	if !c.Propagating() {
		return
	}
	var tmp [20]byte
	c.Propagate(propSREM, key, m.Bytes(tmp[:0]))
}
