package commands

import "github.com/zredis/zredis/engine"

// table is the command table every family adds its commands to, with
// register in an init function. It is filled before main runs and never
// changed afterwards; each server's dispatcher keeps its own counters.
var table = newTable()

// newTable makes the empty table, which knows the access commands make
// of their keys (keyAccess) for the ACL.
func newTable() *engine.Table {
	t := engine.NewTable()
	t.KeyAccess = keyAccess
	t.Unserved = func() []engine.UnservedCommand { return unservedCommands(t) }
	return t
}

// register adds commands to the table (engine.Table.Register).
func register(cmds ...*engine.Command) { table.Register(cmds...) }

// Table is the command table of every family, for the dispatcher.
func Table() *engine.Table { return table }
