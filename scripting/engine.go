// Package scripting is the Lua scripting of the server, as Redis 7.0's
// eval.c, script_lua.c and script.c: one Lua 5.1 VM per server
// (github.com/yuin/gopher-lua), the script cache keyed by SHA1, the Redis
// Lua environment (KEYS, ARGV, the redis table, the libraries cjson,
// cmsgpack, bit and struct, protected globals) and the conversions of
// replies between RESP and Lua.
//
// The engine calls scripts like any command family: the EVAL family
// (commands/scripting.go) hands a command to an Engine, which runs the
// script under the keyspace lock the dispatcher holds; the commands the
// script calls go back through the dispatcher (engine.Dispatcher.ScriptCall),
// so that ACL, command checks, propagation of effects and the records
// of calls apply to them as to any other command.
//
// An Engine is used under the keyspace lock only (but Interrupt); it
// holds everything per server (the VM, the cache, the random generator),
// so that two servers in one process share nothing.
//
// gopher-lua v1.1.2 is a Lua 5.1 VM in pure Go, as Redis embeds Lua 5.1.
// Where it differs from Redis's patched C Lua, this package covers:
//   - read-only tables (Redis patches Lua for them): read-only views
//     over the globals, the libraries and the string metatable, and the
//     builtins that bypass metatables made aware of them (lua.go);
//   - number to string: gopher-lua writes Go's shortest form, Lua
//     "%.14g": tostring is replaced (the .. operator and string.format's
//     %s still use gopher-lua's, a known difference for non-integers);
//   - chunk names in messages ([string "..."] for loadstring), error()
//     with no value, unpack's bound, nested coroutines' bound;
//   - no allocator hook: memory is not limited per script (nor is it in
//     Redis); the call depth and data stack of each coroutine are.
//   - no debug hook: a script is interrupted through the VM's context,
//     checked at every instruction (Interrupt).
//
// The libraries cjson, cmsgpack, bit and struct are written here after
// Redis's C ones (deps/lua/src/lua_*.c). Tables are iterated in
// gopher-lua's order (insertion order), not C Lua's hash order: a
// table's members come out in another order from cjson.encode,
// cmsgpack.pack and pairs.
package scripting

import (
	"crypto/sha1"
	"encoding/hex"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	lua "github.com/yuin/gopher-lua"

	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/sds"
)

// Errors of eval.c, with 7.0's texts.
const (
	ErrNumkeysGreater  = "ERR Number of keys can't be greater than number of args"
	ErrNumkeysNegative = "ERR Number of keys can't be negative"
	ErrFlushMode       = "ERR SCRIPT FLUSH only support SYNC|ASYNC option"
	ErrDebugMode       = "ERR Use SCRIPT DEBUG YES/SYNC/NO"
	// ErrDebugUnsupported answers SCRIPT DEBUG YES|SYNC: the Lua
	// debugger (ldb) is not part of zredis.
	ErrDebugUnsupported = "ERR SCRIPT DEBUG YES|SYNC (the Lua debugger) is not supported by this server; SCRIPT DEBUG NO is"
)

// Bounds of the VM, so that a script cannot take the server's stack or
// grow the VM's stacks without end. Each coroutine is a thread with its
// own stacks, so they start small and grow on demand:
//   - the call depth of a thread: Lua 5.1's LUAI_MAXCALLS (20000); past
//     it a script gets an error;
//   - the data stack (registry) of a thread: 1K values at first, growing
//     by 16K, 1M at most (16 MB; Lua's own unpack stops at 8000 results);
//   - nested pcalls, xpcalls and coroutine resumes: 199 under EVAL,
//     where Lua's LUAI_MAXCCALLS (200 C calls) says "C stack overflow";
//   - the nesting of a table converted to a reply.
const (
	callStackSize    = 20000
	registrySize     = 1024
	registryGrowStep = 1024 * 16
	registryMaxSize  = 1 << 20
	maxCCalls        = 199
	replyMaxDepth    = 1000

	// A call with more, or larger, arguments than these leaves its
	// buffers to the collector instead of keeping them for the next.
	maxKeptArgs     = 1024
	maxKeptArgBytes = 64 << 10
)

