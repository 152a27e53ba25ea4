package commands

// MemoryUsage is the memory a client holds as CLIENT LIST's tot-mem
// counts it for a client other than the caller: a fixed kilobyte for its
// state, its read buffer, what it sent and was not parsed yet, and the
// replies not yet written. Client eviction (maxmemory-clients) and
// used_memory read it.
func (cl *Client) MemoryUsage() int64 {
	return 1024 + readBufSize + cl.QueryBuf.Load() + cl.OutputBuf.Load()
}

// ClientInfoString is the client's CLIENT LIST line, as Redis logs it
// when it evicts the client.
func ClientInfoString(cl *Client, nowMs int64) string {
	return string(appendClientInfo(nil, &Ctx{}, cl, nowMs))
}
