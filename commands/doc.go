// Package commands holds the command families, one file each (strings,
// keys, lists, hashes, sets, zsets, blocking, pub/sub, transactions,
// connection, server, persistence, dump, cluster, COMMAND): their
// entries in the command table, registered from each file's init
// function, their handlers, and each handler's propagated form beside
// it. The engine (package engine) runs them; Table returns the filled
// table.
package commands
