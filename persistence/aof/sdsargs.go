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

// repr is sds.c's sdscatrepr: a double-quoted string splitArgs reads back.
func repr(s string) string { return sds.Repr(s) }
