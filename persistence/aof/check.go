package aof

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// CheckOptions wires Check to its surroundings.
type CheckOptions struct {
	Stdout io.Writer // the report (redis-check-aof prints everything on stdout)
	Stdin  io.Reader // the answer to --fix's "Continue? [y/N]:" prompt
	// CheckRDB checks the RDB payload at the start of r (a .base.rdb file or
	// the preamble of an old-style AOF), printing redis-check-rdb's report
	// to out, and returns the payload's size when it is sane. As
	// LoadOptions.LoadRDB, it may read ahead; the AOF tail is checked from
	// where it says the payload ends.
	CheckRDB func(r io.Reader, path string, out io.Writer) (size int64, err error)
}

// Check results of one file (AOF_CHECK_*).
const (
	checkOK = iota
	checkEmpty
	checkTruncated
	checkTimestampTruncated
)

// exitCode unwinds a check the way redis-check-aof's exit() ends it.
type exitCode int

// Check is redis-check-aof 7.0: args are the command line (args[0] the
// program name): [--fix|--truncate-to-timestamp <ts>] <file.manifest|file.aof>.
// It prints the same report with the same wording and returns the exit
// status (0: valid or fixed, 1: not valid, aborted or failed).
func Check(args []string, opt CheckOptions) (code int) {
	c := &checker{opt: opt, line: 1}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(exitCode)
			if !ok {
				panic(r)
			}
			code = int(e)
		}
	}()
	c.main(args)
	return 0
}

type checker struct {
	opt          CheckOptions
	errMsg       string // redis-check-aof's static error buffer
	epos         int64
	line         int64 // never reset between files, as in Redis
	toTimestamp  int64
	stdinScanner *bufio.Reader
}

func (c *checker) printf(format string, args ...any) {
	fmt.Fprintf(c.opt.Stdout, format, args...)
}

func (c *checker) exit(code int) { panic(exitCode(code)) }

// setError is the ERROR macro: the message prefixed with the offset.
func (c *checker) setError(format string, args ...any) {
	c.errMsg = fmt.Sprintf("0x%16x: %s", c.epos, fmt.Sprintf(format, args...))
}

// strerror renders an error as C's strerror does where it can.
func strerror(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		s := errno.Error()
		if s != "" {
			return strings.ToUpper(s[:1]) + s[1:]
		}
	}
	return err.Error()
}

func (c *checker) main(args []string) {
	prog := "redis-check-aof"
	if len(args) > 0 {
		prog = args[0]
	}
	usage := func() {
		c.printf("Usage: %s [--fix|--truncate-to-timestamp $timestamp] <file.manifest|file.aof>\n", prog)
		c.exit(1)
	}
	var path string
	fix := false
	switch len(args) {
	case 2:
		path = args[1]
	case 3:
		if args[1] != "--fix" {
			usage()
		}
		path, fix = args[2], true
	case 4:
		if args[1] != "--truncate-to-timestamp" {
			usage()
		}
		v, n := strtol(args[2], 64)
		if n != len(args[2]) || (n == 0 && args[2] != "") || overflows(args[2], n) {
			c.printf("Invalid timestamp, aborting...\n")
			c.exit(1)
		}
		c.toTimestamp = v
		path = args[3]
	default:
		usage()
	}
	dir := filepath.Dir(path)
	switch {
	case c.fileIsManifest(path):
		c.checkMultiPart(dir, path, fix)
	case c.fileIsRDB(path):
		c.checkOldStyle(path, fix, true)
	default:
		c.checkOldStyle(path, fix, false)
	}
}

// overflows reports whether strtol clamped (errno ERANGE).
func overflows(s string, n int) bool {
	digits := strings.TrimLeft(strings.TrimLeft(s[:n], " \t\n\v\f\r"), "+-")
	_, err := strconv.ParseInt(strings.TrimLeft(digits, "0")+"0", 10, 64)
	if err == nil {
		return false
	}
	return len(strings.TrimLeft(digits, "0")) > 0
}

func (c *checker) openOrExit(path string) *os.File {
	f, err := os.Open(path)
	if err != nil {
		c.printf("Cannot open file %s: %s\n", path, strerror(err))
		c.exit(1)
	}
	return f
}

