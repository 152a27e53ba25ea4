package scripting

import (
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/resp"
)

// The Lua environment of Redis 7.0 (script_lua.c luaRegisterRedisAPI,
// eval.c scriptingInit): the libraries base, table, string, math and
// debug (which only the error handler keeps), cjson, struct, cmsgpack
// and bit, the redis table, and globals locked against change.
//
// Redis's Lua is patched with read-only tables; gopher-lua has none, so
// the protection is made of views: every table scripts reach from the
// globals (the globals themselves, the libraries, the string metatable)
// is an empty table whose metatable reads the real one and refuses any
// write with Redis's "Attempt to modify a readonly table". The builtins
// that bypass metatables (rawset, rawget, next, pairs, setmetatable,
// getmetatable, table.insert/remove/sort) see through the views, and
// refuse to change them, the same way.

// globalNames are the globals a script sees, as redis-server 7.0 lists
// them (pairs(_G)), besides KEYS and ARGV.
var globalNames = []string{
	"_G", "_VERSION", "__redis__err__handler", "assert", "bit", "cjson", "cmsgpack",
	"collectgarbage", "coroutine", "error", "gcinfo", "getmetatable", "ipairs", "load",
	"loadstring", "math", "next", "pairs", "pcall", "rawequal", "rawget", "rawset", "redis",
	"select", "setmetatable", "string", "struct", "table", "tonumber", "tostring", "type",
	"unpack", "xpcall",
}

const (
	errReadonly       = "Attempt to modify a readonly table"
	errNonexistentFmt = "Script attempted to access nonexistent global variable '"
)

// newState makes the VM with Redis's environment.
func (e *Engine) newState() {
	L := lua.NewState(lua.Options{
		SkipOpenLibs:     true,
		CallStackSize:    callStackSize,
		RegistrySize:     registrySize,
		RegistryMaxSize:  registryMaxSize,
		RegistryGrowStep: registryGrowStep,
		// Call stacks grow on demand: every coroutine has one.
		MinimizeStackMemory: true,
	})
	e.L = L
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{
		{"", lua.OpenBase}, {"table", lua.OpenTable}, {"string", lua.OpenString},
		{"math", lua.OpenMath}, {"coroutine", lua.OpenCoroutine},
		{"cjson", e.openCjson}, {"struct", openStruct}, {"cmsgpack", e.openCmsgpack}, {"bit", openBit},
	} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	g := L.G.Global
	e.globals = g

	// Globals Redis does not give scripts.
	keep := map[string]bool{}
	for _, n := range globalNames {
		keep[n] = true
	}
	var drop []lua.LValue
	g.ForEach(func(k, _ lua.LValue) {
		if s, ok := k.(lua.LString); !ok || !keep[string(s)] {
			drop = append(drop, k)
		}
	})
	for _, k := range drop {
		g.RawSet(k, lua.LNil)
	}

	g.RawSetString("pcall", L.NewFunction(e.luaPcall))
	e.boundXpcall(L, g)
	g.RawSetString("gcinfo", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LNumber(e.vmBytes / 1024))
		return 1
	}))
	g.RawSetString("error", L.NewFunction(luaErrorFn))
	g.RawSetString("tostring", L.NewFunction(luaTostring))
	g.RawSetString("tonumber", L.NewFunction(luaTonumber))
	g.RawSetString("loadstring", L.NewFunction(e.luaLoadstring))
	g.RawSetString("unpack", L.NewFunction(e.luaUnpack))
	e.sources = map[string]string{"user_script": "@user_script"}

	redis := L.NewTable()
	set := func(name string, fn lua.LGFunction) { redis.RawSetString(name, L.NewFunction(fn)) }
	set("call", func(L *lua.LState) int { return e.redisCall(L, true) })
	set("pcall", func(L *lua.LState) int { return e.redisCall(L, false) })
	set("log", e.redisLog)
	redis.RawSetString("LOG_DEBUG", lua.LNumber(0))
	redis.RawSetString("LOG_VERBOSE", lua.LNumber(1))
	redis.RawSetString("LOG_NOTICE", lua.LNumber(2))
	redis.RawSetString("LOG_WARNING", lua.LNumber(3))
	redis.RawSetString("REDIS_VERSION_NUM", lua.LNumber(versionNum(e.opts.Version)))
	redis.RawSetString("REDIS_VERSION", lua.LString(e.opts.Version))
	set("setresp", e.redisSetResp)
	set("sha1hex", redisSha1hex)
	set("error_reply", redisErrorReply)
	set("status_reply", redisStatusReply)
	set("set_repl", e.redisSetRepl)
	redis.RawSetString("REPL_NONE", lua.LNumber(engine.ReplNone))
	redis.RawSetString("REPL_AOF", lua.LNumber(engine.ReplAOF))
	redis.RawSetString("REPL_SLAVE", lua.LNumber(engine.ReplReplica))
	redis.RawSetString("REPL_REPLICA", lua.LNumber(engine.ReplReplica))
	redis.RawSetString("REPL_ALL", lua.LNumber(engine.ReplAll))
	set("acl_check_cmd", e.redisACLCheckCmd)
	set("breakpoint", func(L *lua.LState) int { L.Push(lua.LFalse); return 1 })
	set("debug", func(L *lua.LState) int { return 0 })
	set("replicate_commands", func(L *lua.LState) int { L.Push(lua.LTrue); return 1 })
	g.RawSetString("redis", redis)

	math := g.RawGetString("math").(*lua.LTable)
	math.RawSetString("random", L.NewFunction(e.mathRandom))
	math.RawSetString("randomseed", L.NewFunction(e.mathRandomseed))

	e.boundCoroutines(L, g.RawGetString("coroutine").(*lua.LTable))
	numericStringArgs(L, g)

	e.errh = L.NewFunction(e.errHandler)
	g.RawSetString("__redis__err__handler", e.errh)

	e.protect(L, g)
}

