package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/evalhost/evalhost/internal/trustdir"
	"github.com/evalhost/evalhost/notebook"
	"github.com/evalhost/evalhost/percent"
)

// nbInput is what kind of file nb run was given.
type nbInput int

const (
	inputNotebook nbInput = iota // .ipynb, or JSON of another name
	inputScript                  // .py: a percent script, as jupytext reads it
	inputOther                   // neither
)

// nbInputKind tells a notebook from a script: by the name (.py, .ipynb),
// else by the text (a JSON object is a notebook however it is named).
func nbInputKind(path string, data []byte) nbInput {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".py":
		return inputScript
	case ".ipynb":
		return inputNotebook
	}
	if t := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\ufeff")), " \t\r\n"); len(t) > 0 && t[0] == '{' {
		return inputNotebook
	}
	return inputOther
}

// scriptNotebook reads the percent script at path into the notebook
// jupytext reads it into ("jupytext --to ipynb"), to be run and written
// to f.out: -o, or, without one, the notebook jupytext pairs with the
// script (FILE.ipynb, as "jupytext --to ipynb --execute" writes it),
// which must not exist yet (say -o FILE.ipynb to replace it). It sets
// f.out; code is the exit code of its error.
func scriptNotebook(f *nbRunFlags, path string, src []byte, stderr io.Writer) (nb *notebook.Notebook, code int, err error) {
	stem := strings.TrimSuffix(path, filepath.Ext(path))
	shown := trustdir.Shown(path)
	if f.inplace {
		return nil, exitUsage, fmt.Errorf("--inplace: %s is a percent script, which holds no outputs; write the executed notebook with -o %s",
			shown, trustdir.ShellQuote(stem+".ipynb"))
	}
	// python3 skips a byte order mark; jupytext would keep it in the
	// first cell, which python3 then refuses.
	script, err := percent.ReadNotebook(strings.TrimPrefix(string(src), "\ufeff"))
	switch {
	case errors.Is(err, percent.ErrNoCells):
		return nil, exitUsage, fmt.Errorf("%s has no \"# %%%%\" cell marker and no Jupytext header: it is a plain script, not a notebook; run it with \"evalhost run %s\"",
			shown, trustdir.ShellQuote(path))
	case errors.Is(err, percent.ErrNotPercent):
		return nil, exitUsage, fmt.Errorf("%s is %w", shown, err)
	case errors.Is(err, percent.ErrEncoding):
		q := trustdir.ShellQuote(path)
		return nil, exitFailed, fmt.Errorf("%s: %w; convert it to UTF-8 (iconv -f ENCODING -t UTF-8 %s > NEW.py), "+
			"or run it with \"evalhost run %s\", which reads it as python3 does", shown, err, q, q)
	case err != nil:
		return nil, exitFailed, fmt.Errorf("%s: %w", shown, err)
	}
	defaulted := f.out == ""
	if defaulted {
		f.out = stem + ".ipynb"
		if o, taken := notebook.OccupantOf(f.out); taken {
			return nil, exitUsage, pairedTaken(f.out, path, o)
		}
	}
	if filepath.Clean(f.out) == filepath.Clean(path) || sameFile(f.out, path) {
		return nil, exitUsage, fmt.Errorf("-o %s is the script itself; write the executed notebook to another file (-o %s)",
			trustdir.Shown(f.out), trustdir.ShellQuote(stem+".ipynb"))
	}
	nb = notebook.New()
	if defaulted {
		// Bound to its name as missing, not read (LoadOrNew read a file
		// made since the check, and wrote over it): a file made there
		// meanwhile is not replaced.
		nb = notebook.NewAt(f.out)
	}
	if err := script.IpynbInto(nb, script.Paired(path, f.out)); err != nil {
		return nil, exitFailed, fmt.Errorf("%s: %w", shown, err)
	}
	if defaulted {
		fmt.Fprintf(stderr, "evalhost nb run: note: writing the executed notebook to %s, the notebook Jupytext pairs with %s "+
			"(jupytext --to ipynb --execute writes it there); -o names another\n", trustdir.Shown(f.out), shown)
	}
	return nb, exitOK, nil
}

// pairedTaken refuses to write the executed notebook of script to the
// notebook paired with it, out, which o holds. A file of the user's own
// may be replaced by naming it with -o; anything else is said as it is: a
// dangling symlink's "exists" sent the user looking for a file cat calls
// missing, and another user's file is not theirs to replace or remove.
func pairedTaken(out, script string, o notebook.Occupant) error {
	if o.Plain() {
		return fmt.Errorf("%s exists: without -o the executed notebook of %s goes there only when it is new; "+
			"-o %s replaces it (as jupytext --to ipynb --execute would), another -o writes elsewhere",
			trustdir.Shown(out), trustdir.Shown(script), trustdir.ShellQuote(out))
	}
	remedy := "choose another -o"
	if r := o.Remedy(); r != "" {
		remedy = r + ", or " + remedy
	}
	return fmt.Errorf("%s %s; without -o the executed notebook of %s goes there only when nothing is there: %s",
		trustdir.Shown(out), o.What(), trustdir.Shown(script), remedy)
}
