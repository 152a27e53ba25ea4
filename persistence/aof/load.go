package aof

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// annotationLineMax is AOF_ANNOTATION_LINE_MAX_LEN, the line buffer the
// loader reads "*<argc>", "$<len>" and "#..." lines with.
const annotationLineMax = 1024

// ErrNotExist is returned by Load when there is nothing to load: no AOF
// directory, no manifest, or a manifest without base and incremental files.
// The server then starts empty (or, with an old appendonly.aof present,
// migrates it; see LoadFile).
var ErrNotExist = errors.New("aof: no append only file to load")

// ErrUnknownCommand may be wrapped by LoadOptions.Exec's error for a command
// the server does not know; loading then fails with Redis's message.
var ErrUnknownCommand = errors.New("unknown command")

// LoadOptions configures loading.
type LoadOptions struct {
	// LoadTruncated is aof-load-truncated: a last file cut in the middle of
	// a command is loaded up to the last whole command and truncated there.
	LoadTruncated bool
	// LoadRDB loads an RDB payload: a .base.rdb file or the preamble of an
	// old-style AOF. r is the file, positioned at the "REDIS" magic; LoadRDB
	// may read ahead (the AOF tail is read from where it says the payload
	// ends) and returns the payload's size, its EOF opcode and checksum
	// included.
	LoadRDB func(r io.Reader) (size int64, err error)
	// Exec replays one command. SELECT is passed like any command. The
	// commands of a MULTI/EXEC block are passed, MULTI and EXEC included,
	// only once the EXEC has been read, so a block cut by the end of the
	// file is never replayed. argv is the callee's to keep.
	Exec func(argv [][]byte) error
	// Logf receives Redis's log lines (nil: discarded).
	Logf func(format string, args ...any)
}

func (o *LoadOptions) logf(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}

// Stats describes what a load read.
type Stats struct {
	Files     int   // files loaded (base and incremental)
	Commands  int64 // commands passed to Exec
	Size      int64 // bytes of the base and incremental files (aof_current_size)
	BaseSize  int64 // bytes of the base file (aof_rewrite_base_size)
	Truncated bool  // the last file was cut and truncated (aof-load-truncated)
}

// loadStatus mirrors loadSingleAppendOnlyFile's results.
type loadStatus int

const (
	loadOK loadStatus = iota
	loadEmpty
	loadTruncated
	loadFailed
)

// Load reads the manifest dir/manifestName and replays its base and
// incremental files in order (loadAppendOnlyFiles). It returns ErrNotExist
// when there is nothing to load.
func Load(dir, manifestName string, opt LoadOptions) (Stats, error) {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return Stats{}, ErrNotExist
	}
	m, err := ReadManifest(filepath.Join(dir, manifestName))
	if errors.Is(err, os.ErrNotExist) {
		return Stats{}, ErrNotExist
	}
	if err != nil {
		return Stats{}, err
	}
	return LoadManifest(dir, m, opt)
}

// LoadManifest replays the files m lists in dir. A file the manifest lists
// but the directory lacks is an error; only the last file may be truncated.
func LoadManifest(dir string, m *Manifest, opt LoadOptions) (Stats, error) {
	var st Stats
	if m.Empty() {
		return st, ErrNotExist
	}
	var files []FileInfo
	if m.Base != nil {
		files = append(files, *m.Base)
	}
	files = append(files, m.Incr...)
	for _, fi := range files {
		info, err := os.Stat(filepath.Join(dir, fi.Name))
		if err != nil {
			opt.logf("Unable to obtain the AOF file %s length. stat: %v", fi.Name, err)
			return st, fmt.Errorf("the AOF file %s listed in the manifest: %w", fi.Name, err)
		}
		st.Size += info.Size()
		if fi.Type == TypeBase {
			st.BaseSize = info.Size()
		}
	}
	if st.Size == 0 {
		return st, nil
	}
	for i, fi := range files {
		last := i == len(files)-1
		start := time.Now()
		status, n, err := loadOne(filepath.Join(dir, fi.Name), fi.Name, false, opt)
		st.Commands += n
		if err != nil {
			return st, err
		}
		st.Files++
		kind := "incr"
		if fi.Type == TypeBase {
			kind = "base"
		}
		if status == loadTruncated && !last {
			opt.logf("Fatal error: the truncated file is not the last file")
			return st, fmt.Errorf("AOF file %s is truncated but is not the last file", fi.Name)
		}
		if status == loadOK || status == loadTruncated {
			opt.logf("DB loaded from %s file %s: %.3f seconds", kind, fi.Name, time.Since(start).Seconds())
		}
		if status == loadTruncated {
			st.Truncated = true
		}
	}
	return st, nil
}

