package zmqpub

import (
	"encoding/base64"
	"math"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends d to dst as one line of JSON, newline included, and
// returns the extended slice:
//
//	{"db":0,"type":"hash","key":"k","value":{"f1":"v1","f2":"v2"}}
//
// A message with an id (frame 4) has "id":"<ms>-<hash>" after the key.
// Every byte string (key, value, field, member) that is valid UTF-8 is
// written as a JSON string, its bytes as they are except for the escapes
// JSON requires (quote, backslash, control characters) and DEL; any other
// is written as {"base64":"..."} (standard encoding with padding), so no
// byte is lost or replaced. The value is, by type:
//
//   - string: the string;
//   - hash, and hash-fields (a hash's expired fields): an object of
//     field: value in message order; a field name that is not valid
//     UTF-8 cannot be an object key and is written as the string
//     "base64:" followed by its base64 form;
//   - list, set: an array of the members;
//   - zset: an array of [member, score] pairs, the score written as a JSON
//     number (its text unchanged) when its text has JSON's number syntax
//     and a finite value, otherwise as a string ("inf", "-inf");
//   - stream: an array of its entries in ID order, each as XRANGE replies
//     with it, [id, [field, value, field, value...]]; fields stay in
//     entry order and a field that occurs twice in an entry is kept
//     twice (an object could not hold both).
//
// The Perl listener (clients/perl, ZRedis::ExpiryListener::Format) writes
// the same bytes for the same message. A Decoded whose parts do not fit
// its type (only possible when built by hand) has its parts written as a
// plain array; a stream built by hand with Parts instead of Entries too.
func AppendJSON(dst []byte, d Decoded) []byte {
	dst = append(dst, `{"db":`...)
	dst = strconv.AppendInt(dst, int64(d.DB), 10)
	// Type names are plain ASCII ("hash", "type(7)"): nothing to escape.
	dst = append(dst, `,"type":"`...)
	dst = append(dst, d.Type.String()...)
	dst = append(dst, '"')
	dst = append(dst, `,"key":`...)
	dst = appendJSONBytes(dst, d.Key)
	if d.ID != nil {
		// digits, '-' and hex digits: nothing to escape
		dst = append(dst, `,"id":"`...)
		dst = append(dst, d.ID...)
		dst = append(dst, '"')
	}
	dst = append(dst, `,"value":`...)
	dst = AppendJSONValue(dst, d)
	return append(dst, "}\n"...)
}

// AppendJSONValue appends the value of d as AppendJSON writes it after
// "value": (a JSON string, object or array).
func AppendJSONValue(dst []byte, d Decoded) []byte {
	if d.Type == TypeStream && d.Parts == nil {
		return appendJSONStream(dst, d.Entries)
	}
	return appendJSONValue(dst, d.Type, d.Parts)
}

// appendJSONStream writes a stream's entries: [["1-0",["f","v"]],...].
func appendJSONStream(dst []byte, entries []StreamEntry) []byte {
	dst = append(dst, '[')
	for i, e := range entries {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '[')
		dst = appendJSONBytes(dst, e.ID)
		dst = append(dst, ',')
		dst = appendJSONArray(dst, e.Fields)
		dst = append(dst, ']')
	}
	return append(dst, ']')
}

// appendJSONArray writes byte strings as a JSON array.
func appendJSONArray(dst []byte, items [][]byte) []byte {
	dst = append(dst, '[')
	for i, p := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONBytes(dst, p)
	}
	return append(dst, ']')
}

func appendJSONValue(dst []byte, t Type, parts [][]byte) []byte {
	switch {
	case t == TypeString && len(parts) == 1:
		return appendJSONBytes(dst, parts[0])
	case (t == TypeHash || t == TypeHashFields) && len(parts)%2 == 0:
		dst = append(dst, '{')
		for i := 0; i < len(parts); i += 2 {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONFieldName(dst, parts[i])
			dst = append(dst, ':')
			dst = appendJSONBytes(dst, parts[i+1])
		}
		return append(dst, '}')
	case t == TypeZSet && len(parts)%2 == 0:
		dst = append(dst, '[')
		for i := 0; i < len(parts); i += 2 {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '[')
			dst = appendJSONBytes(dst, parts[i])
			dst = append(dst, ',')
			dst = appendJSONScore(dst, parts[i+1])
			dst = append(dst, ']')
		}
		return append(dst, ']')
	}
	return appendJSONArray(dst, parts)
}

// appendJSONFieldName writes a hash field name as an object key: a JSON
// string, "base64:..." when the name is not valid UTF-8.
func appendJSONFieldName(dst []byte, name []byte) []byte {
	if utf8.Valid(name) {
		return appendJSONString(dst, name)
	}
	dst = append(dst, `"base64:`...)
	dst = base64.StdEncoding.AppendEncode(dst, name)
	return append(dst, '"')
}

// appendJSONScore writes a sorted-set score: its text as a number when it
// is a JSON number of finite value (every score Redis prints but "inf" and
// "-inf"), otherwise as a string.
func appendJSONScore(dst []byte, score []byte) []byte {
	if isJSONNumber(score) {
		// Past float64's range ("1e999") the value is infinite: text. The
		// syntax is checked, so ParseFloat's only possible error is that.
		if f, _ := strconv.ParseFloat(string(score), 64); !math.IsInf(f, 0) {
			return append(dst, score...)
		}
	}
	return appendJSONBytes(dst, score)
}

// isJSONNumber reports whether s matches JSON's number grammar (RFC 8259
// section 6): -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func isJSONNumber(s []byte) bool {
	i := 0
	digits := func() int {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - start
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// appendJSONBytes writes b as a JSON string when it is valid UTF-8, else as
// {"base64":"..."}.
func appendJSONBytes(dst []byte, b []byte) []byte {
	if utf8.Valid(b) {
		return appendJSONString(dst, b)
	}
	dst = append(dst, `{"base64":"`...)
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, `"}`...)
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes s, valid UTF-8, as a JSON string. It escapes
// what JSON requires (quote, backslash, control characters) and DEL, as
// the Perl listener does; every other byte is written as is.
func appendJSONString(dst []byte, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c != 0x7f {
			i++
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
