package config

import (
	"fmt"
	"strings"
)

// Error is a configuration loading error. Its Error() text is what Redis
// 7.0 prints for the same problem, the file added to the banner, so main
// can print it unchanged:
//
//   - most errors use the fatal banner, which Redis writes to stderr
//     (Error() starts with a newline; print it followed by one newline);
//   - errors with Logged set are ones Redis reports through its log at
//     warning level instead (e.g. "Fatal error, can't open config file ...");
//     main should log Error() and exit with status 1.
type Error struct {
	// File is the file whose text was being parsed: an included file, or
	// the main file, whose text is parsed together with stdin and the
	// command-line overrides ("" when there is no main file).
	File      string
	Line      int    // 1-based line number in the text being parsed; 0 if not tied to a line
	Text      string // the offending line, trimmed, as Redis echoes it
	Directive string // the directive name, lower-cased ("" if not tied to a line)
	Reason    string // Redis's reason text
	Logged    bool
}

func (e *Error) Error() string {
	if e.Logged {
		return e.Reason
	}
	var b strings.Builder
	// Redis's block, with the file named in the banner: Redis does not
	// say which file, which leaves an operator guessing once includes
	// are involved.
	banner := Banner
	if e.File != "" {
		banner += ", " + e.File
	}
	fmt.Fprintf(&b, "\n*** FATAL CONFIG FILE ERROR (%s) ***\n", banner)
	if e.Line > 0 {
		fmt.Fprintf(&b, "Reading the configuration file, at line %d\n", e.Line)
		fmt.Fprintf(&b, ">>> '%s'\n", e.Text)
	}
	b.WriteString(e.Reason)
	return b.String()
}

// LoadOptions describes a configuration source the way redis-server
// assembles it: the file, then stdin, then the command-line overrides.
type LoadOptions struct {
	File      string // configuration file ("" for none)
	Stdin     bool   // also read configuration from standard input
	Overrides string // directives built by ParseArgs, one per line

	// CommandExists, when set, lets rename-command reject unknown commands
	// ("No such command in rename-command") and clashing targets ("Target
	// command name already exists"); when nil every rename is accepted.
	CommandExists func(name string) bool

	// ValidateUser, when set, checks the rules of a "user" line (after
	// its name) as Redis does while reading the file
	// (ACLAppendUserForLoading): it returns why the rules are refused, ""
	// when they are not, and the index into the line's arguments that
	// Redis's message names.
	ValidateUser func(rules []string) (at int, reason string)

	env *env
}

// Load reads the configuration file (if file is not empty) and then the
// overrides, exactly as redis-server does with its command line.
func Load(file string, overrides string) (*Config, error) {
	return LoadWith(LoadOptions{File: file, Overrides: overrides})
}

// CommandLine is a parsed redis-server style command line.
type CommandLine struct {
	File      string // configuration file argument ("" if none)
	Stdin     bool   // "-" was given: read configuration from stdin
	Overrides string // "--name value" options as configuration lines
}

// Load loads the configuration described by the command line.
func (cl CommandLine) Load() (*Config, error) {
	return LoadWith(LoadOptions{File: cl.File, Stdin: cl.Stdin, Overrides: cl.Overrides})
}

// ParseArgs parses redis-server's arguments (without the program name):
//
//	[/path/to/redis.conf] [-] [--directive arg ...]...
//
// A first argument not starting with '-' is the configuration file; a lone
// "-" as first or last argument reads configuration from stdin; each
// "--name" starts a new directive line and the following arguments become
// its (quoted) arguments, so "--replicaof 127.0.0.1 8888" becomes the line
// `replicaof "127.0.0.1" "8888"`. "--save" followed by another option or
// at the end means `save ""`. --help and --version are for main to handle.
func ParseArgs(args []string) CommandLine {
	var cl CommandLine
	if len(args) == 0 {
		return cl
	}
	j := 0
	if !strings.HasPrefix(args[0], "-") {
		cl.File = args[0]
		j = 1
	}
	var opts strings.Builder
	handledLast := true
	for ; j < len(args); j++ {
		a := args[j]
		last := j == len(args)-1
		switch {
		case a == "-" && (j == 0 || last):
			cl.Stdin = true
		case handledLast && strings.HasPrefix(a, "--"):
			if opts.Len() > 0 {
				opts.WriteByte('\n')
			}
			opts.WriteString(a[2:])
			opts.WriteByte(' ')
			split, _ := SplitArgs(a)
			if len(split) == 1 {
				handledLast = false
				nextIsOpt := !last && strings.HasPrefix(args[j+1], "--")
				switch {
				case nextIsOpt && strings.EqualFold(a, "--save"):
					opts.WriteString(`""`)
					handledLast = true
				case last && strings.EqualFold(a, "--save"):
					opts.WriteString(`""`)
				case nextIsOpt && strings.EqualFold(a, "--sentinel"):
					handledLast = true
				}
			} else {
				handledLast = true
			}
		default:
			opts.WriteString(Repr(a))
			opts.WriteByte(' ')
			handledLast = true
		}
	}
	cl.Overrides = opts.String()
	return cl
}

