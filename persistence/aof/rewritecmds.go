package aof

import (
	"github.com/zredis/zredis/resp"

	"bufio"
	"io"
	"math"
	"strconv"

	"github.com/zredis/zredis/keyspace"
)

// rewriteItemsPerCmd is AOF_REWRITE_ITEMS_PER_CMD: the most elements one
// RPUSH, SADD, ZADD or HMSET of a rewritten base carries.
const rewriteItemsPerCmd = 64

// WriteCommands writes a snapshot as the commands that rebuild it, as
// rewriteAppendOnlyFileRio does for a base when aof-use-rdb-preamble is no:
// a FUNCTION LOAD per function library (the snapshot's Extra), then for
// each non-empty database a SELECT, then per key a SET, or RPUSH, SADD,
// ZADD (scores as %.17g) or HMSET commands of at most 64 elements, or a
// stream's commands (see stream), and a PEXPIREAT for a key with a
// deadline. A hash's fields with TTLs get HPEXPIREAT commands after its
// HMSETs (see fieldTTLs). Keys past their deadline that expiry had not
// removed yet are written too (with their past PEXPIREAT, which deletes
// them at load), as Redis writes them, and so are fields past theirs. It
// reads the snapshot without the keyspace lock.
func WriteCommands(w io.Writer, snap *keyspace.Snapshot, databases int) error {
	bw, buffered := w.(*bufio.Writer)
	if !buffered {
		bw = bufio.NewWriterSize(w, 64<<10)
	}
	cw := &cmdWriter{w: bw}
	// The function libraries first, as Redis's rewriteFunctions: a
	// FUNCTION LOAD each.
	if codes, ok := snap.Extra.([]string); ok {
		for _, code := range codes {
			cw.buf = resp.AppendCommand(cw.buf, []byte("FUNCTION"), []byte("LOAD"), []byte(code))
			cw.flush(false)
		}
	}
	for db := 0; db < databases && cw.err == nil; db++ {
		selected := false
		snap.ForEachAll(db, func(key string, e *keyspace.Entry) bool {
			if !selected {
				cw.buf = resp.AppendSelect(cw.buf, db)
				selected = true
			}
			cw.entry(key, e)
			if at := e.ExpireAt(); at != 0 {
				cw.buf = resp.AppendCommand(cw.buf, []byte("PEXPIREAT"), []byte(key), strconv.AppendInt(nil, at, 10))
			}
			cw.flush(false)
			return cw.err == nil
		})
	}
	cw.flush(true)
	if cw.err == nil && !buffered {
		cw.err = bw.Flush()
	}
	return cw.err
}

// cmdWriter accumulates commands and hands them to w in large writes.
type cmdWriter struct {
	w   io.Writer
	buf []byte
	err error
}

func (c *cmdWriter) flush(all bool) {
	if c.err == nil && len(c.buf) > 0 && (all || len(c.buf) >= 32<<10) {
		_, c.err = c.w.Write(c.buf)
		c.buf = c.buf[:0]
	}
}

// item starts a variadic command for the next item when the previous
// command is full: left counts the items still to come for the key, inCmd
// those still to come in the current command.
func (c *cmdWriter) item(cmd, key string, left, width int, inCmd *int) {
	if *inCmd == 0 {
		n := min(left, rewriteItemsPerCmd)
		c.buf = append(c.buf, '*')
		c.buf = strconv.AppendInt(c.buf, int64(2+n*width), 10)
		c.buf = append(c.buf, '\r', '\n')
		c.buf = appendBulk(c.buf, []byte(cmd))
		c.buf = appendBulk(c.buf, []byte(key))
		*inCmd = n
		c.flush(false)
	}
	*inCmd--
}

func appendBulk(dst, s []byte) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(s)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}

// formatScore is %.17g, with C's spelling of the infinities.
func formatScore(f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return []byte("inf")
	case math.IsInf(f, -1):
		return []byte("-inf")
	}
	return strconv.AppendFloat(nil, f, 'g', 17, 64)
}

// entry appends the commands that rebuild one key's value.
func (c *cmdWriter) entry(key string, e *keyspace.Entry) {
	inCmd := 0
	switch e.Type() {
	case keyspace.TypeString:
		c.buf = resp.AppendCommand(c.buf, []byte("SET"), []byte(key), e.Str())
	case keyspace.TypeList:
		l := e.Obj().(*keyspace.List)
		left := l.Len()
		l.Each(0, false, func(_ int, v []byte) bool {
			c.item("RPUSH", key, left, 1, &inCmd)
			left--
			c.buf = appendBulk(c.buf, v)
			return true
		})
	case keyspace.TypeSet:
		s := e.Obj().(*keyspace.Set)
		left := s.Len()
		var tmp []byte
		s.Each(func(m keyspace.Member) bool {
			c.item("SADD", key, left, 1, &inCmd)
			left--
			tmp = m.Bytes(tmp[:0])
			c.buf = appendBulk(c.buf, tmp)
			return true
		})
	case keyspace.TypeZSet:
		z := e.Obj().(*keyspace.ZSet)
		left := z.Len()
		z.Ascend(0, func(member string, score float64) bool {
			c.item("ZADD", key, left, 2, &inCmd)
			left--
			c.buf = appendBulk(c.buf, formatScore(score))
			c.buf = appendBulk(c.buf, []byte(member))
			return true
		})
	case keyspace.TypeHash:
		h := e.Obj().(*keyspace.Hash)
		left := h.Len()
		h.Range(func(f, v []byte) bool {
			c.item("HMSET", key, left, 2, &inCmd)
			left--
			c.buf = appendBulk(c.buf, f)
			c.buf = appendBulk(c.buf, v)
			return true
		})
		c.fieldTTLs(key, h)
	case keyspace.TypeStream:
		c.stream(key, e.Obj().(*keyspace.Stream))
	}
}

