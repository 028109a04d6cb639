package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/tidwall/gjson"
	"golang.org/x/sys/unix"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/bridge"
	"github.com/evalhost/evalhost/daemon"
	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/timeline"
	"github.com/evalhost/evalhost/internal/trustdir"
	"github.com/evalhost/evalhost/serve"
	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

// attachedID is the id of an attached run's one request.
const attachedID = "run"

// runAttached runs the cells in the session f.session of the background
// process (started on first use), rendering its replies exactly as a
// one-shot run renders its own: same output, exit codes, Ctrl-C (first
// cancels, second kills the session's interpreters), --json and tools (a
// cell's tool call comes back here and runs here).
func runAttached(cells []sessions.Cell, f runFlags, tools bridge.Tools, stdout, stderr io.Writer) int {
	home, cwd, err := attachedDirs(f)
	if err != nil {
		fmt.Fprintf(stderr, "evalhost run: %v\n", err)
		return exitUsage
	}
	eval, err := attachedEval(cells, f, home, cwd)
	if err != nil {
		fmt.Fprintf(stderr, "evalhost run: %v\n", err)
		return exitFailed
	}
	if !f.json && f.maxOutput == 0 && !f.detach {
		// The cells' bytes come here as written, to this command's
		// terminal, if it has one: its cells are told, as a one-shot
		// run's are, and the session's next command's are not.
		if t := terminalOf(stdout, stderr).request(); t != nil {
			eval["terminal"] = t
		}
	}
	defer catchSIGPIPE()()
	var cur atomic.Pointer[daemon.Client] // the connection, or the one the cells went to again
	ctx, interrupted, sigs := attachedInterrupts(&cur)
	timeline.Mark("connect")
	// Sent with the connection: a process stopped or replaced between its
	// hello and the cells took none of them, and they go to the next one.
	cfg := daemon.DialConfig{Paths: daemon.PathsFor(home), Version: daemon.BuildIdentity(version),
		Command: daemonCommand(home, f.backend), Accept: acceptBackend(f.backend)}
	c, err := daemon.ConnectSend(context.Background(), cfg, eval)
	if err != nil {
		interrupted.stop()
		fmt.Fprintf(stderr, "evalhost run: %v\n", err)
		if errors.As(err, new(*backendRefused)) {
			return exitUsage
		}
		return exitFailed
	}
	defer c.Close()
	cur.Store(c)
	timeline.Mark("attached", "pid", c.Hello.PID)
	showNotices(c, stderr)
	settings := commandDaemonSettings(home, f.choice())
	showSettings(c, settings, stderr)
	ownStderr := stderr // stoppedByOutput's, past the guard
	stdout = guardedWriter{stdout, interrupted, 0}
	stderr = guardedWriter{stderr, interrupted, 1}
	out, streams, flush := runRenderer(f, stdout, stderr, interrupted)
	defer flush()
	a := &attached{c: c, session: f.session, cwd: cwd, paths: daemon.PathsFor(home), tools: tools, out: out, emit: timedEmit(out.frame),
		streams: streams, signals: sigs, calls: map[string]context.CancelFunc{}}
	renderEnd := timedCellEnd(out.cellEnd)
	a.cellEnd = func(r sessions.CellResult) {
		if r.Job != "" {
			a.job = r.Job
		}
		renderEnd(r)
		r.Output = streamsink.Dump{} // shown; exitCode needs the rest
		a.cells = append(a.cells, r)
	}
	res, err := a.readCancelling(ctx)
	if errors.Is(err, errNotRun) {
		// The process was ending when the cells came (its idle end, a
		// stop) and ran none of them: the next one runs them.
		if c, err = daemon.ConnectSend(context.Background(), cfg, eval); err == nil {
			defer c.Close()
			cur.Store(c)
			a.c = c
			showNotices(c, stderr)
			showSettings(c, settings, stderr)
			res, err = a.readCancelling(ctx)
		}
	}
	sigs.end()
	a.endCalls()
	if c, ok := tools.(io.Closer); ok {
		c.Close() // what the tools left running ends with the command, as in a one-shot run
	}
	interrupts := interrupted.stop()
	if code, stopped := interrupted.stoppedByOutput(interrupts, ownStderr, nil); stopped {
		return code
	}
	if err != nil {
		fmt.Fprintf(stderr, "evalhost run: %v\n", err)
		return exitFailed
	}
	timeline.Mark("end", "status", res.Status)
	out.end(res)
	return a.exit(res, f.json, interrupts, interrupted, stderr)
}

