package rdb

// Format constants from Redis 7.0's rdb.h, and those of 7.2 and 7.4.

// Versions. A file or DUMP payload without hash field TTLs is written as
// version 10, the format of Redis 7.0, so that 7.0 reads it; one with a
// hash whose fields have TTLs is written as version 12, as Redis 7.4
// writes it (7.0 could not keep those TTLs). Loading accepts up to 12:
// 11 is Redis 7.2's.
const (
	// Version is the RDB version Redis 7.0 writes: what we write for
	// data without hash field TTLs.
	Version = 10
	// VersionFieldTTLs is the RDB version of Redis 7.4, which we write
	// for data with hash field TTLs.
	VersionFieldTTLs = 12
	// MaxVersion is the newest version Load and Restore accept.
	MaxVersion = 12
)

// Value types.
const (
	typeString           = 0
	typeList             = 1
	typeSet              = 2
	typeZSet             = 3
	typeHash             = 4
	typeZSet2            = 5
	typeModule           = 6
	typeModule2          = 7
	typeHashZipmap       = 9
	typeListZiplist      = 10
	typeSetIntset        = 11
	typeZSetZiplist      = 12
	typeHashZiplist      = 13
	typeListQuicklist    = 14
	typeStreamListpacks  = 15
	typeHashListpack     = 16
	typeZSetListpack     = 17
	typeListQuicklist2   = 18
	typeStreamListpacks2 = 19
	// Redis 7.2 (version 11).
	typeSetListpack      = 20
	typeStreamListpacks3 = 21 // consumers with their active-time
	// Redis 7.4 (version 12): hashes with field TTLs. The _PRE_GA forms
	// are those of 7.4's release candidates, without the min-TTL header
	// and with absolute TTLs in the table form.
	typeHashMetadataPreGA   = 22
	typeHashListpackExPreGA = 23
	typeHashMetadata        = 24
	typeHashListpackEx      = 25
)

// Hash field TTLs (Redis 7.4's ebuckets): a field's TTL is Unix ms of at
// most 48 bits; the hash header's minimum TTL may also hold the "none"
// mark, one past the maximum.
const (
	fieldTTLMax  = 1<<48 - 1
	fieldTTLNone = fieldTTLMax + 1
)

// Opcodes that precede keys or stand between them.
const (
	opSlotInfo     = 244 // Redis 7.4, cluster mode: a slot's sizing hints
	opFunction2    = 245
	opFunction     = 246 // the format of 7.0's release candidates
	opModuleAux    = 247
	opIdle         = 248
	opFreq         = 249
	opAux          = 250
	opResizeDB     = 251
	opExpireTimeMS = 252
	opExpireTime   = 253
	opSelectDB     = 254
	opEOF          = 255
)

// Length encodings: the top two bits of the first byte.
const (
	len6Bit  = 0
	len14Bit = 1
	len32Bit = 0x80
	len64Bit = 0x81
	lenEnc   = 3
)

// Special string encodings (a length byte 11xxxxxx).
const (
	encInt8  = 0
	encInt16 = 1
	encInt32 = 2
	encLZF   = 3
)

// Quicklist node containers (RDB_TYPE_LIST_QUICKLIST_2).
const (
	containerPlain  = 1
	containerPacked = 2
)

// Redis 7.0's defaults for the thresholds of the compact encodings.
const (
	defaultHashMaxListpackEntries = 512
	defaultHashMaxListpackValue   = 64
	defaultSetMaxIntsetEntries    = 512
	defaultZSetMaxListpackEntries = 128
	defaultZSetMaxListpackValue   = 64
	// quicklistNodeBytes is the node size of list-max-listpack-size -2.
	quicklistNodeBytes = 8 << 10
	// quicklistNodeOverhead is what Redis adds to an element's size when
	// it estimates whether the element still fits in a node.
	quicklistNodeOverhead = 8
	// plainNodeSize is the element size from which Redis 7.0 stores a list
	// element in a node of its own (packed_threshold, 1 GB).
	plainNodeSize = 1 << 30
)
