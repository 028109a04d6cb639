package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

var (
	pyOnce sync.Once
	pyPath string
	pyErr  error
)

// Python returns the real executable of python3 (or python), resolved once
// through sys.executable, since a version manager's shim costs tens of
// milliseconds per start. Without one it skips tb.
func Python(tb testing.TB) string {
	tb.Helper()
	pyOnce.Do(func() { pyPath, pyErr = RealPython() })
	if pyErr != nil {
		tb.Skipf("%v (install python3)", pyErr)
	}
	return pyPath
}

// RealPython is Python for code without a testing.TB (a TestMain). The
// environment variable EVALHOST_TEST_PYTHON names another interpreter to
// test with.
func RealPython() (string, error) {
	names := []string{"python3", "python"}
	if name := os.Getenv("EVALHOST_TEST_PYTHON"); name != "" {
		names = []string{name}
	}
	var last error
	for _, name := range names {
		out, err := exec.Command(name, "-c", "import sys; print(sys.executable)").Output()
		if path := strings.TrimSpace(string(out)); err == nil && path != "" {
			return path, nil
		}
		last = err
	}
	return "", fmt.Errorf("no usable %s: %w", names[0], last)
}