// attachedDirs is an attached run's home and its session's directory
// (sessionDir), or the usage error that refuses them.
func attachedDirs(f runFlags) (home, cwd string, err error) {
	if home, err = evalhostHome(); err != nil {
		return "", "", err
	}
	if err = checkDaemonEnv(home); err != nil {
		return "", "", err
	}
	if f.backend != "" || !f.shared {
		// Refused here, not by the process it would start (whose log
		// no one reads): an unknown name, a private local gateway.
		if _, err = f.starters(home); err != nil {
			return "", "", err
		}
	}
	if cwd, err = runDir(f.cwd); err != nil {
		return "", "", err
	}
	return home, sessionDir(cwd), nil
}

// exit says what the end of the request leaves untold (the process ended
// under it, a cell detached as a job, the session's interpreter ended with
// the script) and gives run's exit status.
func (a *attached) exit(res sessions.Result, asJSON bool, interrupts int, interrupted *interrupts, stderr io.Writer) int {
	c := a.c
	if why := c.Ending(); why != "" {
		// The process ended under the run: its cell was interrupted by
		// that, not by a Ctrl-C, and the session went with it.
		fmt.Fprintf(stderr, "evalhost run: %v\n", a.endedError(&daemon.EndedError{PID: c.Hello.PID, Why: why}))
		if res.Status != sessions.StatusOK {
			return exitFailed
		}
	}
	if res.Status == sessions.StatusDetached && interrupts == 0 {
		// What --detach asked for: the cell goes on, the command is done.
		fmt.Fprintf(stderr, "[evalhost: %s goes on in session %s: \"evalhost jobs %s\" shows its output, --wait waits for it, --stop stops it]\n",
			a.job, trustdir.Shown(a.session), a.job)
		if first, n := skippedAfterJob(a.cells); n > 0 {
			fmt.Fprintf(stderr, "[%s not run: %s holds the session until it ends]\n", cellSpan(first, n), a.job)
		}
		return exitOK
	}
	if res.Status == sessions.StatusCancelled && interrupts == 0 && interrupted.fatal.Load() == 0 && !interrupted.quitBy.Load() {
		// Not by this command's Ctrl-C: another command ended its session
		// (evalhost kill) while its cells waited in the queue, and they
		// ran nothing. A failure, as for the command whose cell that kill
		// stopped; 130 says the user interrupted this one.
		return exitFailed
	}
	// As a one-shot run ends: the session's interpreter takes the signals
	// passed on and runs the cells as a script (batch), so its fate is the
	// script's; the renderer has said what of the session's state it took.
	if lost := sessionEnded(res); lost != "" && !asJSON {
		fmt.Fprintf(stderr, "[evalhost: the interpreter of session %s %s; its state is gone, and the next command in it starts a fresh one]\n",
			trustdir.Shown(a.session), lost)
	}
	return runOutcome(res, interrupts, interrupted)
}

// sessionEnded says how the session's interpreter ended with the script,
// as python3's process would have (an exit of its own, a signal's death),
// which a one-shot run's output leaves untold; "" when it did not.
func sessionEnded(res sessions.Result) string {
	if res.FailedCell < 0 || res.FailedCell >= len(res.Cells) {
		return ""
	}
	c := res.Cells[res.FailedCell]
	switch {
	case c.Status != sessions.StatusKilled:
		return ""
	case c.Exited:
		return fmt.Sprintf("exited (status %d)", c.ExitStatus)
	case c.Signal != 0:
		return "died of " + unix.SignalName(syscall.Signal(c.Signal))
	}
	return ""
}

