package engine

import "fmt"

// SlowLog holds the most recent calls that ran at least SlowerThan
// microseconds (slowlog-log-slower-than; negative disables it), at most
// MaxLen of them (slowlog-max-len). Like Redis, a smaller MaxLen trims the
// log on the next entry.
type SlowLog struct {
	SlowerThan int64
	MaxLen     int

	nextID  int64
	entries []SlowLogEntry // oldest first
}

// SlowLogEntry is one slow log record.
type SlowLogEntry struct {
	ID       int64
	Time     int64 // Unix seconds
	Duration int64 // microseconds
	Args     [][]byte
	Addr     string
	Name     string
}

// Slow log entries keep at most this many arguments, each of at most this
// many bytes (SLOWLOG_ENTRY_MAX_ARGC, SLOWLOG_ENTRY_MAX_STRING).
const (
	slowlogMaxArgc   = 32
	slowlogMaxString = 128
)

// Push adds an entry for a call with args; args are copied (they alias
// the connection's read buffer), long ones truncated.
func (l *SlowLog) Push(args [][]byte, unix, us int64, addr, name string) {
	argc := min(len(args), slowlogMaxArgc)
	e := SlowLogEntry{ID: l.nextID, Time: unix, Duration: us, Addr: addr, Name: name, Args: make([][]byte, argc)}
	l.nextID++
	for j := 0; j < argc; j++ {
		a := args[j]
		switch {
		case argc != len(args) && j == argc-1:
			e.Args[j] = []byte(fmt.Sprintf("... (%d more arguments)", len(args)-argc+1))
		case len(a) > slowlogMaxString:
			b := make([]byte, 0, slowlogMaxString+32)
			b = append(b, a[:slowlogMaxString]...)
			b = fmt.Appendf(b, "... (%d more bytes)", len(a)-slowlogMaxString)
			e.Args[j] = b
		default:
			e.Args[j] = append([]byte(nil), a...)
		}
	}
	l.entries = append(l.entries, e)
	if over := len(l.entries) - max(l.MaxLen, 0); over > 0 {
		n := copy(l.entries, l.entries[over:])
		clear(l.entries[n:])
		l.entries = l.entries[:n]
	}
}

// Len is the number of entries.
func (l *SlowLog) Len() int { return len(l.entries) }

// Reset drops every entry; IDs keep counting.
func (l *SlowLog) Reset() { l.entries = nil }

// Newest returns up to n entries, newest first; n < 0 means all.
func (l *SlowLog) Newest(n int) []SlowLogEntry {
	if n < 0 || n > len(l.entries) {
		n = len(l.entries)
	}
	out := make([]SlowLogEntry, n)
	for i := range out {
		out[i] = l.entries[len(l.entries)-1-i]
	}
	return out
}
