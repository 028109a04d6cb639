package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/evalhost/evalhost/internal/trustdir"
	"github.com/spf13/pflag"

	"github.com/evalhost/evalhost/config"
	"github.com/evalhost/evalhost/internal/plural"
	"github.com/evalhost/evalhost/nbrun"
	"github.com/evalhost/evalhost/notebook"
	"github.com/evalhost/evalhost/params"
	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

const nbRunUsage = `Usage: evalhost nb run FILE [-o OUT | --inplace] [-p NAME VALUE]... [flags]

Runs the notebook's code cells in order in a fresh session (cwd: the
notebook's directory) and writes their outputs and execution counts back as
nbclient does. Markdown and raw cells are untouched. Without -o or --inplace
the result goes to FILE's name with ".nbconvert.ipynb", as nbconvert names it.

FILE may be a Jupytext percent script (.py, with "# %%" cells or Jupytext's
header): it is read into the notebook "jupytext --to ipynb" makes of it
(markdown and raw cells, cell metadata and tags, the header's metadata) and
run as that notebook, which goes to -o OUT; without -o to FILE's name with
".ipynb", the notebook Jupytext pairs with it (as "jupytext --to ipynb
--execute" writes it), only when no such file exists yet. --inplace is
refused: a script holds no outputs.

The result is written (atomically, under the notebook's lock) after every
cell (with papermill's metadata, as each starts, as papermill does: that
write holds the cell before), so whatever ends the run leaves a valid
notebook with every cell that finished; if the target changes on disk meanwhile it is not overwritten and
the result goes to a new file (named on stderr). A cell that fails stops the
run (unless --allow-errors). Cells have no time limit unless --timeout
gives one, as under nbclient and papermill. Ctrl-C (or SIGTERM, SIGHUP) interrupts the
running cell, writes the notebook and exits 130; a second one kills the
interpreter.

Parameters (-p, -r, -f, -y as papermill takes them, quarto's -P) go into a
new cell tagged injected-parameters right after the cell tagged parameters
(at the top when there is none; replacing an earlier injected cell), which
the written notebook keeps. Papermill's execution metadata (times, each
cell's status, the parameters) is written when parameters are given or the
notebook already has it; --papermill-metadata on writes it always, off
removes it.

Exit codes: 0 every cell ok, 1 a cell failed (or the notebook could not be
read or written), 2 usage, 124 a cell timed out, 130 interrupted, 131
Ctrl-\ (SIGQUIT: the interpreter killed at once).
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
	logOutput   bool
	grace       time.Duration
	params      *params.Params
	papermill   papermillMode
	backendFlags
}

// nbExecute is "evalhost nb run".
func nbExecute(args []string, stdout, stderr io.Writer) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "evalhost nb run: "+format+"\n", a...)
		return code
	}
	f, path, code, ok := parseNbRunFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	nb, selected, code, ok := openNbRun(&f, path, stderr)
	if !ok {
		return code
	}
	home, err := config.Home()
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	starters, err := config.Starters(home, f.choice())
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	store, err := config.ArtifactStore(home)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	saver := newNotebookSaver(path, f.out, f.inplace)
	saver.warn = func(msg string) { fmt.Fprintf(stderr, "evalhost nb run: %s\n", msg) }
	if err := saver.check(); err != nil {
		return fail(exitFailed, "%v; no cell was run", err)
	}
	reg := sessions.New(sessions.Config{
		Home:     home,
		Starters: starters,
		Python:   f.python,
		Grace:    f.grace,
		// Notebooks keep images inline and text as the cell wrote it (ANSI
		// colours, "\r\n"), as Jupyter writes them.
		Sink: streamsink.Options{InlineLimit: -1, Verbatim: true, Store: store},
	})
	defer reg.Close()
	writePM, note, err := f.papermill.apply(nb, f.params != nil)
	if err != nil {
		return fail(exitFailed, "%s: remove papermill's metadata: %v", trustdir.Shown(path), err)
	}
	if note != "" {
		fmt.Fprintf(stderr, "evalhost nb run: note: %s\n", note)
	}
	opt := f.runOptions(path, selected, saver.out, writePM)
	opt.OnCellEnd = func(cell int, res sessions.CellResult) {
		// A cell an interrupt came before changed nothing, and the final
		// save follows: a save for each made Ctrl-C of 3,000 cells take 13 s.
		if !res.NotStarted() {
			saver.progress(cell, nb)
		}
	}
	if writePM {
		// As papermill's cell_start saves: the cell's status says running.
		saver.atStart = true
		opt.OnCellStart = func(cell int) { saver.started(cell, nb) }
		opt.OnIdle = func() { saver.idle(nb) }
	}
	if f.logOutput {
		log := &outputLog{w: stderr, last: -1}
		opt.OnFrame, opt.OnCellEnd = log.frame, log.cellEnd(opt.OnCellEnd)
	}
	// A reader of the log or the report that goes away must not kill the
	// run with SIGPIPE: with it notified, such writes fail with EPIPE
	// instead, and the notebook is still run and written.
	defer catchSIGPIPE()()
	ctx, interrupted := interruptible(reg.Kill, interruptOpts{})
	res, err := nbrun.Run(ctx, reg, nb, opt)
	interrupts := interrupted.stop()
	if err != nil && errors.Is(err, sessions.ErrBadRequest) {
		return fail(exitUsage, "%v", err)
	}
	if werr := saver.finish(nb); werr != nil {
		return fail(exitFailed, "%v; %s", werr, saver.rescue(nb))
	}
	noteTooLargeToRead(stderr, saver.written())
	if err != nil {
		return fail(exitFailed, "%v; the notebook keeps what was recorded, in %s", err, trustdir.Shown(saver.written()))
	}
	if saver.diverted != "" {
		return fail(exitFailed, "%s; the executed notebook is in %s: %s", saver.changeSaid(), trustdir.Shown(saver.diverted), saver.changeRemedy())
	}
	reportNotebookRun(stdout, stderr, f.json, res, nb, saver.written(), interrupts > 0)
	return interrupted.exitCode(exitCode(res.Result, interrupts > 0))
}

// openNbRun reads the notebook at path, checks its language and picks the
// cells to run (with the parameters cell f's parameters make); ok is false
// when the command must exit with code, reported on stderr.
func openNbRun(f *nbRunFlags, path string, stderr io.Writer) (nb *notebook.Notebook, selected []int, code int, ok bool) {
	fail := func(code int, format string, a ...any) (*notebook.Notebook, []int, int, bool) {
		fmt.Fprintf(stderr, "evalhost nb run: "+format+"\n", a...)
		return nil, nil, code, false
	}
	orig, err := readBounded(path, nil, maxNotebookBytes)
	if err != nil {
		return fail(exitFailed, "%v", notebookReadError(err, path)) // it names the notebook and the cause
	}
	kind := nbInputKind(path, orig)
	switch kind {
	case inputScript:
		if nb, code, err = scriptNotebook(f, path, orig, stderr); err != nil {
			return fail(code, "%v", err)
		}
	case inputOther:
		return fail(exitUsage, "%s is not a notebook: nb run reads .ipynb notebooks (JSON) and Jupytext percent scripts "+
			"(.py, with \"# %%%%\" cells or Jupytext's header)", trustdir.Shown(path))
	default:
		if nb, err = notebook.ParseFile(path, orig); err != nil {
			return fail(exitFailed, "%v", err)
		}
	}
	if err := nbrun.CheckLanguage(nb); err != nil {
		if kind == inputScript {
			return fail(exitFailed, "%s: %v; nothing was run", trustdir.Shown(path), err)
		}
		return fail(exitFailed, "%s: %v, so it was left unchanged", trustdir.Shown(path), err)
	}
	if selected, err = nbrun.SelectCodeCells(nb, f.cells); err != nil {
		return fail(exitUsage, "--cells %v", err)
	}
	if selected, err = withParams(nb, f.params, path, selected, stderr); err != nil {
		return fail(exitFailed, "%s: %v", trustdir.Shown(path), err)
	}
	return nb, selected, exitOK, true
}

// parseNbRunFlags reads nb run's command line; ok is false when the
// command must exit with code at once (--help, a usage error, reported).
func parseNbRunFlags(args []string, stdout, stderr io.Writer) (f nbRunFlags, path string, code int, ok bool) {
	fs := pflag.NewFlagSet("nb run", pflag.ContinueOnError)
	fs.Usage = func() { fmt.Fprintf(fs.Output(), "%s\nFlags:\n%s", nbRunUsage, fs.FlagUsages()) }
	fs.StringVarP(&f.out, "output", "o", "", "write the executed notebook here")
	fs.BoolVar(&f.inplace, "inplace", false, "overwrite FILE with the executed notebook")
	fs.BoolVar(&f.allowErrors, "allow-errors", false, "keep running after a cell fails (its error is in its outputs)")
	// No limit by default, as nbclient and papermill: notebooks' cells
	// train and load for minutes. The agent's 30 s is run's, serve's, mcp's.
	fs.IntVar(&f.timeout, "timeout", 0, "seconds per cell, 1..600; 0 (the default, as nbclient's and papermill's): no limit")
	fs.StringVar(&f.cells, "cells", "", "only these code cells, by 0-based index: 2,5-7 (others keep their outputs)")
	fs.StringVar(&f.python, "python", "", "python interpreter (default: venv of the notebook's directory, then python3)")
	fs.StringVar(&f.cwd, "cwd", "", "working directory (default: the notebook's directory)")
	fs.BoolVar(&f.json, "json", false, "print a JSON summary of every executed cell")
	f.backendFlags.register(fs)
	fs.BoolVar(&f.ipython, "ipython", false, "run cells through IPython's InteractiveShell")
	fs.DurationVar(&f.grace, "grace", 2*time.Second, "after an interrupt or timeout, how long a cell may take to stop before its interpreter is killed")
	fs.BoolVar(&f.logOutput, "log-output", false, "stream the cells' outputs to stderr as they come, as papermill --log-output does")
	f.papermill = papermillAuto
	fs.Var(&f.papermill, "papermill-metadata", "papermill's execution metadata (metadata.papermill): auto writes it when parameters are given or the notebook already has it, on always, off removes it")
	registerParamFlags(fs)
	usage := func(format string, a ...any) (nbRunFlags, string, int, bool) {
		fmt.Fprintf(stderr, "evalhost nb run: "+format+"\n", a...)
		return f, "", exitUsage, false
	}
	args, paramFlags, err := takeParamFlags(fs, args, false)
	if err != nil {
		return usage("%v", err)
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return f, "", code, false
	}
	if f.params, err = buildParams(paramFlags); err != nil {
		return usage("%v", err)
	}
	if err := refuseNegative(fs, "grace"); err != nil {
		return usage("%v", err)
	}
	if fs.NArg() == 2 && f.out == "" && !f.inplace {
		// papermill IN OUT: the habit of papermill's users.
		return usage("want one notebook FILE: the output goes with -o, not as papermill's second argument: evalhost nb run %s -o %s",
			trustdir.ShellQuote(fs.Arg(0)), trustdir.ShellQuote(fs.Arg(1)))
	}
	if fs.NArg() != 1 || (f.inplace && f.out != "") {
		return usage("want one notebook FILE and at most one of -o and --inplace")
	}
	// papermill's "-" (stdin, stdout): the notebook is saved as cells end,
	// so that an interrupted run keeps them, which needs a file.
	if fs.Arg(0) == "-" || f.out == "-" {
		return usage("- (standard input or output) is not supported: give the notebook's path and -o FILE, which is saved as each cell ends")
	}
	if f.timeout < 0 || f.timeout > int(sessions.MaxTimeout/time.Second) {
		return usage("--timeout %d: want seconds from 1 to 600, or 0 for no limit", f.timeout)
	}
	path = fs.Arg(0)
	if f.cwd == "" {
		f.cwd = filepath.Dir(path)
	} else if err := checkCwdFlag(f.cwd); err != nil {
		return usage("%v", err)
	}
	return f, path, exitOK, true
}

// runOptions are nbrun's options for the flags: out is where the notebook
// goes, which papermill's metadata records when papermill is set.
func (f *nbRunFlags) runOptions(path string, selected []int, out string, papermill bool) nbrun.Options {
	timeout := time.Duration(f.timeout) * time.Second
	if f.timeout == 0 {
		timeout = sessions.NoTimeout
	}
	opt := nbrun.Options{Cells: selected, Session: "nb:" + path, Cwd: f.cwd, Timeout: timeout,
		AllowErrors: f.allowErrors, IPython: f.ipython}
	if papermill {
		opt.Papermill = &nbrun.Papermill{InputPath: path, OutputPath: out, Version: "evalhost " + version}
		if f.params != nil {
			opt.Papermill.Parameters = f.params.Metadata()
		}
	}
	return opt
}

// checkCwdFlag refuses a --cwd that is not a directory before anything
// runs: a usage error, not a failed cell.
func checkCwdFlag(dir string) error {
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		// Not "stat DIR: no such file or directory", the Go call's words.
		return fmt.Errorf("--cwd %s: no such directory", trustdir.Shown(dir))
	}
	if err != nil {
		return fmt.Errorf("--cwd %s: %w", trustdir.Shown(dir), trustdir.ShownError(err))
	}
	if !st.IsDir() {
		return fmt.Errorf("--cwd %s: not a directory", trustdir.Shown(dir))
	}
	return nil
}

// reportNotebookRun says how the run ended: a line per cell that did not
// succeed (a failed cell's traceback under it), then the summary; with
// asJSON, one line with every cell's result.
func reportNotebookRun(stdout, stderr io.Writer, asJSON bool, res nbrun.Result, nb *notebook.Notebook, out string, interrupted bool) {
	if asJSON {
		type cell struct {
			sessions.CellResult
			NotebookCell int `json:"notebookCell"`
		}
		var cells []cell
		for i, c := range res.Cells {
			cells = append(cells, cell{c, res.Notebook[i]})
		}
		newJSONRenderer(stdout).line(map[string]any{"status": res.Status, "output": out, "cells": cells,
			"failedCell": res.FailedCell(), "interrupted": interrupted})
		return
	}
	finished := 0
	for i, c := range res.Cells {
		// An exception a cell tagged raises-exception raised was expected:
		// nbclient and papermill say nothing of it (its outputs have it).
		expected := nb != nil && nbrun.ExpectedError(nb, res.Notebook[i], c.Status)
		if c.Status != sessions.StatusOK && c.Status != sessions.StatusSkipped && !expected &&
			!(interrupted && c.Status == sessions.StatusCancelled && i != res.Result.FailedCell) {
			line := string(c.Status)
			if c.Message != "" {
				line += ": " + messageAfterStatus(c)
			}
			fmt.Fprintf(stderr, "cell %d: %s\n", res.Notebook[i], line)
			if c.Status == sessions.StatusError {
				reportCellError(stderr, nb, res.Notebook[i])
			}
		}
		if c.Status == sessions.StatusOK || c.Status == sessions.StatusError {
			finished++
		}
	}
	if interrupted {
		fmt.Fprintf(stderr, "evalhost nb run: interrupted; wrote %s with the outputs so far (%d of %s finished)\n", trustdir.Shown(out), finished, plural.Of(len(res.Cells), "cell"))
		return
	}
	fmt.Fprintf(stdout, "%s (%s); wrote %s\n", ranSummary(res.Cells), res.Status, trustdir.Shown(out))
}

// ranSummary says how many cells ran and how many were skipped (after a
// failure, a death or a sys.exit()): a skipped cell did not run.
func ranSummary(cells []sessions.CellResult) string {
	skipped := 0
	for _, c := range cells {
		if c.Status == sessions.StatusSkipped {
			skipped++
		}
	}
	ran := len(cells) - skipped
	s := fmt.Sprintf("ran %d code cell", ran)
	if ran != 1 {
		s += "s"
	}
	if skipped > 0 {
		s += fmt.Sprintf(", skipped %d", skipped)
	}
	return s
}

// withParams injects p, when given, and notes (as papermill warns) a
// notebook with no cell tagged parameters.
func withParams(nb *notebook.Notebook, p *params.Params, path string, selected []int, stderr io.Writer) ([]int, error) {
	if p == nil {
		return selected, nil
	}
	if params.TaggedCell(nb, params.ParametersTag) < 0 && params.TaggedCell(nb, params.InjectedTag) < 0 {
		fmt.Fprintf(stderr, "evalhost nb run: note: no cell of %s is tagged parameters; the parameters go into a new first cell\n", trustdir.Shown(path))
	}
	return injectParams(nb, p, selected)
}

// injectParams puts the parameters' cell into nb as papermill does and
// returns the selection with the cells after it moved and it selected.
func injectParams(nb *notebook.Notebook, p *params.Params, selected []int) ([]int, error) {
	before := nb.Len()
	at, err := params.InjectNotebook(nb, p)
	if err != nil {
		return nil, err
	}
	shift := nb.Len() - before // 0 when an injected cell was replaced
	out := []int{}
	for _, i := range selected {
		switch {
		case i == at && shift == 0:
		case i >= at:
			out = append(out, i+shift)
		default:
			out = append(out, i)
		}
	}
	return slices.Insert(out, sort.SearchInts(out, at), at), nil
}

// noteTooLargeToRead says when the notebook written is larger than evalhost
// reads back: it is written whole, as nbclient writes it, and Jupyter opens
// it, but evalhost nb refuses it.
func noteTooLargeToRead(stderr io.Writer, path string) {
	if st, err := os.Stat(path); err == nil && st.Size() > notebook.MaxFileBytes {
		fmt.Fprintf(stderr, "evalhost nb run: note: %s is %d MiB, more than the %d MiB evalhost nb reads; Jupyter opens it, and clearing outputs (jupyter nbconvert --clear-output) makes it small again\n",
			trustdir.Shown(path), st.Size()>>20, notebook.MaxFileBytes>>20)
	}
}
