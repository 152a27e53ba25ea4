package aof

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUpgradeLikeRedis migrates the same Redis 6 style appendonly.aof with
// redis-server 7.0 and with UpgradeOldStyle + OpenWriter: same manifest,
// same files, same data.
func TestUpgradeLikeRedis(t *testing.T) {
	needRedis(t)
	old := encode(command{"SELECT", "0"}, command{"SET", "a", "1"}, command{"SELECT", "4"}, command{"SET", "b", "2"})

	theirs := t.TempDir()
	writeFile(t, filepath.Join(theirs, DefaultFileName), old)
	srv := startRedis(t, theirs, "--appendonly", "yes")
	srv.stop()

	ours := t.TempDir()
	writeFile(t, filepath.Join(ours, DefaultFileName), old)
	aofDir := filepath.Join(ours, DefaultDirName)
	m, upgraded, err := UpgradeOldStyle(filepath.Join(ours, DefaultFileName), aofDir, DefaultFileName, nil, nil)
	require.NoError(t, err)
	require.True(t, upgraded)
	rec := &recorder{}
	_, err = LoadManifest(aofDir, m, LoadOptions{Exec: rec.exec})
	require.NoError(t, err)
	require.Equal(t, []command{{"SELECT", "0"}, {"SET", "a", "1"}, {"SELECT", "4"}, {"SET", "b", "2"}}, rec.cmds)
	w, err := OpenWriter(aofDir, DefaultFileName, m, WriterOptions{})
	require.NoError(t, err)
	require.NoError(t, w.Close())

	name := ManifestName(DefaultFileName)
	require.Equal(t, string(readFile(t, filepath.Join(theirs, DefaultDirName, name))), string(readFile(t, filepath.Join(aofDir, name))))
	require.Equal(t, old, readFile(t, filepath.Join(aofDir, DefaultFileName)))
	_, err = os.Stat(filepath.Join(ours, DefaultFileName))
	require.ErrorIs(t, err, os.ErrNotExist)

	// Nothing to do the second time.
	m2, upgraded, err := UpgradeOldStyle(filepath.Join(ours, DefaultFileName), aofDir, DefaultFileName, m, nil)
	require.NoError(t, err)
	require.False(t, upgraded)
	require.Equal(t, m, m2)
}
