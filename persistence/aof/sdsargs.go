package aof

import (
	"errors"
	"strconv"
	"strings"
)

// errUnbalancedQuotes is what splitArgs reports for input sdssplitargs rejects.
var errUnbalancedQuotes = errors.New("unbalanced quotes")

// isSpace is C's isspace in the C locale.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// isPrint is C's isprint in the C locale.
func isPrint(c byte) bool { return c >= 0x20 && c <= 0x7e }

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// splitArgs is sds.c's sdssplitargs: space-separated tokens, "double quoted"
// with \xHH, \n, \r, \t, \b, \a and \<char> escapes, 'single quoted' with
// only \' escaped; a closing quote must be followed by a space or the end.
func splitArgs(line string) ([]string, error) {
	var args []string
	p := 0
	n := len(line)
	at := func(i int) byte {
		if i < n {
			return line[i]
		}
		return 0
	}
	for {
		for p < n && isSpace(line[p]) {
			p++
		}
		if p >= n {
			return args, nil
		}
		var cur strings.Builder
		inq, insq, done := false, false, false
		for !done {
			c := at(p)
			switch {
			case inq:
				if c == '\\' && at(p+1) == 'x' {
					h, ok1 := hexVal(at(p + 2))
					l, ok2 := hexVal(at(p + 3))
					if ok1 && ok2 {
						cur.WriteByte(h<<4 | l)
						p += 3
						break
					}
				}
				if c == '\\' && at(p+1) != 0 {
					p++
					switch e := at(p); e {
					case 'n':
						cur.WriteByte('\n')
					case 'r':
						cur.WriteByte('\r')
					case 't':
						cur.WriteByte('\t')
					case 'b':
						cur.WriteByte('\b')
					case 'a':
						cur.WriteByte('\a')
					default:
						cur.WriteByte(e)
					}
				} else if c == '"' {
					if at(p+1) != 0 && !isSpace(at(p+1)) {
						return nil, errUnbalancedQuotes
					}
					done = true
				} else if c == 0 {
					return nil, errUnbalancedQuotes
				} else {
					cur.WriteByte(c)
				}
			case insq:
				if c == '\\' && at(p+1) == '\'' {
					p++
					cur.WriteByte('\'')
				} else if c == '\'' {
					if at(p+1) != 0 && !isSpace(at(p+1)) {
						return nil, errUnbalancedQuotes
					}
					done = true
				} else if c == 0 {
					return nil, errUnbalancedQuotes
				} else {
					cur.WriteByte(c)
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
					cur.WriteByte(c)
				}
			}
			if p < n {
				p++
			}
		}
		args = append(args, cur.String())
	}
}

// needsRepr is sds.c's sdsneedsrepr.
func needsRepr(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' || c == '"' || !isPrint(c) || isSpace(c) {
			return true
		}
	}
	return false
}

// repr is sds.c's sdscatrepr: a double-quoted string splitArgs reads back.
func repr(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		default:
			if isPrint(c) {
				b.WriteByte(c)
			} else {
				b.WriteString(`\x`)
				h := strconv.FormatUint(uint64(c), 16)
				if len(h) == 1 {
					b.WriteByte('0')
				}
				b.WriteString(h)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
