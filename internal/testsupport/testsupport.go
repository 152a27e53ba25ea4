// Package testsupport starts server processes for tests: a real
// redis-server or the zredis-server binary, on a free loopback port, in a
// directory of its own, stopped when the test ends.
//
// It imports only the standard library, so that the tests of any zredis
// package can use it.
package testsupport

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Options describe a server to start.
type Options struct {
	// Name names the process in messages and in Proc.Name. With "redis",
	// persistence is off unless Args set it: --save "" and --appendonly
	// no are added when Args hold no --save or --appendonly.
	Name string
	// Bin is the executable.
	Bin string
	// Args are the server's arguments (a configuration file first, then
	// directives). Start adds "--dir D --port N --bind 127.0.0.1" after
	// them, unless ArgsOnly is set.
	Args []string
	// Dir is the working directory, passed as --dir. When empty, the
	// --dir of Args is used (a test that restarts a server on the same
	// data passes its own, and removes it itself), or else a new
	// temporary directory that is removed when the process is closed.
	Dir string
	// Port is the port to listen on; 0 picks a free one (and retries
	// with another when the start fails, in case another process took
	// it first).
	Port int
	// ArgsOnly passes Args as they are, for a configuration file that
	// sets port, bind and dir itself: nothing is added, and Port must be
	// the port the file sets (on 127.0.0.1). The process still runs in
	// Dir (or a temporary directory).
	ArgsOnly bool
	// Env are extra environment entries ("NAME=value") on top of the
	// test's environment.
	Env []string
	// Password, when set, is sent with AUTH before the readiness PING,
	// as User's password when User is set, else the default user's.
	Password string
	User     string
	// NoWait returns as soon as the process is started, without waiting
	// for it to answer PING (a test that watches the start itself, or
	// expects the process to exit).
	NoWait bool
	// ReadyTimeout bounds the wait for the PING reply; 30 s when zero
	// (a start on a busy machine must not fail a test).
	ReadyTimeout time.Duration
}

// Proc is a server process started by a test.
type Proc struct {
	Name string
	Port int
	Addr string
	Dir  string

	cmd     *exec.Cmd
	logPath string
	ownDir  bool
	done    chan struct{}
}

// Output is what the process printed so far (stdout and stderr).
func (p *Proc) Output() string {
	b, _ := os.ReadFile(p.logPath)
	return string(b)
}

// Pid is the process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig to the process.
func (p *Proc) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop sends SIGTERM and waits for the exit (SIGKILL after 10 s).
func (p *Proc) Stop() {
	if p.Exited() {
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// Kill sends SIGKILL and waits for the exit.
func (p *Proc) Kill() {
	if p.Exited() {
		return
	}
	p.cmd.Process.Kill()
	<-p.done
}

// Wait waits for the process to exit and returns its exit code (-1 when
// a signal ended it), or false when it still runs after timeout.
func (p *Proc) Wait(timeout time.Duration) (int, bool) {
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode(), true
	case <-time.After(timeout):
		return -1, false
	}
}

// Close stops the process and removes what Start created for it: its
// output file and, unless the test gave it, its directory.
func (p *Proc) Close() {
	p.Stop()
	os.Remove(p.logPath)
	if p.ownDir {
		os.RemoveAll(p.Dir)
	}
}

// FreePort returns a TCP port free on 127.0.0.1, chosen at random below
// the kernel's ephemeral range. A port the kernel hands out for port 0
// lies in that range, and it may hand it out again at once as the local
// port of any outgoing connection: with many tests connecting (two suites
// side by side), a server then failed to bind a port picked a moment
// before ("address already in use", seen for expiry-zmq-endpoints).
//
// A port is handed out once per test process: a test that kills a server
// leaves its port free while it still watches it, and a server another
// test started there was taken for the killed one come back (sentinels
// of a failover test saw it "+reboot" and learnt of the other test's
// sentinels through it, then could not gather a majority).
func FreePort(t testing.TB) int {
	t.Helper()
	low := ephemeralLow()
	for range 200 {
		port := freePortMin + rand.IntN(low-freePortMin)
		if !portsGiven.claim(port) {
			continue
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			ln.Close()
			return port
		}
	}
	// The range is used up (many runs of the tests in one process): a
	// port the kernel picks, not one handed out before.
	for range 200 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if portsGiven.claim(port) {
			return port
		}
	}
	t.Fatal("FreePort: every port tried was handed out before")
	return 0
}

