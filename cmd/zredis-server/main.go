// Command zredis-server is a Redis-compatible server that also pushes
// every expired key, with its value, to 0MQ listeners.
//
//	zredis-server [/path/to/redis.conf] [--directive value ...]
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/zredis/zredis/commands"
	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/persistence/aof"
	"github.com/zredis/zredis/persistence/rdb"
	"github.com/zredis/zredis/server"
)

// usage is redis-server 7.0's help with the modes zredis does not serve
// left out, followed by zredis's own directives, read from the config
// table so that the list cannot drift from what the server accepts.
func usage(w io.Writer) {
	fmt.Fprintf(w, `Usage: ./zredis-server [/path/to/redis.conf] [options] [-]
       ./zredis-server - (read config from stdin)
       ./zredis-server -v or --version
       ./zredis-server -h or --help
       ./zredis-server --check-aof [--fix|--truncate-to-timestamp $timestamp] <file.manifest|file.aof>
       ./zredis-server --check-rdb <rdb-file-name>

Examples:
       ./zredis-server (run the server with default conf)
       echo 'maxmemory 128mb' | ./zredis-server -
       ./zredis-server /etc/redis/6379.conf
       ./zredis-server --port 7777
       ./zredis-server --port 7777 --replicaof 127.0.0.1 8888
       ./zredis-server /etc/myredis.conf --loglevel verbose -
       ./zredis-server /etc/myredis.conf --loglevel verbose
       ./zredis-server /etc/redis/6379.conf --expiry-zmq-endpoints tcp://127.0.0.1:5556

Options are redis.conf directives, as redis-server 7.0 takes them. The
expiry stream adds its own (docs/expiry-stream.md has the whole story):
`)
	for _, d := range config.Directives() {
		if d.ZRedis {
			fmt.Fprintf(w, "       --%s %s\n%s", d.Name, directiveArg(d), wrap(d.Help+" ["+directiveDefault(d)+"]", "             ", 78))
		}
	}
	fmt.Fprintf(w, `
Not served, refused at start: --sentinel (run redis-sentinel beside zredis:
it monitors zredis as it monitors redis-server), --test-memory (use
memtester), --check-system.
`)
}

// wrap breaks text into lines of at most width columns, each indented.
func wrap(text, indent string, width int) string {
	var b strings.Builder
	line := indent
	for _, word := range strings.Fields(text) {
		if len(line) > len(indent) && len(line)+1+len(word) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += word
	}
	b.WriteString(line + "\n")
	return b.String()
}

// directiveDefault is a directive's default as an operator would write it.
func directiveDefault(d config.Directive) string {
	if d.Default == "" {
		return "default: none"
	}
	if d.Kind == config.KindMemory {
		if n, err := strconv.ParseInt(d.Default, 10, 64); err == nil && n > 0 {
			switch {
			case n%(1<<30) == 0:
				return fmt.Sprintf("default: %dgb", n>>30)
			case n%(1<<20) == 0:
				return fmt.Sprintf("default: %dmb", n>>20)
			}
		}
	}
	return "default: " + d.Default
}

// directiveArg names the argument a directive takes, for usage.
func directiveArg(d config.Directive) string {
	switch d.Kind {
	case config.KindBool:
		return "yes|no"
	case config.KindInt:
		return "N"
	case config.KindMemory:
		return "BYTES"
	case config.KindList:
		return "VALUE [VALUE ...]"
	case config.KindString:
		return "VALUE"
	case config.KindFlags:
		names := make([]string, len(d.Enum))
		for i, e := range d.Enum {
			names[i] = e.Name
		}
		return "[" + strings.Join(names, "|") + " ...]"
	}
	return "VALUE"
}

// unservedMode is why zredis refuses a mode of redis-server's command
// line it does not serve, or "" for a command line it serves. Redis
// enters Sentinel mode on --sentinel anywhere in its arguments, or when
// started under a name holding "redis-sentinel" (checkForSentinelMode);
// a zredis started either way would otherwise come up as an ordinary
// server, which its operator did not ask for.
func unservedMode(exe string, args []string) string {
	if strings.Contains(filepath.Base(exe), "sentinel") {
		return "zredis does not serve Sentinel mode (started as " + filepath.Base(exe) + "): run redis-sentinel, which monitors zredis as it monitors redis-server"
	}
	for i, a := range args {
		switch {
		case a == "--sentinel":
			return "zredis does not serve Sentinel mode (--sentinel): run redis-sentinel, which monitors zredis as it monitors redis-server"
		case i == 0 && a == "--test-memory":
			return "zredis does not test memory (--test-memory): use memtester, or memtest86+ at boot"
		case i == 0 && a == "--check-system":
			return "zredis does not run redis-server's system checks (--check-system)"
		}
	}
	return ""
}

func main() {
	os.Exit(run(os.Args[0], os.Args[1:]))
}

