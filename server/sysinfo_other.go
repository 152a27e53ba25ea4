//go:build !linux

package server

import "runtime"

// osName is INFO's os field.
func osName() string { return runtime.GOOS + " " + runtime.GOARCH }

// totalSystemMemory is unknown here.
func totalSystemMemory() int64 { return 0 }
