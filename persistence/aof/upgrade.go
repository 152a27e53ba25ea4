package aof

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// UpgradeOldStyle migrates a Redis 6 style append only file (oldPath, the
// appendfilename in dir) into the AOF directory aofDir, as Redis 7.0 does at
// start-up (loadAppendOnlyFiles, aofUpgradePrepare). It does so when
// oldPath exists and either aofDir does not, or m (the manifest read from
// aofDir, nil when there is none) lists no file, or lists only a base named
// like the old file that aofDir lacks. The manifest (the old file as base,
// seq 1) is persisted first, then the file is moved: a crash in between
// leaves the old file in place and the upgrade runs again at the next
// start. It returns the manifest to load and whether it upgraded.
func UpgradeOldStyle(oldPath, aofDir, prefix string, m *Manifest, logf func(string, ...any)) (*Manifest, bool, error) {
	if _, err := os.Stat(oldPath); err != nil {
		return m, false, nil
	}
	if m == nil {
		m = &Manifest{}
	}
	_, dirErr := os.Stat(aofDir)
	_, inDirErr := os.Stat(filepath.Join(aofDir, prefix))
	need := errors.Is(dirErr, os.ErrNotExist) || m.Empty() ||
		(m.Base != nil && len(m.Incr) == 0 && m.Base.Name == prefix && errors.Is(inDirErr, os.ErrNotExist))
	if !need {
		return m, false, nil
	}
	if err := os.MkdirAll(aofDir, 0o755); err != nil {
		return m, false, fmt.Errorf("can't open or create append-only dir %s: %w", aofDir, err)
	}
	tm := m.Clone()
	tm.Base = &FileInfo{Name: prefix, Seq: 1, Type: TypeBase}
	tm.BaseSeq = 1
	if err := tm.Write(aofDir, ManifestName(prefix)); err != nil {
		return m, false, err
	}
	if err := os.Rename(oldPath, filepath.Join(aofDir, prefix)); err != nil {
		return m, false, fmt.Errorf("error trying to move the old AOF file %s into dir %s: %w", oldPath, aofDir, err)
	}
	if err := syncDir(aofDir); err != nil {
		return tm, true, err
	}
	if logf != nil {
		logf("Successfully migrated an old-style AOF file (%s) into the AOF directory (%s).", prefix, filepath.Base(aofDir))
	}
	return tm, true, nil
}
