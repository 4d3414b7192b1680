package main

import (
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backupmon/internal/testserver"
)

// A start-up that fails changes nothing on disk: a listener's port in use
// (public, admin or SMTP) leaves a new data directory uncreated and an
// existing one as it was, and a data directory of a newer format is refused
// naming both formats, before anything in it is touched.
func TestFailedStartChangesNothing(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := busy.Addr().String()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	start := func(t *testing.T, dir string, args ...string) (string, error) {
		t.Helper()
		base := []string{"--data", dir, "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"}
		cfg, err := parseServeFlags(append(base, args...))
		if err != nil {
			t.Fatal(err)
		}
		out := &testserver.LockedBuffer{}
		stop := make(chan os.Signal, 1)
		stop <- os.Interrupt // a start that succeeds stops at once
		err = run(cfg, quiet, out, stop)
		return out.String(), err
	}
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
		want := "is format 9, this build reads formats 1 to 1; run a newer build (nothing in the directory was changed)"
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