// Options configure an Engine.
type Options struct {
	// Version is redis.REDIS_VERSION ("7.0.15").
	Version string
	// Log writes a line to the server log at a Redis level (0 debug ...
	// 3 warning), for redis.log; the log drops the lines below its
	// loglevel. nil drops every line.
	Log func(level int, msg string)
}

// script is one cached script: its body and flags, and the compiled
// function (the registry's f_<sha> in Redis).
type script struct {
	sha   string // the cache's key
	body  []byte
	flags engine.ScriptFlags
	fn    *lua.LFunction
}

// Engine is a server's Lua scripting: the VM and the script cache.
type Engine struct {
	opts    Options
	L       *lua.LState
	scripts map[string]*script // by lower-case hex SHA1
	mem     int64              // what the cached scripts' strings take, Redis's lua_scripts_mem
	vmBytes int64              // estimate of the VM's memory

	rand lrand48 // math.random, as Redis's redisLrand48

	cjson     cjsonConfig
	cjsonNull *lua.LUserData // cjson.null

	run      engine.ScriptRun
	running  bool
	funcname string // the running script's sha

	// The running script's context, which Interrupt stops from another
	// goroutine (mu guards rc).
	mu sync.Mutex
	rc *runCtx

	cCalls int // nested pcall, xpcall and coroutine resumes (enterCCall)

	// The arguments of the last redis.call, reused by the next (argsOf):
	// argBytes holds them end to end, argEnds where each ends.
	args     [][]byte
	argBytes []byte
	argEnds  []int

	// The tables the last script had as KEYS and ARGV, refilled by the
	// next (argTable.set).
	keysT, argvT argTable

	env      *lua.LTable                 // the globals scripts see (a read-only view)
	globals  *lua.LTable                 // the real globals behind env
	readonly map[*lua.LTable]*lua.LTable // read-only views -> the tables they show
	refuse   *lua.LFunction              // a view's __newindex: "Attempt to modify a readonly table"
	sources  map[string]string           // chunk names as shown -> as given (loadstring)
	errh     *lua.LFunction              // the error handler (__redis__err__handler)
}

// New makes an Engine with a fresh VM and an empty cache.
func New(opts Options) *Engine {
	e := &Engine{opts: opts}
	e.rand.reset()
	e.reset()
	return e
}

// reset replaces the VM and empties the cache (scriptingReset). The
// random generator's state goes on, as Redis's is process-wide.
func (e *Engine) reset() {
	if e.L != nil {
		e.L.Close()
	}
	e.scripts = map[string]*script{}
	e.keysT, e.argvT = argTable{}, argTable{}
	e.mem = 0
	e.vmBytes = vmBaseBytes
	e.newState()
}

// Close releases the VM.
func (e *Engine) Close() {
	if e.L != nil {
		e.L.Close()
		e.L = nil
	}
}

// Running reports whether a script runs now.
func (e *Engine) Running() bool { return e.running }

// Memory reports INFO memory's scripting figures (engine.ScriptEngine).
func (e *Engine) Memory() engine.ScriptMemory {
	n := int64(len(e.scripts))
	var slots int64
	if n > 0 {
		slots = 4
		for slots < n {
			slots *= 2
		}
	}
	return engine.ScriptMemory{
		VMEval:      e.vmBytes,
		ScriptsEval: e.mem + n*(24+16) + slots*8,
		Scripts:     n,
	}
}

// vmBaseBytes is what a fresh VM counts in used_memory_lua.
const vmBaseBytes = engine.ScriptVMBaseBytes

// mallocSize rounds n up to jemalloc's size class, as zmalloc_size sees
// an allocation of n bytes.
func mallocSize(n int64) int64 {
	if n <= 8 {
		return 8
	}
	if n <= 128 {
		return (n + 15) &^ 15
	}
	step := int64(1)
	for step*8 < n {
		step *= 2
	}
	step /= 2
	return (n + step - 1) / step * step
}

// Sha1Hex is the lower-case hex SHA1 of b (redis.sha1hex, script names).
func Sha1Hex(b []byte) string {
	sum := sha1.Sum(b)
	return hex.EncodeToString(sum[:])
}

