package commands

import (
	"strings"

	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/scripting"
)

// Scripting: EVAL EVALSHA EVAL_RO EVALSHA_RO SCRIPT (Redis eval.c). The
// Lua VM, the script cache and the Redis Lua environment are package
// scripting's; a server's scripting engine is made on first use and
// kept on its dispatcher. A script runs inside its command, under the
// keyspace lock; the commands it calls go through the dispatcher
// (engine.Dispatcher.ScriptCall) and propagate their effects, never the
// EVAL. EVAL, SCRIPT LOAD and SCRIPT FLUSH are not propagated: a
// replica or a reloaded AOF keeps its own cache.
func init() {
	const evalFlags = engine.NoScript | engine.Stale | engine.SkipMonitor | engine.NoMandatoryKeys
	register(
		&engine.Command{Name: "eval", Arity: -3, Flags: evalFlags, ACL: "@slow @scripting", Group: "scripting", Run: evalCommand, Keys: numkeysKeys(2), FlagsFor: scriptCallFlags(false)},
		&engine.Command{Name: "evalsha", Arity: -3, Flags: evalFlags, ACL: "@slow @scripting", Group: "scripting", Run: evalshaCommand, Keys: numkeysKeys(2), FlagsFor: scriptCallFlags(true)},
		&engine.Command{Name: "eval_ro", Arity: -3, Flags: engine.ReadOnly | evalFlags, ACL: "@slow @scripting", Group: "scripting", Run: evalRoCommand, Keys: numkeysKeys(2), FlagsFor: scriptCallFlags(false)},
		&engine.Command{Name: "evalsha_ro", Arity: -3, Flags: engine.ReadOnly | evalFlags, ACL: "@slow @scripting", Group: "scripting", Run: evalshaRoCommand, Keys: numkeysKeys(2), FlagsFor: scriptCallFlags(true)},

		&engine.Command{Name: "script", Arity: -2, ACL: "@slow", Group: "scripting"},
		&engine.Command{Name: "script|debug", Arity: 3, Flags: engine.NoScript, ACL: "@slow @scripting", Run: scriptDebugCommand},
		&engine.Command{Name: "script|exists", Arity: -3, Flags: engine.NoScript, ACL: "@slow @scripting", Run: scriptExistsCommand},
		&engine.Command{Name: "script|flush", Arity: -2, Flags: engine.NoScript, ACL: "@slow @scripting", Run: scriptFlushCommand},
		&engine.Command{Name: "script|help", Arity: 2, Flags: engine.Loading | engine.Stale, ACL: "@slow @scripting", Run: scriptHelpCommand},
		&engine.Command{Name: "script|kill", Arity: 2, Flags: engine.NoScript | engine.AllowBusy, ACL: "@slow @scripting", Run: scriptKillCommand},
		&engine.Command{Name: "script|load", Arity: 3, Flags: engine.NoScript | engine.Stale, ACL: "@slow @scripting", Run: scriptLoadCommand},
	)
}

// scriptsOf returns the server's scripting engine, made on first use.
func scriptsOf(c *engine.Ctx) *scripting.Engine {
	if e, ok := c.D.Scripts.(*scripting.Engine); ok {
		return e
	}
	e := scripting.New(scriptOptions(c.Srv))
	c.D.Scripts = e
	c.D.SetScriptInterrupt(e.Interrupt)
	return e
}

// scriptOptions are the options of a server's Lua VMs: redis.log writes
// to its log.
func scriptOptions(srv engine.Server) scripting.Options {
	opts := scripting.Options{Version: RedisVersion}
	if lg, ok := srv.(engine.LevelLogger); ok {
		opts.Log = lg.LogLevel
	} else {
		opts.Log = func(level int, msg string) {
			if level >= 3 {
				srv.Warning(msg)
			}
		}
	}
	return opts
}

// ---- EVAL EVALSHA EVAL_RO EVALSHA_RO --------------------------------------

// scriptCallFlags is evalGetCommandFlags: the flags the dispatcher's
// checks (OOM, read-only replica, stale, MISCONF) and CLIENT PAUSE apply
// to an EVAL are those its script declares in its shebang, when it has
// one (the cached script's, or the body's for EVAL); a script without
// shebang, or an EVALSHA of a script not cached, keeps the command's,
// with may_replicate for EVAL and EVALSHA, which Redis 7.0 gives them
// without showing it in COMMAND: such a script may write, so CLIENT
// PAUSE WRITE holds it and a MONITOR client may not run it.
func scriptCallFlags(evalsha bool) func(d *engine.Dispatcher, cmd *engine.Command, args [][]byte) engine.Flag {
	return func(d *engine.Dispatcher, cmd *engine.Command, args [][]byte) engine.Flag {
		compat := cmd.Flags
		if cmd.Flags&engine.ReadOnly == 0 {
			compat |= engine.MayReplicate
		}
		if evalsha && len(args[1]) != 40 {
			return compat
		}
		e, _ := d.Scripts.(*scripting.Engine)
		var flags engine.ScriptFlags
		cached := false
		if e != nil {
			if evalsha {
				flags, cached = e.FlagsSHA(args[1])
			} else {
				flags, cached = e.Flags(scripting.Sha1Hex(args[1]))
			}
		}
		if !cached {
			if evalsha {
				return compat
			}
			var msg string
			if flags, _, msg = scripting.ParseShebang(args[1]); msg != "" {
				return compat
			}
		}
		if flags&engine.ScriptCompat != 0 {
			return compat
		}
		return scriptCommandFlags(cmd.Flags, flags)
	}
}

