package main

import (
	"os"
	"syscall"
	"time"

	"github.com/evalhost/evalhost/sessions"
)

// signalled marks a dispatch result that is a signal to die of (its low
// bits), not an exit code: no exit code is 256 or more.
const signalled = 1 << 8

// dieOf is dispatch's result for a command that ends as if killed by sig,
// as python3 ends after an uncaught KeyboardInterrupt, a SIGTERM, a crash
// or the OOM killer's SIGKILL: its parent then sees the signal, not only a
// status of 128+sig (a supervisor, a shell's WIFSIGNALED and its "Killed"
// line), and a shell running a loop of commands stops at the Ctrl-C
// instead of going on to the next one.
func dieOf(sig syscall.Signal) int { return signalled | int(sig) }

// exitAs ends evalhost with dispatch's result: an exit code, or a signal
// (dieOf), raised against itself once every deferred clean-up has run
// (raise: any signal on Linux, one evalhost was started ignoring too, as
// python3 dies of SIGINT after an uncaught KeyboardInterrupt in a
// background job that ignores it; elsewhere those Go dies of, SIGINT,
// SIGTERM and SIGHUP, unless ignored). 128+sig is the exit code for a
// signal it cannot die of.
func exitAs(code int) {
	if code&signalled == 0 {
		os.Exit(code)
	}
	sig := syscall.Signal(code &^ signalled)
	if canDieOf(int(sig)) {
		raise(sig)
		time.Sleep(time.Second) // the signal is on its way; this is only a bound
	}
	os.Exit(128 + int(sig))
}

// canDieOf says whether a run dies of sig itself (exitAs), not 128+sig.
func canDieOf(sig int) bool { return canRaise(syscall.Signal(sig)) }

// runOutcome is how a run ends after res, interrupts Ctrl-Cs having come:
// python3's way where it has one. A run interrupted by Ctrl-C dies of
// SIGINT, unless the script took the interrupt and every cell ran to its
// end, when its own status is the run's (an `except KeyboardInterrupt:`
// that saved and exited 0 exits 0). A script whose interpreter died of a
// signal (CellResult.Signal: a crash, the OOM killer, one run passed on)
// dies of it too, Ctrl-C or not, as python3 would have; an uncaught
// KeyboardInterrupt dies of SIGINT. A SIGTERM, SIGHUP, SIGUSR1 or SIGUSR2
// no interpreter took (not forwarded: before the interpreter was up, while
// a shell cell ran, after the last cell had ended) is the signal it dies
// of, whatever the cells did, as python3 would have died of it there;
// and so is a Ctrl-\ (SIGQUIT) no running cell's interpreter took, as it
// kills python3 (one passed on is the script's to take or die of).
func runOutcome(res sessions.Result, interrupts int, in *interrupts) int {
	var failed *sessions.CellResult
	if res.FailedCell >= 0 && res.FailedCell < len(res.Cells) {
		failed = &res.Cells[res.FailedCell]
	}
	switch fatal := syscall.Signal(in.fatal.Load()); {
	case in.quitBy.Load():
		return dieOf(syscall.SIGQUIT)
	case failed != nil && failed.Signal != 0:
		return dieOf(syscall.Signal(failed.Signal))
	case fatal != 0:
		return dieOf(fatal)
	}
	if interrupts > 0 && ranToEnd(res) {
		interrupts = 0 // the script took the interrupt and finished its way
	}
	if interrupts == 0 && failed != nil && failed.RaisedKeyboardInterrupt() {
		return dieOf(syscall.SIGINT)
	}
	code := runExitCode(res, interrupts > 0)
	if code != exitInterrupted || interrupts == 0 {
		return code
	}
	return dieOf(syscall.SIGINT)
}

// ranToEnd says whether the script ran to its own end after an interrupt:
// no cell was cancelled, timed out or stopped, so the script took the
// KeyboardInterrupt and finished, exited or failed its way (the later
// cells of a percent script run on past an except KeyboardInterrupt:, as
// python3's statements do), and its status is python3's.
func ranToEnd(res sessions.Result) bool {
	for _, c := range res.Cells {
		switch {
		case c.Exited, c.Status == sessions.StatusError:
			return true // the script ended itself here; the rest never ran
		case c.Status != sessions.StatusOK:
			return false
		}
	}
	return len(res.Cells) > 0
}