// attachedInterrupts handles an attached run's signals as a one-shot
// run's (interruptible): what a one-shot run passes to its interpreter
// goes to the session's through the process (cur, once connected), and a
// second Ctrl-C kills the session's interpreters. It returns once they
// are enabled, before the cells are sent: a warm session's cell starts
// within milliseconds, and a signal that came before would have its
// default action.
func attachedInterrupts(cur *atomic.Pointer[daemon.Client]) (context.Context, *interrupts, *attachedSignals) {
	sigs := newAttachedSignals(cur.Load)
	ctx, in := interruptible(func() {
		if c := cur.Load(); c != nil {
			c.Send(map[string]string{"op": daemon.OpKill, "id": attachedID})
		}
	}, interruptOpts{forward: sigs.forward, quitTo: sigs.quitTo, wait: true, alone: interruptAlone, jobs: sigs.jobControl()})
	<-in.enabled
	return ctx, in, sigs
}

// readCancelling reads the background process's answer to the request
// sent; when ctx ends first (the first Ctrl-C, or lost output) it sends a
// cancel of that request.
func (a *attached) readCancelling(ctx context.Context) (sessions.Result, error) {
	finished := make(chan struct{})
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		select {
		case <-ctx.Done():
			// As a one-shot run interrupts its interpreter (--grace is
			// refused with --session): waiting for the cell while the
			// script takes its interrupt, and the interpreter alone when
			// the Ctrl-C is not the terminal's.
			cause := context.Cause(ctx)
			a.c.Send(map[string]any{"op": "cancel", "id": attachedID,
				"wait": errors.Is(cause, backend.ErrInterruptWait), "alone": errors.Is(cause, backend.ErrInterruptAlone)})
		case <-finished:
		}
	}()
	res, err := a.read()
	if err != nil {
		a.c.Close() // what still writes to it (a cancel, a tool's result) fails at once, not after a hung process's bound
	}
	close(finished)
	watch.Wait()
	return res, err
}

// attachedOutput asks the background process for the output bounds a
// one-shot run gives its own sink (runCells), and, for output shown live,
// the cell's bytes unchanged. A --detach cell's output is what its job
// keeps and pages through (evalhost jobs): sanitised text, spilled past
// the tail, as the process keeps every job's.
func attachedOutput(f runFlags) map[string]any {
	if f.detach {
		return map[string]any{"maxBytes": f.maxOutput}
	}
	return map[string]any{"maxBytes": f.maxOutput, "noSpill": f.maxOutput == 0 || f.json,
		"passthrough": f.maxOutput == 0 && !f.json}
}

// attachedUnsupported names a flag the background process cannot honour
// per command: it is set once, for every session, when the process starts.
func attachedUnsupported(f runFlags, graceSet bool) string {
	switch {
	case graceSet:
		return "--grace is not available with --session: the background process keeps its own (2s); drop --grace, or run without --session"
	case f.py.given() != "":
		return "python3's options (" + f.py.given() + ") are not available with --session: they apply to a fresh interpreter, and the session's may already run; run without --session"
	case f.timeout == 0:
		return "--timeout 0 (no limit) is not available with --session: the background process bounds a cell at 600 s; give --detach to let a longer one go on as a job, or run without --session"
	}
	return ""
}

// attachedEval is the eval line for the cells. The interpreter is resolved
// here, where the user's environment (PATH, VIRTUAL_ENV, a pyenv version)
// is, and sent by path: the background process has the environment of the
// command that started it.
func attachedEval(cells []sessions.Cell, f runFlags, home, cwd string) (map[string]any, error) {
	// Paths and arguments go as their bytes (serve's pathValue reads
	// them back): a name that is not UTF-8 would otherwise arrive as U+FFFD.
	eval := map[string]any{"op": "eval", "id": attachedID, "session": f.session, "cwd": fsJSON(cwd),
		"keepGoing": f.keepGoing, "ipython": f.ipython, "output": attachedOutput(f), "batch": true,
		"enterCwd": true} // its cells start where it runs, as python3's, whatever a cell before did
	if f.argv != nil {
		eval["argv"] = json.RawMessage(frames.AppendFSStrings(nil, f.argv))
	}
	if f.file != "" {
		eval["file"] = fsJSON(f.file)
	}
	if f.detach {
		eval["onTimeout"] = "detach"
	}
	if len(f.env) > 0 {
		// The session's interpreter may run already: set before the
		// first cell, as env X=1 cmd sets it as cmd starts, its bytes as a one-shot run's interpreter takes them.
		eval["env"] = fsJSONObject(f.env)
	}
	// What the cells would inherit from this command, as a one-shot run's
	// do (its secrets left here): an interpreter this command starts takes
	// it, a running one the PATH and VIRTUAL_ENV that changed (sessions'
	// cmdenv.go).
	eval["environ"] = json.RawMessage(frames.AppendFSStrings(nil, sessions.FilterEnv(os.Environ())))
	// Shell cells alone send it too: the interpreter is part of the
	// session's key, so one resolved in the background process's
	// environment would put them in another session than this PATH's
	// Python cells. Without a Python to find they need none.
	py, err := sessions.ResolveInterpreter(f.python, cwd, home, os.Getenv, 0)
	switch {
	case err == nil:
		eval["python"] = fsJSON(py.Path)
	case slices.ContainsFunc(cells, func(c sessions.Cell) bool { return c.Language == sessions.LangPython }):
		return nil, err
	}
	list := make([]map[string]any, len(cells))
	for i, c := range cells {
		cell := map[string]any{"language": c.Language, "code": c.Code}
		if c.Title != "" {
			cell["title"] = c.Title
		}
		if c.Timeout > 0 {
			cell["timeout"] = c.Timeout.Seconds()
		}
		if c.File != "" {
			cell["file"], cell["line"] = fsJSON(c.File), c.Line
		}
		if c.Module != "" {
			cell["module"] = fsJSON(c.Module)
		}
		if c.Script {
			cell["script"] = true
		}
		list[i] = cell
	}
	eval["cells"] = list
	return eval, nil
}

