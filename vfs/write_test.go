package vfs

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// WriteFile writes a temporary file, fsyncs it, renames it and fsyncs the
// directory; a failure of any step before the rename leaves the old
// contents and no temporary file.
func TestWriteFile(t *testing.T) {
	steps := []string{"create f.tmp", "write f.tmp", "fsync f.tmp", "rename f", "fsync dir"}
	for failed := 0; failed <= len(steps); failed++ {
		name := "none fails"
		if failed > 0 {
			name = steps[failed-1] + " fails"
		}
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "dir")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "f")
			if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
			fsys := NewFaulty(OS)
			if failed > 0 {
				fsys.FailStep(failed, syscall.EIO)
			}
			err := WriteFile(fsys, path, []byte("new"), 0o640)
			if failed == 0 {
				trace := fsys.Trace()
				for i, s := range trace {
					if i >= len(steps) || s.Op.String()+" "+filepath.Base(s.Name) != steps[i] {
						t.Fatalf("trace %v, want the steps %v", trace, steps)
					}
				}
				if len(trace) != len(steps) {
					t.Fatalf("trace %v, want the steps %v", trace, steps)
				}
			}
			if (err != nil) != (failed > 0) || (failed > 0 && !errors.Is(err, syscall.EIO)) {
				t.Fatalf("WriteFile: %v", err)
			}
			b, _ := os.ReadFile(path)
			switch {
			case failed == 0 || failed == len(steps):
				if string(b) != "new" {
					t.Fatalf("f holds %q after the rename, want new", b)
				}
			case string(b) != "old":
				t.Fatalf("f holds %q after a failed %s, want old", b, steps[failed-1])
			}
			if _, err := os.Stat(path + ".tmp"); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the temporary file is left: %v", err)
			}
		})
	}
}
