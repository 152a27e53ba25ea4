package keyspace

// Accessors the RDB loader needs beyond stream.go's.

// HasNode reports whether the stream has a node whose master ID is
// master: a file that lists one twice is corrupt (rdbLoadObject's
// "Listpack re-added with existing key"), and LoadNode would replace it.
func (s *Stream) HasNode(master StreamID) bool {
	_, ok := s.nodes.Get(&streamNode{master: master})
	return ok
}
