package aof

import "strconv"

// AppendCommand appends argv to dst as a RESP multibulk, the form every
// command takes in an AOF (catAppendOnlyGenericCommand).
func AppendCommand(dst []byte, argv ...[]byte) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(len(argv)), 10)
	dst = append(dst, '\r', '\n')
	for _, a := range argv {
		dst = append(dst, '$')
		dst = strconv.AppendInt(dst, int64(len(a)), 10)
		dst = append(dst, '\r', '\n')
		dst = append(dst, a...)
		dst = append(dst, '\r', '\n')
	}
	return dst
}

// appendSelect appends the SELECT feedAppendOnlyFile emits when the database
// changes.
func appendSelect(dst []byte, db int) []byte {
	n := strconv.Itoa(db)
	dst = append(dst, "*2\r\n$6\r\nSELECT\r\n$"...)
	dst = strconv.AppendInt(dst, int64(len(n)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, n...)
	return append(dst, '\r', '\n')
}

// appendTimestamp appends the "#TS:<unix seconds>\r\n" annotation written
// when aof-timestamp-enabled is yes.
func appendTimestamp(dst []byte, unix int64) []byte {
	dst = append(dst, "#TS:"...)
	dst = strconv.AppendInt(dst, unix, 10)
	return append(dst, '\r', '\n')
}
