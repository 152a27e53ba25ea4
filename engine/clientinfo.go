package engine

import (
	"math/bits"
	"strconv"

	"github.com/zredis/zredis/resp"
)

// clientFlags is the flags= field of CLIENT LIST, letters in Redis's order.
func clientFlags(dst []byte, cl *Client) []byte {
	n := len(dst)
	if cl.Master {
		dst = append(dst, 'M')
	}
	if cl.Monitor {
		dst = append(dst, 'O')
	} else if cl.Replica {
		dst = append(dst, 'S')
	}
	if cl.Subs+cl.PSubs+cl.SSubs > 0 {
		dst = append(dst, 'P')
	}
	if cl.InMulti {
		dst = append(dst, 'x')
	}
	if cl.Blocked || cl.Paused {
		dst = append(dst, 'b')
	}
	if ct := cl.Tracking; ct != nil && ct.On {
		dst = append(dst, 't')
		if ct.BrokenRedir {
			dst = append(dst, 'R')
		}
		if ct.BCast {
			dst = append(dst, 'B')
		}
	}
	if cl.UnixSocket {
		dst = append(dst, 'U')
	}
	if cl.NoEvict {
		dst = append(dst, 'e')
	}
	if cl.NoTouch {
		dst = append(dst, 'T')
	}
	if len(dst) == n {
		dst = append(dst, 'N')
	}
	return dst
}

// readBufSize is the size of the part of a connection's output that
// stands for Redis's static reply buffer (rbs: Redis's
// PROTO_REPLY_CHUNK_BYTES).
const readBufSize = 16 << 10

// clientStructBytes is what CLIENT LIST's tot-mem counts for the client
// itself, besides its buffers: zmalloc_size(client) in redis-server 7.0
// (jemalloc's size class for its client struct).
const clientStructBytes = 768

// Redis's query buffer is an sds that its first read sizes for 16 KiB
// (PROTO_IOBUF_LEN, sdsMakeRoomForNonGreedy): jemalloc rounds the
// allocation up to 20480 bytes, which tot-mem counts (sdsZmallocSize),
// of which 20474 follow the sds header, the buffer's capacity (qbuf +
// qbuf-free). The reader's initial buffer stands for it. Once Redis
// released it, the empty sds left takes 8 bytes.
const (
	redisQueryBufCap   = 20474
	redisQueryBufMem   = 20480
	redisEmptySDSBytes = 8
)

// QueryBufFigures is the capacity and the memory of a query buffer whose
// allocations take alloc bytes, as Redis would hold it (see
// redisQueryBufCap): the reader's initial buffer as Redis's 16 KiB one,
// a larger allocation (a pipeline, a big argument arriving) at its
// size, counted in memory as jemalloc's size class for it.
func QueryBufFigures(alloc int64) (capacity, mem int64) {
	switch alloc {
	case 0:
		return 0, redisEmptySDSBytes
	case resp.QueryBufSize:
		return redisQueryBufCap, redisQueryBufMem
	default:
		return alloc, jemallocSize(alloc)
	}
}

// queryBufFigures is QueryBufFigures for cl's query buffer.
func queryBufFigures(cl *Client) (capacity, mem int64) {
	return QueryBufFigures(cl.QueryBufAlloc.Load())
}

// jemallocSize rounds n up to jemalloc's size class, as zmalloc_size
// reports an allocation; above 4 KiB there are four classes per
// doubling (20480, 24576, 28672, 32768, 40960 ...).
func jemallocSize(n int64) int64 {
	if n <= 4096 {
		return n
	}
	step := int64(1) << (bits.Len64(uint64(n-1)) - 3)
	return (n + step - 1) / step * step
}

// argvFigures is what argv-mem counts of args (their bytes) and what
// tot-mem adds for the argument vector itself (a pointer each).
func argvFigures(args [][]byte) (argvMem, vecMem int64) {
	for _, a := range args {
		argvMem += int64(len(a))
	}
	return argvMem, 8 * int64(len(args))
}

// ClientInfoString is the CLIENT LIST line of cl (without the newline),
// as Redis logs a client (catClientInfoString); writer is the length of
// its reply writer, which only its own connection may read.
func ClientInfoString(cl *Client, now int64, writer int) string {
	return string(AppendClientInfo(nil, nil, cl, now, writer))
}

