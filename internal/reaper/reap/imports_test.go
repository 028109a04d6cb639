package reap

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The reaper's start cost depends on this package importing little (see
// doc.go): every import here runs its own imports' init in every reaper.
func TestImportsStayFew(t *testing.T) {
	allowed := map[string]bool{"bytes": true, "os": true, "os/signal": true, "strconv": true, "syscall": true, "time": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range file.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if local, ok := strings.CutPrefix(p, module); ok {
				checkLeaf(t, f, p, filepath.Join("..", "..", "..", local), allowed)
				continue
			}
			if !allowed[p] {
				t.Errorf("%s imports %s; the reaper's init would wait for its init and its imports' (doc.go)", f, p)
			}
		}
	}
}

const module = "github.com/evalhost/evalhost/"

// checkLeaf holds a package of this module that the reaper imports to the
// same rule: only the allowed standard packages, and no init of its own.
func checkLeaf(t *testing.T, from, pkg, dir string, allowed map[string]bool) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s imports %s, whose files are not in %s: %v", from, pkg, dir, err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range file.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !allowed[p] {
				t.Errorf("%s imports %s, which imports %s; the reaper's init would wait for its init and its imports' (doc.go)", from, pkg, p)
			}
		}
		if hasInit(file) {
			t.Errorf("%s imports %s, whose %s has an init; the reaper's start would run it", from, pkg, f)
		}
	}
}

func hasInit(f *ast.File) bool {
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "init" {
			return true
		}
	}
	return false
}