// AbsPath makes a configuration file path absolute the way Redis's
// getAbsolutePath does (leading "../" elements are folded into the working
// directory, nothing else is cleaned).
func AbsPath(p string) string {
	return absPath(defaultEnv().cwd, p)
}

func absPath(cwd, p string) string {
	rel := trimSet(p, " \r\n\t")
	if strings.HasPrefix(rel, "/") {
		return rel
	}
	abs := cwd
	if !strings.HasSuffix(abs, "/") {
		abs += "/"
	}
	for strings.HasPrefix(rel, "../") {
		rel = rel[3:]
		if len(abs) > 1 {
			i := strings.LastIndexByte(abs[:len(abs)-1], '/')
			abs = abs[:i+1]
		}
	}
	return abs + rel
}

// maxIncludeDepth stops include cycles, which would crash Redis.
const maxIncludeDepth = 100

type loader struct {
	st       *state
	opts     LoadOptions
	renames  []Rename
	users    [][]string
	userSeen map[string]bool
	modCfg   bool
	gone     map[string]bool // commands renamed away
	added    map[string]bool // commands added by rename
	// setAt is, by directive index, the line that last set it (for
	// the checks finish makes on the final values).
	setAt map[int]*Error
}

// LoadWith loads a configuration as described by o.
func LoadWith(o LoadOptions) (*Config, error) {
	e := o.env
	if e == nil {
		e = defaultEnv()
	}
	st := newState(e)
	st.reading = true
	l := &loader{st: st, opts: o, userSeen: map[string]bool{},
		gone: map[string]bool{}, added: map[string]bool{}}

	var file string
	if o.File != "" {
		file = absPath(e.cwd, o.File)
		st.configFile = file
	}
	if file == "" && !o.Stdin && o.Overrides == "" {
		c := newConfig(st)
		return c, nil
	}
	var content []byte
	if file != "" {
		data, err := e.readFile(file)
		if err != nil {
			return nil, openError(file, err)
		}
		content = data
	}
	if o.Stdin {
		data, err := e.readStdin()
		if err != nil {
			return nil, &Error{Logged: true, Reason: "Fatal error reading config from stdin: " + strerror(err)}
		}
		content = append(content, data...)
	}
	content = append(content, '\n')
	content = append(content, o.Overrides...)
	if err := l.parse(file, string(content), 0); err != nil {
		return nil, err
	}
	if err := l.finish(); err != nil {
		return nil, err
	}
	st.reading = false
	c := newConfig(st)
	c.file = file
	c.renames = l.renames
	c.users = l.users
	return c, nil
}

func openError(path string, err error) *Error {
	return &Error{File: path, Logged: true,
		Reason: fmt.Sprintf("Fatal error, can't open config file '%s': %s", path, strerror(err))}
}

