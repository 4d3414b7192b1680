// Package mailstore keeps the raw report e-mails that could not be read on
// disk, so that a fixed parser can read them again.
//
// Each message is one file, written to a temporary name, fsynced, renamed
// and its directory fsynced before Put returns: a reference handed to the
// engine always names a whole file. Files are spread over 256
// subdirectories by the first two characters of their reference.
package mailstore

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"backupmon/vfs"
)

// ErrNotFound is returned by Get for a reference with no file (never kept,
// or deleted).
var ErrNotFound = errors.New("mailstore: raw message not kept")

// Store is a directory of raw messages.
type Store struct {
	dir string
}

// Open makes (if needed) and opens the store in dir. It returns an error
// when the directory cannot be made.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open mail store %s: %w", dir, err)
	}
	return &Store{dir: dir}, nil
}

// validRef reports whether ref is one Put could have returned: 32 lowercase
// hex characters. Nothing else reaches the file system.
func validRef(ref string) bool {
	if len(ref) != 32 {
		return false
	}
	for i := 0; i < len(ref); i++ {
		c := ref[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func (s *Store) path(ref string) string {
	return filepath.Join(s.dir, ref[:2], ref+".eml")
}

// Put writes raw durably and returns its reference. It returns an error
// (and keeps nothing) when the file cannot be written or synced.
func (s *Store) Put(raw []byte) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("mail store: random name: %w", err)
	}
	ref := hex.EncodeToString(b[:])
	if err := s.PutAs(ref, raw); err != nil {
		return "", err
	}
	return ref, nil
}

// PutAs writes raw durably under ref, a reference Put gave (a restore keeps
// a backup's references, which its entries name). It returns an error for
// a reference Put could not have made, or when the file cannot be written
// or synced.
func (s *Store) PutAs(ref string, raw []byte) error {
	if !validRef(ref) {
		return fmt.Errorf("mail store: %q is not a reference", ref)
	}
	sub := filepath.Join(s.dir, ref[:2])
	if _, err := os.Stat(sub); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(sub, 0o700); err != nil {
			return fmt.Errorf("mail store: %w", err)
		}
		if err := vfs.SyncDir(vfs.OS, s.dir); err != nil { // the new subdirectory's entry
			return fmt.Errorf("mail store: %w", err)
		}
	}
	if err := vfs.WriteFile(vfs.OS, s.path(ref), raw, 0o600); err != nil {
		return fmt.Errorf("mail store: %w", err)
	}
	return nil
}

// Get returns the raw message ref names; ErrNotFound when there is none.
func (s *Store) Get(ref string) ([]byte, error) {
	if !validRef(ref) {
		return nil, ErrNotFound
	}
	b, err := os.ReadFile(s.path(ref))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("mail store: read %s: %w", ref, err)
	}
	return b, nil
}

// Remove deletes the messages refs name; missing ones are skipped. It
// returns the first error other than a missing file.
func (s *Store) Remove(refs []string) error {
	var first error
	for _, ref := range refs {
		if !validRef(ref) {
			continue
		}
		if err := os.Remove(s.path(ref)); err != nil && !errors.Is(err, fs.ErrNotExist) && first == nil {
			first = fmt.Errorf("mail store: remove %s: %w", ref, err)
		}
	}
	return first
}

// Sweep deletes files last written before cut, and temporary files left
// by a crash: messages whose list entry left while the process was down
// (or when the engine could not say so) stop taking space after the 30
// days an entry can live. It returns how many files it deleted.
func (s *Store) Sweep(cut time.Time) (int, error) {
	n := 0
	err := filepath.WalkDir(s.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // removed meanwhile
		}
		tmp := strings.HasSuffix(path, ".tmp")
		if info.ModTime().Before(cut) || (tmp && info.ModTime().Before(time.Now().Add(-time.Hour))) {
			if os.Remove(path) == nil {
				n++
			}
		}
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("mail store: sweep %s: %w", s.dir, err)
	}
	return n, nil
}
