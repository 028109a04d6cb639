package notebook

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/evalhost/evalhost/internal/plural"
	"github.com/evalhost/evalhost/internal/trustdir"
)

// Sentinel errors callers branch on; the typed errors below match them.
var (
	// ErrInvalid: the file is not a valid notebook (bad JSON or structure).
	ErrInvalid = errors.New("invalid notebook")
	// ErrBadText: the cell-marked text cannot be applied.
	ErrBadText = errors.New("invalid notebook text")
	// ErrIndex: a cell index is out of range.
	ErrIndex = errors.New("cell index out of range")
	// ErrBadLines: a line selector is malformed or out of range.
	ErrBadLines = errors.New("bad line selector")
	// ErrReadOnly: the cell is of a type this package does not know, so it
	// cannot be edited (a *ReadOnlyCellError).
	ErrReadOnly = errors.New("read-only cell")
	// ErrConflict: the file changed on disk after it was read; nothing was
	// written (a *ConflictError).
	ErrConflict = errors.New("notebook changed on disk")
	// ErrLocked: another evalhost kept the notebook's lock until the
	// caller's context ended (a *LockedError).
	ErrLocked = errors.New("notebook is locked")
	// ErrTooLarge: a file past MaxFileBytes, refused rather than read whole
	// (or written, since it could not be read back), or a notebook grown
	// past MaxCells.
	ErrTooLarge = errors.New("notebook file too large")
)

// SyntaxError is malformed JSON, located by line and column (1-based).
type SyntaxError struct {
	Line, Column int
	Offset       int // byte offset
	Msg          string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid notebook JSON at line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

func (e *SyntaxError) Unwrap() error { return ErrInvalid }

// StructureError is valid JSON that is not a valid notebook. Cell is the
// cell index, or -1 when the problem is at notebook level.
type StructureError struct {
	Cell  int
	Field string // the offending field, e.g. "source"; may be empty
	Msg   string
}

func (e *StructureError) Error() string {
	where := "notebook"
	if e.Cell >= 0 {
		where = fmt.Sprintf("cell %d", e.Cell)
	}
	if e.Field != "" {
		where += fmt.Sprintf(": field %q", e.Field)
	}
	return fmt.Sprintf("invalid notebook: %s: %s", where, e.Msg)
}

func (e *StructureError) Unwrap() error { return ErrInvalid }

// TextError is a problem in cell-marked text, on a 1-based line.
type TextError struct {
	Line int
	Msg  string
}

func (e *TextError) Error() string {
	return fmt.Sprintf("invalid notebook text: line %d: %s", e.Line, e.Msg)
}

func (e *TextError) Unwrap() error { return ErrBadText }

// IndexError is a cell index outside the valid range [0, Max].
type IndexError struct {
	Index int
	Max   int // highest valid index; -1 when none is valid
	Cells int // cells in the notebook
	What  string
}

func (e *IndexError) Error() string {
	if e.Max < 0 {
		return fmt.Sprintf("%s: cell %d is out of range: the notebook has no cells", e.What, e.Index)
	}
	if e.Max == 0 {
		return fmt.Sprintf("%s: cell %d is out of range: the notebook has %s, the only valid index is 0",
			e.What, e.Index, plural.Of(e.Cells, "cell"))
	}
	return fmt.Sprintf("%s: cell %d is out of range: the notebook has %s, valid indexes are 0-%d",
		e.What, e.Index, plural.Of(e.Cells, "cell"), e.Max)
}

func (e *IndexError) Unwrap() error { return ErrIndex }

// ReadOnlyCellError is an edit of a cell whose type is not code, markdown
// or raw: a type from a newer notebook format, which is kept as it is.
type ReadOnlyCellError struct {
	Index int
	Type  CellType
}

func (e *ReadOnlyCellError) Error() string {
	return fmt.Sprintf("cell %d is a %q cell, a type evalhost does not know (from a newer notebook format), so it is read-only: edit it in Jupyter, or delete it", e.Index, e.Type)
}

func (e *ReadOnlyCellError) Unwrap() error { return ErrReadOnly }

// FileError is a notebook file that could not be opened or read, said as
// the CLI says it of any file ("cannot open x.ipynb: no such file or
// directory"; cmd/evalhost makes one for a script it cannot read): what
// went wrong with the named file, not the Go call that failed. It matches
// Err, and so fs.ErrNotExist and the like.
type FileError struct {
	Op   string // "open" or "read"
	Path string // as given; the message prints it by trustdir.Shown
	Err  error
	// Dangling is where Path, a symlink, points when that does not exist
	// (OpenError): "no such file" of a name ls lists misleads.
	Dangling string
}

// OpenError is the *FileError of a failed open of path, saying where
// path points when it is a symlink to nothing.
func OpenError(path string, err error) *FileError {
	fe := &FileError{Op: "open", Path: path, Err: err}
	if errors.Is(err, fs.ErrNotExist) {
		fe.Dangling, _ = os.Readlink(path) // "" for what is no symlink
	}
	return fe
}

func (e *FileError) Error() string {
	if e.Dangling != "" {
		return fmt.Sprintf("cannot %s %s: it is a symlink to %s, which does not exist: point the link at the file, or remove it",
			e.Op, trustdir.Shown(e.Path), trustdir.Shown(e.Dangling))
	}
	cause := e.Err
	var pe *fs.PathError
	if errors.As(cause, &pe) {
		cause = pe.Err // it names the path and the call: the message does
	}
	return fmt.Sprintf("cannot %s %s: %v", e.Op, trustdir.Shown(e.Path), cause)
}

func (e *FileError) Unwrap() error { return e.Err }
