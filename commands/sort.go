package commands

import (
	"bytes"
	"math"
	"slices"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/sds"
)

// SORT and SORT_RO (Redis sort.c): the elements of a list, set or sorted
// set, ordered as numbers or (ALPHA) as strings, by themselves or by the
// values of keys (BY pattern, "*" replaced by the element, "->field" for
// a hash field), cut with LIMIT, each replaced by the values of GET
// patterns ("#" for the element itself), returned or stored as a list
// (STORE). BY a pattern without "*" does not sort.
func init() {
	register(
		&engine.Command{Name: "sort", Arity: -2, Flags: engine.Write | engine.DenyOOM | engine.MovableKeys, ACL: "@write @set @sortedset @list @slow @dangerous", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "generic", Run: sortCommand, Keys: sortKeys, KeyFlags: sortKeyFlags},
		&engine.Command{Name: "sort_ro", Arity: -2, Flags: engine.ReadOnly | engine.MovableKeys, ACL: "@read @set @sortedset @list @slow @dangerous", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "generic", Run: sortRoCommand},
	)
}

// sortKeys is sortGetKeys: the key sorted and, when there is a STORE
// option (the last one), its destination. LIMIT takes two arguments, GET
// and BY one.
func sortKeys(args [][]byte) []int {
	keys := []int{1}
	store := 0
	for i := 2; i < len(args); i++ {
		switch a := args[i]; {
		case engine.EqualFold(a, "limit"):
			i += 2
		case engine.EqualFold(a, "get"), engine.EqualFold(a, "by"):
			i++
		case engine.EqualFold(a, "store") && i+1 < len(args):
			store = i + 1
		}
	}
	if store > 0 {
		keys = append(keys, store)
	}
	return keys
}

// sortKeyFlags: the key sorted is read, the STORE destination overwritten.
func sortKeyFlags(_ [][]byte, pos int) []string {
	if pos == 1 {
		return sortKeyFlagsRead
	}
	return sortKeyFlagsStore
}

var (
	sortKeyFlagsRead  = []string{"RO", "access"}
	sortKeyFlagsStore = []string{"OW", "update"}
)

// Errors of sort.c.
const (
	errSortBy     = "ERR BY option of SORT denied due to insufficient ACL permissions."
	errSortGet    = "ERR GET option of SORT denied due to insufficient ACL permissions."
	errSortScores = "ERR One or more scores can't be converted into double"
)

// sortItem is one element and what it is sorted by (redisSortObject).
type sortItem struct {
	elem  []byte
	score float64
	by    []byte // ALPHA BY: the value of the BY key
	hasBy bool   // by is set: the BY key has a value
}

func sortCommand(c *engine.Ctx)   { sortGeneric(c, false) }
func sortRoCommand(c *engine.Ctx) { sortGeneric(c, true) }

