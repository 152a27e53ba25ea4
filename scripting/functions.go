package scripting

import (
	"slices"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/sds"
)

// Functions (Redis 7.0 functions.c and function_lua.c): libraries of
// named Lua functions, loaded with FUNCTION LOAD and called with FCALL.
// They run in a VM of their own, with the Redis environment of scripts,
// but no KEYS and ARGV: a function gets its keys and arguments as its
// two parameters. While a library's code runs at load, its globals show
// only redis.register_function, redis.log and the version fields, and it
// may run for 500 ms at most.

// Errors of functions.c and function_lua.c, with 7.0's texts (the
// function name check says "Library names" as 7.0 does).
const (
	ErrFunctionNotFound  = "ERR Function not found"
	ErrLibraryNotFound   = "ERR Library not found"
	ErrBadNumkeys        = "ERR Bad number of keys provided"
	ErrFunctionFlushMode = "ERR FUNCTION FLUSH only supports SYNC|ASYNC option"
	errBadName           = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"
	errLoadTimeout       = "FUNCTION LOAD timeout"
)

// LoadTimeout is how long a library's code may run at load (Redis's
// LOAD_TIMEOUT_MS); the master's stream and the AOF load without one.
const LoadTimeout = 500 * time.Millisecond

// Library is one loaded library: its code as given and its functions.
type Library struct {
	Name      string
	Code      string
	Functions map[string]*Function
}

// Function is one function a library registered.
type Function struct {
	Name  string
	Desc  string // "" with HasDesc false: none given
	Flags engine.ScriptFlags
	lib   *Library
	fn    *lua.LFunction

	HasDesc bool
}

// Functions is a server's function libraries and the VM they run in.
// Used under the keyspace lock only (but Interrupt).
type Functions struct {
	*Engine
	libSet
	env     *lua.LTable // the libraries' globals: the load API while one loads, the Redis environment after
	loadAPI *lua.LTable // what a library sees while it loads
	loading *Library    // the library whose code runs now (register_function)
}

// libSet is a set of libraries and the functions they registered
// (Redis's functionsLibCtx), function names unique across them. As in
// Redis, a function's name is matched without regard to case (funcs is
// keyed by its lower-case form), in FCALL and across libraries, but with
// it inside a library.
type libSet struct {
	libs  map[string]*Library
	funcs map[string]*Function
}

func newLibSet() libSet {
	return libSet{libs: map[string]*Library{}, funcs: map[string]*Function{}}
}

// NewFunctions makes the function libraries of a server, with a VM of
// their own.
func NewFunctions(opts Options) *Functions {
	f := &Functions{Engine: New(opts)}
	f.reset()
	return f
}

// reset empties the libraries and starts a fresh VM.
func (f *Functions) reset() {
	f.Engine.reset()
	f.libSet = newLibSet()
	L := f.L
	f.sources["user_function"] = "@user_function"

	view := f.view
	// The load API: redis.register_function, redis.log and its levels,
	// the version fields.
	api := L.NewTable()
	runtime := f.readonly[f.globals.RawGetString("redis").(*lua.LTable)]
	for _, name := range []string{"log", "LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING", "REDIS_VERSION", "REDIS_VERSION_NUM"} {
		api.RawSetString(name, runtime.RawGetString(name))
	}
	api.RawSetString("register_function", L.NewFunction(f.registerFunction))
	// As the globals, a missing field of this redis table is an error.
	apiIndex := L.NewFunction(func(L *lua.LState) int {
		k := L.Get(2)
		v := api.RawGet(k)
		if v == lua.LNil {
			L.RaiseError("%s%s'", errNonexistentFmt, luaToString(k))
		}
		L.Push(v)
		return 1
	})
	loadGlobals := L.NewTable()
	loadGlobals.RawSetString("redis", view(api, apiIndex))
	f.loadAPI = loadGlobals

	// One globals table for every library, so that the functions a
	// library registers see the Redis environment once it is loaded.
	index := L.NewFunction(func(L *lua.LState) int {
		k := L.Get(2)
		from := f.globals
		if f.loading != nil {
			from = f.loadAPI
		}
		v := from.RawGet(k)
		if v == lua.LNil {
			L.RaiseError("%s%s'", errNonexistentFmt, luaToString(k))
		}
		L.Push(v)
		return 1
	})
	f.env = view(f.globals, index)
}

// Flush drops every library and starts a fresh VM (FUNCTION FLUSH).
func (f *Functions) Flush() { f.reset() }