// showNotices says what connecting to the background process did (a
// process started, replaced, or found dead with its sessions' state).
func showNotices(c *daemon.Client, stderr io.Writer) {
	for _, n := range c.Notices {
		fmt.Fprintf(stderr, "[evalhost: %s]\n", n)
	}
}

// errNotRun is a request the background process refused as it was
// ending (daemon.IsNotRun), or never read before a stop ended it
// (daemon.Client.Answers): nothing of it ran.
var errNotRun = errors.New("not run")

// attached reads one request's replies from the background process.
type attached struct {
	c       *daemon.Client
	session string
	cwd     string       // the session's, absolute, links resolved (sessionDir)
	paths   daemon.Paths // the background process's files: its log is named when it dies
	tools   bridge.Tools
	out     renderer
	emit    sessions.Emit
	streams func(int, frames.Type, []byte) // the cell's bytes, shown live
	cellEnd func(sessions.CellResult)
	job     string                // the job a cell detached as (--detach)
	cells   []sessions.CellResult // each cell_end so far, in order (the end line has none)
	signals *attachedSignals      // takes the answers to the signals passed on

	mu    sync.Mutex
	calls map[string]context.CancelFunc // tool calls running here
	wg    sync.WaitGroup
}

// read renders lines until the request's end.
func (a *attached) read() (sessions.Result, error) {
	for {
		line, err := a.c.Next()
		if hung := (*daemon.HungError)(nil); errors.As(err, &hung) {
			return sessions.Result{}, err // it says what to do
		}
		if ended := (*daemon.EndedError)(nil); errors.As(err, &ended) {
			if ended.Why != "" && a.c.Answers() == 0 {
				// Stopped before it read the cells (they came after its
				// reader's end): nothing ran, and the session's loss is
				// its next cell's to tell, as for a NotRunError.
				return sessions.Result{}, fmt.Errorf("%w: %v before it read this command's cells", errNotRun, ended)
			}
			return sessions.Result{}, a.endedError(ended)
		}
		if errors.Is(err, daemon.ErrBadLine) {
			return sessions.Result{}, err
		}
		if err != nil {
			return sessions.Result{}, fmt.Errorf("the background process (pid %d) ended before the run did: %v; its log is %s",
				a.c.Hello.PID, err, a.paths.Log)
		}
		typ := gjson.GetBytes(line, "type").String()
		switch typ {
		case serve.TypeEnd:
			var end serve.End
			if err := json.Unmarshal(line, &end); err != nil {
				return sessions.Result{}, fmt.Errorf("bad end line: %w", err)
			}
			return sessions.Result{Status: end.Status, FailedCell: end.FailedCell, Cells: a.cells}, nil
		case serve.TypeCellEnd:
			var ce serve.CellEnd
			if err := json.Unmarshal(line, &ce); err != nil {
				return sessions.Result{}, fmt.Errorf("bad cell_end line: %w", err)
			}
			a.cellEnd(ce.CellResult)
		case serve.TypeRequestError:
			if daemon.IsNotRun(line) {
				return sessions.Result{}, fmt.Errorf("%w: %s", errNotRun, gjson.GetBytes(line, "error").String())
			}
			if gjson.GetBytes(line, "op").String() == "eval" {
				return sessions.Result{}, errors.New(gjson.GetBytes(line, "error").String())
			}
			// A cancel or kill that came as the request ended: nothing to do.
		case daemon.TypeBytes:
			a.bytes()
		case daemon.TypeSignalled:
			a.signals.answer(line)
		case serve.TypeToolCall:
			a.toolCall(line)
		case serve.TypeToolCallAbandoned:
			a.abandon(gjson.GetBytes(line, "call").String())
		default:
			fr, err := frames.Decode(line)
			if err != nil {
				return sessions.Result{}, fmt.Errorf("unexpected line from the background process: %w", err)
			}
			a.emit(int(gjson.GetBytes(line, "cell").Int()), fr)
		}
	}
}

