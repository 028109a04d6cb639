package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/evalhost/evalhost/internal/plural"
	"github.com/evalhost/evalhost/notebook"
	"github.com/evalhost/evalhost/streamsink"
)

// maxReportedTraceback is how many lines of a failed cell's traceback nb
// run shows; the notebook keeps all of it.
const maxReportedTraceback = 40

// reportCellError writes the error output of notebook cell i, as papermill
// shows the exception a run stopped at: its traceback, sanitised (a kernel's
// has ANSI colours; a terminal must not act on what a cell wrote), its
// last maxReportedTraceback lines. Nothing when the cell has no error output.
func reportCellError(w io.Writer, nb *notebook.Notebook, i int) {
	if nb == nil || i < 0 || i >= nb.Len() {
		return
	}
	var text string
	for _, o := range nb.Outputs(i) {
		if o.Type() != "error" {
			continue
		}
		text = strings.Join(o.Traceback(), "\n")
		if strings.TrimSpace(text) == "" {
			text = o.Text()
		}
	}
	text = strings.TrimRight(streamsink.Sanitize(text), "\n")
	if text == "" {
		return
	}
	lines := strings.Split(text, "\n")
	if n := len(lines) - maxReportedTraceback; n > 0 {
		fmt.Fprintf(w, "  [… %s of the traceback; the notebook has all of it]\n", plural.Of(n, "line"))
		lines = lines[n:]
	}
	for _, l := range lines {
		fmt.Fprintf(w, "  %s\n", l)
	}
}
