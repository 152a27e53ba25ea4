// Command zredis-check-rdb checks an RDB file as redis-check-rdb 7.0 does:
// it reads the whole file, verifies its encoding and checksum, and reports
// what it read. Exit status 0 when the file is valid, 1 otherwise.
//
//	zredis-check-rdb <rdb-file-name>
package main

import (
	"fmt"
	"os"

	"github.com/zredis/zredis/persistence/rdb"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintf(os.Stderr, "Usage: %s <rdb-file-name>\n", os.Args[0])
		os.Exit(1)
	}
	os.Exit(rdb.CheckFile(os.Args[1], os.Stdout))
}
