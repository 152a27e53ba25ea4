package commands

import (
	"errors"
	"time"

	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/persistence/rdb"
	"github.com/zredis/zredis/scripting"
	"github.com/zredis/zredis/sds"
)

// Functions: FUNCTION and FCALL, FCALL_RO (Redis functions.c). The
// libraries and the VM they run in are package scripting's; a server's
// are made with it (NewFunctions) and kept on its dispatcher, since its
// RDB file may hold libraries. FUNCTION LOAD, DELETE, FLUSH and RESTORE
// change the dataset as Redis counts it: they are propagated as they
// came, to the AOF and to replicas. FCALL propagates the effects of the
// commands its function calls, never itself.
func init() {
	const fcallFlags = engine.NoScript | engine.Stale | engine.SkipMonitor | engine.NoMandatoryKeys
	const acl = "@slow @scripting"
	const write = "@write @slow @scripting"
	register(
		&engine.Command{Name: "fcall", Arity: -3, Flags: fcallFlags, ACL: acl, Group: "scripting", Run: fcallCommand, Keys: numkeysKeys(2), FlagsFor: fcallCallFlags},
		&engine.Command{Name: "fcall_ro", Arity: -3, Flags: engine.ReadOnly | fcallFlags, ACL: acl, Group: "scripting", Run: fcallRoCommand, Keys: numkeysKeys(2), FlagsFor: fcallCallFlags},

		&engine.Command{Name: "function", Arity: -2, ACL: "@slow", Group: "scripting"},
		&engine.Command{Name: "function|delete", Arity: 3, Flags: engine.Write | engine.NoScript, ACL: write, Run: functionDeleteCommand},
		&engine.Command{Name: "function|dump", Arity: 2, Flags: engine.NoScript, ACL: acl, Run: functionDumpCommand},
		&engine.Command{Name: "function|flush", Arity: -2, Flags: engine.Write | engine.NoScript, ACL: write, Run: functionFlushCommand},
		&engine.Command{Name: "function|help", Arity: 2, Flags: engine.Loading | engine.Stale, ACL: acl, Run: functionHelpCommand},
		&engine.Command{Name: "function|kill", Arity: 2, Flags: engine.NoScript | engine.AllowBusy, ACL: acl, Run: functionKillCommand},
		&engine.Command{Name: "function|list", Arity: -2, Flags: engine.NoScript, ACL: acl, Run: functionListCommand},
		&engine.Command{Name: "function|load", Arity: -3, Flags: engine.Write | engine.DenyOOM | engine.NoScript, ACL: write, Run: functionLoadCommand},
		&engine.Command{Name: "function|restore", Arity: -3, Flags: engine.Write | engine.DenyOOM | engine.NoScript, ACL: write, Run: functionRestoreCommand},
		&engine.Command{Name: "function|stats", Arity: 2, Flags: engine.NoScript | engine.AllowBusy, ACL: acl, Run: functionStatsCommand},
	)
}

// NewFunctions makes a server's function libraries, for its dispatcher
// (engine.Dispatcher.Functions).
func NewFunctions(srv engine.Server) engine.FunctionLibraries {
	return &functionLibs{scripting.NewFunctions(scriptOptions(srv))}
}

// functionLibs is scripting.Functions as engine.FunctionLibraries.
type functionLibs struct{ *scripting.Functions }

func (f *functionLibs) Load(code string, replace bool, timeout time.Duration) (string, string) {
	return f.Functions.Load(code, replace, timeout)
}

// functionsOf returns the server's function libraries.
func functionsOf(c *engine.Ctx) *scripting.Functions {
	return c.D.Functions.(*functionLibs).Functions
}

// fcallCallFlags is fcallGetCommandFlags: the checks before FCALL read
// the flags its function declares (no flags: it may write). For a
// function that does not exist, FCALL keeps may_replicate, which 7.0
// gives it as EVAL without showing it in COMMAND.
func fcallCallFlags(d *engine.Dispatcher, cmd *engine.Command, args [][]byte) engine.Flag {
	libs, ok := d.Functions.(*functionLibs)
	var fn *scripting.Function
	if ok {
		fn = libs.Lookup(string(args[1]))
	}
	if fn == nil {
		if cmd.Flags&engine.ReadOnly == 0 {
			return cmd.Flags | engine.MayReplicate
		}
		return cmd.Flags
	}
	return scriptCommandFlags(cmd.Flags, fn.Flags)
}

