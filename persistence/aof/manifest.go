package aof

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/zredis/zredis/sds"
)

// FileType is a manifest entry's type letter.
type FileType byte

// The three file types of aof.c (AOF_FILE_TYPE_BASE, _HIST, _INCR).
const (
	TypeBase    FileType = 'b'
	TypeHistory FileType = 'h'
	TypeIncr    FileType = 'i'
)

// FileInfo is one manifest line (aof.c's aofInfo).
type FileInfo struct {
	Name string
	Seq  int64
	Type FileType
}

// Manifest lists the files of an AOF directory (aof.c's aofManifest). Base
// is loaded first, then Incr in order; History files are leftovers of
// finished rewrites, never loaded, deleted after the rewrite.
type Manifest struct {
	Base    *FileInfo
	History []FileInfo
	Incr    []FileInfo
	// BaseSeq and IncrSeq are the last sequence numbers used, so the next
	// base or incremental file gets the following one.
	BaseSeq int64
	IncrSeq int64
}

// manifestMaxLine is MANIFEST_MAX_LINE: longer lines are an error.
const manifestMaxLine = 1024

// ManifestError is a manifest Redis would refuse, with its message
// ("Invalid AOF manifest file format", ...), and the line where it was found.
type ManifestError struct {
	Path    string
	Line    int    // 0 when the error is not about one line
	Content string // the trimmed line, as Redis logs it
	Msg     string
}

func (e *ManifestError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s: line %d '%s': %s", e.Path, e.Line, e.Content, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Msg)
}

// ReadManifest reads and validates a manifest file with the rules of
// aofLoadManifestFromFile: comment lines start with '#', every other line
// holds "file <name> seq <n> type <b|h|i>" pairs (extra pairs are ignored
// for forward compatibility), at most one base, incremental sequence
// numbers strictly increasing, file names without a directory part.
func ReadManifest(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseManifest(path, data)
}

// fgets reads like C's fgets(buf, size, fp): up to size-1 bytes, or through
// the first '\n'. It returns nil at the end of input.
func fgets(r *bufio.Reader, size int) ([]byte, error) {
	var line []byte
	for len(line) < size-1 {
		c, err := r.ReadByte()
		if err != nil {
			if err == io.EOF && len(line) > 0 {
				return line, nil
			}
			return nil, err
		}
		line = append(line, c)
		if c == '\n' {
			break
		}
	}
	return line, nil
}

func parseManifest(path string, data []byte) (*Manifest, error) {
	m := &Manifest{}
	r := bufio.NewReader(bytes.NewReader(data))
	linenum := 0
	var maxSeq int64
	fail := func(content, msg string) (*Manifest, error) {
		line := linenum
		if content == "" && msg == "Found an empty AOF manifest" {
			line = 0
		}
		return nil, &ManifestError{Path: path, Line: line, Content: content, Msg: msg}
	}
	for {
		buf, err := fgets(r, manifestMaxLine+1)
		if err != nil {
			if err != io.EOF {
				return nil, err
			}
			if linenum == 0 {
				return fail("", "Found an empty AOF manifest")
			}
			break
		}
		linenum++
		if buf[0] == '#' {
			continue
		}
		if bytes.IndexByte(buf, '\n') < 0 {
			return fail("", "The AOF manifest file contains too long line")
		}
		// C strings end at the first NUL.
		if i := bytes.IndexByte(buf, 0); i >= 0 {
			buf = buf[:i]
		}
		line := strings.Trim(string(buf), " \t\r\n")
		if line == "" {
			return fail(line, "Invalid AOF manifest file format")
		}
		argv, err := splitArgs(line)
		if err != nil || len(argv) < 6 || len(argv)%2 != 0 {
			return fail(line, "Invalid AOF manifest file format")
		}
		var fi FileInfo
		haveName := false
		for i := 0; i < len(argv); i += 2 {
			switch strings.ToLower(argv[i]) {
			case "file":
				fi.Name = argv[i+1]
				haveName = true
				if strings.ContainsAny(fi.Name, "/\\") {
					return fail(line, "File can't be a path, just a filename")
				}
			case "seq":
				fi.Seq = atoll(argv[i+1])
			case "type":
				if argv[i+1] != "" {
					fi.Type = FileType(argv[i+1][0])
				}
			}
		}
		// sds strings are C strings to strlen-style checks: an empty name is
		// still a name, as in Redis (sdsnew("") is not NULL).
		if !haveName || fi.Seq == 0 || fi.Type == 0 {
			return fail(line, "Invalid AOF manifest file format")
		}
		switch fi.Type {
		case TypeBase:
			if m.Base != nil {
				return fail(line, "Found duplicate base file information")
			}
			b := fi
			m.Base = &b
			m.BaseSeq = fi.Seq
		case TypeHistory:
			m.History = append(m.History, fi)
		case TypeIncr:
			if fi.Seq <= maxSeq {
				return fail(line, "Found a non-monotonic sequence number")
			}
			m.Incr = append(m.Incr, fi)
			m.IncrSeq = fi.Seq
			maxSeq = fi.Seq
		default:
			return fail(line, "Unknown AOF file type")
		}
	}
	return m, nil
}