func (c *checker) fileIsManifest(path string) bool {
	f := c.openOrExit(path)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		c.printf("Cannot stat file: %s\n", path)
		c.exit(1)
	}
	if fi.Size() == 0 {
		return false
	}
	r := bufio.NewReader(f)
	isManifest := false
	for {
		line, err := fgets(r, manifestMaxLine+1)
		if err != nil {
			if err == io.EOF {
				break
			}
			c.printf("Cannot read file: %s\n", path)
			c.exit(1)
		}
		if line[0] == '#' {
			continue
		}
		if strings.HasPrefix(string(line), "file") {
			isManifest = true
		}
	}
	return isManifest
}

func (c *checker) fileIsRDB(path string) bool {
	f := c.openOrExit(path)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		c.printf("Cannot stat file: %s\n", path)
		c.exit(1)
	}
	if fi.Size() < 8 {
		return false
	}
	var sig [5]byte
	_, err = io.ReadFull(f, sig[:])
	return err == nil && string(sig[:]) == "REDIS"
}

func (c *checker) printResult(ret int, name, kind string) {
	switch ret {
	case checkOK:
		c.printf("%s %s is valid\n", kind, name)
	case checkEmpty:
		c.printf("%s %s is empty\n", kind, name)
	case checkTimestampTruncated:
		c.printf("Successfully truncated AOF %s to timestamp %d\n", name, c.toTimestamp)
	case checkTruncated:
		c.printf("Successfully truncated AOF %s\n", name)
	}
}

func (c *checker) checkOldStyle(path string, fix, preamble bool) {
	c.printf("Start checking Old-Style AOF\n")
	ret := c.checkSingle(path, path, true, fix, preamble)
	c.printResult(ret, path, "AOF")
}

func (c *checker) checkMultiPart(dir, manifestPath string, fix bool) {
	c.printf("Start checking Multi Part AOF\n")
	m, err := ReadManifest(manifestPath)
	if err != nil {
		var me *ManifestError
		if errors.As(err, &me) {
			c.printf("\n*** FATAL AOF MANIFEST FILE ERROR ***\n\n")
			if me.Line > 0 {
				c.printf("Reading the manifest file, at line %d\n\n", me.Line)
				c.printf(">>> '%s'\n\n", me.Content)
			}
			c.printf("%s\n\n", me.Msg)
		} else {
			c.printf("Fatal error: can't open the AOF manifest file %s for reading: %s\n", manifestPath, strerror(err))
		}
		c.exit(1)
	}
	total := len(m.Incr)
	if m.Base != nil {
		total++
	}
	num := 0
	if m.Base != nil {
		num++
		path := filepath.Join(dir, m.Base.Name)
		preamble := c.fileIsRDB(path)
		format := "RESP"
		if preamble {
			format = "RDB"
		}
		c.printf("Start to check BASE AOF (%s format).\n", format)
		ret := c.checkSingle(m.Base.Name, path, num == total, fix, preamble)
		c.printResult(ret, m.Base.Name, "BASE AOF")
	}
	if len(m.Incr) > 0 {
		c.printf("Start to check INCR files.\n")
		for _, fi := range m.Incr {
			num++
			ret := c.checkSingle(fi.Name, filepath.Join(dir, fi.Name), num == total, fix, false)
			c.printResult(ret, fi.Name, "INCR AOF")
		}
	}
	c.printf("All AOF files and manifest are valid\n")
}

// checkFile is the FILE* the C tool reads through: a buffer with the
// offset (ftello) and the end-of-file flag (feof).
type checkFile struct {
	r    *fileReader
	f    *os.File
	size int64
}

