package nbrun

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/notebook"
	"github.com/evalhost/evalhost/sessions"
)

// ErrNoRegistry is returned by Run without a registry.
var ErrNoRegistry = errors.New("nbrun: no sessions registry")

// Options says how Run executes a notebook. The zero value runs every
// non-blank code cell with the registry's defaults.
type Options struct {
	// Cells are the notebook indexes of the code cells to run, in order;
	// nil runs SelectCodeCells(nb, "").
	Cells []int
	// Session names the session (the tool bridge shows it); default "nb".
	Session string
	// Cwd is the cells' working directory; "" is the process's.
	Cwd string
	// Timeout per cell; 0 is the registry's default.
	Timeout time.Duration
	// AllowErrors runs the remaining cells after one fails.
	AllowErrors bool
	// IPython runs the cells through IPython's InteractiveShell.
	IPython bool
	// OnCellStart, when set, is called when a selected cell has started
	// (cell is its notebook index), before any of its output is recorded:
	// its old outputs are gone, its execution count is null and, with
	// Papermill, its metadata says running and the cells the run passed
	// before it completed. It is for saving progress as papermill's
	// cell_start does, so that a run killed mid-cell shows the cell
	// running. The cell's frames wait for it; it must not keep nb.
	OnCellStart func(cell int)
	// OnCellEnd, when set, is called after each selected cell has ended
	// and its outputs are in the notebook (cell is its notebook index), and
	// before the next one starts, e.g. to save the notebook so that an
	// interrupted run keeps what finished. It must not keep nb.
	OnCellEnd func(cell int, res sessions.CellResult)
	// OnIdle, when set, is called when a cell has ended and no other has
	// started IdleAfter later (0: DefaultIdleAfter), while the run goes on;
	// never after Run returns. A caller that saves at each cell's start
	// can leave a cell's end to the next start's save (cells follow each
	// other within a millisecond) and save it here when none follows soon:
	// one save per cell, not two. It must not keep nb.
	OnIdle    func()
	IdleAfter time.Duration
	// OnFrame, when set, sees each frame of a cell (cell is its notebook
	// index) as it is recorded, e.g. to log outputs as they come; the
	// interpreter's ready frame is not shown. It must not block.
	OnFrame func(cell int, fr frames.Frame)
	// Papermill, when set, has Run write papermill's execution metadata
	// (see Papermill) as the run goes, so OnCellEnd sees it too.
	Papermill *Papermill
}

// DefaultIdleAfter is Options.IdleAfter's default: far above the gap
// between one cell's end and the next one's start.
const DefaultIdleAfter = 100 * time.Millisecond

// Result is a notebook run's outcome: sessions' result, whose Cells[i] is
// notebook cell Notebook[i], and the interpreter's version.
type Result struct {
	sessions.Result
	Notebook []int // notebook index of each entry of Result.Cells
	Python   string
}

// FailedCell is the notebook index of the first cell that did not succeed,
// or -1.
func (r Result) FailedCell() int {
	if i := r.Result.FailedCell; i >= 0 && i < len(r.Notebook) {
		return r.Notebook[i]
	}
	return -1
}

