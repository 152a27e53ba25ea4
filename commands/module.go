package commands

import (
	"github.com/zredis/zredis/engine"
)

// MODULE (Redis module.c): zredis loads no modules. MODULE LIST answers
// the empty list; LOAD, LOADEX and UNLOAD are refused unless
// enable-module-command allows them, as 7.0 refuses them, and when it
// does, they fail as a load or an unload that cannot be done.
func init() {
	const adm = engine.Admin | engine.NoScript | engine.NoAsyncLoading
	register(
		&engine.Command{Name: "module", Arity: -2, ACL: "@slow", Group: "server"},
		&engine.Command{Name: "module|help", Arity: 2, Flags: engine.Loading | engine.Stale, ACL: "@slow", Run: moduleHelpCommand},
		&engine.Command{Name: "module|list", Arity: 2, Flags: engine.Admin | engine.NoScript, ACL: "@admin @slow @dangerous", Run: moduleListCommand},
		&engine.Command{Name: "module|load", Arity: -3, Flags: adm, ACL: "@admin @slow @dangerous", Run: moduleLoadCommand},
		&engine.Command{Name: "module|loadex", Arity: -3, Flags: adm, ACL: "@admin @slow @dangerous", Run: moduleLoadCommand},
		&engine.Command{Name: "module|unload", Arity: 3, Flags: adm, ACL: "@admin @slow @dangerous", Run: moduleUnloadCommand},
	)
}

const errModuleNotAllowed = "ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server."

// moduleAllowed is allowProtectedAction for enable-module-command; false
// after the error reply.
func moduleAllowed(c *engine.Ctx) bool {
	switch c.Config().String("enable-module-command") {
	case "yes":
		return true
	case "local":
		if isLocalAddr(c.Client.Addr) {
			return true
		}
	}
	c.Error(errModuleNotAllowed)
	return false
}

func moduleListCommand(c *engine.Ctx) { c.W.Array(0) }

func moduleLoadCommand(c *engine.Ctx) {
	if !moduleAllowed(c) {
		return
	}
	c.Srv.Warning("Module " + string(c.Args[2]) + " failed to load: zredis loads no modules")
	c.Error("ERR Error loading the extension. Please check the server logs.")
}

func moduleUnloadCommand(c *engine.Ctx) {
	if !moduleAllowed(c) {
		return
	}
	c.Error("ERR Error unloading module: no such module with that name")
}

var moduleHelp = []string{
	"LIST",
	"    Return a list of loaded modules.",
	"LOAD <path> [<arg> ...]",
	"    Load a module library from <path>, passing to it any optional arguments.",
	"LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
	"    Load a module library from <path>, while passing it module configurations and optional arguments.",
	"UNLOAD <name>",
	"    Unload a module.",
}

func moduleHelpCommand(c *engine.Ctx) { c.ReplyHelp(moduleHelp) }