// view makes a read-only view of real: an empty table whose metatable
// reads through index (real itself, or a function) and refuses writes.
func (e *Engine) view(real *lua.LTable, index lua.LValue) *lua.LTable {
	v := e.L.NewTable()
	mt := e.L.NewTable()
	mt.RawSetString("__index", index)
	mt.RawSetString("__newindex", e.refuse)
	v.Metatable = mt
	e.readonly[v] = real
	return v
}

// protect builds the read-only views and the builtins that respect them.
func (e *Engine) protect(L *lua.LState, g *lua.LTable) {
	e.readonly = map[*lua.LTable]*lua.LTable{}
	e.refuse = L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(errReadonly)
		return 0
	})
	view := e.view
	// The libraries' views, then the globals' (which name them).
	for _, name := range []string{"string", "table", "math", "coroutine", "redis", "cjson", "struct", "cmsgpack", "bit"} {
		if t, ok := g.RawGetString(name).(*lua.LTable); ok {
			g.RawSetString(name, view(t, t))
		}
	}
	strView := g.RawGetString("string").(*lua.LTable)
	if smt, ok := L.GetMetatable(lua.LString("")).(*lua.LTable); ok {
		smt.RawSetString("__index", strView)
		// getmetatable("") gives a view of the string metatable.
		smt.RawSetString("__metatable", view(smt, smt))
	}

	// Overridden builtins that know the views.
	real := func(v lua.LValue) lua.LValue {
		if t, ok := v.(*lua.LTable); ok {
			if r, ok := e.readonly[t]; ok {
				return r
			}
		}
		return v
	}
	// A builtin's refusal, as Lua's from a C function, says no line.
	writable := func(L *lua.LState, v lua.LValue) {
		if t, ok := v.(*lua.LTable); ok {
			if _, ro := e.readonly[t]; ro {
				L.Error(lua.LString(errReadonly), 0)
			}
		}
	}
	next := func(L *lua.LState) int {
		tb := L.CheckTable(1)
		t := real(tb).(*lua.LTable)
		k, v := t.Next(L.Get(2))
		if k == lua.LNil {
			L.Push(lua.LNil)
			return 1
		}
		L.Push(k)
		L.Push(v)
		return 2
	}
	nextFn := L.NewFunction(next)
	g.RawSetString("next", nextFn)
	g.RawSetString("pairs", L.NewFunction(func(L *lua.LState) int {
		tb := L.CheckTable(1)
		L.Push(nextFn)
		L.Push(tb)
		L.Push(lua.LNil)
		return 3
	}))
	g.RawSetString("rawget", L.NewFunction(func(L *lua.LState) int {
		tb := L.CheckTable(1)
		L.Push(real(tb).(*lua.LTable).RawGet(L.CheckAny(2)))
		return 1
	}))
	g.RawSetString("rawset", L.NewFunction(func(L *lua.LState) int {
		tb := L.CheckTable(1)
		writable(L, tb)
		tb.RawSet(L.CheckAny(2), L.CheckAny(3))
		L.SetTop(1)
		return 1
	}))
	g.RawSetString("setmetatable", L.NewFunction(func(L *lua.LState) int {
		tb := L.CheckTable(1)
		writable(L, tb)
		mt := L.Get(2)
		if m, ok := tb.Metatable.(*lua.LTable); ok && m.RawGetString("__metatable") != lua.LNil {
			L.RaiseError("cannot change a protected metatable")
		}
		if mt.Type() != lua.LTNil && mt.Type() != lua.LTTable {
			L.ArgError(2, "nil or table expected")
		}
		L.SetMetatable(tb, mt)
		L.SetTop(1)
		return 1
	}))
	var envMT lua.LValue // the view of the globals' metatable, made below
	g.RawSetString("getmetatable", L.NewFunction(func(L *lua.LState) int {
		v := L.CheckAny(1)
		if t, ok := v.(*lua.LTable); ok {
			if r, ro := e.readonly[t]; ro {
				if r == g {
					L.Push(envMT) // a view: Redis's is read-only too
				} else {
					L.Push(lua.LNil)
				}
				return 1
			}
		}
		L.Push(L.GetMetatable(v))
		return 1
	}))
	tbl := e.readonly[g.RawGetString("table").(*lua.LTable)]
	for _, name := range []string{"insert", "remove", "sort", "setn"} {
		orig, ok := tbl.RawGetString(name).(*lua.LFunction)
		if !ok {
			continue
		}
		tbl.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			writable(L, L.Get(1))
			top := L.GetTop()
			L.Push(orig)
			for i := 1; i <= top; i++ {
				L.Push(L.Get(i))
			}
			L.Call(top, lua.MultRet)
			return L.GetTop() - top
		}))
	}

	// The globals' view: reading a missing name is an error, as writing.
	// The view reads through to the globals as a table, and the globals'
	// own metatable raises the error for a name they miss: a global that
	// exists (redis, KEYS) is then found without a call. Through a
	// function, every read of one was a Go call and an allocation, a
	// tenth of a small EVALSHA's time. Scripts see the metatable Redis
	// gives _G, whose __index is a function.
	index := L.NewFunction(func(L *lua.LState) int {
		k := L.Get(2)
		v := g.RawGet(k)
		if v == lua.LNil {
			L.RaiseError("%s%s'", errNonexistentFmt, luaToString(k))
		}
		L.Push(v)
		return 1
	})
	missing := L.NewTable()
	missing.RawSetString("__index", index)
	g.Metatable = missing
	env := view(g, g)
	shown := L.NewTable()
	shown.RawSetString("__index", index)
	shown.RawSetString("__newindex", e.refuse)
	envMT = view(shown, shown)
	g.RawSetString("_G", env)
	e.env = env
	L.G.Global = g
	L.Env = env
}

