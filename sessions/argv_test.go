package sessions

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// A request's argv is its cells' command line as one script's: set before
// its first cell in each interpreter, then as the cells leave it (a cell's
// sys.argv edit, __file__ or shift lasts into the next cell, as in python3
// and bash), and set again in an interpreter that replaced one (a reset
// cell, a death's retry).
func TestRequestArgvOncePerRequest(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not on PATH")
	}
	r := newTestRegistry(t, Config{})
	dir := t.TempDir()
	marker := filepath.Join(dir, "died-once")
	look := py("import sys; print('argv', sys.argv, globals().get('__file__'))")
	dieOnce := py("import os, signal\nif not os.path.exists(" + quote(marker) + "):\n    open(" + quote(marker) + ", 'w').close()\n    os.kill(os.getpid(), signal.SIGKILL)")
	script := []string{"s.py", "x", "y"}
	tests := []struct {
		name  string
		cells []Cell
		want  string
	}{
		{"a cell's changes last into the next",
			[]Cell{py("import sys; sys.argv.append('added'); __file__ = 'mine'"), look},
			"argv ['s.py', 'x', 'y', 'added'] mine\n"},
		{"a shell cell's shift lasts into the next",
			[]Cell{sh("shift"), sh(`echo "sh $# $1"`)},
			"sh 1 y\n"},
		{"a reset cell's fresh interpreter gets them",
			[]Cell{py("import sys; sys.argv.append('added')"), {Language: LangPython, Code: look.Code, Reset: true}},
			"argv ['s.py', 'x', 'y'] /w/s.py\n"},
		{"a death's retry gets them",
			[]Cell{py("import sys; sys.argv.append('added')"), dieOnce, look},
			"argv ['s.py', 'x', 'y'] /w/s.py\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, c := eval(t, r, Request{Session: "argv", Cwd: dir, Argv: script, File: "/w/s.py", Cells: tt.cells})
			if res.Status != StatusOK || !strings.Contains(c.Output(), tt.want) {
				t.Fatalf("status %s, output %q; want ok and %q", res.Status, c.Output(), tt.want)
			}
		})
	}
}

// cwdBreaker sends its first request's cwd as one that does not exist, as
// a kernel on a host without the directory gets it: the runner refuses it
// (RequestError) and that cell does not run.
type cwdBreaker struct {
	Executor
	broke bool
}

func (e *cwdBreaker) Execute(ctx context.Context, req frames.Request, emit func(frames.Frame)) (frames.Frame, error) {
	if !e.broke && req.Cwd != "" {
		e.broke = true
		req.Cwd = filepath.Join(req.Cwd, "gone")
	}
	return e.Executor.Execute(ctx, req, emit)
}

// With --keep-going, the cell after one whose cwd and argv could not be
// applied gets them again: it ran where the interpreter started, with
// sys.argv [""].
func TestKeepGoingAfterFailedSetup(t *testing.T) {
	home := t.TempDir()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	start := RunnerStarter(home)
	r := newTestRegistry(t, Config{Home: home, Starters: map[string]Starter{LangPython: func(ctx context.Context, spec Spec) (Executor, error) {
		ex, err := start(ctx, spec)
		if err != nil {
			return nil, err
		}
		return &cwdBreaker{Executor: ex}, nil
	}}})
	look := py("import os, sys; print('at', os.getcwd(), sys.argv)")
	res, c := eval(t, r, Request{Cwd: dir, Mode: ModePerCall, Batch: true, KeepGoing: true, Argv: []string{"s.py", "x"}, File: "/w/s.py",
		Cells: []Cell{look, look}})
	want := "at " + dir + " ['s.py', 'x']\n"
	if len(res.Cells) != 2 || res.Cells[0].Status != StatusError || !strings.Contains(c.Output(), want) {
		t.Fatalf("result %+v, output %q; want the first cell refused and the second to print %q", res, c.Output(), want)
	}
}
