package wal

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	tidwall "github.com/tidwall/wal"

	"backupmon/vfs"
)

// truncationFiles returns the names of the START and END files tidwall
// leaves behind when a TruncateFront or TruncateBack is interrupted.
func truncationFiles(fsys vfs.FS, dir string) ([]string, error) {
	return fileNames(fsys, dir, func(name string) bool {
		if _, ok := segmentIndex(name); !ok {
			return false
		}
		return len(name) == 26 && strings.HasSuffix(name, ".START") ||
			len(name) == 24 && strings.HasSuffix(name, ".END")
	})
}

// finishTruncation lets tidwall's own Open finish a truncation a crash
// interrupted, before the tail is scanned. tidwall renames and removes the
// files before it reads the last segment, so a torn tail (ErrCorrupt) does
// not stop the clean-up; the tail is repaired afterwards. It returns an error
// when START or END files are still there after tidwall's Open.
func finishTruncation(dir string, opts Options) error {
	if err := removeTempFiles(opts.FS, dir, opts.Logger); err != nil {
		return err
	}
	pending, err := truncationFiles(opts.FS, dir)
	if err != nil || len(pending) == 0 {
		return err
	}
	tl, err := tidwall.Open(dir, tidwallOptions(opts))
	if err == nil {
		err = tl.Close()
	}
	if err != nil && !errors.Is(err, tidwall.ErrCorrupt) {
		return fmt.Errorf("finish interrupted truncation: %w", err)
	}
	left, lerr := truncationFiles(opts.FS, dir)
	if lerr != nil {
		return lerr
	}
	if len(left) > 0 {
		return fmt.Errorf("finish interrupted truncation: %s still present (tidwall: %v)", strings.Join(left, ", "), err)
	}
	opts.Logger.Info("wal: finished interrupted truncation", "dir", dir, "files", pending)
	return nil
}

// removeTempFiles deletes the ".TEMP" files tidwall writes before renaming
// them to START or END files: one left behind was never renamed, so the
// truncation it belonged to had not begun and the file holds nothing needed.
func removeTempFiles(fsys vfs.FS, dir string, logger *slog.Logger) error {
	files, err := fileNames(fsys, dir, func(name string) bool { return strings.HasSuffix(name, ".TEMP") })
	if err != nil {
		return err
	}
	for _, name := range files {
		if err := fsys.Remove(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("remove leftover %s: %w", name, err)
		}
		logger.Info("wal: removed leftover temp file of an interrupted truncation", "file", name)
	}
	return nil
}

// repairTail scans the last segment in dir. A clean segment is left alone.
// A segment that ends in damage with no valid entry after it is a torn tail:
// the damaged bytes are saved to <segment>.broken and the segment is cut at
// the end of its last valid entry. Damage followed by a valid entry returns a
// *corruptError and changes nothing.
func repairTail(fsys vfs.FS, dir string, logger *slog.Logger) error {
	segs, err := listSegments(fsys, dir)
	if err != nil || len(segs) == 0 {
		return err
	}
	last := segs[len(segs)-1]
	path := filepath.Join(dir, last.name)
	data, err := vfs.ReadFile(fsys, path)
	if err != nil {
		return err
	}
	r := scanSegment(data)
	if r.damage == nil {
		return nil
	}
	if r.resync >= 0 {
		return &corruptError{file: last.name, offset: r.valid, reason: r.damage, follow: true}
	}
	broken, err := saveBroken(fsys, path, data[r.valid:])
	if err != nil {
		return fmt.Errorf("save torn tail of %s: %w", last.name, err)
	}
	if err := vfs.SyncDir(fsys, dir); err != nil {
		return err
	}
	if err := cutFile(fsys, path, int64(r.valid)); err != nil {
		return fmt.Errorf("cut torn tail of %s: %w", last.name, err)
	}
	if err := vfs.SyncDir(fsys, dir); err != nil {
		return err
	}
	logger.Warn("wal: cut torn tail",
		"file", path, "offset", r.valid, "bytes", len(data)-r.valid,
		"reason", r.damage.Error(), "records_kept", r.records, "saved_to", broken)
	return nil
}

// saveBroken writes b to a new file next to path, named <path>.broken (or
// <path>.broken.N when that exists already), fsyncs it and returns its name.
func saveBroken(fsys vfs.FS, path string, b []byte) (string, error) {
	name := path + ".broken"
	for i := 1; ; i++ {
		f, err := fsys.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
		if errors.Is(err, fs.ErrExist) {
			name = fmt.Sprintf("%s.broken.%d", path, i)
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.Write(b)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return name, err
	}
}

// cutFile truncates the file at path to size bytes and fsyncs it.
func cutFile(fsys vfs.FS, path string, size int64) error {
	f, err := fsys.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
