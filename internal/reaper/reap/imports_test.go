package reap

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// The reaper's start cost depends on this package importing little (see
// doc.go): every import here runs its own imports' init in every reaper.
func TestImportsStayFew(t *testing.T) {
	for f, imports := range testkit.Imports(t, ".") {
		for _, p := range imports {
			if local, ok := strings.CutPrefix(p, module); ok {
				checkLeaf(t, f, p, filepath.Join("..", "..", "..", local))
				continue
			}
			if !allowed[p] {
				t.Errorf("%s imports %s; the reaper's init would wait for its init and its imports' (doc.go)", f, p)
			}
		}
	}
}

// allowed are the standard packages this package may import.
var allowed = map[string]bool{"bytes": true, "os": true, "os/signal": true, "strconv": true, "syscall": true, "time": true}

const module = "github.com/evalhost/evalhost/"

// checkLeaf holds a package of this module that the reaper imports to the
// same rule: only the allowed standard packages, and no init of its own.
func checkLeaf(t *testing.T, from, pkg, dir string) {
	t.Helper()
	for f, imports := range testkit.Imports(t, dir) {
		for _, p := range imports {
			if !allowed[p] {
				t.Errorf("%s imports %s, which imports %s; the reaper's init would wait for its init and its imports' (doc.go)", from, pkg, p)
			}
		}
		file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, f), nil, 0)
		if err != nil {
			t.Fatal(err)
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
