package keyspace

// MemoryUsage estimates the stream's bytes as MEMORY USAGE does for a
// stream (objectComputeSize): the stream structure, the node tree
// costed as a rax of its keys, the listpacks (the first samples measured,
// their mean standing for every node but the last, which is measured),
// and per group its structure, its pending-entries tree with the
// entries, and per consumer its structure, name and pending tree.
func (s *Stream) MemoryUsage(samples int) int64 {
	const streamStruct, cgStruct, consumerStruct, nackStruct = 80, 40, 32, 24
	size := int64(streamStruct) + raxMemory(s.nodes.Len(), s.RaxNodes())
	var lpSum int64
	seen := 0
	s.nodes.Scan(func(n *streamNode) bool {
		if seen >= samples {
			return false
		}
		lpSum += allocSize(cap(n.lp()))
		seen++
		return true
	})
	if s.nodes.Len() <= seen {
		size += lpSum
	} else {
		if seen > 0 {
			lpSum /= int64(seen)
		}
		size += lpSum * int64(s.nodes.Len()-1)
		if last, ok := s.nodes.Max(); ok {
			size += allocSize(cap(last.lp()))
		}
	}
	s.Groups(func(g *StreamGroup) bool {
		size += cgStruct + raxMemory(g.pel.Len(), g.pel.Len()+1) + int64(g.pel.Len())*nackStruct
		g.consumers.Scan(func(c *StreamConsumer) bool {
			size += consumerStruct + int64(len(c.Name)) + raxMemory(c.pel.Len(), c.pel.Len()+1)
			return true
		})
		return true
	})
	return size
}

// raxMemory is streamRadixTreeMemoryUsage: a stream ID per element, and
// per node its header and a fixed allowance for its children and data
// pointers.
func raxMemory(elements, nodes int) int64 {
	return int64(elements)*16 + int64(nodes)*(4+8*30)
}
