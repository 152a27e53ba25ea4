package main

import (
	"strconv"

	"github.com/zredis/zredis/zmqpub"
)

// Limits of the text format, which is for reading along, not archiving:
// JSON carries every byte.
const (
	textMaxBytes = 256 // bytes shown of one key, value, field or member
	textMaxItems = 16  // items (members or pairs) shown of one collection
)

// appendText appends one line for people reading along, the same line the
// Perl listener's text format prints:
//
//	db=0 type=string key="k" value="hello\n"
//	db=3 type=hash key="h" value=2 {"f1"="v1" "f2"=""}
//	db=0 type=hash-fields key="mail:42" value=1 {"rcpt:2"="deferred"}
//	db=0 type=zset key="z" value=1 {"a"="-inf"}
//	db=0 type=list key="l" value=20 {"m" "m" ... ...(+4)}
//	db=0 type=stream key="s" value=2 {"1-0"={"f"="v"} "1-2"={"f"="w" "g"="x"}}
//	db=0 type=string key="lock:q1" id=1764633600123-c16520f3790e34f7 value="1"
//
// A message id (frame 4) comes after the key, unquoted: Decode lets only
// digits, '-' and hex digits through.
//
// A collection shows its item count (pairs for a hash, a hash's expired
// fields or a sorted set, entries for a stream) and its first
// textMaxItems items; a stream entry shows its ID and its first
// textMaxItems field/value pairs the same way, without a count. A string longer than textMaxBytes is cut and followed
// by "...(+N bytes)". Quoting is described at appendQuoted.
func appendText(dst []byte, d zmqpub.Decoded) []byte {
	dst = append(dst, "db="...)
	dst = strconv.AppendInt(dst, int64(d.DB), 10)
	dst = append(dst, " type="...)
	dst = append(dst, d.Type.String()...)
	dst = append(dst, " key="...)
	dst = appendQuoted(dst, d.Key)
	if d.ID != nil {
		dst = append(dst, " id="...)
		dst = append(dst, d.ID...)
	}
	dst = append(dst, " value="...)
	if d.Type == zmqpub.TypeStream && d.Parts == nil {
		return appendTextStream(dst, d.Entries)
	}
	parts := d.Parts
	if d.Type == zmqpub.TypeString && len(parts) == 1 {
		dst = appendQuoted(dst, parts[0])
		return append(dst, '\n')
	}
	step := 1
	if (d.Type == zmqpub.TypeHash || d.Type == zmqpub.TypeHashFields || d.Type == zmqpub.TypeZSet) && len(parts)%2 == 0 {
		step = 2
	}
	dst = strconv.AppendInt(dst, int64(len(parts)/step), 10)
	dst = append(dst, ' ')
	dst = appendTextItems(dst, parts, step)
	return append(dst, '\n')
}

// appendTextItems writes {"a" "b" ...} (step 1) or {"f"="v" ...} (step 2),
// the first textMaxItems items or pairs and how many more there are.
func appendTextItems(dst []byte, parts [][]byte, step int) []byte {
	items := len(parts) / step
	dst = append(dst, '{')
	for i := 0; i < items && i < textMaxItems; i++ {
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = appendQuoted(dst, parts[i*step])
		if step == 2 {
			dst = append(dst, '=')
			dst = appendQuoted(dst, parts[i*step+1])
		}
	}
	dst = appendMore(dst, items)
	return append(dst, '}')
}

// appendTextStream writes a stream's entry count and its first entries,
// each as its ID = its field/value pairs.
func appendTextStream(dst []byte, entries []zmqpub.StreamEntry) []byte {
	dst = strconv.AppendInt(dst, int64(len(entries)), 10)
	dst = append(dst, " {"...)
	for i, e := range entries {
		if i == textMaxItems {
			break
		}
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = appendQuoted(dst, e.ID)
		dst = append(dst, '=')
		step := 2
		if len(e.Fields)%2 != 0 { // only when built by hand
			step = 1
		}
		dst = appendTextItems(dst, e.Fields, step)
	}
	dst = appendMore(dst, len(entries))
	return append(dst, "}\n"...)
}

// appendMore writes " ...(+N)" when items exceed what is shown.
func appendMore(dst []byte, items int) []byte {
	if items > textMaxItems {
		dst = append(dst, " ...(+"...)
		dst = strconv.AppendInt(dst, int64(items-textMaxItems), 10)
		dst = append(dst, ')')
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// appendQuoted writes b between double quotes, cut to textMaxBytes:
// backslash and quote are escaped with a backslash, newline and tab
// written \n and \t, and every other byte outside printable ASCII as \xHH
// (UTF-8 included: the line stays ASCII whatever the value holds).
func appendQuoted(dst []byte, b []byte) []byte {
	more := len(b) - textMaxBytes
	if more > 0 {
		b = b[:textMaxBytes]
	}
	dst = append(dst, '"')
	for _, c := range b {
		switch {
		case c == '\\' || c == '"':
			dst = append(dst, '\\', c)
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c < 0x20 || c > 0x7e:
			dst = append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	dst = append(dst, '"')
	if more > 0 {
		dst = append(dst, "...(+"...)
		dst = strconv.AppendInt(dst, int64(more), 10)
		dst = append(dst, " bytes)"...)
	}
	return dst
}
