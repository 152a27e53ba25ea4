//go:build !linux

package aof

import "os"

// fdatasync falls back to a full fsync where fdatasync is not available.
func fdatasync(f *os.File) error { return f.Sync() }

// reserve has no portable equivalent of fallocate's KEEP_SIZE.
func reserve(*os.File, int64, int64) bool { return false }
