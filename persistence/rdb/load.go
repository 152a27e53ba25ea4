package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/zredis/zredis/keyspace"
)

// LoadOptions are the thresholds that decide the encodings of loaded
// values, as Redis's configuration does when it loads a file: a value
// that a file holds in a compact form but that exceeds them is converted,
// as redis-server converts it. DefaultLoadOptions returns Redis 7.0's
// defaults; a zero field means zero, as in redis.conf.
type LoadOptions struct {
	HashMaxListpackEntries int64 // hash-max-listpack-entries
	HashMaxListpackValue   int64 // hash-max-listpack-value
	SetMaxIntsetEntries    int64 // set-max-intset-entries
	ZSetMaxListpackEntries int64 // zset-max-listpack-entries
	ZSetMaxListpackValue   int64 // zset-max-listpack-value
	// OnResize, when set, receives each RESIZEDB record: the number of
	// keys and of keys with a deadline the database is announced to hold
	// (bounded, see resizeHint), so that the caller can size its tables.
	OnResize func(db, keys, expires int)
	// SkipChecksum leaves the CRC-64 of a file or of a DUMP payload
	// unverified (DEBUG SET-SKIP-CHECKSUM-VALIDATION 1).
	SkipChecksum bool
}

// maxResizeHint caps what OnResize passes on from a RESIZEDB record when
// the input's size is unknown (a stream); otherwise the hint is also
// capped by what the rest of the input can hold, at minKeyBytes a key: a
// file may lie, and the caller allocates tables from the hint.
const (
	maxResizeHint = 1 << 20
	minKeyBytes   = 3 // type, key length, value length, with empty key and value
)

// resizeHint bounds a RESIZEDB count by maxResizeHint, or by what the
// input can still hold when its size is known.
func resizeHint(src *source, n uint64) int {
	if src.left >= 0 {
		return int(min(n, (uint64(src.avail())+uint64(src.left))/minKeyBytes))
	}
	return int(min(n, maxResizeHint))
}

// DefaultLoadOptions returns Redis 7.0's default thresholds.
func DefaultLoadOptions() LoadOptions {
	return LoadOptions{
		HashMaxListpackEntries: defaultHashMaxListpackEntries,
		HashMaxListpackValue:   defaultHashMaxListpackValue,
		SetMaxIntsetEntries:    defaultSetMaxIntsetEntries,
		ZSetMaxListpackEntries: defaultZSetMaxListpackEntries,
		ZSetMaxListpackValue:   defaultZSetMaxListpackValue,
	}
}

// Info describes a loaded file.
type Info struct {
	Version int         // the RDB version of the header
	Aux     [][2]string // the aux fields (redis-ver, ctime, ...) in file order
	Keys    int         // keys handed to the callback
	// EmptyKeysSkipped counts values without elements, which Redis
	// skips with a warning (older versions could write them).
	EmptyKeysSkipped int
	// Functions holds the library code of FUNCTION2 records (and of the
	// release candidates' FUNCTION records, translated), in file order.
	Functions []string
	// Checksum is the CRC-64 the file ends with; 0 when it was written
	// without one (rdbchecksum no) or is older than version 5.
	Checksum uint64
	// Size is the length of the file, checksum included. Load reads
	// ahead, so a caller that reads on past the file (the commands that
	// follow the RDB preamble of an AOF base file) seeks to this offset
	// from where the file started.
	Size int64
}

// Error is a load failure at an offset of the input.
type Error struct {
	Offset int64 // input offset where decoding stopped
	Err    error
}

func (e *Error) Error() string { return fmt.Sprintf("rdb: at offset %d: %v", e.Offset, e.Err) }

func (e *Error) Unwrap() error { return e.Err }

// Load errors whose text is Redis's.
var (
	ErrSignature = errors.New("Wrong signature trying to load DB from file")
	// ErrTruncated: the input ended before the end of the file.
	ErrTruncated = errTruncated
	// ErrChecksum: the CRC-64 at the end does not match the content.
	ErrChecksum = errors.New("RDB CRC error")
)

// ErrVersion is returned for a version newer than Redis 7.4's (12), or
// below 1.
type ErrVersion int

func (e ErrVersion) Error() string { return fmt.Sprintf("Can't handle RDB format version %d", int(e)) }

// Load reads an RDB file (versions 1 to 12: Redis 7.0's and older, 7.2's
// and 7.4's) and calls fn for every key, in file order, with its database
// number and a new entry whose deadline is absolute Unix milliseconds
// (0 = none). Keys whose deadline has passed are handed over too: the
// caller decides (Redis drops them when it loads as a master). Hash
// fields whose own TTL has passed are kept in their hash, as Redis 7.4.1
// keeps them at load (its field expiry removes them afterwards).
// Duplicate keys are the caller's to detect. LRU/LFU hints are skipped.
// An error from fn stops the load and is returned as is; any other
// failure is an *Error with the offset where reading stopped. The whole
// input is validated, the CRC-64 at the end included (when it is not 0),
// before Load returns nil, but fn has then already seen the keys before
// a late failure. A nil fn only validates the file.
func Load(r io.Reader, opt LoadOptions, fn func(db int, key string, e *keyspace.Entry) error) (Info, error) {
	if fn == nil {
		fn = func(int, string, *keyspace.Entry) error { return nil } // validate only
	}
	src := newSource(r)
	info, err := load(src, opt, fn)
	if err != nil {
		var fe fnError
		if errors.As(err, &fe) {
			return info, fe.err
		}
		if errors.Is(err, errTruncated) || src.readErr != nil {
			err = src.truncatedErr()
		}
		return info, &Error{Offset: src.offset(), Err: err}
	}
	return info, nil
}

