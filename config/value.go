package config

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/zredis/zredis/redisconv"
)

// SaveParam is one "save <seconds> <changes>" point.
type SaveParam struct {
	Seconds int64
	Changes int64
}

// BufferLimit is one client class of client-output-buffer-limit.
type BufferLimit struct {
	Hard, Soft  uint64
	SoftSeconds int64
}

// Client classes of client-output-buffer-limit, in CONFIG GET order.
const (
	ClientNormal  = 0
	ClientReplica = 1
	ClientPubSub  = 2
)

var obufClassNames = [3]string{"normal", "slave", "pubsub"}

// value is the immutable state of one directive; a change replaces it.
type value struct {
	n    int64  // bool, integers, memory, octal, enum index value, flags, notify flags
	s    string // string value; for other kinds the CONFIG GET text
	null bool   // NullIfEmpty string that is unset

	list []string // bind addresses, list entries
	save []SaveParam
	obuf [3]BufferLimit
	oom  [3]int64
	pct  []float64
	host string // replicaof
	port int64
}

// state is a working set of values (one per directive) plus what the
// parsers need to know about their context.
type state struct {
	vals       []*value
	env        *env
	reading    bool // parsing a configuration file (not CONFIG SET)
	saveLoaded bool // a save line was already seen while reading
	configFile string
}

func (st *state) get(name string) *value {
	if v := st.vals[byName[name].index]; v != nil {
		return v
	}
	return &value{}
}

// procTitleVar expands one proc-title-template variable with the values
// currently in st.
func (st *state) procTitleVar(name string) (string, bool) {
	switch name {
	case "title":
		return "", true
	case "listen-addr":
		port, tls := st.get("port").n, st.get("tls-port").n
		if port != 0 || tls != 0 {
			addr := "*"
			if b := st.get("bind").list; len(b) > 0 {
				addr = b[0]
			}
			if port == 0 {
				port = tls
			}
			return fmt.Sprintf("%s:%d", addr, port), true
		}
		return "unixsocket:" + st.get("unixsocket").s, true
	case "server-mode":
		if st.get("cluster-enabled").n != 0 {
			return "[cluster]", true
		}
		return "", true
	case "config-file":
		return st.configFile, true
	case "port":
		return strconv.FormatInt(st.get("port").n, 10), true
	case "tls-port":
		return strconv.FormatInt(st.get("tls-port").n, 10), true
	case "unixsocket":
		return st.get("unixsocket").s, true
	}
	return "", false
}