// portsGiven is the set of ports FreePort has picked in this process.
var portsGiven = portSet{m: map[int]bool{}}

type portSet struct {
	sync.Mutex
	m map[int]bool
}

// claim records port and reports whether it was not recorded before.
func (s *portSet) claim(port int) bool {
	s.Lock()
	defer s.Unlock()
	if s.m[port] {
		return false
	}
	s.m[port] = true
	return true
}

// freePortMin is the lowest port FreePort picks: above the well-known and
// the commonly used registered ports.
const freePortMin = 15000

// ephemeralLow is the first port of the kernel's ephemeral range
// (net.ipv4.ip_local_port_range), 32768 where it cannot be read.
func ephemeralLow() int {
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				low = n
			}
		}
	}
	if low <= freePortMin+1000 {
		low = freePortMin + 1000 // a tuned range: fall back to some room
	}
	return low
}

// Start starts a server as o describes and, unless o.NoWait, waits until
// it answers PING; the test fails when it does not. The process is
// closed (stopped, its temporary directory removed) when the test ends.
func Start(t testing.TB, o Options) *Proc {
	t.Helper()
	p, err := Launch(t, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			p.dumpIfHung(t)
		}
		p.Close()
	})
	return p
}

// dumpIfHung logs the goroutines of a zredis process that no longer
// answers when its test failed, so that a timeout seen once on a busy
// machine shows where the server was stuck: SIGQUIT makes the Go runtime
// print every goroutine's stack to stderr, which goes to the output file,
// and exit.
func (p *Proc) dumpIfHung(t testing.TB) {
	if p.Name != "zredis" || p.Exited() || p.answers(2*time.Second) {
		return
	}
	p.Signal(syscall.SIGQUIT)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
	}
	out := p.Output()
	if i := strings.Index(out, "SIGQUIT"); i >= 0 {
		out = out[i:]
	}
	t.Logf("%s on %s did not answer PING within 2 s; its goroutines:\n%s", p.Name, p.Addr, out)
}