// endedError says that the background process ended while the run went
// on, and that the session's state went with it; the log, when nothing
// said why.
func (a *attached) endedError(e *daemon.EndedError) error {
	msg := fmt.Sprintf("%v while this command ran; the state of session %s is lost", e, trustdir.Shown(a.session))
	if e.Why == "" {
		msg += "; its log is " + trustdir.Shown(a.paths.Log)
		// Told here: the session's next cell need not say it again. Best
		// effort: a failure costs only that second telling.
		_ = daemon.ToldEnded(a.paths, e.PID, a.session, a.cwd)
	}
	return errors.New(msg)
}

// bytes shows the cell's stdout or stderr bytes Next read last as a
// one-shot run shows them: lent bytes straight to the stream, a frame's
// through the renderer (which remembers evalhost's notices).
func (a *attached) bytes() {
	b := a.c.Bytes()
	t := frames.TypeStdout
	if b.Stream == "stderr" {
		t = frames.TypeStderr
	}
	if b.Frame || a.streams == nil {
		a.emit(b.Cell, frames.Frame{Type: t, Data: string(b.Data)})
		return
	}
	a.streams(b.Cell, t, b.Data)
}

// toolCall runs a cell's tool here, as a one-shot run does, and answers.
func (a *attached) toolCall(line []byte) {
	var tc serve.ToolCall
	if err := json.Unmarshal(line, &tc); err != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	a.mu.Lock()
	a.calls[tc.Call] = cancel
	a.mu.Unlock()
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer a.abandon(tc.Call)
		value, err := a.tools.Call(ctx, bridge.Call{Session: tc.Session, Name: tc.Name, Args: tc.Args, Request: tc.ID, Cell: tc.Cell})
		reply := map[string]any{"op": "tool_result", "call": tc.Call, "ok": err == nil}
		if err != nil {
			reply["error"] = err.Error()
		} else {
			reply["value"] = value
		}
		a.c.Send(reply)
	}()
}

func (a *attached) abandon(call string) {
	a.mu.Lock()
	cancel := a.calls[call]
	delete(a.calls, call)
	a.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// endCalls cancels the tool calls still running and waits for them.
func (a *attached) endCalls() {
	a.mu.Lock()
	for _, cancel := range a.calls {
		cancel()
	}
	a.mu.Unlock()
	a.wg.Wait()
}

// fsJSON is s, bytes from the OS, as a JSON string that keeps them
// (frames.AppendFSString).
func fsJSON(s string) json.RawMessage { return frames.AppendFSString(nil, s) }

// fsJSONObject is m as a JSON object of fsJSON's strings, names and values.
func fsJSONObject(m map[string]string) json.RawMessage {
	b := []byte{'{'}
	for i, name := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(frames.AppendFSString(b, name), ':')
		b = frames.AppendFSString(b, m[name])
	}
	return append(b, '}')
}

// skippedAfterJob is the span of cells, 0-based from first, that a job's
// cell kept from running (sessions skips every cell after it).
func skippedAfterJob(cells []sessions.CellResult) (first, n int) {
	for _, c := range cells {
		if c.Status != sessions.StatusSkipped {
			continue
		}
		if n == 0 {
			first = c.Index
		}
		n++
	}
	return first, n
}
