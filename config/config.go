// Package config holds zredis's configuration: the table of every Redis 7.0
// directive plus zredis's own, redis.conf parsing (with command-line
// overrides), and the semantics of CONFIG GET, CONFIG SET and CONFIG
// REWRITE, including Redis's exact error texts.
package config

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/zredis/zredis/sds"
)

// Banner is the product and version printed in the fatal configuration
// error banner ("*** FATAL CONFIG FILE ERROR (<Banner>) ***"). main sets it;
// the default keeps the output identical to Redis 7.0.15's.
var Banner = "Redis 7.0.15"

// Redacted is what CONFIG GET shows for a secret directive that is set.
const Redacted = "(redacted)"

// Pair is one CONFIG GET result.
type Pair struct{ Name, Value string }

// Rename is one rename-command directive (To is empty to disable).
type Rename struct{ From, To string }

// Config is the live configuration. It is safe for concurrent use: typed
// getters are lock-free atomic loads; Get and GetMulti read a consistent
// snapshot; Set and Rewrite are serialized.
type Config struct {
	wmu  sync.Mutex   // serializes writers (Set, Rewrite, OnChange)
	mu   sync.RWMutex // write-held only while publishing a new set of values
	vals []atomic.Pointer[value]

	hooks [][]func(string) error // by directive index, guarded by wmu

	file    string // absolute path of the configuration file, "" if none
	env     *env
	renames []Rename
	users   [][]string

	// userLines returns the users as "user" lines, for CONFIG REWRITE;
	// set by the server, called under its lock (SetUserLines).
	userLines func() []string
}

// SetUserLines gives CONFIG REWRITE the users to write as "user" lines
// (rewriteConfigUserOption). Without an aclfile they replace the file's
// "user" lines; with one, those lines are dropped: the users live there.
func (c *Config) SetUserLines(f func() []string) { c.userLines = f }

// New returns a configuration holding the defaults.
func New() *Config {
	st := newState(defaultEnv())
	return newConfig(st)
}

func newState(e *env) *state {
	st := &state{vals: make([]*value, len(directives)), env: e}
	for i := range directives {
		d := &directives[i]
		switch {
		case d.Kind == KindDir:
			st.vals[i] = &value{s: e.cwd}
			continue
		case d.Kind == KindReplicaOf && d.Default == "":
			st.vals[i] = &value{}
			continue
		}
		var args []string
		if d.Multi {
			args = strings.Fields(d.Default)
			if len(args) == 0 {
				args = []string{""}
			}
		} else {
			args = []string{d.Default}
		}
		v, errText := parse(st, d, nil, args)
		if errText != "" {
			panic(fmt.Sprintf("config: bad default for %s: %s", d.Name, errText))
		}
		st.vals[i] = v
	}
	return st
}

func newConfig(st *state) *Config {
	c := &Config{
		vals:  make([]atomic.Pointer[value], len(directives)),
		hooks: make([][]func(string) error, len(directives)),
		env:   st.env,
	}
	for i, v := range st.vals {
		c.vals[i].Store(v)
	}
	return c
}

// File returns the absolute path of the configuration file the
// configuration was loaded from, or "" if none.
func (c *Config) File() string { return c.file }

// RenamedCommands returns the rename-command directives in file order.
func (c *Config) RenamedCommands() []Rename {
	return append([]Rename(nil), c.renames...)
}

// Users returns the arguments of every "user" directive (without the
// leading "user"), in file order, for the ACL code to apply.
func (c *Config) Users() [][]string {
	out := make([][]string, len(c.users))
	for i, u := range c.users {
		out[i] = append([]string(nil), u...)
	}
	return out
}

func mustIndex(name string) int {
	e := lookup(name)
	if e == nil {
		panic("config: unknown directive " + name)
	}
	return e.index
}

// A Key is a directive found by name once, when a package is
// initialised: a command that reads a limit on every call (HSET's
// hash-max-listpack-entries, SADD's set-max-intset-entries) reads it by
// Key, without hashing the name; that lookup was 2.5% of HSET's time.
type Key int

// KeyOf returns the Key of a directive; it panics on an unknown name.
func KeyOf(name string) Key { return Key(mustIndex(name)) }

func (c *Config) load(name string) (*Directive, *value) {
	return c.loadKey(KeyOf(name))
}

func (c *Config) loadKey(k Key) (*Directive, *value) {
	return &directives[k], c.vals[k].Load()
}

// Int returns the numeric value of a bool, integer, memory, octal, enum
// (the matched word's value), flags or notify-keyspace-events directive.
// Memory values above math.MaxInt64 (only possible for maxmemory and
// cluster-link-sendbuf-limit) are clamped; use Uint for the raw value.
// maxmemory-clients is negative when given as a percentage (-N means N%).
// It panics on an unknown name or a directive without a numeric value.
func (c *Config) Int(name string) int64 { return c.IntOf(KeyOf(name)) }

