package tests

import (
	"os"
	"os/exec"
	"testing"
)

// watched is a started command whose stderr goes to a file (which
// cmd.Wait does not wait on: an interpreter left behind would hold a pipe
// open), waited for in the background.
type watched struct {
	cmd     *exec.Cmd
	exited  chan struct{} // closed once cmd.Wait returned
	waitErr error         // cmd.Wait's, once exited is closed
	stderr  string        // the file's path
}

// startWatched starts cmd (its pipes already asked for); the test's end
// kills it if it has not exited, and waits for it.
func startWatched(t *testing.T, cmd *exec.Cmd) *watched {
	t.Helper()
	f, err := os.Create(t.TempDir() + "/stderr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	cmd.Stderr = f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &watched{cmd: cmd, exited: make(chan struct{}), stderr: f.Name()}
	go func() { w.waitErr = cmd.Wait(); close(w.exited) }()
	t.Cleanup(func() {
		select {
		case <-w.exited:
		default:
			_ = cmd.Process.Kill()
			<-w.exited
		}
	})
	return w
}

// log is what the command wrote to stderr so far.
func (w *watched) log() string { b, _ := os.ReadFile(w.stderr); return string(b) }
