package main

// The process-level directives, as redis-server's main() applies them:
// daemonize, supervised (systemd, upstart), pidfile and oom-score-adj.

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/zredis/zredis/config"
	"github.com/zredis/zredis/server"
)

// daemonChildEnv marks the detached copy of the process that daemonize
// starts; the copy removes it from its environment at once.
const daemonChildEnv = "ZREDIS_DAEMONIZED"

// defaultPidFile is Redis's CONFIG_DEFAULT_PID_FILE, used with daemonize
// yes and no pidfile.
const defaultPidFile = "/var/run/redis.pid"

// Values of the supervised directive (its enum order in config/table.go).
const (
	supervisedUpstart = 0
	supervisedSystemd = 1
	supervisedAuto    = 2
	supervisedNo      = 3
)

// isDaemonChild reports whether this process is the detached copy that
// daemonize started, and forgets the mark.
func isDaemonChild() bool {
	if os.Getenv(daemonChildEnv) == "" {
		return false
	}
	os.Unsetenv(daemonChildEnv)
	return true
}

// supervision is what supervised asks for once resolved against the
// environment (redisIsSupervised): supervisedNo, supervisedSystemd or
// supervisedUpstart.
type supervision struct {
	mode   int
	notify string // NOTIFY_SOCKET for systemd
}

// detectSupervision resolves the supervised directive as Redis does:
// auto picks upstart when UPSTART_JOB is set, else systemd when
// NOTIFY_SOCKET is set; a mode whose variable is missing is logged and
// dropped. Upstart is told of readiness by stopping with SIGSTOP, which
// Redis does right here.
func detectSupervision(cfg *config.Config, log *server.Logger) supervision {
	mode := int(cfg.Int("supervised"))
	if mode == supervisedAuto {
		switch {
		case os.Getenv("UPSTART_JOB") != "":
			mode = supervisedUpstart
		case os.Getenv("NOTIFY_SOCKET") != "":
			mode = supervisedSystemd
		default:
			mode = supervisedNo
		}
	}
	switch mode {
	case supervisedUpstart:
		if os.Getenv("UPSTART_JOB") == "" {
			log.Warningf("upstart supervision requested, but UPSTART_JOB not found!")
			return supervision{mode: supervisedNo}
		}
		log.Noticef("supervised by upstart, will stop to signal readiness.")
		syscall.Kill(os.Getpid(), syscall.SIGSTOP)
		os.Unsetenv("UPSTART_JOB")
		return supervision{mode: supervisedUpstart}
	case supervisedSystemd:
		sock := os.Getenv("NOTIFY_SOCKET")
		if sock == "" {
			log.Warningf("systemd supervision requested or auto-detected, but NOTIFY_SOCKET not found!")
			return supervision{mode: supervisedNo}
		}
		s := supervision{mode: supervisedSystemd, notify: sock}
		if err := s.systemd("STATUS=zredis is loading...\n"); err != nil {
			log.Warningf("Can't send notification to systemd: %v", err)
			return supervision{mode: supervisedNo}
		}
		log.Noticef("Supervised by systemd. Please make sure you set appropriate values for TimeoutStartSec and TimeoutStopSec in your service unit.")
		return s
	}
	return supervision{mode: supervisedNo}
}

// systemd sends one sd_notify message over NOTIFY_SOCKET (a unix datagram
// socket; a leading '@' names an abstract one).
func (s supervision) systemd(msg string) error {
	if s.mode != supervisedSystemd {
		return nil
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: s.notify, Net: "unixgram"})
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write([]byte(msg))
	return err
}

// ready tells the supervisor that the server accepts connections.
func (s supervision) ready(cfg *config.Config, log *server.Logger) {
	if s.mode != supervisedSystemd {
		return
	}
	status := "STATUS=Ready to accept connections\n"
	if _, _, replica := cfg.ReplicaOf(); replica {
		status = "STATUS=Ready to accept connections in read-only mode. Waiting for MASTER <-> REPLICA sync\n"
	}
	if err := s.systemd(status + "READY=1\n"); err != nil {
		log.Warningf("Can't send notification to systemd: %v", err)
	}
}