// atoll is C's atoll (strtoll base 10 without error reporting, clamped).
func atoll(s string) int64 {
	v, _ := strtol(s, 64)
	return v
}

// strtol parses like C's strtol(s, &end, 10) for a long of the given bit
// size: leading white space, an optional sign, digits; it clamps on
// overflow. It returns the value and how many bytes were consumed (0 when
// no digits were found, as strtol then sets end to s).
func strtol(s string, bitSize int) (int64, int) {
	i := 0
	for i < len(s) && sds.IsSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
	max := uint64(1)<<(bitSize-1) - 1
	limit := max
	if neg {
		limit = max + 1
	}
	var v uint64
	overflow := false
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		d := uint64(s[i] - '0')
		if !overflow {
			if v > (limit-d)/10 {
				overflow = true
			} else {
				v = v*10 + d
			}
		}
		i++
	}
	if i == start {
		return 0, 0
	}
	if overflow {
		v = limit
	}
	if neg {
		return -int64(v-1) - 1, i
	}
	return int64(v), i
}

// String is the manifest's text: the base first, then history, then
// incremental files, one "file <name> seq <n> type <t>" line each, names
// quoted as sdscatrepr does when they need it.
func (m *Manifest) String() string {
	var b strings.Builder
	line := func(fi FileInfo) {
		name := fi.Name
		// Empty names and names with a single quote are quoted too: Redis
		// writes them bare, in a line it cannot read back.
		if name == "" || sds.NeedsRepr(name) || strings.ContainsRune(name, '\'') {
			name = repr(name)
		}
		fmt.Fprintf(&b, "file %s seq %d type %c\n", name, fi.Seq, fi.Type)
	}
	if m.Base != nil {
		line(*m.Base)
	}
	for _, fi := range m.History {
		line(fi)
	}
	for _, fi := range m.Incr {
		line(fi)
	}
	return b.String()
}

// Clone returns a deep copy, to modify before persisting it so that a
// failure leaves the current manifest untouched (as aofManifestDup).
func (m *Manifest) Clone() *Manifest {
	c := &Manifest{BaseSeq: m.BaseSeq, IncrSeq: m.IncrSeq}
	if m.Base != nil {
		b := *m.Base
		c.Base = &b
	}
	c.History = append([]FileInfo(nil), m.History...)
	c.Incr = append([]FileInfo(nil), m.Incr...)
	return c
}

// Empty reports whether the manifest lists no base and no incremental file.
func (m *Manifest) Empty() bool { return m.Base == nil && len(m.Incr) == 0 }

// addIncr appends the next incremental file and returns its name.
func (m *Manifest) addIncr(prefix string) string {
	m.IncrSeq++
	name := IncrName(prefix, m.IncrSeq)
	m.Incr = append(m.Incr, FileInfo{Name: name, Seq: m.IncrSeq, Type: TypeIncr})
	return name
}

// newBase names the next base file and turns the current one into history
// (getNewBaseFileNameAndMarkPreAsHistory).
func (m *Manifest) newBase(prefix string, rdb bool) string {
	if m.Base != nil {
		old := *m.Base
		old.Type = TypeHistory
		m.History = append([]FileInfo{old}, m.History...)
	}
	m.BaseSeq++
	name := BaseName(prefix, m.BaseSeq, rdb)
	m.Base = &FileInfo{Name: name, Seq: m.BaseSeq, Type: TypeBase}
	return name
}

// incrToHistory turns every incremental file but the last `keep` into
// history (markRewrittenIncrAofAsHistory).
func (m *Manifest) incrToHistory(keep int) {
	if len(m.Incr) <= keep {
		return
	}
	cut := len(m.Incr) - keep
	for i := cut - 1; i >= 0; i-- {
		h := m.Incr[i]
		h.Type = TypeHistory
		m.History = append([]FileInfo{h}, m.History...)
	}
	m.Incr = append([]FileInfo(nil), m.Incr[cut:]...)
}

// Write persists the manifest as dir/name atomically, as
// writeAofManifestFile does: it writes temp-<name>, fsyncs it, renames it
// over name and fsyncs the directory, so a crash leaves either the old or
// the new manifest, and the files the new one names (created in dir
// before) are durable entries of the directory.
func (m *Manifest) Write(dir, name string) error {
	return writeFileAtomic(dir, name, []byte(m.String()))
}

// writeFileAtomic writes dir/name through dir/temp-name (see Manifest.Write).
func writeFileAtomic(dir, name string, data []byte) error {
	tmp := filepath.Join(dir, tempPrefix+name)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_TRUNC|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("can't open the AOF manifest file %s: %w", tempPrefix+name, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("error trying to write the temporary AOF manifest file %s: %w", tempPrefix+name, err)
	}
	if err := fdatasync(f); err != nil {
		f.Close()
		return fmt.Errorf("fail to fsync the temp AOF file %s: %w", tempPrefix+name, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("error trying to rename the temporary AOF manifest file %s into %s: %w", tempPrefix+name, name, err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("fail to fsync AOF directory %s: %w", dir, err)
	}
	return nil
}
