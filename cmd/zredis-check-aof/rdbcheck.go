package main

import (
	"fmt"
	"io"
	"time"

	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/persistence/rdb"
)

// checkRDB checks the RDB payload of a .base.rdb file or of an RDB-preamble
// AOF and returns its size (see aof.CheckOptions.CheckRDB), printing what
// redis-check-rdb prints of it: the start, the verdict and the counts.
var checkRDB = func(r io.Reader, path string, out io.Writer) (int64, error) {
	fmt.Fprintf(out, "[offset 0] Checking RDB file %s\n", path)
	now := time.Now().UnixMilli()
	var expires, expired int
	info, err := rdb.Load(r, rdb.DefaultLoadOptions(), func(_ int, _ string, e *keyspace.Entry) error {
		if at := e.ExpireAt(); at != 0 {
			expires++
			if at <= now {
				expired++
			}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(out, "--- RDB ERROR DETECTED ---\n[offset %d] %v\n", info.Size, err)
		return info.Size, err
	}
	if info.Checksum != 0 {
		fmt.Fprintf(out, "[offset %d] Checksum OK\n", info.Size)
	}
	fmt.Fprintf(out, "[offset %d] \\o/ RDB looks OK! \\o/\n", info.Size)
	fmt.Fprintf(out, "[info] %d keys read\n[info] %d expires\n[info] %d already expired\n", info.Keys, expires, expired)
	return info.Size, nil
}
