package main

// syslog-enabled, syslog-ident and syslog-facility: every log line also
// goes to the local syslog socket, as Redis's openlog/syslog calls send it.

import (
	"fmt"
	"net"
	"os"
	"time"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/server"
)

// syslogPath is the local syslog socket glibc's syslog() writes to.
const syslogPath = "/dev/log"

// Syslog severities for Redis's levels (syslogLevelMap): debug, verbose,
// notice, warning.
var syslogSeverity = [...]int{7, 6, 5, 4}

// syslogFacility maps the syslog-facility enum (user, local0..local7, in
// the table's order) to its facility code.
func syslogFacility(v int64) int {
	if v == 0 {
		return 1 // LOG_USER
	}
	return 16 + int(v) - 1 // LOG_LOCAL0..7
}

// syslogger writes RFC 3164 datagrams ("<PRI>Mmm dd hh:mm:ss ident[pid]:
// msg") to the syslog socket. Like glibc's syslog(), a socket that cannot
// be reached is tried again at the next line, and lines sent meanwhile
// are lost. It is only called under the Logger's mutex.
type syslogger struct {
	path     string
	ident    string
	facility int
	pid      int
	conn     *net.UnixConn
}

func newSyslogger(path string, cfg *config.Config) *syslogger {
	return &syslogger{path: path, ident: cfg.String("syslog-ident"),
		facility: syslogFacility(cfg.Int("syslog-facility")), pid: os.Getpid()}
}

// connect opens the socket (openlog with LOG_NDELAY).
func (s *syslogger) connect() error {
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: s.path, Net: "unixgram"})
	if err != nil {
		return err
	}
	s.conn = c
	return nil
}

// log sends one line at a server log level.
func (s *syslogger) log(level int, msg string) {
	if s.conn == nil && s.connect() != nil {
		return
	}
	pri := s.facility<<3 | syslogSeverity[level]
	line := fmt.Sprintf("<%d>%s %s[%d]: %s", pri, time.Now().Format(time.Stamp), s.ident, s.pid, msg)
	if _, err := s.conn.Write([]byte(line)); err != nil {
		s.conn.Close()
		s.conn = nil
	}
}

// close closes the socket at exit.
func (s *syslogger) close() {
	if s.conn != nil {
		s.conn.Close()
		s.conn = nil
	}
}

// startSyslog sends the log to syslog when syslog-enabled is yes; a socket
// that cannot be reached at start is reported once on the log.
func startSyslog(cfg *config.Config, log *server.Logger) func() {
	if !cfg.Bool("syslog-enabled") {
		return func() {}
	}
	s := newSyslogger(syslogPath, cfg)
	if err := s.connect(); err != nil {
		log.Warningf("syslog-enabled yes, but the syslog socket %s can't be reached (%v): lines go to syslog once it can", syslogPath, err)
	}
	log.SetSyslog(s.log)
	return func() {
		log.SetSyslog(nil)
		s.close()
	}
}