// parse turns arguments into a new value for directive d, or returns the
// error text Redis prints for them. cur is the directive's current value.
func parse(st *state, d *Directive, cur *value, args []string) (*value, string) {
	switch d.Kind {
	case KindBool:
		switch strings.ToLower(args[0]) {
		case "yes":
			return &value{n: 1, s: "yes"}, ""
		case "no":
			return &value{n: 0, s: "no"}, ""
		}
		return nil, "argument must be 'yes' or 'no'"
	case KindInt, KindMemory, KindOctal:
		return parseNumeric(d, args[0])
	case KindEnum:
		for _, ev := range d.Enum {
			if strings.EqualFold(ev.Name, args[0]) {
				return &value{n: ev.Value, s: enumName(d, ev.Value)}, ""
			}
		}
		return nil, enumError(d)
	case KindFlags:
		if len(args) == 0 {
			return nil, enumError(d)
		}
		var flags int64
		for _, a := range args {
			matched := false
			for _, ev := range d.Enum {
				if strings.EqualFold(ev.Name, a) {
					flags |= ev.Value
					matched = true
				}
			}
			if !matched {
				return nil, enumError(d)
			}
		}
		if d.Enum[0].Name == "default" && flags&ShutdownSave != 0 && flags&ShutdownNoSave != 0 {
			return nil, "shutdown options SAVE and NOSAVE can't be used simultaneously"
		}
		return &value{n: flags, s: flagsName(d, flags)}, ""
	case KindString:
		if d.check != nil {
			if e := d.check(st, args[0]); e != "" {
				return nil, e
			}
		}
		return &value{s: args[0], null: d.NullIfEmpty && args[0] == ""}, ""
	case KindSave:
		return parseSave(st, cur, args)
	case KindClientOutputBufferLimit:
		return parseObuf(cur, args)
	case KindOOMScoreAdjValues:
		if len(args) != 3 {
			return nil, "wrong number of arguments"
		}
		v := &value{}
		for i, a := range args {
			n, rest, _ := strtoll(a, 10)
			if rest != "" || n < -2000 || n > 2000 {
				return nil, "Invalid oom-score-adj-values, elements must be between -2000 and 2000."
			}
			v.oom[i] = n
		}
		v.s = fmt.Sprintf("%d %d %d", v.oom[0], v.oom[1], v.oom[2])
		return v, ""
	case KindNotifyKeyspaceEvents:
		if len(args) != 1 {
			return nil, "wrong number of arguments"
		}
		flags, ok := keyspaceEventsStringToFlags(args[0])
		if !ok {
			return nil, "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."
		}
		return &value{n: flags, s: keyspaceEventsFlagsToString(flags)}, ""
	case KindBind:
		if len(args) > bindAddrMax {
			return nil, "Too many bind addresses specified."
		}
		if len(args) == 1 && args[0] == "" {
			args = nil
		}
		list := append([]string(nil), args...)
		return &value{list: list, s: strings.Join(list, " ")}, ""
	case KindDir:
		if len(args) != 1 {
			return nil, "wrong number of arguments"
		}
		abs, err := st.env.resolveDir(st.get("dir").s, args[0])
		if err != nil {
			return nil, strerror(err)
		}
		return &value{s: abs}, ""
	case KindReplicaOf:
		if len(args) != 2 {
			return nil, "wrong number of arguments"
		}
		if strings.EqualFold(args[0], "no") && strings.EqualFold(args[1], "one") {
			return &value{}, ""
		}
		port, rest, overflow := strtoll(args[1], 10)
		if overflow || port < 0 || port > 65535 || rest != "" {
			return nil, "Invalid master port"
		}
		return &value{host: args[0], port: port, s: fmt.Sprintf("%s %d", args[0], port)}, ""
	case KindPercentiles:
		if len(args) == 1 && args[0] == "" {
			args = nil
		}
		v := &value{}
		parts := make([]string, 0, len(args))
		for _, a := range args {
			f, ok := string2d(a)
			if !ok {
				return nil, "Invalid latency-tracking-info-percentiles parameters"
			}
			if f > 100.0 || f < 0.0 {
				return nil, "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"
			}
			v.pct = append(v.pct, f)
			parts = append(parts, formatPercentile(f))
		}
		v.s = strings.Join(parts, " ")
		return v, ""
	case KindList:
		if len(args) == 1 && args[0] == "" {
			args = nil
		}
		var list []string
		if st.reading && cur != nil {
			list = append(list, cur.list...)
		}
		if d.check != nil {
			for _, a := range args {
				if e := d.check(st, a); e != "" {
					return nil, e
				}
			}
		}
		list = append(list, args...)
		return &value{list: list, s: strings.Join(list, " ")}, ""
	}
	return nil, "unsupported directive kind"
}

func enumName(d *Directive, n int64) string {
	for _, ev := range d.Enum {
		if ev.Value == n {
			return ev.Name
		}
	}
	return "unknown"
}

// flagsName prints a flags value the way Redis's configEnumGetName does
// with bitflags: an exact match wins, otherwise every fully contained flag
// in table order.
func flagsName(d *Directive, n int64) string {
	var names []string
	unmatched := n
	for _, ev := range d.Enum {
		if ev.Value == n {
			return ev.Name
		}
		if ev.Value != 0 && ev.Value == unmatched&ev.Value {
			names = append(names, ev.Name)
			unmatched &^= ev.Value
		}
	}
	if len(names) == 0 || unmatched != 0 {
		return "unknown"
	}
	return strings.Join(names, " ")
}

func enumError(d *Directive) string {
	names := make([]string, len(d.Enum))
	for i, ev := range d.Enum {
		names[i] = ev.Name
	}
	msg := "argument(s) must be one of the following: " + strings.Join(names, ", ")
	if len(msg) > 255 {
		msg = msg[:255]
	}
	return msg
}

