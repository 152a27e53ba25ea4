package commands

import (
	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// Lazy freeing: zredis frees every value through the garbage collector,
// whatever the lazyfree directives say, but INFO's lazyfreed_objects
// counts what Redis 7.0's background thread would have freed (lazyfree.c):
// the keyspace counts the values it deletes (keyspace.FreeMode), and the
// commands here count the rest.

// TrackLazyFree keeps the keyspace's lazyfree settings in step with the
// lazyfree-lazy-* directives and list-max-listpack-size: now, and on
// every CONFIG SET (whose hooks run under the keyspace lock). The server
// calls it once while wiring the keyspace.
func TrackLazyFree(cfg *config.Config, ks *keyspace.Keyspace) {
	apply := func(string) error {
		ks.SetLazyFree(keyspace.LazyFree{
			ServerDel: cfg.Bool("lazyfree-lazy-server-del"),
			UserDel:   cfg.Bool("lazyfree-lazy-user-del"),
			Expire:    cfg.Bool("lazyfree-lazy-expire"),
			Eviction:  cfg.Bool("lazyfree-lazy-eviction"),
			ListFill:  cfg.Int("list-max-listpack-size"),
		})
		return nil
	}
	apply("")
	for _, name := range []string{"lazyfree-lazy-server-del", "lazyfree-lazy-user-del",
		"lazyfree-lazy-expire", "lazyfree-lazy-eviction", "list-max-listpack-size"} {
		cfg.OnChange(name, apply)
	}
}

// flushAsync is whether a FLUSHALL, FLUSHDB, SCRIPT FLUSH or FUNCTION
// FLUSH whose arguments were checked frees in the background: ASYNC, or
// neither ASYNC nor SYNC and lazyfree-lazy-user-flush (getFlushCommandFlags).
// mode is the index of the optional argument.
func flushAsync(c *engine.Ctx, mode int) bool {
	if len(c.Args) > mode {
		return engine.EqualFold(c.Args[mode], "async")
	}
	return c.Config().Bool("lazyfree-lazy-user-flush")
}

// freedInBackground counts the n objects of a script cache or function
// set that a flush dropped, when Redis would have freed them in the
// background (freeLuaScriptsAsync, freeFunctionsAsync).
func freedInBackground(c *engine.Ctx, async bool, n int) {
	if async && n > keyspace.LazyfreeThreshold {
		c.KS.LazyFreed(int64(n))
	}
}
