package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/evalhost/evalhost/internal/plural"
	"github.com/evalhost/evalhost/internal/trustdir"
	"github.com/evalhost/evalhost/notebook"
)

const nbUsage = `Usage: evalhost nb COMMAND FILE [flags]

Edit .ipynb notebooks as cell-marked text ("# %% [code|markdown|raw] cell:N").

Commands:
  view FILE [--lines 10-20,40-45] [-n]     print the notebook as editable text
  apply FILE [--text-file PATH|-]          replace the cells with edited text (stdin by default);
                                           "cell:N" markers keep cell N's outputs, metadata and id;
                                           a missing FILE starts as an empty nbformat 4.5 notebook
  edit FILE --cell N (--content TEXT | --content-file PATH|-)
                                           replace cell N's source
  insert FILE --cell N [--type code|markdown|raw] (--content TEXT | --content-file PATH|-)
                                           insert a cell before index N (N = cell count appends)
  delete FILE --cell N                     delete cell N
  run FILE [-o OUT | --inplace]            execute the code cells, writing outputs back; FILE may
                                           be a Jupytext percent script (.py), run as its notebook
                                           (see "evalhost nb run --help")

Every command takes --json for machine-readable details. Writes are atomic: on
any error the file is left exactly as it was.
`

// nbRun is "evalhost nb": exit 0 ok, 1 failure, 2 usage.
func nbRun(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		w := stderr
		if len(args) > 0 {
			w = stdout
		}
		fmt.Fprint(w, nbUsage)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	cmd := &nbCommand{name: args[0], stdin: stdin, stdout: stdout, stderr: stderr}
	switch cmd.name {
	case "view":
		return cmd.run(args[1:], cmd.view)
	case "apply":
		return cmd.run(args[1:], cmd.apply)
	case "edit", "insert", "delete":
		return cmd.run(args[1:], cmd.action)
	case "run":
		return nbExecute(args[1:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "evalhost nb: unknown command %q\n\n%s", cmd.name, nbUsage)
		return exitUsage
	}
}

type nbCommand struct {
	name           string
	stdin          io.Reader
	stdout, stderr io.Writer
	fs             *pflag.FlagSet
	path           string

	json        bool
	lines       string
	number      bool
	textFile    string
	cell        int
	content     string
	contentFile string
	cellType    string
}

// usageError is a bad command line: exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func (c *nbCommand) run(args []string, do func() error) int {
	c.fs = pflag.NewFlagSet("nb "+c.name, pflag.ContinueOnError)
	c.fs.Usage = func() { fmt.Fprintf(c.fs.Output(), "%s\nFlags of %q:\n%s", nbUsage, c.name, c.fs.FlagUsages()) }
	c.fs.BoolVar(&c.json, "json", false, "print details as one JSON object")
	switch c.name {
	case "view":
		c.fs.StringVar(&c.lines, "lines", "", "only these 1-based lines of the text, e.g. 10-20,40-45 or 30-")
		c.fs.BoolVarP(&c.number, "number", "n", false, "prefix each line with its number and a tab")
	case "apply":
		c.fs.StringVar(&c.textFile, "text-file", "-", "file with the edited text; - reads stdin")
	default:
		c.fs.IntVar(&c.cell, "cell", -1, "cell index (0-based)")
		if c.name != "delete" {
			c.fs.StringVar(&c.content, "content", "", "the cell's new source")
			c.fs.StringVar(&c.contentFile, "content-file", "", "read the source from this file; - reads stdin")
		}
		if c.name == "insert" {
			c.fs.StringVar(&c.cellType, "type", "code", "cell type: code, markdown or raw")
		}
	}
	if code, ok := parseFlags(c.fs, args, c.stdout, c.stderr); !ok {
		return code
	}
	if c.fs.NArg() != 1 {
		msg := fmt.Sprintf("want exactly one notebook FILE, got %d arguments", c.fs.NArg())
		switch c.name {
		case "edit", "insert":
			msg += " (the cell is --cell N, its source --content TEXT or --content-file PATH)"
		case "delete":
			msg += " (the cell is --cell N)"
		}
		return c.fail(&usageError{msg})
	}
	c.path = c.fs.Arg(0)
	return c.fail(do())
}

