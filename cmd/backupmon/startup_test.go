package main

import (
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backupmon/internal/syncbuf"
)

// A start-up that fails changes nothing on disk: a listener's port in use
// (public, admin or SMTP) leaves a new data directory uncreated and an
// existing one as it was, and a data directory of a newer format is refused
// naming both formats, before anything in it is touched.
func TestFailedStartChangesNothing(t *testing.T) {
	port := busyPort(t)
	start := startOnce
	// A fresh data directory, written once by a start that works.
	existing := t.TempDir()
	if _, err := start(t, filepath.Join(existing, "data"), "--demo"); err != nil {
		t.Fatalf("first start: %v", err)
	}
	existing = filepath.Join(existing, "data")
	for _, tc := range []struct {
		what string
		args []string
		want string
	}{
		{"public port in use", []string{"--listen", port}, "listen " + port + ": "},
		{"admin port in use", []string{"--admin-listen", port}, "listen " + port + ": "},
		{"SMTP port in use", []string{"--smtp-listen", port}, "listen " + port + ": "},
	} {
		t.Run(tc.what, func(t *testing.T) {
			fresh := filepath.Join(t.TempDir(), "data")
			if _, err := start(t, fresh, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("start on a new directory: %v, want %q", err, tc.want)
			}
			if _, err := os.Stat(fresh); !os.IsNotExist(err) {
				t.Errorf("the failed start created %s (%v)", fresh, err)
			}
			before := dirDigest(t, existing)
			if _, err := start(t, existing, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("start on an existing directory: %v, want %q", err, tc.want)
			}
			if after := dirDigest(t, existing); after != before {
				t.Errorf("the failed start changed the data directory:\n%s\nwas\n%s", after, before)
			}
		})
	}
	t.Run("newer format", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(existing, "FORMAT"), []byte("backupmon-data 9\n"), 0o640); err != nil {
			t.Fatal(err)
		}
		before := dirDigest(t, existing)
		out, err := start(t, existing)
		want := "is format 9, this build reads formats 1 to 2; run a newer build (nothing in the directory was changed)"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("start: %v, want %q", err, want)
		}
		if out != "" {
			t.Errorf("printed %q before refusing", out)
		}
		if after := dirDigest(t, existing); after != before {
			t.Errorf("the refused start changed the data directory:\n%s\nwas\n%s", after, before)
		}
	})
}

// busyPort returns the address of a port in use until the test ends.
func busyPort(t *testing.T) string {
	t.Helper()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { busy.Close() })
	return busy.Addr().String()
}

// startOnce runs serve on dir with loopback listeners and args, stopping
// at once if it starts; it returns what it printed and its error.
func startOnce(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	base := []string{"--data", dir, "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"}
	cfg, err := parseServeFlags(append(base, args...))
	if err != nil {
		t.Fatal(err)
	}
	out := &syncbuf.Buffer{}
	stop := make(chan os.Signal, 1)
	stop <- os.Interrupt // a start that succeeds stops at once
	err = run(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), out, stop)
	return out.String(), err
}

// A port in use fails the start before the data directory is touched: an
// empty directory made beforehand, and one a server wrote, keep exactly
// their listing (every file and directory, its mode, size and content).
func TestPortInUseListingUnchanged(t *testing.T) {
	port := busyPort(t)
	start := func(dir string, args ...string) error {
		_, err := startOnce(t, dir, append([]string{"--demo"}, args...)...)
		return err
	}
	written := filepath.Join(t.TempDir(), "data")
	if err := start(written); err != nil {
		t.Fatalf("first start: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(empty, 0o750); err != nil {
		t.Fatal(err)
	}
	for name, dir := range map[string]string{"empty": empty, "written": written} {
		for _, flag := range []string{"--listen", "--admin-listen", "--smtp-listen"} {
			t.Run(name+" "+flag, func(t *testing.T) {
				before := dirListing(t, dir)
				if err := start(dir, flag, port); err == nil || !strings.Contains(err.Error(), "address already in use") {
					t.Fatalf("start with %s %s: %v, want address already in use", flag, port, err)
				}
				if after := dirListing(t, dir); after != before {
					t.Errorf("the failed start changed the data directory:\n%s\nwas\n%s", after, before)
				}
			})
		}
	}
	if dirListing(t, empty) != "" {
		t.Errorf("the empty directory is no longer empty")
	}
}

// dirListing lists everything under dir: each path with its mode, and a
// file's size and SHA-256.
func dirListing(t testing.TB, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		fmt.Fprintf(&b, "%s %v", rel, info.Mode())
		if !d.IsDir() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " %d %x", len(data), sha256.Sum256(data))
		}
		b.WriteByte('\n')
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// `backupmon nats` with a port in use says which and fails without making
// its store directory (NATS made it, then exited from its fatal log).
func TestNatsPortInUse(t *testing.T) {
	port := busyPort(t)
	for _, tc := range []struct {
		what string
		args []string
	}{
		{"client port", []string{"--listen", port}},
		{"route port", []string{"--listen", "127.0.0.1:0", "--cluster-listen", port}},
	} {
		t.Run(tc.what, func(t *testing.T) {
			store := filepath.Join(t.TempDir(), "nats")
			var out, errOut syncbuf.Buffer
			code := natsCommand(append(tc.args, "--store", store), &out, &errOut)
			if code != 1 || !strings.Contains(errOut.String(), "backupmon nats: listen "+port+": ") {
				t.Fatalf("exit %d, said %q; want 1 and the port named", code, errOut.String())
			}
			if _, err := os.Stat(store); !os.IsNotExist(err) {
				t.Errorf("the failed start made %s (%v)", store, err)
			}
		})
	}
}
