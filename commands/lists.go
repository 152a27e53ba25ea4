package commands

import (
	"math"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// List commands (Redis t_list.c), the non-blocking ones.
func init() {
	register(
		&engine.Command{Name: "lpush", Arity: -3, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @list @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "list", Run: lpushCommand},
		&engine.Command{Name: "rpush", Arity: -3, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @list @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "list", Run: rpushCommand},
		&engine.Command{Name: "lpushx", Arity: -3, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @list @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "list", Run: lpushxCommand},
		&engine.Command{Name: "rpushx", Arity: -3, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write @list @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "list", Run: rpushxCommand},
		&engine.Command{Name: "lpop", Arity: -2, Flags: engine.Write | engine.Fast, ACL: "@write @list @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "list", Run: lpopCommand},
		&engine.Command{Name: "rpop", Arity: -2, Flags: engine.Write | engine.Fast, ACL: "@write @list @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "list", Run: rpopCommand},
		&engine.Command{Name: "llen", Arity: 2, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @list @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "list", Run: llenCommand},
		&engine.Command{Name: "lrange", Arity: 4, Flags: engine.ReadOnly, ACL: "@read @list @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "list", Run: lrangeCommand},
		&engine.Command{Name: "lindex", Arity: 3, Flags: engine.ReadOnly, ACL: "@read @list @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "list", Run: lindexCommand},
		&engine.Command{Name: "lset", Arity: 4, Flags: engine.Write | engine.DenyOOM, ACL: "@write @list @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "list", Run: lsetCommand},
		&engine.Command{Name: "linsert", Arity: 5, Flags: engine.Write | engine.DenyOOM, ACL: "@write @list @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "list", Run: linsertCommand},
		&engine.Command{Name: "lrem", Arity: 4, Flags: engine.Write, ACL: "@write @list @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "list", Run: lremCommand},
		&engine.Command{Name: "ltrim", Arity: 4, Flags: engine.Write, ACL: "@write @list @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "list", Run: ltrimCommand},
		&engine.Command{Name: "lpos", Arity: -3, Flags: engine.ReadOnly, ACL: "@read @list @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "list", Run: lposCommand},
		&engine.Command{Name: "lmove", Arity: 5, Flags: engine.Write | engine.DenyOOM, ACL: "@write @list @slow", FirstKey: 1, LastKey: 2, KeyStep: 1, Group: "list", Run: lmoveCommand},
		&engine.Command{Name: "rpoplpush", Arity: 3, Flags: engine.Write | engine.DenyOOM, ACL: "@write @list @slow", FirstKey: 1, LastKey: 2, KeyStep: 1, Group: "list", Run: rpoplpushCommand},
		&engine.Command{Name: "lmpop", Arity: -4, Flags: engine.Write, ACL: "@write @list @slow", Group: "list", Run: lmpopCommand, Keys: lmpopKeys},
	)
}

// ---- lookups and the push path ------------------------------------------

// listRead finds key's list for a read. ok=false means the WRONGTYPE
// error was written; l is nil when the key does not exist.
func listRead(c *engine.Ctx, key []byte) (l *keyspace.List, ok bool) {
	e := c.DB.Lookup(key)
	if e == nil {
		return nil, true
	}
	if e.Type() != keyspace.TypeList {
		c.Error(engine.ErrWrongType)
		return nil, false
	}
	return e.Obj().(*keyspace.List), true
}

// listWrite finds key's list for an in-place change (the list is private
// to the live keyspace). ok=false means the WRONGTYPE error was written;
// l is nil when the key does not exist.
func listWrite(c *engine.Ctx, key []byte) (l *keyspace.List, ok bool) {
	e := c.DB.LookupWrite(key)
	if e == nil {
		return nil, true
	}
	if e.Type() != keyspace.TypeList {
		c.Error(engine.ErrWrongType)
		return nil, false
	}
	return e.Obj().(*keyspace.List), true
}

// listPush is the one path by which pushed elements enter a list (LPUSH,
// RPUSH, the X variants, the destination of LMOVE and RPOPLPUSH): it
// adds copies of vals at the head or the tail of l, creating the key
// when l is nil, and returns the list. Every list key that comes into
// existence is made here, which is where Redis signals a key as ready
// for the clients blocked on it (db.c dbAdd -> signalKeyAsReady): the
// blocking layer is told with Ctx.KeyReady. Events: "new" when the key is created
// (dbAdd), then one "lpush" or "rpush" for all of vals.
func listPush(c *engine.Ctx, key []byte, l *keyspace.List, front bool, vals [][]byte) *keyspace.List {
	if l == nil {
		l = keyspace.NewList()
		c.DB.PutObject(key, l)
		c.Notify(config.NotifyNew, "new", key)
	}
	l.PushCopy(front, vals)
	c.KeyReady(key)
	if front {
		c.Notify(config.NotifyList, "lpush", key)
	} else {
		c.Notify(config.NotifyList, "rpush", key)
	}
	return l
}

// listDeleteIfEmpty removes key when its list became empty, with the
// "del" event that follows the command's own: Redis never keeps an empty
// list.
func listDeleteIfEmpty(c *engine.Ctx, key []byte, l *keyspace.List) {
	if l.Len() == 0 {
		c.DB.Delete(key)
		c.Notify(config.NotifyGeneric, "del", key)
	}
}

// listPopped follows elements popped from one end of the list at key
// (t_list.c listElementsRemoved): an "lpop" or "rpop" event, then the
// key's deletion, with "del", when the list is empty.
func listPopped(c *engine.Ctx, key []byte, l *keyspace.List, front bool) {
	if front {
		c.Notify(config.NotifyList, "lpop", key)
	} else {
		c.Notify(config.NotifyList, "rpop", key)
	}
	listDeleteIfEmpty(c, key, l)
}

// ---- LPUSH, RPUSH, LPUSHX, RPUSHX ---------------------------------------

func lpushCommand(c *engine.Ctx)  { pushGeneric(c, true, false) }
func rpushCommand(c *engine.Ctx)  { pushGeneric(c, false, false) }
func lpushxCommand(c *engine.Ctx) { pushGeneric(c, true, true) }
func rpushxCommand(c *engine.Ctx) { pushGeneric(c, false, true) }

// pushGeneric implements [LR]PUSH[X] key element [element ...]: the X
// variants push only onto an existing list and answer 0 otherwise.
func pushGeneric(c *engine.Ctx, front, onlyExisting bool) {
	key := c.Args[1]
	l, ok := listWrite(c, key)
	if !ok {
		return
	}
	if l == nil && onlyExisting {
		c.W.Int(0)
		return
	}
	vals := c.Args[2:]
	l = listPush(c, key, l, front, vals)
	c.Dirty(len(vals))
	c.W.Int(int64(l.Len()))
}

// ---- LPOP, RPOP, LMPOP ----------------------------------------------------

func lpopCommand(c *engine.Ctx) { popGeneric(c, true) }
func rpopCommand(c *engine.Ctx) { popGeneric(c, false) }

// popGeneric implements [LR]POP key [count]. Without count it answers a
// bulk (null when the key is missing); with count an array of up to count
// elements (a null array when the key is missing, an empty one for a
// count of 0).
func popGeneric(c *engine.Ctx, front bool) {
	if len(c.Args) > 3 {
		c.Error(engine.ErrWrongArgs(c.Cmd.Name))
		return
	}
	hasCount := len(c.Args) == 3
	var count int64
	if hasCount {
		n, ok := engine.ParseInt(c.Args[2])
		if !ok || n < 0 {
			c.Error(engine.ErrCountPositive)
			return
		}
		count = n
	}
	key := c.Args[1]
	l, ok := listWrite(c, key)
	if !ok {
		return
	}
	if l == nil {
		if hasCount {
			c.W.NullArray()
		} else {
			c.W.Null()
		}
		return
	}
	if !hasCount {
		c.W.Bulk(l.Pop(front))
		c.Dirty(1)
		listPopped(c, key, l, front)
		return
	}
	if count == 0 {
		c.W.Array(0)
		return
	}
	listPopReply(c, key, l, front, count)
}

// listPopReply pops up to count elements from one end of l, replying
// with them as an array in popping order, and deletes the key when the
// list is left empty (listPopped). It returns how many it popped (what
// LMPOP propagates as the count of LPOP or RPOP).
func listPopReply(c *engine.Ctx, key []byte, l *keyspace.List, front bool, count int64) (popped int) {
	n := int(min(count, int64(l.Len())))
	c.W.Array(n)
	for i := 0; i < n; i++ {
		c.W.Bulk(l.Pop(front))
	}
	c.Dirty(n)
	listPopped(c, key, l, front)
	return n
}

// listEnd parses LEFT or RIGHT: front=true for LEFT. ok=false means the
// syntax error was written.
func listEnd(c *engine.Ctx, arg []byte) (front, ok bool) {
	switch {
	case engine.EqualFold(arg, "left"):
		return true, true
	case engine.EqualFold(arg, "right"):
		return false, true
	}
	c.Error(engine.ErrSyntax)
	return false, false
}

// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count]: pops from the
// first non-empty list, replying [key, [elements]], or a null array when
// every list is empty. A key of another type met before that list is a
// WRONGTYPE error.
func lmpopCommand(c *engine.Ctx) {
	numkeys, ok := engine.ParseInt(c.Args[1])
	if !ok || numkeys < 1 {
		c.Error(engine.ErrNumkeysPositive)
		return
	}
	if numkeys > int64(len(c.Args)-3) {
		c.Error(engine.ErrSyntax)
		return
	}
	whereIdx := 2 + int(numkeys)
	front, ok := listEnd(c, c.Args[whereIdx])
	if !ok {
		return
	}
	count, ok := parseMpopCount(c, whereIdx+1)
	if !ok {
		return
	}
	for _, key := range c.Args[2:whereIdx] {
		l, ok := listWrite(c, key)
		if !ok {
			return
		}
		if l == nil || l.Len() == 0 {
			continue
		}
		c.W.Array(2)
		c.W.Bulk(key)
		n := listPopReply(c, key, l, front, count)
		propagatePop(c, listPopName(front), key, n) // [LR]POP key n
		return
	}
	c.W.NullArray()
}

// lmpopKeys extracts LMPOP's keys as Redis does for COMMAND GETKEYS
// (db.c genericGetKeys): numkeys read with atoi, no keys at all when it
// is below 1 or names more keys than the arguments hold.
func lmpopKeys(args [][]byte) []int {
	num := atoi(args[1])
	if num < 1 || num > int64(len(args)-2) {
		return nil
	}
	pos := make([]int, num)
	for i := range pos {
		pos[i] = 2 + i
	}
	return pos
}

// atoi is C's atoi: leading white space, an optional sign, then digits up
// to the first non-digit; 0 when there are none. The result is truncated
// to 32 bits as atoi's int is.
func atoi(b []byte) int64 {
	i := 0
	for i < len(b) && (b[i] == ' ' || (b[i] >= '\t' && b[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	var v int64
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if v < math.MaxInt64/10 {
			v = v*10 + int64(b[i]-'0')
		}
	}
	if neg {
		v = -v
	}
	return int64(int32(v))
}

// ---- LLEN, LRANGE, LINDEX, LSET -------------------------------------------

func llenCommand(c *engine.Ctx) {
	l, ok := listRead(c, c.Args[1])
	if !ok {
		return
	}
	if l == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(l.Len()))
}

// listRange clamps Redis's start and end indexes (negative from the
// tail) to l's length n: the inclusive range, empty when start > end.
func listRange(start, end int64, n int) (int, int) {
	ln := int64(n)
	if start < 0 {
		start += ln
	}
	if end < 0 {
		end += ln
	}
	if start < 0 {
		start = 0
	}
	if start > end || start >= ln {
		return 1, 0
	}
	if end >= ln {
		end = ln - 1
	}
	return int(start), int(end)
}

// LRANGE key start stop: the indexes are parsed before the key is read.
func lrangeCommand(c *engine.Ctx) {
	start, ok := c.IntArg(2)
	if !ok {
		return
	}
	end, ok := c.IntArg(3)
	if !ok {
		return
	}
	l, ok := listRead(c, c.Args[1])
	if !ok {
		return
	}
	if l == nil {
		c.W.Array(0)
		return
	}
	s, e := listRange(start, end, l.Len())
	if s > e {
		c.W.Array(0)
		return
	}
	c.W.Array(e - s + 1)
	l.Each(s, false, func(i int, v []byte) bool {
		c.W.Bulk(v)
		return i < e
	})
}

// LINDEX key index: a missing key answers null before the index is
// parsed.
func lindexCommand(c *engine.Ctx) {
	l, ok := listRead(c, c.Args[1])
	if !ok {
		return
	}
	if l == nil {
		c.W.Null()
		return
	}
	idx, ok := c.IntArg(2)
	if !ok {
		return
	}
	if i, ok := l.Index(idx); ok {
		c.W.Bulk(l.At(i))
	} else {
		c.W.Null()
	}
}

// LSET key index element: a missing key is an error, checked before the
// index is parsed.
func lsetCommand(c *engine.Ctx) {
	l, ok := listWrite(c, c.Args[1])
	if !ok {
		return
	}
	if l == nil {
		c.Error(engine.ErrNoSuchKey)
		return
	}
	idx, ok := c.IntArg(2)
	if !ok {
		return
	}
	i, ok := l.Index(idx)
	if !ok {
		c.Error(engine.ErrIndexOutOfRange)
		return
	}
	l.Set(i, c.Args[3])
	c.Dirty(1)
	c.Notify(config.NotifyList, "lset", c.Args[1])
	c.W.OK()
}

// ---- LINSERT, LREM, LTRIM ---------------------------------------------------

// LINSERT key BEFORE|AFTER pivot element: the new length, -1 when the
// pivot is not found, 0 when the key does not exist.
func linsertCommand(c *engine.Ctx) {
	var after bool
	switch {
	case engine.EqualFold(c.Args[2], "after"):
		after = true
	case engine.EqualFold(c.Args[2], "before"):
	default:
		c.Error(engine.ErrSyntax)
		return
	}
	l, ok := listWrite(c, c.Args[1])
	if !ok {
		return
	}
	if l == nil {
		c.W.Int(0)
		return
	}
	i := l.Find(c.Args[3])
	if i < 0 {
		c.W.Int(-1)
		return
	}
	if after {
		i++
	}
	l.Insert(i, c.Args[4])
	c.Dirty(1)
	c.Notify(config.NotifyList, "linsert", c.Args[1])
	c.W.Int(int64(l.Len()))
}

// LREM key count element: removes up to |count| matches, from the tail
// when count is negative, all of them when it is 0. Events: "lrem" when
// something was removed, then "del" when the list went.
func lremCommand(c *engine.Ctx) {
	count, ok := c.IntArg(2)
	if !ok {
		return
	}
	key := c.Args[1]
	l, ok := listWrite(c, key)
	if !ok {
		return
	}
	if l == nil {
		c.W.Int(0)
		return
	}
	fromTail := count < 0
	if fromTail {
		count = -count
		if count < 0 {
			// -2^63 stays negative once negated: Redis never reaches
			// it as a count of removals, so every match goes.
			count = 0
		}
	}
	removed := l.Remove(c.Args[3], count, fromTail)
	c.Dirty(int(removed))
	if removed > 0 {
		c.Notify(config.NotifyList, "lrem", key)
		listDeleteIfEmpty(c, key, l)
	}
	c.W.Int(removed)
}

// LTRIM key start stop: keeps the range, deleting the key when nothing is
// left; an existing key counts as changed, and sends "ltrim", even when
// nothing is trimmed.
func ltrimCommand(c *engine.Ctx) {
	start, ok := c.IntArg(2)
	if !ok {
		return
	}
	end, ok := c.IntArg(3)
	if !ok {
		return
	}
	key := c.Args[1]
	l, ok := listWrite(c, key)
	if !ok {
		return
	}
	if l == nil {
		c.W.OK()
		return
	}
	s, e := listRange(start, end, l.Len())
	before := l.Len()
	l.Trim(s, e)
	trimmed := before - l.Len()
	c.Notify(config.NotifyList, "ltrim", key)
	listDeleteIfEmpty(c, key, l)
	c.Dirty(1)
	if trimmed == 0 {
		c.PreventPropagation() // Redis counts no change: nothing to replay
	}
	c.W.OK()
}

// ---- LPOS -------------------------------------------------------------------

// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]. The
// options are parsed before the key is read; a COUNT or MAXLEN that is
// not an integer gets the same error as a negative one, as in Redis. The arithmetic is Redis's
// own on 64-bit longs, wrap-around included (a RANK of -2^63 stays
// negative once negated and so matches from the first hit).
func lposCommand(c *engine.Ctx) {
	rank, count, maxlen := int64(1), int64(-1), int64(0)
	for j := 3; j < len(c.Args); j++ {
		opt := c.Args[j]
		more := j+1 < len(c.Args)
		switch {
		case engine.EqualFold(opt, "rank") && more:
			j++
			n, ok := c.IntArg(j)
			if !ok {
				return
			}
			if n == 0 {
				c.Error(engine.ErrLPosRankZero)
				return
			}
			rank = n
		case engine.EqualFold(opt, "count") && more:
			j++
			n, ok := engine.ParseInt(c.Args[j])
			if !ok || n < 0 {
				c.Error(engine.ErrLPosCountNeg)
				return
			}
			count = n
		case engine.EqualFold(opt, "maxlen") && more:
			j++
			n, ok := engine.ParseInt(c.Args[j])
			if !ok || n < 0 {
				c.Error(engine.ErrLPosMaxlenNeg)
				return
			}
			maxlen = n
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	fromTail := false
	if rank < 0 {
		rank = -rank
		fromTail = true
	}
	l, ok := listRead(c, c.Args[1])
	if !ok {
		return
	}
	if l == nil {
		if count != -1 {
			c.W.Array(0)
		} else {
			c.W.Null()
		}
		return
	}
	ele := c.Args[2]
	mark := -1
	if count != -1 {
		mark = c.W.DeferArray()
	}
	var index, matches, emitted int64
	found := int64(-1)
	from := 0
	if fromTail {
		from = l.Len() - 1
	}
	l.Each(from, fromTail, func(pos int, v []byte) bool {
		if maxlen != 0 && index >= maxlen {
			return false
		}
		index++
		if string(v) != string(ele) {
			return true
		}
		matches++
		if matches < rank {
			return true
		}
		if mark < 0 {
			found = int64(pos)
			return false
		}
		c.W.Int(int64(pos))
		emitted++
		return count == 0 || matches-rank+1 < count
	})
	if mark >= 0 {
		c.W.FillArray(mark, int(emitted))
		return
	}
	if found >= 0 {
		c.W.Int(found)
	} else {
		c.W.Null()
	}
}

// ---- LMOVE, RPOPLPUSH -------------------------------------------------------

// LMOVE source destination LEFT|RIGHT LEFT|RIGHT
func lmoveCommand(c *engine.Ctx) {
	from, ok := listEnd(c, c.Args[3])
	if !ok {
		return
	}
	to, ok := listEnd(c, c.Args[4])
	if !ok {
		return
	}
	lmoveGeneric(c, from, to)
}

// RPOPLPUSH source destination: LMOVE source destination RIGHT LEFT.
func rpoplpushCommand(c *engine.Ctx) { lmoveGeneric(c, false, true) }

// lmoveGeneric pops an element from one end of the source list and
// pushes it onto the destination (the same list when the keys are
// equal), replying with it; null when the source does not exist. A
// destination of another type is an error and nothing moves. Events, in
// t_list.c's order: the push on the destination ("new" first if it is
// created), then the pop on the source, then "del" if the source went.
func lmoveGeneric(c *engine.Ctx, from, to bool) {
	src, dst := c.Args[1], c.Args[2]
	sl, ok := listWrite(c, src)
	if !ok {
		return
	}
	if sl == nil || sl.Len() == 0 {
		c.W.Null()
		return
	}
	dl, ok := listWrite(c, dst)
	if !ok {
		return
	}
	// The popped slice is valid until the list next changes: reply
	// first, then push (dst may be the same list).
	v := sl.Pop(from)
	c.W.Bulk(v)
	listPush(c, dst, dl, to, [][]byte{v})
	listPopped(c, src, sl, from)
	c.Dirty(1)
}

// parseMpopCount parses the optional COUNT of LMPOP, ZMPOP and their
// blocking forms from args[from:] (after LEFT|RIGHT or MIN|MAX): at most
// one COUNT, a positive integer; anything else is a syntax error. The
// default is 1. ok=false means the error reply was written.
func parseMpopCount(c *engine.Ctx, from int) (count int64, ok bool) {
	count = -1
	for j := from; j < len(c.Args); j++ {
		if count == -1 && engine.EqualFold(c.Args[j], "count") && j+1 < len(c.Args) {
			j++
			n, ok := engine.ParseInt(c.Args[j])
			if !ok || n < 1 {
				c.Error(engine.ErrCountGreaterZero)
				return 0, false
			}
			count = n
			continue
		}
		c.Error(engine.ErrSyntax)
		return 0, false
	}
	if count == -1 {
		count = 1
	}
	return count, true
}

// ---- propagated forms ------------------------------------------------------

// listEndName is "left" or "right", as Redis names a list end.
func listEndName(front bool) []byte {
	if front {
		return propLeft
	}
	return propRight
}
