package main

import (
	"github.com/evalhost/evalhost/config"
	"github.com/evalhost/evalhost/shell"
	"github.com/evalhost/evalhost/streamsink"
)

// serverArtifactStore is config.ArtifactStore for a process that lives long
// (serve, mcp, the background process): it applies the limits now, off any
// cell's path, so a lowered cap or a week of old artifacts is dealt with
// even before its first spill. A one-shot command leaves that to its spills.
// The error is a bad EVALHOST_ARTIFACTS_MAX, which the caller refuses.
func serverArtifactStore(home string) (*streamsink.Store, error) {
	st, err := config.ArtifactStore(home)
	if err != nil {
		return nil, err
	}
	_, _ = st.Enforce() // what stopped it costs only disk; the next spill tries again
	return st, nil
}

// sweepKilledShells removes, off the start's path, the cell directories
// that the sh cells of a killed evalhost left in the temporary directory
// (shell.SweepCellDirs), as a long-lived process (serve, mcp, the
// background process) starts: a killed serve's are not left until some
// process starts a shell. Its first shell waits for the sweep; so does
// the returned wait, which the caller defers, so that no removal is cut
// short by the process's exit (a directory left without its owner's mark
// would never be swept again).
func sweepKilledShells() (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		shell.SweepCellDirsOnce()
	}()
	return func() { <-done }
}
