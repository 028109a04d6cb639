package launch

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/testkit"
)

// A program's package init can start a spare early only if this package
// is initialised early: after the few packages package reap waits for,
// not after most of the standard library (doc.go).
func TestImportsStayFew(t *testing.T) {
	allowed := map[string]bool{"os": true, "sync": true, "syscall": true, "time": true,
		"github.com/evalhost/evalhost/internal/reaper/reap": true}
	for f, imports := range testkit.Imports(t, ".") {
		for _, p := range imports {
			if !allowed[p] {
				t.Errorf("%s imports %s; a spare begun from a package init would wait for its init and its imports' (doc.go)", f, p)
			}
		}
		file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(".", f), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "init" {
				t.Errorf("%s has an init: importing this package would run it in every program", f)
			}
		}
	}
}

// One spare is begun however often Begin is called; Take hands it over
// once, and Peek reports it without taking it.
func TestBeginOnceTakeOnce(t *testing.T) {
	leakcheck.Check(t, leakcheck.Options{FDs: true})
	if sp, err := Take(); sp != nil || err != nil {
		t.Fatalf("Take before any Begin = %v, %v; want nothing", sp, err)
	}
	Begin()
	Begin()
	pid, err := Peek()
	if err != nil || pid <= 0 {
		t.Fatalf("Peek = %d, %v", pid, err)
	}
	sp, err := Take()
	if err != nil || sp == nil {
		t.Fatalf("Take = %v, %v", sp, err)
	}
	defer drop(t, sp)
	if sp.Pid != pid {
		t.Errorf("Take's spare is %d, Peek's %d: the second Begin started another", sp.Pid, pid)
	}
	if again, err := Take(); again != nil || err != nil {
		drop(t, again)
		t.Errorf("a second Take = %v, %v; want nothing", again, err)
	}
	if pid, err := Peek(); pid != 0 || err != nil {
		t.Errorf("Peek after Take = %d, %v; want 0", pid, err)
	}
}

// drop ends a spare as reaper.DropSpare does: its socket and lifeline
// closed, it exits; then it is reaped.
func drop(t *testing.T, sp *Spare) {
	t.Helper()
	if sp == nil {
		return
	}
	sp.Sock.Close()
	sp.Lifeline.Close()
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(sp.Pid, &ws, 0, nil); err != nil {
		t.Errorf("wait for spare %d: %v", sp.Pid, err)
	}
	sp.StatusR.Close()
}
