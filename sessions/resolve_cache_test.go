package sessions

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// realPython is the binary python3 runs, behind any shim.
func realPython(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("python3", "-c", "import sys;print(sys.executable)").Output()
	if err != nil {
		t.Skip("python3 not on PATH")
	}
	return strings.TrimSpace(string(out))
}

// A binary is started directly: resolving it runs nothing.
func TestResolveBinaryIsNotProbed(t *testing.T) {
	exe := realPython(t)
	py, err := ResolveInterpreter(exe, t.TempDir(), t.TempDir(), func(string) string { return "" }, 0)
	if err != nil {
		t.Fatal(err)
	}
	if py.Path != exe || py.Version != "" || !strings.Contains(py.Resolved, "started directly") {
		t.Fatalf("got %+v, want %s started directly with no probed version", py, exe)
	}
}

// A shim is probed once and its answer kept on disk, under a key that a
// change the shim would see misses.
func TestResolveShimCache(t *testing.T) {
	exe := realPython(t)
	dir := t.TempDir()
	home, cwd := filepath.Join(dir, "home"), filepath.Join(dir, "project", "sub")
	if err := os.MkdirAll(cwd, 0o700); err != nil {
		t.Fatal(err)
	}
	probes := filepath.Join(dir, "probes")
	shim := filepath.Join(dir, "shims", "python3")
	writeShim := func(extra string) {
		t.Helper()
		script := fmt.Sprintf("#!/bin/sh\n# %s\nif [ \"$1\" = -c ]; then echo probe >> %q; fi\nexec %q \"$@\"\n", extra, probes, exe)
		if err := os.MkdirAll(filepath.Dir(shim), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(shim, []byte(script), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	writeShim("v1")
	env := map[string]string{}
	count := func() int {
		b, _ := os.ReadFile(probes)
		return strings.Count(string(b), "probe")
	}
	resolve := func() Interpreter {
		t.Helper()
		probeCache.Clear() // a new process: only the disk cache remains
		py, err := ResolveInterpreter(shim, cwd, home, func(k string) string { return env[k] }, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !sameFile(py.Path, exe) {
			t.Fatalf("resolved %s, want %s", py.Path, exe)
		}
		return py
	}
	steps := []struct {
		name   string
		change func()
		probed bool
	}{
		{"first resolution probes", func() {}, true},
		{"an unchanged shim is read from the cache", func() {}, false},
		{"PYENV_VERSION misses", func() { env["PYENV_VERSION"] = "system" }, true},
		{"a .python-version up from the cwd misses", func() {
			os.WriteFile(filepath.Join(dir, "project", ".python-version"), []byte("3.11\n"), 0o600)
		}, true},
		{"the global version file misses", func() { os.WriteFile(filepath.Join(dir, "version"), []byte("3.11\n"), 0o600) }, true},
		{"PATH misses", func() { env["PATH"] = "/nowhere" }, true},
		{"an edited shim misses", func() { writeShim("v2 is longer") }, true},
		{"and is cached again", func() {}, false},
	}
	for _, s := range steps {
		before := count()
		s.change()
		py := resolve()
		if probed := count() > before; probed != s.probed {
			t.Fatalf("%s: probed=%v, want %v (%s)", s.name, probed, s.probed, py.Resolved)
		}
		if !s.probed && !strings.Contains(py.Resolved, "cached in") {
			t.Fatalf("%s: Resolved %q does not say it was cached", s.name, py.Resolved)
		}
	}

	// A start that fails, or reports another executable, drops the entry.
	for _, tc := range []struct {
		name     string
		readyExe string
		err      error
	}{
		{"a failed start", "", errors.New("exited before it was ready")},
		{"another executable", "/usr/bin/true", nil},
	} {
		py := resolve()
		py.VerifyStart(tc.readyExe, tc.err)
		before := count()
		resolve()
		if count() == before {
			t.Fatalf("%s: the cached resolution was not dropped", tc.name)
		}
	}
	py := resolve()
	py.VerifyStart(exe, nil)
	before := count()
	resolve()
	if count() != before {
		t.Fatal("a start that matched dropped the cached resolution")
	}
}

// The probe runs in the session's cwd, where a shim reads .python-version.
func TestProbeRunsInCwd(t *testing.T) {
	exe := realPython(t)
	dir := t.TempDir()
	shim := filepath.Join(dir, "python3")
	script := fmt.Sprintf("#!/bin/sh\nif [ \"$1\" = -c ] && [ ! -e marker ]; then echo 'not in the cwd' >&2; exit 3; fi\nexec %q \"$@\"\n", exe)
	if err := os.WriteFile(shim, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	cwd := filepath.Join(dir, "cwd")
	os.Mkdir(cwd, 0o700)
	os.WriteFile(filepath.Join(cwd, "marker"), nil, 0o600)
	probeCache.Clear()
	if _, err := ResolveInterpreter(shim, cwd, "", func(string) string { return "" }, 10*time.Second); err != nil {
		t.Fatalf("the probe did not run in the session's cwd: %v", err)
	}
}