// LoadFile replays a single Redis 6 style append only file (commands, or an
// RDB preamble followed by commands).
func LoadFile(path string, opt LoadOptions) (Stats, error) {
	var st Stats
	info, err := os.Stat(path)
	if err != nil {
		return st, err
	}
	st.Size, st.BaseSize = info.Size(), info.Size()
	status, n, err := loadOne(path, filepath.Base(path), true, opt)
	st.Commands = n
	if err != nil {
		return st, err
	}
	if status != loadEmpty {
		st.Files = 1
	}
	st.Truncated = status == loadTruncated
	return st, nil
}

// loadOne is loadSingleAppendOnlyFile: it replays one file and, when the
// file is cut and aof-load-truncated allows it, truncates it after the last
// whole command.
func loadOne(path, name string, oldStyle bool, opt LoadOptions) (loadStatus, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			opt.logf("The append log file %s doesn't exist: %v", name, err)
		} else {
			opt.logf("Fatal error: can't open the append log file %s for reading: %v", name, err)
		}
		return loadFailed, 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return loadFailed, 0, err
	}
	if info.Size() == 0 {
		return loadEmpty, 0, nil
	}
	res := replay(newFileReader(f, info.Size()), name, oldStyle, opt)
	if res.status != loadTruncated {
		return res.status, res.commands, res.err
	}
	if opt.LoadTruncated {
		opt.logf("!!! Warning: short read while loading the AOF file %s!!!", name)
		opt.logf("!!! Truncating the AOF %s at offset %d !!!", name, res.validUpTo)
		if err := os.Truncate(path, res.validUpTo); err != nil {
			opt.logf("Error truncating the AOF file %s: %v", name, err)
		} else {
			opt.logf("AOF %s loaded anyway because aof-load-truncated is enabled", name)
			return loadTruncated, res.commands, nil
		}
	}
	msg := fmt.Sprintf("Unexpected end of file reading the append only file %s. You can: "+
		"1) Make a backup of your AOF file, then use ./zredis-check-aof --fix <filename.manifest>. "+
		"2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server.", name)
	opt.logf("%s", msg)
	return loadFailed, res.commands, errors.New(msg)
}

// replayResult is what replay found: a status, the offset after the last
// command that was replayed (where a truncated file is cut), how many
// commands it passed to Exec, and the error of a failed load.
type replayResult struct {
	status    loadStatus
	validUpTo int64
	commands  int64
	err       error
}