// Exists reports whether the script of sha is cached (SCRIPT EXISTS:
// the SHA is matched case-insensitively).
func (e *Engine) Exists(sha []byte) bool {
	_, ok := e.lookupSHA(sha)
	return ok
}

// Flush empties the cache and starts a fresh VM (SCRIPT FLUSH).
func (e *Engine) Flush() { e.reset() }

// Len is the number of cached scripts (dictSize of lua_scripts).
func (e *Engine) Len() int { return len(e.scripts) }

// ParseShebang reads the flags a script body declares in a "#!lua"
// first line (evalExtractShebangFlags): ScriptCompat without shebang.
// It returns the length of the shebang line, which is not compiled (its
// newline is, to keep line numbers), or the error text.
func ParseShebang(body []byte) (flags engine.ScriptFlags, n int, errMsg string) {
	if len(body) < 2 || body[0] != '#' || body[1] != '!' {
		return engine.ScriptCompat, 0, ""
	}
	end := strings.IndexByte(string(body), '\n')
	if end < 0 {
		return 0, 0, "ERR Invalid script shebang"
	}
	parts, ok := sds.SplitArgs(string(body[:end]))
	if !ok || len(parts) == 0 {
		return 0, 0, "ERR Invalid engine in script shebang"
	}
	if parts[0] != "#!lua" {
		return 0, 0, "ERR Unexpected engine in script shebang: " + parts[0]
	}
	for _, p := range parts[1:] {
		if !strings.HasPrefix(p, "flags=") {
			return 0, 0, "ERR Unknown lua shebang option: " + p
		}
		list := p[len("flags="):]
		if list == "" {
			continue
		}
		for _, f := range strings.Split(list, ",") {
			switch f {
			case "no-writes":
				flags |= engine.ScriptNoWrites
			case "allow-oom":
				flags |= engine.ScriptAllowOOM
			case "allow-stale":
				flags |= engine.ScriptAllowStale
			case "no-cluster":
				flags |= engine.ScriptNoCluster
			case "allow-cross-slot-keys":
				flags |= engine.ScriptAllowCrossSlot
			default:
				return 0, 0, "ERR Unexpected flag in script shebang: " + f
			}
		}
	}
	return flags, end, ""
}

// Load compiles body and caches it, unless cached already
// (luaCreateFunction), and returns its SHA1, or the error to reply.
func (e *Engine) Load(body []byte) (sha string, errMsg string) {
	sha = Sha1Hex(body)
	if _, ok := e.scripts[sha]; ok {
		return sha, ""
	}
	flags, n, errMsg := ParseShebang(body)
	if errMsg != "" {
		return "", errMsg
	}
	fn, err := e.L.Load(strings.NewReader(string(body[n:])), "user_script")
	if err != nil {
		return "", "ERR Error compiling script (new function): " + compileError(err, body)
	}
	fn.Env = e.env
	if !argWord.Match(body) {
		noArgTable(fn.Proto)
	}
	s := &script{sha: sha, body: append([]byte(nil), body...), flags: flags, fn: fn}
	e.scripts[sha] = s
	e.mem += mallocSize(40+4) + mallocSize(int64(len(body))+4)
	// The compiled function: its instructions and constants take about
	// as much again as the source, in 1 KB steps as lua_gc counts.
	e.vmBytes += (int64(len(body))*2 + 1023) / 1024 * 1024
	return sha, ""
}

// compileError words a gopher-lua compile error ("user_script line:2(column:0)
// near 'x':   unterminated string", "user_script at EOF:   syntax error")
// in Lua's form ("user_script:2: unterminated string near 'x'"). The
// message itself stays gopher-lua's.
func compileError(err error, body []byte) string { return compileErrorIn(err, body, "user_script") }

// compileErrorIn is compileError for a chunk named chunk (user_function
// for a library).
func compileErrorIn(err error, body []byte, chunk string) string {
	msg := strings.TrimSpace(strings.ReplaceAll(err.Error(), "\n", " "))
	if m := compileErrRe.FindStringSubmatch(msg); m != nil && m[1] == chunk {
		return chunk + ":" + m[2] + ": " + strings.TrimSpace(m[4]) + " near '" + m[3] + "'"
	}
	if rest, ok := strings.CutPrefix(msg, chunk+" at EOF:"); ok {
		line := strings.Count(string(body), "\n") + 1
		return chunk + ":" + strconv.Itoa(line) + ": " + strings.TrimSpace(rest) + " near '<eof>'"
	}
	return msg
}

