package nbrun

import (
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/evalhost/evalhost/notebook"
	"github.com/evalhost/evalhost/sessions"
)

// Papermill, in Options, has Run write papermill's execution metadata as
// papermill 2 writes it, for what reads a papermill-run notebook:
// scrapbook (the parameters, each cell's duration), papermill's own
// error check (a cell's exception), dashboards (the run's exception and
// times, each cell's status). The notebook's metadata.papermill gets
// input_path, output_path, parameters, start_time, end_time, duration,
// exception (true when a cell failed, else null), environment_variables
// and default_parameters ({} unless already there: papermill 2 leaves
// both empty) and version; other members already there stay. Each cell's
// metadata.papermill is start_time, end_time, duration, status (pending,
// running, completed or failed) and exception. A cell the run does not
// run (left out of Options.Cells, or after a failure) is pending, with no
// times and exception null, whatever an earlier run wrote there. A run of
// the whole notebook records markdown, raw and blank code cells completed
// as it passes them (papermill times every cell; nbclient skips these at
// once); a run of some cells leaves them pending.
type Papermill struct {
	InputPath, OutputPath string
	// Parameters are the parameters injected, as params.Params.Metadata
	// gives them; nil keeps those metadata.papermill records (the cell an
	// earlier run injected still runs with them), else {}.
	Parameters map[string]any
	// Version is metadata.papermill.version: the runner's own, such as
	// "evalhost 0.1.0", never papermill's.
	Version string
}

// HasPapermill says whether nb holds papermill's execution metadata: a
// metadata.papermill object (null or another value is not papermill's).
func HasPapermill(nb *notebook.Notebook) bool {
	return strings.HasPrefix(string(nb.Metadata("papermill")), "{")
}

// RemovePapermill removes papermill's execution metadata from nb: the
// notebook's metadata.papermill and every cell's, whose statuses and times
// would describe a run other than the one whose outputs the cells hold.
// Cells of a type the notebook package cannot edit keep theirs.
func RemovePapermill(nb *notebook.Notebook) error {
	nb.DeleteMetadata("papermill")
	for i := range nb.Len() {
		if err := nb.DeleteCellMetadata(i, "papermill"); err != nil && !errors.Is(err, notebook.ErrReadOnly) {
			return err
		}
	}
	return nil
}

// Papermill's cell statuses.
const (
	pmPending   = "pending"
	pmRunning   = "running"
	pmCompleted = "completed"
	pmFailed    = "failed"
)

// papermillRun writes a run's papermill metadata as it goes.
type papermillRun struct {
	pm      *Papermill
	nb      *notebook.Notebook
	meta    map[string]any // the notebook's metadata.papermill
	start   time.Time
	started map[int]time.Time // when each started cell (notebook index) began

	// A run of the whole notebook records the cells it passes without
	// running (markdown, raw, blank code) as completed, as papermill's
	// cell_start and cell_complete do for every cell.
	whole     bool
	keepGoing bool         // an error does not stop the run
	runs      map[int]bool // the cells (notebook indexes) this run executes
	last      int          // the last of them
	next      int          // the first cell not yet passed
}

// startPapermill writes the run's start: the notebook's metadata with no
// end yet, and every cell pending, as papermill's start resets every cell:
// an earlier run's status on a cell this run leaves alone ("failed",
// exception true) would contradict this run's. whole says the run is of
// the whole notebook (no cell selection), keepGoing that an error does not
// stop it.
func startPapermill(pm *Papermill, nb *notebook.Notebook, cells []int, whole, keepGoing bool) (*papermillRun, error) {
	r := &papermillRun{pm: pm, nb: nb, meta: map[string]any{}, start: now(), started: map[int]time.Time{},
		whole: whole, keepGoing: keepGoing, runs: map[int]bool{}, last: -1}
	for _, i := range cells {
		r.runs[i], r.last = true, max(r.last, i)
	}
	if old := nb.Metadata("papermill"); old != nil {
		// notebook.Members, not encoding/json: a papermill run with a NaN
		// parameter records NaN, and its members must stay.
		if kept, err := notebook.Members(old); err == nil {
			for k, v := range kept {
				r.meta[k] = v
			}
		}
	}
	params := any(pm.Parameters)
	if pm.Parameters == nil {
		params = r.meta["parameters"]
		if raw, ok := params.(json.RawMessage); !ok || !strings.HasPrefix(string(raw), "{") {
			params = map[string]any{}
		}
	}
	for k, v := range map[string]any{
		"input_path": pm.InputPath, "output_path": pm.OutputPath, "parameters": params,
		"start_time": isoTime(r.start), "end_time": nil, "duration": nil, "exception": nil, "version": pm.Version,
	} {
		r.meta[k] = v
	}
	// papermill writes these only into metadata it creates; a value an
	// earlier run (or the author) left stays.
	for _, k := range []string{"environment_variables", "default_parameters"} {
		if _, ok := r.meta[k]; !ok {
			r.meta[k] = map[string]any{}
		}
	}
	if err := r.writeNotebook(); err != nil {
		return nil, err
	}
	for i := range nb.Len() {
		err := r.cell(i, map[string]any{"status": pmPending, "start_time": nil, "end_time": nil, "duration": nil, "exception": nil})
		if err != nil && !errors.Is(err, notebook.ErrReadOnly) {
			return nil, err
		}
	}
	return r, nil
}