// Run executes the selected code cells of nb in order in one fresh
// (per-call) session of reg and records their outputs and execution counts
// into nb as nbclient does; metadata.language_info is set from the
// interpreter. A cell that fails stops the run unless AllowErrors. A cell
// stopped from outside (timeout, cancel, a dead interpreter) keeps its
// partial output and one error output: its KeyboardInterrupt when the
// interrupt raised one, else one saying why (CellTimeoutError,
// CellCancelledError, DeadKernelError); cells that never started keep
// their outputs (with Options.Papermill their metadata says pending). Cancelling ctx interrupts the running cell. The returned
// error is a request the registry refused, or output that could not be
// recorded; nb then holds what was recorded.
func Run(ctx context.Context, reg *sessions.Registry, nb *notebook.Notebook, opt Options) (Result, error) {
	if reg == nil {
		return Result{}, ErrNoRegistry
	}
	cells := opt.Cells
	if cells == nil {
		var err error
		if cells, err = SelectCodeCells(nb, ""); err != nil {
			return Result{}, err
		}
	}
	session := opt.Session
	if session == "" {
		session = "nb"
	}
	// Batch: a notebook's cells build on each other's state; a death
	// ends the run, as papermill's DeadKernelError does, and so does a
	// cell's sys.exit(), as papermill stops there.
	req := sessions.Request{Session: session, Cwd: opt.Cwd, Mode: sessions.ModePerCall,
		KeepGoing: opt.AllowErrors, IPython: opt.IPython, Batch: true}
	for _, i := range cells {
		if i < 0 || i >= nb.Len() || nb.Cell(i).Type != notebook.Code {
			return Result{}, specError("cell %d is not a code cell of the notebook", i)
		}
		req.Cells = append(req.Cells, sessions.Cell{Language: sessions.LangPython, Code: nb.Cell(i).Source, Timeout: opt.Timeout,
			RaisesOK: raisesException(nb, i)})
	}
	res := Result{Notebook: cells, Result: sessions.Result{Status: sessions.StatusOK, FailedCell: -1}}
	run := &runState{nb: nb, rec: NewRecorder(nb), cells: cells, current: -1,
		onCellStart: opt.OnCellStart, onCellEnd: opt.OnCellEnd, onFrame: opt.OnFrame,
		onIdle: opt.OnIdle, idleAfter: opt.IdleAfter}
	if run.idleAfter <= 0 {
		run.idleAfter = DefaultIdleAfter
	}
	if opt.Papermill != nil {
		var err error
		if run.pm, err = startPapermill(opt.Papermill, nb, cells, runsEveryCell(nb, cells), opt.AllowErrors); err != nil {
			return res, fmt.Errorf("write papermill metadata: %w", err)
		}
	}
	if len(req.Cells) == 0 {
		// Nothing to run; papermill still passes every cell of a whole
		// notebook and writes the run's end.
		if run.pm != nil {
			if err := errors.Join(run.pm.pass(nb.Len()), run.pm.finish()); err != nil {
				return res, fmt.Errorf("write papermill metadata: %w", err)
			}
		}
		return res, nil
	}
	req.OnCellEnd = run.cellEnd
	out, err := reg.Eval(ctx, req, run.emit)
	run.mu.Lock()
	run.stopIdle() // the caller's final save follows
	run.mu.Unlock()
	run.idling.Wait() // an OnIdle under way ends first: never after Run
	run.mu.Lock()
	defer run.mu.Unlock()
	run.rec.Flush()
	if run.pm != nil {
		run.keep(run.pm.finish())
	}
	res.Result, res.Python = out, run.python
	if out.Cells == nil {
		res.Result.FailedCell = -1
	}
	if err == nil {
		err = run.err
	}
	return res, err
}

// runState turns one request's frames into notebook outputs. Frames and
// cell ends are recorded under mu, so OnCellEnd sees a notebook no frame
// is being written into.
type runState struct {
	mu          sync.Mutex
	nb          *notebook.Notebook
	rec         *Recorder
	cells       []int
	current     int  // request index of the cell being recorded, -1 before the first
	raised      bool // the interpreter recorded an error output in the current cell
	python      string
	err         error // the first output that could not be recorded
	onCellStart func(int)
	onCellEnd   func(int, sessions.CellResult)
	onFrame     func(int, frames.Frame)
	pm          *papermillRun // nil unless Options.Papermill
	onIdle      func()
	idleAfter   time.Duration
	idle        *time.Timer    // armed by a cell's end, stopped by the next start
	idling      sync.WaitGroup // the idle timer's func, from arming to its end or Stop
}

// emit records a frame of the interpreter's. A cell's first frame (its
// started frame) starts it, and OnCellStart sees it then; a cell stopped
// before it started (stopped, at its end) does not start it so.
func (s *runState) emit(cell int, fr frames.Frame) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fr.Type != frames.TypeReady && cell != s.current {
		s.stopIdle()
		s.start(cell)
		if s.onCellStart != nil {
			s.onCellStart(s.cells[cell])
		}
	}
	s.record(cell, fr)
}

