package aof

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestManifestParse(t *testing.T) {
	tests := []struct {
		name, in string
		want     *Manifest
		err      string
	}{
		{name: "redis 7.0 fresh", in: "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n",
			want: &Manifest{Base: &FileInfo{"appendonly.aof.1.base.rdb", 1, TypeBase}, Incr: []FileInfo{{"appendonly.aof.1.incr.aof", 1, TypeIncr}}, BaseSeq: 1, IncrSeq: 1}},
		{name: "history and comments", in: "# comment\nfile a.2.base.aof seq 2 type b\nfile a.1.base.aof seq 1 type h\nfile a.4.incr.aof seq 4 type i\nfile a.5.incr.aof seq 5 type i\n",
			want: &Manifest{Base: &FileInfo{"a.2.base.aof", 2, TypeBase}, History: []FileInfo{{"a.1.base.aof", 1, TypeHistory}},
				Incr: []FileInfo{{"a.4.incr.aof", 4, TypeIncr}, {"a.5.incr.aof", 5, TypeIncr}}, BaseSeq: 2, IncrSeq: 5}},
		{name: "quoted name and extra pairs", in: "file \"a b\\x01.1.incr.aof\" seq 1 type i future x\n",
			want: &Manifest{Incr: []FileInfo{{"a b\x01.1.incr.aof", 1, TypeIncr}}, IncrSeq: 1}},
		{name: "empty", in: "", err: "Found an empty AOF manifest"},
		{name: "no final newline", in: "file a.1.incr.aof seq 1 type i", err: "The AOF manifest file contains too long line"},
		{name: "blank line", in: "file a.1.incr.aof seq 1 type i\n\n", err: "Invalid AOF manifest file format"},
		{name: "odd args", in: "file a seq 1 type i x\n", err: "Invalid AOF manifest file format"},
		{name: "missing seq", in: "file a seq 0 type i\n", err: "Invalid AOF manifest file format"},
		{name: "path", in: "file ../a seq 1 type i\n", err: "File can't be a path, just a filename"},
		{name: "two bases", in: "file a seq 1 type b\nfile b seq 2 type b\n", err: "Found duplicate base file information"},
		{name: "non monotonic", in: "file a seq 2 type i\nfile b seq 2 type i\n", err: "Found a non-monotonic sequence number"},
		{name: "unknown type", in: "file a seq 2 type x\n", err: "Unknown AOF file type"},
		{name: "unbalanced quotes", in: "file \"a seq 2 type i\n", err: "Invalid AOF manifest file format"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := parseManifest("m", []byte(tc.in))
			if tc.err != "" {
				var me *ManifestError
				require.ErrorAs(t, err, &me)
				require.Equal(t, tc.err, me.Msg)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, m)
			// The text we write reads back to the same manifest.
			again, err := parseManifest("m", []byte(m.String()))
			require.NoError(t, err)
			require.Equal(t, m, again)
		})
	}
}

func TestManifestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	m := &Manifest{}
	m.newBase("appendonly.aof", true)
	m.addIncr("appendonly.aof")
	require.NoError(t, m.Write(dir, ManifestName("appendonly.aof")))
	require.Equal(t, "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n",
		string(readFile(t, filepath.Join(dir, "appendonly.aof.manifest"))))
	_, err := os.Stat(filepath.Join(dir, "temp-appendonly.aof.manifest"))
	require.ErrorIs(t, err, os.ErrNotExist)

	m.newBase("appendonly.aof", false)
	m.addIncr("appendonly.aof")
	m.incrToHistory(1)
	// Redis puts each newly retired file at the head of the history list.
	require.Equal(t, "file appendonly.aof.2.base.aof seq 2 type b\n"+
		"file appendonly.aof.1.incr.aof seq 1 type h\n"+
		"file appendonly.aof.1.base.rdb seq 1 type h\n"+
		"file appendonly.aof.2.incr.aof seq 2 type i\n", m.String())
}

func TestSplitArgsRepr(t *testing.T) {
	for _, s := range []string{"plain", "with space", "q\"uote", "back\\slash", "\x00\xff\n\r\t\a\b", ""} {
		args, err := splitArgs("file " + repr(s))
		require.NoError(t, err)
		require.Equal(t, []string{"file", s}, args)
	}
	args, err := splitArgs(`a 'b\'c' "d\x41"`)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b'c", "dA"}, args)
	_, err = splitArgs(`"abc"def`)
	require.Error(t, err)
}
