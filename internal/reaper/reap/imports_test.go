package reap

import (
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
	allowed := map[string]bool{"bytes": true, "os": true, "os/signal": true, "strconv": true, "strings": true, "syscall": true, "time": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !allowed[p] {
				t.Errorf("%s imports %s; the reaper's init would wait for its init and its imports' (doc.go)", f, p)
			}
		}
	}
}