func run(exe string, args []string) int {
	// The check tools, also reachable through the server binary.
	if len(args) >= 1 {
		switch args[0] {
		case "--check-aof":
			return aof.Check(append([]string{"zredis-check-aof"}, args[1:]...), aof.CheckOptions{
				Stdout: os.Stdout, Stdin: os.Stdin, CheckRDB: rdb.Check,
			})
		case "--check-rdb":
			if len(args) != 2 {
				fmt.Fprintln(os.Stderr, "Usage: zredis-server --check-rdb <rdb-file-name>")
				return 1
			}
			return rdb.CheckFile(args[1], os.Stdout)
		}
	}
	if len(args) == 1 {
		switch args[0] {
		case "-v", "--version":
			fmt.Printf("zredis server v=%s redis=%s bits=64 go=%s\n", server.Version, server.RedisVersion, runtime.Version())
			return 0
		case "-h", "--help":
			usage(os.Stdout)
			return 0
		}
	}
	if why := unservedMode(exe, args); why != "" {
		fmt.Fprintln(os.Stderr, why)
		return 1
	}
	config.Banner = "zredis " + server.Version
	child := isDaemonChild()
	cwd, _ := os.Getwd()
	cmdline := config.ParseArgs(args)
	file := cmdline.File
	cfg, err := config.LoadWith(config.LoadOptions{
		File: cmdline.File, Stdin: cmdline.Stdin, Overrides: cmdline.Overrides,
		// rename-command names a command of the table, and not one a
		// previous line took (Redis's "No such command in rename-command",
		// "Target command name already exists").
		CommandExists: func(name string) bool { return commands.Table().Lookup([]byte(name)) != nil },
		// A "user" line's rules are checked as the file is read; unknown
		// commands are left to the loading of the users.
		ValidateUser: validateUser,
	})
	if err != nil {
		// A fatal configuration error goes to stderr as Redis prints it;
		// the few Redis reports through its log go to stdout as a log line.
		var ce *config.Error
		if errors.As(err, &ce) && ce.Logged {
			server.NewLogger(os.Stdout, server.LevelNotice).Warningf("%s", ce.Error())
		} else {
			fmt.Fprintln(os.Stderr, err)
		}
		return 1
	}

	out := io.Writer(os.Stdout)
	if lf := cfg.String("logfile"); lf != "" {
		f, err := os.OpenFile(lf, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintf(os.Stderr, "Can't open the log file: %v\n", err)
			return 1
		}
		f.Close()
		out = server.LogFile(lf)
	}
	log := server.NewLogger(out, server.ParseLevel(cfg.String("loglevel")))
	defer startSyslog(cfg, log)()
	log.SetRole('C')
	// The detached copy that daemonize starts goes on where its parent
	// stopped, as Redis's forked child does.
	if !child {
		log.Warningf("oO0OoO0OoO0Oo zredis is starting oO0OoO0OoO0Oo")
		log.Warningf("zredis version=%s, redis compatibility=%s, bits=64, pid=%d, just started", server.Version, server.RedisVersion, os.Getpid())
		if file == "" {
			log.Warningf("Warning: no config file specified, using the default config. In order to specify a config file use ./zredis-server /path/to/redis.conf")
		} else {
			log.Warningf("Configuration loaded")
		}
	}
	sup := detectSupervision(cfg, log)
	background := cfg.Bool("daemonize") && sup.mode == supervisedNo
	if background && !child {
		if cmdline.Stdin {
			log.Warningf("daemonize yes is not supported with the configuration read from standard input: the detached server could not read it again")
			return 1
		}
		if err := daemonize(args, cwd); err != nil {
			log.Warningf("Can't daemonize: %v", err)
			return 1
		}
		return 0
	}
	// Log lines say the role, as Redis's: S while a replica.
	if _, _, replica := cfg.ReplicaOf(); replica {
		log.SetRole('S')
	} else {
		log.SetRole('M')
	}
	log.Noticef("Running mode=standalone, port=%d.", cfg.Int("port"))

	if err := newOpenFiles(cfg, log).start(); err != nil {
		log.Warningf("%v", err)
		return 1
	}
	srv := server.New(cfg, log, nil)
	srv.Supervisor = sup
	oom := &oomScore{cfg: cfg, path: "/proc/self/oom_score_adj"}
	oom.watch(log)
	stopped := make(chan struct{})
	// The pid file is written once the listeners are bound, as Redis
	// writes it after initServer: a second start that cannot bind never
	// touches the running server's file.
	var pid pidFile
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-srv.Bound:
			pid = writePidFile(cfg, background, log)
		case <-stopped:
			return
		}
		select {
		case <-srv.Ready:
			sup.ready(cfg, log)
		case <-stopped:
		}
	}()
	defer func() {
		<-watched
		pid.remove(log)
	}()
	// As Redis's setupSignalHandlers: a hang-up of the terminal and a
	// log reader that went away (a write to a closed pipe on stdout) must
	// not kill the server.
	signal.Ignore(syscall.SIGHUP, syscall.SIGPIPE)
	sigs := make(chan os.Signal, 1)
	// Never stopped: a signal after Run returned must not kill the
	// process with the default action (exit status 143) while it exits.
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		for sig := range sigs {
			srv.Signal(sig)
		}
	}()
	defer close(stopped)
	if err := srv.Run(context.Background()); err != nil {
		log.Warningf("%v", err)
		return 1
	}
	return 0
}

// validateUser checks the rules of a "user" line on a user that is not
// kept (ACLAppendUserForLoading). An unclosed selector is reported with
// the text Redis's stale errno gives it.
func validateUser(rules []string) (int, string) {
	merged, at, ok := engine.MergeSelectorArgs(rules)
	if !ok {
		return at, "Unknown command or category name in ACL"
	}
	if j, err := engine.NewACL(commands.Table()).ValidateRules(merged); err != nil {
		return j, err.Error()
	}
	return 0, ""
}