// numberArgs are the library functions whose arguments at these
// positions (all of them when none is given) Lua 5.1 reads with
// luaL_checknumber or luaL_checkint, which take a string holding a
// number: a script passes ARGV, always strings, to string.sub or
// math.randomseed as it is. gopher-lua's take numbers only.
var numberArgs = []struct {
	lib, name string
	pos       []int
}{
	{"", "select", []int{1}}, {"", "unpack", []int{2, 3}},
	{"string", "byte", []int{2, 3}}, {"string", "char", nil}, {"string", "find", []int{3}},
	{"string", "gsub", []int{4}}, {"string", "match", []int{3}}, {"string", "rep", []int{2}},
	{"string", "sub", []int{2, 3}},
	{"table", "concat", []int{3, 4}}, {"table", "remove", []int{2}},
	{"math", "abs", nil}, {"math", "acos", nil}, {"math", "asin", nil}, {"math", "atan", nil},
	{"math", "atan2", nil}, {"math", "ceil", nil}, {"math", "cos", nil}, {"math", "cosh", nil},
	{"math", "deg", nil}, {"math", "exp", nil}, {"math", "floor", nil}, {"math", "fmod", nil},
	{"math", "frexp", nil}, {"math", "ldexp", nil}, {"math", "log", nil}, {"math", "log10", nil},
	{"math", "max", nil}, {"math", "min", nil}, {"math", "modf", nil}, {"math", "pow", nil},
	{"math", "rad", nil}, {"math", "random", nil}, {"math", "randomseed", nil}, {"math", "sin", nil},
	{"math", "sinh", nil}, {"math", "sqrt", nil}, {"math", "tan", nil}, {"math", "tanh", nil},
}

