package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	pyOnce.Do(func() {
		Hermetic()
		pyPath, pyErr = RealPython()
	})
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

var versions sync.Map // "3.13" -> *versioned

type versioned struct {
	once sync.Once
	path string
	err  error
}

// PythonVersion returns the real executable of Python major.minor ("3.13"),
// for a test of what that version alone does: python3.13 on PATH, else
// pyenv's ($PYENV_ROOT, or ~/.pyenv, /versions/3.13*/bin/python3.13),
// whose shims answer only for the selected version. Without one it skips
// tb, saying where it looked.
func PythonVersion(tb testing.TB, version string) string {
	tb.Helper()
	v, _ := versions.LoadOrStore(version, &versioned{})
	pv := v.(*versioned)
	pv.once.Do(func() { pv.path, pv.err = findVersion(version) })
	if pv.err != nil {
		tb.Skipf("no Python %s: %v (install python%s to run this test)", version, pv.err, version)
	}
	return pv.path
}

func findVersion(version string) (string, error) {
	name := "python" + version
	candidates := []string{name}
	root := os.Getenv("PYENV_ROOT")
	if home, err := os.UserHomeDir(); root == "" && err == nil {
		root = filepath.Join(home, ".pyenv")
	}
	if root != "" {
		found, _ := filepath.Glob(filepath.Join(root, "versions", version+"*", "bin", name))
		candidates = append(candidates, found...)
	}
	probe := "import sys; print(sys.executable); print('%d.%d' % sys.version_info[:2])"
	for _, c := range candidates {
		out, err := exec.Command(c, "-c", probe).Output()
		if err != nil {
			continue
		}
		lines := strings.Fields(string(out))
		if len(lines) == 2 && lines[1] == version {
			return lines[0], nil
		}
	}
	return "", fmt.Errorf("neither %s on PATH nor %s under %s/versions runs", name, name, root)
}
