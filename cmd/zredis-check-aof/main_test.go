package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBinary builds zredis-check-aof and runs it as an operator would.
func TestBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "zredis-check-aof")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)

	dir := t.TempDir()
	set := "*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\nb\r\n"
	path := filepath.Join(dir, "appendonly.aof")
	run := func(stdin string, args ...string) (string, int) {
		cmd := exec.Command(bin, args...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		}
		require.NoError(t, err)
		return string(out), 0
	}
	tests := []struct {
		name, content, stdin string
		fix                  bool
		want                 string
		code                 int
		after                string
	}{
		{name: "valid", content: set + set, want: "AOF " + path + " is valid\n", after: set + set},
		{name: "truncated", content: set + set[:9], code: 1, want: "is not valid. Use the --fix option to try fixing it.\n", after: set + set[:9]},
		{name: "fixed", content: set + set[:9], fix: true, stdin: "y\n", want: "Continue? [y/N]: Successfully truncated AOF " + path + "\n", after: set},
		{name: "fix refused", content: set + set[:9], fix: true, stdin: "\n", code: 1, want: "Continue? [y/N]: Aborting...\n", after: set + set[:9]},
		{name: "rdb preamble", content: "REDIS0010\xff00000000" + set, code: 1, want: "RDB preamble of AOF file is not sane, aborting.\n", after: "REDIS0010\xff00000000" + set},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o644))
			args := []string{path}
			if tc.fix {
				args = []string{"--fix", path}
			}
			out, code := run(tc.stdin, args...)
			require.Equal(t, tc.code, code, out)
			require.True(t, strings.HasSuffix(out, tc.want), out)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, tc.after, string(data))
		})
	}
	usage, code := run("")
	require.Equal(t, 1, code)
	require.Contains(t, usage, "Usage: "+bin+" [--fix|--truncate-to-timestamp $timestamp] <file.manifest|file.aof>")
	help, code := run("", "--help")
	require.Equal(t, 0, code)
	require.Contains(t, help, "Usage: "+bin+" [--fix|--truncate-to-timestamp $timestamp] <file.manifest|file.aof>")
	require.Contains(t, help, "--fix")
}
