package server

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Log levels, as redis.conf's loglevel names them.
const (
	LevelDebug = iota
	LevelVerbose
	LevelNotice
	LevelWarning
)

var levelMarks = [...]byte{'.', '-', '*', '#'}

// Logger writes log lines in Redis's format
// ("pid:role dd Mon yyyy hh:mm:ss.mmm <mark> message") so that tools
// that read Redis logs read ours.
type Logger struct {
	mu    sync.Mutex
	out   io.Writer
	level int
	role  byte
	pid   int
	// sys, when set, also receives every line logged, without its
	// prefix (syslog-enabled), under mu.
	sys func(level int, msg string)
}

// SetSyslog makes every line logged from now on also go to fn with its
// level, as Redis's serverLogRaw sends it to syslog.
func (l *Logger) SetSyslog(fn func(level int, msg string)) {
	l.mu.Lock()
	l.sys = fn
	l.mu.Unlock()
}

// NewLogger logs to out at level and above.
func NewLogger(out io.Writer, level int) *Logger {
	return &Logger{out: out, level: level, role: 'M', pid: os.Getpid()}
}

// ParseLevel maps a loglevel directive value to a level.
func ParseLevel(s string) int {
	switch s {
	case "debug":
		return LevelDebug
	case "verbose":
		return LevelVerbose
	case "warning":
		return LevelWarning
	}
	return LevelNotice
}

// SetLevel changes the level (CONFIG SET loglevel).
func (l *Logger) SetLevel(level int) {
	l.mu.Lock()
	l.level = level
	l.mu.Unlock()
}

// SetRole sets the role character: 'M' master, 'S' replica, 'C' start-up.
func (l *Logger) SetRole(r byte) {
	l.mu.Lock()
	l.role = r
	l.mu.Unlock()
}

// Logf writes one line at level.
func (l *Logger) Logf(level int, format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if level < l.level {
		return
	}
	now := time.Now().Format("02 Jan 2006 15:04:05.000")
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(l.out, "%d:%c %s %c %s\n", l.pid, l.role, now, levelMarks[level], msg)
	if l.sys != nil {
		l.sys(level, msg)
	}
}

// Raw writes msg at level as it is, without the line prefix or a
// newline (Redis's LL_RAW), for the parts of a bug report.
func (l *Logger) Raw(level int, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if level < l.level {
		return
	}
	io.WriteString(l.out, msg)
	if l.sys != nil {
		l.sys(level, msg)
	}
}

// Noticef logs at notice level.
func (l *Logger) Noticef(format string, args ...any) { l.Logf(LevelNotice, format, args...) }

// Warningf logs at warning level.
func (l *Logger) Warningf(format string, args ...any) { l.Logf(LevelWarning, format, args...) }

// Verbosef logs at verbose level.
func (l *Logger) Verbosef(format string, args ...any) { l.Logf(LevelVerbose, format, args...) }

// LogFile is the logfile directive's output: each line is appended with
// the file opened and closed around it, as Redis's serverLogRaw does, so
// that a log rotated by renaming (logrotate without copytruncate) is
// created anew at the next line instead of written to the renamed file.
type LogFile string

// Write implements io.Writer for the Logger (which serializes calls).
func (f LogFile) Write(p []byte) (int, error) {
	fd, err := os.OpenFile(string(f), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return 0, err
	}
	n, err := fd.Write(p)
	if cerr := fd.Close(); err == nil {
		err = cerr
	}
	return n, err
}