// numericStringArgs wraps the functions of numberArgs so that a string
// holding a number is passed on as the number; table.insert's position
// too, when it has one.
func numericStringArgs(L *lua.LState, g *lua.LTable) {
	convert := func(L *lua.LState, i int) {
		if s, ok := L.Get(i).(lua.LString); ok {
			if n, err := parseLuaNumber(string(s)); err == nil {
				L.Replace(i, n)
			}
		}
	}
	wrap := func(fn lua.LValue, positions func(L *lua.LState) []int) *lua.LFunction {
		// The Go function runs in the wrapper's frame, not one of its
		// own: its errors name it as the script called it ('sub').
		g := fn.(*lua.LFunction).GFunction
		return L.NewFunction(func(L *lua.LState) int {
			top := L.GetTop()
			if pos := positions(L); pos == nil {
				for i := 1; i <= top; i++ {
					convert(L, i)
				}
			} else {
				for _, i := range pos {
					if i <= top {
						convert(L, i)
					}
				}
			}
			return g(L)
		})
	}
	for _, f := range numberArgs {
		lib := g
		if f.lib != "" {
			lib = g.RawGetString(f.lib).(*lua.LTable)
		}
		pos := f.pos
		if fn := lib.RawGetString(f.name); fn.Type() == lua.LTFunction {
			lib.RawSetString(f.name, wrap(fn, func(*lua.LState) []int { return pos }))
		}
	}
	table := g.RawGetString("table").(*lua.LTable)
	table.RawSetString("insert", wrap(table.RawGetString("insert"), func(L *lua.LState) []int {
		if L.GetTop() == 3 {
			return []int{2}
		}
		return []int{}
	}))
}

// enterCCall counts one more nested call that C Lua makes through its C
// stack (a pcall, xpcall or coroutine resume) and returns its end. Past
// maxCCalls it raises Lua's "C stack overflow", as LUAI_MAXCCALLS does:
// without the bound, a pcall recursing into itself nests until the call
// stack's 20,000 frames, and unwinding that takes seconds under the lock.
// A pcall or xpcall counts against one less than a resume does (limit),
// as in Redis's Lua, where the script's own call is made through lua_pcall:
// a function that pcalls itself runs 199 times, one that resumes itself
// in a new coroutine 200 times.
func (e *Engine) enterCCall(L *lua.LState, limit int) func() {
	if e.cCalls >= limit {
		L.RaiseError("C stack overflow")
	}
	e.cCalls++
	return func() { e.cCalls-- }
}

// boundXpcall replaces xpcall with one whose nesting enterCCall bounds.
func (e *Engine) boundXpcall(L *lua.LState, g *lua.LTable) {
	xpcall := g.RawGetString("xpcall").(*lua.LFunction)
	g.RawSetString("xpcall", L.NewFunction(func(L *lua.LState) int {
		defer e.enterCCall(L, maxCCalls-1)()
		top := L.GetTop()
		L.Insert(xpcall, 1)
		L.Call(top, lua.MultRet)
		return L.GetTop()
	}))
}

