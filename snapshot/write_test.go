package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteLoadRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		lsn  uint64
		body []byte
	}{
		{"empty", 0, nil},
		{"small", 42, []byte("engine state")},
		{"multi-chunk", 1 << 40, randBody(5<<20+123, 5)},
		{"exact chunks", 7, randBody(2*defaultChunkSize, 6)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "not", "there")
			o, logs := capture()
			path, err := o.Write(dir, tt.lsn, func(w io.Writer) error {
				_, err := w.Write(tt.body)
				return err
			})
			if err != nil {
				t.Fatalf("Write: %v", err)
			}
			if want := filepath.Join(dir, fmt.Sprintf("%020d.snap", tt.lsn)); path != want {
				t.Errorf("path %q, want %q", path, want)
			}
			checkMode(t, dir, os.ModeDir|dirPerm)
			checkMode(t, path, filePerm)
			if !strings.Contains(logs.String(), "snapshot file written") {
				t.Errorf("no log of the write: %q", logs.String())
			}
			if names := dirNames(t, dir); len(names) != 1 {
				t.Errorf("dir holds %q, want the snapshot only", names)
			}

			lsn, calls, err := loadAll(o, dir)
			if err != nil || lsn != tt.lsn {
				t.Fatalf("Load = %d, %v; want %d, nil", lsn, err, tt.lsn)
			}
			if len(calls) != 1 || calls[0].lsn != tt.lsn || !bytes.Equal(calls[0].body, tt.body) {
				t.Fatalf("fn saw %d calls, want one with the body", len(calls))
			}
		})
	}
}

// checkMode fails unless path has mode want, as far as the umask allows.
func checkMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode(); got&^want != 0 || got.Type() != want.Type() {
		t.Errorf("%s has mode %v, want %v", path, got, want)
	}
}

func TestWriteReplacesSameLSN(t *testing.T) {
	dir := t.TempDir()
	writeSnap(t, dir, 5, []byte("old"))
	writeSnap(t, dir, 5, []byte("new"))
	_, calls, err := loadAll(quiet, dir)
	if err != nil || len(calls) != 1 || string(calls[0].body) != "new" {
		t.Fatalf("Load: %v, calls %+v", err, calls)
	}
	if names := dirNames(t, dir); len(names) != 1 {
		t.Fatalf("dir holds %q", names)
	}
}

func TestWriteFailureLeavesNothing(t *testing.T) {
	errFill := errors.New("engine gave up")
	tests := []struct {
		name    string
		fill    func(w io.Writer) error
		wantErr error // nil: fill panics
	}{
		{"fails at once", func(io.Writer) error { return errFill }, errFill},
		{"fails half way", func(w io.Writer) error {
			if _, err := w.Write(randBody(3<<20+7, 1)); err != nil {
				return err
			}
			return fmt.Errorf("encode state: %w", errFill)
		}, errFill},
		{"panics half way", func(w io.Writer) error {
			if _, err := w.Write(randBody(2<<20, 1)); err != nil {
				return err
			}
			panic("boom")
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeSnap(t, dir, 1, []byte("older"))
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil && tt.wantErr != nil {
						t.Fatalf("panic: %v", p)
					}
				}()
				_, err = quiet.Write(dir, 2, tt.fill)
			}()
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("Write error = %v, want %v", err, tt.wantErr)
			}
			if names := dirNames(t, dir); len(names) != 1 || names[0] != fileName(1) {
				t.Fatalf("dir holds %q, want only the older snapshot", names)
			}
		})
	}
}

func TestWriteFailsOnBadDir(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	writeFile(t, dir, "file", nil)
	if _, err := quiet.Write(notDir, 1, func(io.Writer) error { return nil }); err == nil {
		t.Fatal("Write into a file succeeded")
	}
	if names := dirNames(t, dir); len(names) != 1 {
		t.Fatalf("dir holds %q", names)
	}
}

func TestEncoderRefusesUseAfterClose(t *testing.T) {
	var kept io.Writer
	dir := t.TempDir()
	_, err := quiet.Write(dir, 1, func(w io.Writer) error {
		kept = w
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kept.Write([]byte("late")); err == nil {
		t.Fatal("Write after the snapshot was finished succeeded")
	}
}
