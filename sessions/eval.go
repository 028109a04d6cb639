package sessions

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
)

// Emit receives every frame of a request, tagged with its cell index. It is
// called from one goroutine at a time per request.
type Emit func(cell int, f frames.Frame)

var errTimedOut = errors.New("cell timed out")

// Job is a request that holds its place in its session's queue.
type Job struct {
	reg  *Registry
	req  Request
	s    *session
	turn *turn
	// argvSet holds the languages whose interpreter has req.Argv: set once,
	// a cell's change to it lasts into the next cell, as in one script.
	argvSet map[string]bool
	// envSet holds the languages whose interpreter has req.Env: set once,
	// as its command starts, so a cell's change to a variable lasts into
	// the next cell, as in one script.
	envSet map[string]bool
	// cwdEntered holds the languages whose interpreter took the session's
	// cwd for this request (Request.EnterCwd).
	cwdEntered map[string]bool
	// envTold holds the languages whose interpreter's start-only
	// variables this request has compared with its Environ (cmdenv.go).
	envTold map[string]bool
	// interruptTaken: the cell just run took the caller's interrupt
	// (tookInterrupt); Run goes on with the later cells.
	interruptTaken bool
}

// Queue validates req and takes its place in the session's queue at once,
// without blocking: requests queued in arrival order run in that order.
func (r *Registry) Queue(req Request) (*Job, error) {
	if r.cfgErr != nil {
		return nil, r.cfgErr
	}
	if err := req.validate(r.cfg.DefaultTimeout); err != nil {
		return nil, err
	}
	if req.ID == "" {
		req.ID = r.nextID()
	}
	s, t, err := r.lookup(&req)
	if err != nil {
		return nil, err
	}
	return &Job{reg: r, req: req, s: s, turn: t}, nil
}

// Key is the key of the session the job runs in.
func (j *Job) Key() Key { return j.s.key }

// Eval queues req and runs it: Queue then Run.
func (r *Registry) Eval(ctx context.Context, req Request, emit Emit) (Result, error) {
	job, err := r.Queue(req)
	if err != nil {
		return Result{}, err
	}
	return job.Run(ctx, emit)
}

// Run waits for the job's turn and runs its cells. Cancelling ctx while it is
// queued gives a result whose cells are all cancelled. A per-call session is
// shut down before Run returns, whatever happened.
//
// A request queued behind a cell that detaches (Cell.OnTimeout) gets no
// result but a *SessionBusyError. A cell that detaches holds the session
// until its job ends: the request's later cells are skipped, also with
// KeepGoing, and a per-call session lives on until the job ends.
func (j *Job) Run(ctx context.Context, emit Emit) (Result, error) {
	if emit == nil {
		emit = func(int, frames.Frame) {}
	}
	var job *detachedJob // the cell that detached, which takes the turn over
	if j.req.Mode == ModePerCall {
		defer func() {
			if job == nil {
				j.reg.endPerCall(j.s)
			}
		}()
	}
	if err := j.turn.wait(ctx); err != nil {
		if errors.Is(err, ErrSessionBusy) {
			return Result{}, err
		}
		return j.allCancelled(), nil
	}
	ctx, release := j.s.holdRun(ctx)
	defer release()
	defer func() {
		if job == nil {
			j.turn.release()
		} else {
			close(job.handedOff)
		}
	}()
	res := Result{Status: StatusOK, FailedCell: -1, Cells: make([]CellResult, len(j.req.Cells))}
	last := j.lastCells()
	stop := "" // why a batch's later cells are not run
	for i, cell := range j.req.Cells {
		if j.interruptTaken {
			j.interruptTaken, ctx = false, afterInterrupt(ctx)
		}
		cr := &res.Cells[i]
		switch {
		case stop != "":
			*cr = CellResult{Index: i, Language: cell.Language, Title: cell.Title, Status: StatusSkipped, Message: stop}
		case job != nil:
			*cr = CellResult{Index: i, Language: cell.Language, Title: cell.Title, Status: StatusSkipped,
				Message: fmt.Sprintf("not run: cell %d runs on as job %s and holds the session until it ends", job.c.index, job.id)}
		case ctx.Err() != nil:
			*cr = CellResult{Index: i, Language: cell.Language, Title: cell.Title}
			cr.markNotStarted()
		case res.FailedCell >= 0 && !j.req.KeepGoing:
			*cr = CellResult{Index: i, Language: cell.Language, Title: cell.Title, Status: StatusSkipped}
		default:
			l, ok := last[cell.Language]
			*cr, job = j.runCell(ctx, i, cell, emit, ok && l == i)
		}
		if j.req.Batch && stop == "" {
			stop = batchStop(i, cr, j.req.Argv != nil)
		}
		if j.req.OnCellEnd != nil {
			j.req.OnCellEnd(*cr)
		}
		if cr.Status != StatusOK && cr.Status != StatusSkipped && res.FailedCell < 0 && !(cell.RaisesOK && cr.Status == StatusError) {
			res.FailedCell, res.Status = i, cr.Status
		}
	}
	if job == nil && (res.FailedCell >= 0 || stop != "") {
		// A batch stopped at sys.exit() skipped cells without a failure:
		// its exit output (atexit, finalizers, threads) is shown as after one.
		j.exitSkipped(ctx, &res, last, emit)
	}
	return res, nil
}