// checkSingle is checkSingleAof: the same parse, report and --fix prompt.
func (c *checker) checkSingle(name, path string, last, fix, preamble bool) int {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		c.printf("Cannot open file %s: %s, aborting...\n", path, strerror(err))
		c.exit(1)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		c.printf("Cannot stat file: %s, aborting...\n", name)
		c.exit(1)
	}
	size := fi.Size()
	if size == 0 {
		return checkEmpty
	}
	cf := &checkFile{r: newFileReader(f, size), f: f, size: size}
	if preamble {
		err := errors.New("no RDB checker")
		if c.opt.CheckRDB != nil {
			err = cf.r.handOff(func(r io.Reader) (int64, error) { return c.opt.CheckRDB(r, path, c.opt.Stdout) })
		}
		if err != nil {
			c.printf("RDB preamble of AOF file is not sane, aborting.\n")
			c.exit(1)
		}
		c.printf("RDB preamble is OK, proceeding with AOF tail...\n")
	}
	var pos int64
	multi := 0
	for {
		if multi == 0 {
			pos = cf.r.off
		}
		b, err := cf.r.br.Peek(1)
		if err != nil {
			if err == io.EOF {
				cf.r.eof = true
				break
			}
			c.printf("Failed to read from AOF %s, aborting...\n", name)
			c.exit(1)
		}
		if b[0] == '#' {
			if !c.processAnnotation(cf, path, last) {
				return checkTimestampTruncated
			}
		} else if b[0] == '*' {
			if !c.processRESP(cf, path, &multi) {
				break
			}
		} else {
			c.printf("AOF %s format error\n", name)
			break
		}
	}
	if cf.r.eof && multi != 0 && c.errMsg == "" {
		c.setError("Reached EOF before reading EXEC for MULTI")
	}
	if c.errMsg != "" {
		c.printf("%s\n", c.errMsg)
	}
	diff := size - pos
	if diff == 0 && c.toTimestamp != 0 {
		c.printf("Truncate nothing in AOF %s to timestamp %d\n", name, c.toTimestamp)
		return checkOK
	}
	c.printf("AOF analyzed: filename=%s, size=%d, ok_up_to=%d, ok_up_to_line=%d, diff=%d\n",
		name, size, pos, c.line, diff)
	if diff > 0 {
		if !fix {
			c.printf("AOF %s is not valid. Use the --fix option to try fixing it.\n", name)
			c.exit(1)
		}
		if !last {
			c.printf("Failed to truncate AOF %s because it is not the last file\n", name)
			c.exit(1)
		}
		c.printf("This will shrink the AOF %s from %d bytes, with %d bytes, to %d bytes\n", name, size, diff, pos)
		c.printf("Continue? [y/N]: ")
		if !c.confirmed() {
			c.printf("Aborting...\n")
			c.exit(1)
		}
		if err := f.Truncate(pos); err != nil {
			c.printf("Failed to truncate AOF %s\n", name)
			c.exit(1)
		}
		return checkTruncated
	}
	return checkOK
}

// confirmed reads the prompt's answer as fgets(buf, 2, stdin): one byte.
func (c *checker) confirmed() bool {
	if c.opt.Stdin == nil {
		return false
	}
	if c.stdinScanner == nil {
		c.stdinScanner = bufio.NewReader(c.opt.Stdin)
	}
	b, err := c.stdinScanner.ReadByte()
	return err == nil && (b == 'y' || b == 'Y')
}

// processAnnotation reads a "#..." line; with --truncate-to-timestamp it
// truncates the file at the first "#TS:" annotation past the timestamp and
// returns false.
func (c *checker) processAnnotation(cf *checkFile, path string, last bool) bool {
	c.epos = cf.r.off
	buf := cf.r.fgets(annotationLineMax)
	if buf == nil {
		c.printf("Failed to read annotations from AOF %s, aborting...\n", path)
		c.exit(1)
	}
	s := cString(buf)
	if c.toTimestamp == 0 || !strings.HasPrefix(s, "#TS:") {
		return true
	}
	ts, n := strtol(s[4:], 64)
	if overflows(s[4:], n) || !strings.HasPrefix(s[4+n:], "\r") {
		c.printf("Invalid timestamp annotation\n")
		c.exit(1)
	}
	if ts <= c.toTimestamp {
		return true
	}
	if c.epos == 0 {
		c.printf("AOF %s has nothing before timestamp %d, aborting...\n", path, c.toTimestamp)
		c.exit(1)
	}
	if !last {
		c.printf("Failed to truncate AOF %s to timestamp %d to offset %d because it is not the last file.\n",
			path, c.toTimestamp, c.epos)
		c.printf("If you insist, please delete all files after this file according to the manifest " +
			"file and delete the corresponding records in manifest file manually. Then re-run redis-check-aof.\n")
		c.exit(1)
	}
	if err := cf.f.Truncate(c.epos); err != nil {
		c.printf("Failed to truncate AOF %s to timestamp %d\n", path, c.toTimestamp)
		c.exit(1)
	}
	return false
}