// finish runs the checks Redis makes after reading everything.
func (l *loader) finish() error {
	st := l.st
	if lf := st.get("logfile").s; lf != "" {
		if err := st.env.checkLog(st.env.resolve(st.get("dir").s, lf)); err != nil {
			return &Error{Reason: "Can't open the log file: " + strerror(err)}
		}
	}
	if st.get("cluster-enabled").n != 0 && st.get("replicaof").host != "" {
		return &Error{Reason: "replicaof directive not allowed in cluster mode"}
	}
	// Redis would announce port 0, and put the bus on port 10000: a
	// node no client or other node could reach.
	if st.get("cluster-enabled").n != 0 && st.get("tls-cluster").n != 0 && st.get("tls-port").n == 0 {
		return &Error{Directive: "tls-cluster", Reason: "tls-cluster yes needs a tls-port in cluster mode: the nodes of a TLS cluster are known by their TLS ports"}
	}
	// A value zredis does not honour and a user relies on for safety
	// stops the start (EffectRefuses), named by the line that set it last:
	// a later line or a command-line override may still set a value
	// zredis honours, as `--daemonize no` overrides a file's.
	for i := range directives {
		if reason := refused(&directives[i], st.vals[i]); reason != "" {
			e := &Error{Directive: directives[i].Name, Reason: reason}
			if at := l.setAt[i]; at != nil {
				e.File, e.Line, e.Text = at.File, at.Line, at.Text
			}
			return e
		}
	}
	if reason := checkExpiryDatabases(st); reason != "" {
		e := &Error{Directive: "databases", Reason: reason}
		if at := l.setAt[mustIndex("databases")]; at != nil {
			e.File, e.Line, e.Text = at.File, at.Line, at.Text
		}
		return e
	}
	if reason := checkExpiryCycles(st); reason != "" {
		name := "expiry-zmq-hash-loop-db"
		if strings.HasPrefix(reason, "expiry-zmq-hash-main-db") && !strings.Contains(reason, " are both ") {
			name = "expiry-zmq-hash-main-db"
		}
		e := &Error{Directive: name, Reason: reason}
		if at := l.setAt[mustIndex(name)]; at != nil {
			e.File, e.Line, e.Text = at.File, at.Line, at.Text
		}
		return e
	}
	if reason := checkExpiryStreamKey(st); reason != "" {
		e := &Error{Directive: "expiry-stream-key", Reason: reason}
		if at := l.setAt[mustIndex("expiry-stream-key")]; at != nil {
			e.File, e.Line, e.Text = at.File, at.Line, at.Text
		}
		return e
	}
	if l.modCfg {
		return &Error{Logged: true, Reason: "Module Configuration detected without loadmodule directive or no ApplyConfig call: aborting"}
	}
	return nil
}

// parse reads configuration text the way loadServerConfigFromString does:
// lines split on '\n', trimmed, '#' comments and blank lines skipped,
// arguments split with SplitArgs, the directive name lower-cased.
func (l *loader) parse(file, content string, depth int) error {
	lines := strings.Split(content, "\n")
	for i, raw := range lines {
		if k := strings.IndexByte(raw, 0); k >= 0 {
			raw = raw[:k]
		}
		line := trimSet(raw, " \t\r\n")
		if line == "" || line[0] == '#' {
			continue
		}
		fail := func(reason string) error {
			// The first word names the directive even where the line
			// does not split (unbalanced quotes), so that a secret's
			// value is never shown.
			name := ""
			if a, ok := SplitArgs(line); ok && len(a) > 0 {
				name = strings.ToLower(a[0])
			} else if f := strings.Fields(line); len(f) > 0 {
				name = strings.ToLower(f[0])
			}
			text := line
			if e := lookup(name); e != nil && directives[e.index].Secret {
				text = name + " " + Redacted
			} else if name == "user" {
				text = redactPasswords(line)
			}
			return &Error{File: file, Line: i + 1, Text: text, Directive: name, Reason: reason}
		}
		argv, ok := SplitArgs(line)
		if !ok {
			return fail("Unbalanced quotes in configuration line")
		}
		if len(argv) == 0 {
			continue
		}
		argv[0] = strings.ToLower(argv[0])
		if e := lookup(argv[0]); e != nil {
			d := &directives[e.index]
			if !d.Multi && len(argv) != 2 {
				return fail("wrong number of arguments")
			}
			args := argv[1:]
			if d.Multi && len(argv) == 2 && argv[1] != "" {
				// A single argument is split again so that
				// `--save "900 1 300 10"` works.
				if split, ok := SplitArgs(argv[1]); ok {
					args = split
				} else {
					args = []string{}
				}
			}
			v, errText := parse(l.st, d, l.st.vals[e.index], args)
			if errText != "" {
				return fail(errText)
			}
			l.st.vals[e.index] = v
			if l.setAt == nil {
				l.setAt = map[int]*Error{}
			}
			l.setAt[e.index] = &Error{File: file, Line: i + 1, Text: line, Directive: d.Name}
			continue
		}
		switch {
		case len(argv) == 2 && isDeprecated(argv[0]):
			// Accepted and ignored, as Redis 7.0 does.
		case argv[0] == "include" && len(argv) == 2:
			if err := l.include(argv[1], depth); err != nil {
				return err
			}
		case argv[0] == "rename-command" && len(argv) == 3:
			if reason := l.rename(argv[1], argv[2]); reason != "" {
				return fail(reason)
			}
		case argv[0] == "user" && len(argv) >= 2:
			if l.userSeen[argv[1]] {
				return fail(fmt.Sprintf("Error in user declaration '%s': Duplicate user found. A user can only be defined once in config files", argv[1]))
			}
			if l.opts.ValidateUser != nil {
				if at, reason := l.opts.ValidateUser(argv[2:]); reason != "" {
					// Redis names argv[at] with at counted among the
					// rules: one of the first words of the line.
					named := redactPasswords(argv[min(at, len(argv)-1)])
					return fail(fmt.Sprintf("Error in user declaration '%s': %s", named, reason))
				}
			}
			l.userSeen[argv[1]] = true
			l.users = append(l.users, append([]string(nil), argv[1:]...))
		case argv[0] == "loadmodule" && len(argv) >= 2:
			return &Error{File: file, Line: i + 1, Text: line, Directive: argv[0], Logged: true,
				Reason: fmt.Sprintf("Can't load module from %s: modules are not supported", argv[1])}
		case strings.Contains(argv[0], "."):
			if len(argv) != 2 {
				return fail("Module config specified without value")
			}
			l.modCfg = true
		case argv[0] == "sentinel":
			if len(argv) != 1 {
				return fail("sentinel directive while not in sentinel mode")
			}
		default:
			return fail("Bad directive or wrong number of arguments")
		}
	}
	return nil
}

