package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"backupmon/vfs"
)

// DataFormat is the format of the data directories this build writes: the
// log's frames and the layout of its records, and the snapshots (whose
// files also carry their own layout version, state.SnapshotVersion). A
// change to any of them bumps it, and the build that makes the change
// reads the older formats (a migration) and keeps a golden data directory
// of each under testdata/golden.
//
// Format 1 is the first that names itself: data directories of earlier
// builds hold no FORMAT file and are format 1. Format 2 writes snapshots
// in layout 11 (a workspace's idempotency keys as digests in one table)
// and records 70 and 71 (parsing rules with their activity), which builds
// of format 1 cannot read.
const DataFormat = 2

// formatFile names the file that holds a data directory's format:
// "backupmon-data <n>".
const formatFile = "FORMAT"

// ErrNewerFormat is returned (wrapped) for a data directory written by a
// newer build.
var ErrNewerFormat = errors.New("data directory of a newer format")

// CheckFormat returns the format of the data directory dir: DataFormat for
// one that does not exist or holds nothing yet, 1 for one of a build from
// before formats were named. It changes nothing. It returns an error
// wrapping ErrNewerFormat, naming both formats, when dir was written by a
// newer build, and an error for a FORMAT file it cannot read.
func CheckFormat(dir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dir, formatFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if used, err := holdsState(dir); err != nil || used {
			return 1, err
		}
		return DataFormat, nil
	case err != nil:
		return 0, fmt.Errorf("read %s: %w", filepath.Join(dir, formatFile), err)
	}
	name, num, ok := strings.Cut(strings.TrimSpace(string(b)), " ")
	v, err := strconv.Atoi(num)
	if !ok || name != "backupmon-data" || err != nil || v < 1 {
		return 0, fmt.Errorf("%s: not a backupmon data format: %q", filepath.Join(dir, formatFile), b)
	}
	if v > DataFormat {
		return v, fmt.Errorf("%w: %s is format %d, this build reads formats 1 to %d; run a newer build (nothing in the directory was changed)",
			ErrNewerFormat, dir, v, DataFormat)
	}
	return v, nil
}

// HoldsState reports whether dir holds a log or snapshots (a directory
// that does not exist holds none), or an error when it cannot be read.
func HoldsState(dir string) (bool, error) { return holdsState(dir) }

// holdsState reports whether dir holds a log or snapshots.
func holdsState(dir string) (bool, error) {
	for _, sub := range []string{"wal", "snapshots"} {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("read %s: %w", filepath.Join(dir, sub), err)
		}
		if len(entries) > 0 {
			return true, nil
		}
	}
	return false, nil
}

// openFormat checks dir's format before anything in it is touched, and
// names the format in it once the engine is going to write there.
func openFormat(dir string) error {
	v, err := CheckFormat(dir)
	if err != nil {
		return err
	}
	// Format 1 needs no migration: this build reads its snapshots' older
	// layouts. It is named format 2 before anything is written, so that
	// a build of format 1 refuses it from then on.
	if v == DataFormat {
		if _, err := os.Stat(filepath.Join(dir, formatFile)); err == nil {
			return nil
		}
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	return vfs.WriteFile(vfs.OS, filepath.Join(dir, formatFile), []byte("backupmon-data "+strconv.Itoa(DataFormat)+"\n"), 0o640)
}