// exitedItself says whether a Python interpreter's death was its own exit
// with a status (os._exit(N), a C library's exit(N)), not a signal nor a
// gateway's report.
func (c *cellRun) exitedItself(death *backend.DeathError) bool {
	return c.cell.Language == LangPython && death.Signal == "" && death.Reason == "" && death.ExitCode >= 0
}

// batchStop is why a batch request's cells after cell i are not run, or ""
// when they are (Request.Batch); it names cells from 1, as people count.
// script: the request is a script's (it has Argv), which a raised
// KeyboardInterrupt ends; a notebook's cell raising one is an error like
// any other, as in Jupyter.
func batchStop(i int, cr *CellResult, script bool) string {
	switch {
	case cr.Status == StatusKilled && cr.Exited:
		return fmt.Sprintf("not run: cell %d ended the script: its interpreter exited with status %d", i+1, cr.ExitStatus)
	case cr.Status == StatusKilled:
		return fmt.Sprintf("not run: the interpreter died in cell %d and its state is gone", i+1)
	case cr.StateLost:
		// A timeout or cancel that had to kill the interpreter: later
		// cells would start on a fresh, empty one.
		return fmt.Sprintf("not run: the interpreter of cell %d was stopped and its state is gone", i+1)
	case cr.Exited:
		return fmt.Sprintf("not run: cell %d ended the script with sys.exit()", i+1)
	case script && cr.RaisedKeyboardInterrupt():
		return fmt.Sprintf("not run: cell %d ended the script with KeyboardInterrupt", i+1)
	}
	return ""
}

// lastCells maps each language to the index of its last cell in a per-call
// request: its interpreter runs nothing after that one, so it may leave as
// soon as the cell ends. Nil for a session's request, whose interpreters
// stay.
func (j *Job) lastCells() map[string]int {
	if j.req.Mode != ModePerCall {
		return nil
	}
	last := map[string]int{}
	for i, c := range j.req.Cells {
		last[c.Language] = i
	}
	return last
}

func (j *Job) allCancelled() Result {
	res := Result{Status: StatusCancelled, FailedCell: 0, Cells: make([]CellResult, len(j.req.Cells))}
	for i, c := range j.req.Cells {
		res.Cells[i] = CellResult{Index: i, Language: c.Language, Title: c.Title}
		res.Cells[i].markNotStarted()
		if j.req.OnCellEnd != nil {
			j.req.OnCellEnd(res.Cells[i])
		}
	}
	return res
}

