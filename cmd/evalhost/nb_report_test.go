package main

import (
	"strings"
	"testing"

	"github.com/evalhost/evalhost/nbrun"
	"github.com/evalhost/evalhost/notebook"
	"github.com/evalhost/evalhost/sessions"
)

// The summary counts only the cells that ran: a cell skipped after a
// failure is said as skipped, not as run.
func TestNotebookRunSummaryCountsWhatRan(t *testing.T) {
	tests := []struct {
		name     string
		statuses []sessions.Status
		want     string
	}{
		{"all ok", []sessions.Status{"ok", "ok", "ok"}, "ran 3 code cells (ok); wrote out.ipynb\n"},
		{"one cell", []sessions.Status{"ok"}, "ran 1 code cell (ok); wrote out.ipynb\n"},
		{"error skips the rest", []sessions.Status{"ok", "error", "skipped"}, "ran 2 code cells, skipped 1 (error); wrote out.ipynb\n"},
		{"timeout skips two", []sessions.Status{"timeout", "skipped", "skipped"}, "ran 1 code cell, skipped 2 (timeout); wrote out.ipynb\n"},
		{"death", []sessions.Status{"ok", "killed", "skipped"}, "ran 2 code cells, skipped 1 (killed); wrote out.ipynb\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := nbrun.Result{Result: sessions.Result{Status: sessions.StatusOK, FailedCell: -1}}
			for i, st := range tt.statuses {
				res.Cells = append(res.Cells, sessions.CellResult{Index: i, Status: st})
				res.Notebook = append(res.Notebook, i+1)
				if st != sessions.StatusOK && res.Result.FailedCell < 0 {
					res.Status, res.Result.FailedCell = st, i
				}
			}
			var stdout, stderr strings.Builder
			reportNotebookRun(&stdout, &stderr, false, res, nil, "out.ipynb", false)
			if stdout.String() != tt.want {
				t.Errorf("summary %q, want %q", stdout.String(), tt.want)
			}
		})
	}
}

// An exception a cell tagged raises-exception raised was expected: the
// report says nothing of it, as nbclient and papermill do; another cell's
// error is still said.
func TestNotebookRunReportSkipsExpectedErrors(t *testing.T) {
	nb := notebook.New()
	for i, src := range []string{"raise ValueError('expected')", "1/0"} {
		if err := nb.Insert(i, notebook.Code, src); err != nil {
			t.Fatal(err)
		}
	}
	if err := nb.SetTags(0, []string{nbrun.TagRaisesException}); err != nil {
		t.Fatal(err)
	}
	res := nbrun.Result{Result: sessions.Result{Status: sessions.StatusError, FailedCell: 1, Cells: []sessions.CellResult{
		{Index: 0, Status: sessions.StatusError}, {Index: 1, Status: sessions.StatusError}}}, Notebook: []int{0, 1}}
	var stdout, stderr strings.Builder
	reportNotebookRun(&stdout, &stderr, false, res, nb, "out.ipynb", false)
	if got := stderr.String(); strings.Contains(got, "cell 0") || !strings.HasPrefix(got, "cell 1: error") {
		t.Errorf("stderr %q; want only cell 1's error", got)
	}
}
