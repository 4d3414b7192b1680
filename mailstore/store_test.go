package mailstore

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestPutGetRemove(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	raw := []byte("Subject: x\r\n\r\nbody\r\n")
	ref, err := s.Put(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !validRef(ref) {
		t.Fatalf("Put returned %q, not a reference", ref)
	}
	got, err := s.Get(ref)
	if err != nil || !bytes.Equal(got, raw) {
		t.Fatalf("Get = %q, %v; want %q", got, err, raw)
	}
	if err := s.Remove([]string{ref, ref, "../../etc/passwd"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ref); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Remove: %v, want ErrNotFound", err)
	}
}

// TestRefsNeverLeaveTheStore: only references Put could return reach the
// file system.
func TestRefsNeverLeaveTheStore(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(filepath.Join(dir, "store"))
	outside := filepath.Join(dir, "secret.eml")
	os.WriteFile(outside, []byte("x"), 0o600)
	for _, ref := range []string{"", "..", "../secret", "0123456789abcdef0123456789ABCDEF", "0123456789abcdef0123456789abcde/", "0123456789abcdef0123456789abcdef0"} {
		if _, err := s.Get(ref); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get(%q) = %v, want ErrNotFound", ref, err)
		}
	}
	s.Remove([]string{"../secret"})
	if _, err := os.Stat(outside); err != nil {
		t.Fatalf("a file outside the store went: %v", err)
	}
}

func TestSweep(t *testing.T) {
	s, _ := Open(t.TempDir())
	old, _ := s.Put([]byte("old"))
	fresh, _ := s.Put([]byte("fresh"))
	past := time.Now().Add(-40 * 24 * time.Hour)
	os.Chtimes(s.path(old), past, past)
	tmp := s.path(fresh) + ".tmp"
	os.WriteFile(tmp, []byte("torn"), 0o600)
	os.Chtimes(tmp, time.Now().Add(-2*time.Hour), time.Now().Add(-2*time.Hour))
	n, err := s.Sweep(time.Now().Add(-31 * 24 * time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("Sweep = %d, %v; want 2 files (the old one and the torn temporary)", n, err)
	}
	if _, err := s.Get(old); !errors.Is(err, ErrNotFound) {
		t.Errorf("the old message is still there")
	}
	if _, err := s.Get(fresh); err != nil {
		t.Errorf("the fresh message went: %v", err)
	}
}