// FCALL and FCALL_RO feed MONITOR themselves, before the commands their
// function calls.
func fcallCommand(c *engine.Ctx)   { c.Srv.Feed(c.Client, c.Args); functionsOf(c).Call(c, false) }
func fcallRoCommand(c *engine.Ctx) { c.Srv.Feed(c.Client, c.Args); functionsOf(c).Call(c, true) }

// FUNCTION LOAD [REPLACE] code
func functionLoadCommand(c *engine.Ctx) {
	replace := false
	i := 2
	for ; i < len(c.Args)-1; i++ {
		if !engine.EqualFold(c.Args[i], "replace") {
			c.Error("ERR Unknown option given: " + string(c.Args[i]))
			return
		}
		replace = true
	}
	// The master's stream and the AOF load as they were loaded.
	timeout := scripting.LoadTimeout
	if c.Client.Master || c.Client.Replaying {
		timeout = 0
	}
	name, msg := functionsOf(c).Load(string(c.Args[i]), replace, timeout)
	if msg != "" {
		c.Error(msg)
		return
	}
	c.Dirty(1)
	c.W.BulkString(name)
}

// FUNCTION DELETE library
func functionDeleteCommand(c *engine.Ctx) {
	if !functionsOf(c).Delete(string(c.Args[2])) {
		c.Error(scripting.ErrLibraryNotFound)
		return
	}
	c.Dirty(1)
	c.W.OK()
}

// FUNCTION FLUSH [ASYNC|SYNC]: the libraries go at once either way;
// lazyfreed_objects counts the functions Redis would have freed in the
// background.
func functionFlushCommand(c *engine.Ctx) {
	if len(c.Args) > 3 {
		c.Error(engine.ErrSubcommandSyntax(string(c.Args[1]), "FUNCTION"))
		return
	}
	if len(c.Args) == 3 && !engine.EqualFold(c.Args[2], "sync") && !engine.EqualFold(c.Args[2], "async") {
		c.Error(scripting.ErrFunctionFlushMode)
		return
	}
	_, funcs := functionsOf(c).Counts()
	freedInBackground(c, flushAsync(c, 2), funcs)
	functionsOf(c).Flush()
	c.Dirty(1)
	c.W.OK()
}

// FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE]: libraries and their
// functions in name order (Redis's follow its hash tables).
func functionListCommand(c *engine.Ctx) {
	withCode := false
	var pattern []byte
	for i := 2; i < len(c.Args); i++ {
		switch a := c.Args[i]; {
		case !withCode && engine.EqualFold(a, "withcode"):
			withCode = true
		case pattern == nil && engine.EqualFold(a, "libraryname"):
			if i >= len(c.Args)-1 {
				c.Error("ERR library name argument was not given")
				return
			}
			i++
			pattern = c.Args[i]
		default:
			c.Error("ERR Unknown argument " + string(a))
			return
		}
	}
	var libs []*scripting.Library
	for _, l := range functionsOf(c).Libraries() {
		if pattern == nil || sds.Match(pattern, []byte(l.Name), true) {
			libs = append(libs, l)
		}
	}
	w := c.W
	w.Array(len(libs))
	for _, l := range libs {
		if withCode {
			w.Map(4)
		} else {
			w.Map(3)
		}
		w.BulkString("library_name")
		w.BulkString(l.Name)
		w.BulkString("engine")
		w.BulkString("LUA")
		w.BulkString("functions")
		fns := l.SortedFunctions()
		w.Array(len(fns))
		for _, fn := range fns {
			w.Map(3)
			w.BulkString("name")
			w.BulkString(fn.Name)
			w.BulkString("description")
			if fn.HasDesc {
				w.BulkString(fn.Desc)
			} else {
				w.Null()
			}
			w.BulkString("flags")
			names := scripting.FlagNames(fn.Flags)
			w.Set(len(names))
			for _, n := range names {
				w.Simple(n)
			}
		}
		if withCode {
			w.BulkString("library_code")
			w.BulkString(l.Code)
		}
	}
}

