package main

// seenIDs holds the last ids of messages that carried one: a FIFO bounded
// by max and a set for the look-up. A window, not every id ever seen: a
// repeat comes soon after the first (a restart, a failover, a replay), and
// a listener running for months must not grow with every expiry.
type seenIDs struct {
	max  int
	fifo []string // oldest at next once full
	next int
	set  map[string]struct{}
}

func newSeenIDs(max int) *seenIDs {
	return &seenIDs{max: max, set: make(map[string]struct{})}
}

// add records id and reports whether it was new. A full window forgets
// its oldest id to make room. A repeat does not refresh its id: the
// window counts messages from the first report of an event.
func (s *seenIDs) add(id []byte) bool {
	if _, dup := s.set[string(id)]; dup {
		return false
	}
	k := string(id)
	if len(s.fifo) < s.max {
		s.fifo = append(s.fifo, k)
	} else {
		delete(s.set, s.fifo[s.next])
		s.fifo[s.next] = k
		s.next = (s.next + 1) % s.max
	}
	s.set[k] = struct{}{}
	return true
}
