package nbrun_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/nbrun"
	"github.com/evalhost/evalhost/notebook"
	"github.com/evalhost/evalhost/sessions"
)

// papermillMeta is metadata.papermill, notebook or cell.
type papermillMeta struct {
	InputPath      *string         `json:"input_path"`
	OutputPath     *string         `json:"output_path"`
	Parameters     json.RawMessage `json:"parameters"`
	Version        string          `json:"version"`
	StartTime      *string         `json:"start_time"`
	EndTime        *string         `json:"end_time"`
	Duration       *float64        `json:"duration"`
	Exception      *bool           `json:"exception"`
	Status         string          `json:"status"`
	EnvironmentVar json.RawMessage `json:"environment_variables"`
	DefaultParams  json.RawMessage `json:"default_parameters"`
}

// cellMeta decodes cell i's metadata; papermill is nil when it has none.
func cellMeta(t *testing.T, nb *notebook.Notebook, i int) (papermill *papermillMeta, keys map[string]json.RawMessage) {
	t.Helper()
	var doc struct {
		Cells []struct {
			Metadata map[string]json.RawMessage `json:"metadata"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(nb.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	md := doc.Cells[i].Metadata
	if raw, ok := md["papermill"]; ok {
		papermill = new(papermillMeta)
		if err := json.Unmarshal(raw, papermill); err != nil {
			t.Fatal(err)
		}
	}
	return papermill, md
}

func parseTime(t *testing.T, s *string) time.Time {
	t.Helper()
	if s == nil {
		t.Fatal("time is null")
	}
	tm, err := time.Parse("2006-01-02T15:04:05.999999-07:00", *s)
	if err != nil || !strings.HasSuffix(*s, "+00:00") {
		t.Fatalf("time %q is not Python's isoformat of a UTC time: %v", *s, err)
	}
	return tm
}

// With Options.Papermill, Run writes papermill's metadata: the run's, and
// each cell's status and times; a cell that starts loses an earlier run's
// metadata.execution; markdown and blank cells the run passes are
// completed; OnCellEnd sees the ended cell's status, OnCellStart the
// started one running (its outputs gone) and the cell passed before it
// completed; a cell that never started is not seen starting.
func TestRunWritesPapermillMetadata(t *testing.T) {
	reg := newRegistry(t)
	nb := newNotebook(t, "md:# Title", "print('ok')", "", "1/0", "print('never')")
	stale := map[string]any{"iopub.status.busy": "2020-01-01T00:00:00Z"}
	for _, i := range []int{1, 4} {
		if err := nb.SetCellMetadata(i, "execution", stale); err != nil {
			t.Fatal(err)
		}
	}
	if err := nb.SetMetadata("papermill", map[string]any{"parameters": map[string]any{"old": 1}, "custom": "kept"}); err != nil {
		t.Fatal(err)
	}
	if err := nb.SetOutputs(1, []notebook.Output{notebook.StreamOutput("stdout", "old\n")}); err != nil {
		t.Fatal(err)
	}
	var seen, started []string
	pm := &nbrun.Papermill{InputPath: "in.ipynb", OutputPath: "out.ipynb", Parameters: map[string]any{"alpha": 0.5}, Version: "evalhost test"}
	before := time.Now().UTC().Add(-time.Second)
	res, err := nbrun.Run(context.Background(), reg, nb, nbrun.Options{Cwd: t.TempDir(), Papermill: pm,
		OnCellStart: func(cell int) {
			m, _ := cellMeta(t, nb, cell)
			passed, _ := cellMeta(t, nb, cell-1)
			started = append(started, fmt.Sprintf("%d:%s,%d outputs,before %s", cell, m.Status, len(nb.Outputs(cell)), passed.Status))
		},
		OnCellEnd: func(cell int, _ sessions.CellResult) {
			m, _ := cellMeta(t, nb, cell)
			seen = append(seen, m.Status)
		}})
	if err != nil || res.Status != sessions.StatusError {
		t.Fatalf("Run: %+v %v", res.Result, err)
	}
	if got := strings.Join(seen, ","); got != "completed,failed,pending" {
		t.Errorf("OnCellEnd saw statuses %s", got)
	}
	if got, want := strings.Join(started, "; "), "1:running,0 outputs,before completed; 3:running,0 outputs,before completed"; got != want {
		t.Errorf("OnCellStart saw %s, want %s", got, want)
	}

	var m papermillMeta
	if err := json.Unmarshal(nb.Metadata("papermill"), &m); err != nil {
		t.Fatal(err)
	}
	start, end := parseTime(t, m.StartTime), parseTime(t, m.EndTime)
	if *m.InputPath != "in.ipynb" || *m.OutputPath != "out.ipynb" || string(m.Parameters) != `{"alpha": 0.5}` ||
		m.Version != "evalhost test" || m.Exception == nil || !*m.Exception ||
		string(m.EnvironmentVar) != "{}" || string(m.DefaultParams) != "{}" {
		t.Errorf("notebook metadata.papermill %s", nb.Metadata("papermill"))
	}
	if start.Before(before) || end.Before(start) || m.Duration == nil || *m.Duration != end.Sub(start).Seconds() {
		t.Errorf("run times: start %v end %v duration %v", start, end, m.Duration)
	}
	if !strings.Contains(string(nb.Metadata("papermill")), `"custom": "kept"`) {
		t.Errorf("a member papermill's metadata had is gone: %s", nb.Metadata("papermill"))
	}

	for _, tt := range []struct {
		cell      int
		status    string
		exception *bool
		execution bool // an earlier run's metadata.execution is still there
	}{
		{0, "completed", ptr(false), false},
		{1, "completed", ptr(false), false},
		{2, "completed", ptr(false), false},
		{3, "failed", ptr(true), false},
		{4, "pending", nil, true},
	} {
		m, md := cellMeta(t, nb, tt.cell)
		if m == nil || m.Status != tt.status || (m.Exception == nil) != (tt.exception == nil) || m.Exception != nil && *m.Exception != *tt.exception {
			t.Errorf("cell %d: metadata.papermill %s, want status %s", tt.cell, md["papermill"], tt.status)
			continue
		}
		if _, ok := md["execution"]; ok != tt.execution {
			t.Errorf("cell %d: metadata.execution kept = %v, want %v", tt.cell, ok, tt.execution)
		}
		if tt.status == "pending" {
			if m.StartTime != nil || m.EndTime != nil || m.Duration != nil {
				t.Errorf("cell %d never ran but has times: %s", tt.cell, md["papermill"])
			}
			continue
		}
		s, e := parseTime(t, m.StartTime), parseTime(t, m.EndTime)
		if s.Before(start) || e.Before(s) || end.Before(e) || *m.Duration != e.Sub(s).Seconds() {
			t.Errorf("cell %d times: %s", tt.cell, md["papermill"])
		}
	}
}

// A run of the whole notebook records the markdown, raw and blank cells it
// passes completed, as papermill does; those after a failure that stops
// the run stay pending.
func TestRunPapermillPassesTheCellsItDoesNotRun(t *testing.T) {
	reg := newRegistry(t)
	for _, tt := range []struct {
		name        string
		cells       []string
		allowErrors bool
		selected    []int  // Options.Cells
		want        string // each cell's status, by its first letter
		timeout     time.Duration
	}{
		{"all run", []string{"md:# a", "print(1)", "md:b", "", "print(2)", "md:c"}, false, nil, "cccccc", 0},
		{"raw cells too", []string{"raw:x", "print(1)", "raw:y"}, false, nil, "ccc", 0},
		{"a failure stops the run", []string{"md:a", "1/0", "md:b", "print(2)", "md:c"}, false, nil, "cfppp", 0},
		{"errors allowed", []string{"md:a", "1/0", "md:b", "", "print(2)", "md:c"}, true, nil, "cfcccc", 0},
		{"the last cell fails", []string{"md:a", "1/0", "md:c"}, false, nil, "cfp", 0},
		{"the last cell fails, errors allowed", []string{"md:a", "1/0", "md:c"}, true, nil, "cfc", 0},
		{"every code cell named", []string{"md:a", "print(1)", "", "print(2)", "md:c"}, false, []int{1, 3}, "ccccc", 0},
		{"some cells named", []string{"md:a", "print(1)", "", "print(2)", "md:c"}, false, []int{3}, "pppcp", 0},
		// The run goes on after a timeout when errors are allowed, past the
		// last cell too.
		{"the last cell times out, errors allowed", []string{"md:a", "print(1)", "md:b", "import time; time.sleep(60)", "md:c"}, true, nil, "cccfc", time.Second},
		// Nothing runs, and papermill still passes every cell.
		{"no code cell", []string{"md:a", "raw:b", "  "}, false, nil, "ccc", 0},
		{"only a blank cell named", []string{"md:a", "", "print(1)"}, false, []int{}, "ppp", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			nb := newNotebook(t, tt.cells...)
			if _, err := nbrun.Run(context.Background(), reg, nb, nbrun.Options{Cwd: t.TempDir(),
				Papermill: &nbrun.Papermill{}, AllowErrors: tt.allowErrors, Cells: tt.selected, Timeout: tt.timeout}); err != nil {
				t.Fatal(err)
			}
			var run papermillMeta
			if err := json.Unmarshal(nb.Metadata("papermill"), &run); err != nil || run.EndTime == nil {
				t.Errorf("the run's metadata.papermill: %s (%v)", nb.Metadata("papermill"), err)
			}
			var got strings.Builder
			for i := range nb.Len() {
				m, md := cellMeta(t, nb, i)
				if m == nil {
					got.WriteByte('-')
					continue
				}
				got.WriteByte(m.Status[0])
				if m.Status == "completed" && (m.Exception == nil || *m.Exception || m.Duration == nil ||
					*m.Duration != parseTime(t, m.EndTime).Sub(parseTime(t, m.StartTime)).Seconds()) {
					t.Errorf("cell %d: %s", i, md["papermill"])
				}
			}
			if got.String() != tt.want {
				t.Errorf("statuses %s, want %s", got.String(), tt.want)
			}
		})
	}
}

// Without new parameters the ones papermill's metadata records stay: the
// cell an earlier run injected still runs with them; so do its
// environment_variables and default_parameters. Without
// Options.Papermill nothing is written.
func TestRunPapermillKeepsRecordedParameters(t *testing.T) {
	reg := newRegistry(t)
	nb := newNotebook(t, "x = 1")
	recorded := map[string]any{"parameters": map[string]any{"x": 1},
		"environment_variables": map[string]any{"STAGE": "prod"}, "default_parameters": map[string]any{"x": 0}}
	if err := nb.SetMetadata("papermill", recorded); err != nil {
		t.Fatal(err)
	}
	if _, err := nbrun.Run(context.Background(), reg, nb, nbrun.Options{Cwd: t.TempDir(), Papermill: &nbrun.Papermill{}}); err != nil {
		t.Fatal(err)
	}
	var m papermillMeta
	if err := json.Unmarshal(nb.Metadata("papermill"), &m); err != nil || string(m.Parameters) != `{"x": 1}` {
		t.Errorf("parameters %s (%v), want the recorded ones", m.Parameters, err)
	}
	// papermill writes these only into metadata it creates.
	if string(m.EnvironmentVar) != `{"STAGE": "prod"}` || string(m.DefaultParams) != `{"x": 0}` {
		t.Errorf("environment_variables %s, default_parameters %s: want the recorded ones", m.EnvironmentVar, m.DefaultParams)
	}
	plain := newNotebook(t, "x = 1")
	if _, err := nbrun.Run(context.Background(), reg, plain, nbrun.Options{Cwd: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if md, _ := cellMeta(t, plain, 0); plain.Metadata("papermill") != nil || md != nil {
		t.Errorf("papermill metadata written without Options.Papermill: %s", plain.Bytes())
	}
}

func ptr[T any](v T) *T { return &v }

// A cell stopped from outside (its timeout, a cancel, its interpreter's
// death) is failed, with exception true, and so is the run; the cell after
// it never started and stays pending.
func TestRunPapermillMarksAStoppedCellFailed(t *testing.T) {
	tests := []struct {
		name    string
		code    string
		timeout time.Duration
		status  sessions.Status
	}{
		{"timed out", "print('started', flush=True)\nwhile True: pass", time.Second, sessions.StatusTimeout},
		{"cancelled", "print('started', flush=True)\nwhile True: pass", 0, sessions.StatusCancelled},
		{"its interpreter died", "import os, signal\nprint('started', flush=True)\nos.kill(os.getpid(), signal.SIGKILL)", 0, sessions.StatusKilled},
	}
	reg := newRegistry(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nb := newNotebook(t, "print('ok')", tt.code, "print('never')")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			opt := nbrun.Options{Cwd: t.TempDir(), Timeout: tt.timeout, Papermill: &nbrun.Papermill{}}
			if tt.status == sessions.StatusCancelled {
				opt.OnFrame = func(cell int, f frames.Frame) {
					if cell == 1 && strings.Contains(f.Data, "started") {
						cancel()
					}
				}
			}
			res, err := nbrun.Run(ctx, reg, nb, opt)
			if err != nil || res.Status != tt.status || res.FailedCell() != 1 {
				t.Fatalf("Run: %+v, %v; want %s at cell 1", res.Result, err, tt.status)
			}
			var m papermillMeta
			if err := json.Unmarshal(nb.Metadata("papermill"), &m); err != nil || m.Exception == nil || !*m.Exception {
				t.Errorf("the run's exception is not true: %s", nb.Metadata("papermill"))
			}
			for cell, want := range []struct {
				status    string
				exception *bool
			}{{"completed", ptr(false)}, {"failed", ptr(true)}, {"pending", nil}} {
				m, md := cellMeta(t, nb, cell)
				if m == nil || m.Status != want.status || (m.Exception == nil) != (want.exception == nil) ||
					m.Exception != nil && *m.Exception != *want.exception {
					t.Errorf("cell %d: metadata.papermill %s, want status %s", cell, md["papermill"], want.status)
				}
			}
		})
	}
}

// A run of some cells (Options.Cells, nb run --cells) leaves the other code
// cells pending, as papermill's start leaves every cell: no times, no
// exception. An earlier run's statuses would otherwise contradict this
// run's: a cell "failed", exception true, under a run whose exception is
// null. Markdown and blank cells still get none.
func TestRunPapermillWithCellsLeavesTheOthersPending(t *testing.T) {
	reg := newRegistry(t)
	for _, tt := range []struct {
		name    string
		earlier bool // a full run, which fails at cell 1, ran before
	}{
		{"after a failed run", true},
		{"first run", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			nb := newNotebook(t, "print('a')", "1/0", "print('c')", "md:# x", "")
			if tt.earlier {
				res, err := nbrun.Run(context.Background(), reg, nb, nbrun.Options{Cwd: t.TempDir(), Papermill: &nbrun.Papermill{}})
				if err != nil || res.FailedCell() != 1 {
					t.Fatalf("earlier run: %+v %v", res.Result, err)
				}
			}
			res, err := nbrun.Run(context.Background(), reg, nb, nbrun.Options{Cwd: t.TempDir(), Cells: []int{2}, Papermill: &nbrun.Papermill{}})
			if err != nil || res.Status != sessions.StatusOK {
				t.Fatalf("Run of cell 2: %+v %v", res.Result, err)
			}
			var m papermillMeta
			if err := json.Unmarshal(nb.Metadata("papermill"), &m); err != nil || m.Exception != nil {
				t.Errorf("the run's exception is not null: %s", nb.Metadata("papermill"))
			}
			for _, cell := range []int{0, 1, 2, 3, 4} {
				m, md := cellMeta(t, nb, cell)
				want := "pending"
				if cell == 2 {
					want = "completed"
				}
				if m == nil || m.Status != want {
					t.Errorf("cell %d: metadata.papermill %s, want status %s", cell, md["papermill"], want)
					continue
				}
				if want == "pending" && (m.StartTime != nil || m.EndTime != nil || m.Duration != nil || m.Exception != nil) {
					t.Errorf("cell %d did not run but has times or an exception: %s", cell, md["papermill"])
				}
			}
		})
	}
}

// Without Options.Papermill (nb run's default since --papermill-metadata
// auto) a cell that runs still loses the metadata.execution timestamps an
// earlier Jupyter run left: they describe that run, not this one, and
// nbclient replaces them. A cell that never ran keeps its own.
func TestRunWithoutPapermillDropsStaleExecution(t *testing.T) {
	reg := newRegistry(t)
	nb := newNotebook(t, "print('ok')", "1/0", "print('never')")
	stale := map[string]any{"iopub.status.busy": "2020-01-01T00:00:00Z"}
	for i := range 3 {
		if err := nb.SetCellMetadata(i, "execution", stale); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := nbrun.Run(context.Background(), reg, nb, nbrun.Options{Cwd: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	for cell, want := range []bool{false, false, true} {
		if _, md := cellMeta(t, nb, cell); (md["execution"] != nil) != want {
			t.Errorf("cell %d: metadata.execution kept = %v, want %v: %s", cell, !want, want, md["execution"])
		}
	}
}

// HasPapermill counts only a metadata.papermill object; RemovePapermill
// takes the notebook's and every cell's away and nothing else.
func TestHasAndRemovePapermill(t *testing.T) {
	for _, tt := range []struct {
		name  string
		value any
		want  bool
	}{
		{"an object", map[string]any{"parameters": map[string]any{}}, true},
		{"null", nil, false},
		{"a number", 5, false},
		{"a list", []any{1}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			nb := newNotebook(t, "md:# t", "x = 1")
			if err := nb.SetMetadata("papermill", tt.value); err != nil {
				t.Fatal(err)
			}
			if got := nbrun.HasPapermill(nb); got != tt.want {
				t.Errorf("HasPapermill = %v, want %v", got, tt.want)
			}
		})
	}
	nb := newNotebook(t, "md:# t", "x = 1")
	if nbrun.HasPapermill(nb) {
		t.Error("HasPapermill of a notebook without it")
	}
	for i := range nb.Len() {
		if err := nb.SetCellMetadata(i, "papermill", map[string]any{"status": "completed"}); err != nil {
			t.Fatal(err)
		}
		if err := nb.SetCellMetadata(i, "tags", []any{"keep"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := nb.SetMetadata("papermill", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if err := nbrun.RemovePapermill(nb); err != nil {
		t.Fatal(err)
	}
	if nb.Metadata("papermill") != nil {
		t.Errorf("notebook metadata.papermill kept: %s", nb.Metadata("papermill"))
	}
	for i := range nb.Len() {
		if m, md := cellMeta(t, nb, i); m != nil || md["tags"] == nil {
			t.Errorf("cell %d metadata after: %s", i, md)
		}
	}
}
