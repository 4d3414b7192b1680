package vfs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile makes name hold data durably and whole: it writes data to
// name+".tmp" (made with perm, or emptied), fsyncs and closes it, renames
// it to name and fsyncs the directory, so that after a crash name holds
// either what it held before or data. On an error, which names the step
// that failed, the temporary file is removed and name is as it was (or, if
// only the directory's fsync failed, may hold data).
func WriteFile(fsys FS, name string, data []byte, perm fs.FileMode) error {
	tmp := name + ".tmp"
	if err := writeSynced(fsys, tmp, data, perm); err != nil {
		fsys.Remove(tmp)
		return err
	}
	if err := fsys.Rename(tmp, name); err != nil {
		fsys.Remove(tmp)
		return fmt.Errorf("write %s: %w", name, err)
	}
	return SyncDir(fsys, filepath.Dir(name))
}

// writeSynced writes data to name, fsyncs it and closes it.
func writeSynced(fsys FS, name string, data []byte, perm fs.FileMode) error {
	f, err := fsys.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err == nil {
		if _, err = f.Write(data); err != nil {
			f.Close()
		} else {
			err = syncClose(f)
		}
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}
