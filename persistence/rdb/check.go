package rdb

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/zredis/zredis/keyspace"
)

// Check reads an RDB stream to its end, as redis-check-rdb does, and
// writes its report to out: the start, the verdict and the counts (for a
// file of version 12, also the hashes with field TTLs, "subexpires", as
// 7.4's checker counts them). It returns the size of the RDB payload (an
// AOF's preamble is followed by commands) and the first error.
func Check(r io.Reader, path string, out io.Writer) (int64, error) {
	fmt.Fprintf(out, "[offset 0] Checking RDB file %s\n", path)
	now := time.Now().UnixMilli()
	var expires, expired, subexpires int
	info, err := Load(r, DefaultLoadOptions(), func(_ int, _ string, e *keyspace.Entry) error {
		if at := e.ExpireAt(); at != 0 {
			expires++
			if at <= now {
				expired++
			}
		}
		if HasFieldTTLs(e) {
			subexpires++
		}
		return nil
	})
	if err != nil {
		at, msg := info.Size, err // Size is set only once the file was read to its end
		var le *Error
		if errors.As(err, &le) {
			at, msg = le.Offset, le.Err
		}
		fmt.Fprintf(out, "--- RDB ERROR DETECTED ---\n[offset %d] %v\n[additional info] While doing: read-object-value\n", at, msg)
		return at, err
	}
	for _, kv := range info.Aux {
		fmt.Fprintf(out, "[info] AUX FIELD %s = '%s'\n", kv[0], kv[1])
	}
	if info.Checksum != 0 {
		fmt.Fprintf(out, "[offset %d] Checksum OK\n", info.Size)
	}
	fmt.Fprintf(out, "[offset %d] \\o/ RDB looks OK! \\o/\n", info.Size)
	fmt.Fprintf(out, "[info] %d keys read\n[info] %d expires\n[info] %d already expired\n", info.Keys, expires, expired)
	if info.Version >= VersionFieldTTLs {
		fmt.Fprintf(out, "[info] %d subexpires\n", subexpires)
	}
	return info.Size, nil
}

// CheckFile is redis-check-rdb: it checks the file at path, reporting to
// out, and returns the exit status (0 valid, 1 not).
func CheckFile(path string, out io.Writer) int {
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(out, "Fatal error: can't open the RDB file %s for reading: %v\n", path, err)
		return 1
	}
	defer f.Close()
	if _, err := Check(f, path, out); err != nil {
		return 1
	}
	return 0
}
