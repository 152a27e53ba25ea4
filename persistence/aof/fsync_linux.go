package aof

import (
	"os"
	"syscall"
)

// fdatasync flushes a file's data (and the metadata needed to read it back,
// such as its size) as redis_fsync does on Linux.
func fdatasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}

// fallocKeepSize is FALLOC_FL_KEEP_SIZE: allocate without changing the
// file's size.
const fallocKeepSize = 0x01

// reserve allocates n bytes of disk blocks at off without changing the
// file's size. It reports false where the file system cannot (tmpfs on old
// kernels, a full disk): appending then simply allocates as it goes.
func reserve(f *os.File, off, n int64) bool {
	for {
		err := syscall.Fallocate(int(f.Fd()), fallocKeepSize, off, n)
		if err != syscall.EINTR {
			return err == nil
		}
	}
}