// Libraries returns the libraries in name order.
func (f *Functions) Libraries() []*Library { return f.sortedLibraries() }

func (s *libSet) sortedLibraries() []*Library {
	out := make([]*Library, 0, len(s.libs))
	for _, l := range s.libs {
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b *Library) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// SortedFunctions returns the library's functions in name order.
func (l *Library) SortedFunctions() []*Function {
	out := make([]*Function, 0, len(l.Functions))
	for _, fn := range l.Functions {
		out = append(out, fn)
	}
	slices.SortFunc(out, func(a, b *Function) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Codes returns the code of every library, in name order: what an RDB
// file, an AOF rewrite and FUNCTION DUMP hold.
func (f *Functions) Codes() []string {
	var out []string
	for _, l := range f.Libraries() {
		out = append(out, l.Code)
	}
	return out
}

// Counts are number_of_libraries and number_of_functions.
func (f *Functions) Counts() (libs, funcs int) { return len(f.libs), len(f.funcs) }

// Lookup returns the function named name, nil when there is none.
func (f *Functions) Lookup(name string) *Function { return f.lookup(name) }

// Delete drops the library named name (FUNCTION DELETE); false when
// there is none.
func (f *Functions) Delete(name string) bool {
	l, ok := f.libs[name]
	if !ok {
		return false
	}
	f.unlink(l)
	return true
}

func (s *libSet) unlink(l *Library) {
	for name := range l.Functions {
		delete(s.funcs, strings.ToLower(name))
	}
	delete(s.libs, l.Name)
}

func (s *libSet) link(l *Library) {
	for name, fn := range l.Functions {
		s.funcs[strings.ToLower(name)] = fn
	}
	s.libs[l.Name] = l
}

// lookup is the function named name, in any case.
func (s *libSet) lookup(name string) *Function { return s.funcs[strings.ToLower(name)] }

// Load compiles a library and runs its code to register its functions
// (functionsCreateWithLibraryCtx): replace lets it take the place of a
// library of the same name; timeout bounds the run (0: none). It returns
// the library's name, or the error to reply.
func (f *Functions) Load(code string, replace bool, timeout time.Duration) (name, errMsg string) {
	return f.loadInto(&f.libSet, code, replace, timeout)
}

func (f *Functions) loadInto(set *libSet, code string, replace bool, timeout time.Duration) (name, errMsg string) {
	name, body, errMsg := libraryMetadata(code)
	if errMsg != "" {
		return "", errMsg
	}
	if !validName(name) {
		return "", "ERR " + errBadName
	}
	old := set.libs[name]
	if old != nil && !replace {
		return "", "ERR Library '" + name + "' already exists"
	}
	lib, errMsg := f.create(name, code, body, timeout)
	if errMsg != "" {
		return "", errMsg
	}
	if len(lib.Functions) == 0 {
		return "", "ERR No functions registered"
	}
	for fname := range lib.Functions {
		if other := set.lookup(fname); other != nil && other.lib != old {
			return "", "ERR Function " + fname + " already exists"
		}
	}
	if old != nil {
		set.unlink(old)
	}
	set.link(lib)
	return name, ""
}

// Restore policies of FUNCTION RESTORE.
const (
	RestoreAppend = iota
	RestoreReplace
	RestoreFlush
)

// Restore loads the libraries of codes (FUNCTION RESTORE's payload) into
// a set of their own, then, as policy says, puts them in place of every
// library (RestoreFlush) or adds them, refusing a library that exists
// (RestoreAppend) or replacing it (RestoreReplace); on a conflict nothing
// changes. It returns the error to reply, "" on success.
func (f *Functions) Restore(codes []string, policy int) string {
	set := newLibSet()
	for _, code := range codes {
		if _, msg := f.loadInto(&set, code, false, 0); msg != "" {
			return msg
		}
	}
	if policy == RestoreFlush {
		f.libSet = set
		return ""
	}
	var replaced []*Library
	revert := func() {
		for _, l := range replaced {
			f.link(l)
		}
	}
	restored := set.sortedLibraries()
	for _, l := range restored {
		if old := f.libs[l.Name]; old != nil {
			if policy != RestoreReplace {
				revert()
				return "ERR Library " + l.Name + " already exists"
			}
			f.unlink(old)
			replaced = append(replaced, old)
		}
	}
	for _, l := range restored {
		for _, fn := range l.SortedFunctions() {
			if f.lookup(fn.Name) != nil {
				revert()
				return "ERR Function " + fn.Name + " already exists"
			}
		}
	}
	for _, l := range restored {
		f.link(l)
	}
	return ""
}

// libraryMetadata reads the shebang line of a library's code
// (functionExtractLibMetaData): "#!lua name=<name>". body is the code
// from the line's end on, its newline kept so that lines keep their
// numbers.
func libraryMetadata(code string) (name, body, errMsg string) {
	if !strings.HasPrefix(code, "#!") {
		return "", "", "ERR Missing library metadata"
	}
	end := strings.IndexByte(code, '\n')
	if end < 0 {
		return "", "", "ERR Invalid library metadata"
	}
	parts, ok := sds.SplitArgs(code[:end])
	if !ok || len(parts) == 0 {
		return "", "", "ERR Invalid library metadata"
	}
	named := false
	for _, p := range parts[1:] {
		if len(p) >= 5 && strings.EqualFold(p[:5], "name=") {
			if named {
				return "", "", "ERR Invalid metadata value, name argument was given multiple times"
			}
			name, named = p[5:], true
			continue
		}
		return "", "", "ERR Invalid metadata value given: " + p
	}
	if !named {
		return "", "", "ERR Library name was not given"
	}
	if eng := parts[0][2:]; !strings.EqualFold(eng, "lua") {
		return "", "", "ERR Engine '" + eng + "' not found"
	}
	return name, code[end:], ""
}

// validName is functionsVerifyName: letters, digits and underscores, at
// least one.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// create compiles body and runs it with the load API, collecting the
// functions it registers (luaEngineCreate).
func (f *Functions) create(name, code, body string, timeout time.Duration) (*Library, string) {
	L := f.L
	fn, err := L.Load(strings.NewReader(body), "user_function")
	if err != nil {
		return nil, "ERR Error compiling function: " + compileErrorIn(err, []byte(body), "user_function")
	}
	fn.Env = f.env
	if !argWord.MatchString(body) {
		noArgTable(fn.Proto)
	}
	lib := &Library{Name: name, Code: code, Functions: map[string]*Function{}}
	f.loading = lib
	rc := newRunCtx(nil, nil)
	if timeout > 0 {
		rc.deadline = time.Now().Add(timeout)
	}
	L.SetTop(0)
	L.SetContext(rc)
	L.Push(fn)
	err = L.PCall(0, 0, nil)
	L.RemoveContext()
	rc.stop("ended")
	f.loading = nil
	if err != nil {
		msg := "ERR " + err.Error()
		if ae, ok := err.(*lua.ApiError); ok {
			msg = "ERR " + luaToString(ae.Object)
			if t, ok := ae.Object.(*lua.LTable); ok {
				msg = cString(luaToString(t.RawGetString("err")))
			}
		}
		if rc.timedOut {
			msg = "ERR " + errLoadTimeout
		}
		L.SetTop(0)
		return nil, "ERR Error registering functions: " + msg
	}
	f.vmBytes += (int64(len(body))*2 + 1023) / 1024 * 1024
	return lib, ""
}

// registerFunction is redis.register_function(name, callback) or
// redis.register_function{function_name=..., callback=..., flags={...},
// description=...}, at load only (luaRegisterFunction).
func (f *Functions) registerFunction(L *lua.LState) int {
	fail := func(msg string) int {
		L.Error(newErrorTable(L, msg), 0)
		return 0
	}
	lib := f.loading
	if lib == nil {
		return fail("redis.register_function can only be called on FUNCTION LOAD command")
	}
	fn := &Function{lib: lib}
	switch L.GetTop() {
	case 1:
		t, ok := L.Get(1).(*lua.LTable)
		if !ok {
			return fail("calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).")
		}
		named := false
		for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
			if !isStringish(k) {
				return fail("named argument key given to redis.register_function is not a string")
			}
			switch key := luaToString(k); {
			case strings.EqualFold(key, "function_name"):
				if !isStringish(v) {
					return fail("function_name argument given to redis.register_function must be a string")
				}
				fn.Name, named = luaToString(v), true
			case strings.EqualFold(key, "description"):
				if !isStringish(v) {
					return fail("description argument given to redis.register_function must be a string")
				}
				fn.Desc, fn.HasDesc = luaToString(v), true
			case strings.EqualFold(key, "callback"):
				cb, ok := v.(*lua.LFunction)
				if !ok {
					return fail("callback argument given to redis.register_function must be a function")
				}
				fn.fn = cb
			case strings.EqualFold(key, "flags"):
				ft, ok := v.(*lua.LTable)
				if !ok {
					return fail("flags argument to redis.register_function must be a table representing function flags")
				}
				flags, ok := functionFlags(ft)
				if !ok {
					return fail("unknown flag given")
				}
				fn.Flags = flags
			default:
				return fail("unknown argument given to redis.register_function")
			}
		}
		if !named {
			return fail("redis.register_function must get a function name argument")
		}
		if fn.fn == nil {
			return fail("redis.register_function must get a callback argument")
		}
	case 2:
		if !isStringish(L.Get(1)) {
			return fail("first argument to redis.register_function must be a string")
		}
		cb, ok := L.Get(2).(*lua.LFunction)
		if !ok {
			return fail("second argument to redis.register_function must be a function")
		}
		fn.Name, fn.fn = luaToString(L.Get(1)), cb
	default:
		return fail("wrong number of arguments to redis.register_function")
	}
	if !validName(fn.Name) {
		return fail(errBadName)
	}
	if lib.Functions[fn.Name] != nil {
		return fail("Function already exists in the library")
	}
	lib.Functions[fn.Name] = fn
	return 0
}

// functionFlags reads a flags table, {"no-writes", ...}, case-insensitive
// (luaRegisterFunctionReadFlags); ok is false for an unknown flag.
func functionFlags(t *lua.LTable) (flags engine.ScriptFlags, ok bool) {
	for i := 1; ; i++ {
		v := t.RawGetInt(i)
		if v == lua.LNil {
			return flags, true
		}
		if !isStringish(v) {
			return 0, false
		}
		found := false
		for _, fl := range flagNames {
			if strings.EqualFold(fl.name, luaToString(v)) {
				flags |= fl.flag
				found = true
				break
			}
		}
		if !found {
			return 0, false
		}
	}
}

// flagNames are the script flags as Redis names them, in its order
// (scripts_flags_def): FUNCTION LIST shows them so.
var flagNames = []struct {
	flag engine.ScriptFlags
	name string
}{
	{engine.ScriptNoWrites, "no-writes"},
	{engine.ScriptAllowOOM, "allow-oom"},
	{engine.ScriptAllowStale, "allow-stale"},
	{engine.ScriptNoCluster, "no-cluster"},
	{engine.ScriptAllowCrossSlot, "allow-cross-slot-keys"},
}

// FlagNames are the names of flags, in Redis's order.
func FlagNames(flags engine.ScriptFlags) []string {
	var out []string
	for _, fl := range flagNames {
		if flags&fl.flag != 0 {
			out = append(out, fl.name)
		}
	}
	return out
}

// Call runs FCALL or FCALL_RO (fcallCommandGeneric) for c, whose
// arguments are the command's: function name, numkeys, keys, args. It
// writes the reply.
func (f *Functions) Call(c *engine.Ctx, ro bool) {
	fn := f.lookup(string(c.Args[1]))
	if fn == nil {
		c.Error(ErrFunctionNotFound)
		return
	}
	numkeys, ok := engine.ParseInt(c.Args[2])
	if !ok {
		c.Error(ErrBadNumkeys)
		return
	}
	if numkeys > int64(len(c.Args)-3) {
		c.Error(ErrNumkeysGreater)
		return
	}
	if numkeys < 0 {
		c.Error(ErrNumkeysNegative)
		return
	}
	if msg := c.D.BeginScript(c, &f.run, fn.Flags, ro); msg != "" {
		c.Error(msg)
		return
	}
	f.running = true
	f.funcname = fn.Name
	f.run.Name, f.run.Function = fn.Name, true
	defer func() {
		f.running = false
		c.D.EndScript(&f.run)
	}()
	keys := f.newArray(c.Args[3 : 3+numkeys])
	args := f.newArray(c.Args[3+numkeys:])
	f.run1(c, fn.fn, []lua.LValue{keys, args})
}

// Memory reports INFO memory's function figures: the VM's estimate, and
// what the libraries' code and names take.
func (f *Functions) Memory() (vm, overhead int64) {
	for _, l := range f.libs {
		overhead += mallocSize(int64(len(l.Code))) + mallocSize(int64(len(l.Name))) + 64
		for _, fn := range l.Functions {
			overhead += mallocSize(int64(len(fn.Name))) + mallocSize(int64(len(fn.Desc))) + 48
		}
	}
	return f.vmBytes, overhead
}