// sortGeneric is sortCommandGeneric.
func sortGeneric(c *engine.Ctx, ro bool) {
	var desc, alpha, dontSort bool
	limitStart, limitCount := int64(0), int64(-1)
	var by, store []byte
	var gets [][]byte
	fullAccess := c.D.ACL.ReadsAllKeys(c.Client.User, c.Cmd, c.Args)
	args := c.Args
	for j := 2; j < len(args); j++ {
		left := len(args) - j - 1
		switch a := args[j]; {
		case engine.EqualFold(a, "asc"):
			desc = false
		case engine.EqualFold(a, "desc"):
			desc = true
		case engine.EqualFold(a, "alpha"):
			alpha = true
		case engine.EqualFold(a, "limit") && left >= 2:
			var ok bool
			if limitStart, ok = c.IntArg(j + 1); !ok {
				return
			}
			if limitCount, ok = c.IntArg(j + 2); !ok {
				return
			}
			j += 2
		case !ro && engine.EqualFold(a, "store") && left >= 1:
			store = args[j+1]
			j++
		case engine.EqualFold(a, "by") && left >= 1:
			by = args[j+1]
			if bytes.IndexByte(by, '*') < 0 {
				dontSort = true
			} else if !fullAccess {
				c.Error(errSortBy)
				return
			}
			j++
		case engine.EqualFold(a, "get") && left >= 1:
			if !fullAccess {
				c.Error(errSortGet)
				return
			}
			gets = append(gets, args[j+1])
			j++
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}

	e := c.DB.Lookup(args[1])
	typ := keyspace.TypeList
	if e != nil {
		typ = e.Type()
		if typ != keyspace.TypeSet && typ != keyspace.TypeList && typ != keyspace.TypeZSet {
			c.Error(engine.ErrWrongType)
			return
		}
	}
	// An unsorted set would come out in its hash order: for STORE and for
	// scripts, which must replicate alike, it is sorted (ALPHA).
	if dontSort && typ == keyspace.TypeSet && (store != nil || c.Client.Script) {
		dontSort, alpha, by = false, true, nil
	}
	n := 0
	if e != nil {
		n = e.Obj().Len()
	}
	start := min(max(limitStart, 0), int64(n))
	count := min(max(limitCount, -1), int64(n))
	end := int64(n) - 1
	if count >= 0 {
		end = start + count - 1
	}
	if start >= int64(n) {
		start, end = int64(n)-1, int64(n)-2
	}
	end = min(end, int64(n)-1)

	// The elements, only the range asked for when nothing is sorted and
	// the type keeps an order.
	var items []sortItem
	add := func(b []byte) { items = append(items, sortItem{elem: b}) }
	ranged := dontSort && typ != keyspace.TypeSet
	switch {
	case e == nil:
	case typ == keyspace.TypeList:
		l := e.Obj().(*keyspace.List)
		if ranged {
			if end >= start {
				from := int(start)
				if desc {
					from = l.Len() - int(start) - 1
				}
				want := int(end - start + 1)
				l.Each(from, desc, func(_ int, v []byte) bool {
					add(bytes.Clone(v))
					return len(items) < want
				})
			}
		} else {
			l.Each(0, false, func(_ int, v []byte) bool {
				add(bytes.Clone(v))
				return true
			})
		}
	case typ == keyspace.TypeSet:
		e.Obj().(*keyspace.Set).Each(func(m keyspace.Member) bool {
			add(m.Bytes(nil))
			return true
		})
	default:
		z := e.Obj().(*keyspace.ZSet)
		if ranged {
			if end >= start {
				want := int(end - start + 1)
				each := z.Ascend
				from := int(start)
				if desc {
					each, from = z.Descend, z.Len()-1-int(start)
				}
				each(from, func(m string, _ float64) bool {
					add([]byte(m))
					return len(items) < want
				})
			}
		} else {
			z.Ascend(0, func(m string, _ float64) bool {
				add([]byte(m))
				return true
			})
		}
	}
	if ranged {
		end -= start
		start = 0
	}

	if !dontSort {
		badScore := false
		for i := range items {
			it := &items[i]
			val := it.elem
			if by != nil {
				v, ok := sortLookup(c, by, it.elem)
				if !ok {
					continue
				}
				val = v
			}
			if alpha {
				if by != nil {
					it.by, it.hasBy = val, true
				}
				continue
			}
			f, ok := sortScore(val)
			if !ok {
				badScore = true
			}
			it.score = f
		}
		if badScore {
			c.Error(errSortScores)
			return
		}
		slices.SortStableFunc(items, func(a, b sortItem) int {
			cmp := sortCompare(a, b, alpha, by != nil)
			if desc {
				return -cmp
			}
			return cmp
		})
	}

	outLen := int(end - start + 1)
	if len(gets) > 0 {
		outLen *= len(gets)
	}
	if store == nil {
		c.W.Array(max(outLen, 0))
		for j := start; j <= end; j++ {
			it := items[j]
			if len(gets) == 0 {
				c.W.Bulk(it.elem)
			}
			for _, g := range gets {
				if v, ok := sortLookup(c, g, it.elem); ok {
					c.W.Bulk(v)
				} else {
					c.W.Null()
				}
			}
		}
		return
	}
	l := keyspace.NewList()
	for j := start; j <= end; j++ {
		it := items[j]
		if len(gets) == 0 {
			l.Push(false, it.elem)
			continue
		}
		for _, g := range gets {
			v, _ := sortLookup(c, g, it.elem)
			l.Push(false, bytes.Clone(v))
		}
	}
	if outLen > 0 {
		existed := c.DB.Exists(store)
		c.DB.PutObject(store, l)
		if !existed {
			c.Notify(config.NotifyNew, "new", store)
		}
		c.Notify(config.NotifyList, "sortstore", store)
		c.Dirty(outLen)
	} else if c.DB.Delete(store) {
		c.Notify(config.NotifyGeneric, "del", store)
		c.Dirty(1)
	}
	c.W.Int(int64(max(outLen, 0)))
}

// sortCompare is sortCompare of sort.c: numbers, equal ones by their
// elements' bytes; ALPHA by the elements' or (BY) the keys' bytes, a
// missing BY value first.
func sortCompare(a, b sortItem, alpha, byPattern bool) int {
	if !alpha {
		switch {
		case a.score > b.score:
			return 1
		case a.score < b.score:
			return -1
		}
		return bytes.Compare(a.elem, b.elem)
	}
	if byPattern {
		switch {
		case !a.hasBy && !b.hasBy:
			return 0
		case !a.hasBy:
			return -1
		case !b.hasBy:
			return 1
		}
		return bytes.Compare(a.by, b.by)
	}
	return bytes.Compare(a.elem, b.elem)
}

// sortLookup is lookupKeyByPattern: "#" is the element itself; otherwise
// the first "*" of pattern is replaced by elem and the key read, a string,
// or with "->field" after the "*", a hash's field. ok is false when there
// is no value (no "*", no key, another type, no field).
func sortLookup(c *engine.Ctx, pattern, elem []byte) ([]byte, bool) {
	if len(pattern) == 1 && pattern[0] == '#' {
		return elem, true
	}
	star := bytes.IndexByte(pattern, '*')
	if star < 0 {
		return nil, false
	}
	var field []byte
	post := pattern[star+1:]
	if f := bytes.Index(post, []byte("->")); f >= 0 && f+2 < len(post) {
		field = post[f+2:]
		post = post[:f]
	}
	key := make([]byte, 0, len(pattern)+len(elem))
	key = append(append(append(key, pattern[:star]...), elem...), post...)
	e := c.DB.Lookup(key)
	if e == nil {
		return nil, false
	}
	if field != nil {
		if e.Type() != keyspace.TypeHash {
			return nil, false
		}
		return e.Obj().(*keyspace.Hash).Get(field)
	}
	if e.Type() != keyspace.TypeString {
		return nil, false
	}
	return e.Str(), true
}

// sortScore reads a value as SORT's numeric sort does: strtod over the
// whole value (leading blanks skipped; the empty string is 0), no NaN, no
// overflow or underflow.
func sortScore(b []byte) (float64, bool) {
	if len(b) == 0 {
		return 0, true
	}
	i := 0
	for i < len(b) && sds.IsSpace(b[i]) {
		i++
	}
	if i == len(b) {
		return 0, false
	}
	f, rangeErr, ok := strtod(b[i:])
	return f, ok && !rangeErr && !math.IsNaN(f)
}