// pass records the cells before notebook cell end that the run passed
// without running as completed, once: papermill times each (nbclient skips
// it at once), so each gets a start and an end of its own.
func (r *papermillRun) pass(end int) error {
	if !r.whole {
		return nil
	}
	for ; r.next < end; r.next++ {
		if r.runs[r.next] {
			continue
		}
		start := now()
		end := now()
		err := r.cell(r.next, map[string]any{"status": pmCompleted, "start_time": isoTime(start), "end_time": isoTime(end),
			"duration": seconds(start, end), "exception": false})
		if err != nil && !errors.Is(err, notebook.ErrReadOnly) {
			return err
		}
	}
	return nil
}

func (r *papermillRun) writeNotebook() error { return r.nb.SetMetadata("papermill", r.meta) }

func (r *papermillRun) cell(i int, meta map[string]any) error {
	return r.nb.SetCellMetadata(i, "papermill", meta)
}

// cellStarted marks notebook cell i running.
func (r *papermillRun) cellStarted(i int) error {
	if err := r.pass(i); err != nil {
		return err
	}
	r.next = max(r.next, i+1)
	t := now()
	r.started[i] = t
	return r.cell(i, map[string]any{"status": pmRunning, "start_time": isoTime(t), "end_time": nil, "duration": nil, "exception": false})
}

// cellEnded marks notebook cell i completed or failed; a cell that never
// started stays pending.
func (r *papermillRun) cellEnded(i int, st sessions.Status) error {
	start, ok := r.started[i]
	if !ok {
		return nil
	}
	end := now()
	failed := st != sessions.StatusOK
	status := pmCompleted
	if failed {
		status = pmFailed
		r.meta["exception"] = true
		if err := r.writeNotebook(); err != nil {
			return err
		}
	}
	if err := r.cell(i, map[string]any{"status": status, "start_time": isoTime(start), "end_time": isoTime(end),
		"duration": seconds(start, end), "exception": failed}); err != nil {
		return err
	}
	// The cells after the last one run are passed when the run goes on
	// past it; those between two run cells, when the next one starts.
	if i == r.last && r.goesOn(st) {
		return r.pass(r.nb.Len())
	}
	return nil
}

// goesOn says whether the run goes on past a cell that ended st, as the
// registry runs a batch: on after ok, and with keepGoing after an error or
// a timeout; never after a death or a cancel.
func (r *papermillRun) goesOn(st sessions.Status) bool {
	switch st {
	case sessions.StatusOK:
		return true
	case sessions.StatusError, sessions.StatusTimeout:
		return r.keepGoing
	}
	return false
}

// finish writes the run's end.
func (r *papermillRun) finish() error {
	end := now()
	r.meta["end_time"], r.meta["duration"] = isoTime(end), seconds(r.start, end)
	return r.writeNotebook()
}

// now is the time to microseconds, as Python's datetime holds it.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// isoTime is Python's datetime.isoformat() of an aware UTC time, as
// papermill writes it: microseconds unless there are none.
func isoTime(t time.Time) string {
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05+00:00")
	}
	return t.Format("2006-01-02T15:04:05.000000+00:00")
}

// seconds is timedelta.total_seconds() of end-start.
func seconds(start, end time.Time) float64 {
	return float64(end.Sub(start).Microseconds()) / 1e6
}
