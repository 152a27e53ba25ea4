package server

import (
	"syscall"
	"unsafe"
)

// poll(2) events: POLLRDHUP (the peer closed its end or shut down
// writing), POLLERR, POLLHUP, POLLNVAL.
const (
	pollRDHUP = 0x2000
	pollERR   = 0x8
	pollHUP   = 0x10
	pollNVAL  = 0x20
)

// peerClosed reports, without blocking, whether the peer of socket fd has
// hung up. A blocked client's connection is detached from its loop, which
// then does not watch it: the blocking commands ask this instead, as
// Redis notices a blocked client that disconnects.
func peerClosed(fd int) bool {
	pfd := struct {
		fd      int32
		events  int16
		revents int16
	}{fd: int32(fd), events: pollRDHUP}
	var ts syscall.Timespec
	n, _, errno := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd)), 1, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	if errno != 0 || n == 0 {
		return false
	}
	return pfd.revents&(pollRDHUP|pollHUP|pollERR|pollNVAL) != 0
}
