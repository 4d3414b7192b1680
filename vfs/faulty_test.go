package vfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Faulty numbers the operations that change the disk, fails the one a rule
// picks with the rule's error in an *fs.PathError, writes half of a failed
// write, and passes everything else to the base FS.
func TestFaulty(t *testing.T) {
	dir := t.TempDir()
	f := NewFaulty(OS)
	name := filepath.Join(dir, "a")
	f.FailStep(3, syscall.ENOSPC) // the second write
	file, err := f.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := file.Write([]byte("0123")); n != 4 || err != nil {
		t.Fatalf("first write: %d %v", n, err)
	}
	n, err := file.Write([]byte("456789"))
	var pe *fs.PathError
	if n != 3 || !errors.Is(err, syscall.ENOSPC) || !errors.As(err, &pe) || pe.Op != "write" || pe.Path != name {
		t.Fatalf("failed write: %d %v, want 3 bytes and ENOSPC in a write PathError", n, err)
	}
	if err := file.Sync(); err != nil { // FailStep fails once
		t.Fatal(err)
	}
	file.Close()
	if b, _ := os.ReadFile(name); string(b) != "0123456" {
		t.Fatalf("file holds %q, want the first write and half the failed one", b)
	}
	f.Fail(func(s Step) bool { return s.Op == OpRename }, syscall.EIO)
	if err := f.Rename(name, name+".b"); !errors.Is(err, syscall.EIO) {
		t.Fatalf("rename: %v", err)
	}
	if _, err := os.Stat(name); err != nil {
		t.Fatalf("a failed rename moved the file: %v", err)
	}
	f.Heal()
	if err := f.Rename(name, name+".b"); err != nil {
		t.Fatal(err)
	}
	if err := SyncDir(f, dir); err != nil {
		t.Fatal(err)
	}
	want := []string{"#1 create a", "#2 write a", "#3 write a", "#4 fsync a", "#5 rename a.b", "#6 rename a.b", "#7 fsync " + filepath.Base(dir)}
	got := f.Trace()
	if len(got) != len(want) {
		t.Fatalf("trace %v, want %v", got, want)
	}
	for i := range want {
		if got[i].String() != want[i] {
			t.Fatalf("trace %v, want %v", got, want)
		}
	}
	if failed := f.Failed(); len(failed) != 2 || failed[0].N != 3 || failed[1].N != 5 {
		t.Fatalf("failed %v", failed)
	}
}

// CreateTemp makes new files with the pattern's prefix and suffix.
func TestCreateTemp(t *testing.T) {
	dir := t.TempDir()
	a, err := CreateTemp(OS, dir, "x-*.tmp", 0o640)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := CreateTemp(OS, dir, "x-*.tmp", 0o640)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	base := filepath.Base(a.Name())
	if a.Name() == b.Name() || len(base) != len("x-")+16+len(".tmp") || base[:2] != "x-" || filepath.Ext(base) != ".tmp" {
		t.Fatalf("temp names %s, %s", a.Name(), b.Name())
	}
}
