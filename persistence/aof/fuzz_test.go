package aof

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func replayBytes(data []byte, truncated bool) (replayResult, []command) {
	rec := &recorder{}
	res := replay(newFileReader(bytes.NewReader(data), int64(len(data))), "f", false,
		LoadOptions{LoadTruncated: truncated, Exec: rec.exec, LoadRDB: fakeLoadRDB})
	return res, rec.cmds
}

// FuzzLoad feeds arbitrary files to the loader: no panic, no allocation
// beyond what the input holds, and a truncated load is a prefix that loads
// again, cleanly, to the same commands.
func FuzzLoad(f *testing.F) {
	data, _, _, _ := sample()
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Add([]byte("*1\r\n$9223372036854775807\r\n"))
	f.Add([]byte("*2147483647\r\n$1\r\na\r\n"))
	f.Add([]byte("*-1\r\n"))
	f.Add([]byte("#TS:1\r\n*1\r\n$4\r\nPING\r\n"))
	f.Add(append([]byte(fakeRDB), encode(command{"SET", "a", "b"})...))
	f.Add(encode(command{"MULTI"}, command{"SET", "a", "b"}))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, cmds := replayBytes(data, true)
		require.LessOrEqual(t, res.validUpTo, int64(len(data)))
		require.GreaterOrEqual(t, res.validUpTo, int64(0))
		if res.err != nil {
			msg := res.err.Error()
			require.True(t, strings.Contains(msg, "Bad file format") || strings.Contains(msg, "RDB part"), msg)
			return
		}
		if res.status == loadTruncated {
			again, cmds2 := replayBytes(data[:res.validUpTo], false)
			require.NoError(t, again.err)
			require.Equal(t, loadOK, again.status)
			require.Equal(t, cmds, cmds2)
		}
	})
}

// FuzzCheck runs the checker on arbitrary files: it must not panic, and a
// file it accepts (or fixed) is not truncated for the loader. (redis-check-aof
// accepts command counts of zero or less, which redis-server refuses as a
// bad format; the checker keeps that, so the loader may still refuse.)
func FuzzCheck(f *testing.F) {
	data, _, _, _ := sample()
	f.Add(data, false)
	f.Add(data[:40], true)
	f.Add([]byte("*1\r\n$-1\r\n"), false)
	f.Add([]byte("*\r\n"), false)
	f.Add(append(encode(command{"MULTI"}), "#TS:5\r\n"...), true)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, fix bool) {
		path := filepath.Join(dir, "f.aof")
		require.NoError(t, os.WriteFile(path, data, 0o644))
		args := []string{"zredis-check-aof", path}
		if fix {
			args = []string{"zredis-check-aof", "--fix", path}
		}
		var out bytes.Buffer
		code := Check(args, CheckOptions{Stdout: &out, Stdin: strings.NewReader("y"), CheckRDB: func(r io.Reader, _ string, _ io.Writer) (int64, error) { return fakeLoadRDB(r) }})
		if code == 0 {
			fixed, err := os.ReadFile(path)
			require.NoError(t, err)
			res, _ := replayBytes(fixed, false)
			require.NotEqual(t, loadTruncated, res.status, out.String())
			if res.err != nil {
				require.Contains(t, res.err.Error(), "Bad file format", out.String())
			}
		}
	})
}

// FuzzManifest: parsing never panics, and what parses writes back to text
// that parses to the same manifest.
func FuzzManifest(f *testing.F) {
	f.Add([]byte("file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"))
	f.Add([]byte("# c\nfile \"a\\x00b\" seq 3 type h\n"))
	f.Add([]byte("file \"0\\x'00\" seq 1 tYpe b\n"))
	f.Add([]byte("# only a comment\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseManifest("m", data)
		if err != nil || (m.Empty() && len(m.History) == 0) {
			return // a manifest of comments only has no text to write back
		}
		again, err := parseManifest("m", []byte(m.String()))
		require.NoError(t, err)
		require.Equal(t, m, again)
	})
}