// replay parses an AOF stream with loadSingleAppendOnlyFile's rules:
// "#" lines are annotations, every command is "*<argc>" then argc
// "$<len>" arguments each followed by two bytes (CRLF, not verified, as in
// Redis). The end of the input inside a command, or inside a MULTI block,
// is a truncation; anything else unexpected is a format error.
func replay(r *fileReader, name string, oldStyle bool, opt LoadOptions) replayResult {
	var res replayResult
	fmtErr := func(at int64) replayResult {
		msg := fmt.Sprintf("Bad file format reading the append only file %s at offset %d: "+
			"make a backup of your AOF file, then use ./zredis-check-aof --fix <filename.manifest>", name, at)
		opt.logf("%s", msg)
		res.status, res.err = loadFailed, errors.New(msg)
		return res
	}
	readErr := func() replayResult {
		if r.err != nil {
			opt.logf("Unrecoverable error reading the append only file %s: %v", name, r.err)
			res.status = loadFailed
			res.err = fmt.Errorf("unrecoverable error reading the append only file %s: %w", name, r.err)
			return res
		}
		res.status = loadTruncated
		return res
	}

	if magic, err := r.br.Peek(5); err == nil && string(magic) == "REDIS" {
		if oldStyle {
			opt.logf("Reading RDB preamble from AOF file...")
		} else {
			opt.logf("Reading RDB base file on AOF loading...")
		}
		var err error
		if opt.LoadRDB == nil {
			err = errors.New("no RDB loader")
		} else {
			err = r.handOff(opt.LoadRDB)
		}
		if err != nil {
			if oldStyle {
				opt.logf("Error reading the RDB preamble of the AOF file %s, AOF loading aborted", name)
			} else {
				opt.logf("Error reading the RDB base file %s, AOF loading aborted", name)
			}
			res.status = loadFailed
			res.err = fmt.Errorf("error reading the RDB part of the AOF file %s: %w", name, err)
			return res
		}
		// Unlike Redis (which keeps 0 here), a cut in the first command of
		// the tail truncates after the RDB payload, not to an empty file.
		res.validUpTo = r.off
		if oldStyle {
			opt.logf("Reading the remaining AOF tail...")
		}
	}

	exec := func(argv [][]byte) error {
		res.commands++
		if opt.Exec == nil {
			return nil
		}
		if err := opt.Exec(argv); err != nil {
			if errors.Is(err, ErrUnknownCommand) {
				opt.logf("Unknown command '%s' reading the append only file %s", argv[0], name)
			} else {
				opt.logf("Error replaying '%s' reading the append only file %s: %v", argv[0], name, err)
			}
			return fmt.Errorf("replaying %q from the append only file %s: %w", argv[0], name, err)
		}
		return nil
	}

	var queued [][][]byte // a MULTI block, replayed at its EXEC
	inMulti := false
	var validBeforeMulti int64
	for {
		start := r.off
		line := r.fgets(annotationLineMax)
		if line == nil {
			if r.err != nil {
				return readErr()
			}
			break
		}
		if line[0] == '#' {
			continue
		}
		if line[0] != '*' {
			return fmtErr(start)
		}
		if len(line) == 1 {
			return truncatedIn(readErr(), inMulti, validBeforeMulti)
		}
		v, _ := strtol(cString(line[1:]), 64)
		argc := int64(int32(v)) // atoi: strtol's long truncated to int
		if argc < 1 {
			return fmtErr(start)
		}
		argv := make([][]byte, 0, min(argc, 64))
		for j := int64(0); j < argc; j++ {
			at := r.off
			l := r.fgets(annotationLineMax)
			if l == nil {
				return truncatedIn(readErr(), inMulti, validBeforeMulti)
			}
			if l[0] != '$' {
				return fmtErr(at)
			}
			n, _ := strtol(cString(l[1:]), 64)
			if n < 0 {
				// Redis would try to allocate ~2^64 bytes; refuse instead.
				return fmtErr(at)
			}
			data, ok := r.readN(n)
			if !ok {
				return truncatedIn(readErr(), inMulti, validBeforeMulti)
			}
			if _, ok := r.readN(2); !ok {
				return truncatedIn(readErr(), inMulti, validBeforeMulti)
			}
			argv = append(argv, data)
		}
		isMulti := strings.EqualFold(string(argv[0]), "multi")
		isExec := strings.EqualFold(string(argv[0]), "exec")
		if isMulti && !inMulti {
			// A MULTI inside a block is queued like any command (as in
			// Redis, where EXEC is the only command not queued); the block
			// still starts at the first one.
			validBeforeMulti = res.validUpTo
		}
		switch {
		case inMulti && !isExec:
			queued = append(queued, argv)
		case isMulti:
			inMulti = true
			queued = append(queued[:0], argv)
		case inMulti && isExec:
			inMulti = false
			for _, q := range append(queued, argv) {
				if err := exec(q); err != nil {
					res.status, res.err = loadFailed, err
					return res
				}
			}
			queued = queued[:0]
		default:
			if err := exec(argv); err != nil {
				res.status, res.err = loadFailed, err
				return res
			}
		}
		res.validUpTo = r.off
	}
	if inMulti {
		opt.logf("Revert incomplete MULTI/EXEC transaction in AOF file %s", name)
		res.validUpTo = validBeforeMulti
		res.status = loadTruncated
		return res
	}
	res.status = loadOK
	return res
}

// truncatedIn moves a truncation inside a MULTI block back to before its
// MULTI, so the truncated file ends with whole transactions only (Redis
// cuts after the last queued command and reverts the block at the next
// load; the data loaded is the same).
func truncatedIn(res replayResult, inMulti bool, validBeforeMulti int64) replayResult {
	if res.status == loadTruncated && inMulti {
		res.validUpTo = validBeforeMulti
	}
	return res
}

// cString is the C string view of a line buffer: up to its first NUL.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
