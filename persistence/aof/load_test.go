package aof

import (
	"github.com/zredis/zredis/resp"

	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const prefix = "appendonly.aof"

// writeDir writes an AOF directory: an optional base and incremental files,
// and the manifest naming them.
func writeDir(t testing.TB, dir string, base []byte, incrs ...[]byte) *Manifest {
	t.Helper()
	m := &Manifest{}
	if base != nil {
		name := m.newBase(prefix, false)
		writeFile(t, filepath.Join(dir, name), base)
	}
	for _, data := range incrs {
		name := m.addIncr(prefix)
		writeFile(t, filepath.Join(dir, name), data)
	}
	require.NoError(t, m.Write(dir, ManifestName(prefix)))
	return m
}

func loadDir(t testing.TB, dir string, truncated bool) (*recorder, Stats, error) {
	rec := &recorder{}
	st, err := Load(dir, ManifestName(prefix), LoadOptions{LoadTruncated: truncated, Exec: rec.exec})
	return rec, st, err
}

func TestLoadBaseAndIncr(t *testing.T) {
	dir := t.TempDir()
	base := encode(command{"SELECT", "0"}, command{"SET", "a", "1"})
	incr1 := append([]byte("#TS:1700000000\r\n"), encode(command{"SELECT", "2"}, command{"MULTI"}, command{"SET", "b", "x\r\ny"}, command{"EXEC"})...)
	incr2 := encode(command{"DEL", "a"})
	writeDir(t, dir, base, incr1, incr2)
	rec, st, err := loadDir(t, dir, false)
	require.NoError(t, err)
	require.Equal(t, []command{{"SELECT", "0"}, {"SET", "a", "1"}, {"SELECT", "2"}, {"MULTI"}, {"SET", "b", "x\r\ny"}, {"EXEC"}, {"DEL", "a"}}, rec.cmds)
	require.Equal(t, Stats{Files: 3, Commands: 7, Size: int64(len(base) + len(incr1) + len(incr2)), BaseSize: int64(len(base))}, st)
}

func TestLoadNothing(t *testing.T) {
	dir := t.TempDir()
	_, _, err := loadDir(t, filepath.Join(dir, "missing"), false)
	require.ErrorIs(t, err, ErrNotExist)
	_, _, err = loadDir(t, dir, false)
	require.ErrorIs(t, err, ErrNotExist)
	writeDir(t, dir, []byte{})
	rec, st, err := loadDir(t, dir, false)
	require.NoError(t, err)
	require.Empty(t, rec.cmds)
	require.Equal(t, 0, st.Files)
}

func TestLoadErrors(t *testing.T) {
	good := encode(command{"SET", "a", "1"})
	tests := []struct {
		name      string
		base      []byte
		incrs     [][]byte
		truncated bool
		err       string
	}{
		{name: "bad format in the middle", incrs: [][]byte{append(append(append([]byte{}, good...), "garbage\r\n"...), good...)},
			err: "Bad file format reading the append only file appendonly.aof.1.incr.aof at offset 27: make a backup of your AOF file, then use ./zredis-check-aof --fix <filename.manifest>"},
		{name: "zero argc", incrs: [][]byte{[]byte("*0\r\n")}, err: "Bad file format"},
		{name: "bulk without dollar", incrs: [][]byte{[]byte("*1\r\n:3\r\n")}, err: "Bad file format"},
		{name: "negative length", incrs: [][]byte{[]byte("*1\r\n$-5\r\nabc\r\n")}, err: "Bad file format"},
		{name: "truncated without option", incrs: [][]byte{good[:len(good)-1]},
			err: "Unexpected end of file reading the append only file appendonly.aof.1.incr.aof. You can: 1) Make a backup of your AOF file, then use ./zredis-check-aof --fix <filename.manifest>. 2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server."},
		{name: "truncated file not last", truncated: true, incrs: [][]byte{good[:len(good)-1], good}, err: "is truncated but is not the last file"},
		{name: "truncated base not last", truncated: true, base: good[:5], incrs: [][]byte{good}, err: "is truncated but is not the last file"},
		{name: "huge length is a short read", incrs: [][]byte{[]byte("*1\r\n$9223372036854775807\r\nabc")}, err: "Unexpected end of file"},
		{name: "huge argc is a short read", incrs: [][]byte{[]byte("*2147483647\r\n$1\r\na\r\n")}, err: "Unexpected end of file"},
		{name: "unknown command", incrs: [][]byte{encode(command{"NOPE"})}, err: "unknown command"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeDir(t, dir, tc.base, tc.incrs...)
			var logs []string
			m := newModel()
			_, err := Load(dir, ManifestName(prefix), LoadOptions{LoadTruncated: tc.truncated, Exec: m.exec,
				Logf: func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) }})
			require.ErrorContains(t, err, tc.err)
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	dir := t.TempDir()
	writeDir(t, dir, nil, encode(command{"SET", "a", "1"}))
	require.NoError(t, os.Remove(filepath.Join(dir, IncrName(prefix, 1))))
	_, _, err := loadDir(t, dir, true)
	require.ErrorIs(t, err, os.ErrNotExist)
}

// sample is a small AOF with an annotation, several databases, binary
// arguments and a transaction; spans marks where each command ends.
func sample() (data []byte, cmds []command, ends []int, clean map[int]bool) {
	clean = map[int]bool{0: true}
	add := func(c command) {
		data = resp.AppendCommand(data, argvOf(c)...)
		cmds = append(cmds, c)
		ends = append(ends, len(data))
	}
	add(command{"SELECT", "0"})
	add(command{"SET", "k", "v"})
	start := len(data)
	data = append(data, "#TS:1700000000\r\n"...)
	for i := start + 1; i <= len(data); i++ {
		clean[i] = true // a cut annotation is skipped, as in Redis
	}
	add(command{"SELECT", "1"})
	add(command{"MULTI"})
	add(command{"SET", "bin", "\x00\r\n\xff"})
	add(command{"DEL", "k"})
	add(command{"EXEC"})
	add(command{"SET", "last", ""})
	return
}

// TestLoadTruncatedEveryOffset cuts a small AOF at every byte: with
// aof-load-truncated it loads the whole commands before the cut (never
// part of a transaction) and truncates the file there; without it, a cut
// inside a command or transaction refuses to load.
func TestLoadTruncatedEveryOffset(t *testing.T) {
	data, cmds, ends, clean := sample()
	for _, e := range ends {
		clean[e] = true
	}
	for cut := 0; cut <= len(data); cut++ {
		// What a cut at `cut` must load, and where the valid part ends.
		var want []command
		valid := 0
		inMulti, multiStart, multiValid := false, 0, 0
		for i, e := range ends {
			if e > cut {
				break
			}
			switch cmds[i][0] {
			case "MULTI":
				inMulti, multiStart, multiValid = true, len(want), valid
			case "EXEC":
				inMulti = false
			}
			want = append(want, cmds[i])
			valid = e
		}
		if inMulti {
			want, valid = want[:multiStart], multiValid
		}
		whole := clean[cut] && !inMulti

		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			dir := t.TempDir()
			writeDir(t, dir, nil, data[:cut])
			rec, _, err := loadDir(t, dir, false)
			if whole {
				require.NoError(t, err)
				require.Equal(t, want, rec.cmds)
			} else {
				require.ErrorContains(t, err, "Unexpected end of file")
			}

			rec, st, err := loadDir(t, dir, true)
			require.NoError(t, err)
			require.Equal(t, want, rec.cmds)
			require.Equal(t, !whole, st.Truncated)
			if !whole {
				require.Equal(t, data[:valid], readFile(t, filepath.Join(dir, IncrName(prefix, 1))))
			}
			// The truncated file loads cleanly now.
			rec, st, err = loadDir(t, dir, false)
			require.NoError(t, err)
			require.Equal(t, want, rec.cmds)
			require.False(t, st.Truncated)
		})
	}
}

