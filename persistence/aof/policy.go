package aof

import (
	"fmt"
	"strings"
)

// Policy is appendfsync: when the writer fsyncs the incremental file.
type Policy int

const (
	// EverySec fsyncs once per second in the background (the default).
	EverySec Policy = iota
	// Always fsyncs before Wait returns: an acknowledged write is on disk.
	Always
	// No leaves flushing to the operating system.
	No
)

// ParsePolicy reads appendfsync's values: always, everysec, no.
func ParsePolicy(s string) (Policy, error) {
	switch strings.ToLower(s) {
	case "always":
		return Always, nil
	case "everysec":
		return EverySec, nil
	case "no":
		return No, nil
	}
	return EverySec, fmt.Errorf("invalid appendfsync value %q", s)
}

func (p Policy) String() string {
	switch p {
	case Always:
		return "always"
	case No:
		return "no"
	}
	return "everysec"
}
