package aof

import "strconv"

// appendTimestamp appends the "#TS:<unix seconds>\r\n" annotation written
// when aof-timestamp-enabled is yes.
func appendTimestamp(dst []byte, unix int64) []byte {
	dst = append(dst, "#TS:"...)
	dst = strconv.AppendInt(dst, unix, 10)
	return append(dst, '\r', '\n')
}
