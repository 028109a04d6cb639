package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/notebook"
	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

const nbRunUsage = `Usage: evalhost nb run FILE [-o OUT | --inplace] [flags]

Runs the notebook's code cells in order in a fresh session (cwd: the
notebook's directory) and writes their outputs and execution counts back as
nbclient does. Markdown and raw cells are untouched. Without -o or --inplace
the result goes to FILE's name with ".nbconvert.ipynb", as nbconvert names it.
A cell that fails stops the run (unless --allow-errors); the notebook is
still written with every output produced so far.
`

type nbRunFlags struct {
	out         string
	inplace     bool
	allowErrors bool
	timeout     int
	cells       string
	python      string
	cwd         string
	json        bool
	ipython     bool
	backendFlags
}

// nbExecute is "evalhost nb run".
func nbExecute(args []string, stdout, stderr io.Writer) int {
	var f nbRunFlags
	fs := pflag.NewFlagSet("nb run", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintf(stderr, "%s\nFlags:\n%s", nbRunUsage, fs.FlagUsages()) }
	fs.StringVarP(&f.out, "output", "o", "", "write the executed notebook here")
	fs.BoolVar(&f.inplace, "inplace", false, "overwrite FILE with the executed notebook")
	fs.BoolVar(&f.allowErrors, "allow-errors", false, "keep running after a cell fails (its error is in its outputs)")
	fs.IntVar(&f.timeout, "timeout", 30, "seconds per cell, clamped to 1..600")
	fs.StringVar(&f.cells, "cells", "", "only these code cells, by 0-based index: 2,5-7 (others keep their outputs)")
	fs.StringVar(&f.python, "python", "", "python interpreter (default: venv of the notebook's directory, then python3)")
	fs.StringVar(&f.cwd, "cwd", "", "working directory (default: the notebook's directory)")
	fs.BoolVar(&f.json, "json", false, "print a JSON summary of every executed cell")
	f.backendFlags.register(fs)
	fs.BoolVar(&f.ipython, "ipython", false, "run cells through IPython's InteractiveShell")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() != 1 || (f.inplace && f.out != "") {
		fmt.Fprintf(stderr, "evalhost nb run: want one notebook FILE and at most one of -o and --inplace\n")
		return exitUsage
	}
	path := fs.Arg(0)
	orig, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "evalhost nb run: read notebook: %v\n", err)
		return exitFailed
	}
	nb, err := notebook.Parse(orig)
	if err != nil {
		fmt.Fprintf(stderr, "evalhost nb run: %s: %v\n", path, err)
		return exitFailed
	}
	if lang := nb.Language(); !isPythonLanguage(lang) {
		fmt.Fprintf(stderr, "evalhost nb run: %s: its kernel language is %s (in its metadata); evalhost runs Python cells only, so it was left unchanged\n", path, lang)
		return exitFailed
	}
	selected, err := selectCodeCells(nb, f.cells)
	if err != nil {
		fmt.Fprintf(stderr, "evalhost nb run: %v\n", err)
		return exitUsage
	}
	out := f.out
	converted := strings.TrimSuffix(path, ".ipynb") + ".nbconvert.ipynb"
	switch {
	case f.inplace:
		out = path
	case out == "":
		out = converted
	}
	res, err := executeNotebook(nb, selected, path, f)
	if err != nil {
		fmt.Fprintf(stderr, "evalhost nb run: %v\n", err)
		return exitFailed
	}
	// Overwriting the notebook after someone changed it while the cells ran
	// (an edit, another run) would silently undo that change.
	if now, err := os.ReadFile(path); err == nil && !bytes.Equal(now, orig) && sameFile(path, out) {
		msg := fmt.Sprintf("%s changed on disk while its cells ran; not overwriting it, which would undo that change", path)
		if err := nb.Save(converted); err != nil {
			fmt.Fprintf(stderr, "evalhost nb run: %s; the executed notebook was not written: %v\n", msg, err)
		} else {
			fmt.Fprintf(stderr, "evalhost nb run: %s; the executed notebook is in %s\n", msg, converted)
		}
		return exitFailed
	}
	if err := nb.Save(out); err != nil {
		fmt.Fprintf(stderr, "evalhost nb run: %v\n", err)
		return exitFailed
	}
	reportNotebookRun(stdout, stderr, f.json, selected, res, out)
	return exitCode(res, false)
}

// isPythonLanguage accepts a notebook language nb run can execute; none
// named counts as Python.
func isPythonLanguage(lang string) bool {
	lang = strings.ToLower(lang)
	return lang == "" || strings.HasPrefix(lang, "python") || strings.HasPrefix(lang, "ipython")
}

// sameFile reports whether a and b name the same existing file.
func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// selectCodeCells lists the code cells to run, all of them by default.
// Blank code cells are left as they are, as nbclient skips them: running
// them would take execution counts nbclient does not.
func selectCodeCells(nb *notebook.Notebook, spec string) ([]int, error) {
	var code []int
	for _, c := range nb.Cells() {
		if c.Type == notebook.Code {
			code = append(code, c.Index)
		}
	}
	blank := func(i int) bool { return strings.TrimSpace(nb.Cell(i).Source) == "" }
	if spec == "" {
		return slices.DeleteFunc(code, blank), nil
	}
	want, err := parseCellRanges(spec, nb.Len())
	if err != nil {
		return nil, err
	}
	var out []int
	for _, i := range want {
		if !slices.Contains(code, i) {
			return nil, fmt.Errorf("--cells: cell %d is a %s cell, not code", i, nb.Cell(i).Type)
		}
		if !blank(i) {
			out = append(out, i)
		}
	}
	return out, nil
}

