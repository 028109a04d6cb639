package sessions

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// lastCellRecorder is the real runner, recording which cells were sent as
// their interpreter's last.
type lastCellRecorder struct {
	Executor
	mu    *sync.Mutex
	told  bool
	cells *[]string // "code" or "code (last)", in the order sent
}

func (e *lastCellRecorder) ExitAfterNextCell() {
	e.told = true
	e.Executor.(lastCellTeller).ExitAfterNextCell()
}

func (e *lastCellRecorder) Execute(ctx context.Context, req frames.Request, emit func(frames.Frame)) (frames.Frame, error) {
	e.mu.Lock()
	if e.told {
		*e.cells = append(*e.cells, req.Code+" (last)")
	} else {
		*e.cells = append(*e.cells, req.Code)
	}
	e.mu.Unlock()
	return e.Executor.Execute(ctx, req, emit)
}

// A per-call request's interpreter is told, with its last cell, that no
// other follows, so it leaves as soon as that cell ends; a session's
// interpreter never is. The cells' results read as without it.
func TestPerCallLastCellLeaves(t *testing.T) {
	cases := []struct {
		name      string
		mode      string
		keepGoing bool
		cells     []string
		want      []string
		status    []Status
	}{
		{"per-call: the last cell only", ModePerCall, false, []string{"x = 1", "print(x)", "x + 1"},
			[]string{"x = 1", "print(x)", "x + 1 (last)"}, []Status{StatusOK, StatusOK, StatusOK}},
		// so that what it prints at exit is shown (exitout.go)
		{"per-call: a skipped last cell's interpreter leaves through an empty one", ModePerCall, false, []string{"x = 1", "nope", "x"},
			[]string{"x = 1", "nope", " (last)"}, []Status{StatusOK, StatusError, StatusSkipped}},
		{"per-call, keep going: the last cell runs and is told", ModePerCall, true, []string{"nope", "1"},
			[]string{"nope", "1 (last)"}, []Status{StatusError, StatusOK}},
		{"session: never", ModeSession, false, []string{"x = 1", "x"},
			[]string{"x = 1", "x"}, []Status{StatusOK, StatusOK}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			var mu sync.Mutex
			var sent []string
			start := RunnerStarter(home)
			r := newTestRegistry(t, Config{Home: home, Starters: map[string]Starter{LangPython: func(ctx context.Context, spec Spec) (Executor, error) {
				ex, err := start(ctx, spec)
				if err != nil {
					return nil, err
				}
				return &lastCellRecorder{Executor: ex, mu: &mu, cells: &sent}, nil
			}}})
			req := Request{Mode: tc.mode, KeepGoing: tc.keepGoing}
			for _, c := range tc.cells {
				req.Cells = append(req.Cells, py(c))
			}
			res, _ := eval(t, r, req)
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(sent, tc.want) {
				t.Errorf("sent %q, want %q", sent, tc.want)
			}
			for i, cr := range res.Cells {
				if cr.Status != tc.status[i] || cr.StateLost || cr.Retried {
					t.Errorf("cell %d: %+v; want %s, state kept", i, cr, tc.status[i])
				}
			}
		})
	}
}