// boundCoroutines replaces coroutine.resume and coroutine.wrap with
// versions that stop at maxCCalls nested resumes, as Lua's C
// stack does ("C stack overflow"): each resume nests Go calls, and each
// coroutine has stacks of its own.
func (e *Engine) boundCoroutines(L *lua.LState, co *lua.LTable) {
	resume := co.RawGetString("resume").(*lua.LFunction)
	create := co.RawGetString("create").(*lua.LFunction)
	// call runs resume(args...), depth checked, and returns the number
	// of its results, left on the stack above what was there.
	call := func(L *lua.LState, args []lua.LValue) int {
		defer e.enterCCall(L, maxCCalls)()
		// The run's watch goes on inside the coroutine (runCtx).
		if rc, ok := L.Context().(*runCtx); ok && len(args) > 0 {
			if th, ok := args[0].(*lua.LState); ok && th.Context() != rc {
				th.SetContext(rc)
			}
		}
		top := L.GetTop()
		L.Push(resume)
		for _, a := range args {
			L.Push(a)
		}
		L.Call(len(args), lua.MultRet)
		return L.GetTop() - top
	}
	args := func(L *lua.LState, first lua.LValue) []lua.LValue {
		var out []lua.LValue
		if first != nil {
			out = append(out, first)
		}
		for i := 1; i <= L.GetTop(); i++ {
			out = append(out, L.Get(i))
		}
		return out
	}
	co.RawSetString("resume", L.NewFunction(func(L *lua.LState) int {
		return call(L, args(L, nil))
	}))
	co.RawSetString("wrap", L.NewFunction(func(L *lua.LState) int {
		L.CheckFunction(1)
		L.Push(create)
		L.Push(L.Get(1))
		L.Call(1, 1)
		th := L.Get(-1)
		L.Pop(1)
		L.Push(L.NewFunction(func(L *lua.LState) int {
			top := L.GetTop()
			n := call(L, args(L, th))
			if !lua.LVAsBool(L.Get(top + 1)) {
				// As Lua's auxwrap: a message gets the position of
				// the caller.
				msg := L.Get(top + 2)
				if s, ok := msg.(lua.LString); ok {
					L.RaiseError("%s", string(s))
				}
				L.Error(msg, 0)
			}
			return n - 1
		}))
		return 1
	}))
}

// errHandler is __redis__err__handler: it makes the error a table
// {err=...} and records where it happened (the script's line).
func (e *Engine) errHandler(L *lua.LState) int {
	err := L.Get(1)
	t, ok := err.(*lua.LTable)
	if !ok {
		t = L.NewTable()
		t.RawSetString("err", lua.LString("ERR "+luaToString(err)))
	}
	for lv := 1; lv <= 2; lv++ {
		dbg, ok := L.GetStack(lv)
		if !ok {
			break
		}
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err != nil {
			break
		}
		if dbg.What == "G" {
			continue
		}
		src := dbg.Source
		if orig, ok := e.sources[src]; ok {
			src = orig
		}
		t.RawSetString("source", lua.LString(src))
		t.RawSetString("line", lua.LNumber(dbg.CurrentLine))
		break
	}
	L.Push(t)
	return 1
}

// luaErrorFn is error(obj [, level]): as Lua's, a message gets the
// position of the function at level, if that is a Lua function (Lua's
// luaL_where: none for the C code that called the script), and any value
// may be raised, nil included.
func luaErrorFn(L *lua.LState) int {
	obj := L.Get(1)
	level := L.OptInt(2, 1)
	if s, ok := obj.(lua.LString); ok && level > 0 {
		if dbg, ok := L.GetStack(level); ok {
			if _, err := L.GetInfo("Sl", dbg, lua.LNil); err == nil && dbg.What != "G" && dbg.CurrentLine > 0 {
				obj = lua.LString(dbg.Source + ":" + strconv.Itoa(dbg.CurrentLine) + ": " + string(s))
			}
		}
	}
	L.Error(obj, 0)
	return 0
}

