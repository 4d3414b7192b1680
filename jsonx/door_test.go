package jsonx_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestOneDoor fails when a Go file of the module outside jsonx and outside
// tests imports a JSON library itself: every package marshals and
// unmarshals through jsonx, so that the library and its options are chosen
// in one place. Test files, and the files of packages that only tests
// import (test harnesses), may use encoding/json, as an oracle to check
// jsonx's bytes against.
func TestOneDoor(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	files, err := moduleFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 50 {
		t.Fatalf("read only %d Go files under %s", len(files), root)
	}
	testOnly := testOnlyPackages(files)
	for _, f := range files {
		if f.test || f.dir == "jsonx" || testOnly[f.dir] {
			continue
		}
		for _, p := range f.imports {
			if p == "encoding/json" || p == "github.com/goccy/go-json" || strings.HasPrefix(p, "github.com/goccy/go-json/") {
				t.Errorf("%s imports %q: use backupmon/jsonx", f.path, p)
			}
		}
	}
}

// TestOneDoorSeesHarnesses checks the exemption of TestOneDoor on a made-up
// module: a package that only tests import is exempt, one that a command
// imports as well is not.
func TestOneDoorSeesHarnesses(t *testing.T) {
	files := []goFile{
		{path: "a/a.go", dir: "a", imports: []string{"backupmon/h"}},
		{path: "a/a_test.go", dir: "a", test: true, imports: []string{"backupmon/harness"}},
		{path: "harness/h.go", dir: "harness", imports: []string{"backupmon/deep"}},
		{path: "deep/d.go", dir: "deep"},
		{path: "h/h.go", dir: "h"},
		{path: "h/h_test.go", dir: "h", test: true, imports: []string{"backupmon/harness"}},
		{path: "unused/u.go", dir: "unused"},
	}
	got := testOnlyPackages(files)
	var dirs []string
	for d := range got {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	if strings.Join(dirs, ",") != "deep,harness" {
		t.Errorf("test-only packages %q, want deep and harness", dirs)
	}
}

// goFile is what TestOneDoor needs of one Go file: its path and package
// folder (relative to the module's root), whether it is a test, and its
// imports.
type goFile struct {
	path, dir string
	test      bool
	imports   []string
}

// moduleFiles reads the imports of every Go file under root, testdata,
// vendor and hidden folders left out.
func moduleFiles(root string) ([]goFile, error) {
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return nil, err
	}
	var files []goFile
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if name == "testdata" || name == "vendor" || (rel != "." && strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		g := goFile{path: filepath.ToSlash(rel), dir: filepath.ToSlash(filepath.Dir(rel)), test: strings.HasSuffix(path, "_test.go")}
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			g.imports = append(g.imports, p)
		}
		files = append(files, g)
		return nil
	})
	return files, err
}

// testOnlyPackages returns the folders of the packages that some test
// imports and that no code but tests (and other such packages) imports.
func testOnlyPackages(files []goFile) map[string]bool {
	const module = "backupmon/"
	importers := map[string][]goFile{} // package folder → files importing it
	for _, f := range files {
		for _, p := range f.imports {
			if strings.HasPrefix(p, module) {
				dir := strings.TrimPrefix(p, module)
				importers[dir] = append(importers[dir], f)
			}
		}
	}
	testOnly := map[string]bool{}
	for dir, by := range importers {
		if len(by) > 0 {
			testOnly[dir] = true
		}
	}
	// Strike out, until nothing changes, every package that a file
	// imports which is neither a test nor in a package still counted as
	// test-only.
	for changed := true; changed; {
		changed = false
		for dir := range testOnly {
			for _, f := range importers[dir] {
				if !f.test && !testOnly[f.dir] {
					delete(testOnly, dir)
					changed = true
					break
				}
			}
		}
	}
	return testOnly
}