// AppendClientInfo appends one CLIENT LIST line (without the newline),
// with the fields of Redis 7.0 in its order. For the client running the
// command (c's), cmd= is the running command and the argument and output
// sizes are those of this call, as Redis shows them; c is nil outside a
// command, and writer then the length of cl's reply writer.
//
// The buffers map to Redis's as follows. qbuf is what the request reader
// holds unparsed (during a batch: the batch and the rest; behind a
// command that blocked: what follows it), qbuf-free the rest of the
// buffer's capacity as Redis would have allocated it (queryBufFigures);
// the server releases the buffer of a client idle for more than 2
// seconds, or after a large request, as Redis's cron does. Output
// (replies of the batch being run, messages and MONITOR lines queued,
// and what the socket has not taken) is shown as Redis would hold it:
// the first 16 KB in its static reply buffer (obl, of size rbs), the
// rest in its reply list (omem, one block here: oll). tot-mem adds those
// buffers, argv-mem with the argument vector, and the client itself.
func AppendClientInfo(b []byte, c *Ctx, cl *Client, now int64, writer int) []byte {
	num := func(name string, v int64) {
		b = append(b, ' ')
		b = append(b, name...)
		b = append(b, '=')
		b = strconv.AppendInt(b, v, 10)
	}
	str := func(name, v string) {
		b = append(b, ' ')
		b = append(b, name...)
		b = append(b, '=')
		b = append(b, v...)
	}
	self := c != nil && cl == c.Client
	cmd := cl.LastCmd
	// Redis keeps a command's arguments while it runs, blocks or is held
	// by CLIENT PAUSE, and frees them once it is done.
	var argvMem, vecMem int64
	switch {
	case self:
		cmd = c.Cmd.Name
		argvMem, vecMem = argvFigures(c.Args)
		writer = c.W.Len()
	case cl.Paused:
		argvMem, vecMem = argvFigures(cl.PausedArgs)
	case cl.Blocked:
		argvMem, vecMem = argvFigures(cl.ctx.Args)
	}
	if cmd == "" {
		cmd = "NULL"
	}
	var out OutputFigures
	if cl.Output != nil {
		out = cl.Output(writer)
	}
	qbuf := cl.QueryBuf.Load()
	qcap, qmem := queryBufFigures(cl)
	qbufFree := max(0, qcap-qbuf)
	multi := int64(-1)
	if cl.InMulti {
		multi = int64(cl.MultiLen)
	}
	idle := (now - cl.LastInteraction.Load()) / 1000
	if self || idle < 0 {
		idle = 0
	}

	b = append(b, "id="...)
	b = strconv.AppendInt(b, cl.ID, 10)
	str("addr", cl.Addr)
	str("laddr", cl.LAddr)
	num("fd", int64(cl.FD))
	str("name", cl.Name)
	num("age", max(0, (now-cl.Created)/1000))
	num("idle", idle)
	b = append(b, " flags="...)
	b = clientFlags(b, cl)
	num("db", int64(cl.DB))
	num("sub", int64(cl.Subs))
	num("psub", int64(cl.PSubs))
	num("ssub", int64(cl.SSubs))
	num("multi", multi)
	num("qbuf", qbuf)
	num("qbuf-free", qbufFree)
	num("argv-mem", argvMem)
	num("multi-mem", 0)
	num("rbs", readBufSize)
	num("rbp", out.Buf)
	num("obl", out.Buf)
	num("oll", out.Blocks)
	num("omem", out.Mem)
	num("tot-mem", clientStructBytes+max(qmem, qbuf)+readBufSize+out.Mem+argvMem+vecMem)
	if out.Writing {
		str("events", "rw")
	} else {
		str("events", "r")
	}
	str("cmd", cmd)
	user := "default"
	switch {
	case cl.User != nil:
		user = cl.User.Name
	case cl.Master:
		user = "(superuser)" // the master's client has no user, as in Redis
	}
	str("user", user)
	redir := int64(-1)
	if ct := cl.Tracking; ct != nil && ct.On {
		redir = ct.Redirect
	}
	num("redir", redir)
	num("resp", int64(cl.W.Proto()))
	return b
}
