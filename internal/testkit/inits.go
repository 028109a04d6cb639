package testkit

import (
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Imports lists what the non-test Go files in dir import, by file name:
// for the tests that keep a package's imports few, because Go initialises
// a package only once everything it imports is.
func Imports(tb testing.TB, dir string) map[string][]string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no Go files in %s: %v", dir, err)
	}
	out := map[string][]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			tb.Fatal(err)
		}
		name := filepath.Base(f)
		out[name] = []string{}
		for _, imp := range file.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			out[name] = append(out[name], p)
		}
	}
	return out
}

// InitOrder runs cmd, a Go program, with GODEBUG=inittrace=1 added to its
// environment, and returns the packages whose init ran, in the order they
// ran. cmd must exit 0.
func InitOrder(tb testing.TB, cmd *exec.Cmd) []string {
	tb.Helper()
	cmd.Env = append(cmd.Env, "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("%s exited with %v: %s", cmd.Path, err, out)
	}
	var ran []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "init" {
			ran = append(ran, f[1])
		}
	}
	return ran
}