// TestLoadFlippedBytes corrupts each byte of the sample: loading either
// succeeds or fails with a clear message, never panics.
func TestLoadFlippedBytes(t *testing.T) {
	data, _, _, _ := sample()
	for i := range data {
		for _, x := range []byte{0xff, 0x01, '*' ^ data[i], '$' ^ data[i], '9' ^ data[i]} {
			if x == 0 {
				continue
			}
			bad := append([]byte(nil), data...)
			bad[i] ^= x
			for _, truncated := range []bool{false, true} {
				res := replay(newFileReader(strings.NewReader(string(bad)), int64(len(bad))), "f", false,
					LoadOptions{LoadTruncated: truncated, Exec: (&recorder{}).exec})
				if res.err != nil {
					msg := res.err.Error()
					require.True(t, strings.Contains(msg, "Bad file format") || strings.Contains(msg, "Unexpected end of file"), msg)
				}
				require.LessOrEqual(t, res.validUpTo, int64(len(bad)))
			}
		}
	}
}

// fakeRDB is a stand-in RDB payload: magic, version, the EOF opcode and an
// 8-byte checksum. fakeLoadRDB reads ahead, as a buffered RDB decoder does,
// and returns the payload's size.
const fakeRDB = "REDIS0010\xff12345678"

func fakeLoadRDB(r io.Reader) (int64, error) {
	buf := make([]byte, len(fakeRDB)+100)
	n, err := io.ReadFull(r, buf)
	if err != nil && err != io.ErrUnexpectedEOF {
		return 0, err
	}
	if n < len(fakeRDB) || string(buf[:len(fakeRDB)]) != fakeRDB {
		return 0, fmt.Errorf("bad rdb %q", buf[:n])
	}
	return int64(len(fakeRDB)), nil
}

func TestLoadFileWithPreamble(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "appendonly.aof")
	tail := encode(command{"SELECT", "0"}, command{"SET", "a", "b"})
	writeFile(t, path, append([]byte(fakeRDB), tail...))
	rec := &recorder{}
	st, err := LoadFile(path, LoadOptions{LoadRDB: fakeLoadRDB, Exec: rec.exec})
	require.NoError(t, err)
	require.Equal(t, []command{{"SELECT", "0"}, {"SET", "a", "b"}}, rec.cmds)
	require.Equal(t, 1, st.Files)

	// A cut in the first command of the tail keeps the RDB part.
	writeFile(t, path, append([]byte(fakeRDB), tail[:5]...))
	_, err = LoadFile(path, LoadOptions{LoadTruncated: true, LoadRDB: fakeLoadRDB, Exec: rec.exec})
	require.NoError(t, err)
	require.Equal(t, fakeRDB, string(readFile(t, path)))

	// A broken RDB part fails.
	writeFile(t, path, []byte("REDIS0010\xfe"))
	_, err = LoadFile(path, LoadOptions{LoadTruncated: true, LoadRDB: fakeLoadRDB, Exec: rec.exec})
	require.ErrorContains(t, err, "error reading the RDB part")
}