// IntOf is Int of the directive k.
func (c *Config) IntOf(k Key) int64 {
	d, v := c.loadKey(k)
	switch d.Kind {
	case KindBool, KindInt, KindMemory, KindOctal, KindEnum, KindFlags, KindNotifyKeyspaceEvents:
	default:
		panic("config: " + d.Name + " is not numeric")
	}
	if d.Unsigned && v.n < 0 {
		return math.MaxInt64
	}
	return v.n
}

// StringOf is String of the directive k.
func (c *Config) StringOf(k Key) string {
	_, v := c.loadKey(k)
	return v.s
}

// Uint returns the value of an unsigned numeric directive without clamping.
func (c *Config) Uint(name string) uint64 {
	d, v := c.load(name)
	switch d.Kind {
	case KindBool, KindInt, KindMemory, KindOctal:
	default:
		panic("config: " + name + " is not numeric")
	}
	return uint64(v.n)
}

// Bool returns the value of a yes/no directive; it panics for other kinds.
func (c *Config) Bool(name string) bool {
	d, v := c.load(name)
	if d.Kind != KindBool {
		panic("config: " + name + " is not a bool")
	}
	return v.n != 0
}

// String returns a directive's value as CONFIG GET prints it.
func (c *Config) String(name string) string { return c.StringOf(KeyOf(name)) }

// Strings returns list values (bind addresses, expiry-zmq-endpoints entries)
// or, for other directives, the CONFIG GET text split on spaces.
func (c *Config) Strings(name string) []string {
	d, v := c.load(name)
	switch d.Kind {
	case KindBind, KindList:
		return append([]string(nil), v.list...)
	}
	return strings.Fields(v.s)
}

// SaveParams returns the save points.
func (c *Config) SaveParams() []SaveParam {
	_, v := c.load("save")
	return append([]SaveParam(nil), v.save...)
}

// ClientOutputBufferLimits returns the limits indexed by ClientNormal,
// ClientReplica and ClientPubSub.
func (c *Config) ClientOutputBufferLimits() [3]BufferLimit {
	_, v := c.load("client-output-buffer-limit")
	return v.obuf
}

// ReplicaOf returns the configured master, ok false when none.
func (c *Config) ReplicaOf() (host string, port int, ok bool) {
	_, v := c.load("replicaof")
	return v.host, int(v.port), v.host != ""
}

// SetReplicaOf records the master REPLICAOF chose ("" for none), which
// CONFIG GET and CONFIG REWRITE then show: replicaof is not for CONFIG
// SET, but the command changes it, as Redis's server.masterhost.
func (c *Config) SetReplicaOf(host string, port int) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	v := &value{}
	if host != "" {
		v = &value{host: host, port: int64(port), s: fmt.Sprintf("%s %d", host, port)}
	}
	c.mu.Lock()
	c.vals[mustIndex("replicaof")].Store(v)
	c.mu.Unlock()
}

// OOMScoreAdjValues returns the three oom-score-adj-values.
func (c *Config) OOMScoreAdjValues() [3]int64 {
	_, v := c.load("oom-score-adj-values")
	return v.oom
}

// Percentiles returns latency-tracking-info-percentiles.
func (c *Config) Percentiles() []float64 {
	_, v := c.load("latency-tracking-info-percentiles")
	return append([]float64(nil), v.pct...)
}

// IsNull reports whether a string directive that treats "" as unset is
// unset (e.g. requirepass, masterauth, unixsocket).
func (c *Config) IsNull(name string) bool {
	_, v := c.load(name)
	return v.null
}

// OnChange registers fn to run when CONFIG SET changes the directive (by
// name or alias). fn receives the new value as CONFIG GET prints it. If fn
// returns an error, every value set by that CONFIG SET is restored, the
// hooks that already ran are called again with the old values, and the
// command fails with "ERR CONFIG SET failed (possibly related to argument
// '<name>') - <error>". Hooks run while CONFIG SET is in progress: they may
// read the configuration but must not call Set or Rewrite.
func (c *Config) OnChange(name string, fn func(value string) error) {
	i := mustIndex(name)
	c.wmu.Lock()
	c.hooks[i] = append(c.hooks[i], fn)
	c.wmu.Unlock()
}

// Get implements CONFIG GET with one pattern.
func (c *Config) Get(pattern string) []Pair {
	return c.GetMulti([]string{pattern})
}

