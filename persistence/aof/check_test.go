package aof

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// runBoth runs redis-check-aof and our Check on two identical copies of the
// same files, from the copy's directory, and returns both outputs, exit
// codes and the files afterwards.
func runBoth(t *testing.T, files map[string][]byte, stdin string, args ...string) (theirs, ours checkRun) {
	t.Helper()
	run := func(dir string, redisTool bool) checkRun {
		for name, data := range files {
			writeFile(t, filepath.Join(dir, name), data)
		}
		var r checkRun
		if redisTool {
			cmd := exec.Command("redis-check-aof", args...)
			cmd.Dir = dir
			cmd.Stdin = strings.NewReader(stdin)
			out, err := cmd.CombinedOutput()
			r.out = string(out)
			if ee, ok := err.(*exec.ExitError); ok {
				r.code = ee.ExitCode()
			} else {
				require.NoError(t, err)
			}
		} else {
			t.Chdir(dir)
			var out bytes.Buffer
			r.code = Check(append([]string{"redis-check-aof"}, args...), CheckOptions{Stdout: &out, Stdin: strings.NewReader(stdin)})
			r.out = out.String()
		}
		r.files = map[string]string{}
		for name := range files {
			if data, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
				r.files[name] = string(data)
			}
		}
		return r
	}
	return run(t.TempDir(), true), run(t.TempDir(), false)
}

type checkRun struct {
	out   string
	code  int
	files map[string]string
}

func TestCheckLikeRedis(t *testing.T) {
	needRedis(t, "redis-check-aof")
	set := encode(command{"SET", "a", "1"})
	multi := encode(command{"MULTI"}, command{"SET", "b", "2"}, command{"EXEC"})
	manifest := func(lines ...string) []byte { return []byte(strings.Join(lines, "\n") + "\n") }
	std := manifest("file appendonly.aof.1.base.aof seq 1 type b", "file appendonly.aof.1.incr.aof seq 1 type i", "file appendonly.aof.2.incr.aof seq 2 type i")
	const mpath = "d/appendonly.aof.manifest"
	dirOf := func(base, incr1, incr2 []byte) map[string][]byte {
		return map[string][]byte{mpath: std, "d/appendonly.aof.1.base.aof": base, "d/appendonly.aof.1.incr.aof": incr1, "d/appendonly.aof.2.incr.aof": incr2}
	}
	ts := func(n string) []byte { return []byte("#TS:" + n + "\r\n") }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	tests := []struct {
		name  string
		files map[string][]byte
		stdin string
		args  []string
	}{
		{name: "valid", files: dirOf(set, multi, set), args: []string{mpath}},
		{name: "empty files", files: dirOf(nil, nil, set), args: []string{mpath}},
		{name: "truncated last", files: dirOf(set, multi, set[:len(set)-3]), args: []string{mpath}},
		{name: "fix yes", files: dirOf(set, multi, cat(set, set[:10])), stdin: "y\n", args: []string{"--fix", mpath}},
		{name: "fix no", files: dirOf(set, multi, cat(set, set[:10])), stdin: "n\n", args: []string{"--fix", mpath}},
		{name: "fix not last", files: dirOf(set, multi[:7], set), stdin: "y\n", args: []string{"--fix", mpath}},
		{name: "garbage", files: dirOf(set, cat(set, []byte("garbage\r\n"), set), set), args: []string{mpath}},
		{name: "bad newline", files: dirOf(set, []byte("*1\r\n$3\r\nabcX\r\n"), set), args: []string{mpath}},
		{name: "bad newline high byte", files: dirOf(set, []byte("*1\r\n$3\r\nabc\xfe\xff"), set), args: []string{mpath}},
		{name: "count without newline", files: dirOf(set, []byte("*1x\r\n$3\r\nabc\r\n"), set), args: []string{mpath}},
		{name: "wrong prefix", files: dirOf(set, []byte("*1\r\n:3\r\nabc\r\n"), set), args: []string{mpath}},
		{name: "negative length", files: dirOf(set, []byte("*1\r\n$-3\r\nabc\r\n"), set), args: []string{mpath}},
		{name: "multi without exec", files: dirOf(set, set, cat(set, encode(command{"MULTI"}, command{"SET", "x", "y"}))), args: []string{mpath}},
		{name: "multi without exec fixed", files: dirOf(set, set, cat(set, encode(command{"MULTI"}, command{"SET", "x", "y"}))), stdin: "Y", args: []string{"--fix", mpath}},
		{name: "nested multi", files: dirOf(set, encode(command{"MULTI"}, command{"multi"}), set), args: []string{mpath}},
		{name: "exec without multi", files: dirOf(set, encode(command{"EXEC"}), set), args: []string{mpath}},
		{name: "old style valid", files: map[string][]byte{"x.aof": cat(set, multi)}, args: []string{"x.aof"}},
		{name: "old style truncated", files: map[string][]byte{"x.aof": cat(set, multi[:9])}, args: []string{"x.aof"}},
		{name: "old style empty", files: map[string][]byte{"x.aof": nil}, args: []string{"x.aof"}},
		{name: "old style fix", files: map[string][]byte{"x.aof": cat(set, multi[:9])}, stdin: "y", args: []string{"--fix", "x.aof"}},
		{name: "timestamp cut", files: map[string][]byte{"x.aof": cat(ts("100"), set, ts("200"), set, ts("300"), set)}, args: []string{"--truncate-to-timestamp", "250", "x.aof"}},
		{name: "timestamp nothing to cut", files: map[string][]byte{"x.aof": cat(ts("100"), set)}, args: []string{"--truncate-to-timestamp", "250", "x.aof"}},
		{name: "timestamp nothing before", files: map[string][]byte{"x.aof": cat(ts("300"), set)}, args: []string{"--truncate-to-timestamp", "250", "x.aof"}},
		{name: "timestamp invalid annotation", files: map[string][]byte{"x.aof": cat(ts("3x"), set)}, args: []string{"--truncate-to-timestamp", "250", "x.aof"}},
		{name: "timestamp not last", files: dirOf(set, cat(ts("100"), set, ts("300"), set), set), args: []string{"--truncate-to-timestamp", "250", mpath}},
		{name: "timestamp multi part", files: dirOf(set, set, cat(ts("100"), set, ts("300"), set)), args: []string{"--truncate-to-timestamp", "250", mpath}},
		{name: "bad timestamp", files: map[string][]byte{"x.aof": set}, args: []string{"--truncate-to-timestamp", "25x", "x.aof"}},
		{name: "usage", args: nil},
		{name: "bad option", files: map[string][]byte{"x.aof": set}, args: []string{"--fox", "x.aof"}},
		{name: "missing file", args: []string{"nope.aof"}},
		{name: "missing incr", files: map[string][]byte{mpath: std, "d/appendonly.aof.1.base.aof": set, "d/appendonly.aof.1.incr.aof": set}, args: []string{mpath}},
		{name: "annotation only", files: map[string][]byte{"x.aof": ts("1")}, args: []string{"x.aof"}},
		{name: "long count line", files: map[string][]byte{"x.aof": []byte("*" + strings.Repeat("1", 120) + "\r\n")}, args: []string{"x.aof"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			theirs, ours := runBoth(t, tc.files, tc.stdin, tc.args...)
			require.Equal(t, theirs.out, ours.out)
			require.Equal(t, theirs.code, ours.code)
			require.Equal(t, theirs.files, ours.files)
		})
	}
}

