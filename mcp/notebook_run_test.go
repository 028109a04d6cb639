package mcp

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/sessions"
)

// A run whose save failed still says which cells ran and how each ended,
// and where the outputs went or that they were not saved, and why; it is
// an error, as the notebook was not updated.
func TestNotebookRunSaysWhereOutputsWent(t *testing.T) {
	ran := sessions.Result{Status: sessions.StatusOK, FailedCell: -1, Cells: []sessions.CellResult{
		{Index: 0, Language: "py", Status: sessions.StatusOK, ExecutionCount: 1},
		{Index: 1, Language: "py", Status: sessions.StatusOK, ExecutionCount: 2},
	}}
	conflict := errors.New("nb.ipynb changed on disk while the cells ran")
	for _, tc := range []struct {
		name    string
		run     NotebookRunResult
		isError bool
		want    string
	}{
		{"saved", NotebookRunResult{Output: "NB"}, false, "wrote NB"},
		{"diverted", NotebookRunResult{Output: "NB.nbconvert", NotSaved: conflict}, true,
			"the notebook was NOT updated: nb.ipynb changed on disk while the cells ran; the outputs were written to NB.nbconvert instead"},
		{"lost", NotebookRunResult{NotSaved: conflict}, true,
			"the outputs were NOT saved: nb.ipynb changed on disk while the cells ran"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runner := func(context.Context, NotebookRunRequest) (NotebookRunResult, error) {
				r := tc.run
				r.Result, r.Cells = ran, []int{1, 3}
				return r, nil
			}
			reg := sessions.New(sessions.Config{Home: t.TempDir()})
			defer reg.Close()
			srv, err := New(Config{Registry: reg, WorkDir: t.TempDir(), RunNotebook: runner})
			if err != nil {
				t.Fatal(err)
			}
			res := call(t, goClientOverStdio(t, srv), "notebook_run", map[string]any{"path": "x.ipynb"})
			var out NotebookRunOutput
			structured(t, res, &out)
			got := textOf(res)
			if res.IsError != tc.isError || !strings.Contains(got, tc.want) || len(out.Cells) != 2 || out.Cells[1].Cell != 3 ||
				!strings.Contains(got, `"notebook cell 3") ok`) || out.Written != tc.run.Output || (out.NotSaved != "") != (tc.run.NotSaved != nil) {
				t.Fatalf("isError=%v %+v\n%s\nwant isError=%v, both cells, and %q", res.IsError, out, got, tc.isError, tc.want)
			}
		})
	}
}
