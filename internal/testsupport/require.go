package testsupport

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// RequireAllEnv names the environment variable that asks for every test
// to run: with it set (to anything but "" or "0"), a test whose tool or
// module is missing fails instead of skipping. make test sets it, and
// so .ci/run, so that a suite cannot quietly stop testing because an
// install went missing.
const RequireAllEnv = "ZREDIS_TEST_REQUIRE_ALL"

// RequireAll reports whether the environment asks for every test to run
// (RequireAllEnv).
func RequireAll() bool {
	v := os.Getenv(RequireAllEnv)
	return v != "" && v != "0"
}

// Require ends the test when err says that what the test needs — what,
// a tool, a module, a version — is not there: it skips, or fails when
// RequireAll. Every requirement of the tests goes through it, so the
// reason reads the same everywhere:
//
//	needs redis-cli: exec: "redis-cli": executable file not found in $PATH (make deps installs it)
//
// It does nothing when err is nil.
func Require(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	msg := fmt.Sprintf("needs %s: %v (make deps installs it)", what, err)
	if RequireAll() {
		t.Fatalf("%s; %s=1 asks for every test to run", msg, RequireAllEnv)
		return
	}
	t.Skip(msg)
}

// RequireTool returns the path of the executable name, found in $PATH,
// or ends the test as Require does.
func RequireTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	Require(t, name, err)
	return p
}

// RequireRedis returns the path of the real redis-server, which must be
// Redis 7.0 (the version zredis is compared with), or ends the test as
// Require does.
func RequireRedis(t testing.TB) string {
	t.Helper()
	redis7.once.Do(func() { redis7.path, redis7.err = findRedis7() })
	Require(t, "redis-server 7.0", redis7.err)
	return redis7.path
}

var redis7 struct {
	once sync.Once
	path string
	err  error
}

func findRedis7() (string, error) {
	p, err := exec.LookPath("redis-server")
	if err != nil {
		return "", err
	}
	out, err := exec.Command(p, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %v", p, err)
	}
	if !strings.Contains(string(out), "v=7.0.") {
		return "", fmt.Errorf("%s is not Redis 7.0: %s", p, strings.TrimSpace(string(out)))
	}
	return p, nil
}

// PythonBin is Debian's python3: its python3-* packages (python3-zmq,
// python3-redis) load into it only.
const PythonBin = "/usr/bin/python3"

// RequirePython returns PythonBin after checking that it imports each of
// modules, or ends the test as Require does.
func RequirePython(t testing.TB, modules ...string) string {
	t.Helper()
	for _, m := range modules {
		python.Lock()
		err, seen := python.imports[m]
		if !seen {
			if out, e := exec.Command(PythonBin, "-c", "import "+m).CombinedOutput(); e != nil {
				err = fmt.Errorf("%v %s", e, strings.TrimSpace(string(out)))
			}
			python.imports[m] = err
		}
		python.Unlock()
		Require(t, PythonBin+" with the module "+m+" (Debian package python3-"+m+")", err)
	}
	return PythonBin
}

var python = struct {
	sync.Mutex
	imports map[string]error
}{imports: map[string]error{}}

// Redis74Env names the environment variable holding the path of a
// redis-server 7.4 or later, for the tests that check what zredis writes
// of hash field TTLs against it.
const Redis74Env = "ZREDIS_REDIS74_SERVER"

// Redis74 returns the redis-server 7.4 of Redis74Env, or skips the test,
// also under RequireAll: 7.4 is no Debian package here, so make deps
// cannot install it (those tests are the interchange's second check;
// testdata/rdb's files, written by a real 7.4.1, are the first, and
// always run).
func Redis74(t testing.TB) string {
	t.Helper()
	bin := os.Getenv(Redis74Env)
	if bin == "" {
		t.Skipf("needs redis-server 7.4: set %s to its path", Redis74Env)
	}
	return bin
}