// Supervised is INFO's process_supervised: "systemd", "upstart" or "no".
func (s supervision) Supervised() string {
	switch s.mode {
	case supervisedSystemd:
		return "systemd"
	case supervisedUpstart:
		return "upstart"
	}
	return "no"
}

// Notify sends the server's state lines to systemd (nothing to upstart,
// which only learns of readiness).
func (s supervision) Notify(state string) { _ = s.systemd(state) }

// daemonize detaches the server as Redis's daemonize() does, without
// forking a Go process: it starts this program again with the same
// arguments and working directory in a new session, its standard streams
// on /dev/null, and returns; the caller then exits with status 0 while the
// copy serves. The configuration cannot come from standard input, which
// the copy could not read again.
func daemonize(args []string, cwd string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	cmd := exec.Command(exe, args...)
	cmd.Dir = cwd
	cmd.Env = append(os.Environ(), daemonChildEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, null, null
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

// pidFile is the pid file this process wrote, removed at exit.
type pidFile struct{ path string }

// writePidFile writes the pid file as Redis's createPidFile does: when
// pidfile is set, or under daemonize (Redis's default path then). A
// failure is logged and the server goes on, as in Redis.
func writePidFile(cfg *config.Config, background bool, log *server.Logger) pidFile {
	path := cfg.String("pidfile")
	if path == "" {
		if !background {
			return pidFile{}
		}
		path = defaultPidFile
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		log.Warningf("Failed to write PID file: %s", syscallMessage(err))
		return pidFile{}
	}
	return pidFile{path: path}
}

// remove deletes the pid file at shutdown, as prepareForShutdown does.
func (p pidFile) remove(log *server.Logger) {
	if p.path == "" {
		return
	}
	log.Noticef("Removing the pid file.")
	if b, err := os.ReadFile(p.path); err == nil && strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		return // another process's now
	}
	os.Remove(p.path)
}

// oomScore applies oom-score-adj and oom-score-adj-values to
// /proc/self/oom_score_adj as Redis's setOOMScoreAdj does: the first
// adjustment saves the score the process had, relative adds the class's
// value to it, absolute writes the value, and no puts the saved score
// back. zredis never forks, so only the master and replica classes (the
// first two values) apply. It is owned by main and changed only from
// CONFIG SET hooks, which CONFIG SET serializes.
type oomScore struct {
	cfg      *config.Config
	path     string
	adjusted bool
	base     int
}

// apply writes the score for the current configuration.
func (o *oomScore) apply() error {
	var val int
	switch o.cfg.Int("oom-score-adj") {
	case 0: // no
		if !o.adjusted {
			return nil
		}
		o.adjusted = false
		val = o.base
	default:
		if !o.adjusted {
			raw, err := os.ReadFile(o.path)
			if err != nil {
				return fmt.Errorf("Unable to read oom_score_adj: %s", syscallMessage(err))
			}
			o.base, _ = strconv.Atoi(strings.TrimSpace(string(raw)))
			o.adjusted = true
		}
		class := 0
		if _, _, replica := o.cfg.ReplicaOf(); replica {
			class = 1
		}
		val = int(o.cfg.OOMScoreAdjValues()[class])
		if o.cfg.Int("oom-score-adj") == 1 { // relative
			val += o.base
		}
		val = min(max(val, -1000), 1000)
	}
	if err := os.WriteFile(o.path, []byte(strconv.Itoa(val)+"\n"), 0); err != nil {
		return fmt.Errorf("Unable to write oom_score_adj: %s", syscallMessage(err))
	}
	return nil
}

// watch applies the score now and on every CONFIG SET of either directive;
// a failed write fails the CONFIG SET with Redis's message (the old values
// are then restored and applied again).
func (o *oomScore) watch(log *server.Logger) {
	if err := o.apply(); err != nil {
		log.Warningf("%v", err)
	}
	hook := func(string) error {
		if err := o.apply(); err != nil {
			log.Warningf("%v", err)
			return errors.New("Failed to set current oom_score_adj. Check server logs.")
		}
		return nil
	}
	o.cfg.OnChange("oom-score-adj", hook)
	o.cfg.OnChange("oom-score-adj-values", hook)
}

// syscallMessage is an error's strerror text, as Redis logs it.
func syscallMessage(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		s := errno.Error()
		return strings.ToUpper(s[:1]) + s[1:]
	}
	return err.Error()
}