// cellRun carries one cell through its attempts.
type cellRun struct {
	j       *Job
	index   int
	cell    Cell
	timeout time.Duration
	res     CellResult
	sink    *cellSink
	emit    func(frames.Frame) // through the sink
	out     func(frames.Frame) // straight to the caller

	runNonce string
	caught   bool // the cell handled the interrupt and ended on its own
	// keyboardInterrupt: the attempt's last error frame is a
	// KeyboardInterrupt's (set as frames come, read once Execute returned).
	keyboardInterrupt atomic.Bool
	// last: no later cell of the request runs in this interpreter (lastCells);
	// leaving: its interpreter was told to exit once the cell ends.
	last, leaving bool

	dj *detachedJob // set when the cell may detach (Cell.OnTimeout)
	// stoppedBefore is the session's stopped time (session.stopped) when
	// the cell began: finish takes what it grew by as the cell's.
	stoppedBefore time.Duration
	// mu guards res.StateLost and res.Retried, which a detaching cell's
	// snapshot reads while its execution goes on.
	mu sync.Mutex
}

// lose records that the cell lost its interpreter's state; retried that
// the cell runs again. The loss is the request's own: its later cells are
// not told of it as news (statelost.go).
func (c *cellRun) lose(retried bool) {
	c.markLost(retried)
	c.j.see(c.cell.Language, ownLoss)
}

func (c *cellRun) markLost(retried bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.res.StateLost = true
	c.res.Retried = c.res.Retried || retried
}

// nonce returns the cell's random run-id part, made once.
func (c *cellRun) nonce() string {
	if c.runNonce == "" {
		c.runNonce = newRunNonce()
	}
	return c.runNonce
}

// newSink is a cell's output sink, with the request's options where it
// has them, else the registry's.
func (j *Job) newSink() *cellSink {
	if j.req.Sink != nil {
		return newCellSink(*j.req.Sink)
	}
	return newCellSink(j.reg.cfg.Sink)
}

// runCell runs one cell; the job is non-nil when the cell detached.
func (j *Job) runCell(ctx context.Context, i int, cell Cell, emit Emit, last bool) (CellResult, *detachedJob) {
	start := time.Now()
	c := &cellRun{j: j, index: i, cell: cell, timeout: ClampTimeout(cell.Timeout, j.reg.cfg.DefaultTimeout),
		res: CellResult{Index: i, Language: cell.Language, Title: cell.Title, Tags: cell.Tags}, last: last}
	c.sink = j.newSink()
	c.stoppedBefore = j.s.stopped()
	c.out = func(f frames.Frame) { emit(i, f) }
	c.emit = func(f frames.Frame) { c.out(c.sink.frame(f)) }
	if cell.OnTimeout == OnTimeoutDetach {
		return c.runDetachable(ctx, start)
	}
	c.execute(ctx)
	c.finish(start)
	return c.res, nil
}

// finish completes the result once the cell's execution is over.
func (c *cellRun) finish(start time.Time) {
	c.res.DurationMs = float64(time.Since(start).Microseconds()) / 1000
	if c.cell.Language == LangPython { // Suspend stops no other language's
		c.res.StoppedMs = float64((c.j.s.stopped() - c.stoppedBefore).Microseconds()) / 1000
	}
	c.res.Output = c.sink.dump()
}