// scriptCommandFlags is scriptFlagsToCmdFlags: the flags of a command
// that runs a script or function which declared flags.
func scriptCommandFlags(cmd engine.Flag, flags engine.ScriptFlags) engine.Flag {
	f := cmd &^ (engine.Stale | engine.DenyOOM | engine.Write | engine.MayReplicate)
	if flags&(engine.ScriptAllowOOM|engine.ScriptNoWrites) == 0 {
		f |= engine.DenyOOM
	}
	if flags&engine.ScriptNoWrites == 0 {
		f |= engine.Write
	}
	if flags&engine.ScriptAllowStale != 0 {
		f |= engine.Stale
	}
	return f
}

// The EVAL family is skip_monitor: it feeds MONITOR itself, before the
// commands its script calls (evalCommand).
func evalCommand(c *engine.Ctx)      { c.Srv.Feed(c.Client, c.Args); scriptsOf(c).Eval(c, false, false) }
func evalshaCommand(c *engine.Ctx)   { c.Srv.Feed(c.Client, c.Args); scriptsOf(c).Eval(c, true, false) }
func evalRoCommand(c *engine.Ctx)    { c.Srv.Feed(c.Client, c.Args); scriptsOf(c).Eval(c, false, true) }
func evalshaRoCommand(c *engine.Ctx) { c.Srv.Feed(c.Client, c.Args); scriptsOf(c).Eval(c, true, true) }

// scriptKillCommand runs while a script past busy-reply-threshold
// serves the other clients (allow_busy).
func scriptKillCommand(c *engine.Ctx) { c.D.KillScript(c, true) }

// ---- SCRIPT ---------------------------------------------------------------

var scriptHelp = []string{
	"DEBUG (YES|SYNC|NO)",
	"    Set the debug mode for subsequent scripts executed.",
	"EXISTS <sha1> [<sha1> ...]",
	"    Return information about the existence of the scripts in the script cache.",
	"FLUSH [ASYNC|SYNC]",
	"    Flush the Lua scripts cache. Very dangerous on replicas.",
	"    When called without the optional mode argument, the behavior is determined by the",
	"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
	"    * ASYNC: Asynchronously flush the scripts cache.",
	"    * SYNC: Synchronously flush the scripts cache.",
	"KILL",
	"    Kill the currently executing Lua script.",
	"LOAD <script>",
	"    Load a script into the scripts cache without executing it.",
}

func scriptHelpCommand(c *engine.Ctx) { c.ReplyHelp(scriptHelp) }

// scriptFlushCommand empties the cache. ASYNC and SYNC do the same: the
// old VM is garbage once dropped; lazyfreed_objects counts what Redis
// would have freed in the background.
func scriptFlushCommand(c *engine.Ctx) {
	if len(c.Args) > 3 || len(c.Args) == 3 && !engine.EqualFold(c.Args[2], "sync") && !engine.EqualFold(c.Args[2], "async") {
		c.Error(scripting.ErrFlushMode)
		return
	}
	if e, ok := c.D.Scripts.(*scripting.Engine); ok {
		freedInBackground(c, flushAsync(c, 2), e.Len())
		e.Flush()
	}
	c.W.OK()
}

func scriptExistsCommand(c *engine.Ctx) {
	e, _ := c.D.Scripts.(*scripting.Engine)
	c.W.Array(len(c.Args) - 2)
	for _, sha := range c.Args[2:] {
		if e != nil && e.Exists(sha) {
			c.W.Int(1)
		} else {
			c.W.Int(0)
		}
	}
}

func scriptLoadCommand(c *engine.Ctx) {
	sha, msg := scriptsOf(c).Load(c.Args[2])
	if msg != "" {
		c.Error(msg)
		return
	}
	c.W.BulkString(sha)
}

// scriptDebugCommand: zredis has no Lua debugger, so SCRIPT DEBUG NO
// (the mode every client starts in) is accepted and YES or SYNC refused.
func scriptDebugCommand(c *engine.Ctx) {
	switch strings.ToLower(string(c.Args[2])) {
	case "no":
		c.W.OK()
	case "yes", "sync":
		c.Error(scripting.ErrDebugUnsupported)
	default:
		c.Error(scripting.ErrDebugMode)
	}
}
