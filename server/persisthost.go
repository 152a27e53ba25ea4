package server

import (
	"strings"

	"github.com/zredis/zredis/commands"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/persistence/rdb"
)

// Persistence implements engine.Server: the persistence orchestration
// (package persistence).
func (s *Server) Persistence() engine.Persistence { return s.persist }

// Warning logs msg for the engine and the commands (ACL SAVE failures).
func (s *Server) Warning(msg string) { s.log.Warningf("%s", msg) }

// persistHost is the server as package persistence's host
// (persistence.Host).
type persistHost struct{ s *Server }

// ReplInfo implements persistence.Host.
func (h persistHost) ReplInfo() [][2]string { return h.s.link.SaveInfo() }

// RestoreReplInfo implements persistence.Host.
func (h persistHost) RestoreReplInfo(aux [][2]string) { h.s.link.RestoreInfo(aux) }

// RDBLoadOptions implements persistence.Host: the encoding thresholds,
// and whether DEBUG SET-SKIP-CHECKSUM-VALIDATION turned the CRC check
// off.
func (h persistHost) RDBLoadOptions() rdb.LoadOptions {
	opt := commands.RDBLoadOptions(h.s.cfg)
	opt.SkipChecksum = h.s.disp.Debug.SkipChecksum.Load()
	return opt
}

// Closing implements persistence.Host.
func (h persistHost) Closing() bool { return h.s.closing }

// Notify implements persistence.Host.
func (h persistHost) Notify(state string) { h.s.notify(state) }

// UnexpectedError implements persistence.Host.
func (h persistHost) UnexpectedError(cl *engine.Client, argv [][]byte, reply []byte, from, to string) string {
	return h.s.unexpectedError(cl, argv, reply, from, to)
}

// AOFProgressed implements persistence.Host: replies held for the AOF
// may go out. On the AOF writer's flusher.
func (h persistHost) AOFProgressed() {
	for _, held := range h.s.heldList {
		held.progressed()
	}
}

// Fatalf implements persistence.Host.
func (h persistHost) Fatalf(format string, args ...any) { h.s.fatalf(format, args...) }

// unexpectedError logs and counts an error reply out that a command
// from the AOF or the master got (afterErrorReply), and returns the
// command's name as Redis gives it.
func (s *Server) unexpectedError(cl *engine.Client, argv [][]byte, out []byte, from, to string) (name string) {
	// Redis logs the text its handler gave: without "ERR " for most
	// errors, with the leading '-' for the shared ones with another code.
	msg := string(out[:min(len(out), 4097)])
	if i := strings.Index(msg, "\r\n"); i >= 0 {
		msg = msg[:i]
	}
	if strings.HasPrefix(msg, "-ERR ") {
		msg = msg[5:]
	}
	name = cl.LastCmd
	if name == "" {
		name = strings.ToLower(string(argv[0]))
	}
	s.log.Warningf("== CRITICAL == This %s is sending an error to its %s: '%s' after processing the command '%s'", from, to, msg, name)
	s.stats.UnexpectedErrors++
	return name
}
