package testsupport

import (
	"strconv"
	"strings"
)

// SamePropagation compares two runs of propagated commands, each command
// a line of space-separated arguments (as read back from an AOF): exactly,
// but for absolute deadlines (after PXAT, the time of PEXPIREAT), which
// differ by the time between the two executions (2 s at most), and the
// member of an SREM that a SPOP made (upper-case SREM: the scripts type
// commands in lower case). The commands package's propagation tests and
// the end-to-end suite's AOF comparisons both use it.
func SamePropagation(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := strings.Split(a[i], " "), strings.Split(b[i], " ")
		if len(x) != len(y) {
			return false
		}
		for j := range x {
			switch {
			case x[j] == y[j]:
			case x[0] == "SREM" && j == 2:
			case (j > 0 && x[j-1] == "PXAT") || (x[0] == "PEXPIREAT" && j == 2):
				m, err1 := strconv.ParseInt(x[j], 10, 64)
				n, err2 := strconv.ParseInt(y[j], 10, 64)
				if err1 != nil || err2 != nil || m-n > 2000 || n-m > 2000 {
					return false
				}
			default:
				return false
			}
		}
	}
	return true
}