// answers reports whether the process replies anything to an inline PING
// (an error such as NOAUTH counts) within timeout.
func (p *Proc) answers(timeout time.Duration) bool {
	c, err := net.DialTimeout("tcp", p.Addr, timeout)
	if err != nil {
		var ne net.Error
		// Refused: not listening in plain TCP, no hang this can tell.
		return !(errors.As(err, &ne) && ne.Timeout())
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	_, err = bufio.NewReader(c).ReadString('\n')
	return err == nil
}

// StartRedis starts a real redis-server 7.0 with args (persistence off
// unless args set it); without one, it ends the test as RequireRedis does.
func StartRedis(t testing.TB, args ...string) *Proc {
	t.Helper()
	return Start(t, Options{Name: "redis", Bin: RequireRedis(t), Args: args})
}

// StartZredis starts the zredis-server binary bin with args.
func StartZredis(t testing.TB, bin string, args ...string) *Proc {
	t.Helper()
	return Start(t, Options{Name: "zredis", Bin: bin, Args: args})
}

// Launch is Start for a process the caller closes itself (one shared by
// several tests): it returns the error instead of failing the test and
// registers no cleanup.
func Launch(t testing.TB, o Options) (*Proc, error) {
	if o.ArgsOnly && o.Port == 0 {
		return nil, fmt.Errorf("testsupport: ArgsOnly needs the Port the arguments set")
	}
	attempts := 3
	if o.Port != 0 || o.NoWait {
		attempts = 1
	}
	var lastErr error
	for attempt := 0; attempt < attempts; attempt++ {
		port := o.Port
		if port == 0 {
			port = FreePort(t)
		}
		p, err := launch(o, port)
		if err != nil {
			return nil, err
		}
		if o.NoWait {
			return p, nil
		}
		if err := p.waitReady(o); err != nil {
			p.Stop()
			lastErr = fmt.Errorf("%s did not start: %v\n%s", o.Name, err, p.Output())
			p.Close()
			continue
		}
		return p, nil
	}
	return nil, lastErr
}

func launch(o Options, port int) (*Proc, error) {
	p := &Proc{Name: o.Name, Port: port, Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		done: make(chan struct{})}
	args := append([]string{}, o.Args...)
	p.Dir = o.Dir
	if p.Dir == "" && !o.ArgsOnly {
		p.Dir = argAfter(o.Args, "--dir")
	}
	if p.Dir == "" {
		dir, err := os.MkdirTemp("", "zredis-proc")
		if err != nil {
			return nil, err
		}
		p.Dir, p.ownDir = dir, true
	}
	if !o.ArgsOnly {
		if argAfter(o.Args, "--dir") == "" {
			args = append(args, "--dir", p.Dir)
		}
		args = append(args, "--port", strconv.Itoa(port), "--bind", "127.0.0.1")
		if o.Name == "redis" {
			// No persistence unless the test asks for it.
			if !hasArg(o.Args, "--save") {
				args = append(args, "--save", "")
			}
			if !hasArg(o.Args, "--appendonly") {
				args = append(args, "--appendonly", "no")
			}
		}
	}
	// The output goes to a file, not a pipe: a child the server forks
	// (a background save) would keep a pipe open, and Wait with it.
	log, err := os.CreateTemp("", "zredis-proc-*.log")
	if err != nil {
		p.removeOwnDir()
		return nil, err
	}
	defer log.Close()
	p.logPath = log.Name()
	p.cmd = exec.Command(o.Bin, args...)
	p.cmd.Dir = p.Dir
	p.cmd.Stdout, p.cmd.Stderr = log, log
	if len(o.Env) > 0 {
		p.cmd.Env = append(os.Environ(), o.Env...)
	}
	if err := p.cmd.Start(); err != nil {
		os.Remove(p.logPath)
		p.removeOwnDir()
		return nil, err
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	return p, nil
}

func (p *Proc) removeOwnDir() {
	if p.ownDir {
		os.RemoveAll(p.Dir)
	}
}

// waitReady waits until the process answers PING with PONG (after AUTH
// when o has a password).
func (p *Proc) waitReady(o Options) error {
	timeout := o.ReadyTimeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if p.Exited() {
			return fmt.Errorf("exited")
		}
		if p.ping(o.User, o.Password) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("timeout")
}

func (p *Proc) ping(user, password string) bool {
	c, err := net.DialTimeout("tcp", p.Addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	rd := bufio.NewReader(c)
	if password != "" {
		if user != "" {
			fmt.Fprintf(c, "*3\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(user), user, len(password), password)
		} else {
			fmt.Fprintf(c, "*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n", len(password), password)
		}
		if line, _ := rd.ReadString('\n'); line != "+OK\r\n" {
			return false
		}
	}
	c.Write([]byte("PING\r\n"))
	line, _ := rd.ReadString('\n')
	return strings.HasPrefix(line, "+PONG")
}

// argAfter returns the argument following name in args, or "".
func argAfter(args []string, name string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == name {
			return args[i+1]
		}
	}
	return ""
}

// hasArg reports whether args contains name.
func hasArg(args []string, name string) bool {
	for _, a := range args {
		if a == name {
			return true
		}
	}
	return false
}
