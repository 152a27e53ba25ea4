package netloop

import (
	"errors"
	"net"
	"syscall"
)

// TakeFD detaches a connected socket from Go's poller: it returns a
// non-blocking duplicate of its descriptor for a loop to own and closes
// nc.
func TakeFD(nc net.Conn) (int, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		nc.Close()
		return -1, errors.New("netloop: connection has no descriptor")
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		nc.Close()
		return -1, err
	}
	fd := -1
	var dupErr error
	err = raw.Control(func(f uintptr) {
		fd, dupErr = syscall.Dup(int(f))
	})
	nc.Close()
	if err != nil {
		return -1, err
	}
	if dupErr != nil {
		return -1, dupErr
	}
	syscall.CloseOnExec(fd)
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return -1, err
	}
	return fd, nil
}