func (c *nbCommand) fail(err error) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(c.stderr, "evalhost nb %s: %v\n", c.name, err)
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(c.stderr, "Run \"evalhost nb --help\" for usage.\n")
		return exitUsage
	}
	return exitFailed
}

func (c *nbCommand) view() error {
	nb, _, err := loadNotebook(c.path, false)
	if err != nil {
		return err
	}
	text := nb.Text()
	all := notebook.SplitText(text)
	var lines []notebook.Line
	if c.lines != "" {
		ranges, err := notebook.ParseRanges(c.lines)
		if err != nil {
			return &usageError{err.Error()}
		}
		if lines, err = notebook.SelectLines(text, ranges); err != nil {
			return err
		}
	}
	if c.json {
		out := map[string]any{"action": "view", "path": c.path, "totalCells": nb.Len(), "totalLines": len(all)}
		if c.lines != "" {
			out["lines"] = lines
		} else {
			out["text"] = text
		}
		return c.writeJSON(out)
	}
	if c.lines == "" && !c.number {
		_, err := io.WriteString(c.stdout, text) // exactly the text, so view | apply is the identity
		return err
	}
	if c.lines == "" {
		for i, l := range all {
			lines = append(lines, notebook.Line{N: i + 1, Text: l})
		}
	}
	var b strings.Builder
	for _, l := range lines {
		if c.number {
			fmt.Fprintf(&b, "%d\t", l.N)
		}
		b.WriteString(l.Text)
		b.WriteByte('\n')
	}
	_, err = io.WriteString(c.stdout, b.String())
	return err
}

func (c *nbCommand) apply() error {
	text, err := c.readInput(c.textFile, "--text-file")
	if err != nil {
		return err
	}
	unlock, err := lockNotebook(c.path)
	if err != nil {
		return err
	}
	defer unlock()
	nb, orig, err := loadNotebook(c.path, true)
	if err != nil {
		return err
	}
	created := orig == nil
	out, err := nb.ApplyText(text)
	if err != nil {
		return fmt.Errorf("%s: %w", trustdir.Shown(c.path), err)
	}
	data := out.Bytes()
	changed := created || !bytes.Equal(data, orig)
	if changed {
		if err := out.Save(c.path); err != nil {
			return err
		}
	}
	if c.json {
		return c.writeJSON(map[string]any{"action": "apply", "path": c.path, "totalCells": out.Len(), "created": created, "changed": changed})
	}
	verb := "updated"
	switch {
	case created:
		verb = "created"
	case !changed:
		verb = "unchanged:"
	}
	_, err = fmt.Fprintf(c.stdout, "%s %s (%s)\n", verb, trustdir.Shown(c.path), plural.Of(out.Len(), "cell"))
	return err
}

// action is edit, insert and delete, with the reference notebook tool's
// details: action, path, cellIndex, cellType, totalCells, cellSource.
func (c *nbCommand) action() error {
	if !c.fs.Changed("cell") {
		return &usageError{"--cell N is required"}
	}
	var source string
	if c.name != "delete" {
		var err error
		if source, err = c.content4action(); err != nil {
			return err
		}
		if !utf8.ValidString(source) {
			return fmt.Errorf("the cell's source is not UTF-8, which notebooks are; convert it first (e.g. iconv -f latin1 -t utf-8)")
		}
	}
	unlock, err := lockNotebook(c.path)
	if err != nil {
		return err
	}
	defer unlock()
	nb, _, err := loadNotebook(c.path, c.name == "insert")
	if err != nil {
		return err
	}
	var cell notebook.Cell
	switch c.name {
	case "edit":
		if err = nb.Edit(c.cell, source); err == nil {
			cell = nb.Cell(c.cell)
		}
	case "insert":
		t, terr := notebook.ParseCellType(c.cellType)
		if terr != nil {
			return &usageError{"--type: " + terr.Error()}
		}
		if err = nb.Insert(c.cell, t, source); err == nil {
			cell = nb.Cell(c.cell)
		}
	case "delete":
		cell, err = nb.Delete(c.cell)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", trustdir.Shown(c.path), err)
	}
	if err := nb.Save(c.path); err != nil {
		return err
	}
	if c.json {
		return c.writeJSON(map[string]any{"action": c.name, "path": c.path, "cellIndex": c.cell,
			"cellType": cell.Type, "cellId": cell.ID, "totalCells": nb.Len(), "cellSource": cell.Source})
	}
	past := map[string]string{"edit": "edited", "insert": "inserted", "delete": "deleted"}[c.name]
	_, err = fmt.Fprintf(c.stdout, "%s %s cell %d in %s (%s now)\n", past, cell.Type, c.cell, trustdir.Shown(c.path), plural.Of(nb.Len(), "cell"))
	return err
}

