package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"syscall"

	"github.com/evalhost/evalhost/bridge"
	"github.com/evalhost/evalhost/config"
	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/timeline"
	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

// runCells runs a one-shot run's cells in a registry of its own (a run
// --session sends them to the background process: run_session.go).
func runCells(cells []sessions.Cell, f runFlags, tools map[string]string, stdout, stderr io.Writer, logger *slog.Logger) int {
	home, err := config.Home()
	if err != nil {
		fmt.Fprintf(stderr, "evalhost run: %v\n", err)
		return exitUsage
	}
	starters, err := config.Starters(home, f.choice())
	if err != nil {
		fmt.Fprintf(stderr, "evalhost run: %v\n", err)
		return exitUsage
	}
	store, err := config.ArtifactStore(home)
	if err != nil {
		fmt.Fprintf(stderr, "evalhost run: %v\n", err)
		return exitUsage
	}
	// A closed output (`| head -1`) must stop the run, not kill evalhost with
	// SIGPIPE before it has ended the cell's processes: with SIGPIPE
	// notified, writes to a closed stdout or stderr fail with EPIPE, and the
	// outputs below cancel the run on it. Deferred first, so it stays until
	// the registry is closed.
	defer catchSIGPIPE()()
	reg, closeTools := newRunRegistry(f, tools, home, starters, store)
	defer closeTools()
	defer func() {
		reg.Close()
		timeline.Mark("closed") // the interpreters have exited
	}()

	// What a python3 process would be sent goes to the script's interpreter;
	// Ctrl-C waits for the cell to stop, as python3 would, unless --grace
	// bounds it, and reaches the script's children only where it can be the
	// terminal's (interruptAlone).
	ctx, interrupted := interruptible(reg.Kill, interruptOpts{
		forward: func(sig syscall.Signal) bool { return reg.Signal(f.session, sig) },
		quitTo:  quitForwarder(reg, f.session),
		jobs: &jobControl{
			suspend:    func() bool { return reg.Suspend(f.session) },
			resume:     func() bool { return reg.Resume(f.session) },
			ttySuspend: f.ttyRelay.suspend,
			ttyResume:  f.ttyRelay.resume,
		},
		wait:  !f.graceSet,
		echo:  f.ttyRelay.echo,
		alone: interruptAlone,
	})
	ownStderr := stderr // stoppedByOutput's, past the guard
	stdout = guardedWriter{stdout, interrupted, 0}
	stderr = guardedWriter{stderr, interrupted, 1}
	out, streams, flush := runRenderer(f, stdout, stderr, interrupted)
	defer flush()
	// Per-call: the interpreters end with the request, so each one's last
	// cell is sent with the exit request right behind it and the runner
	// leaves as soon as that cell ends.
	// Batch: a script's cell is not run twice, nor its later cells on a
	// fresh interpreter, after a death; python3 would have died too. A
	// cell's sys.exit() ends the run there, as in python3.
	req := sessions.Request{Session: f.session, Cwd: f.cwd, Cells: cells, KeepGoing: f.keepGoing, Mode: sessions.ModePerCall, Batch: true,
		IPython: f.ipython, Argv: f.argv, File: f.file, OnCellEnd: timedCellEnd(out.cellEnd), Streams: streams}
	res, err := reg.Eval(ctx, req, ipcTrace(logger, timedEmit(out.frame)))
	interrupts := interrupted.stop()
	if code, stopped := interrupted.stoppedByOutput(interrupts, ownStderr, func() bool { return exitsAt120(f, home) }); stopped {
		return code
	}
	if err != nil {
		logger.Debug("run failed", "err", err)
		fmt.Fprintf(stderr, "evalhost run: %v\n", err)
		if errors.Is(err, sessions.ErrBadRequest) {
			return exitUsage // refused before any cell ran
		}
		return exitFailed
	}
	out.end(res)
	return runOutcome(res, interrupts, interrupted)
}

// newRunRegistry is a one-shot run's registry, with its tool bridge when
// there are tools; closeTools ends the bridge after the registry closed.
func newRunRegistry(f runFlags, tools map[string]string, home string, starters map[string]sessions.Starter, store *streamsink.Store) (reg *sessions.Registry, closeTools func()) {
	// No tools, no tool bridge: a server listening on loopback for calls
	// that can only fail costs every run its start and shutdown.
	envHook := func() (map[string]string, error) { return map[string]string{bridge.EnvNoTools: "1"}, nil }
	runHook := func(sessions.RunInfo, bool) {}
	closeTools = func() {}
	if len(tools) > 0 {
		toolServer := bridge.New(bridge.CommandTools(tools), bridge.Options{})
		closeTools = func() { toolServer.Close() }
		envHook = toolServer.Env
		runHook = func(run sessions.RunInfo, active bool) { toolServer.RunHook(run.Session, run.Run, active) }
	}
	return sessions.New(sessions.Config{
		Starters:      starters,
		Grace:         f.grace,
		EnvHook:       envHook,
		RunHook:       runHook,
		Home:          home,
		Python:        f.python,
		Stdin:         f.stdin,
		StdinTerminal: f.stdinTerminal,
		StdinWithheld: f.stdinWithheld,
		ExtraEnv:      extraEnv(f.terminal.env, f.env),
		Terminal:      f.terminal.fds,
		PythonArgs:    f.py.args(),
		// One destination: one pipe, so the cells' bytes keep their order.
		MergeStderr: f.merged,
		// Only a tail the human view cuts (--max-output) spills: live and
		// --json output is seen whole, and a copy on disk would cost most
		// of the run's time. Live output is the program's own bytes, as
		// python prints them, for the pipeline or file it goes to.
		Sink: streamsink.Options{MaxBytes: f.maxOutput, NoSpill: f.maxOutput == 0 || f.json,
			Passthrough: f.maxOutput == 0 && !f.json, Store: store},
	}), closeTools
}

// timedEmit marks the first output of a cell on the EVALHOST_DEBUG timeline.
func timedEmit(emit sessions.Emit) sessions.Emit {
	if !timeline.Enabled() {
		return emit
	}
	seen := -1
	return func(cell int, f frames.Frame) {
		if cell != seen && f.Type != frames.TypeReady {
			seen = cell
			timeline.Mark("first-frame", "cell", cell+1, "type", f.Type)
		}
		emit(cell, f)
	}
}

// timedCellEnd marks each cell's end on the EVALHOST_DEBUG timeline.
func timedCellEnd(end func(sessions.CellResult)) func(sessions.CellResult) {
	if !timeline.Enabled() {
		return end
	}
	return func(res sessions.CellResult) {
		timeline.Mark("cell-end", "cell", res.Index+1, "status", res.Status, "ms", res.DurationMs)
		end(res)
	}
}
