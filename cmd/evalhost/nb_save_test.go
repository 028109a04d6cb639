package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/notebook"
)

func savedNotebook(t *testing.T, path, source string) (*notebook.Notebook, []byte) {
	t.Helper()
	nb := notebook.New()
	if err := nb.Insert(0, notebook.Code, source); err != nil {
		t.Fatal(err)
	}
	if err := nb.Save(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	nb, err = notebook.ParseFile(path, data)
	if err != nil {
		t.Fatal(err)
	}
	return nb, data
}

// Cells are named by notebook index in the saver's messages, as in the
// run's "cell N: error" lines and nb view's "cell:N".
//
// A progress save takes the notebook's lock: while another evalhost
// process holds it the save gives up and the file keeps what it had.
func TestSaverTakesTheLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nb.ipynb")
	nb, orig := savedNotebook(t, path, "1")
	lk, err := notebook.Lock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	s := newNotebookSaver(path, "", true)
	var warned []string
	s.warn = func(msg string) { warned = append(warned, msg) }
	nb.Edit(0, "2")
	s.progress(0, nb)
	s.progress(1, nb) // the same failure is said once
	if now, _ := os.ReadFile(path); string(now) != string(orig) {
		t.Fatal("a progress save wrote the notebook while another held its lock")
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "could not save the notebook after cell 0") || !strings.Contains(warned[0], "holds no cell of this run") {
		t.Fatalf("warnings %q; want one, at once, saying what the file holds", warned)
	}
	lk.Unlock()
	if err := s.finish(nb); err != nil {
		t.Fatal(err)
	}
	if now, _ := os.ReadFile(path); !strings.Contains(string(now), `"2"`) {
		t.Fatalf("after the lock was released the save did not write:\n%s", now)
	}
}

// A target changed on disk during the run is not overwritten: the input
// diverts the notebook to FILE.nbconvert.ipynb, another target to a new
// file beside it.
func TestSaverDivertsFromAChangedTarget(t *testing.T) {
	tests := []struct {
		name    string
		inplace bool
		remove  bool // the target is removed, not changed
		want    func(dir string, got string) bool
	}{
		{"inplace", true, false, func(dir, got string) bool { return got == filepath.Join(dir, "nb.nbconvert.ipynb") }},
		{"inplace, removed", true, true, func(dir, got string) bool { return got == filepath.Join(dir, "nb.nbconvert.ipynb") }},
		{"output", false, false, func(dir, got string) bool {
			return filepath.Dir(got) == dir && strings.HasPrefix(filepath.Base(got), "out.evalhost-") && strings.HasSuffix(got, ".ipynb")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "nb.ipynb")
			nb, _ := savedNotebook(t, path, "1")
			out := ""
			if !tt.inplace {
				out = filepath.Join(dir, "out.ipynb")
			}
			s := newNotebookSaver(path, out, tt.inplace)
			s.progress(0, nb) // the first write of -o OUT
			target := s.written()
			edit := []byte(`{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}`)
			if err := os.WriteFile(target, edit, 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.remove {
				if err := os.Remove(target); err != nil {
					t.Fatal(err)
				}
			}
			nb.Edit(0, "ran")
			s.progress(1, nb)
			if err := s.finish(nb); err != nil {
				t.Fatal(err)
			}
			if now, err := os.ReadFile(target); tt.remove && err == nil || !tt.remove && string(now) != string(edit) {
				t.Fatalf("the changed target was overwritten:\n%s", now)
			}
			if s.changed != target || !tt.want(dir, s.diverted) || s.written() != s.diverted {
				t.Fatalf("changed %q diverted %q", s.changed, s.diverted)
			}
			if got, _ := os.ReadFile(s.diverted); !strings.Contains(string(got), `"ran"`) {
				t.Fatalf("the diverted notebook lacks the run:\n%s", got)
			}
		})
	}
}

// A notebook whose target cannot be written at the end (a full disk) is
// written to the temp directory instead, and the message says where and
// what the target holds.
func TestSaverRescuesToTheTempDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := t.TempDir()
	nb, _ := savedNotebook(t, filepath.Join(dir, "nb.ipynb"), "print(1)")
	s := newNotebookSaver(filepath.Join(dir, "nb.ipynb"), filepath.Join(dir, "gone", "out.ipynb"), false)
	s.saved = 2
	msg := s.rescue(nb)
	matches, _ := filepath.Glob(filepath.Join(tmp, "out.evalhost-*.ipynb"))
	if len(matches) != 1 || !strings.Contains(msg, "written to "+matches[0]) || !strings.Contains(msg, "holds the outputs up to cell 1") {
		t.Fatalf("rescue said %q; files %v", msg, matches)
	}
	if _, err := notebook.Load(matches[0]); err != nil {
		t.Fatalf("the rescued notebook does not load: %v", err)
	}
}

