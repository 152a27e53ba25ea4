// Package rdb reads and writes Redis RDB files and DUMP payloads,
// interchangeable with redis-server 7.0, and with 7.4 for hashes whose
// fields have TTLs.
//
// Writing (Writer, Dump) produces version 10, the format of Redis 7.0,
// with the encodings Redis 7.0 itself writes for the same values, so
// that redis-server loads a file we wrote with the same OBJECT ENCODING
// for every key and redis-check-rdb accepts it. Data with hash field
// TTLs, which 7.0 cannot hold, is written as Redis 7.4 writes it:
// version 12 (WriterOptions.FieldTTLs; a DUMP payload of such a hash
// says 12 in its footer), such a hash as HASH_LISTPACK_EX or
// HASH_METADATA, everything else as below:
//
//   - strings: integers in 8, 16 or 32 bits when the string is the
//     canonical form of one, LZF when compression is on and saves space,
//     else verbatim;
//   - lists: QUICKLIST_2 with listpack nodes filled as list-max-listpack-size
//     -2 fills them (8 kB), elements of 1 GB or more in plain nodes;
//   - sets: INTSET for an intset, else SET;
//   - sorted sets: ZSET_LISTPACK for a small set, else ZSET_2 with binary
//     scores from the greatest element down (Redis's skiplist order);
//   - hashes: HASH_LISTPACK for a small hash, else HASH; with field
//     TTLs, HASH_LISTPACK_EX for a small hash (7.4's listpackex, fields
//     in TTL order), else HASH_METADATA (see hashttl.go);
//   - streams: STREAM_LISTPACKS_2, the nodes' listpacks as they are in
//     memory (Redis's own node layout), then the IDs, counters, consumer
//     groups, their pending entries and consumers.
//
// Reading (Load, Restore) accepts versions 1 to 12, as Redis 7.4 does,
// with every encoding older Redis versions wrote: linked lists, ziplists,
// zipmaps, intsets, quicklists of ziplists or listpacks, text and binary
// scores, streams of Redis 5 to 6.2 (STREAM_LISTPACKS) and of 7.0, and
// those of 7.2 and 7.4: SET_LISTPACK (rebuilt as an intset or a
// hashtable, 7.0's set encodings), STREAM_LISTPACKS_3 (the consumers'
// active-time dropped), the hashes with field TTLs of 7.4 and of its
// release candidates (the TTLs kept, past ones too), and the SLOT_INFO
// opcode (skipped, as outside cluster mode). Values are rebuilt in the
// encodings Redis would give them under the thresholds of LoadOptions.
// Module values are refused with an error that names them.
//
// Input is not trusted: every length is checked against what the input
// can still hold (or, on a stream of unknown size, memory grows only as
// bytes arrive), the packed encodings are validated as Redis's deep
// sanitization does (header sizes, entry bounds, counts, ordering,
// duplicates), and the CRC-64 footer is verified when it is not zero.
// Malformed input gives an error, never a panic.
package rdb