// argWord finds the name arg in a script: Lua 5.1's compatibility local
// of vararg functions (the main chunk is one), which gopher-lua builds as
// a table at every call. A script that never names it does not need it.
var argWord = regexp.MustCompile(`\barg\b`)

// noArgTable stops gopher-lua from building the arg table of p and of
// the functions it defines.
func noArgTable(p *lua.FunctionProto) {
	p.IsVarArg &^= lua.VarArgNeedsArg
	for _, f := range p.FunctionPrototypes {
		noArgTable(f)
	}
}

var compileErrRe = regexp.MustCompile(`^(\w+) line:(\d+)\(column:\d+\) near '(.*?)':\s*(.*)$`)

// Flags returns the flags of a cached script, for the checks made before
// a script runs; ok is false when it is not cached.
func (e *Engine) Flags(sha string) (flags engine.ScriptFlags, ok bool) {
	s, ok := e.scripts[sha]
	if !ok {
		return 0, false
	}
	return s.flags, true
}

// FlagsSHA is Flags of the script whose SHA1 is given in hex of either
// case, as EVALSHA takes it.
func (e *Engine) FlagsSHA(sha []byte) (flags engine.ScriptFlags, ok bool) {
	s, ok := e.lookupSHA(sha)
	if !ok {
		return 0, false
	}
	return s.flags, true
}

// lookupSHA finds the script whose SHA1 is given in hex of either case.
// The lower-case copy is made on the stack: EVALSHA looks its script up
// twice per call (its flags, then the run), and ToLower's allocation
// and pass were 2.8% of its time.
func (e *Engine) lookupSHA(sha []byte) (*script, bool) {
	if len(sha) != 40 {
		return nil, false
	}
	var lower [40]byte
	for i, b := range sha {
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		lower[i] = b
	}
	s, ok := e.scripts[string(lower[:])]
	return s, ok
}