// parseCellRanges reads "2,5-7" as sorted, distinct 0-based cell indexes.
func parseCellRanges(spec string, count int) ([]int, error) {
	seen := map[int]bool{}
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
			return nil, fmt.Errorf("--cells %q: want 0-based indexes and ranges like 2,5-7", part)
		}
		if b >= count {
			return nil, fmt.Errorf("--cells %q: the notebook has cells 0..%d", part, count-1)
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
	return out, nil
}

// executeNotebook runs the selected cells in one fresh session and records
// their outputs into nb.
func executeNotebook(nb *notebook.Notebook, selected []int, path string, f nbRunFlags) (sessions.Result, error) {
	cwd := f.cwd
	if cwd == "" {
		cwd = filepath.Dir(path)
	}
	home := evalhostHome()
	starters, err := f.starters(home)
	if err != nil {
		return sessions.Result{}, err
	}
	reg := sessions.New(sessions.Config{
		Home:     home,
		Starters: starters,
		Python:   f.python,
		// Notebooks keep images inline, as Jupyter writes them.
		Sink: streamsink.Options{InlineLimit: -1, Store: artifactStore(home)},
	})
	defer reg.Close()
	req := sessions.Request{Session: "nb:" + path, Cwd: cwd, Mode: sessions.ModePerCall,
		KeepGoing: f.allowErrors, IPython: f.ipython}
	for _, i := range selected {
		req.Cells = append(req.Cells, sessions.Cell{Language: sessions.LangPython, Code: nb.Cell(i).Source,
			Timeout: time.Duration(f.timeout) * time.Second})
	}
	if len(req.Cells) == 0 {
		return sessions.Result{Status: sessions.StatusOK, FailedCell: -1}, nil
	}
	rec := notebook.NewRecorder(nb)
	current := -1
	var recErr error
	var python string // the interpreter's version, from its ready frame
	emit := func(cell int, fr frames.Frame) {
		if fr.Type == frames.TypeReady {
			if python == "" {
				python = fr.Python
			}
			return
		}
		if cell != current {
			current = cell
			if err := rec.Start(selected[cell]); err != nil && recErr == nil {
				recErr = err
			}
		}
		if err := rec.Add(fr); err != nil && recErr == nil {
			recErr = err
		}
	}
	req.OnCellEnd = func(res sessions.CellResult) {
		if res.Status == sessions.StatusOK || res.Status == sessions.StatusSkipped || res.Status == sessions.StatusError {
			return
		}
		// A cell stopped from outside keeps its partial output plus an
		// error output saying why, as nbclient records a timeout.
		emit(res.Index, frames.Frame{Type: frames.TypeError, Ename: cellEndName(res.Status),
			Evalue: cellEndMessage(res), Traceback: []string{cellEndName(res.Status) + ": " + cellEndMessage(res)}})
		rec.Flush()
	}
	res, err := reg.Eval(context.Background(), req, emit)
	rec.Flush()
	if python != "" {
		// As nbclient does with the kernel's kernel_info_reply.
		nb.SetLanguageInfo(notebook.PythonLanguageInfo(python))
	}
	if err == nil {
		err = recErr
	}
	return res, err
}

func cellEndName(s sessions.Status) string {
	switch s {
	case sessions.StatusTimeout:
		return "CellTimeoutError"
	case sessions.StatusCancelled:
		return "CellCancelledError"
	default:
		return "DeadKernelError"
	}
}

func cellEndMessage(res sessions.CellResult) string {
	if res.Message != "" {
		return res.Message
	}
	if res.Status == sessions.StatusTimeout {
		return "the cell timed out"
	}
	return string(res.Status)
}

func reportNotebookRun(stdout, stderr io.Writer, asJSON bool, selected []int, res sessions.Result, out string) {
	if asJSON {
		type cell struct {
			sessions.CellResult
			NotebookCell int `json:"notebookCell"`
		}
		var cells []cell
		for i, c := range res.Cells {
			cells = append(cells, cell{c, selected[i]})
		}
		newJSONRenderer(stdout).line(map[string]any{"status": res.Status, "output": out, "cells": cells,
			"failedCell": notebookIndex(selected, res.FailedCell)})
		return
	}
	for i, c := range res.Cells {
		if c.Status != sessions.StatusOK {
			fmt.Fprintf(stderr, "cell %d: %s\n", selected[i], strings.TrimSpace(string(c.Status)+" "+c.Message))
		}
	}
	fmt.Fprintf(stdout, "ran %d code cells (%s); wrote %s\n", len(res.Cells), res.Status, out)
}

func notebookIndex(selected []int, i int) int {
	if i < 0 || i >= len(selected) {
		return -1
	}
	return selected[i]
}
