package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/evalhost/evalhost/notebook"
)

// Lock waits for the notebook saver: a progress save gives up soon (the
// next cell's save tries again), the final save waits as long as an edit
// does for a stuck holder.
const (
	progressLockWait = 2 * time.Second
	finalLockWait    = time.Minute
)

// notebookSaver writes an executed notebook as its run goes: after every
// cell, atomically, under the notebook's lock (taken for each write only,
// not while cells run) and checked (notebook.Save's compare-and-save), so
// that whatever ends the run leaves a valid notebook holding every cell
// that finished, and no other edit of the target is undone. When the
// target changes on disk during the run (an edit, another run), the
// executed notebook goes elsewhere and diverted says where: to
// FILE.nbconvert.ipynb when the target was the input, else to a new file
// beside the target.
type notebookSaver struct {
	input, out, converted string
	changed               string // the target that changed on disk, when diverted
	diverted              string // where the notebook goes instead
}

func newNotebookSaver(input, out string, inplace bool) *notebookSaver {
	converted := strings.TrimSuffix(input, ".ipynb") + ".nbconvert.ipynb"
	switch {
	case inplace:
		out = input
	case out == "":
		out = converted
	}
	return &notebookSaver{input: input, out: out, converted: converted}
}

// written is where the notebook is (last) written.
func (s *notebookSaver) written() string {
	if s.diverted != "" {
		return s.diverted
	}
	return s.out
}

// check fails when the target cannot be written (its directory missing or
// not writable, the file read-only, its lock not to be made), so that a run
// is refused before its cells run, not after, when their outputs would be
// lost.
func (s *notebookSaver) check() error {
	return lockedSave(s.out, finalLockWait, notebook.CheckWritable)
}

// progress writes nb after a cell, unsynced (an fsync per cell cost more
// than the cells of a small notebook): it guards against evalhost's
// death, and finish's write syncs. Its error is not reported: finish
// reports its own.
func (s *notebookSaver) progress(nb *notebook.Notebook) {
	_ = s.save(progressLockWait, nb.SaveUnsynced)
}

// finish writes nb validated and synced (notebook.Save).
func (s *notebookSaver) finish(nb *notebook.Notebook) error {
	return s.save(finalLockWait, nb.Save)
}

func (s *notebookSaver) save(wait time.Duration, save func(string) error) error {
	target := s.written()
	err := lockedSave(target, wait, save)
	if !errors.Is(err, notebook.ErrConflict) || s.diverted != "" {
		return err
	}
	s.changed = target
	if s.diverted, err = s.divertTarget(target); err != nil {
		return err
	}
	return lockedSave(s.diverted, wait, save)
}

// divertTarget names where the notebook goes when target changed on disk.
func (s *notebookSaver) divertTarget(target string) (string, error) {
	if sameFile(target, s.input) && !sameFile(s.converted, s.input) {
		return s.converted, nil
	}
	f, err := os.CreateTemp(filepath.Dir(target), strings.TrimSuffix(filepath.Base(target), ".ipynb")+".evalhost-*.ipynb")
	if err != nil {
		return "", fmt.Errorf("%s changed on disk while its cells ran, and no other file could be made for the result: %w", target, err)
	}
	f.Close()
	return f.Name(), nil
}

// lockedSave runs save(path) holding path's notebook lock.
func lockedSave(path string, wait time.Duration, save func(string) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	lk, err := notebook.Lock(ctx, path)
	if err != nil {
		return err
	}
	defer lk.Unlock()
	return save(path)
}

// sameFile reports whether a and b name the same existing file.
func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}
