//go:build !amd64

package keyspace

// prefetch does nothing where no instruction for it is wired up.
func prefetch(addr uintptr) {}
