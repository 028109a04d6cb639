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
	if err := pathToTestPython(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
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
// pathToTestPython puts the directory of EVALHOST_TEST_PYTHON, when set,
// first on PATH: the tests compare the evalhost they run, which finds
// python3 on PATH, with that interpreter (testkit.Python), and with the
// machine's python3 first they compared two Pythons (3.11's run with
// 3.13's python3: TestRunTTYAsPython failed on 3.13's colours).
func pathToTestPython() error {
	name := os.Getenv("EVALHOST_TEST_PYTHON")
	if name == "" {
		return nil
	}
	py, err := exec.LookPath(name)
	if err != nil {
		return fmt.Errorf("EVALHOST_TEST_PYTHON: %w", err)
	}
	dir := filepath.Dir(py)
	if _, err := os.Stat(filepath.Join(dir, "python3")); err != nil {
		return fmt.Errorf("EVALHOST_TEST_PYTHON is %s, and its directory has no python3 for evalhost to find on PATH: name a python3 beside it", py)
	}
	return os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

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
