package nbrun

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/evalhost/evalhost/internal/trustdir"
	"github.com/evalhost/evalhost/notebook"
	"github.com/evalhost/evalhost/sessions"
)

// ErrCellSpec is matched by a [*CellSpecError].
var ErrCellSpec = errors.New("bad cell selection")

// CellSpecError is a bad cell selection: a malformed spec, an index past
// the notebook's end, or a cell that is not code.
type CellSpecError struct{ Msg string }

func (e *CellSpecError) Error() string { return e.Msg }
func (e *CellSpecError) Unwrap() error { return ErrCellSpec }

func specError(format string, a ...any) error { return &CellSpecError{Msg: fmt.Sprintf(format, a...)} }

// ErrLanguage is matched by a [*LanguageError].
var ErrLanguage = errors.New("not a Python notebook")

// LanguageError is a notebook whose kernel language is not Python.
type LanguageError struct{ Language string }

func (e *LanguageError) Error() string {
	return fmt.Sprintf("its kernel language is %s (in its metadata); evalhost runs Python cells only", trustdir.Shown(e.Language))
}

func (e *LanguageError) Unwrap() error { return ErrLanguage }

// CheckLanguage refuses a notebook of another kernel language; a notebook
// that names none counts as Python.
func CheckLanguage(nb *notebook.Notebook) error {
	lang := nb.Language()
	l := strings.ToLower(lang)
	if l == "" || strings.HasPrefix(l, "python") || strings.HasPrefix(l, "ipython") {
		return nil
	}
	return &LanguageError{Language: lang}
}

// The cell tags nbclient acts on (and so papermill and jupyter-book): a
// cell tagged raises-exception may raise without failing the run, one
// tagged skip-execution is not run.
const (
	TagRaisesException = "raises-exception"
	TagSkipExecution   = "skip-execution"
)

// ExpectedError says whether status, a result of the notebook's cell i,
// is an exception the cell was tagged to raise (TagRaisesException): its
// result says error, but it does not fail the run.
func ExpectedError(nb *notebook.Notebook, i int, status sessions.Status) bool {
	return status == sessions.StatusError && raisesException(nb, i)
}

// raisesException says whether the notebook's cell i is tagged to raise.
func raisesException(nb *notebook.Notebook, i int) bool {
	return slices.Contains(nb.Tags(i), TagRaisesException)
}

// SelectCodeCells lists the code cells to run: those spec names ("2,5-7",
// 0-based notebook indexes, as nb view numbers every cell: a range's
// markdown and raw cells are passed over, one named alone is an error), or
// every code cell when spec is "". Blank
// code cells are left out, as nbclient skips them: running them would take
// execution counts nbclient does not; so are cells tagged skip-execution,
// which nbclient skips too.
func SelectCodeCells(nb *notebook.Notebook, spec string) ([]int, error) {
	var code []int
	for _, c := range nb.Cells() {
		if c.Type == notebook.Code {
			code = append(code, c.Index)
		}
	}
	blank := func(i int) bool {
		return strings.TrimFunc(nb.Cell(i).Source, pythonSpace) == "" || slices.Contains(nb.Tags(i), TagSkipExecution)
	}
	if spec == "" {
		return slices.DeleteFunc(code, blank), nil
	}
	want, single, err := parseCellSpec(spec, nb.Len())
	if err != nil {
		return nil, err
	}
	var out []int
	for _, i := range want {
		if !slices.Contains(code, i) {
			if !single[i] {
				continue // a range spans prose: its code cells are meant
			}
			return nil, specError("cell %d is a %s cell, not code", i, nb.Cell(i).Type)
		}
		if !blank(i) {
			out = append(out, i)
		}
	}
	return out, nil
}

// pythonSpace is Python's str.isspace(), which nbclient's blank test
// (source.strip()) uses: Go's whitespace and the separators \x1c-\x1f.
func pythonSpace(r rune) bool { return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f }

// ParseCellRanges reads "2,5-7" as sorted, distinct 0-based cell indexes
// below count.
func ParseCellRanges(spec string, count int) ([]int, error) {
	out, _, err := parseCellSpec(spec, count)
	return out, err
}

// parseCellSpec is ParseCellRanges that also says which cells were named
// by themselves ("2"), not only within a range ("5-7").
func parseCellSpec(spec string, count int) ([]int, map[int]bool, error) {
	seen, single := map[int]bool{}, map[int]bool{}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, errA := strconv.Atoi(lo)
		b := a
		var errB error
		if isRange {
			b, errB = strconv.Atoi(hi)
		}
		if errA != nil || errB != nil || a < 0 || b < a {
			return nil, nil, specError("%q: want 0-based indexes and ranges like 2,5-7", part)
		}
		if b >= count {
			return nil, nil, specError("%q: the notebook has cells 0..%d", part, count-1)
		}
		if !isRange {
			single[a] = true
		}
		for i := a; i <= b; i++ {
			seen[i] = true
		}
	}
	out := make([]int, 0, len(seen))
	for i := range seen {
		out = append(out, i)
	}
	slices.Sort(out)
	return out, single, nil
}
