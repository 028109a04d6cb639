package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/evalhost/evalhost/internal/trustdir"
)

// Limits of what evalhost reads whole into memory: a script or cell text
// (run FILE|-, -c is bounded by the OS), nb apply and edit text, and a
// notebook (which keeps its images inline, hence the larger bound).
const (
	maxScriptBytes   = 64 << 20
	maxNotebookBytes = 256 << 20
)

// errTooLarge is matched by a read that hit its limit.
var errTooLarge = errors.New("input too large")

// readBounded reads name ("-" is stdin) whole, refusing more than limit
// bytes with an error that names the input and the limit, so that
// /dev/zero or `yes |` ends with a message instead of running out of memory.
// Its errors name the input as a person gave it ("cannot open x.py: no such
// file or directory"), not as Go's os calls print them, and unwrap to the
// cause (fs.ErrNotExist...).
func readBounded(name string, stdin io.Reader, limit int64) ([]byte, error) {
	var r io.Reader
	label := name
	if name == "-" {
		if stdin == nil {
			return nil, errors.New("- (standard input) is not read here: give a file's path")
		}
		r, label = stdin, "stdin"
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, namedError("cannot open", name, err)
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, namedError("cannot read", label, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: %s is larger than %d MiB, the most evalhost reads", errTooLarge, label, limit>>20)
	}
	return data, nil
}

// namedError is what (cannot open, cannot read) went wrong with the input
// name, and why: an *fs.PathError's cause without its Go operation ("open
// x.py: ..."), which the user did not ask for.
func namedError(what, name string, err error) error {
	cause := err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		cause = pe.Err
	}
	return fmt.Errorf("%s %s: %w", what, trustdir.Shown(name), &wrapped{cause.Error(), err})
}

// wrapped prints text and unwraps to err, so errors.Is(err, fs.ErrNotExist)
// holds through namedError.
type wrapped struct {
	text string
	err  error
}

func (w *wrapped) Error() string { return w.text }

func (w *wrapped) Unwrap() error { return w.err }