// TestCheckManifestErrors compares the manifest error report line by line
// (Redis logs these through its logger, with a pid and time prefix).
func TestCheckManifestErrors(t *testing.T) {
	needRedis(t, "redis-check-aof")
	for _, m := range []string{
		"file a.1.base.aof seq 1 type b\nfile b.1.base.aof seq 2 type b\n",
		"file a seq 1 type x\n",
		"file a/b seq 1 type i\n",
		"file a seq 1 type i extra\n",
	} {
		theirs, ours := runBoth(t, map[string][]byte{"m.manifest": []byte(m)}, "", "m.manifest")
		require.Equal(t, theirs.code, ours.code)
		for _, line := range strings.Split(strings.TrimSpace(ours.out), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				require.Contains(t, theirs.out, line)
			}
		}
	}
}

func TestCheckOurDirectory(t *testing.T) {
	dir := t.TempDir()
	w := openTestWriter(t, dir, nil, WriterOptions{Policy: Always, RDBBase: true, WriteBase: func(out io.Writer) error {
		_, err := out.Write([]byte(fakeRDB))
		return err
	}})
	require.NoError(t, w.Wait(w.Append(2, argvOf(command{"SET", "a", "b"}))))
	require.NoError(t, w.Close())
	var out bytes.Buffer
	checkRDB := func(r io.Reader, path string, o io.Writer) (int64, error) { return fakeLoadRDB(r) }
	code := Check([]string{"zredis-check-aof", filepath.Join(dir, ManifestName(prefix))}, CheckOptions{Stdout: &out, CheckRDB: checkRDB})
	require.Equal(t, 0, code, out.String())
	require.Contains(t, out.String(), "Start to check BASE AOF (RDB format).\nRDB preamble is OK, proceeding with AOF tail...\n")
	// Without an RDB checker an RDB base is never reported valid.
	out.Reset()
	code = Check([]string{"zredis-check-aof", filepath.Join(dir, ManifestName(prefix))}, CheckOptions{Stdout: &out})
	require.Equal(t, 1, code)
	require.Contains(t, out.String(), "RDB preamble of AOF file is not sane, aborting.")
}
