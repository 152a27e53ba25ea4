package server

import "syscall"

// markControl is a net.ListenConfig Control function that sets SO_MARK
// (socket-mark-id) on a listening socket, as Redis's anetSetSockMarkId
// does; the connections it accepts inherit the mark. A failure (the mark
// needs CAP_NET_ADMIN) is logged, and the socket is used unmarked, as
// Redis does.
func (s *Server) markControl(mark int64) func(network, address string, rc syscall.RawConn) error {
	return func(_, address string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_MARK, int(mark))
		}); err != nil {
			return err
		}
		if serr != nil {
			s.log.Warningf("Warning: socket-mark-id %d could not be set on %s: %v", mark, address, serr)
		}
		return nil
	}
}