// fnError carries the callback's error out unchanged.
type fnError struct{ err error }

func (e fnError) Error() string { return e.err.Error() }

func load(src *source, opt LoadOptions, fn func(db int, key string, e *keyspace.Entry) error) (Info, error) {
	var info Info
	hdr, err := src.next(9)
	if err != nil {
		return info, err
	}
	if string(hdr[:5]) != "REDIS" {
		return info, ErrSignature
	}
	info.Version = atoi(hdr[5:9])
	if info.Version < 1 || info.Version > MaxVersion {
		return info, ErrVersion(info.Version)
	}
	d := &decoder{src: src, opt: opt}
	db := 0
	expireAt := int64(0)
	var key []byte
	for {
		t, err := src.readByte()
		if err != nil {
			return info, err
		}
		switch t {
		case opExpireTime:
			b, err := src.next(4)
			if err != nil {
				return info, err
			}
			expireAt = int64(int32(binary.LittleEndian.Uint32(b))) * 1000
			continue
		case opExpireTimeMS:
			b, err := src.next(8)
			if err != nil {
				return info, err
			}
			expireAt = int64(binary.LittleEndian.Uint64(b))
			continue
		case opFreq:
			if _, err := src.readByte(); err != nil {
				return info, err
			}
			continue
		case opIdle:
			if _, err := d.readCount(); err != nil {
				return info, err
			}
			continue
		case opEOF:
			if info.Version >= 5 {
				want := src.sum()
				b, err := src.next(8)
				if err != nil {
					return info, err
				}
				info.Checksum = binary.LittleEndian.Uint64(b)
				if info.Checksum != 0 && info.Checksum != want && !opt.SkipChecksum {
					return info, fmt.Errorf("%w: wrong RDB checksum expected: (%x) but got (%x)", ErrChecksum, want, info.Checksum)
				}
			}
			info.Size = src.offset()
			return info, nil
		case opSelectDB:
			n, err := d.readCount()
			if err != nil {
				return info, err
			}
			if n > math.MaxInt32 {
				return info, corrupt("database number %d out of range", n)
			}
			db = int(n)
			continue
		case opResizeDB:
			var sizes [2]uint64
			for i := range sizes {
				n, err := d.readCount()
				if err != nil {
					return info, err
				}
				sizes[i] = n
			}
			if opt.OnResize != nil {
				// A hint only: bounded, since the file may lie.
				opt.OnResize(db, resizeHint(d.src, sizes[0]), resizeHint(d.src, sizes[1]))
			}
			continue
		case opSlotInfo:
			// Slot id, keys and keys with a deadline in it: sizing
			// hints of a cluster node, which Redis 7.4 outside cluster
			// mode skips.
			for i := 0; i < 3; i++ {
				if _, err := d.readCount(); err != nil {
					return info, err
				}
			}
			continue
		case opAux:
			k, err := d.readString(nil)
			if err != nil {
				return info, err
			}
			v, err := d.readString(nil)
			if err != nil {
				return info, err
			}
			info.Aux = append(info.Aux, [2]string{string(k), string(v)})
			continue
		case opModuleAux:
			return info, errors.New("unsupported module aux data (zredis loads no modules)")
		case opFunction2:
			code, err := d.readString(nil)
			if err != nil {
				return info, err
			}
			info.Functions = append(info.Functions, string(code))
			continue
		case opFunction:
			code, err := d.readOldFunction()
			if err != nil {
				return info, err
			}
			info.Functions = append(info.Functions, code)
			continue
		}
		if key, err = d.readString(key[:0]); err != nil {
			return info, err
		}
		obj, str, err := d.readObject(t)
		if errors.Is(err, errEmptyKey) {
			info.EmptyKeysSkipped++
			expireAt = 0
			continue
		}
		if err != nil {
			return info, err
		}
		k := string(key)
		var e *keyspace.Entry
		if obj != nil {
			e = keyspace.NewObjectFor(k, obj, expireAt)
		} else {
			e = keyspace.NewStringFor(k, str, expireAt)
		}
		if err := fn(db, e.Key(), e); err != nil {
			return info, fnError{err}
		}
		info.Keys++
		expireAt = 0
	}
}

// readOldFunction reads a FUNCTION record of Redis 7.0's release
// candidates (name, engine, optional description, code) and returns the
// code in the released format, as Redis translates it.
func (d *decoder) readOldFunction() (string, error) {
	name, err := d.readString(nil)
	if err != nil {
		return "", err
	}
	engine, err := d.readString(nil)
	if err != nil {
		return "", err
	}
	hasDesc, err := d.readCount()
	if err != nil {
		return "", err
	}
	if hasDesc != 0 {
		if _, err := d.readString(nil); err != nil {
			return "", err
		}
	}
	code, err := d.readString(nil)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("#!%s name=%s\n%s", engine, name, code), nil
}

// atoi parses the version digits as C's atoi does: leading blanks, an
// optional sign, then digits up to the first other character.
func atoi(b []byte) int {
	i := 0
	for i < len(b) && (b[i] == ' ' || (b[i] >= '\t' && b[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	n := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		n = n*10 + int(b[i]-'0')
	}
	if neg {
		return -n
	}
	return n
}
