package faults

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/sessions"
)

// An interpreter that starts but never sends ready fails its cell after the
// start timeout with its stderr in the message; one that dies at start fails
// at once the same way. Either way the process is gone afterwards (the
// harness checks for descendants). Nothing is timed from above, which load
// stretches: the hanging ones sleep far longer than the watchdog, a start
// that ends before its timeout fails from below, and the one that dies has
// a start timeout longer than the watchdog, so a start that waits for it
// rather than noticing the death hangs there.
func TestInterpreterNeverReady(t *testing.T) {
	tests := []struct {
		name         string
		body         string
		want         []string
		startTimeout time.Duration // the request takes at least it, unless beyond the watchdog
	}{
		{"hangs after writing to stderr",
			"echo 'fake runtime: waiting for a licence server' >&2\nexec sleep 1000",
			[]string{"did not become ready", "waiting for a licence server"}, time.Second},
		{"hangs in a child that keeps stderr open",
			"echo 'spawning helper' >&2\nsleep 1000 &\nwait",
			[]string{"did not become ready", "spawning helper"}, time.Second},
		{"exits at start",
			"echo 'ImportError: libpython3.11.so.1.0: cannot open shared object file' >&2\nexit 127",
			[]string{"cannot open shared object file"}, 2 * watchdogAfter},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRegistry(t, sessions.Config{Python: fakePython(t, tc.body), StartTimeout: tc.startTimeout})
			start := time.Now()
			res, c := eval(t, r, context.Background(), sessions.Request{Cells: []sessions.Cell{py("1+1"), py("2+2")}})
			el := time.Since(start)
			cell := res.Cells[0]
			if cell.Status != sessions.StatusError || res.Cells[1].Status != sessions.StatusSkipped {
				t.Fatalf("cells = %+v", res.Cells)
			}
			for _, w := range tc.want {
				if !strings.Contains(cell.Message, w) {
					t.Errorf("message lacks %q:\n%s", w, cell.Message)
				}
			}
			if !strings.Contains(c.text(), cell.Message) {
				t.Errorf("the live stream does not carry the message %q:\n%s", cell.Message, c.text())
			}
			if tc.startTimeout < watchdogAfter && el < tc.startTimeout {
				t.Errorf("failed %v after the request began, before the start timeout (%v) ran out", el, tc.startTimeout)
			}
		})
	}
}

// A missing or unusable interpreter is refused before any cell runs, with
// an error that names the path, says what is wrong and what to do.
func TestBrokenInterpreter(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "python-not-executable")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	crashes := filepath.Join(dir, "python-crashes")
	if err := os.WriteFile(crashes, []byte("#!/bin/sh\necho 'Fatal Python error: init_fs_encoding' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A shim whose child holds its output and never ends: the probe must
	// not wait for the child, and must leave nothing running.
	hangs := filepath.Join(dir, "python-hangs")
	if err := os.WriteFile(hangs, []byte("#!/bin/sh\nsleep 60 &\nwait\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, "python2")
	if err := os.WriteFile(old, []byte("#!/bin/sh\necho \"$0\"; echo 2.7.18\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, python string
		want         []string
	}{
		{"missing", filepath.Join(dir, "no-such-python"), []string{"no-such-python", "not found", "the path given to --python does not exist"}},
		{"not executable", notExec, []string{"python-not-executable", "permission denied"}},
		// What the interpreter said is the clue the user needs.
		{"crashes", crashes, []string{"python-crashes", "does not run", "Fatal Python error: init_fs_encoding"}},
		{"python 2", old, []string{"2.7.18", "too old"}},
		{"hangs", hangs, []string{"python-hangs", "did not answer within 1s", "the interpreter given to --python cannot be used"}},
		{"a directory", dir, []string{dir}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRegistry(t, sessions.Config{Python: tc.python, StartTimeout: time.Second})
			_, err := r.Eval(context.Background(), sessions.Request{Cells: []sessions.Cell{py("1+1")}}, nil)
			if !errors.Is(err, sessions.ErrNoInterpreter) {
				t.Fatalf("err = %v, want ErrNoInterpreter", err)
			}
			t.Logf("%v", err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}