func (c *cellRun) execute(ctx context.Context) {
	s := c.j.s
	if c.cell.Reset {
		if err := s.beginReset(); err != nil {
			c.fail(StatusError, err.Error())
			return
		}
		s.killAll(whyResetCell)
		s.endReset()
		c.lose(false)
		c.j.lostAll()
	}
	// The cell's timeout runs from when it is first sent: starting an
	// interpreter is bounded by the start timeout, and "timed out after 1
	// seconds" should mean the code ran for 1 s. A retry shares the deadline.
	var cellCtx context.Context
	for attempt := 0; ; attempt++ {
		if attempt == 0 && c.j.req.Batch && s.dead(c.cell.Language) {
			// Its interpreter ended between cells (a thread's os._exit, a
			// kill from outside): this cell would run without the state the
			// cells before it made, so none is started for it.
			how := c.diedBetween()
			s.drop(c.cell.Language, whyEndedBetween)
			c.lose(false)
			c.fail(StatusKilled, c.endedBefore(how))
			return
		}
		// A dead interpreter replaced here is told as a loss (tellLoss).
		ex, started, notes, err := s.executor(ctx, c.cell.Language, c.j.req.Environ)
		if err != nil {
			c.startFailed(ctx, err)
			return
		}
		if started {
			c.emit(ex.Ready())
			for _, n := range notes {
				c.emit(n)
			}
		}
		c.tellLoss()
		c.tellStartOnlyEnv()
		if cellCtx == nil {
			// A cell that may detach runs to its maxRuntime; its timeout
			// only detaches it (see runDetachable).
			limit := c.timeout
			if c.dj != nil {
				limit = c.dj.maxRuntime
				c.dj.markSent()
			}
			var stop func()
			cellCtx, stop = s.startDeadline(ctx, limit, c.cell.Language)
			defer stop()
		}
		if cellCtx.Err() != nil {
			// Cancelled or timed out before the cell was sent: nothing to
			// interrupt, and the interpreter keeps its state.
			c.startFailed(cellCtx, cellCtx.Err())
			return
		}
		done, err := c.attempt(cellCtx, ex, attempt, started)
		c.flushHeld()
		if err == nil {
			c.ended(cellCtx, ex, &done)
		}
		if c.settle(cellCtx, done, err, attempt) {
			c.closedUnder(cellCtx)
			return
		}
		c.lose(true)
	}
}

// ended takes an attempt's done frame before it is emitted and settled:
// whose interrupt it was, and an interpreter the cell ended itself.
func (c *cellRun) ended(cellCtx context.Context, ex Executor, done *frames.Frame) {
	if done.Cancelled && cellCtx.Err() == nil {
		// A SIGINT no timeout, cancel or Ctrl-C of ours sent (the
		// cell's own os.kill, another process's): the runner cannot
		// tell it from ours, but nobody cancelled the cell. Its
		// KeyboardInterrupt is the cell's error, as under python3.
		done.Cancelled = false
	}
	if tookInterrupt(cellCtx, *done) {
		c.j.interruptTaken = true
	}
	if cellCtx.Err() != nil && !done.Cancelled && !errors.Is(context.Cause(cellCtx), backend.ErrInterruptWait) {
		// The timeout or the caller's cancel came while the cell
		// ran, so the backend interrupted it, and the cell caught
		// the KeyboardInterrupt: it must not read as if it had
		// completed. (A cell that ended just as the context did,
		// before the backend saw it end, is counted here too; the
		// notice allows for it.) An interrupt the caller waits for
		// (python3's Ctrl-C) is the cell's to handle: what it did
		// then, finish or sys.exit(N), is its outcome.
		done.Cancelled, c.caught = true, true
	}
	c.emit(*done)
	if !ex.Alive() && !c.leaving {
		// The cell ended its own interpreter (an sh cell's exit):
		// the next cell of this language starts afresh.
		c.lose(false)
	}
}