// maxUnpack is how many results unpack gives at most: Lua 5.1's C stack
// (LUAI_MAXCSTACK) refuses more.
const maxUnpack = 8000

// luaUnpack is unpack, with Lua's bound on its results.
func (e *Engine) luaUnpack(L *lua.LState) int {
	t := e.realTable(L.CheckTable(1))
	i := L.OptInt(2, 1)
	j := L.OptInt(3, t.Len())
	if i > j {
		return 0
	}
	n := j - i + 1
	if n <= 0 || n >= maxUnpack {
		L.RaiseError("too many results to unpack")
	}
	for k := i; k <= j; k++ {
		L.Push(t.RawGetInt(k))
	}
	return n
}

// maxSources bounds the names of loadstring chunks kept for errors.
const maxSources = 1024

// luaLoadstring is loadstring with Lua's chunk names: the source itself,
// shown as [string "..."] in messages.
func (e *Engine) luaLoadstring(L *lua.LState) int {
	src := L.CheckString(1)
	name := L.OptString(2, src)
	shown := chunkID(name)
	if len(e.sources) >= maxSources {
		e.sources = map[string]string{"user_script": "@user_script"}
	}
	e.sources[shown] = name
	fn, err := L.Load(strings.NewReader(src), shown)
	if err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(err.Error()))
		return 2
	}
	L.Push(fn)
	return 1
}

// chunkID is luaO_chunkid: how a chunk's name shows in messages.
func chunkID(source string) string {
	const idsize = 60
	switch {
	case strings.HasPrefix(source, "="):
		return trunc(source[1:], idsize-1)
	case strings.HasPrefix(source, "@"):
		s := source[1:]
		if len(s) > idsize-1-3 {
			s = "..." + s[len(s)-(idsize-1-3):]
		}
		return s
	}
	room := idsize - (9 + 3 + 2) - 1
	l := strings.IndexAny(source, "\n\r")
	if l < 0 {
		l = len(source)
	}
	if l > room {
		l = room
	}
	if l < len(source) {
		return "[string \"" + source[:l] + "...\"]"
	}
	return "[string \"" + source + "\"]"
}

// luaTostring is tostring with Lua 5.1's "%.14g" for numbers (gopher-lua
// writes Go's shortest form).
func luaTostring(L *lua.LState) int {
	v := L.CheckAny(1)
	if n, ok := v.(lua.LNumber); ok {
		L.Push(lua.LString(fmtNumber(float64(n))))
		return 1
	}
	L.Push(L.ToStringMeta(v))
	return 1
}

// luaPcall is Redis's pcall: an error table ({err=...}) is given back as
// its message, as before 7.0 when errors were strings.
func (e *Engine) luaPcall(L *lua.LState) int {
	L.CheckAny(1)
	v := L.Get(1)
	if v.Type() != lua.LTFunction && L.GetMetaField(v, "__call").Type() != lua.LTFunction {
		L.Push(lua.LFalse)
		L.Push(lua.LString("attempt to call a " + v.Type().String() + " value"))
		return 2
	}
	nargs := L.GetTop() - 1
	defer e.enterCCall(L, maxCCalls-1)()
	if err := L.PCall(nargs, lua.MultRet, nil); err != nil {
		if ae, ok := err.(*lua.ApiError); ok && e.stopReason() != "" {
			// The server is stopping the script: no pcall may catch it.
			L.RaiseError("%s", ae.Object.String())
		}
		L.Push(lua.LFalse)
		if ae, ok := err.(*lua.ApiError); ok {
			obj := ae.Object
			if t, ok := obj.(*lua.LTable); ok {
				if m := t.RawGetString("err"); isStringish(m) {
					obj = m
				}
			}
			L.Push(obj)
		} else {
			L.Push(lua.LString(err.Error()))
		}
		return 2
	}
	L.Insert(lua.LTrue, 1)
	return L.GetTop()
}

