package netloop

import (
	"syscall"
	"unsafe"
)

// The loop's sockets are non-blocking, so reads, writes and a zero-timeout
// epoll_wait return at once. They are issued as raw system calls: the
// runtime's entersyscall/exitsyscall bookkeeping would cost more than the
// calls themselves at one request per call, and would keep the runtime's
// monitor thread waking up to look at a processor that seems stuck in a
// system call. Only the blocking epoll_wait goes through the ordinary
// path, which lets the runtime run other goroutines meanwhile.
//
// So do reads into and writes from large buffers (a big argument's
// bytes, a big value's reply): the kernel copies megabytes in one call,
// and a goroutine in a raw system call is, for the runtime, running code
// it cannot stop. A garbage collection that wants to scan its stack then
// spins and signals it until the call returns (runtime.suspendG); the
// collections a 100 MB SET's allocations start did so for most of the
// command's time. In an ordinary system call the goroutine's stack is
// scanned where it stands.
const bigIO = 256 << 10

func rawRead(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	call := syscall.RawSyscall
	if len(p) >= bigIO {
		call = syscall.Syscall
	}
	n, _, errno := call(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

func rawWrite(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	call := syscall.RawSyscall
	if len(p) >= bigIO {
		call = syscall.Syscall
	}
	n, _, errno := call(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// maxIovecs bounds the buffers one writev takes (IOV_MAX).
const maxIovecs = 1024

func rawWritev(fd int, iov []syscall.Iovec) (int, error) {
	n, _, errno := syscall.RawSyscall(syscall.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// pollNow is epoll_wait with a zero timeout.
func pollNow(epfd int, events []syscall.EpollEvent) (int, error) {
	n, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
