package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/evalhost/evalhost/notebook"
)

// notebookSaver writes an executed notebook as its run goes: after every
// cell, atomically (a temp file in the same directory renamed over the
// target, the target's mode kept), so that whatever ends the run leaves a
// valid notebook holding every cell that finished. When the target is the
// input and someone changes the input during the run (an edit, another
// run), it is not overwritten, which would undo that change: the executed
// notebook goes to FILE.nbconvert.ipynb instead and diverted is set.
type notebookSaver struct {
	input, out, converted string
	sameAsInput           bool
	expect                []byte // what the input holds unless someone else changed it
	diverted              bool
}

func newNotebookSaver(input, out string, inplace bool, orig []byte) *notebookSaver {
	converted := strings.TrimSuffix(input, ".ipynb") + ".nbconvert.ipynb"
	switch {
	case inplace:
		out = input
	case out == "":
		out = converted
	}
	return &notebookSaver{input: input, out: out, converted: converted, sameAsInput: sameFile(input, out), expect: orig}
}

// written is where the notebook is (last) written.
func (s *notebookSaver) written() string {
	if s.diverted {
		return s.converted
	}
	return s.out
}

// progress writes nb after a cell. It is not fsynced (an fsync per cell
// cost more than the cells of a small notebook): it guards against
// evalhost's death, and finish's write syncs. Its error is not reported:
// finish reports its own.
func (s *notebookSaver) progress(nb *notebook.Notebook) {
	data := nb.Bytes()
	_ = s.write(data, func(target string) error { return writeUnsynced(target, data) })
}

// finish writes nb validated and synced (notebook.Save).
func (s *notebookSaver) finish(nb *notebook.Notebook) error {
	return s.write(nb.Bytes(), nb.Save)
}

func (s *notebookSaver) write(data []byte, save func(target string) error) error {
	if s.sameAsInput && !s.diverted {
		if now, err := os.ReadFile(s.input); err == nil && !bytes.Equal(now, s.expect) {
			s.diverted = true
		}
	}
	err := save(s.written())
	if err == nil && s.sameAsInput && !s.diverted {
		s.expect = data
	}
	return err
}

// writeUnsynced replaces path with data as notebook.WriteFile does (a
// symlink written through, the mode kept, a read-only file refused, a temp
// file in the same directory renamed over it) but without fsync.
func writeUnsynced(path string, data []byte) (err error) {
	if target, linkErr := filepath.EvalSymlinks(path); linkErr == nil {
		path = target
	}
	perm := os.FileMode(0o644)
	if st, statErr := os.Stat(path); statErr == nil {
		perm = st.Mode().Perm()
		if !st.Mode().IsRegular() || perm&0o222 == 0 {
			return fmt.Errorf("write notebook %s: not a writable regular file", path)
		}
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write notebook %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write notebook %s: %w", path, err)
	}
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("write notebook %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write notebook %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write notebook %s: %w", path, err)
	}
	return nil
}

// sameFile reports whether a and b name the same existing file.
func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}
