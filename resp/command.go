package resp

import "strconv"

// AppendCommand appends argv to dst as a RESP array of bulk strings, the
// form a command takes in an AOF and in a replication stream, and the
// form a client sends it in.
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

// AppendSelect appends SELECT db as Redis writes it when the database of
// an AOF or a replication stream changes.
func AppendSelect(dst []byte, db int) []byte {
	n := strconv.Itoa(db)
	dst = append(dst, "*2\r\n$6\r\nSELECT\r\n$"...)
	dst = strconv.AppendInt(dst, int64(len(n)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, n...)
	return append(dst, '\r', '\n')
}

// CommandLen is the length of AppendCommand's encoding of argv: the bytes
// a replica counts into its offset for a command of its master's stream.
func CommandLen(argv [][]byte) int64 {
	n := int64(1 + len(strconv.Itoa(len(argv))) + 2)
	for _, a := range argv {
		n += int64(1+len(strconv.Itoa(len(a)))+2) + int64(len(a)) + 2
	}
	return n
}
