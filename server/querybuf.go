package server

// queryBufIdleMs is how long a client sends nothing before its query
// buffer is released: Redis's clientsCronResizeQueryBuffer frees the
// unused space of a client idle for more than 2 seconds.
const queryBufIdleMs = 2000

// resizeQueryBuffer releases, as Redis's clientsCronResizeQueryBuffer
// trims them, a query buffer that holds nothing: a client's that has
// been idle for more than 2 seconds, or one's that grew past its initial
// 16 KiB or took a big argument (Redis trims a buffer past 32 KiB that
// is more than twice its recent use, which an empty one always is).
// Without this, a connection would keep its buffer, and a buffer grown
// for one large pipeline, for as long as it stays open. The release
// runs on the connection's loop, which owns the reader; a client blocked
// or held by CLIENT PAUSE keeps its buffer, which its command's
// arguments still use. At the client's visit (clientscron.go), under the
// lock.
func (s *Server) resizeQueryBuffer(c *conn, nowMs int64) {
	cl := c.cl
	if cl.QueryBufAlloc.Load() == 0 || cl.QueryBuf.Load() != 0 || cl.Blocked || c.paused {
		return
	}
	// Redis compares whole seconds (server.unixtime).
	if !c.rd.Large() && nowMs/1000-cl.LastInteraction.Load()/1000 <= queryBufIdleMs/1000 {
		return
	}
	if c.releasing.Swap(true) {
		return // one release already on its way
	}
	c.loop.Submit(c.releaseQueryBuf)
}

// releaseQueryBuf releases the connection's query buffer if it still
// holds nothing and no batch uses it (see resizeQueryBuffers). On the
// loop.
func (c *conn) releaseQueryBuf() {
	defer c.releasing.Store(false)
	if c.lc == nil || c.lc.IsClosed() || c.suspended || c.aofWait != 0 || c.heldDetached {
		return
	}
	if c.rd.Release(c.batch) {
		c.noteQueryBuf(0)
	}
}
