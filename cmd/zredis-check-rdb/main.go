// Command zredis-check-rdb checks an RDB file as redis-check-rdb 7.0 does:
// it reads the whole file, verifies its encoding and checksum, and reports
// what it read (for a file of version 12, Redis 7.4's, also the hashes
// with field TTLs, as 7.4's checker does). Exit status 0 when the file is
// valid, 1 otherwise.
//
//	zredis-check-rdb <rdb-file-name>
package main

import (
	"fmt"
	"os"

	"github.com/zredis/zredis/persistence/rdb"
)

const help = `Usage: %s <rdb-file-name>

Checks an RDB file (Redis 7.0's format, as zredis and redis-server write it,
or 7.2's and 7.4's, which zredis writes for hashes with field TTLs):
reads every key, verifies the encoding and the checksum, and prints what it
read. Exit status 0 when the file is valid, 1 otherwise. The same check runs
as zredis-server --check-rdb <rdb-file-name>.
`

func main() {
	// redis-check-rdb would take --help for a file name; no RDB file is
	// called that, so it asks for this text.
	if len(os.Args) == 2 && (os.Args[1] == "--help" || os.Args[1] == "-h") {
		fmt.Printf(help, os.Args[0])
		return
	}
	if len(os.Args) != 2 {
		fmt.Fprintf(os.Stderr, "Usage: %s <rdb-file-name>\n", os.Args[0])
		os.Exit(1)
	}
	os.Exit(rdb.CheckFile(os.Args[1], os.Stdout))
}
