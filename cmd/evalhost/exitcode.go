package main

import "github.com/evalhost/evalhost/sessions"

// runExitCode is run's exit code: exitCode's, but for a script that ended
// itself by sys.exit(N), os._exit(N) or a C exit(N), which exits N, as
// python3 does (its low 8 bits, as the OS keeps them; 1 for a message).
func runExitCode(res sessions.Result, interrupted bool) int {
	if !interrupted && res.FailedCell >= 0 && res.FailedCell < len(res.Cells) {
		if c := res.Cells[res.FailedCell]; c.Index == res.FailedCell {
			if status, ok := c.ScriptExit(); ok {
				return status & 0xff
			}
		}
	}
	return exitCode(res, interrupted)
}

// exitCode is a result's exit code, for run, nb run and jobs: 130 when
// interrupted, else by the result's status.
func exitCode(res sessions.Result, interrupted bool) int {
	switch {
	case interrupted:
		return exitInterrupted
	case res.Status == sessions.StatusOK:
		return exitOK
	case res.Status == sessions.StatusTimeout:
		return exitTimeout
	case res.Status == sessions.StatusCancelled:
		return exitInterrupted
	default:
		return exitFailed
	}
}