// A save as a cell starts writes the notebook as progress does, but the
// file then holds the outputs up to the last cell that ended, not the one
// starting: what a failure's message and the rescue say.
func TestSaverStartSaveHoldsTheEndedCells(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nb.ipynb")
	nb, _ := savedNotebook(t, path, "1")
	s := newNotebookSaver(path, "", true)
	var warned []string
	s.warn = func(msg string) { warned = append(warned, msg) }
	s.progress(0, nb)
	lk, err := notebook.Lock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.started(2, nb)
	if len(warned) != 1 || !strings.Contains(warned[0], "could not save the notebook as cell 2 started") ||
		!strings.Contains(warned[0], "holds the outputs up to cell 0") {
		t.Fatalf("warnings %q; want one saying what the file holds", warned)
	}
	lk.Unlock()
	nb.Edit(0, "started")
	s.started(2, nb)
	if now, _ := os.ReadFile(path); !strings.Contains(string(now), `"started"`) {
		t.Fatalf("the start save did not write:\n%s", now)
	}
	if got := s.holds(); !strings.Contains(got, "holds the outputs up to cell 0") {
		t.Fatalf("after a start save: %q, want the outputs up to cell 0", got)
	}
}

// The copy an --inplace run diverts to (FILE.nbconvert.ipynb) holds the
// notebook's outputs, so other users may read it no more than they may
// read the notebook: a private (0600) notebook's copy is 0600, made new or
// written over an earlier, wider one.
func TestSaverDivertedCopyIsNoWiderThanTheNotebook(t *testing.T) {
	tests := []struct {
		name     string
		existing os.FileMode // the earlier FILE.nbconvert.ipynb's mode; 0: none
		want     os.FileMode
	}{
		{"new copy", 0, 0o600},
		{"earlier copy 0644", 0o644, 0o600},
		{"earlier copy 0400", 0o400, 0o400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "nb.ipynb")
			nb, _ := savedNotebook(t, path, "1")
			if err := os.Chmod(path, 0o600); err != nil {
				t.Fatal(err)
			}
			converted := filepath.Join(dir, "nb.nbconvert.ipynb")
			if tt.existing != 0 {
				if err := os.WriteFile(converted, []byte("{}"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(converted, tt.existing); err != nil {
					t.Fatal(err)
				}
			}
			s := newNotebookSaver(path, "", true)
			edit := []byte(`{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}`)
			if err := os.WriteFile(path, edit, 0o600); err != nil {
				t.Fatal(err)
			}
			nb.Edit(0, "ran")
			err := s.finish(nb)
			if tt.existing&0o200 == 0 && tt.existing != 0 {
				if err == nil {
					t.Fatal("a read-only earlier copy was written over")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.diverted != converted {
				t.Fatalf("diverted to %q, want %q", s.diverted, converted)
			}
			st, err := os.Stat(converted)
			if err != nil {
				t.Fatal(err)
			}
			if got := st.Mode().Perm(); got != tt.want {
				t.Fatalf("the diverted copy of a 0600 notebook has mode %04o, want %04o", got, tt.want)
			}
		})
	}
}

// A diverted save that fails leaves no empty FILE.nbconvert.ipynb made for
// it, which Jupyter would show as a broken notebook; the next save diverts
// again.
func TestSaverFailedDivertLeavesNoEmptyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "nb.ipynb")
	nb, _ := savedNotebook(t, path, "1")
	converted := filepath.Join(dir, "nb.nbconvert.ipynb")
	lk, err := notebook.Lock(context.Background(), converted)
	if err != nil {
		t.Fatal(err)
	}
	s := newNotebookSaver(path, "", true)
	s.warn = func(string) {}
	if err := os.WriteFile(path, []byte(`{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}`), 0o644); err != nil {
		t.Fatal(err)
	}
	nb.Edit(0, "ran")
	s.progress(0, nb)
	if _, err := os.Stat(converted); err == nil {
		t.Fatalf("a failed diverted save left %s", converted)
	}
	lk.Unlock()
	if err := s.finish(nb); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(converted); !strings.Contains(string(got), `"ran"`) {
		t.Fatalf("the next save did not divert:\n%s", got)
	}
}

// With papermill's metadata each cell's start is saved, and that save
// holds the end of the cell before: the end is not written on its own
// (each save writes the whole notebook), unless no cell starts soon after
// it (idle). Whatever ended is on disk by the next start or idle.
func TestSaverLeavesAnEndToTheNextStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nb.ipynb")
	nb, orig := savedNotebook(t, path, "1")
	s := newNotebookSaver(path, "", true)
	s.atStart = true
	read := func() string {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	nb.Edit(0, "ended")
	s.progress(0, nb)
	if read() != string(orig) {
		t.Fatal("a cell's end was saved on its own, before the next cell's start")
	}
	s.started(1, nb)
	if !strings.Contains(read(), `"ended"`) || !strings.Contains(s.holds(), "holds the outputs up to cell 0") {
		t.Fatalf("the next start's save does not hold the ended cell (%s):\n%s", s.holds(), read())
	}
	nb.Edit(0, "idle")
	s.idle(nb)
	if strings.Contains(read(), `"idle"`) {
		t.Fatal("idle saved with no cell ended since the last save")
	}
	s.progress(1, nb)
	s.idle(nb)
	if !strings.Contains(read(), `"idle"`) || !strings.Contains(s.holds(), "holds the outputs up to cell 1") {
		t.Fatalf("idle did not save the ended cell (%s):\n%s", s.holds(), read())
	}
}
