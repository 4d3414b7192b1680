package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"backupmon/state"
)

// TestCommandsListed keeps commands.go whole: every exported method of a
// cmd_*.go file is listed, every listed method exists, and every record type
// of the state machine is logged by something listed.
func TestCommandsListed(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	methods := map[string]string{} // Engine.Name → file
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || !fd.Name.IsExported() {
				continue
			}
			if star, ok := fd.Recv.List[0].Type.(*ast.StarExpr); ok {
				if id, ok := star.X.(*ast.Ident); ok && id.Name == "Engine" {
					methods["Engine."+fd.Name.Name] = name
				}
			}
		}
	}
	listed := map[string]bool{}
	records := map[string]bool{}
	for _, c := range changes {
		by, _, _ := strings.Cut(c.by, ":")
		if strings.HasPrefix(by, "Engine.") {
			listed[by] = true
			if methods[by] == "" {
				t.Errorf("commands.go lists %s, which is not a method of Engine", by)
			}
		}
		for _, r := range c.records {
			records[r] = true
		}
	}
	for m, file := range methods {
		if strings.HasPrefix(file, "cmd_") && !listed[m] {
			t.Errorf("%s (%s) is not listed in commands.go", m, file)
		}
	}
	known := map[string]bool{}
	for _, typ := range state.Types() {
		name := reflect.TypeOf(state.New(typ)).Elem().Name()
		known[name] = true
		if !records[name] {
			t.Errorf("record type %s (%d) is logged by nothing commands.go lists", name, typ)
		}
	}
	for r := range records {
		if !known[r] {
			t.Errorf("commands.go names %s, which is not a record type", r)
		}
	}
}