// pushErrorTable makes the error table of redis.pcall (luaPushErrorBuff):
// "-CODE msg" keeps its code, a message without one gets ERR.
func newErrorTable(L *lua.LState, msg string) *lua.LTable {
	var final string
	if strings.HasPrefix(msg, "-") {
		code, rest, ok := strings.Cut(msg[1:], " ")
		if !ok {
			final = "ERR " + strings.Trim(msg[1:], "\r\n")
		} else {
			final = code + " " + strings.Trim(rest, "\r\n")
		}
	} else {
		final = "ERR " + strings.Trim(msg, "\r\n")
	}
	t := L.NewTable()
	t.RawSetString("err", lua.LString(final))
	return t
}

// argsOf converts redis.call's arguments (luaArgsToRedisArgv): strings
// as they are, numbers as %.17g; anything else is refused. They are
// copied into buffers the engine reuses from call to call, as Redis
// reuses its lua_argv: a called command keeps nothing of its arguments
// without copying it (its context does not own them, engine.Ctx.OwnsArg),
// and the propagated form is a copy too.
func (e *Engine) argsOf(L *lua.LState) ([][]byte, string) {
	n := L.GetTop()
	if n == 0 {
		return nil, "Please specify at least one argument for this redis lib call"
	}
	buf, ends := e.argBytes[:0], e.argEnds[:0]
	if buf == nil {
		buf = make([]byte, 0, 256) // an empty argument is not a nil one
	}
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LNumber:
			buf = resp.AppendDouble(buf, float64(v))
		case lua.LString:
			buf = append(buf, v...)
		default:
			return nil, "Lua redis lib command arguments must be strings or integers"
		}
		ends = append(ends, len(buf))
	}
	args := e.args[:0]
	start := 0
	for _, end := range ends {
		// Capped at its end: a command that appends to an argument
		// does not write over the next.
		args = append(args, buf[start:end:end])
		start = end
	}
	e.argBytes, e.argEnds, e.args = buf, ends, args
	return args, ""
}

// doneWithArgs is called once a call is done with what argsOf returned:
// buffers larger than a call needs kept for the next are let go, so that
// a large value a script wrote is not held until its next call.
func (e *Engine) doneWithArgs() {
	if cap(e.argBytes) > maxKeptArgBytes || cap(e.args) > maxKeptArgs {
		e.argBytes, e.argEnds, e.args = nil, nil, nil
	}
}

// redisCall is redis.call (raise) and redis.pcall (luaRedisGenericCommand).
func (e *Engine) redisCall(L *lua.LState, raise bool) int {
	if !e.running {
		L.Error(newErrorTable(L, "redis.call/pcall can only be called inside a script invocation"), 1)
	}
	args, msg := e.argsOf(L)
	if msg != "" {
		t := newErrorTable(L, msg)
		if raise {
			L.Error(t, 1)
		}
		L.Push(t)
		return 1
	}
	L.SetTop(0)
	reply, refused := e.run.Caller().D.ScriptCall(&e.run, args)
	e.doneWithArgs()
	if refused != "" {
		t := newErrorTable(L, "-"+refused)
		t.RawSetString("ignore_error_stats_update", lua.LTrue)
		if raise {
			L.Error(t, 1)
		}
		L.Push(t)
		return 1
	}
	v, _ := respToLua(L, reply)
	if raise && len(reply) > 0 && reply[0] == '-' {
		L.Error(v, 1)
	}
	L.Push(v)
	return 1
}

// redisLog is redis.log(level, msg ...).
func (e *Engine) redisLog(L *lua.LState) int {
	argc := L.GetTop()
	if argc < 2 {
		L.Error(newErrorTable(L, "redis.log() requires two arguments or more."), 1)
	}
	lv, ok := L.Get(1).(lua.LNumber)
	if !ok {
		if s, isStr := L.Get(1).(lua.LString); isStr {
			if n, err := parseLuaNumber(string(s)); err == nil {
				lv, ok = n, true
			}
		}
	}
	if !ok {
		L.Error(newErrorTable(L, "First argument must be a number (log level)."), 1)
	}
	level := int(lv)
	if level < 0 || level > 3 {
		L.Error(newErrorTable(L, "Invalid debug level."), 1)
	}
	if e.opts.Log == nil {
		return 0
	}
	var b strings.Builder
	for i := 2; i <= argc; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString, lua.LNumber:
			if i != 2 {
				b.WriteByte(' ')
			}
			b.WriteString(luaToString(v))
		}
	}
	e.opts.Log(level, b.String())
	return 0
}