// start begins recording request cell cell.
func (s *runState) start(cell int) {
	s.current, s.raised = cell, false
	s.keep(s.rec.Start(s.cells[cell]))
	// An earlier Jupyter run's timestamps describe outputs this run
	// replaces; nbclient resets them, and evalhost has no kernel
	// messages to time.
	s.keep(s.nb.DeleteCellMetadata(s.cells[cell], "execution"))
	if s.pm != nil {
		s.keep(s.pm.cellStarted(s.cells[cell]))
	}
}

func (s *runState) record(cell int, fr frames.Frame) {
	if fr.Type == frames.TypeReady {
		if s.python == "" && fr.Python != "" {
			s.python = fr.Python
			// As nbclient does with the kernel's kernel_info_reply.
			s.nb.SetLanguageInfo(notebook.PythonLanguageInfo(fr.Python))
		}
		return
	}
	if cell != s.current {
		s.start(cell)
	}
	if fr.Type == frames.TypeError {
		s.raised = true
	}
	s.keep(s.rec.Add(fr))
	if s.onFrame != nil {
		s.onFrame(s.cells[cell], fr)
	}
}

func (s *runState) keep(err error) {
	if err != nil && s.err == nil {
		s.err = err
	}
}

func (s *runState) cellEnd(res sessions.CellResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	started := s.current == res.Index
	switch res.Status {
	case sessions.StatusOK, sessions.StatusSkipped, sessions.StatusError:
	case sessions.StatusCancelled:
		if started && !s.raised {
			s.stopped(res)
		}
	default:
		if !started || !s.raised {
			s.stopped(res)
		}
	}
	if started {
		s.rec.Flush()
	}
	if res.Index < 0 || res.Index >= len(s.cells) {
		return
	}
	if s.pm != nil {
		st := res.Status
		if ExpectedError(s.nb, s.cells[res.Index], st) {
			st = sessions.StatusOK // expected: papermill's cell is completed, its run goes on
		}
		s.keep(s.pm.cellEnded(s.cells[res.Index], st))
	}
	if s.onCellEnd != nil {
		s.onCellEnd(s.cells[res.Index], res)
	}
	s.armIdle()
}

// armIdle starts the wait for OnIdle after a cell's end.
func (s *runState) armIdle() {
	if s.onIdle == nil {
		return
	}
	s.stopIdle()
	var t *time.Timer
	s.idling.Add(1)
	t = time.AfterFunc(s.idleAfter, func() {
		defer s.idling.Done()
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.idle == t { // not stopped by a start or Run's end meanwhile
			s.idle = nil
			s.onIdle()
		}
	})
	s.idle = t
}

// stopIdle ends the wait for OnIdle: a cell started, or the run ended. A
// func already started (it waits for s.mu) sees it stopped and returns.
func (s *runState) stopIdle() {
	if s.idle != nil {
		if s.idle.Stop() {
			s.idling.Done() // its func will not run
		}
		s.idle = nil
	}
}

// stopped records why a cell was stopped from outside when the interpreter
// recorded no error for it (it caught the interrupt, ignored it and was
// killed, or died): an error output after the partial output. One that
// raised (its KeyboardInterrupt) keeps that alone: an execution has one
// error output in Jupyter, and papermill's timed-out cell holds only the
// kernel's KeyboardInterrupt.
func (s *runState) stopped(res sessions.CellResult) {
	name, msg := cellEndName(res.Status), cellEndMessage(res)
	s.record(res.Index, frames.Frame{Type: frames.TypeError, Ename: name, Evalue: msg, Traceback: []string{name + ": " + msg}})
	s.rec.Flush()
}

func cellEndName(st sessions.Status) string {
	switch st {
	case sessions.StatusTimeout:
		return "CellTimeoutError"
	case sessions.StatusCancelled:
		return "CellCancelledError"
	default:
		return "DeadKernelError"
	}
}

func cellEndMessage(res sessions.CellResult) string {
	if res.Message != "" {
		return res.Message
	}
	if res.Status == sessions.StatusTimeout {
		return "the cell timed out"
	}
	return string(res.Status)
}

// runsEveryCell says whether cells are every non-blank code cell of nb, in
// order: a run of the whole notebook, however it was asked for.
func runsEveryCell(nb *notebook.Notebook, cells []int) bool {
	all, err := SelectCodeCells(nb, "")
	return err == nil && slices.Equal(all, cells)
}
