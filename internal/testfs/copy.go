// Package testfs copies data directories for tests: a copy of a running
// server's or engine's directory is what a crash at that moment would leave.
package testfs

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// CopyDir copies the files of src into dst, recursively, keeping each
// file's permissions, as a copy of a running server's data directory shows
// what a crash would leave. It fails t on an error.
func CopyDir(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o750)
		}
		return copyFile(path, target)
	})
	if err != nil {
		t.Fatalf("copy %s to %s: %v", src, dst, err)
	}
}

// Copy copies src into a new temporary directory of t (CopyDir) and
// returns it.
func Copy(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	CopyDir(t, src, dst)
	return dst
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, info.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
