package main

import "github.com/zredis/zredis/persistence/rdb"

// checkRDB checks the RDB payload of a .base.rdb file or of an RDB-preamble
// AOF (see aof.CheckOptions.CheckRDB), as redis-check-aof hands it to
// redis-check-rdb.
var checkRDB = rdb.Check