// GetMulti implements CONFIG GET p1 p2 ...: a pattern without glob
// characters is an exact (case-insensitive) lookup that answers under the
// spelling given, including hidden directives and aliases; a pattern with
// * ? or [ is matched case-insensitively against every name and alias
// except hidden ones. Results are deduplicated case-insensitively by the
// name they are returned under, in order of first match.
func (c *Config) GetMulti(patterns []string) []Pair {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []Pair
	seen := make(map[string]bool)
	add := func(name string, e *entry) {
		k := strings.ToLower(name)
		if seen[k] {
			return
		}
		seen[k] = true
		v := c.vals[e.index].Load().s
		if directives[e.index].Secret && v != "" {
			v = Redacted
		}
		out = append(out, Pair{Name: name, Value: v})
	}
	for _, p := range patterns {
		if !strings.ContainsAny(p, "[*?") {
			if e := lookup(p); e != nil {
				add(p, e)
			}
			continue
		}
		for _, e := range entries {
			if directives[e.index].Hidden {
				continue
			}
			if sds.MatchString([]byte(p), e.name, true) {
				add(e.name, e)
			}
		}
	}
	return out
}

// Set implements CONFIG SET name value [name value ...] for a client that
// is not local: protected directives are only settable when
// enable-protected-configs is "yes".
func (c *Config) Set(args []string) error {
	return c.SetAs(false, args)
}

// Errors returned by Set for malformed argument lists.
var (
	ErrSetArity  = errors.New("ERR wrong number of arguments for 'config|set' command")
	ErrSetSyntax = errors.New("ERR syntax error")
)

// SetAs implements CONFIG SET; local tells whether the client connected
// over a loopback or unix socket, which matters when
// enable-protected-configs is "local". The whole command is atomic: on any
// error nothing changes.
func (c *Config) SetAs(local bool, args []string) error {
	if len(args) < 2 {
		return ErrSetArity
	}
	if len(args)%2 != 0 {
		return ErrSetSyntax
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()

	n := len(args) / 2
	set := make([]*entry, n)
	var invalidName, errName, errText string
	invalid := false
	protectedOK := c.protectedAllowed(local)
	for i := 0; i < n; i++ {
		name := args[2*i]
		e := lookup(name)
		if e == nil {
			if !invalid {
				invalidName = name
				invalid = true
			}
			continue
		}
		if invalid {
			continue
		}
		d := &directives[e.index]
		if d.Immutable || (d.Protected && !protectedOK) {
			if d.Immutable {
				errText = "can't set immutable config"
			} else {
				errText = "can't set protected config"
			}
			errName = name
			invalid = true
			continue
		}
		for j := 0; j < i; j++ {
			if set[j] == e {
				errText = "duplicate parameter"
				errName = name
				invalid = true
				break
			}
		}
		set[i] = e
	}
	if invalid {
		if invalidName != "" {
			return fmt.Errorf("ERR Unknown option or number of arguments for CONFIG SET - '%s'", invalidName)
		}
		return setFailed(errName, errText)
	}

	st := &state{vals: make([]*value, len(directives)), env: c.env, configFile: c.file}
	for i := range c.vals {
		st.vals[i] = c.vals[i].Load()
	}
	old := make([]*value, len(directives))
	copy(old, st.vals)

	var changed []int // directive indexes in first-changed order
	isChanged := make(map[int]bool)
	for i, e := range set {
		d := &directives[e.index]
		raw := args[2*i+1]
		var vargs []string
		if d.Multi {
			if raw != "" {
				vargs = strings.Split(raw, " ")
			}
		} else {
			vargs = []string{raw}
		}
		v, errText := parse(st, d, st.vals[e.index], vargs)
		if errText == "" {
			errText = refused(d, v)
		}
		if errText != "" {
			return setFailed(e.name, errText)
		}
		if v.s != st.vals[e.index].s || v.null != st.vals[e.index].null || d.Kind == KindDir {
			if !isChanged[e.index] {
				isChanged[e.index] = true
				changed = append(changed, e.index)
			}
		}
		st.vals[e.index] = v
	}

	c.publish(st.vals)

	nameOf := make(map[int]string)
	for _, e := range set {
		nameOf[e.index] = e.name
	}
	for k, idx := range changed {
		for _, fn := range c.hooks[idx] {
			if err := fn(st.vals[idx].s); err != nil {
				c.publish(old)
				for _, prev := range changed[:k+1] {
					for _, undo := range c.hooks[prev] {
						_ = undo(old[prev].s)
					}
				}
				return setFailed(nameOf[idx], err.Error())
			}
		}
	}
	return nil
}

func setFailed(name, text string) error {
	if text == "" {
		return fmt.Errorf("ERR CONFIG SET failed (possibly related to argument '%s')", name)
	}
	return fmt.Errorf("ERR CONFIG SET failed (possibly related to argument '%s') - %s", name, text)
}

func (c *Config) protectedAllowed(local bool) bool {
	switch c.vals[byName["enable-protected-configs"].index].Load().n {
	case 1:
		return true
	case 2:
		return local
	}
	return false
}

func (c *Config) publish(vals []*value) {
	c.mu.Lock()
	for i, v := range vals {
		if c.vals[i].Load() != v {
			c.vals[i].Store(v)
		}
	}
	c.mu.Unlock()
}