// attempt runs the cell once. The session's cwd goes only to a fresh
// interpreter: after that a cell's own chdir or cd lasts, as in Jupyter,
// unless the request enters it (EnterCwd: its first cell of each language).
// The request's argv and Env go to the first cell of each language, and
// again to a fresh interpreter (a reset, a retry): the request's cells are
// one script, whose own changes to its command line (shift, sys.argv) and
// environment last. They go again with the next cell when a cell could not apply them
// (backend.IsSetupError).
func (c *cellRun) attempt(ctx context.Context, ex Executor, attempt int, fresh bool) (done frames.Frame, err error) {
	// The run id is what the tool bridge accepts calls under while the cell
	// runs. Request ids repeat (a client may reuse one once its request is
	// done), so a random part keeps a process a cell left behind, or another
	// session, from calling tools as a later cell.
	run := c.j.req.ID + "-" + strconv.Itoa(c.index) + "-" + c.nonce()
	if attempt > 0 {
		run += "-retry"
	}
	req := frames.Request{ID: run, Code: c.cell.Code, Run: run,
		Filename: c.cell.File, FirstLine: c.cell.Line, Module: c.cell.Module}
	if c.cell.Language == LangPython {
		// Every cell of a request with argv is a script's, not only the
		// first, which carries the argv: its error is reported as python3's.
		req.Script, req.InScript = c.cell.Script, c.j.req.Argv != nil
		// A batch run per call (evalhost run) is python3's process: its
		// interpreter's exit says what a cell's streams lost, as python3's.
		req.ExitReports = req.InScript && c.j.req.Batch && c.j.req.Mode == ModePerCall
		req.Terminal = c.j.req.Terminal
	}
	if req.Module != "" {
		req.Code = ModuleCode(req.Module)
	}
	enter := c.j.req.EnterCwd && !c.j.cwdEntered[c.cell.Language]
	if c.j.s.takeUnset(c.cell.Language) || fresh || enter {
		req.Cwd = c.j.s.key.Cwd
	}
	setsEnv := len(c.j.req.Env) > 0 && (fresh || !c.j.envSet[c.cell.Language])
	if setsEnv {
		req.Env = requestEnv(c.j.req.Env)
	}
	tookEnv := c.followEnv(&req)
	// A cell whose cwd, env or argv could not be applied did not run, and
	// its interpreter lacks them: the next cell (--keep-going) sends them
	// again.
	var setupFailed atomic.Bool
	c.keyboardInterrupt.Store(false)
	emit := func(f frames.Frame) {
		if backend.IsSetupError(f) {
			setupFailed.Store(true)
		}
		if f.Type == frames.TypeError {
			c.keyboardInterrupt.Store(f.KeyboardInterrupt)
		}
		c.emit(f)
	}
	defer func() {
		if err == nil && setupFailed.Load() && req.Cwd != "" {
			c.j.s.markUnset(c.cell.Language)
		}
		if err == nil && !setupFailed.Load() {
			tookEnv()
			if setsEnv {
				c.j.envSet = setLang(c.j.envSet, c.cell.Language)
			}
			if req.Cwd != "" && c.j.req.EnterCwd {
				c.j.enteredCwd(c.cell.Language)
			}
		}
	}()
	if c.j.req.Argv != nil && (fresh || !c.j.argvSet[c.cell.Language]) {
		req.Argv, req.File = c.j.req.Argv, c.j.req.File
		defer func() {
			if err == nil && !setupFailed.Load() {
				c.j.argvSet = setLang(c.j.argvSet, c.cell.Language)
			}
		}()
	}
	if hook := c.j.reg.cfg.RunHook; hook != nil {
		info := RunInfo{Session: c.j.s.key.Session, Run: run, Request: c.j.req.ID, Cell: c.index}
		hook(info, true)
		defer hook(info, false)
	}
	if l, ok := ex.(lastCellTeller); ok && c.last && c.dj == nil {
		l.ExitAfterNextCell()
		c.leaving = true
	}
	if streams := c.j.req.Streams; streams != nil && c.dj == nil {
		if l, ok := ex.(streamLender); ok {
			return l.ExecuteStreams(ctx, req, emit, func(t frames.Type, p []byte) {
				if out := c.sink.sink.Lend(t, p); len(out) > 0 {
					streams(c.index, t, out)
				}
			})
		}
	}
	return ex.Execute(ctx, req, emit)
}

// setLang is m (made when nil) with lang set.
func setLang(m map[string]bool, lang string) map[string]bool {
	if m == nil {
		m = map[string]bool{}
	}
	m[lang] = true
	return m
}

