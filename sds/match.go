package sds

// Glob-style matching exactly as Redis's stringmatchlen (util.c), the one
// matcher KEYS, SCAN MATCH, CONFIG GET, COMMAND LIST FILTERBY PATTERN,
// PSUBSCRIBE and PUBSUB CHANNELS share:
//
//	*        any sequence, also empty
//	?        any one byte
//	[abc]    one of the bytes; [^abc] none of them; [a-z] a range (the
//	         ends in either order); \x inside brackets is x literally;
//	         an unterminated [ matches what it has read so far
//	\x       x literally
//
// Bytes compare as C's signed char, so in a range bytes >= 0x80 sort
// before ASCII, as they do in Redis. Like Redis 7.0.15 it gives up (no
// match) past 1000 nested '*', which bounds the work of hostile patterns
// together with the early exit once a '*' has failed at every position.

// maxMatchNesting is the depth of '*' recursion past which Redis gives
// up ("Protection against abusive patterns").
const maxMatchNesting = 1000

// Match reports whether s matches pattern. nocase folds ASCII letters.
func Match(pattern, s []byte, nocase bool) bool {
	skip := false
	return matchImpl(pattern, s, nocase, &skip, 0)
}

// MatchString is Match for a string subject (keys), without copying it.
func MatchString(pattern []byte, s string, nocase bool) bool {
	skip := false
	return matchImpl(pattern, s, nocase, &skip, 0)
}

func lowerASCII(c int) int {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// matchImpl is stringmatchlen_impl with indexes: p walks the pattern, i
// the subject. Reading past the pattern's end gives 0, like the NUL that
// terminates a Redis sds string.
func matchImpl[S string | []byte](pat []byte, s S, nocase bool, skipLonger *bool, nesting int) bool {
	if nesting > maxMatchNesting {
		return false
	}
	at := func(j int) byte {
		if j < len(pat) {
			return pat[j]
		}
		return 0
	}
	p, i := 0, 0
	for p < len(pat) && i < len(s) {
		switch pat[p] {
		case '*':
			for p < len(pat) && at(p+1) == '*' {
				p++
			}
			if len(pat)-p == 1 {
				return true
			}
			for i < len(s) {
				if matchImpl(pat[p+1:], s[i:], nocase, skipLonger, nesting+1) {
					return true
				}
				if *skipLonger {
					return false
				}
				i++
			}
			// The rest of the pattern matches nowhere in the rest of the
			// subject: an earlier '*' taking more cannot help.
			*skipLonger = true
			return false
		case '?':
			i++
		case '[':
			p++
			not := at(p) == '^'
			if not {
				p++
			}
			match := false
			c := int(int8(s[i]))
			for {
				if at(p) == '\\' && len(pat)-p >= 2 {
					p++
					if pat[p] == s[i] {
						match = true
					}
				} else if at(p) == ']' {
					break
				} else if p >= len(pat) {
					p--
					break
				} else if len(pat)-p >= 3 && pat[p+1] == '-' {
					start, end := int(int8(pat[p])), int(int8(pat[p+2]))
					cc := c
					if start > end {
						start, end = end, start
					}
					if nocase {
						start, end, cc = lowerASCII(start), lowerASCII(end), lowerASCII(cc)
					}
					p += 2
					if cc >= start && cc <= end {
						match = true
					}
				} else if !nocase {
					if pat[p] == s[i] {
						match = true
					}
				} else if lowerASCII(int(pat[p])) == lowerASCII(int(s[i])) {
					match = true
				}
				p++
			}
			if not {
				match = !match
			}
			if !match {
				return false
			}
			i++
		case '\\':
			if len(pat)-p >= 2 {
				p++
			}
			fallthrough
		default:
			if !nocase {
				if pat[p] != s[i] {
					return false
				}
			} else if lowerASCII(int(pat[p])) != lowerASCII(int(s[i])) {
				return false
			}
			i++
		}
		p++
		if i == len(s) {
			for at(p) == '*' {
				p++
			}
			break
		}
	}
	return p == len(pat) && i == len(s)
}
