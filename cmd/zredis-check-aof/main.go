// Command zredis-check-aof checks (and with --fix truncates) an append only
// file: a Redis 7.0 manifest with its base and incremental files, or a
// Redis 6 style single file. It behaves as redis-check-aof 7.0: same
// arguments, report lines and exit status.
//
//	zredis-check-aof [--fix|--truncate-to-timestamp <ts>] <file.manifest|file.aof>
package main

import (
	"os"

	"github.com/zredis/zredis/persistence/aof"
)

func main() {
	os.Exit(aof.Check(os.Args, aof.CheckOptions{
		Stdout:   os.Stdout,
		Stdin:    os.Stdin,
		CheckRDB: checkRDB,
	}))
}
