package engine

import "strconv"

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
	if cl.Blocked {
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

// readBufSize is the size of a connection's query buffer while it holds
// less (the request reader's initial buffer), and the size of the part of
// its output that stands for Redis's static reply buffer (rbs: Redis's
// PROTO_REPLY_CHUNK_BYTES).
const readBufSize = 16 << 10

// clientStructBytes is what CLIENT LIST's tot-mem counts for the client
// itself, besides its buffers.
const clientStructBytes = 1024

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
// holds unparsed (during a batch: the batch and the rest), qbuf-free the
// rest of its 16 KB initial buffer. Output (replies of the batch being
// run, messages and MONITOR lines queued, and what the socket has not
// taken) is shown as Redis would hold it: the first 16 KB in its static
// reply buffer (obl, of size rbs), the rest in its reply list (omem, one
// block here: oll). tot-mem adds those buffers, argv-mem and the client
// itself.
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
	var argvMem int64
	if self {
		cmd = c.Cmd.Name
		for _, a := range c.Args {
			argvMem += int64(len(a))
		}
		writer = c.W.Len()
	}
	if cmd == "" {
		cmd = "NULL"
	}
	var out OutputFigures
	if cl.Output != nil {
		out = cl.Output(writer)
	}
	qbuf := cl.QueryBuf.Load()
	qbufFree := int64(0)
	if qbuf > 0 && qbuf < readBufSize {
		qbufFree = readBufSize - qbuf
	}
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
	num("tot-mem", clientStructBytes+max(readBufSize, qbuf)+readBufSize+out.Mem+argvMem)
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
