package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zredis/zredis/keyspace"
	"github.com/zredis/zredis/persistence/rdb"
)

// The tool accepts a file the rdb package wrote and refuses it cut short
// or with a flipped byte, with exit status 1.
func TestCheckRDB(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "zredis-check-rdb")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)

	path := filepath.Join(dir, "dump.rdb")
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := rdb.NewWriter(f, rdb.WriterOptions{Compress: true, Checksum: true})
	require.NoError(t, err)
	require.NoError(t, w.SelectDB(0, 3, 1))
	require.NoError(t, w.WriteEntry("a", keyspace.NewString([]byte("1"), 0)))
	require.NoError(t, w.WriteEntry("b", keyspace.NewString([]byte(strings.Repeat("x", 100)), 4102444800000)))
	s := keyspace.NewStream()
	s.Append(keyspace.StreamID{Ms: 1, Seq: 1}, [][]byte{[]byte("f"), []byte(strings.Repeat("v", 50))}, 4096, 100)
	s.CreateGroup([]byte("g"), keyspace.StreamID{}, 0)
	require.NoError(t, w.WriteEntry("s", keyspace.NewObject(s, 0)))
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())

	out, err = exec.Command(bin, path).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "RDB looks OK!")
	require.Contains(t, string(out), "[info] 3 keys read")
	require.Contains(t, string(out), "[info] 1 expires")

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	for name, bad := range map[string][]byte{
		"truncated": data[:len(data)-12],
		"flipped":   append(append([]byte{}, data[:30]...), append([]byte{data[30] ^ 0xff}, data[31:]...)...),
	} {
		p := filepath.Join(dir, name+".rdb")
		require.NoError(t, os.WriteFile(p, bad, 0o644))
		out, err := exec.Command(bin, p).CombinedOutput()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%s: %s", name, out)
		require.Equal(t, 1, ee.ExitCode())
		require.Contains(t, string(out), "RDB ERROR DETECTED", name)
		require.NotContains(t, string(out), "[offset 0] rdb:", "%s: the offset where decoding stopped", name)
	}
}

// --help explains the tool, with exit status 0; no argument is a usage error.
func TestHelp(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "zredis-check-rdb")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command(bin, "--help").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "Usage: "+bin+" <rdb-file-name>")
	require.Contains(t, string(out), "Exit status 0 when the file is valid")
	out, err = exec.Command(bin).CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "%s", out)
	require.Equal(t, 1, ee.ExitCode())
}
