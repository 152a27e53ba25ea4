// Package sds reproduces, byte for byte, Redis's string routines that
// zredis must answer exactly as Redis does: the two of sds.c that read and
// write quoted arguments, sdssplitargs (redis.conf lines, AOF manifests)
// and sdscatrepr (CONFIG REWRITE, MONITOR, manifest names), and util.c's
// glob matcher stringmatchlen (match.go: KEYS, SCAN, CONFIG GET,
// PSUBSCRIBE...). Exactness matters: Redis and zredis must accept, reject,
// match and echo the same inputs.
package sds

// IsSpace is isspace() in the C locale.
func IsSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// NeedsRepr is sdsneedsrepr: whether s must be quoted (Repr) to be read
// back by SplitArgs as one argument.
func NeedsRepr(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' || c == '"' || c < 0x20 || c > 0x7e || IsSpace(c) {
			return true
		}
	}
	return false
}

func isHexDigit(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hexDigitToInt(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// SplitArgs splits a line the way Redis's sdssplitargs does: blanks separate
// arguments, "double quotes" support \n \r \t \b \a \xHH and \<any> escapes,
// 'single quotes' support only \'. A closing quote must be followed by a
// blank or the end of the line. ok is false on unbalanced quotes, which
// Redis reports as "Unbalanced quotes in configuration line".
func SplitArgs(line string) (args []string, ok bool) {
	p := 0
	n := len(line)
	at := func(i int) byte {
		if i < n {
			return line[i]
		}
		return 0
	}
	args = []string{}
	for {
		for p < n && IsSpace(line[p]) {
			p++
		}
		if p >= n {
			return args, true
		}
		var cur []byte
		inq, insq, done := false, false, false
		for !done {
			c := at(p)
			switch {
			case inq:
				switch {
				case c == '\\' && at(p+1) == 'x' && isHexDigit(at(p+2)) && isHexDigit(at(p+3)):
					cur = append(cur, hexDigitToInt(at(p+2))*16+hexDigitToInt(at(p+3)))
					p += 3
				case c == '\\' && at(p+1) != 0:
					p++
					switch at(p) {
					case 'n':
						cur = append(cur, '\n')
					case 'r':
						cur = append(cur, '\r')
					case 't':
						cur = append(cur, '\t')
					case 'b':
						cur = append(cur, '\b')
					case 'a':
						cur = append(cur, '\a')
					default:
						cur = append(cur, at(p))
					}
				case c == '"':
					if at(p+1) != 0 && !IsSpace(at(p+1)) {
						return nil, false
					}
					done = true
				case c == 0:
					return nil, false
				default:
					cur = append(cur, c)
				}
			case insq:
				switch {
				case c == '\\' && at(p+1) == '\'':
					p++
					cur = append(cur, '\'')
				case c == '\'':
					if at(p+1) != 0 && !IsSpace(at(p+1)) {
						return nil, false
					}
					done = true
				case c == 0:
					return nil, false
				default:
					cur = append(cur, c)
				}
			default:
				switch c {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					cur = append(cur, c)
				}
			}
			if p < n {
				p++
			}
		}
		args = append(args, string(cur))
	}
}

// Repr quotes s the way Redis's sdscatrepr does; the result is always
// readable back by SplitArgs.
func Repr(s string) string {
	return string(AppendRepr(make([]byte, 0, len(s)+2), []byte(s)))
}

// AppendRepr appends b quoted as sdscatrepr does: printable ASCII as is,
// \\ \" \n \r \t \a \b escaped, other bytes as \xHH.
func AppendRepr(dst, b []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for _, ch := range b {
		switch ch {
		case '\\', '"':
			dst = append(dst, '\\', ch)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\a':
			dst = append(dst, '\\', 'a')
		case '\b':
			dst = append(dst, '\\', 'b')
		default:
			if ch >= 0x20 && ch < 0x7f {
				dst = append(dst, ch)
			} else {
				dst = append(dst, '\\', 'x', hex[ch>>4], hex[ch&15])
			}
		}
	}
	return append(dst, '"')
}
