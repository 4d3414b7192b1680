package engine

import (
	"backupmon/wal"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The golden data directories: data directories written by earlier builds,
// each with the admin views it held, which every later build must open and
// show the same. A format change adds a migration and a new directory and
// keeps the older ones opening.
//
// Write one (in a build of the format it is named for, then never again):
//
//	go test ./engine -run '^TestGoldenDataDirectories$' -write-golden format1
var writeGolden = flag.String("write-golden", "", "write the golden data directory of this name under testdata/golden")

const goldenDir = "../testdata/golden"

// TestGoldenDataDirectories opens a copy of every golden data directory and
// checks that the engine shows the views it held when it was written: a
// snapshot, records after it in the log, and the development clock.
func TestGoldenDataDirectories(t *testing.T) {
	if *writeGolden != "" {
		writeGoldenDir(t, filepath.Join(goldenDir, *writeGolden))
		return
	}
	dirs, err := filepath.Glob(filepath.Join(goldenDir, "format*.views.json"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden data directory under %s: %v", goldenDir, err)
	}
	for _, viewsFile := range dirs {
		name := filepath.Base(viewsFile[:len(viewsFile)-len(".views.json")])
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(viewsFile)
			check(t, "read the views", err)
			dir := copyDir(t, filepath.Join(goldenDir, name))
			e := openTestEngine(t, dir)
			closeAtEnd(t, e)
			got, err := json.MarshalIndent(takeViews(t, e), "", " ")
			check(t, "encode the views", err)
			if name == "format1" { // written before alert actions named their job and the admin job view listed its results once
				got, want = withoutAlertJobNames(t, got), withoutAdminRecentResults(t, want)
			}
			got = onlyViewsHeld(t, got, want)
			sameJSON(t, "the golden "+name+" opened", normalViews(t, got), normalViews(t, want))
		})
	}
}

// writeGoldenDir runs a seeded workload (every kind of record), takes a
// snapshot in the middle, and saves the data directory as a crash would
// leave it (the snapshot, and the log after it) with its views.
func writeGoldenDir(t *testing.T, dst string) {
	if _, err := os.Stat(dst); err == nil {
		t.Fatalf("%s exists: golden directories are written once", dst)
	}
	dir := t.TempDir()
	e := openTestEngine(t, dir)
	runGoldenWorkload(t, e, nil)
	live := takeViews(t, e)
	crash := copyDir(t, dir)
	check(t, "close", e.Close())
	// Keys' lastUsedAt lives in snapshots only: the views hold what the
	// crash kept.
	e = openTestEngine(t, copyDir(t, crash))
	views := takeViews(t, e)
	check(t, "close", e.Close())
	sameViews(t, "recovered", maskLastUsed(views), maskLastUsed(live))
	raw, err := json.MarshalIndent(views, "", " ")
	check(t, "encode the views", err)
	check(t, "mkdir", os.MkdirAll(filepath.Dir(dst), 0o755))
	check(t, "copy", os.CopyFS(dst, os.DirFS(crash)))
	check(t, "write the views", os.WriteFile(dst+".views.json", append(raw, '\n'), 0o644))
	t.Logf("wrote %s and its views", dst)
}

// TestNewerFormatRefused: a data directory whose FORMAT names a newer format
// is refused with a message naming both formats, and nothing in it changes.
func TestNewerFormatRefused(t *testing.T) {
	dir := copyDir(t, filepath.Join(goldenDir, "format1"))
	check(t, "write FORMAT", os.WriteFile(filepath.Join(dir, formatFile), []byte("backupmon-data 3\n"), 0o640))
	before := treeDigest(t, dir)
	e, err := Open(Options{Dir: dir, Clock: NewDevClock(time.Now()), Logger: quietLogger(), WAL: wal.Options{NoSync: true, Logger: quietLogger()}})
	if err == nil {
		e.Close()
		t.Fatal("a directory of format 3 opened")
	}
	want := "is format 3, this build reads formats 1 to 2; run a newer build (nothing in the directory was changed)"
	if !errors.Is(err, ErrNewerFormat) || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q, want one containing %q", err, want)
	}
	if after := treeDigest(t, dir); after != before {
		t.Fatalf("the refused directory changed:\n%s\nwas\n%s", after, before)
	}
	if v, err := CheckFormat(dir); v != 3 || !errors.Is(err, ErrNewerFormat) {
		t.Fatalf("CheckFormat = %d, %v", v, err)
	}
}