// settle records an attempt's outcome; false means retry the cell.
func (c *cellRun) settle(ctx context.Context, done frames.Frame, err error, attempt int) bool {
	timedOut := errors.Is(context.Cause(ctx), errTimedOut)
	var death *backend.DeathError
	switch {
	case err == nil:
		c.settleDone(done, timedOut)
	case errors.As(err, &death):
		return c.settleDeath(ctx, death, timedOut, attempt)
	case errors.Is(err, backend.ErrKilled):
		c.j.s.drop(c.cell.Language, whyStopped)
		c.lose(false)
		if timedOut {
			c.timedOut(true)
		} else {
			c.res.Status = StatusCancelled
			c.res.Message = "cancelled; the interpreter did not stop within the grace window and was killed"
			if errors.Is(context.Cause(ctx), backend.ErrInterruptWait) {
				c.res.Message = "interrupted; the cell was still at it when its timeout ran out, and its interpreter was killed"
			}
		}
	case errors.Is(err, backend.ErrClosed):
		// The session was closed (or killed) under the cell: the
		// interpreter and its state are gone, and a retry would only
		// meet a closed session. Or it died on its own between the
		// cell before and this one's start (diedBetween).
		how := ""
		if ctx.Err() == nil {
			how = c.diedBetween()
		}
		c.j.s.drop(c.cell.Language, whyClosed)
		c.lose(false)
		status := StatusKilled
		if ctx.Err() != nil {
			status = StatusCancelled
		}
		if how != "" {
			c.fail(status, c.endedBefore(how))
			break
		}
		c.fail(status, "the interpreter was stopped while the cell ran (its session was closed or killed); its state is gone")
	case ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		// The context ended between our check and the backend's, so the
		// backend never sent the cell: it did not run and the interpreter
		// keeps its state.
		c.startFailed(ctx, err)
	default:
		c.j.s.drop(c.cell.Language, "was stopped after an error in another request's cell: "+err.Error())
		c.lose(false)
		c.fail(StatusError, err.Error())
	}
	return true
}

// endedBefore is the message of a cell whose interpreter ended before it
// (diedBetween's how, when known).
func (c *cellRun) endedBefore(how string) string {
	if how != "" {
		how = " (" + how + ")"
	}
	return "the " + c.cell.Language + " interpreter ended before this cell" + how + "; its state is gone, so this cell and the later ones are not run"
}

// settleDone records the result the cell's done frame gives.
func (c *cellRun) settleDone(done frames.Frame, timedOut bool) {
	c.res.ExecutionCount = done.ExecutionCount
	c.res.Exited = done.Exit
	if c.j.req.Batch && c.cell.Language == LangPython {
		c.res.Signal = done.Signal // died of it as it ended: python3 would have
	}
	switch {
	case done.Cancelled && timedOut:
		c.timedOut(false)
	case done.Cancelled:
		c.res.Status = StatusCancelled
	case done.Status == frames.StatusOK:
		c.res.Status = StatusOK
	default:
		c.res.Status = StatusError
	}
	// A sys.exit in a finally that the timeout's or a client's interrupt
	// ran is no script's exit: its status is the timeout's, not N.
	if c.res.Status == StatusError {
		c.res.ExitStatus = done.ExitStatus
		if done.ExitPrints {
			c.res.ExitMessage = &done.ExitMessage
		}
		if c.keyboardInterrupt.Load() && !done.Exit && c.cell.Language == LangPython {
			// Raised, not an interrupt of ours (that is cancelled):
			// python3 dies of SIGINT then, which a shell reports as 130.
			c.res.ExitStatus = sigintStatus
		}
	}
	if c.caught {
		c.res.Message = caughtInterrupt
		c.notice("[" + caughtInterrupt + "]\n")
	}
	c.guardMemory()
}