// hexByte prints a byte as printf("%02x") prints a (signed) char.
func hexByte(b byte) string {
	if b >= 0x80 {
		return fmt.Sprintf("ffffff%02x", b)
	}
	return fmt.Sprintf("%02x", b)
}

// consumeNewline checks that b starts with "\r\n" (compared as C strings).
func (c *checker) consumeNewline(b []byte) bool {
	var b0, b1 byte
	if len(b) > 0 {
		b0 = b[0]
	}
	if len(b) > 1 && b0 != 0 {
		b1 = b[1]
	}
	if b0 != '\r' || b1 != '\n' {
		c.setError("Expected \\r\\n, got: %s%s", hexByte(b0), hexByte(b1))
		return false
	}
	c.line++
	return true
}

// readLong reads a "<prefix><number>\r\n" line.
func (c *checker) readLong(cf *checkFile, prefix byte) (int64, bool) {
	c.epos = cf.r.off
	buf := cf.r.fgets(128)
	if buf == nil {
		return 0, false
	}
	if buf[0] != prefix {
		c.setError("Expected prefix '%c', got: '%c'", prefix, buf[0])
		return 0, false
	}
	s := cString(buf[1:])
	v, n := strtol(s, 64)
	return v, c.consumeNewline([]byte(s[n:]))
}

// readString reads a "$<len>\r\n<data>\r\n" argument, returning the start of
// its data (enough to recognize MULTI and EXEC) without allocating len.
func (c *checker) readString(cf *checkFile) (string, bool) {
	n, ok := c.readLong(cf, '$')
	if !ok {
		return "", false
	}
	if n < 0 || n > (1<<63-1)-2 {
		c.setError("Expected to read string of %d bytes, which is not in the suitable range", n)
		return "", false
	}
	total := n + 2
	c.epos = cf.r.off
	avail := cf.size - cf.r.off
	if avail < 0 {
		avail = 0
	}
	if total > avail {
		got, _ := cf.r.br.Discard(int(avail))
		cf.r.off += int64(got)
		cf.r.eof = true
		c.setError("Expected to read %d bytes, got %d bytes", total, got)
		return "", false
	}
	headLen := min(n, 8)
	head, ok := cf.r.readN(headLen)
	if !ok {
		c.setError("Expected to read %d bytes, got %d bytes", total, 0)
		return "", false
	}
	if rest := n - headLen; rest > 0 {
		got, err := cf.r.br.Discard(int(rest))
		cf.r.off += int64(got)
		if err != nil {
			cf.r.eof = true
			c.setError("Expected to read %d bytes, got %d bytes", total, headLen+int64(got))
			return "", false
		}
	}
	crlf, ok := cf.r.readN(2)
	if !ok {
		c.setError("Expected to read %d bytes, got %d bytes", total, n)
		return "", false
	}
	if !c.consumeNewline(crlf) {
		return "", false
	}
	return cString(head), true
}

// processRESP reads one command, tracking MULTI/EXEC nesting.
func (c *checker) processRESP(cf *checkFile, path string, multi *int) bool {
	argc, ok := c.readLong(cf, '*')
	if !ok {
		return false
	}
	for i := int64(0); i < argc; i++ {
		s, ok := c.readString(cf)
		if !ok {
			return false
		}
		if i != 0 {
			continue
		}
		if strings.EqualFold(s, "multi") {
			*multi++
			if *multi > 1 {
				c.setError("Unexpected MULTI in AOF %s", path)
				return false
			}
		} else if strings.EqualFold(s, "exec") {
			*multi--
			if *multi != 0 {
				c.setError("Unexpected EXEC in AOF %s", path)
				return false
			}
		}
	}
	return true
}