// lockNotebook keeps other evalhost edits of path out from read to save, so
// concurrent edits happen one after another; an editor that takes no lock
// is caught by Save's check instead. A lock held longer than a minute is a
// stuck process, and a clear error is better than waiting for it.
func lockNotebook(path string) (unlock func(), err error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lk, err := notebook.Lock(ctx, path)
	if err != nil {
		return nil, err
	}
	return func() { lk.Unlock() }, nil
}

func (c *nbCommand) content4action() (string, error) {
	hasText, hasFile := c.fs.Changed("content"), c.fs.Changed("content-file")
	switch {
	case hasText && hasFile:
		return "", &usageError{"give --content or --content-file, not both"}
	case hasText:
		return c.content, nil
	case hasFile:
		// A file's byte order mark (Notepad's) is its encoding's, not the
		// cell's: python3 drops it from a source file, and in a cell it is
		// a SyntaxError.
		s, err := c.readInput(c.contentFile, "--content-file")
		return strings.TrimPrefix(s, "\ufeff"), err
	}
	return "", &usageError{fmt.Sprintf("%s needs the cell's source: --content TEXT or --content-file PATH (- for stdin)", c.name)}
}

func (c *nbCommand) readInput(path, flag string) (string, error) {
	data, err := readPiped(path, c.stdin, maxScriptBytes)
	var nr *notebook.NotRegularError
	if errors.As(err, &nr) && !nr.Mode.IsDir() || errors.Is(err, errEmptyPipe) {
		return "", fmt.Errorf("%s: %w; or give - and send the text on stdin", flag, err)
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", flag, err)
	}
	return string(data), nil
}

// loadNotebook is notebook.Load (orNew: LoadOrNew) with the read bounded
// by maxNotebookBytes; it also returns the file's bytes (nil when missing).
func loadNotebook(path string, orNew bool) (*notebook.Notebook, []byte, error) {
	data, err := readBounded(path, nil, maxNotebookBytes)
	if errors.Is(err, fs.ErrNotExist) && orNew {
		// Bound to path, so a save refuses to replace a file someone
		// created meanwhile.
		nb, err := notebook.LoadOrNew(path)
		return nb, nil, err
	}
	if err != nil {
		return nil, nil, notebookReadError(err, path) // it names the notebook and the cause
	}
	nb, err := notebook.ParseFile(path, data)
	return nb, data, err
}

// notebookReadError is err, a failed read of the notebook (or percent
// script) FILE at path, with the advice for that file: a directory's
// names a .ipynb file in it, as Load's does (not for a script), and a
// notebook too large says how to make it smaller (tooLargeNotebook).
func notebookReadError(err error, path string) error {
	var nr *notebook.NotRegularError
	if errors.As(err, &nr) && nbInputKind(path, nil) != inputScript {
		nr.Notebook = true
	}
	return tooLargeNotebook(err, path)
}

// tooLargeNotebook adds to a refusal of a notebook past maxNotebookBytes
// what makes it readable: its outputs (a run's printed text, images) are
// what grows a notebook that large, as nb run may write one.
func tooLargeNotebook(err error, path string) error {
	if !errors.Is(err, errTooLarge) {
		return err
	}
	if nbInputKind(path, nil) == inputScript {
		return fmt.Errorf("%w; a percent script holds no outputs to clear: its own text is that large "+
			"(data written into its code?); keep the data in a file the script reads", err)
	}
	return fmt.Errorf("%w; clearing its outputs (jupyter nbconvert --clear-output --inplace %s) makes it smaller", err, trustdir.Shown(path))
}

func (c *nbCommand) writeJSON(v any) error {
	enc := json.NewEncoder(c.stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