// settleDeath records an interpreter's death under the cell; false when the
// cell is to be retried once on a fresh one.
func (c *cellRun) settleDeath(ctx context.Context, death *backend.DeathError, timedOut bool, attempt int) bool {
	c.lose(false)
	retry := ctx.Err() == nil && attempt == 0 && !c.detached() && !c.j.req.Batch
	if retry {
		// Said before the dead one is cleaned up: a remote kernel's
		// delete can take a while (Jupyter answers 500 mid-restart).
		c.notice(fmt.Sprintf("[interpreter died (%s); restarted it and retrying the cell once]\n", death.How()))
	}
	c.j.s.drop(c.cell.Language, "died ("+death.How()+") in another request's cell")
	if retry {
		return false
	}
	if attempt > 0 {
		c.fail(StatusKilled, "interpreter died twice: "+death.How())
	} else if timedOut {
		c.timedOut(true)
	} else if c.j.req.Batch && ctx.Err() == nil && c.exitedItself(death) {
		// os._exit(N) or a C exit(N): the script ended its process,
		// as python3's would end (ExitStatus).
		c.res.Exited, c.res.ExitStatus = true, death.ExitCode
		c.fail(StatusKilled, death.Error()+" (the cell's os._exit() or a C exit(), which ends a script); not retried, and the later cells are not run")
	} else if c.j.req.Batch && ctx.Err() == nil {
		if c.cell.Language == LangPython {
			c.res.Signal = death.Signum // python3 would have died of it
		}
		c.fail(StatusKilled, death.Error()+"; not retried, and the later cells are not run: they would start on a fresh interpreter without this one's state")
	} else if c.detached() && ctx.Err() == nil {
		c.fail(StatusKilled, "interpreter died while the job ran ("+death.How()+"); not retried, because running it again would repeat its side effects")
	} else {
		c.fail(StatusKilled, death.Error())
	}
	return true
}

// flushHeld sends what the sink held back at the end of the cell's output
// (a UTF-8 sequence the cell never finished), so live consumers see the
// same text as the summary.
func (c *cellRun) flushHeld() {
	if c.dj != nil {
		c.dj.flushHeld()
		return
	}
	for _, f := range c.sink.held() {
		c.out(f)
	}
}

// timeoutNotice is the line a timed-out cell's output ends with. The seconds
// are rounded as the reference runtime rounds them (at least 1), so a 1.5 s
// timeout says 2, not the 1 that truncation gave.
func timeoutNotice(d time.Duration) string {
	return fmt.Sprintf("Command timed out after %d seconds\n", max(1, int64(math.Round(d.Seconds()))))
}

// caughtInterrupt says why a cell that ended without a KeyboardInterrupt
// is not ok. It does not claim the cell's work was cut short: a cell that
// finished just as the interrupt came reads the same to the host.
const caughtInterrupt = "the cell caught the interrupt (KeyboardInterrupt) and ended on its own, or finished just as it came; its work may be incomplete"

func (c *cellRun) timedOut(killed bool) {
	c.res.Status = StatusTimeout
	if c.dj != nil {
		// A detachable cell's only deadline is its maxRuntime.
		c.notice(timeoutNotice(c.dj.maxRuntime))
		c.res.Message = fmt.Sprintf("the job ran past its maxRuntime (%s) and was stopped", c.dj.maxRuntime)
		if killed {
			c.res.Message += "; the interpreter did not stop within the grace window and was killed"
		}
		return
	}
	c.notice(timeoutNotice(c.timeout))
	if killed {
		c.res.Message = "timed out; the interpreter did not stop within the grace window and was killed"
	}
}

func (c *cellRun) startFailed(ctx context.Context, err error) {
	if errors.Is(context.Cause(ctx), errTimedOut) {
		c.timedOut(false)
		return
	}
	if errors.Is(context.Cause(ctx), ErrSessionClosed) {
		err = ErrSessionClosed
	} else if ctx.Err() != nil {
		// Its interpreter was starting, or the cell not yet sent: nothing
		// of it ran, as for a cell the cancellation came before.
		c.res.markNotStarted()
		return
	}
	if errors.Is(err, ErrSessionClosed) {
		c.fail(StatusCancelled, "not run: "+err.Error())
		return
	}
	c.fail(StatusError, "cannot start the interpreter: "+err.Error())
}

func (c *cellRun) fail(status Status, msg string) {
	c.res.Status = status
	c.res.Message = msg
	c.notice("[" + msg + "]\n")
}

// notice puts a line of the host's own into the cell's stderr, so every
// consumer (live stream, tail, artifact) sees it.
func (c *cellRun) notice(text string) {
	c.emit(frames.Frame{Type: frames.TypeStderr, Data: text})
}

type unsupportedLanguageError struct{ lang string }

func (e *unsupportedLanguageError) Error() string {
	return fmt.Sprintf("no backend for language %q", e.lang)
}
