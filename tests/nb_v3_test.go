package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// nbformat3Notebook is an nbformat 3 notebook (a worksheet, a heading, code
// cells with v3 outputs, and a metadata name), as IPython 2 saved them.
const nbformat3Notebook = `{
 "metadata": {"name": "old"},
 "nbformat": 3,
 "nbformat_minor": 0,
 "worksheets": [
  {
   "cells": [
    {"cell_type": "heading", "level": 2, "metadata": {}, "source": ["Old\n", "notebook"]},
    {"cell_type": "code", "collapsed": false, "input": ["x = 41\n", "print('hello')"], "language": "python",
     "metadata": {}, "outputs": [{"output_type": "stream", "stream": "stdout", "text": ["stale\n"]}], "prompt_number": 7},
    {"cell_type": "markdown", "metadata": {}, "source": "Some *text*"},
    {"cell_type": "code", "collapsed": true, "input": "x + 1", "language": "python", "metadata": {},
     "outputs": [{"output_type": "pyout", "prompt_number": 8, "metadata": {}, "text": ["0"]}], "prompt_number": 8}
   ],
   "metadata": {}
  }
 ]
}
`

// nb run reads an nbformat 3 notebook as nbclient and papermill do
// (nbformat.read(as_version=4)) and writes the nbformat 4.5 notebook
// nbformat converts it to, with its cells run: every cell, its type,
// source and metadata, and the notebook's metadata (but language_info,
// which a run writes) as nbformat's conversion has them.
func TestNotebookRunNbformat3(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "old.ipynb"), filepath.Join(dir, "out.ipynb")
	if err := os.WriteFile(in, []byte(nbformat3Notebook), 0o644); err != nil {
		t.Fatal(err)
	}
	if output, err := command(t, "nb", "run", in, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("nb run of an nbformat 3 notebook: %v\n%s", err, output)
	}
	check := `
import sys, nbformat
conv = nbformat.read(sys.argv[1], as_version=4)
ran = nbformat.read(sys.argv[2], as_version=4)
nbformat.validate(ran)
assert (ran.nbformat, ran.nbformat_minor) == (conv.nbformat, conv.nbformat_minor) == (4, 5), (ran.nbformat, ran.nbformat_minor)
md = dict(ran.metadata); md.pop("language_info", None)
want = dict(conv.metadata)
for k in ("orig_nbformat", "orig_nbformat_minor"):  # nbformat's writer drops them (strip_transient)
    want.pop(k, None)
assert md == want, (md, want)
assert len(ran.cells) == len(conv.cells)
for a, b in zip(ran.cells, conv.cells):
    assert (a.cell_type, a.source, a.metadata) == (b.cell_type, b.source, b.metadata), (a, b)
    assert len(a.id) == 8, a.id
assert ran.cells[0].source == "## Old notebook", ran.cells[0].source
assert [o.text for o in ran.cells[1].outputs] == ["hello\n"], ran.cells[1].outputs
assert ran.cells[1].execution_count == 1
r = ran.cells[3].outputs
assert [o.output_type for o in r] == ["execute_result"] and r[0].data["text/plain"] == "42", r
assert ran.cells[3].metadata == {"collapsed": True}, ran.cells[3].metadata
`
	if output, err := exec.Command("python3", "-c", check, in, out).CombinedOutput(); err != nil {
		t.Fatalf("the run's notebook is not nbformat's conversion, run: %v\n%s", err, output)
	}
}
