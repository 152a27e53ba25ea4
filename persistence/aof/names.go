package aof

import "strconv"

// File name parts, as aof.c names them.
const (
	baseSuffix      = ".base"
	incrSuffix      = ".incr"
	rdbFormatSuffix = ".rdb"
	aofFormatSuffix = ".aof"
	manifestSuffix  = ".manifest"
	tempPrefix      = "temp-"
)

// DefaultDirName and DefaultFileName are appenddirname's and
// appendfilename's defaults.
const (
	DefaultDirName  = "appendonlydir"
	DefaultFileName = "appendonly.aof"
)

// ManifestName is the manifest's file name for the appendfilename prefix:
// "appendonly.aof" gives "appendonly.aof.manifest".
func ManifestName(prefix string) string { return prefix + manifestSuffix }

// BaseName is a base file's name: <prefix>.<seq>.base.rdb when the base is an
// RDB snapshot, <prefix>.<seq>.base.aof when it is commands.
func BaseName(prefix string, seq int64, rdb bool) string {
	format := aofFormatSuffix
	if rdb {
		format = rdbFormatSuffix
	}
	return prefix + "." + strconv.FormatInt(seq, 10) + baseSuffix + format
}

// IncrName is an incremental file's name: <prefix>.<seq>.incr.aof.
func IncrName(prefix string, seq int64) string {
	return prefix + "." + strconv.FormatInt(seq, 10) + incrSuffix + aofFormatSuffix
}