// minReservedFDs is the number of file descriptors Redis keeps for
// itself besides one per client (CONFIG_MIN_RESERVED_FDS).
const minReservedFDs = 32

// openFiles fits maxclients to the open file limit as Redis's
// adjustOpenFilesLimit does: it raises the limit to maxclients + 32 when
// it can, and otherwise lowers maxclients to what the limit allows, with
// Redis's log lines, so that clients past it get "max number of clients
// reached" instead of the server running out of descriptors. getrlimit
// and setrlimit are fields for tests.
type openFiles struct {
	cfg       *config.Config
	log       *server.Logger
	getrlimit func(*syscall.Rlimit) error
	setrlimit func(*syscall.Rlimit) error
}

func newOpenFiles(cfg *config.Config, log *server.Logger) *openFiles {
	return &openFiles{cfg: cfg, log: log,
		getrlimit: func(r *syscall.Rlimit) error { return syscall.Getrlimit(syscall.RLIMIT_NOFILE, r) },
		setrlimit: func(r *syscall.Rlimit) error { return syscall.Setrlimit(syscall.RLIMIT_NOFILE, r) },
	}
}

// adjust returns the maxclients the limit allows (the configured one when
// it fits), or an error when not even one client fits.
func (o *openFiles) adjust(maxclients uint64) (uint64, error) {
	maxfiles := maxclients + minReservedFDs
	var lim syscall.Rlimit
	if err := o.getrlimit(&lim); err != nil {
		o.log.Warningf("Unable to obtain the current NOFILE limit (%s), assuming 1024 and setting the max clients configuration accordingly.", syscallMessage(err))
		return min(maxclients, 1024-minReservedFDs), nil
	}
	old := lim.Cur
	if old >= maxfiles {
		return maxclients, nil
	}
	// Try the limit we want, then 16 less at a time, as Redis does.
	const step = 16
	best := maxfiles
	var setErr error
	for best > old {
		try := syscall.Rlimit{Cur: best, Max: max(lim.Max, best)}
		if setErr = o.setrlimit(&try); setErr == nil {
			break
		}
		if best < step {
			best = old
			break
		}
		best -= step
	}
	best = max(best, old)
	if best >= maxfiles {
		o.log.Noticef("Increased maximum number of open files to %d (it was originally set to %d).", maxfiles, old)
		return maxclients, nil
	}
	if best <= minReservedFDs {
		return 0, fmt.Errorf("Your current 'ulimit -n' of %d is not enough for the server to start. Please increase your open file limit to at least %d. Exiting.", old, maxfiles)
	}
	reduced := best - minReservedFDs
	o.log.Warningf("You requested maxclients of %d requiring at least %d max file descriptors.", maxclients, maxfiles)
	msg := "Operation not permitted"
	if setErr != nil {
		msg = syscallMessage(setErr)
	}
	o.log.Warningf("Server can't set maximum open files to %d because of OS error: %s.", maxfiles, msg)
	o.log.Warningf("Current maximum open files is %d. maxclients has been reduced to %d to compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'.", best, reduced)
	return reduced, nil
}

// start fits maxclients at start, lowering the configured value (CONFIG
// GET shows it) when the limit is too low, and checks every CONFIG SET
// maxclients: one the limit cannot serve fails with Redis's message and
// the old value stays.
func (o *openFiles) start() error {
	want := o.cfg.Uint("maxclients")
	got, err := o.adjust(want)
	if err != nil {
		return err
	}
	if got != want {
		if err := o.cfg.Set([]string{"maxclients", strconv.FormatUint(got, 10)}); err != nil {
			return err
		}
	}
	o.cfg.OnChange("maxclients", func(v string) error {
		n, _ := strconv.ParseUint(v, 10, 64)
		fit, err := o.adjust(n)
		if err == nil && fit == n {
			return nil
		}
		o.log.Warningf("Failed applying new configuration. Possibly related to new maxclients setting. Restoring previous settings.")
		return fmt.Errorf("The operating system is not able to handle the specified number of clients, try with %d", fit)
	})
	return nil
}
