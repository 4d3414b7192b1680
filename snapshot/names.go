package snapshot

import (
	"fmt"
	"strconv"
	"strings"
)

const (
	snapSuffix = ".snap"
	tmpSuffix  = ".tmp"
	lsnDigits  = 20 // enough for any uint64
)

// fileName returns the snapshot file name for lsn.
func fileName(lsn uint64) string {
	return fmt.Sprintf("%020d%s", lsn, snapSuffix)
}

// parseName returns the LSN a snapshot file name stands for, and false for
// any other name.
func parseName(name string) (uint64, bool) {
	digits, ok := strings.CutSuffix(name, snapSuffix)
	if !ok || len(digits) != lsnDigits {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	lsn, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0, false
	}
	return lsn, true
}

// tmpPattern is the os.CreateTemp pattern for the temp file of lsn's
// snapshot: "<name>.snap.<random>.tmp".
func tmpPattern(lsn uint64) string {
	return fileName(lsn) + ".*" + tmpSuffix
}

// isTempName reports whether name is a temp file left by Write.
func isTempName(name string) bool {
	if !strings.HasSuffix(name, tmpSuffix) {
		return false
	}
	i := strings.Index(name, snapSuffix+".")
	if i < 0 {
		return false
	}
	_, ok := parseName(name[:i+len(snapSuffix)])
	return ok
}