// FUNCTION STATS: the running function (only a timed-out one can be
// seen running), and the libraries and functions of the Lua engine.
func functionStatsCommand(c *engine.Ctx) {
	run, ok := c.D.RunningScript()
	if ok && !run.Function {
		c.Error(engine.ErrBusyEval)
		return
	}
	w := c.W
	w.Map(2)
	w.BulkString("running_script")
	if !ok {
		w.Null()
	} else {
		w.Map(3)
		w.BulkString("name")
		w.BulkString(run.Name)
		w.BulkString("command")
		args := run.Caller().Args
		w.Array(len(args))
		for _, a := range args {
			w.Bulk(a)
		}
		w.BulkString("duration_ms")
		w.Int(run.Elapsed().Milliseconds())
	}
	libs, funcs := functionsOf(c).Counts()
	w.BulkString("engines")
	w.Map(1)
	w.BulkString("LUA")
	w.Map(2)
	w.BulkString("libraries_count")
	w.Int(int64(libs))
	w.BulkString("functions_count")
	w.Int(int64(funcs))
}

// FUNCTION KILL: as SCRIPT KILL, for a function.
func functionKillCommand(c *engine.Ctx) { c.D.KillScript(c, false) }

// FUNCTION DUMP
func functionDumpCommand(c *engine.Ctx) {
	c.W.Bulk(rdb.DumpFunctions(functionsOf(c).Codes()))
}

// FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE]
func functionRestoreCommand(c *engine.Ctx) {
	if len(c.Args) > 4 {
		c.Error(engine.ErrSubcommandSyntax(string(c.Args[1]), "FUNCTION"))
		return
	}
	policy := scripting.RestoreAppend
	if len(c.Args) == 4 {
		switch a := c.Args[3]; {
		case engine.EqualFold(a, "append"):
		case engine.EqualFold(a, "replace"):
			policy = scripting.RestoreReplace
		case engine.EqualFold(a, "flush"):
			policy = scripting.RestoreFlush
		default:
			c.Error("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
			return
		}
	}
	codes, err := rdb.RestoreFunctions(c.Args[2], c.D.Debug.SkipChecksum.Load())
	if err != nil {
		if !errors.Is(err, rdb.ErrDumpPayload) && !errors.Is(err, rdb.ErrFunctionType) &&
			!errors.Is(err, rdb.ErrFunctionRead) && !errors.Is(err, rdb.ErrDataType) {
			err = rdb.ErrFunctionRead
		}
		c.Error("ERR " + err.Error())
		return
	}
	if msg := functionsOf(c).Restore(codes, policy); msg != "" {
		c.Error(msg)
		return
	}
	c.Dirty(1)
	c.W.OK()
}

var functionHelp = []string{
	"LOAD [REPLACE] <FUNCTION CODE>",
	"    Create a new library with the given library name and code.",
	"DELETE <LIBRARY NAME>",
	"    Delete the given library.",
	"LIST [LIBRARYNAME PATTERN] [WITHCODE]",
	"    Return general information on all the libraries:",
	"    * Library name",
	"    * The engine used to run the Library",
	"    * Library description",
	"    * Functions list",
	"    * Library code (if WITHCODE is given)",
	"    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
	"STATS",
	"    Return information about the current function running:",
	"    * Function name",
	"    * Command used to run the function",
	"    * Duration in MS that the function is running",
	"    If no function is running, return nil",
	"    In addition, returns a list of available engines.",
	"KILL",
	"    Kill the current running function.",
	"FLUSH [ASYNC|SYNC]",
	"    Delete all the libraries.",
	"    When called without the optional mode argument, the behavior is determined by the",
	"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
	"    * ASYNC: Asynchronously flush the libraries.",
	"    * SYNC: Synchronously flush the libraries.",
	"DUMP",
	"    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
	"RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
	"    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
	"    control how to handle existing libraries (default APPEND):",
	"    * FLUSH: delete all existing libraries.",
	"    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
	"    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
	"      libraries with the new libraries (notice that even on this option there is a chance of failure",
	"      in case of functions name collision with another library).",
}

func functionHelpCommand(c *engine.Ctx) { c.ReplyHelp(functionHelp) }