// fieldTTLs appends, after the HMSETs of hash h, the commands that give
// its fields their TTLs: HPEXPIREAT key ms FIELDS n field..., the fields
// that share a deadline together (at most 64 a command), earliest
// deadline first. Redis 7.4's rewriteHashObject writes the same TTLs one
// field a command, each after an HMSET of that field alone; both load
// into the same hash, this form in fewer commands.
func (c *cmdWriter) fieldTTLs(key string, h *keyspace.Hash) {
	if !h.HasFieldTTLs() {
		return
	}
	var fields []string
	var at int64
	emit := func() {
		c.buf = appendArrayLen(c.buf, 5+len(fields))
		c.buf = appendBulk(c.buf, []byte("HPEXPIREAT"))
		c.buf = appendBulk(c.buf, []byte(key))
		c.buf = appendBulk(c.buf, strconv.AppendInt(nil, at, 10))
		c.buf = appendBulk(c.buf, []byte("FIELDS"))
		c.buf = appendBulk(c.buf, strconv.AppendInt(nil, int64(len(fields)), 10))
		for _, f := range fields {
			c.buf = appendBulk(c.buf, []byte(f))
		}
		fields = fields[:0]
		c.flush(false)
	}
	h.RangeTTL(func(f string, t int64) bool {
		if len(fields) > 0 && (t != at || len(fields) == rewriteItemsPerCmd) {
			emit()
		}
		at = t
		fields = append(fields, f)
		return true
	})
	if len(fields) > 0 {
		emit()
	}
}

// stream appends the commands that rebuild a stream, as Redis 7.0's
// rewriteStreamObject: an XADD per live entry (for a stream without
// entries, XADD key MAXLEN 0 0-1 x y, which creates it empty), then
// XSETID key last-id ENTRIESADDED n MAXDELETEDID id, then per group in
// name order XGROUP CREATE key group last-id ENTRIESREAD n, and per
// consumer in name order either XGROUP CREATECONSUMER key group
// consumer when it has no pending entry, or for each of its pending
// entries XCLAIM key group consumer 0 id TIME ms RETRYCOUNT n JUSTID
// FORCE. Counters are written as rioWriteBulkLongLong writes them
// (signed).
func (c *cmdWriter) stream(key string, s *keyspace.Stream) {
	k := []byte(key)
	var id, num []byte
	if s.Length() > 0 {
		s.Range(keyspace.StreamID{}, keyspace.MaxStreamID, false, func(e *keyspace.StreamEntry) bool {
			c.buf = appendArrayLen(c.buf, 3+len(e.FV))
			c.buf = appendBulk(c.buf, []byte("XADD"))
			c.buf = appendBulk(c.buf, k)
			id = e.ID.Append(id[:0])
			c.buf = appendBulk(c.buf, id)
			for _, x := range e.FV {
				num = x.AppendTo(num[:0])
				c.buf = appendBulk(c.buf, num)
			}
			c.flush(false)
			return true
		})
	} else {
		c.buf = resp.AppendCommand(c.buf, []byte("XADD"), k, []byte("MAXLEN"), []byte("0"), []byte("0-1"), []byte("x"), []byte("y"))
	}
	c.buf = resp.AppendCommand(c.buf, []byte("XSETID"), k, s.LastID.Append(nil),
		[]byte("ENTRIESADDED"), strconv.AppendInt(nil, int64(s.EntriesAdded), 10),
		[]byte("MAXDELETEDID"), s.MaxDeletedID.Append(nil))
	s.Groups(func(g *keyspace.StreamGroup) bool {
		group := []byte(g.Name)
		c.buf = resp.AppendCommand(c.buf, []byte("XGROUP"), []byte("CREATE"), k, group, g.LastID.Append(nil),
			[]byte("ENTRIESREAD"), strconv.AppendInt(nil, g.EntriesRead, 10))
		g.Consumers(func(cons *keyspace.StreamConsumer) bool {
			name := []byte(cons.Name)
			if cons.PendingCount() == 0 {
				c.buf = resp.AppendCommand(c.buf, []byte("XGROUP"), []byte("CREATECONSUMER"), k, group, name)
				return true
			}
			cons.PendingRange(keyspace.StreamID{}, func(n *keyspace.StreamNACK) bool {
				c.buf = resp.AppendCommand(c.buf, []byte("XCLAIM"), k, group, name, []byte("0"), n.ID.Append(id[:0]),
					[]byte("TIME"), strconv.AppendInt(num[:0], n.DeliveryTime, 10),
					[]byte("RETRYCOUNT"), strconv.AppendInt(nil, int64(n.DeliveryCount), 10),
					[]byte("JUSTID"), []byte("FORCE"))
				c.flush(false)
				return true
			})
			return true
		})
		c.flush(false)
		return true
	})
}

// appendArrayLen appends a multibulk header of n elements.
func appendArrayLen(dst []byte, n int) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, '\r', '\n')
}
