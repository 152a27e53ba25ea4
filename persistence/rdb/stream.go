package rdb

import (
	"encoding/binary"

	"github.com/zredis/zredis/keyspace"
)

// Streams, as rdb.c saves and loads them. The value of a
// STREAM_LISTPACKS_2 (type 19, what Redis 7.0 writes) is
//
//	nodes: count, then per node its master ID (a 16-byte string, the
//	       big-endian ms and seq) and its listpack (a string);
//	length, last_id ms, seq, first_id ms, seq,
//	max_deleted_entry_id ms, seq, entries_added;
//	groups: count, then per group its name, last_id ms, seq,
//	        entries_read, its PEL (count, then per entry the raw 16-byte
//	        ID, the delivery time as 8 bytes little-endian and the
//	        delivery count), its consumers (count, then per consumer its
//	        name, seen time as 8 bytes little-endian, and its PEL: count
//	        and raw IDs only).
//
// STREAM_LISTPACKS_3 (type 21, Redis 7.2 and 7.4) adds each consumer's
// active time (8 bytes little-endian) after its seen time; it is read
// and dropped, since consumers here have 7.0's seen time only.
// STREAM_LISTPACKS (type 15, Redis 5 to 6.2) lacks first_id,
// max_deleted_entry_id, entries_added and the groups' entries_read,
// which loading derives as Redis 7.0 does. Lengths are rdbSaveLen's,
// the IDs of a PEL are raw bytes, not strings.

// writeStream writes a stream as rdbSaveObject does (type 19). The
// nodes' listpacks are written as they are in memory, which is Redis's
// own layout.
func (e *encoder) writeStream(s *keyspace.Stream) {
	e.writeLen(uint64(s.NodeCount()))
	s.Nodes(func(master keyspace.StreamID, lp []byte) bool {
		k := master.Encode()
		e.writeString(k[:])
		e.writeString(lp)
		return true
	})
	e.writeLen(s.Length())
	e.writeID(s.LastID)
	e.writeID(s.FirstID)
	e.writeID(s.MaxDeletedID)
	e.writeLen(s.EntriesAdded)
	e.writeLen(uint64(s.GroupCount()))
	s.Groups(func(g *keyspace.StreamGroup) bool {
		e.writeStringFromString(g.Name)
		e.writeID(g.LastID)
		e.writeLen(uint64(g.EntriesRead)) // -1 (unknown) as 2^64-1, as Redis
		e.writeLen(uint64(g.PendingCount()))
		g.PendingRange(keyspace.StreamID{}, func(n *keyspace.StreamNACK) bool {
			e.writeRawID(n.ID)
			e.buf = binary.LittleEndian.AppendUint64(e.buf, uint64(n.DeliveryTime))
			e.writeLen(n.DeliveryCount)
			return true
		})
		e.writeLen(uint64(g.ConsumerCount()))
		g.Consumers(func(c *keyspace.StreamConsumer) bool {
			e.writeStringFromString(c.Name)
			e.buf = binary.LittleEndian.AppendUint64(e.buf, uint64(c.SeenTime))
			e.writeLen(uint64(c.PendingCount()))
			c.PendingRange(keyspace.StreamID{}, func(n *keyspace.StreamNACK) bool {
				e.writeRawID(n.ID)
				return true
			})
			return true
		})
		return true
	})
}

// writeID writes an ID as two lengths, ms then seq.
func (e *encoder) writeID(id keyspace.StreamID) {
	e.writeLen(id.Ms)
	e.writeLen(id.Seq)
}

// writeRawID writes an ID's 16 big-endian bytes, as a PEL holds it.
func (e *encoder) writeRawID(id keyspace.StreamID) {
	k := id.Encode()
	e.buf = append(e.buf, k[:]...)
}

