package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/evalhost/evalhost/config"
	"github.com/evalhost/evalhost/params"
	"github.com/evalhost/evalhost/percent"
	"github.com/evalhost/evalhost/pysource"
	"github.com/evalhost/evalhost/sessions"
)

// readRunCells reads the cells from source (or -c's code, or stdin); ok is
// false when run must exit with code, reported.
func readRunCells(source string, f runFlags, stdin io.Reader, stdout, stderr io.Writer) (cells []sessions.Cell, code int, ok bool) {
	cells, err := collectCells(source, f, stdin, stderr)
	var syntax *pysource.SyntaxError
	if errors.As(err, &syntax) {
		// python3's refusal of the file, in its words and with its status.
		fmt.Fprint(stderr, syntax.Text)
		return nil, exitFailed, false
	}
	if err != nil {
		fmt.Fprintf(stderr, "evalhost run: %v\n", err)
		return nil, exitUsage, false
	}
	if len(cells) == 0 {
		// A script of only markers, markdown or blank lines: like an empty
		// Python file, nothing to do is not a failure, but say so.
		fmt.Fprintf(stderr, "evalhost run: %s has no code cells; nothing ran\n", sourceName(source))
		if f.json {
			newJSONRenderer(stdout).end(sessions.Result{Status: sessions.StatusOK, FailedCell: -1})
		}
		return nil, exitOK, false
	}
	return cells, exitOK, true
}

// codeFile is the name python3 -c compiles its code under, which
// tracebacks, warnings and SyntaxErrors show.
const codeFile = "<string>"

func sourceName(arg string) string {
	if arg == "-" {
		return "stdin"
	}
	return arg
}

// collectCells reads the cells from -c flags or from source (FILE, or
// stdin for "-"), with the parameters' cell where papermill would put it.
func collectCells(source string, f runFlags, stdin io.Reader, stderr io.Writer) ([]sessions.Cell, error) {
	var cells []percent.Cell
	for _, code := range f.code {
		cell := sessions.Cell{Language: f.lang, Code: code}
		if f.lang == sessions.LangPython {
			// python3 -c's code is "<string>" (each -c cell's, from its
			// line 1), whose source linecache has only from 3.13 on.
			cell.File, cell.Line = codeFile, 1
		}
		cells = append(cells, percent.Cell{Cell: cell})
	}
	switch {
	case source != "":
		awaitQuitHeld() // stdin, a FIFO: a read that may wait for long
		src, err := readSource(source, stdin, f)
		if err != nil {
			return nil, err
		}
		// A header jupytext refuses is comments to python3: said, not refused.
		warning, whole, err := percent.CheckRun(src)
		if err != nil {
			return nil, fmt.Errorf("%s is %w", sourceName(source), err)
		}
		if warning != "" {
			fmt.Fprintf(stderr, "evalhost run: warning: %s %s\n", sourceName(source), warning)
		}
		opt := percent.Options{Language: f.lang, Magics: f.magics, Whole: whole}
		if f.params != nil {
			// papermill's parameters cell may be one that does not run
			opt.KeepTagged = []string{params.ParametersTag, params.InjectedTag}
		}
		cells = append(cells, percent.SplitScript(src, opt)...)
	case f.module != "":
		// One Python cell whatever --language says: python3 -m's module.
		cells = append(cells, percent.Cell{Cell: sessions.Cell{Language: sessions.LangPython, Module: f.module}})
	case len(cells) == 0:
		return nil, errors.New("nothing to run: give a FILE, - for stdin, -c CODE or -m MODULE")
	}
	if f.params != nil {
		if source != "" && !slices.ContainsFunc(cells, func(c percent.Cell) bool {
			return slices.Contains(c.Tags, params.ParametersTag) || slices.Contains(c.Tags, params.InjectedTag)
		}) {
			// As nb run and papermill say it: the script's own assignments,
			// after the first cell, then win over the parameters.
			fmt.Fprintf(stderr, "evalhost run: note: no cell of %s is tagged parameters; the parameters go into a new first cell\n", sourceName(source))
		}
		cells = params.InjectCells(cells, f.params)
		cells = slices.DeleteFunc(cells, func(c percent.Cell) bool { return c.NoRun })
	}
	out := make([]sessions.Cell, len(cells))
	for i, c := range cells {
		out[i] = c.Cell
		if c.Line > 0 && f.file != "" {
			// FILE's own cells, stdin's too (not -c's or the parameters'):
			// tracebacks and warnings name FILE:LINE, as python3 FILE's,
			// and stdin's "<stdin>", line N, as python3 -'s, whose source
			// linecache cannot read back, so no line of it is shown.
			out[i].File, out[i].Line = f.file, c.Line
		}
		out[i].Timeout = time.Duration(f.timeout) * time.Second
		if f.timeout == 0 {
			out[i].Timeout = sessions.NoTimeout
		}
	}
	return out, nil
}

// readSource reads FILE (stdin for "-"); a Python one is decoded as
// the interpreter that runs it decodes a source file (its coding
// declaration: pysource), a shell one's bytes are kept.
func readSource(name string, stdin io.Reader, f runFlags) (string, error) {
	if strings.HasSuffix(name, ".ipynb") {
		return "", fmt.Errorf("%s is a notebook: run it with \"evalhost nb run %s\"", name, name)
	}
	b, err := readScript(name, stdin, maxScriptBytes)
	if err != nil {
		return "", err // it names the file and the cause
	}
	src := string(b)
	if f.lang == sessions.LangPython {
		shown := pysource.Name{Given: name, Abs: f.file}
		if name == "-" {
			shown.Given = "<stdin>"
		}
		if src, err = pysource.Decode(b, shown, f.sourcePython); err != nil {
			return "", err
		}
	}
	return normalizeSource(src), nil
}

// sourcePython is the interpreter the run's cells would start, as the
// registry resolves it, for pysource to read a source only it can read
// (another encoding, a refusal worded as its version words it).
func (f runFlags) sourcePython() (string, error) {
	home, err := config.Home()
	if err != nil {
		return "", err
	}
	dir, err := runDir(f.cwd)
	if err != nil {
		return "", err
	}
	py, err := sessions.ResolveInterpreter(f.python, dir, home, os.Getenv, 0)
	return py.Path, err
}

// normalizeSource reads a script as Python reads a source file: a UTF-8 byte
// order mark at the start is dropped and CRLF line ends become LF, so a
// file saved on Windows runs the same in sh cells (where a "\r" would end up
// in every command's last argument) as in Python ones.
func normalizeSource(src string) string {
	src = strings.TrimPrefix(src, "\uFEFF")
	return strings.ReplaceAll(src, "\r\n", "\n")
}