func isDeprecated(name string) bool {
	switch name {
	case "list-max-ziplist-entries", "list-max-ziplist-value", "lua-replicate-commands":
		return true
	}
	return false
}

// include reads another file (or, with glob characters, every matching
// file concatenated) and parses it as a separate text, as Redis does.
// Relative paths are relative to the working directory, i.e. to the
// current dir value.
func (l *loader) include(path string, depth int) error {
	if depth >= maxIncludeDepth {
		return &Error{File: path, Logged: true, Reason: fmt.Sprintf("Fatal error, can't open config file '%s': Too many levels of include", path)}
	}
	e := l.st.env
	cwd := l.st.get("dir").s
	var content []byte
	if strings.ContainsAny(path, "*?[") {
		matches, err := e.glob(e.resolve(cwd, path))
		if err == nil {
			for _, m := range matches {
				data, err := e.readFile(m)
				if err != nil {
					return openError(m, err)
				}
				content = append(content, data...)
			}
		}
	} else {
		data, err := e.readFile(e.resolve(cwd, path))
		if err != nil {
			return openError(path, err)
		}
		content = data
	}
	return l.parse(path, string(content), depth+1)
}

func (l *loader) rename(from, to string) string {
	exists := func(name string) bool {
		k := strings.ToLower(name)
		if l.added[k] {
			return true
		}
		if l.gone[k] {
			return false
		}
		return l.opts.CommandExists(name)
	}
	if l.opts.CommandExists != nil {
		if !exists(from) {
			return "No such command in rename-command"
		}
		l.gone[strings.ToLower(from)] = true
		delete(l.added, strings.ToLower(from))
		if to != "" {
			if exists(to) {
				return "Target command name already exists"
			}
			l.added[strings.ToLower(to)] = true
		}
	}
	l.renames = append(l.renames, Rename{From: from, To: to})
	return ""
}

// redactPasswords hides the clear-text passwords (">pass", "<pass") of a
// "user" line, or of one of its words, in an error: Redis echoes them, but
// a password must not reach the log.
func redactPasswords(text string) string {
	words := strings.Split(text, " ")
	for i, w := range words {
		if t := strings.TrimLeft(w, `"'`); strings.HasPrefix(t, ">") || strings.HasPrefix(t, "<") {
			words[i] = w[:len(w)-len(t)+1] + Redacted
		}
	}
	return strings.Join(words, " ")
}
