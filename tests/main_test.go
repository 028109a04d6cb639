// Package tests drives the real evalhost binary end to end.
package tests

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// binary is the evalhost built once for the whole package.
var binary string

func TestMain(m *testing.M) {
	if os.Getenv("EVALHOST_TEST_HELPER") != "" {
		os.Exit(m.Run()) // a helper process (TestHelper…) needs no binary
	}
	// run reads PYTHONUNBUFFERED as python3 -u (container images set it),
	// EVALHOST_DEBUG adds a timeline: tests that want such a variable set
	// it, so the rest compare the same output wherever they run.
	testkit.Hermetic()
	dir, err := os.MkdirTemp("", "evalhost-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "evalhost")
	build := exec.Command("go", "build", "-o", binary, "../cmd/evalhost")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building evalhost:", err)
		os.Exit(1)
	}
	remove, err := testkit.IsolateIPython()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	remove()
	os.Exit(code)
}

// command runs evalhost with a private home so tests never share caches.
func command(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not on PATH")
	}
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "EVALHOST_HOME="+t.TempDir())
	return cmd
}

// runCaptured runs cmd to its end and returns what it wrote and its exit
// code; combined sends stderr into stdout (one pipe, as a terminal sees
// both). A command that could not run at all fails the test.
func runCaptured(t testing.TB, cmd *exec.Cmd, combined bool) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if combined {
		cmd.Stderr = &out
	}
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal()) // as a shell says it: python3 dies of SIGINT
		}
	case err != nil:
		t.Fatalf("running %s: %v", cmd.Path, err)
	}
	return out.String(), errb.String(), code
}