func parseNumeric(d *Directive, s string) (*value, string) {
	var ll int64
	parsed := false
	if d.Kind == KindMemory {
		if u, ok := memtoull(s); ok {
			ll = int64(u)
			parsed = true
		}
		if !parsed && d.Percent && len(s) > 1 && s[len(s)-1] == '%' {
			if n, ok := redisconv.ParseInt(s[:len(s)-1]); ok && n >= 0 {
				ll = -n
				parsed = true
			}
		}
		if !parsed {
			if d.Percent {
				return nil, "argument must be a memory or percent value"
			}
			return nil, "argument must be a memory value"
		}
	} else if d.Kind == KindOctal {
		n, rest, overflow := strtoll(s, 8)
		if overflow || rest != "" {
			return nil, "argument couldn't be parsed as an octal number"
		}
		ll = n
	} else {
		n, ok := redisconv.ParseInt(s)
		if !ok {
			return nil, "argument couldn't be parsed into an integer"
		}
		ll = n
	}
	if d.Unsigned {
		u := uint64(ll)
		if u > d.Max || u < uint64(d.Min) {
			if d.Kind == KindOctal {
				return nil, fmt.Sprintf("argument must be between %o and %o inclusive", uint64(d.Min), d.Max)
			}
			return nil, fmt.Sprintf("argument must be between %d and %d inclusive", uint64(d.Min), d.Max)
		}
	} else if d.Percent && ll < 0 {
		if ll < d.Min {
			return nil, fmt.Sprintf("percentage argument must be less or equal to %d", -d.Min)
		}
	} else if ll < d.Min || (ll >= 0 && uint64(ll) > d.Max) {
		return nil, fmt.Sprintf("argument must be between %d and %d inclusive", d.Min, d.Max)
	}
	if d.Name == "hz" {
		// Redis accepts any hz in range but clamps the effective value.
		if ll < minHZ {
			ll = minHZ
		}
		if ll > maxHZ {
			ll = maxHZ
		}
	}
	return &value{n: ll, s: formatNumeric(d, ll)}, ""
}

func formatNumeric(d *Directive, n int64) string {
	switch {
	case d.Percent && n < 0:
		return strconv.FormatInt(-n, 10) + "%"
	case d.Kind == KindMemory:
		return strconv.FormatUint(uint64(n), 10)
	case d.Kind == KindOctal:
		return strconv.FormatUint(uint64(n), 8)
	}
	return strconv.FormatInt(n, 10)
}

func parseSave(st *state, cur *value, args []string) (*value, string) {
	reset := false
	if len(args) == 1 && args[0] == "" {
		reset = true
		args = nil
	}
	if len(args)%2 != 0 {
		return nil, "Invalid save parameters"
	}
	params := make([]SaveParam, 0, len(args)/2)
	for j := 0; j < len(args); j += 2 {
		sec, rest1, _ := strtoll(args[j], 10)
		ch, rest2, _ := strtoll(args[j+1], 10)
		if rest1 != "" || sec < 1 || rest2 != "" || ch < 0 {
			return nil, "Invalid save parameters"
		}
		params = append(params, SaveParam{Seconds: sec, Changes: int64(int32(ch))})
	}
	var out []SaveParam
	// While reading a file, the first save line replaces the defaults and
	// later lines append to it; `save ""` clears what was collected so far.
	// CONFIG SET always replaces.
	if st.reading && st.saveLoaded && !reset && cur != nil {
		out = append(out, cur.save...)
	}
	if st.reading {
		st.saveLoaded = true
	}
	out = append(out, params...)
	return saveValue(out), ""
}

func saveValue(params []SaveParam) *value {
	parts := make([]string, 0, 2*len(params))
	for _, p := range params {
		parts = append(parts, strconv.FormatInt(p.Seconds, 10), strconv.FormatInt(p.Changes, 10))
	}
	return &value{save: params, s: strings.Join(parts, " ")}
}

func clientClassByName(name string) int {
	switch strings.ToLower(name) {
	case "normal":
		return ClientNormal
	case "slave", "replica":
		return ClientReplica
	case "pubsub":
		return ClientPubSub
	}
	return -1
}

func parseObuf(cur *value, args []string) (*value, string) {
	if len(args)%4 != 0 {
		return nil, "Wrong number of arguments in buffer limit configuration."
	}
	v := &value{}
	if cur != nil {
		v.obuf = cur.obuf
	}
	for j := 0; j < len(args); j += 4 {
		class := clientClassByName(args[j])
		if class < 0 {
			return nil, "Invalid client class specified in buffer limit configuration."
		}
		hard, ok1 := memtoull(args[j+1])
		soft, ok2 := memtoull(args[j+2])
		secs, rest, _ := strtoll(args[j+3], 10)
		secs = int64(int32(secs))
		if !ok1 || !ok2 || secs < 0 || rest != "" {
			return nil, "Error in hard, soft or soft_seconds setting in buffer limit configuration."
		}
		v.obuf[class] = BufferLimit{Hard: hard, Soft: soft, SoftSeconds: secs}
	}
	v.s = obufText(v.obuf)
	return v, ""
}