// Eval runs EVAL, EVALSHA or their _RO forms (evalGenericCommand) for c,
// whose arguments are the command's: script (or SHA1), numkeys, keys,
// args. It writes the reply.
func (e *Engine) Eval(c *engine.Ctx, evalsha, ro bool) {
	if evalsha && len(c.Args[1]) != 40 {
		c.Error(engine.ErrNoScript)
		return
	}
	numkeys, ok := engine.ParseInt(c.Args[2])
	if !ok {
		c.Error(engine.ErrNotInteger)
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
	var s *script
	var sha string
	if evalsha {
		s, _ = e.lookupSHA(c.Args[1])
	} else {
		sha = Sha1Hex(c.Args[1])
		s = e.scripts[sha]
	}
	if s == nil {
		if evalsha {
			c.Error(engine.ErrNoScript)
			return
		}
		if _, msg := e.Load(c.Args[1]); msg != "" {
			c.Error(msg)
			return
		}
		s = e.scripts[sha]
	}
	if msg := c.D.BeginScript(c, &e.run, s.flags, ro); msg != "" {
		c.Error(msg)
		return
	}
	e.running = true
	e.funcname = s.sha
	e.run.Name, e.run.Function = s.sha, false
	defer func() {
		e.running = false
		c.D.EndScript(&e.run)
	}()
	keys := c.Args[3 : 3+numkeys]
	argv := c.Args[3+numkeys:]
	e.call(c, s, keys, argv)
}

// call runs a compiled script with KEYS and ARGV set and writes its
// result, converted, or its error (luaCallFunction).
func (e *Engine) call(c *engine.Ctx, s *script, keys, argv [][]byte) {
	// A refilled table is in the globals already: scripts cannot
	// replace a global.
	if t, fresh := e.keysT.set(e, keys); fresh {
		e.globals.RawSetString("KEYS", t)
	}
	if t, fresh := e.argvT.set(e, argv); fresh {
		e.globals.RawSetString("ARGV", t)
	}
	e.run1(c, s.fn, nil)
}

// run1 runs fn with args (a script: none; a function: its keys and
// arguments) under the run's watch, and writes its result, converted, or
// its error.
func (e *Engine) run1(c *engine.Ctx, fn *lua.LFunction, args []lua.LValue) {
	L := e.L
	L.SetTop(0) // whatever a failed run left
	e.mu.Lock()
	rc := e.rc
	if rc == nil || rc.d != c.D || !rc.begin() {
		// The first run, or the last one's context stopped (by its
		// end, with coroutines, or by a kill or an Interrupt).
		rc = newRunCtx(c.D, &e.run)
		e.rc = rc
	}
	e.mu.Unlock()
	L.SetContext(rc)
	L.Push(fn)
	for _, a := range args {
		L.Push(a)
	}
	err := L.PCall(len(args), 1, e.errh)
	L.RemoveContext()
	// The coroutines the script made stop with it; a context that
	// stopped stays for stopReason, and the next run makes another.
	rc.end()
	if err != nil {
		e.replyError(c, err)
		L.SetTop(0)
		return
	}
	v := L.Get(-1)
	L.SetTop(0)
	e.reply(c, v, 0)
}

// replyError answers the error a script raised: the error table the
// handler made ({err=..., source=..., line=...}) as "<err> script: <sha>,
// on <source>:<line>.".
func (e *Engine) replyError(c *engine.Ctx, err error) {
	ae, ok := err.(*lua.ApiError)
	if !ok {
		c.Error("ERR Error running script " + e.funcname + ", " + trunc(err.Error(), 100) + "\n")
		return
	}
	t, ok := ae.Object.(*lua.LTable)
	if !ok {
		msg := "execution failure"
		if s, ok := ae.Object.(lua.LString); ok {
			msg = string(s)
		}
		if ctxErr := e.ctxErr(); ctxErr != "" {
			msg = ctxErr
		}
		if msg == "lua callstack overflow" {
			// gopher-lua's growing call stacks panic at their bound.
			msg = "stack overflow"
		}
		// The handler could not run (the stack overflowed): say where
		// the error happened as it would have.
		if rest, ok := strings.CutPrefix(msg, "user_script:"); ok {
			if line, _, ok := strings.Cut(rest, ":"); ok {
				if _, err := strconv.Atoi(line); err == nil {
					c.Error("ERR " + msg + " script: " + e.funcname + ", on @user_script:" + line + ".")
					return
				}
			}
		}
		c.Error("ERR Error running script " + e.funcname + ", " + trunc(msg, 100) + "\n")
		return
	}
	if ctxErr := e.ctxErr(); ctxErr != "" {
		c.Error("ERR " + ctxErr)
		return
	}
	msg := cString(luaToString(t.RawGetString("err")))
	if e.stopReason() == stopKilled {
		// Redis raises it as an error table, without a position.
		msg = "ERR " + stopKilled
	}
	var b strings.Builder
	b.WriteString(msg)
	src, line := t.RawGetString("source"), t.RawGetString("line")
	if isStringish(src) && isStringish(line) {
		b.WriteString(" script: ")
		b.WriteString(e.funcname)
		b.WriteString(", on ")
		b.WriteString(luaToString(src))
		b.WriteString(":")
		b.WriteString(luaToString(line))
		b.WriteString(".")
	}
	if lua.LVAsBool(t.RawGetString("ignore_error_stats_update")) {
		c.ErrorNoStats(b.String())
	} else {
		c.Error(b.String())
	}
}

// Interrupt stops the running script, if any, at its next Lua
// instruction: it ends with an error that no pcall catches. Any
// goroutine may call it (the server does when a signal asks it to shut
// down, so that a script that loops forever does not hold the keyspace
// lock the shutdown needs).
func (e *Engine) Interrupt() {
	e.mu.Lock()
	rc := e.rc
	e.mu.Unlock()
	if rc != nil {
		rc.stop(stopShutdown)
	}
}

// stopReason is why the server stopped the running script (SCRIPT KILL,
// a shutdown), "" when it did not.
func (e *Engine) stopReason() string {
	e.mu.Lock()
	rc := e.rc
	e.mu.Unlock()
	if rc == nil {
		return ""
	}
	if why := rc.stopped(); why == stopKilled || why == stopShutdown {
		return why
	}
	return ""
}

// ctxErr is the reason a script was stopped by a shutdown, or "": its
// caller gets it as it is (a killed script's error says where it was).
func (e *Engine) ctxErr() string {
	if e.stopReason() == stopShutdown {
		return stopShutdown
	}
	return ""
}

func trunc(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// newArray makes a Lua array of strings (luaCreateArray).
func (e *Engine) newArray(elems [][]byte) *lua.LTable {
	t := e.L.CreateTable(len(elems), 0)
	for i, b := range elems {
		t.RawSetInt(i+1, lua.LString(b))
	}
	return t
}

// argTable is a table a script was given as KEYS or ARGV, kept for the
// next script's. Two new tables a call were half of a small EVALSHA's
// allocations, and its garbage. Nothing a script makes outlives its
// run: every table it can reach that lasts (the globals, the libraries,
// redis) is a read-only view, so KEYS cannot be stored anywhere. What
// the script did to the table itself is checked instead: a table is
// refilled only when it is still an array of as many slots as the call
// has elements (plainArray), with no metatable. Anything else, even a key set
// and removed again (gopher-lua keeps the key in its list) or an array
// padded with nils, gets a new table, so a script cannot leave the next
// ones a table that grew. A function's keys and arguments are not
// refilled: a library's functions share its upvalues, where they could
// keep them.
type argTable struct{ t *lua.LTable }

// set returns a table holding elems at 1 to len(elems) and nothing else,
// and whether it is a new one.
func (a *argTable) set(e *Engine, elems [][]byte) (*lua.LTable, bool) {
	t := a.t
	if t == nil || t.Metatable != lua.LNil || !plainArray(t, len(elems)) {
		a.t = e.newArray(elems)
		return a.t, true
	}
	for i, b := range elems {
		// An argument as the last call's (a limit, a window) keeps its
		// string: making one is two allocations.
		if old, ok := t.RawGetInt(i + 1).(lua.LString); ok && string(old) == string(b) {
			continue
		}
		t.RawSetInt(i+1, lua.LString(b))
	}
	return t, false
}

// ltableLayout locates the unexported fields of gopher-lua's LTable that
// tell an array from a table that had anything else (plainArray): its
// array part, and its hash part's two maps and list of keys. ok is false
// when the fields are not there with the types expected (another
// gopher-lua), and no table is then refilled; TestLTableLayout fails.
var ltableLayout = func() (l struct {
	array, dict, strdict, keys uintptr
	ok                         bool
}) {
	t := reflect.TypeOf(lua.LTable{})
	field := func(name string, want reflect.Type) (uintptr, bool) {
		f, ok := t.FieldByName(name)
		return f.Offset, ok && f.Type == want
	}
	values := reflect.TypeOf([]lua.LValue(nil))
	var ok [4]bool
	l.array, ok[0] = field("array", values)
	l.dict, ok[1] = field("dict", reflect.TypeOf(map[lua.LValue]lua.LValue(nil)))
	l.strdict, ok[2] = field("strdict", reflect.TypeOf(map[string]lua.LValue(nil)))
	l.keys, ok[3] = field("keys", values)
	l.ok = ok[0] && ok[1] && ok[2] && ok[3]
	return l
}()

// plainArray reports whether t has an array part of exactly n slots and
// never had a key of another kind (its hash part was never made).
func plainArray(t *lua.LTable, n int) bool {
	if !ltableLayout.ok {
		return false
	}
	p := unsafe.Pointer(t)
	return len(*(*[]lua.LValue)(unsafe.Add(p, ltableLayout.array))) == n &&
		*(*map[lua.LValue]lua.LValue)(unsafe.Add(p, ltableLayout.dict)) == nil &&
		*(*map[string]lua.LValue)(unsafe.Add(p, ltableLayout.strdict)) == nil &&
		*(*[]lua.LValue)(unsafe.Add(p, ltableLayout.keys)) == nil
}

// versionNum is REDIS_VERSION_NUM: 0x00MMmmpp.
func versionNum(v string) float64 {
	parts := strings.Split(v, ".")
	n := 0
	for i := 0; i < 3; i++ {
		x := 0
		if i < len(parts) {
			x, _ = strconv.Atoi(parts[i])
		}
		n = n<<8 | x&0xff
	}
	return float64(n)
}
