package aof

import "os"

// syncDir fsyncs a directory so the entries created, renamed or removed in it
// survive a crash (fsyncFileDir).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