func obufText(o [3]BufferLimit) string {
	parts := make([]string, 0, 3)
	for i, l := range o {
		parts = append(parts, fmt.Sprintf("%s %d %d %d", obufClassNames[i], l.Hard, l.Soft, l.SoftSeconds))
	}
	return strings.Join(parts, " ")
}

func keyspaceEventsStringToFlags(s string) (int64, bool) {
	var flags int64
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case 'A':
			flags |= NotifyAll
		case 'g':
			flags |= NotifyGeneric
		case '$':
			flags |= NotifyString
		case 'l':
			flags |= NotifyList
		case 's':
			flags |= NotifySet
		case 'h':
			flags |= NotifyHash
		case 'z':
			flags |= NotifyZSet
		case 'x':
			flags |= NotifyExpired
		case 'e':
			flags |= NotifyEvicted
		case 'K':
			flags |= NotifyKeyspace
		case 'E':
			flags |= NotifyKeyevent
		case 't':
			flags |= NotifyStream
		case 'm':
			flags |= NotifyKeyMiss
		case 'd':
			flags |= NotifyModule
		case 'n':
			flags |= NotifyNew
		default:
			return 0, false
		}
	}
	return flags, true
}

// keyspaceEventsFlagsToString prints flags as Redis does; note that when
// every 'A' class is set, 'n' is not printed (a Redis 7.0 quirk).
func keyspaceEventsFlagsToString(flags int64) string {
	var b strings.Builder
	if flags&NotifyAll == NotifyAll {
		b.WriteByte('A')
	} else {
		for _, f := range []struct {
			bit int64
			c   byte
		}{{NotifyGeneric, 'g'}, {NotifyString, '$'}, {NotifyList, 'l'}, {NotifySet, 's'},
			{NotifyHash, 'h'}, {NotifyZSet, 'z'}, {NotifyExpired, 'x'}, {NotifyEvicted, 'e'},
			{NotifyStream, 't'}, {NotifyModule, 'd'}, {NotifyNew, 'n'}} {
			if flags&f.bit != 0 {
				b.WriteByte(f.c)
			}
		}
	}
	if flags&NotifyKeyspace != 0 {
		b.WriteByte('K')
	}
	if flags&NotifyKeyevent != 0 {
		b.WriteByte('E')
	}
	if flags&NotifyKeyMiss != 0 {
		b.WriteByte('m')
	}
	return b.String()
}

// env is the loader's view of the filesystem. Redis chdir()s when it meets
// "dir" while loading; the config package never changes the process working
// directory and instead resolves relative paths against the current dir
// value, which gives the same results.
type env struct {
	cwd       string
	readFile  func(path string) ([]byte, error)
	checkDir  func(path string) (string, error) // returns the canonical absolute path
	checkLog  func(path string) error
	glob      func(pattern string) ([]string, error)
	readStdin func() ([]byte, error)
}

func defaultEnv() *env {
	cwd, err := os.Getwd()
	if err == nil {
		if real, err := filepath.EvalSymlinks(cwd); err == nil {
			cwd = real
		}
	}
	return &env{
		cwd: cwd,
		readFile: func(path string) ([]byte, error) {
			f, err := os.Open(path)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			if fi, err := f.Stat(); err == nil && fi.IsDir() {
				// fopen() succeeds on a directory and reading yields nothing.
				return nil, nil
			}
			return io.ReadAll(f)
		},
		checkDir: func(path string) (string, error) {
			fi, err := os.Stat(path)
			if err != nil {
				return "", err
			}
			if !fi.IsDir() {
				return "", syscall.ENOTDIR
			}
			if err := syscall.Access(path, 1); err != nil {
				return "", err
			}
			real, err := filepath.EvalSymlinks(path)
			if err != nil {
				return "", err
			}
			return filepath.Abs(real)
		},
		checkLog: func(path string) error {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
			if err != nil {
				return err
			}
			return f.Close()
		},
		glob: filepath.Glob,
		readStdin: func() ([]byte, error) {
			return io.ReadAll(os.Stdin)
		},
	}
}

// resolve makes p absolute against the emulated working directory.
func (e *env) resolve(cwd, p string) string {
	if filepath.IsAbs(p) || cwd == "" {
		return p
	}
	return filepath.Join(cwd, p)
}

func (e *env) resolveDir(cwd, p string) (string, error) {
	if p == "" {
		return "", syscall.ENOENT
	}
	return e.checkDir(e.resolve(cwd, p))
}