// TestFormatNamed: a directory of a build from before formats were named
// reads as format 1; it, one named format 1 and a new directory are named
// with this build's format (2) once opened.
func TestFormatNamed(t *testing.T) {
	old := copyDir(t, filepath.Join(goldenDir, "format1"))
	if v, err := CheckFormat(old); v != 1 || err != nil {
		t.Fatalf("CheckFormat of the unnamed golden directory = %d, %v", v, err)
	}
	named := copyDir(t, filepath.Join(goldenDir, "format1-layout10"))
	if v, err := CheckFormat(named); v != 1 || err != nil {
		t.Fatalf("CheckFormat of the golden directory named format 1 = %d, %v", v, err)
	}
	fresh := t.TempDir()
	for _, dir := range []string{old, named, fresh} {
		e := openTestEngine(t, dir)
		check(t, "close", e.Close())
		b, err := os.ReadFile(filepath.Join(dir, formatFile))
		if err != nil || string(b) != "backupmon-data 2\n" {
			t.Fatalf("%s: FORMAT %q, %v", dir, b, err)
		}
	}
}

// treeDigest lists every file under dir with its size and SHA-256.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	var sb strings.Builder
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		fmt.Fprintf(&sb, "%s %d %x\n", rel, len(b), sha256.Sum256(b))
		return nil
	})
	check(t, "walk", err)
	return sb.String()
}

// withoutAdminRecentResults drops "recentResults" from the admin job views
// (the objects that have "history") of views written before the admin job
// view stopped listing its results twice: history holds the same results.
func withoutAdminRecentResults(t *testing.T, views []byte) []byte {
	return editObjects(t, views, func(x map[string]any) {
		if _, ok := x["history"]; ok {
			delete(x, "recentResults")
		}
	})
}

// onlyViewsHeld drops from views got the workspace views (wsViews members)
// that want lacks: those added after want was written (channels, users,
// rules...). Those want holds are all compared.
func onlyViewsHeld(t *testing.T, got, want []byte) []byte {
	t.Helper()
	var g, w struct{ Each []map[string]json.RawMessage }
	check(t, "decode the views", json.Unmarshal(got, &g))
	check(t, "decode the views", json.Unmarshal(want, &w))
	if len(g.Each) != len(w.Each) {
		return got // the comparison shows the difference
	}
	for i, x := range g.Each {
		for k := range x {
			if _, ok := w.Each[i][k]; !ok {
				delete(x, k)
			}
		}
	}
	var all map[string]json.RawMessage
	check(t, "decode the views", json.Unmarshal(got, &all))
	each, err := json.Marshal(g.Each)
	check(t, "encode the views", err)
	all["Each"] = each
	out, err := json.Marshal(all)
	check(t, "encode the views", err)
	return out
}

// withoutAlertJobNames drops "jobName" from the alert actions' activity
// entries (alert.*), which views written before they named their job lack.
func withoutAlertJobNames(t *testing.T, views []byte) []byte {
	return editObjects(t, views, func(x map[string]any) {
		if typ, _ := x["type"].(string); strings.HasPrefix(typ, "alert.") && x["alertId"] != nil {
			delete(x, "jobName")
		}
	})
}

// editObjects decodes views, calls edit on every object in them, and
// encodes them again.
func editObjects(t *testing.T, views []byte, edit func(map[string]any)) []byte {
	t.Helper()
	var v any
	check(t, "decode the views", json.Unmarshal(views, &v))
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			edit(x)
			for _, y := range x {
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	walk(v)
	out, err := json.Marshal(v)
	check(t, "encode the views", err)
	return out
}

// normalViews re-encodes views with their members in one order, one
// member a line, so that two encodings of the same views compare equal.
func normalViews(t *testing.T, views []byte) []byte {
	t.Helper()
	var v any
	check(t, "decode the views", json.Unmarshal(views, &v))
	out, err := json.MarshalIndent(v, "", " ")
	check(t, "encode the views", err)
	return append(out, '\n')
}
