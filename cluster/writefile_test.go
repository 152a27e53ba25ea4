package cluster

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWriteFile checks nodes.conf's replacement: the new content under
// the name, the one before as the spare, both ways of swapping (the
// exchange and the link for filesystems without it), from no file and
// after a crash left a hold, and that a spare that is a symlink or has
// a second name is replaced rather than written through.
func TestWriteFile(t *testing.T) {
	for _, swap := range []struct {
		name string
		fn   func(spare, path string) error
	}{{"exchange", swapInto}, {"link", swapByLink}} {
		t.Run(swap.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "nodes.conf")
			write := func(content string, fsync bool) {
				t.Helper()
				require.NoError(t, writeFileWith(path, []byte(content), fsync, swap.fn))
				got, err := os.ReadFile(path)
				require.NoError(t, err)
				require.Equal(t, content, string(got))
			}
			write("first version, the longest of them\n", false)
			write("second\n", true)
			prev, err := os.ReadFile(path + ".prev")
			require.NoError(t, err)
			require.Equal(t, "first version, the longest of them\n", string(prev))
			write("third, longer than the second\n", false)
			prev, err = os.ReadFile(path + ".prev")
			require.NoError(t, err)
			require.Equal(t, "second\n", string(prev))

			// A crash between the link and the last rename left a hold
			// (in the fallback; New removes one at start).
			if swap.name == "link" {
				require.NoError(t, os.Link(path, path+".hold"))
			}
			write("fourth\n", false)
			write("fifth\n", false)

			// A spare that is a symlink, or a second name of another
			// file, is not written through.
			other := filepath.Join(dir, "other")
			require.NoError(t, os.WriteFile(other, []byte("keep\n"), 0o644))
			require.NoError(t, os.Remove(path+".prev"))
			require.NoError(t, os.Symlink(other, path+".prev"))
			write("sixth\n", false)
			require.NoError(t, os.Remove(path+".prev"))
			require.NoError(t, os.Link(other, path+".prev"))
			write("seventh\n", false)
			got, err := os.ReadFile(other)
			require.NoError(t, err)
			require.Equal(t, "keep\n", string(got))

			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			require.ElementsMatch(t, []string{"nodes.conf", "nodes.conf.prev", "other"}, names)
		})
	}
}

// A FIFO at the spare's name is replaced, not opened for writing (which
// would wait for a reader, and hold the server).
func TestWriteFileSpareFIFO(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "nodes.conf")
	require.NoError(t, syscall.Mkfifo(path+".prev", 0o644))
	done := make(chan error, 1)
	go func() { done <- writeFile(path, []byte("content\n"), false) }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("writeFile waits on a FIFO")
	}
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "content\n", string(got))
}
