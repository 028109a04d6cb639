package main

import (
	"bytes"
	"os"
	"strings"

	"github.com/evalhost/evalhost/notebook"
)

// notebookSaver writes an executed notebook as its run goes, atomically
// (notebook.WriteFile: a temp file in the same directory, renamed over the
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

// save writes nb; final also validates it (notebook.Save). An error of an
// intermediate save is not returned: the final save reports its own.
func (s *notebookSaver) save(nb *notebook.Notebook, final bool) error {
	if s.sameAsInput && !s.diverted {
		if now, err := os.ReadFile(s.input); err == nil && !bytes.Equal(now, s.expect) {
			s.diverted = true
		}
	}
	target := s.written()
	data := nb.Bytes()
	var err error
	if final {
		err = nb.Save(target)
	} else {
		err = notebook.WriteFile(target, data)
	}
	if err == nil && s.sameAsInput && !s.diverted {
		s.expect = data
	}
	return err
}

// sameFile reports whether a and b name the same existing file.
func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}