// redisSetResp is redis.setresp(2|3): the protocol of the replies
// redis.call hands the script (RESP3's types become the tables
// respToLua describes), for the rest of this run.
func (e *Engine) redisSetResp(L *lua.LState) int {
	if !e.running {
		L.Error(newErrorTable(L, "redis.setresp can only be called inside a script invocation"), 1)
	}
	if L.GetTop() != 1 {
		L.Error(newErrorTable(L, "redis.setresp() requires one argument."), 1)
	}
	n := int(luaToNumber(L.Get(1)))
	if n != 2 && n != 3 {
		L.Error(newErrorTable(L, "RESP version must be 2 or 3."), 1)
	}
	e.run.SetResp(n)
	return 0
}

func redisSha1hex(L *lua.LState) int {
	if L.GetTop() != 1 {
		L.Error(newErrorTable(L, "wrong number of arguments"), 1)
	}
	s := ""
	switch v := L.Get(1).(type) {
	case lua.LString, lua.LNumber:
		s = luaToString(v)
	}
	L.Push(lua.LString(Sha1Hex([]byte(s))))
	return 1
}

func redisErrorReply(L *lua.LState) int {
	s, ok := L.Get(-1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(newErrorTable(L, "wrong number or type of arguments"))
		return 1
	}
	msg := string(s)
	if !strings.HasPrefix(msg, "-") {
		msg = "-" + msg
	}
	L.Push(newErrorTable(L, msg))
	return 1
}

func redisStatusReply(L *lua.LState) int {
	s, ok := L.Get(-1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(newErrorTable(L, "wrong number or type of arguments"))
		return 1
	}
	t := L.NewTable()
	t.RawSetString("ok", s)
	L.Push(t)
	return 1
}

func (e *Engine) redisSetRepl(L *lua.LState) int {
	if !e.running {
		L.Error(newErrorTable(L, "redis.set_repl can only be called inside a script invocation"), 1)
	}
	if L.GetTop() != 1 {
		L.Error(newErrorTable(L, "redis.set_repl() requires two arguments."), 1)
	}
	flags := int(luaToNumber(L.Get(-1)))
	if flags&^engine.ReplAll != 0 {
		L.Error(newErrorTable(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE."), 1)
	}
	e.run.SetRepl(flags)
	return 0
}

func (e *Engine) redisACLCheckCmd(L *lua.LState) int {
	if !e.running {
		L.Error(newErrorTable(L, "redis.acl_check_cmd can only be called inside a script invocation"), 1)
	}
	args, msg := e.argsOf(L)
	if msg != "" {
		L.Error(newErrorTable(L, msg), 1)
	}
	c := e.run.Caller()
	ok, known := c.D.ACLCheckCommand(c.Client.User, args)
	e.doneWithArgs()
	if !known {
		L.Error(newErrorTable(L, "Invalid command passed to redis.acl_check_cmd()"), 1)
	}
	L.Push(lua.LBool(ok))
	return 1
}

// mathRandom is Redis's math.random: Lua's, over redisLrand48.
func (e *Engine) mathRandom(L *lua.LState) int {
	const max = 2147483647
	r := float64(e.rand.next()%max) / float64(max)
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(r))
	case 1:
		u := L.CheckInt(1)
		if u < 1 {
			L.ArgError(1, "interval is empty")
		}
		L.Push(lua.LNumber(floor(r*float64(u)) + 1))
	case 2:
		l := L.CheckInt(1)
		u := L.CheckInt(2)
		if l > u {
			L.ArgError(2, "interval is empty")
		}
		L.Push(lua.LNumber(floor(r*float64(u-l+1)) + float64(l)))
	default:
		L.RaiseError("wrong number of arguments")
	}
	return 1
}

func (e *Engine) mathRandomseed(L *lua.LState) int {
	e.rand.seed(int32(L.CheckInt(1)))
	return 0
}
