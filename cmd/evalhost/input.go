package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/evalhost/evalhost/internal/trustdir"
	"github.com/evalhost/evalhost/notebook"
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
// `yes |` ends with a message instead of running out of memory.
// Its errors name the input as a person gave it ("cannot open x.py: no such
// file or directory"), not as Go's os calls print them, and unwrap to the
// cause (fs.ErrNotExist...): notebook's *FileError, the one shape of that
// message, for a script as for a notebook.
//
// A path is read only if it names a regular file (notebook.OpenRegular):
// nb's notebooks, scripts, text and content files and the parameters of
// -f. A FIFO's open waited for a writer for ever (nb apply and edit held
// the notebook's lock meanwhile), a device was read (/dev/null as an
// empty text), a socket said "no such device or address". "-" may be a
// pipe where stdin is read.
func readBounded(name string, stdin io.Reader, limit int64) ([]byte, error) {
	return readInputOpened(name, stdin, limit, notebook.OpenRegular)
}

// readScript is readBounded of run's FILE, which is opened as python3
// opens it: a pipe (bash's <(...), a FIFO) is read, waiting for its
// writer as python3 does; /dev/zero is read up to the limit.
func readScript(name string, stdin io.Reader, limit int64) ([]byte, error) {
	return readInputOpened(name, stdin, limit, func(name string) (*os.File, error) {
		f, err := os.Open(name)
		if err != nil {
			return nil, notebook.OpenError(name, err)
		}
		return f, nil
	})
}

func readInputOpened(name string, stdin io.Reader, limit int64, open func(string) (*os.File, error)) ([]byte, error) {
	var r io.Reader
	label := name
	if name == "-" {
		if stdin == nil {
			return nil, errors.New("- (standard input) is not read here: give a file's path")
		}
		r, label = stdin, "stdin"
	} else {
		f, err := open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, &notebook.FileError{Op: "read", Path: label, Err: err}
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: %s is larger than %d MiB, the most evalhost reads", errTooLarge, trustdir.Shown(label), limit>>20)
	}
	return data, nil
}

// readPiped is readBounded of a file nb only reads, never saves over (a
// cell's text, -f's parameters), which may also be a pipe, as bash's
// <(...) gives (notebook.OpenInput): read to its writer's end. A pipe
// that gives nothing is refused, saying so: nothing wrote to it (a FIFO
// no program has open: its read ends at once), and an empty text would
// have emptied the notebook nb apply replaces with it. Whether it is a
// pipe is the open's own fstat's answer (OpenInput's), not a second stat.
func readPiped(name string, stdin io.Reader, limit int64) ([]byte, error) {
	var pipe bool
	data, err := readInputOpened(name, stdin, limit, func(name string) (f *os.File, err error) {
		f, pipe, err = notebook.OpenInput(name)
		return f, err
	})
	if err == nil && pipe && len(data) == 0 {
		return nil, &notebook.FileError{Op: "read", Path: name, Err: errEmptyPipe}
	}
	return data, err
}

var errEmptyPipe = errors.New("it is a named pipe (FIFO) and nothing wrote to it: start what writes to it first, or give a regular file's path")
