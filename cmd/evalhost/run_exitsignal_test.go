package main

import (
	"syscall"
	"testing"

	"github.com/evalhost/evalhost/sessions"
)

// How a run ends after its result and the signals it got: python3's way.
func TestRunOutcome(t *testing.T) {
	ok := sessions.CellResult{Status: sessions.StatusOK}
	cancelled := sessions.CellResult{Status: sessions.StatusCancelled}
	failed := sessions.CellResult{Status: sessions.StatusError}
	interruptRaised := sessions.CellResult{Status: sessions.StatusError, ExitStatus: 130}
	exit3 := sessions.CellResult{Status: sessions.StatusError, ExitStatus: 3, Exited: true}
	exit130 := sessions.CellResult{Status: sessions.StatusError, ExitStatus: 130, Exited: true}
	killedBy := func(sig syscall.Signal) sessions.CellResult {
		return sessions.CellResult{Status: sessions.StatusKilled, Signal: int(sig), StateLost: true}
	}
	result := func(failed int, cells ...sessions.CellResult) sessions.Result {
		st := sessions.StatusOK
		if failed >= 0 {
			st = cells[failed].Status
		}
		return sessions.Result{Status: st, FailedCell: failed, Cells: cells}
	}
	for _, tc := range []struct {
		name       string
		res        sessions.Result
		interrupts int
		fatal      syscall.Signal // a SIGTERM no interpreter took
		quit       bool
		want       int
	}{
		{"ok", result(-1, ok), 0, 0, false, 0},
		{"Ctrl-C, uncaught", result(0, cancelled), 1, 0, false, dieOf(syscall.SIGINT)},
		{"Ctrl-C, caught and finished", result(-1, ok), 1, 0, false, 0},
		{"Ctrl-C, caught, sys.exit(3)", result(0, exit3), 1, 0, false, 3},
		{"Ctrl-C caught, a later cell cancelled", result(1, ok, cancelled), 1, 0, false, dieOf(syscall.SIGINT)},
		{"Ctrl-C caught, a later cell failed", result(1, ok, failed), 1, 0, false, 1},
		{"KeyboardInterrupt raised", result(0, interruptRaised), 0, 0, false, dieOf(syscall.SIGINT)},
		{"sys.exit(130) is an exit", result(0, exit130), 0, 0, false, 130},
		{"died of SIGTERM", result(0, killedBy(syscall.SIGTERM)), 0, 0, false, dieOf(syscall.SIGTERM)},
		{"died of SIGKILL (the OOM killer)", result(0, killedBy(syscall.SIGKILL)), 0, 0, false, dieOf(syscall.SIGKILL)},
		{"died of SIGSEGV after a Ctrl-C it took", result(0, killedBy(syscall.SIGSEGV)), 1, 0, false, dieOf(syscall.SIGSEGV)},
		{"SIGTERM before the interpreter", result(0, cancelled), 1, syscall.SIGTERM, false, dieOf(syscall.SIGTERM)},
		{"SIGUSR1 before the interpreter", result(0, cancelled), 1, syscall.SIGUSR1, false, dieOf(syscall.SIGUSR1)},
		{"SIGTERM after the last cell", result(-1, ok), 1, syscall.SIGTERM, false, dieOf(syscall.SIGTERM)},
		{"SIGTERM after sys.exit(3)", result(0, exit3), 1, syscall.SIGTERM, false, dieOf(syscall.SIGTERM)},
		{"Ctrl-\\", result(0, cancelled), 1, 0, true, dieOf(syscall.SIGQUIT)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &interrupts{}
			in.fatal.Store(int32(tc.fatal))
			in.quitBy.Store(tc.quit)
			if got := runOutcome(tc.res, tc.interrupts, in); got != tc.want {
				t.Errorf("runOutcome = %#x, want %#x", got, tc.want)
			}
		})
	}
}
