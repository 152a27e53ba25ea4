package commands

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/listpack"
	"github.com/zredis/zredis/redisconv"
)

// Stream commands (Redis t_stream.c). The stream itself is
// keyspace.Stream; these parse, call it, reply, and propagate the
// deterministic forms 7.0 propagates: XADD with its generated ID and an
// exact trim, XREADGROUP and XCLAIM as XCLAIM ... FORCE JUSTID LASTID,
// XGROUP SETID for a NOACK read.
func init() {
	const st = "@stream"
	register(
		&engine.Command{Name: "xadd", Arity: -5, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write " + st + " @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "stream", Run: xaddCommand},
		&engine.Command{Name: "xrange", Arity: -4, Flags: engine.ReadOnly, ACL: "@read " + st + " @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "stream", Run: xrangeCommand},
		&engine.Command{Name: "xrevrange", Arity: -4, Flags: engine.ReadOnly, ACL: "@read " + st + " @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "stream", Run: xrevrangeCommand},
		&engine.Command{Name: "xlen", Arity: 2, Flags: engine.ReadOnly | engine.Fast, ACL: "@read " + st + " @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "stream", Run: xlenCommand},
		&engine.Command{Name: "xread", Arity: -4, Flags: engine.ReadOnly | engine.Blocking | engine.MovableKeys, ACL: "@read " + st + " @slow @blocking", Group: "stream", Run: xreadCommand, Keys: xreadKeys},
		&engine.Command{Name: "xreadgroup", Arity: -7, Flags: engine.Write | engine.Blocking | engine.MovableKeys, ACL: "@write " + st + " @slow @blocking", Group: "stream", Run: xreadgroupCommand, Keys: xreadgroupKeys},
		&engine.Command{Name: "xdel", Arity: -3, Flags: engine.Write | engine.Fast, ACL: "@write " + st + " @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "stream", Run: xdelCommand},
		&engine.Command{Name: "xtrim", Arity: -4, Flags: engine.Write, ACL: "@write " + st + " @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "stream", Run: xtrimCommand},
		&engine.Command{Name: "xack", Arity: -4, Flags: engine.Write | engine.Fast, ACL: "@write " + st + " @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "stream", Run: xackCommand},
		&engine.Command{Name: "xpending", Arity: -3, Flags: engine.ReadOnly, ACL: "@read " + st + " @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "stream", Run: xpendingCommand},
		&engine.Command{Name: "xclaim", Arity: -6, Flags: engine.Write | engine.Fast, ACL: "@write " + st + " @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "stream", Run: xclaimCommand},
		&engine.Command{Name: "xautoclaim", Arity: -6, Flags: engine.Write | engine.Fast, ACL: "@write " + st + " @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "stream", Run: xautoclaimCommand},
		&engine.Command{Name: "xsetid", Arity: -3, Flags: engine.Write | engine.DenyOOM | engine.Fast, ACL: "@write " + st + " @fast", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "stream", Run: xsetidCommand},

		&engine.Command{Name: "xgroup", Arity: -2, ACL: "@slow", Group: "stream"},
		&engine.Command{Name: "xgroup|create", Arity: -5, Flags: engine.Write | engine.DenyOOM, ACL: "@write " + st + " @slow", FirstKey: 2, LastKey: 2, KeyStep: 1, Run: xgroupCommand},
		&engine.Command{Name: "xgroup|createconsumer", Arity: 5, Flags: engine.Write | engine.DenyOOM, ACL: "@write " + st + " @slow", FirstKey: 2, LastKey: 2, KeyStep: 1, Run: xgroupCommand},
		&engine.Command{Name: "xgroup|delconsumer", Arity: 5, Flags: engine.Write, ACL: "@write " + st + " @slow", FirstKey: 2, LastKey: 2, KeyStep: 1, Run: xgroupCommand},
		&engine.Command{Name: "xgroup|destroy", Arity: 4, Flags: engine.Write, ACL: "@write " + st + " @slow", FirstKey: 2, LastKey: 2, KeyStep: 1, Run: xgroupCommand},
		&engine.Command{Name: "xgroup|setid", Arity: -5, Flags: engine.Write, ACL: "@write " + st + " @slow", FirstKey: 2, LastKey: 2, KeyStep: 1, Run: xgroupCommand},
		&engine.Command{Name: "xgroup|help", Arity: 2, Flags: engine.Loading | engine.Stale, ACL: st + " @slow", Run: xgroupHelpCommand},

		&engine.Command{Name: "xinfo", Arity: -2, ACL: "@slow", Group: "stream"},
		&engine.Command{Name: "xinfo|stream", Arity: -3, Flags: engine.ReadOnly, ACL: "@read " + st + " @slow", FirstKey: 2, LastKey: 2, KeyStep: 1, Run: xinfoStreamCommand},
		&engine.Command{Name: "xinfo|groups", Arity: 3, Flags: engine.ReadOnly, ACL: "@read " + st + " @slow", FirstKey: 2, LastKey: 2, KeyStep: 1, Run: xinfoGroupsCommand},
		&engine.Command{Name: "xinfo|consumers", Arity: 4, Flags: engine.ReadOnly, ACL: "@read " + st + " @slow", FirstKey: 2, LastKey: 2, KeyStep: 1, Run: xinfoConsumersCommand},
		&engine.Command{Name: "xinfo|help", Arity: 2, Flags: engine.Loading | engine.Stale, ACL: st + " @slow", Run: xinfoHelpCommand},
	)
}

// Errors of the stream commands, as t_stream.c words them.
const (
	errStreamID          = "ERR Invalid stream ID specified as stream command argument"
	errXAddIDSmall       = "ERR The ID specified in XADD is equal or smaller than the target stream top item"
	errXAddIDZero        = "ERR The ID specified in XADD must be greater than 0-0"
	errXAddTooLarge      = "ERR Elements are too large to be stored"
	errXAddExhausted     = "ERR The stream has exhausted the last possible ID, unable to add more items"
	errStartInterval     = "ERR invalid start ID for the interval"
	errEndInterval       = "ERR invalid end ID for the interval"
	errMaxLenAndMinID    = "ERR syntax error, MAXLEN and MINID options at the same time are not compatible"
	errLimitNoStrategy   = "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy"
	errXTrimNoStrategy   = "ERR syntax error, XTRIM must be called with a trimming strategy"
	errLimitNoApprox     = "ERR syntax error, LIMIT cannot be used without the special ~ option"
	errMaxLenNegative    = "ERR The MAXLEN argument must be >= 0."
	errLimitNegative     = "ERR The LIMIT argument must be >= 0."
	errXGroupNoKey       = "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically."
	errBusyGroup         = "BUSYGROUP Consumer Group name already exists"
	errEntriesRead       = "ERR value for ENTRIESREAD must be positive or -1"
	errUnbalancedXRead   = "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified."
	errTimeoutNotInteger = "ERR timeout is not an integer or out of range"
	errTimeoutNegative   = "ERR timeout is negative"
)

// ---- IDs ---------------------------------------------------------------------

// parseStreamUint reads a decimal as string2ull does: string2ll first,
// then strtoull's looser form (leading space, a sign, leading zeros).
func parseStreamUint(b []byte) (uint64, bool) {
	if v, ok := redisconv.ParseInt(b); ok {
		return uint64(v), v >= 0
	}
	i := 0
	for i < len(b) && (b[i] == ' ' || (b[i] >= '\t' && b[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	if i == len(b) {
		return 0, false
	}
	var v uint64
	for ; i < len(b); i++ {
		d := b[i]
		if d < '0' || d > '9' {
			return 0, false
		}
		if v > (math.MaxUint64-uint64(d-'0'))/10 {
			return 0, false // ERANGE
		}
		v = v*10 + uint64(d-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// parseStreamID reads an ID as streamGenericParseIDOrReply: "-" and "+"
// (unless strict), "ms" (the sequence is missingSeq), "ms-seq", and,
// when seqStar, "ms-*" (seqGiven false). ok=false: not an ID (the caller
// writes errStreamID, or not).
func parseStreamID(arg []byte, missingSeq uint64, strict, seqStar bool) (id keyspace.StreamID, seqGiven, ok bool) {
	if len(arg) > 127 {
		return id, false, false
	}
	if i := bytes.IndexByte(arg, 0); i >= 0 {
		arg = arg[:i] // the C string ends there
	}
	if len(arg) == 1 && (arg[0] == '-' || arg[0] == '+') {
		if strict {
			return id, false, false
		}
		if arg[0] == '-' {
			return keyspace.StreamID{}, true, true
		}
		return keyspace.MaxStreamID, true, true
	}
	seqGiven = true
	msPart, seqPart, dash := bytes.Cut(arg, []byte{'-'})
	ms, ok := parseStreamUint(msPart)
	if !ok {
		return id, false, false
	}
	seq := missingSeq
	if dash {
		if seqStar && len(seqPart) == 1 && seqPart[0] == '*' {
			seq, seqGiven = 0, false
		} else if seq, ok = parseStreamUint(seqPart); !ok {
			return id, false, false
		}
	}
	return keyspace.StreamID{Ms: ms, Seq: seq}, seqGiven, true
}

// isToken reports whether arg is the one-character token ch ("*", "~",
// "$", ">"), read as Redis reads it: as a C string, which ends at a NUL.
func isToken(arg []byte, ch byte) bool {
	return len(arg) > 0 && arg[0] == ch && (len(arg) == 1 || arg[1] == 0)
}

// streamIDArg parses a strict ID (no "-"/"+"), writing the error.
func streamIDArg(c *engine.Ctx, arg []byte) (keyspace.StreamID, bool) {
	id, _, ok := parseStreamID(arg, 0, true, false)
	if !ok {
		c.Error(errStreamID)
	}
	return id, ok
}

// streamIntervalArg parses a range bound (streamParseIntervalIDOrReply
// followed by the exclusive step): "(" makes it exclusive.
func streamIntervalArg(c *engine.Ctx, arg []byte, missingSeq uint64, isStart bool) (keyspace.StreamID, bool) {
	exclude := len(arg) > 1 && arg[0] == '('
	var id keyspace.StreamID
	var ok bool
	if exclude {
		id, _, ok = parseStreamID(arg[1:], missingSeq, true, false)
	} else {
		id, _, ok = parseStreamID(arg, missingSeq, false, false)
	}
	if !ok {
		c.Error(errStreamID)
		return id, false
	}
	if exclude {
		if isStart {
			if id, ok = id.Incr(); !ok {
				c.Error(errStartInterval)
			}
		} else if id, ok = id.Decr(); !ok {
			c.Error(errEndInterval)
		}
	}
	return id, ok
}

// ---- access helpers -----------------------------------------------------------

// streamRead looks key up for a read: (nil, true) when missing,
// ok=false after WRONGTYPE.
func streamRead(c *engine.Ctx, key []byte) (*keyspace.Stream, bool) {
	e := c.DB.Lookup(key)
	if e == nil {
		return nil, true
	}
	if e.Type() != keyspace.TypeStream {
		c.Error(engine.ErrWrongType)
		return nil, false
	}
	return e.Obj().(*keyspace.Stream), true
}

// streamWrite looks key up for a change of its entries (XADD, XDEL,
// XTRIM: a WATCH sees them); quiet for a change of its groups only.
func streamWrite(c *engine.Ctx, key []byte, quiet bool) (*keyspace.Stream, bool) {
	var e *keyspace.Entry
	if quiet {
		e = c.DB.LookupWriteQuiet(key)
	} else {
		e = c.DB.LookupWrite(key)
	}
	if e == nil {
		return nil, true
	}
	if e.Type() != keyspace.TypeStream {
		c.Error(engine.ErrWrongType)
		return nil, false
	}
	return e.Obj().(*keyspace.Stream), true
}

// streamLimits are stream-node-max-bytes and stream-node-max-entries.
func streamLimits(c *engine.Ctx) (int64, int64) {
	cfg := c.Config()
	return cfg.IntOf(streamNodeMaxBytes), cfg.IntOf(streamNodeMaxEntries)
}

var (
	streamNodeMaxBytes   = config.KeyOf("stream-node-max-bytes")
	streamNodeMaxEntries = config.KeyOf("stream-node-max-entries")
)

// obeys reports whether the client's commands are applied as given
// (mustObeyClient): the master's stream, an AOF being loaded.
func obeys(c *engine.Ctx) bool { return c.Client.Master || c.Client.Replaying }

// ---- replies ------------------------------------------------------------------

func replyStreamID(c *engine.Ctx, id keyspace.StreamID) {
	var b [44]byte
	c.W.Bulk(id.Append(b[:0]))
}

func replyLPEntry(c *engine.Ctx, e listpack.Entry) {
	if e.IsInt {
		c.W.BulkInt(e.Int)
		return
	}
	c.W.Bulk(e.Str)
}

// replyStreamEntry writes [id, [field, value, ...]].
func replyStreamEntry(c *engine.Ctx, e *keyspace.StreamEntry) {
	c.W.Array(2)
	replyStreamID(c, e.ID)
	c.W.Array(len(e.FV))
	for _, x := range e.FV {
		replyLPEntry(c, x)
	}
}

// replyEntryByID writes the entry id as replyStreamEntry; false when
// there is none (nothing written).
func replyEntryByID(c *engine.Ctx, s *keyspace.Stream, id keyspace.StreamID) bool {
	found := false
	s.Range(id, id, false, func(e *keyspace.StreamEntry) bool {
		replyStreamEntry(c, e)
		found = true
		return false
	})
	return found
}

// ---- XADD XTRIM ---------------------------------------------------------------

// addTrimArgs are XADD's and XTRIM's parsed options.
type addTrimArgs struct {
	keyspace.TrimArgs
	id         keyspace.StreamID
	idGiven    bool
	seqGiven   bool
	noMkStream bool
	trimArgIdx int // the MAXLEN/MINID value's position, for the propagated form
}

// parseAddTrim is streamParseAddOrTrimArgsOrReply: it returns the
// position of XADD's ID argument, or -1 after an error.
func parseAddTrim(c *engine.Ctx, a *addTrimArgs, xadd bool) int {
	args := c.Args
	i := 2
	limitGiven := false
	for ; i < len(args); i++ {
		more := len(args) - 1 - i
		opt := args[i]
		switch {
		case xadd && isToken(opt, '*'):
			goto done
		case engine.EqualFold(opt, "maxlen") && more > 0, engine.EqualFold(opt, "minid") && more > 0:
			maxlen := engine.EqualFold(opt, "maxlen")
			if a.Strategy != keyspace.TrimNone {
				c.Error(errMaxLenAndMinID)
				return -1
			}
			a.Approx = false
			next := args[i+1]
			if more >= 2 && isToken(next, '~') {
				a.Approx = true
				i++
			} else if more >= 2 && isToken(next, '=') {
				i++
			}
			if maxlen {
				n, ok := c.IntArg(i + 1)
				if !ok {
					return -1
				}
				if n < 0 {
					c.Error(errMaxLenNegative)
					return -1
				}
				a.MaxLen = n
				a.Strategy = keyspace.TrimMaxLen
			} else {
				id, ok := streamIDArg(c, args[i+1])
				if !ok {
					return -1
				}
				a.MinID = id
				a.Strategy = keyspace.TrimMinID
			}
			i++
			a.trimArgIdx = i
		case engine.EqualFold(opt, "limit") && more > 0:
			n, ok := c.IntArg(i + 1)
			if !ok {
				return -1
			}
			if n < 0 {
				c.Error(errLimitNegative)
				return -1
			}
			a.Limit = n
			limitGiven = true
			i++
		case xadd && engine.EqualFold(opt, "nomkstream"):
			a.noMkStream = true
		case xadd:
			id, seqGiven, ok := parseStreamID(opt, 0, true, true)
			if !ok {
				c.Error(errStreamID)
				return -1
			}
			a.id, a.seqGiven, a.idGiven = id, seqGiven, true
			goto done
		default:
			c.Error(engine.ErrSyntax)
			return -1
		}
	}
done:
	if a.Limit != 0 && a.Strategy == keyspace.TrimNone {
		c.Error(errLimitNoStrategy)
		return -1
	}
	if !xadd && a.Strategy == keyspace.TrimNone {
		c.Error(errXTrimNoStrategy)
		return -1
	}
	if obeys(c) {
		a.Limit = 0
	} else if limitGiven {
		if !a.Approx {
			c.Error(errLimitNoApprox)
			return -1
		}
	} else if a.Approx {
		_, maxEntries := streamLimits(c)
		a.Limit = 10000
		if maxEntries > 0 && maxEntries <= 1000000/100 {
			a.Limit = 100 * maxEntries
		} else if maxEntries > 1000000/100 {
			a.Limit = 1000000
		}
	} else {
		a.Limit = 0
	}
	return i
}

// trimmedForm rewrites an approximate trim for propagation: "=" and the
// length (MAXLEN) or first ID, tombstones included (MINID), it left, so
// that a replica or an AOF replay trims exactly as much.
func trimmedForm(argv [][]byte, s *keyspace.Stream, a *addTrimArgs) {
	argv[a.trimArgIdx-1] = []byte("=")
	if a.Strategy == keyspace.TrimMaxLen {
		argv[a.trimArgIdx] = strconv.AppendUint(nil, s.Length(), 10)
	} else {
		argv[a.trimArgIdx] = s.EdgeID(true, false).Append(nil)
	}
}

// XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value [field value ...]
func xaddCommand(c *engine.Ctx) {
	var a addTrimArgs
	idPos := parseAddTrim(c, &a, true)
	if idPos < 0 {
		return
	}
	fieldPos := idPos + 1
	if n := len(c.Args) - fieldPos; n < 2 || n%2 == 1 {
		c.Error(engine.ErrWrongArgs(c.Cmd.Name))
		return
	}
	if a.idGiven && a.seqGiven && a.id.IsZero() {
		c.Error(errXAddIDZero)
		return
	}
	key := c.Args[1]
	s, ok := streamWrite(c, key, false)
	if !ok {
		return
	}
	created := false
	if s == nil {
		if a.noMkStream {
			c.W.Null()
			return
		}
		s, created = keyspace.NewStream(), true
	}
	if s.LastID == keyspace.MaxStreamID {
		c.Error(errXAddExhausted)
		return
	}
	// The new ID (streamAppendItem).
	var id keyspace.StreamID
	switch {
	case !a.idGiven:
		now := uint64(c.KS.Now())
		if now > s.LastID.Ms {
			id = keyspace.StreamID{Ms: now}
		} else {
			id, _ = s.LastID.Incr()
		}
	case a.seqGiven:
		id = a.id
	case s.LastID.Ms == a.id.Ms:
		if s.LastID.Seq == math.MaxUint64 {
			// streamAppendItem fails here without setting errno, which
			// xaddCommand then reads as ERANGE: Redis answers this.
			c.Error(errXAddTooLarge)
			return
		}
		id = keyspace.StreamID{Ms: a.id.Ms, Seq: s.LastID.Seq + 1}
	default:
		id = a.id
	}
	if id.Cmp(s.LastID) <= 0 {
		c.Error(errXAddIDSmall)
		return
	}
	fv := c.Args[fieldPos:]
	var total int64
	for _, b := range fv {
		total += int64(len(b))
	}
	if total > keyspace.StreamMaxListpackSize {
		c.Error(errXAddTooLarge)
		return
	}
	if created {
		c.DB.PutObject(key, s)
		c.Notify(config.NotifyNew, "new", key)
	}
	maxBytes, maxEntries := streamLimits(c)
	s.Append(id, fv, maxBytes, maxEntries)
	replyStreamID(c, id)
	c.Notify(config.NotifyStream, "xadd", key)
	c.Dirty(1)

	if a.Strategy != keyspace.TrimNone && s.Trim(a.TrimArgs) > 0 {
		c.Notify(config.NotifyStream, "xtrim", key)
	}
	if c.Propagating() {
		// The deterministic form: the ID generated, the trim done.
		argv := append([][]byte(nil), c.Args...)
		if a.Approx {
			trimmedForm(argv, s, &a)
		}
		if !a.idGiven || !a.seqGiven {
			argv[idPos] = id.Append(nil)
		}
		c.Propagate(argv...)
	}
	c.KeyReady(key)
}

// XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]
func xtrimCommand(c *engine.Ctx) {
	var a addTrimArgs
	if parseAddTrim(c, &a, false) < 0 {
		return
	}
	key := c.Args[1]
	s, ok := streamWrite(c, key, false)
	if !ok {
		return
	}
	if s == nil {
		c.W.Int(0)
		return
	}
	deleted := s.Trim(a.TrimArgs)
	if deleted > 0 {
		c.Notify(config.NotifyStream, "xtrim", key)
		if a.Approx {
			argv := append([][]byte(nil), c.Args...)
			trimmedForm(argv, s, &a)
			c.Propagate(argv...)
		}
		c.Dirty(int(deleted))
	}
	c.W.Int(deleted)
}

// ---- XRANGE XREVRANGE XLEN XDEL ----------------------------------------------

func xrangeCommand(c *engine.Ctx)    { xrangeGeneric(c, false) }
func xrevrangeCommand(c *engine.Ctx) { xrangeGeneric(c, true) }

// xrangeGeneric is XRANGE key start end [COUNT n] and XREVRANGE key end
// start [COUNT n].
func xrangeGeneric(c *engine.Ctx, rev bool) {
	startArg, endArg := c.Args[2], c.Args[3]
	if rev {
		startArg, endArg = endArg, startArg
	}
	start, ok := streamIntervalArg(c, startArg, 0, true)
	if !ok {
		return
	}
	end, ok := streamIntervalArg(c, endArg, math.MaxUint64, false)
	if !ok {
		return
	}
	count := int64(-1)
	for j := 4; j < len(c.Args); j++ {
		if engine.EqualFold(c.Args[j], "count") && j+1 < len(c.Args) {
			n, ok := c.IntArg(j + 1)
			if !ok {
				return
			}
			count = max(n, 0)
			j++
		} else {
			c.Error(engine.ErrSyntax)
			return
		}
	}
	s, ok := streamRead(c, c.Args[1])
	if !ok {
		return
	}
	if s == nil {
		c.W.Array(0)
		return
	}
	if count == 0 {
		c.W.NullArray()
		return
	}
	mark := c.W.DeferArray()
	n := int64(0)
	s.Range(start, end, rev, func(e *keyspace.StreamEntry) bool {
		replyStreamEntry(c, e)
		n++
		return count < 0 || n < count
	})
	c.W.FillArray(mark, int(n))
}

func xlenCommand(c *engine.Ctx) {
	s, ok := streamRead(c, c.Args[1])
	if !ok {
		return
	}
	if s == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(s.Length()))
}

// XDEL key id [id ...]
func xdelCommand(c *engine.Ctx) {
	key := c.Args[1]
	s, ok := streamWrite(c, key, false)
	if !ok {
		return
	}
	if s == nil {
		c.W.Int(0)
		return
	}
	ids := make([]keyspace.StreamID, 0, len(c.Args)-2)
	for _, arg := range c.Args[2:] {
		id, ok := streamIDArg(c, arg)
		if !ok {
			return
		}
		ids = append(ids, id)
	}
	deleted, first := 0, false
	for _, id := range ids {
		if s.Delete(id) {
			if id == s.FirstID {
				first = true
			}
			if id.Cmp(s.MaxDeletedID) > 0 {
				s.MaxDeletedID = id
			}
			deleted++
		}
	}
	if deleted > 0 {
		if s.Length() == 0 {
			s.FirstID = keyspace.StreamID{}
		} else if first {
			s.FirstID = s.EdgeID(true, true)
		}
		c.Notify(config.NotifyStream, "xdel", key)
		c.Dirty(deleted)
	}
	c.W.Int(int64(deleted))
}

// ---- XREAD XREADGROUP ----------------------------------------------------------

// xreadKeys and xreadgroupKeys find the keys of XREAD and XREADGROUP as
// Redis 7.0 does (getKeysFromCommandWithSpecs): by their key
// specification first, and by xreadGetKeys only when the specification
// finds none. The two disagree on an odd count after STREAMS: the
// specification (the first STREAMS from the start position, not the
// last argument, then half of what follows) still finds keys there.
func xreadKeys(args [][]byte) []int      { return xreadSpecKeys(args, 1) }
func xreadgroupKeys(args [][]byte) []int { return xreadSpecKeys(args, 4) }

func xreadSpecKeys(args [][]byte, startFrom int) []int {
	argc := len(args)
	first := 0
	for i := startFrom; i < argc-1; i++ {
		if engine.EqualFold(args[i], "streams") {
			first = i + 1
			break
		}
	}
	if first > 0 {
		last := first + (argc-first)/2 - 1
		if last < argc && last >= first {
			keys := make([]int, 0, last-first+1)
			for i := first; i <= last; i++ {
				keys = append(keys, i)
			}
			return keys
		}
	}
	return xreadGetKeys(args)
}

// xreadGetKeys is db.c's xreadGetKeys: the keys after the STREAMS option
// (options skipped with their arguments), none unless an even number of
// arguments follows it.
func xreadGetKeys(args [][]byte) []int {
	pos := -1
scan:
	for i := 1; i < len(args); i++ {
		switch a := args[i]; {
		case engine.EqualFold(a, "block"), engine.EqualFold(a, "count"):
			i++
		case engine.EqualFold(a, "group"):
			i += 2
		case engine.EqualFold(a, "noack"):
		case engine.EqualFold(a, "streams"):
			pos = i
			break scan
		default:
			break scan
		}
	}
	if pos < 0 {
		return nil
	}
	num := len(args) - pos - 1
	if num == 0 || num%2 != 0 {
		return nil
	}
	num /= 2
	keys := make([]int, num)
	for i := range keys {
		keys[i] = pos + 1 + i
	}
	return keys
}

// xreadDefaultCount is the COUNT a blocked XREAD without one is served
// with (XREAD_BLOCKED_DEFAULT_COUNT).
const xreadDefaultCount = 1000

// xreadOpts are XREAD's and XREADGROUP's parsed options, copied out of
// the arguments so that a blocked client keeps them.
type xreadOpts struct {
	group, consumer []byte
	noack           bool
	count           int64
}

func xreadCommand(c *engine.Ctx)      { xreadGeneric(c, false) }
func xreadgroupCommand(c *engine.Ctx) { xreadGeneric(c, true) }

// xreadGeneric is XREAD [COUNT n] [BLOCK ms] STREAMS key... id... and
// XREADGROUP GROUP g consumer [COUNT n] [BLOCK ms] [NOACK] STREAMS
// key... id...
func xreadGeneric(c *engine.Ctx, xreadgroup bool) {
	// Propagation is explicit (XCLAIM, XGROUP forms), as 7.0's
	// preventCommandPropagation.
	c.PreventPropagation()
	var o xreadOpts
	timeout := int64(-1)
	streamsArg, nstreams := 0, 0
	args := c.Args
	for i := 1; i < len(args); i++ {
		more := len(args) - i - 1
		opt := args[i]
		switch {
		case engine.EqualFold(opt, "block") && more > 0:
			if c.Client.Script {
				// The name as the script wrote it (argv[0]).
				c.Error("ERR " + string(args[0]) + " command is not allowed with BLOCK option from scripts")
				return
			}
			i++
			n, ok := engine.ParseInt(args[i])
			if !ok {
				c.Error(errTimeoutNotInteger)
				return
			}
			if n < 0 {
				c.Error(errTimeoutNegative)
				return
			}
			timeout = n
		case engine.EqualFold(opt, "count") && more > 0:
			i++
			n, ok := c.IntArg(i)
			if !ok {
				return
			}
			o.count = max(n, 0)
		case engine.EqualFold(opt, "streams") && more > 0:
			streamsArg = i + 1
			nstreams = len(args) - streamsArg
			if nstreams%2 != 0 {
				c.Error(errUnbalancedXRead)
				return
			}
			nstreams /= 2
			i = len(args)
		case engine.EqualFold(opt, "group") && more >= 2:
			if !xreadgroup {
				c.Error("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			o.group, o.consumer = args[i+1], args[i+2]
			i += 2
		case engine.EqualFold(opt, "noack"):
			if !xreadgroup {
				c.Error("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			o.noack = true
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	if streamsArg == 0 {
		c.Error(engine.ErrSyntax)
		return
	}
	if xreadgroup && o.group == nil {
		c.Error("ERR Missing GROUP option for XREADGROUP")
		return
	}
	keys := args[streamsArg : streamsArg+nstreams]
	ids := make([]keyspace.StreamID, nstreams)
	for i := range nstreams {
		key := keys[i]
		arg := args[streamsArg+nstreams+i]
		s, ok := streamRead(c, key)
		if !ok {
			return
		}
		if o.group != nil && (s == nil || s.Group(o.group) == nil) {
			c.Error("NOGROUP No such key '" + string(key) + "' or consumer group '" + string(o.group) + "' in XREADGROUP with GROUP option")
			return
		}
		switch {
		case isToken(arg, '$'):
			if xreadgroup {
				c.Error("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.")
				return
			}
			if s != nil {
				ids[i] = s.LastID
			}
		case isToken(arg, '>'):
			if !xreadgroup {
				c.Error("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
				return
			}
			ids[i] = keyspace.MaxStreamID
		default:
			id, ok := streamIDArg(c, arg)
			if !ok {
				return
			}
			ids[i] = id
		}
	}

	// Serve at once what can be.
	served := 0
	mark := 0
	for i := range nstreams {
		key := keys[i]
		s, _ := streamRead(c, key)
		if s == nil {
			continue
		}
		gt := ids[i]
		serve, history := false, false
		if o.group != nil {
			if gt != keyspace.MaxStreamID {
				serve, history = true, true
			} else if s.Length() > 0 {
				last := s.Group(o.group).LastID
				if s.LastValidID().Cmp(last) > 0 {
					serve, gt = true, last
				}
			}
		} else if s.Length() > 0 && s.LastValidID().Cmp(gt) > 0 {
			serve = true
		}
		if !serve {
			continue
		}
		if o.group != nil {
			// The group's state changes: the entry goes private.
			s, _ = streamWrite(c, key, true)
			c.Dirty(1)
		}
		served++
		if served == 1 {
			mark = c.W.DeferArray()
		}
		xreadKey(c, key)
		start, _ := gt.Incr()
		xreadServe(c, s, key, start, &o, history)
	}
	if served > 0 {
		if c.W.Proto() == 2 {
			c.W.FillArray(mark, served) // of [key, entries] pairs
		} else {
			c.W.FillMap(mark, served)
		}
		return
	}
	if timeout < 0 {
		c.W.NullArray()
		return
	}
	// Block: a copy of what serving later needs (the arguments' memory
	// is the connection's, reused once the command returns).
	// The options too, apart: the closures below move what they capture
	// to the heap, and o so captured cost every XREADGROUP served at once
	// an allocation.
	bo := o
	bo.group, bo.consumer = bytes.Clone(bo.group), bytes.Clone(bo.consumer)
	bkeys := make([][]byte, nstreams)
	gts := map[string]keyspace.StreamID{}
	seen := map[string]*keyspace.Stream{}
	for i := range nstreams {
		bkeys[i] = bytes.Clone(keys[i])
		if _, dup := gts[string(keys[i])]; !dup {
			gts[string(keys[i])] = ids[i]
			if e := c.DB.Peek(keys[i]); e != nil && e.Type() == keyspace.TypeStream {
				seen[string(keys[i])] = e.Obj().(*keyspace.Stream)
			}
		}
	}
	// Redis makes a key ready for its stream readers when entries are
	// added (XADD: KeyReady), when its group is destroyed, and when the
	// stream is deleted or written over; not when it changes in place
	// otherwise (XDEL, XTRIM, EXPIRE), which would answer a reader
	// waiting above the top of an emptied stream with nothing.
	replaced := func(db *keyspace.DB, key []byte) bool {
		e := db.Peek(key)
		if e == nil || e.Type() != keyspace.TypeStream {
			return true
		}
		old := seen[string(key)]
		return old == nil || !e.Obj().(*keyspace.Stream).SameAs(old)
	}
	if bo.count == 0 {
		bo.count = xreadDefaultCount
	}
	group := bo.group != nil
	ready := func(db *keyspace.DB, key []byte) bool {
		e := db.Peek(key)
		if e == nil || e.Type() != keyspace.TypeStream {
			return group // XREADGROUP is answered UNBLOCKED
		}
		s := e.Obj().(*keyspace.Stream)
		gt := gts[string(key)]
		if group {
			g := s.Group(bo.group)
			if g == nil {
				return true // answered NOGROUP
			}
			gt = g.LastID
		}
		return s.LastID.Cmp(gt) > 0
	}
	serveBlocked := func(c *engine.Ctx, key []byte) {
		e := c.DB.Peek(key)
		if e == nil || e.Type() != keyspace.TypeStream {
			c.Error("UNBLOCKED the stream key no longer exists")
			return
		}
		s := e.Obj().(*keyspace.Stream)
		gt := gts[string(key)]
		if group {
			g := s.Group(bo.group)
			if g == nil {
				c.Error("NOGROUP the consumer group this client was blocked on no longer exists")
				return
			}
			gt = g.LastID
			s, _ = streamWrite(c, key, true)
			c.Dirty(1)
		}
		if c.W.Proto() == 2 {
			c.W.Array(1)
		} else {
			c.W.Map(1)
		}
		xreadKey(c, key)
		start, _ := gt.Incr()
		xreadServe(c, s, key, start, &bo, false)
	}
	// A timeout past what a time.Duration holds (292 years) would wrap
	// around, to a short wait for some values: it waits forever.
	wait := time.Duration(timeout) * time.Millisecond
	if timeout > math.MaxInt64/int64(time.Millisecond) {
		wait = 0
	}
	engine.Block(c, bkeys, wait, false, replaced, ready, serveBlocked)
}

// xreadKey starts a stream's part of XREAD's reply, which is a map from
// key to entries: the key, in a [key, entries] pair in RESP2.
func xreadKey(c *engine.Ctx, key []byte) {
	if c.W.Proto() == 2 {
		c.W.Array(2)
	}
	c.W.Bulk(key)
}

// xreadServe writes the entries of s from start on (at most o.count; 0:
// all), for a group the consumer's history (history) or new entries,
// which it records as pending, propagating what it changed.
func xreadServe(c *engine.Ctx, s *keyspace.Stream, key []byte, start keyspace.StreamID, o *xreadOpts, history bool) {
	if o.group == nil {
		replyRange(c, s, start, o.count)
		return
	}
	g := s.Group(o.group)
	now := c.KS.Now()
	cons := g.Consumer(o.consumer)
	if cons == nil {
		cons = g.CreateConsumer(o.consumer, now)
		c.Notify(config.NotifyStream, "xgroup-createconsumer", key)
		if o.noack {
			c.Propagate([]byte("XGROUP"), []byte("CREATECONSUMER"), key, o.group, o.consumer)
		}
	} else {
		cons.SeenTime = now
	}
	if history {
		// From the consumer's own pending list (streamReplyWithRangeFromConsumerPEL).
		mark := c.W.DeferArray()
		n := int64(0)
		cons.PendingRange(start, func(nk *keyspace.StreamNACK) bool {
			if o.count != 0 && n >= o.count {
				return false
			}
			if replyEntryByID(c, s, nk.ID) {
				nk.DeliveryTime = now
				nk.DeliveryCount++
			} else {
				c.W.Array(2)
				replyStreamID(c, nk.ID)
				c.W.NullArray()
			}
			n++
			return true
		})
		c.W.FillArray(mark, int(n))
		return
	}
	mark := c.W.DeferArray()
	n := int64(0)
	propagateLast := false
	s.Range(start, keyspace.MaxStreamID, false, func(e *keyspace.StreamEntry) bool {
		if e.ID.Cmp(g.LastID) > 0 {
			if g.EntriesRead != keyspace.InvalidEntriesRead && !s.RangeHasTombstones(e.ID, nil) {
				g.EntriesRead++
			} else if s.EntriesAdded != 0 {
				g.EntriesRead = s.EstimateDistance(e.ID)
			}
			g.LastID = e.ID
			if o.noack {
				propagateLast = true
			}
		}
		replyStreamEntry(c, e)
		if !o.noack {
			nk := g.AddPending(e.ID, cons, now)
			propagateClaim(c, key, g, e.ID, nk)
		}
		n++
		return o.count == 0 || n < o.count
	})
	if propagateLast {
		propagateGroupID(c, key, g)
	}
	c.W.FillArray(mark, int(n))
}

// replyRange writes the entries from start on, at most count (0: all).
func replyRange(c *engine.Ctx, s *keyspace.Stream, start keyspace.StreamID, count int64) {
	mark := c.W.DeferArray()
	n := int64(0)
	s.Range(start, keyspace.MaxStreamID, false, func(e *keyspace.StreamEntry) bool {
		replyStreamEntry(c, e)
		n++
		return count == 0 || n < count
	})
	c.W.FillArray(mark, int(n))
}

// propagateClaim propagates a pending entry's state as the idempotent
// XCLAIM key group consumer 0 id TIME ms RETRYCOUNT n FORCE JUSTID
// LASTID last-id (streamPropagateXCLAIM).
func propagateClaim(c *engine.Ctx, key []byte, g *keyspace.StreamGroup, id keyspace.StreamID, nk *keyspace.StreamNACK) {
	if !c.Propagating() {
		return
	}
	c.Propagate([]byte("XCLAIM"), key, []byte(g.Name), []byte(nk.Consumer.Name), []byte("0"), id.Append(nil),
		[]byte("TIME"), strconv.AppendInt(nil, nk.DeliveryTime, 10),
		[]byte("RETRYCOUNT"), strconv.AppendUint(nil, nk.DeliveryCount, 10),
		[]byte("FORCE"), []byte("JUSTID"), []byte("LASTID"), g.LastID.Append(nil))
}

// propagateGroupID propagates XGROUP SETID key group last-id ENTRIESREAD n.
func propagateGroupID(c *engine.Ctx, key []byte, g *keyspace.StreamGroup) {
	if !c.Propagating() {
		return
	}
	c.Propagate([]byte("XGROUP"), []byte("SETID"), key, []byte(g.Name), g.LastID.Append(nil),
		[]byte("ENTRIESREAD"), strconv.AppendInt(nil, g.EntriesRead, 10))
}

// ---- XGROUP ----------------------------------------------------------------------

var xgroupHelp = []string{
	"CREATE <key> <groupname> <id|$> [option]",
	"    Create a new consumer group. Options are:",
	"    * MKSTREAM",
	"      Create the empty stream if it does not exist.",
	"    * ENTRIESREAD entries_read",
	"      Set the group's entries_read counter (internal use).",
	"CREATECONSUMER <key> <groupname> <consumer>",
	"    Create a new consumer in the specified group.",
	"DELCONSUMER <key> <groupname> <consumer>",
	"    Remove the specified consumer.",
	"DESTROY <key> <groupname>",
	"    Remove the specified group.",
	"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
	"    Set the current group ID and entries_read counter.",
}

func xgroupHelpCommand(c *engine.Ctx) { c.ReplyHelp(xgroupHelp) }

// xgroupCommand is every XGROUP subcommand but HELP (xgroupCommand).
func xgroupCommand(c *engine.Ctx) {
	args := c.Args
	sub := args[1]
	create := engine.EqualFold(sub, "create")
	setid := engine.EqualFold(sub, "setid")
	mkstream := false
	entriesRead := int64(keyspace.InvalidEntriesRead)
	for i := 5; i < len(args); {
		switch {
		case create && engine.EqualFold(args[i], "mkstream"):
			mkstream = true
			i++
		case (create || setid) && engine.EqualFold(args[i], "entriesread") && i+1 < len(args):
			n, ok := c.IntArg(i + 1)
			if !ok {
				return
			}
			if n < 0 && n != keyspace.InvalidEntriesRead {
				c.Error(errEntriesRead)
				return
			}
			entriesRead = n
			i += 2
		default:
			c.Error(subcommandSyntaxError(c))
			return
		}
	}
	key, name := args[2], args[3]
	s, ok := streamWrite(c, key, true)
	if !ok {
		return
	}
	var g *keyspace.StreamGroup
	if !mkstream {
		if s == nil {
			c.Error(errXGroupNoKey)
			return
		}
		g = s.Group(name)
		if g == nil && (setid || engine.EqualFold(sub, "createconsumer") || engine.EqualFold(sub, "delconsumer")) {
			c.Error("NOGROUP No such consumer group '" + string(name) + "' for key name '" + string(key) + "'")
			return
		}
	}
	switch {
	case create && len(args) <= 8:
		var id keyspace.StreamID
		if isToken(args[4], '$') {
			if s != nil {
				id = s.LastID
			}
		} else if id, ok = streamIDArg(c, args[4]); !ok {
			return
		}
		if s == nil {
			s = keyspace.NewStream()
			c.DB.PutObject(key, s)
			c.Notify(config.NotifyNew, "new", key)
		}
		if s.CreateGroup(name, id, entriesRead) == nil {
			c.Error(errBusyGroup)
			return
		}
		c.W.OK()
		c.Dirty(1)
		c.Notify(config.NotifyStream, "xgroup-create", key)
	case setid && (len(args) == 5 || len(args) == 7):
		var id keyspace.StreamID
		if isToken(args[4], '$') {
			id = s.LastID
		} else {
			id, _, ok = parseStreamID(args[4], 0, false, false)
			if !ok {
				c.Error(errStreamID)
				return
			}
		}
		g.LastID, g.EntriesRead = id, entriesRead
		c.W.OK()
		c.Dirty(1)
		c.Notify(config.NotifyStream, "xgroup-setid", key)
	case engine.EqualFold(sub, "destroy") && len(args) == 4:
		if g == nil {
			c.W.Int(0)
			return
		}
		s.DestroyGroup(name)
		c.W.Int(1)
		c.Dirty(1)
		c.Notify(config.NotifyStream, "xgroup-destroy", key)
		c.KeyReady(key) // its blocked XREADGROUP clients get NOGROUP
	case engine.EqualFold(sub, "createconsumer") && len(args) == 5:
		if g.CreateConsumer(args[4], c.KS.Now()) == nil {
			c.W.Int(0)
			return
		}
		c.W.Int(1)
		c.Dirty(1)
		c.Notify(config.NotifyStream, "xgroup-createconsumer", key)
	case engine.EqualFold(sub, "delconsumer") && len(args) == 5:
		pending := 0
		if cons := g.Consumer(args[4]); cons != nil {
			pending = g.DeleteConsumer(cons)
			c.Dirty(1)
			c.Notify(config.NotifyStream, "xgroup-delconsumer", key)
		}
		c.W.Int(int64(pending))
	default:
		c.Error(subcommandSyntaxError(c))
	}
}

// ---- XSETID XACK -----------------------------------------------------------------

// XSETID key last-id [ENTRIESADDED n] [MAXDELETEDID id]
func xsetidCommand(c *engine.Ctx) {
	args := c.Args
	id, ok := streamIDArg(c, args[2])
	if !ok {
		return
	}
	entriesAdded := int64(-1)
	var maxDel keyspace.StreamID
	for i := 3; i < len(args); i += 2 {
		more := len(args) - 1 - i
		switch {
		case engine.EqualFold(args[i], "entriesadded") && more > 0:
			n, ok := c.IntArg(i + 1)
			if !ok {
				return
			}
			if n < 0 {
				c.Error("ERR entries_added must be positive")
				return
			}
			entriesAdded = n
		case engine.EqualFold(args[i], "maxdeletedid") && more > 0:
			if maxDel, ok = streamIDArg(c, args[i+1]); !ok {
				return
			}
			if id.Less(maxDel) {
				c.Error("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
				return
			}
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	key := args[1]
	s, ok := streamWrite(c, key, true)
	if !ok {
		return
	}
	if s == nil {
		c.Error(engine.ErrNoSuchKey)
		return
	}
	if s.Length() > 0 {
		if id.Less(s.LastValidID()) {
			c.Error("ERR The ID specified in XSETID is smaller than the target stream top item")
			return
		}
		if entriesAdded != -1 && s.Length() > uint64(entriesAdded) {
			c.Error("ERR The entries_added specified in XSETID is smaller than the target stream length")
			return
		}
	}
	s.LastID = id
	if entriesAdded != -1 {
		s.EntriesAdded = uint64(entriesAdded)
	}
	if !maxDel.IsZero() {
		s.MaxDeletedID = maxDel
	}
	c.W.OK()
	c.Dirty(1)
	c.Notify(config.NotifyStream, "xsetid", key)
}

// XACK key group id [id ...]
func xackCommand(c *engine.Ctx) {
	key := c.Args[1]
	s, ok := streamRead(c, key)
	if !ok {
		return
	}
	if s == nil || s.Group(c.Args[2]) == nil {
		c.W.Int(0)
		return
	}
	ids := make([]keyspace.StreamID, 0, len(c.Args)-3)
	for _, arg := range c.Args[3:] {
		id, ok := streamIDArg(c, arg)
		if !ok {
			return
		}
		ids = append(ids, id)
	}
	s, _ = streamWrite(c, key, true)
	g := s.Group(c.Args[2])
	acked := 0
	for _, id := range ids {
		if g.Ack(id) {
			acked++
		}
	}
	c.Dirty(acked)
	c.W.Int(int64(acked))
}

// ---- XPENDING ----------------------------------------------------------------------

// XPENDING key group [[IDLE min-idle] start end count [consumer]]
func xpendingCommand(c *engine.Ctx) {
	args := c.Args
	justInfo := len(args) == 3
	if len(args) != 3 && (len(args) < 6 || len(args) > 9) {
		c.Error(engine.ErrSyntax)
		return
	}
	var start, end keyspace.StreamID
	var count, minIdle int64
	var consumerName []byte
	if len(args) >= 6 {
		si := 3
		if engine.EqualFold(args[3], "idle") {
			n, ok := c.IntArg(4)
			if !ok {
				return
			}
			minIdle = n
			if len(args) < 8 {
				c.Error(engine.ErrSyntax)
				return
			}
			si += 2
		}
		n, ok := c.IntArg(si + 2)
		if !ok {
			return
		}
		count = max(n, 0)
		if start, ok = streamIntervalArg(c, args[si], 0, true); !ok {
			return
		}
		if end, ok = streamIntervalArg(c, args[si+1], math.MaxUint64, false); !ok {
			return
		}
		if si+3 < len(args) {
			consumerName = args[si+3]
		}
	}
	key, name := args[1], args[2]
	s, ok := streamRead(c, key)
	if !ok {
		return
	}
	var g *keyspace.StreamGroup
	if s != nil {
		g = s.Group(name)
	}
	if g == nil {
		c.Error("NOGROUP No such key '" + string(key) + "' or consumer group '" + string(name) + "'")
		return
	}
	if justInfo {
		c.W.Array(4)
		c.W.Int(int64(g.PendingCount()))
		if g.PendingCount() == 0 {
			c.W.Null()
			c.W.Null()
			c.W.NullArray()
			return
		}
		first, last := g.PendingEdges()
		replyStreamID(c, first)
		replyStreamID(c, last)
		mark := c.W.DeferArray()
		n := 0
		g.Consumers(func(cons *keyspace.StreamConsumer) bool {
			if cons.PendingCount() == 0 {
				return true
			}
			c.W.Array(2)
			c.W.BulkString(cons.Name)
			c.W.BulkInt(int64(cons.PendingCount()))
			n++
			return true
		})
		c.W.FillArray(mark, n)
		return
	}
	rangeOf := g.PendingRange
	if consumerName != nil {
		cons := g.Consumer(consumerName)
		if cons == nil {
			c.W.Array(0)
			return
		}
		rangeOf = cons.PendingRange
	}
	now := c.KS.Now()
	mark := c.W.DeferArray()
	n := 0
	if count > 0 {
		rangeOf(start, func(nk *keyspace.StreamNACK) bool {
			if nk.ID.Cmp(end) > 0 {
				return false
			}
			if minIdle != 0 && now-nk.DeliveryTime < minIdle {
				return true
			}
			n++
			count--
			c.W.Array(4)
			replyStreamID(c, nk.ID)
			c.W.BulkString(nk.Consumer.Name)
			c.W.Int(max(now-nk.DeliveryTime, 0))
			c.W.Int(int64(nk.DeliveryCount))
			return count > 0
		})
	}
	c.W.FillArray(mark, n)
}

// ---- XCLAIM XAUTOCLAIM -------------------------------------------------------------

// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME
// ms] [RETRYCOUNT n] [FORCE] [JUSTID] [LASTID id]
func xclaimCommand(c *engine.Ctx) {
	args := c.Args
	key := args[1]
	s, ok := streamRead(c, key)
	if !ok {
		return
	}
	if s == nil || s.Group(args[2]) == nil {
		c.Error("NOGROUP No such key '" + string(key) + "' or consumer group '" + string(args[2]) + "'")
		return
	}
	minIdle, ok := engine.ParseInt(args[4])
	if !ok {
		c.Error("ERR Invalid min-idle-time argument for XCLAIM")
		return
	}
	minIdle = max(minIdle, 0)
	j := 5
	var ids []keyspace.StreamID
	for ; j < len(args); j++ {
		id, _, ok := parseStreamID(args[j], 0, true, false)
		if !ok {
			break
		}
		ids = append(ids, id)
	}
	now := c.KS.Now()
	var lastID keyspace.StreamID
	retry, delivery := int64(-1), int64(-1)
	force, justID := false, false
	for ; j < len(args); j++ {
		more := len(args) - 1 - j
		opt := args[j]
		intOpt := func(msg string) (int64, bool) {
			j++
			n, ok := engine.ParseInt(args[j])
			if !ok {
				c.Error(msg)
			}
			return n, ok
		}
		switch {
		case engine.EqualFold(opt, "force"):
			force = true
		case engine.EqualFold(opt, "justid"):
			justID = true
		case engine.EqualFold(opt, "idle") && more > 0:
			n, ok := intOpt("ERR Invalid IDLE option argument for XCLAIM")
			if !ok {
				return
			}
			delivery = now - n
		case engine.EqualFold(opt, "time") && more > 0:
			n, ok := intOpt("ERR Invalid TIME option argument for XCLAIM")
			if !ok {
				return
			}
			delivery = n
		case engine.EqualFold(opt, "retrycount") && more > 0:
			n, ok := intOpt("ERR Invalid RETRYCOUNT option argument for XCLAIM")
			if !ok {
				return
			}
			retry = n
		case engine.EqualFold(opt, "lastid") && more > 0:
			j++
			if lastID, ok = streamIDArg(c, args[j]); !ok {
				return
			}
		default:
			c.Error("ERR Unrecognized XCLAIM option '" + string(opt) + "'")
			return
		}
	}
	c.PreventPropagation()
	s, _ = streamWrite(c, key, true)
	g := s.Group(args[2])
	propagateLast := false
	if lastID.Cmp(g.LastID) > 0 {
		g.LastID = lastID
		propagateLast = true
	}
	if delivery != -1 {
		if delivery < 0 || delivery > now {
			delivery = now
		}
	} else {
		delivery = now
	}
	var cons *keyspace.StreamConsumer
	mark := c.W.DeferArray()
	n := 0
	for _, id := range ids {
		nk := g.Pending(id)
		if !s.Exists(id) {
			if nk != nil {
				// Gone from the stream: dropped from the PEL, and that is propagated.
				propagateClaim(c, key, g, id, nk) // a replica drops it too, finding no entry
				propagateLast = false
				c.Dirty(1)
				g.Ack(id)
			}
			continue
		}
		if force && nk == nil {
			nk = g.CreatePending(id, now)
		}
		if nk == nil {
			continue
		}
		if nk.Consumer != nil && minIdle != 0 && now-nk.DeliveryTime < minIdle {
			continue
		}
		if cons == nil {
			cons = claimConsumer(c, g, args[3], key, now)
		}
		nk.DeliveryTime = delivery
		if retry >= 0 {
			nk.DeliveryCount = uint64(retry)
		} else if !justID {
			nk.DeliveryCount++
		}
		g.Claim(nk, cons)
		if justID {
			replyStreamID(c, id)
		} else {
			replyEntryByID(c, s, id)
		}
		n++
		propagateClaim(c, key, g, id, nk)
		propagateLast = false
		c.Dirty(1)
	}
	if propagateLast {
		propagateGroupID(c, key, g)
		c.Dirty(1)
	}
	c.W.FillArray(mark, n)
}

// claimConsumer looks the claiming consumer up (refreshing its seen
// time), creating it if needed.
func claimConsumer(c *engine.Ctx, g *keyspace.StreamGroup, name, key []byte, now int64) *keyspace.StreamConsumer {
	if cons := g.Consumer(name); cons != nil {
		cons.SeenTime = now
		return cons
	}
	cons := g.CreateConsumer(name, now)
	c.Dirty(1)
	c.Notify(config.NotifyStream, "xgroup-createconsumer", key)
	return cons
}

// xautoclaimMaxCount is the largest COUNT XAUTOCLAIM accepts once the
// key and group are found: Redis allocates COUNT stream IDs (16 bytes
// each) up front with ztrymalloc and answers an error when that fails,
// which it does, whatever the memory, past a 47-bit address space (2^43
// IDs); a COUNT below that but above what the machine can map fails on
// Redis and not here.
const xautoclaimMaxCount = 1 << 43

// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
func xautoclaimCommand(c *engine.Ctx) {
	args := c.Args
	minIdle, ok := engine.ParseInt(args[4])
	if !ok {
		c.Error("ERR Invalid min-idle-time argument for XAUTOCLAIM")
		return
	}
	minIdle = max(minIdle, 0)
	start, ok := streamIntervalArg(c, args[5], 0, true)
	if !ok {
		return
	}
	count := int64(100)
	justID := false
	const attemptsFactor = 10
	for j := 6; j < len(args); j++ {
		more := len(args) - 1 - j
		switch {
		case engine.EqualFold(args[j], "count") && more > 0:
			n, ok := engine.ParseInt(args[j+1])
			if !ok || n < 1 || n > math.MaxInt64/16 {
				c.Error("ERR COUNT must be > 0")
				return
			}
			count = n
			j++
		case engine.EqualFold(args[j], "justid"):
			justID = true
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	key := args[1]
	s, ok := streamRead(c, key)
	if !ok {
		return
	}
	if s == nil || s.Group(args[2]) == nil {
		c.Error("NOGROUP No such key '" + string(key) + "' or consumer group '" + string(args[2]) + "'")
		return
	}
	if count > xautoclaimMaxCount {
		c.Error("ERR Insufficient memory, failed allocating transient memory, COUNT too high.")
		return
	}
	c.PreventPropagation()
	s, _ = streamWrite(c, key, true)
	g := s.Group(args[2])
	now := c.KS.Now()
	attempts := count * attemptsFactor
	var cons *keyspace.StreamConsumer
	var deleted []keyspace.StreamID
	var claimed []*keyspace.StreamNACK
	next := keyspace.StreamID{}
	// Walk the PEL from start; entries leave it as we go, so the walk
	// collects first and changes after.
	var visit []*keyspace.StreamNACK
	g.PendingRange(start, func(nk *keyspace.StreamNACK) bool {
		visit = append(visit, nk)
		return int64(len(visit)) <= attempts
	})
	i := 0
	for ; i < len(visit) && attempts > 0 && count > 0; i++ {
		attempts--
		nk := visit[i]
		if !s.Exists(nk.ID) {
			propagateClaim(c, key, g, nk.ID, nk) // a replica drops it too, finding no entry
			c.Dirty(1)
			g.Ack(nk.ID)
			deleted = append(deleted, nk.ID)
			count--
			continue
		}
		if minIdle != 0 && now-nk.DeliveryTime < minIdle {
			continue
		}
		if cons == nil {
			cons = claimConsumer(c, g, args[3], key, now)
		}
		nk.DeliveryTime = now
		if !justID {
			nk.DeliveryCount++
		}
		g.Claim(nk, cons)
		claimed = append(claimed, nk)
		count--
		propagateClaim(c, key, g, nk.ID, nk)
		c.Dirty(1)
	}
	// The cursor: the next pending entry after the last one looked at.
	if i < len(visit) {
		next = visit[i].ID
	} else if len(visit) > 0 {
		after, ok := visit[len(visit)-1].ID.Incr()
		if ok {
			g.PendingRange(after, func(nk *keyspace.StreamNACK) bool {
				next = nk.ID
				return false
			})
		}
	}
	c.W.Array(3)
	replyStreamID(c, next)
	c.W.Array(len(claimed))
	for _, nk := range claimed {
		if justID {
			replyStreamID(c, nk.ID)
		} else {
			replyEntryByID(c, s, nk.ID)
		}
	}
	c.W.Array(len(deleted))
	for _, id := range deleted {
		replyStreamID(c, id)
	}
}

// ---- XINFO -------------------------------------------------------------------------

var xinfoHelp = []string{
	"CONSUMERS <key> <groupname>",
	"    Show consumers of <groupname>.",
	"GROUPS <key>",
	"    Show the stream consumer groups.",
	"STREAM <key> [FULL [COUNT <count>]",
	"    Show information about the stream.",
}

func xinfoHelpCommand(c *engine.Ctx) { c.ReplyHelp(xinfoHelp) }

// xinfoStream looks XINFO's key up: ERR no such key when missing.
func xinfoStream(c *engine.Ctx) (*keyspace.Stream, bool) {
	s, ok := streamRead(c, c.Args[2])
	if ok && s == nil {
		c.Error(engine.ErrNoSuchKey)
		return nil, false
	}
	return s, ok
}

func replyLag(c *engine.Ctx, s *keyspace.Stream, g *keyspace.StreamGroup) {
	if lag, ok := s.Lag(g); ok {
		c.W.Int(lag)
	} else {
		c.W.Null()
	}
}

func replyEntriesRead(c *engine.Ctx, g *keyspace.StreamGroup) {
	if g.EntriesRead != keyspace.InvalidEntriesRead {
		c.W.Int(g.EntriesRead)
	} else {
		c.W.Null()
	}
}

// XINFO STREAM key [FULL [COUNT count]]
func xinfoStreamCommand(c *engine.Ctx) {
	// The key is looked up before the options are read (xinfoCommand
	// before xinfoReplyWithStreamInfo): a missing key or a wrong type is
	// the answer whatever the options.
	s, ok := xinfoStream(c)
	if !ok {
		return
	}
	opts := c.Args[3:]
	full := len(opts) > 0
	count := int64(10)
	if full {
		if (len(opts) != 1 && len(opts) != 3) || !engine.EqualFold(opts[0], "full") ||
			(len(opts) == 3 && !engine.EqualFold(opts[1], "count")) {
			c.Error(subcommandSyntaxError(c))
			return
		}
		if len(opts) == 3 {
			n, ok := engine.ParseInt(opts[2])
			if !ok {
				c.Error(engine.ErrNotInteger)
				return
			}
			if n < 0 {
				n = 10
			}
			count = n
		}
	}
	if full {
		c.W.Map(9)
	} else {
		c.W.Map(10)
	}
	c.W.BulkString("length")
	c.W.Int(int64(s.Length()))
	c.W.BulkString("radix-tree-keys")
	c.W.Int(int64(s.NodeCount()))
	c.W.BulkString("radix-tree-nodes")
	c.W.Int(int64(s.RaxNodes()))
	c.W.BulkString("last-generated-id")
	replyStreamID(c, s.LastID)
	c.W.BulkString("max-deleted-entry-id")
	replyStreamID(c, s.MaxDeletedID)
	c.W.BulkString("entries-added")
	c.W.Int(int64(s.EntriesAdded))
	c.W.BulkString("recorded-first-entry-id")
	replyStreamID(c, s.FirstID)
	if !full {
		c.W.BulkString("groups")
		c.W.Int(int64(s.GroupCount()))
		c.W.BulkString("first-entry")
		if !s.FirstEntry(func(e *keyspace.StreamEntry) { replyStreamEntry(c, e) }) {
			c.W.Null()
		}
		c.W.BulkString("last-entry")
		if !s.LastEntry(func(e *keyspace.StreamEntry) { replyStreamEntry(c, e) }) {
			c.W.Null()
		}
		return
	}
	c.W.BulkString("entries")
	mark := c.W.DeferArray()
	n := int64(0)
	s.Range(keyspace.StreamID{}, keyspace.MaxStreamID, false, func(e *keyspace.StreamEntry) bool {
		if count != 0 && n >= count {
			return false
		}
		replyStreamEntry(c, e)
		n++
		return true
	})
	c.W.FillArray(mark, int(n))
	c.W.BulkString("groups")
	c.W.Array(s.GroupCount())
	s.Groups(func(g *keyspace.StreamGroup) bool {
		c.W.Map(7)
		c.W.BulkString("name")
		c.W.BulkString(g.Name)
		c.W.BulkString("last-delivered-id")
		replyStreamID(c, g.LastID)
		c.W.BulkString("entries-read")
		replyEntriesRead(c, g)
		c.W.BulkString("lag")
		replyLag(c, s, g)
		c.W.BulkString("pel-count")
		c.W.Int(int64(g.PendingCount()))
		c.W.BulkString("pending")
		replyPendingFull(c, g.PendingRange, count, true)
		c.W.BulkString("consumers")
		c.W.Array(g.ConsumerCount())
		g.Consumers(func(cons *keyspace.StreamConsumer) bool {
			c.W.Map(4)
			c.W.BulkString("name")
			c.W.BulkString(cons.Name)
			c.W.BulkString("seen-time")
			c.W.Int(cons.SeenTime)
			c.W.BulkString("pel-count")
			c.W.Int(int64(cons.PendingCount()))
			c.W.BulkString("pending")
			replyPendingFull(c, cons.PendingRange, count, false)
			return true
		})
		return true
	})
}

// replyPendingFull writes XINFO STREAM FULL's pending list of a group
// (withConsumer: [id, consumer, delivery time, count]) or of a consumer
// ([id, delivery time, count]), at most count entries (0: all).
func replyPendingFull(c *engine.Ctx, pending func(keyspace.StreamID, func(*keyspace.StreamNACK) bool), count int64, withConsumer bool) {
	mark := c.W.DeferArray()
	n := int64(0)
	pending(keyspace.StreamID{}, func(nk *keyspace.StreamNACK) bool {
		if count != 0 && n >= count {
			return false
		}
		if withConsumer {
			c.W.Array(4)
			replyStreamID(c, nk.ID)
			c.W.BulkString(nk.Consumer.Name)
		} else {
			c.W.Array(3)
			replyStreamID(c, nk.ID)
		}
		c.W.Int(nk.DeliveryTime)
		c.W.Int(int64(nk.DeliveryCount))
		n++
		return true
	})
	c.W.FillArray(mark, int(n))
}

// XINFO GROUPS key
func xinfoGroupsCommand(c *engine.Ctx) {
	s, ok := xinfoStream(c)
	if !ok {
		return
	}
	c.W.Array(s.GroupCount())
	s.Groups(func(g *keyspace.StreamGroup) bool {
		c.W.Map(6)
		c.W.BulkString("name")
		c.W.BulkString(g.Name)
		c.W.BulkString("consumers")
		c.W.Int(int64(g.ConsumerCount()))
		c.W.BulkString("pending")
		c.W.Int(int64(g.PendingCount()))
		c.W.BulkString("last-delivered-id")
		replyStreamID(c, g.LastID)
		c.W.BulkString("entries-read")
		replyEntriesRead(c, g)
		c.W.BulkString("lag")
		replyLag(c, s, g)
		return true
	})
}

// XINFO CONSUMERS key group
func xinfoConsumersCommand(c *engine.Ctx) {
	s, ok := xinfoStream(c)
	if !ok {
		return
	}
	g := s.Group(c.Args[3])
	if g == nil {
		c.Error("NOGROUP No such consumer group '" + string(c.Args[3]) + "' for key name '" + string(c.Args[2]) + "'")
		return
	}
	now := c.KS.Now()
	c.W.Array(g.ConsumerCount())
	g.Consumers(func(cons *keyspace.StreamConsumer) bool {
		c.W.Map(3)
		c.W.BulkString("name")
		c.W.BulkString(cons.Name)
		c.W.BulkString("pending")
		c.W.Int(int64(cons.PendingCount()))
		c.W.BulkString("idle")
		c.W.Int(max(now-cons.SeenTime, 0))
		return true
	})
}

// subcommandSyntaxError is addReplySubcommandSyntaxError's text for the
// running XGROUP or XINFO call.
func subcommandSyntaxError(c *engine.Ctx) string {
	return engine.ErrSubcommandSyntax(string(c.Args[1]), strings.ToUpper(string(c.Args[0])))
}
