package commands

import (
	"math"
	"slices"

	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// Sorted set commands: ZUNION, ZINTER, ZDIFF and their STORE and CARD forms (Redis t_zset.c).
func init() {
	register(
		&engine.Command{Name: "zunion", Arity: -3, Flags: engine.ReadOnly | engine.MovableKeys, ACL: "@read @sortedset @slow", Group: "sorted-set", Run: zunionCommand, Keys: numkeysKeys(1)},
		&engine.Command{Name: "zinter", Arity: -3, Flags: engine.ReadOnly | engine.MovableKeys, ACL: "@read @sortedset @slow", Group: "sorted-set", Run: zinterCommand, Keys: numkeysKeys(1)},
		&engine.Command{Name: "zdiff", Arity: -3, Flags: engine.ReadOnly | engine.MovableKeys, ACL: "@read @sortedset @slow", Group: "sorted-set", Run: zdiffCommand, Keys: numkeysKeys(1)},
		&engine.Command{Name: "zintercard", Arity: -3, Flags: engine.ReadOnly | engine.MovableKeys, ACL: "@read @sortedset @slow", Group: "sorted-set", Run: zintercardCommand, Keys: numkeysKeys(1)},
		&engine.Command{Name: "zunionstore", Arity: -4, Flags: engine.Write | engine.DenyOOM | engine.MovableKeys, ACL: "@write @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zunionstoreCommand, Keys: storeKeys},
		&engine.Command{Name: "zinterstore", Arity: -4, Flags: engine.Write | engine.DenyOOM | engine.MovableKeys, ACL: "@write @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zinterstoreCommand, Keys: storeKeys},
		&engine.Command{Name: "zdiffstore", Arity: -4, Flags: engine.Write | engine.DenyOOM | engine.MovableKeys, ACL: "@write @sortedset @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "sorted-set", Run: zdiffstoreCommand, Keys: storeKeys},
	)
}

// zsetOp is the operation of zunionInterDiffGeneric.
type zsetOp uint8

const (
	zopUnion zsetOp = iota
	zopInter
	zopDiff
)

// zsetOpStoreEvents are the STORE forms' events, by operation.
var zsetOpStoreEvents = [...]string{
	zopUnion: "zunionstore",
	zopInter: "zinterstore",
	zopDiff:  "zdiffstore",
}

// zaggregate is AGGREGATE's function.
type zaggregate uint8

const (
	zaggSum zaggregate = iota
	zaggMin
	zaggMax
)

// zunionInterAggregate folds val into *target (t_zset.c): a sum that is
// NaN (inf + -inf) becomes 0.
func zunionInterAggregate(target *float64, val float64, agg zaggregate) {
	switch agg {
	case zaggSum:
		*target += val
		if math.IsNaN(*target) {
			*target = 0
		}
	case zaggMin:
		if val < *target {
			*target = val
		}
	case zaggMax:
		if val > *target {
			*target = val
		}
	}
}

// zsrc is one input of the set operations: a sorted set, a plain set
// (every member scores 1) or nothing (a missing key).
type zsrc struct {
	z      *keyspace.ZSet
	s      *keyspace.Set
	weight float64
}

func (x *zsrc) len() int {
	switch {
	case x.z != nil:
		return x.z.Len()
	case x.s != nil:
		return x.s.Len()
	}
	return 0
}

func (x *zsrc) each(fn func(m string, score float64) bool) {
	switch {
	case x.z != nil:
		x.z.Ascend(0, fn)
	case x.s != nil:
		x.s.Each(func(m keyspace.Member) bool { return fn(m.String(), 1) })
	}
}

func (x *zsrc) find(m string) (float64, bool) {
	switch {
	case x.z != nil:
		return x.z.Score([]byte(m))
	case x.s != nil:
		if x.s.Has([]byte(m)) {
			return 1, true
		}
	}
	return 0, false
}

func zunionCommand(c *engine.Ctx)      { zsetOpGeneric(c, false, 1, zopUnion, false) }
func zinterCommand(c *engine.Ctx)      { zsetOpGeneric(c, false, 1, zopInter, false) }
func zdiffCommand(c *engine.Ctx)       { zsetOpGeneric(c, false, 1, zopDiff, false) }
func zintercardCommand(c *engine.Ctx)  { zsetOpGeneric(c, false, 1, zopInter, true) }
func zunionstoreCommand(c *engine.Ctx) { zsetOpGeneric(c, true, 2, zopUnion, false) }
func zinterstoreCommand(c *engine.Ctx) { zsetOpGeneric(c, true, 2, zopInter, false) }
func zdiffstoreCommand(c *engine.Ctx)  { zsetOpGeneric(c, true, 2, zopDiff, false) }

// zsetOpGeneric is zunionInterDiffGenericCommand: numkeys at numkeysIdx,
// the keys (sorted sets or sets), then WEIGHTS, AGGREGATE, WITHSCORES or
// (ZINTERCARD) LIMIT. store writes the result to Args[1].
func zsetOpGeneric(c *engine.Ctx, store bool, numkeysIdx int, op zsetOp, cardOnly bool) {
	setnum, ok := c.IntArg(numkeysIdx)
	if !ok {
		return
	}
	if setnum < 1 {
		c.Error(engine.ErrAtLeastOneKey(c.Cmd.FullName()))
		return
	}
	if setnum > int64(len(c.Args)-numkeysIdx-1) {
		c.Error(engine.ErrSyntax)
		return
	}
	n := int(setnum)
	src := make([]zsrc, n)
	j := numkeysIdx + 1
	for i := 0; i < n; i, j = i+1, j+1 {
		src[i].weight = 1
		e := c.DB.Lookup(c.Args[j])
		if e == nil {
			continue
		}
		switch e.Type() {
		case keyspace.TypeZSet:
			src[i].z = e.Obj().(*keyspace.ZSet)
		case keyspace.TypeSet:
			src[i].s = e.Obj().(*keyspace.Set)
		default:
			c.Error(engine.ErrWrongType)
			return
		}
	}
	agg := zaggSum
	withScores := false
	limit := int64(0)
	for j < len(c.Args) {
		remaining := len(c.Args) - j
		a := c.Args[j]
		switch {
		case op != zopDiff && !cardOnly && remaining >= n+1 && engine.EqualFold(a, "weights"):
			j++
			for i := 0; i < n; i, j = i+1, j+1 {
				w, ok := parseScore(c.Args[j])
				if !ok {
					c.Error(engine.ErrZWeightFloat)
					return
				}
				src[i].weight = w
			}
		case op != zopDiff && !cardOnly && remaining >= 2 && engine.EqualFold(a, "aggregate"):
			switch b := c.Args[j+1]; {
			case engine.EqualFold(b, "sum"):
				agg = zaggSum
			case engine.EqualFold(b, "min"):
				agg = zaggMin
			case engine.EqualFold(b, "max"):
				agg = zaggMax
			default:
				c.Error(engine.ErrSyntax)
				return
			}
			j += 2
		case !store && !cardOnly && engine.EqualFold(a, "withscores"):
			withScores = true
			j++
		case cardOnly && remaining >= 2 && engine.EqualFold(a, "limit"):
			l, ok := engine.ParseInt(c.Args[j+1])
			if !ok || l < 0 {
				c.Error(engine.ErrLimitNegative)
				return
			}
			limit = l
			j += 2
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}

	dst := keyspace.NewZSet()
	dst.MarkBig()
	cardinality := int64(0)
	switch op {
	case zopInter:
		slices.SortStableFunc(src, func(a, b zsrc) int { return a.len() - b.len() })
		if src[0].len() == 0 {
			break
		}
		src[0].each(func(m string, s float64) bool {
			score := src[0].weight * s
			if math.IsNaN(score) {
				score = 0
			}
			k := 1
			for ; k < n; k++ {
				v, found := src[k].find(m)
				if !found {
					break
				}
				zunionInterAggregate(&score, v*src[k].weight, agg)
			}
			if k < n {
				return true
			}
			if cardOnly {
				cardinality++
				return limit == 0 || cardinality < limit
			}
			dst.Set([]byte(m), score, false)
			return true
		})
	case zopUnion:
		slices.SortStableFunc(src, func(a, b zsrc) int { return a.len() - b.len() })
		acc := make(map[string]float64, src[n-1].len())
		var order []string
		for i := range src {
			src[i].each(func(m string, s float64) bool {
				score := src[i].weight * s
				if math.IsNaN(score) {
					score = 0
				}
				if cur, found := acc[m]; found {
					zunionInterAggregate(&cur, score, agg)
					acc[m] = cur
				} else {
					acc[m] = score
					order = append(order, m)
				}
				return true
			})
		}
		for _, m := range order {
			dst.Set([]byte(m), acc[m], false)
		}
	case zopDiff:
		if src[0].len() == 0 {
			break
		}
		src[0].each(func(m string, s float64) bool {
			for k := 1; k < n; k++ {
				if _, found := src[k].find(m); found {
					return true
				}
			}
			dst.Set([]byte(m), s, false)
			return true
		})
	}

	switch {
	case store:
		key := c.Args[1]
		if dst.Len() == 0 {
			c.W.Int(0)
			zsetStoreEmpty(c, key)
			return
		}
		maxEntries, maxValue := zsetLimits(c)
		dst.Fit(maxEntries, maxValue)
		zsetStore(c, key, dst, zsetOpStoreEvents[op])
		c.W.Int(int64(dst.Len()))
	case cardOnly:
		c.W.Int(cardinality)
	default:
		scoredHeader(c, dst.Len(), withScores)
		dst.Ascend(0, func(m string, s float64) bool {
			writeScored(c, m, s, withScores)
			return true
		})
	}
}
