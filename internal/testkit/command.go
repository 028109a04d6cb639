package testkit

import (
	"io"
	"os/exec"
	"strings"
	"testing"
)

// StartPiped starts cmd with a pipe from its stdout and its stderr
// collected, failing tb when it cannot. Read stderr only after cmd.Wait.
func StartPiped(tb testing.TB, cmd *exec.Cmd) (stdout io.ReadCloser, stderr *strings.Builder) {
	tb.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stderr = &strings.Builder{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	return stdout, stderr
}
