package engine

// MemoryUsage is the memory a client holds as CLIENT LIST's tot-mem
// counts it for a client other than the caller (appendClientInfo): its
// state, its read buffer and what it sent and was not parsed yet, and the
// output it holds beyond the static reply buffer. Client eviction
// (maxmemory-clients) and used_memory read it. Under the keyspace lock.
func (cl *Client) MemoryUsage() int64 {
	var out OutputFigures
	if cl.Output != nil {
		out = cl.Output(0)
	}
	_, qmem := queryBufFigures(cl)
	return clientStructBytes + max(qmem, cl.QueryBuf.Load()) + readBufSize + out.Mem
}
