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

var (
	verOnce  sync.Once
	verMajor int
	verMinor int
	verErr   error
)

// PythonAtLeast reports whether Python(tb) is major.minor or later, for a
// check of what only newer interpreters do (3.11's column carets).
func PythonAtLeast(tb testing.TB, major, minor int) bool {
	tb.Helper()
	exe := Python(tb)
	verOnce.Do(func() {
		var out []byte
		out, verErr = exec.Command(exe, "-c", "import sys; print(*sys.version_info[:2])").Output()
		if verErr == nil {
			_, verErr = fmt.Sscan(string(out), &verMajor, &verMinor)
		}
	})
	if verErr != nil {
		tb.Fatalf("the version of %s: %v", exe, verErr)
	}
	return verMajor > major || verMajor == major && verMinor >= minor
}
