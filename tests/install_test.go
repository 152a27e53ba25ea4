package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// installedPrograms are the programs of cmd/ that make install puts in
// $(DESTDIR)$(PREFIX)/bin.
var installedPrograms = []string{"zredis-server", "zredis-check-aof", "zredis-check-rdb", "zredis-expiry-listen"}

// makeEnv is the environment for a make run from a test: without what a
// make that runs this test (make integration) passes to its children, so
// that the inner make neither joins its jobserver nor inherits its
// variables.
func makeEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "DESTDIR", "PREFIX", "BINDIR":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// make install honours DESTDIR and PREFIX as redis-server's and GNU's do,
// make uninstall takes the programs away again, and the systemd units in
// packaging/ pass systemd-analyze verify (docs/install.md).
func TestInstall(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	dest, binDir := t.TempDir(), t.TempDir()
	bindir := filepath.Join(dest, "usr", "bin")

	run := func(target string) {
		t.Helper()
		// BIN: the build goes to a directory of the test's, not to the
		// tree's bin/, which other steps of make test run from.
		cmd := exec.Command("make", "-C", root, target, "DESTDIR="+dest, "PREFIX=/usr", "BIN="+binDir)
		cmd.Env = makeEnv()
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "make %s:\n%s", target, out)
	}

	run("install")
	for _, name := range installedPrograms {
		fi, err := os.Stat(filepath.Join(bindir, name))
		require.NoError(t, err, "make install DESTDIR=%s PREFIX=/usr", dest)
		require.True(t, fi.Mode().IsRegular(), name)
		require.Equal(t, os.FileMode(0o755), fi.Mode().Perm(), name)
	}
	out, err := exec.Command(filepath.Join(bindir, "zredis-server"), "--version").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "zredis")

	t.Run("systemd-analyze verify", func(t *testing.T) {
		analyze := RequireTool(t, "systemd-analyze")
		// The units start /usr/local/bin/zredis-server, where make install
		// puts it by default; verify checks that ExecStart exists, so the
		// copies point at the one just installed.
		units := t.TempDir()
		for src, name := range map[string]string{"zredis.service": "zredis.service", "zredis@.service": "zredis@6380.service"} {
			raw, err := os.ReadFile(filepath.Join(root, "packaging", src))
			require.NoError(t, err)
			unit := string(raw)
			require.Contains(t, unit, "Type=notify", src)
			require.Contains(t, unit, "ExecStart=/usr/local/bin/zredis-server /etc/redis/", src)
			require.Contains(t, unit, " --supervised systemd --daemonize no\n", src)
			unit = strings.ReplaceAll(unit, "/usr/local/bin/zredis-server", filepath.Join(bindir, "zredis-server"))
			path := filepath.Join(units, name)
			require.NoError(t, os.WriteFile(path, []byte(unit), 0o644))
			out, err := exec.Command(analyze, "verify", path).CombinedOutput()
			require.NoError(t, err, "systemd-analyze verify %s (packaging/%s):\n%s", name, src, out)
			// Unknown or misspelt directives are only warnings: verify
			// still exits 0, so any line about the unit fails the test.
			for _, line := range strings.Split(string(out), "\n") {
				require.NotContains(t, line, name, "systemd-analyze verify packaging/%s:\n%s", src, out)
			}
		}
	})

	run("uninstall")
	for _, name := range installedPrograms {
		_, err := os.Stat(filepath.Join(bindir, name))
		require.True(t, os.IsNotExist(err), "make uninstall left %s", name)
	}
}
