package snapshot

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// junk is a set of entries that are neither snapshots nor temp files.
var junk = []string{"foo", "1.snap", "00000000000000000007.snap.bak", "LOCK"}

func fillDir(t *testing.T, dir string, lsns []uint64, temps int) {
	t.Helper()
	for _, lsn := range lsns {
		writeFile(t, dir, fileName(lsn), []byte("x"))
	}
	for i := range temps {
		writeFile(t, dir, fileName(uint64(i))+".12345"+tmpSuffix, []byte("partial"))
	}
	for _, name := range junk {
		writeFile(t, dir, name, nil)
	}
	if err := os.Mkdir(filepath.Join(dir, fileName(999)), dirPerm); err != nil {
		t.Fatal(err)
	}
}

func TestList(t *testing.T) {
	tests := []struct {
		name string
		lsns []uint64
		want []uint64
	}{
		{"none", nil, nil},
		{"one", []uint64{3}, []uint64{3}},
		{"unordered", []uint64{30, 5, 1 << 50, 0, 200}, []uint64{1 << 50, 200, 30, 5, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			fillDir(t, dir, tt.lsns, 2)
			got, err := List(dir)
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("List = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	t.Run("missing dir", func(t *testing.T) {
		got, err := List(filepath.Join(t.TempDir(), "nope"))
		if err != nil || len(got) != 0 {
			t.Fatalf("List = %v, %v", got, err)
		}
	})
}

func TestPrune(t *testing.T) {
	tests := []struct {
		name       string
		lsns       []uint64
		temps      int
		keep       int
		wantOldest uint64
		wantKept   []uint64
	}{
		{"keep 2 of 5", []uint64{10, 50, 20, 40, 30}, 3, 2, 40, []uint64{50, 40}},
		{"keep 1 of 5", []uint64{10, 50, 20, 40, 30}, 0, 1, 50, []uint64{50}},
		{"keep more than there are", []uint64{10, 20}, 1, 5, 10, []uint64{20, 10}},
		{"keep all exactly", []uint64{10, 20}, 0, 2, 10, []uint64{20, 10}},
		{"none", nil, 0, 2, 0, nil},
		{"only temp files", nil, 2, 2, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			fillDir(t, dir, tt.lsns, tt.temps)
			o, logs := capture()
			oldest, err := o.Prune(dir, tt.keep)
			if err != nil || oldest != tt.wantOldest {
				t.Fatalf("Prune = %d, %v; want %d, nil", oldest, err, tt.wantOldest)
			}
			if got, _ := List(dir); !slices.Equal(got, tt.wantKept) {
				t.Errorf("kept %v, want %v", got, tt.wantKept)
			}
			for _, name := range dirNames(t, dir) {
				if strings.HasSuffix(name, tmpSuffix) {
					t.Errorf("temp file %s left", name)
				}
			}
			for _, name := range junk {
				if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
					t.Errorf("unrelated file removed: %v", err)
				}
			}
			if removed := len(tt.lsns) - len(tt.wantKept) + tt.temps; strings.Count(logs.String(), "snapshot pruned") != removed {
				t.Errorf("want %d pruned lines in log: %s", removed, logs)
			}
		})
	}
	t.Run("keep 0", func(t *testing.T) {
		dir := t.TempDir()
		fillDir(t, dir, []uint64{1, 2}, 0)
		if _, err := Prune(dir, 0); err == nil {
			t.Fatal("Prune with keep 0 succeeded")
		}
		if got, _ := List(dir); len(got) != 2 {
			t.Fatalf("Prune with keep 0 removed snapshots: %v left", got)
		}
	})
	t.Run("missing dir", func(t *testing.T) {
		if oldest, err := Prune(filepath.Join(t.TempDir(), "nope"), 2); err != nil || oldest != 0 {
			t.Fatalf("Prune = %d, %v", oldest, err)
		}
	})
}