// readStream reads a stream of type t (STREAM_LISTPACKS, _2 or _3) with the
// checks of rdbLoadObject under deep sanitization (which this package
// always applies): each node's listpack must pass
// streamValidateListpackIntegrity, a master ID must appear once, a
// group name once, a consumer name once per group, a PEL entry once per
// group and per consumer, a consumer's entry must be in its group's PEL,
// and every entry of a group's PEL must have a consumer. A stream
// without entries is a valid value (XADD MAXLEN 0, XGROUP CREATE
// MKSTREAM make one), not an empty key.
func (d *decoder) readStream(t byte) (keyspace.Object, error) {
	s := keyspace.NewStream()
	nodes, err := d.readCount()
	if err != nil {
		return nil, err
	}
	last, ordered := keyspace.StreamID{}, true
	for i := uint64(0); i < nodes; i++ {
		if d.a, err = d.readString(d.a[:0]); err != nil {
			return nil, err
		}
		if len(d.a) != 16 {
			return nil, corrupt("Stream node key entry is not the size of a stream ID")
		}
		master := keyspace.DecodeStreamID(d.a)
		lp, err := d.readBlob()
		if err != nil {
			return nil, err
		}
		// ValidateNode refuses an empty listpack too, as the deep check
		// does before rdbLoadObject's "Empty listpack inside stream".
		if !keyspace.ValidateNode(lp, master) {
			return nil, corrupt("Stream listpack integrity check failed.")
		}
		// Redis writes the nodes in order; a file may not, and the rax
		// sorts them. Only then can a master ID repeat.
		if i > 0 && !last.Less(master) {
			ordered = false
		}
		if !ordered && s.HasNode(master) {
			return nil, corrupt("Listpack re-added with existing key")
		}
		s.LoadNode(master, lp)
		last = master
	}
	length, err := d.readCount()
	if err != nil {
		return nil, err
	}
	s.SetLength(length)
	if s.LastID, err = d.readID(); err != nil {
		return nil, err
	}
	if t != typeStreamListpacks {
		if s.FirstID, err = d.readID(); err != nil {
			return nil, err
		}
		if s.MaxDeletedID, err = d.readID(); err != nil {
			return nil, err
		}
		if s.EntriesAdded, err = d.readCount(); err != nil {
			return nil, err
		}
	} else {
		// As Redis 7.0 migrates an older stream: no tombstone known, as
		// many entries added as there are, the first live entry's ID
		// (the largest ID when there is none, as streamGetEdgeID).
		s.MaxDeletedID = keyspace.StreamID{}
		s.EntriesAdded = length
		s.FirstID = s.EdgeID(true, true)
	}
	if length != 0 && nodes == 0 {
		return nil, corrupt("Stream length inconsistent with rax entries")
	}
	groups, err := d.readCount()
	if err != nil {
		return nil, err
	}
	for ; groups > 0; groups-- {
		if err := d.readGroup(s, t); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// readGroup reads one consumer group of s.
func (d *decoder) readGroup(s *keyspace.Stream, t byte) error {
	name, err := d.readString(d.a[:0])
	d.a = name
	if err != nil {
		return err
	}
	lastID, err := d.readID()
	if err != nil {
		return err
	}
	var entriesRead int64
	if t != typeStreamListpacks {
		n, err := d.readCount()
		if err != nil {
			return err
		}
		entriesRead = int64(n) // 2^64-1 is -1, unknown
	} else {
		entriesRead = s.EstimateDistance(lastID)
	}
	g := s.CreateGroup(name, lastID, entriesRead)
	if g == nil {
		return corrupt("Duplicated consumer group name %s", name)
	}
	// The group's PEL: owners are resolved from the consumers' lists.
	pel, err := d.readCount()
	if err != nil {
		return err
	}
	for ; pel > 0; pel-- {
		id, err := d.readRawID()
		if err != nil {
			return err
		}
		at, err := d.readMillis()
		if err != nil {
			return err
		}
		count, err := d.readCount()
		if err != nil {
			return err
		}
		if !g.LoadPending(&keyspace.StreamNACK{ID: id, DeliveryTime: at, DeliveryCount: count}) {
			return corrupt("Duplicated global PEL entry loading stream consumer group")
		}
	}
	consumers, err := d.readCount()
	if err != nil {
		return err
	}
	for ; consumers > 0; consumers-- {
		if d.a, err = d.readString(d.a[:0]); err != nil {
			return err
		}
		c := g.CreateConsumer(d.a, 0)
		if c == nil {
			return corrupt("Duplicate stream consumer detected.")
		}
		if c.SeenTime, err = d.readMillis(); err != nil {
			return err
		}
		if t == typeStreamListpacks3 {
			// Redis 7.2's active-time (the last successful read or
			// claim); 7.0's consumers have the seen-time only.
			if _, err := d.readMillis(); err != nil {
				return err
			}
		}
		n, err := d.readCount()
		if err != nil {
			return err
		}
		for ; n > 0; n-- {
			id, err := d.readRawID()
			if err != nil {
				return err
			}
			nack := g.Pending(id)
			switch {
			case nack == nil:
				return corrupt("Consumer entry not found in group global PEL")
			case nack.Consumer == c:
				// Redis's text, two spaces included.
				return corrupt("Duplicated consumer PEL entry  loading a stream consumer group")
			case nack.Consumer == nil:
				g.LoadConsumerPending(c, id)
			default:
				// Listed by an earlier consumer too: Redis gives the
				// entry to the last one that lists it.
				g.Claim(nack, c)
			}
		}
	}
	var orphan bool
	g.PendingRange(keyspace.StreamID{}, func(n *keyspace.StreamNACK) bool {
		orphan = n.Consumer == nil
		return !orphan
	})
	if orphan {
		return corrupt("Stream CG PEL entry without consumer")
	}
	return nil
}

// readID reads an ID written as two lengths.
func (d *decoder) readID() (keyspace.StreamID, error) {
	ms, err := d.readCount()
	if err != nil {
		return keyspace.StreamID{}, err
	}
	seq, err := d.readCount()
	return keyspace.StreamID{Ms: ms, Seq: seq}, err
}

// readRawID reads an ID's 16 big-endian bytes.
func (d *decoder) readRawID() (keyspace.StreamID, error) {
	b, err := d.src.next(16)
	if err != nil {
		return keyspace.StreamID{}, err
	}
	return keyspace.DecodeStreamID(b), nil
}

// readMillis reads a time in Unix ms as 8 bytes little-endian
// (rdbLoadMillisecondTime).
func (d *decoder) readMillis() (int64, error) {
	b, err := d.src.next(8)
	if err != nil {
		return 0, err
	}
	return int64(binary.LittleEndian.Uint64(b)), nil
}
