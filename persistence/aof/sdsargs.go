package aof

import (
	"errors"

	"github.com/zredis/zredis/sds"
)

// errUnbalancedQuotes is what splitArgs reports for input sdssplitargs rejects.
var errUnbalancedQuotes = errors.New("unbalanced quotes")

// splitArgs is sds.c's sdssplitargs (package sds), with an error for
// input it rejects.
func splitArgs(line string) ([]string, error) {
	args, ok := sds.SplitArgs(line)
	if !ok {
		return nil, errUnbalancedQuotes
	}
	return args, nil
}

// isSpace is C's isspace in the C locale.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// isPrint is C's isprint in the C locale.
func isPrint(c byte) bool { return c >= 0x20 && c <= 0x7e }

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
func repr(s string) string { return sds.Repr(s) }
