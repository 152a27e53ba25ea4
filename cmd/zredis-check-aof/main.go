// Command zredis-check-aof checks (and with --fix truncates) an append only
// file: a Redis 7.0 manifest with its base and incremental files, or a
// Redis 6 style single file. It behaves as redis-check-aof 7.0: same
// arguments, report lines and exit status.
//
//	zredis-check-aof [--fix|--truncate-to-timestamp <ts>] <file.manifest|file.aof>
package main

import (
	"fmt"
	"os"

	"github.com/zredis/zredis/persistence/aof"
)

const help = `Usage: %s [--fix|--truncate-to-timestamp $timestamp] <file.manifest|file.aof>

Checks an append only file as redis-check-aof 7.0 does: a Redis 7.0
manifest with its base and incremental files, or a single file (with or
without an RDB preamble). Exit status 0 when the file is valid, 1 otherwise.

  --fix                      truncate the last file at its last valid command,
                             after asking
  --truncate-to-timestamp T  truncate the last file at its first #TS:
                             annotation later than unix time T
                             (aof-timestamp-enabled yes writes them)

The same check runs as zredis-server --check-aof [options] <file>.
`

func main() {
	// redis-check-aof would take --help for a file name; no AOF is
	// called that, so it asks for this text.
	if len(os.Args) == 2 && (os.Args[1] == "--help" || os.Args[1] == "-h") {
		fmt.Printf(help, os.Args[0])
		return
	}
	os.Exit(aof.Check(os.Args, aof.CheckOptions{
		Stdout:   os.Stdout,
		Stdin:    os.Stdin,
		CheckRDB: checkRDB,
	}))
}
