//go:build unix

package runner

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// TestRunnerWritesItsBytecode: a runner started from runner.py as BootFor
// asks writes the bytecode BootFor then finds, and a runner started from
// it serves as one started from runner.py: its cells see neither the ask
// nor the runner's dirs on sys.path, and no traceback shows its frames;
// the writer's module is not left in sys.modules.
func TestRunnerWritesItsBytecode(t *testing.T) {
	path, err := Path(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	py := python(t)
	b := BootFor(path, py)
	if b.FromBytecode() || b.Env == nil {
		t.Fatalf("a fresh runner dir: BootFor = %+v, want runner.py and an ask", b)
	}
	p := start(t, startOpts{runner: path, env: b.Env})
	wantResult("'None'")(t, p.run("import os; str(os.environ.get('EVALHOST_BOOT'))"))
	// The writer leaves nothing in sys.modules that a start from the bytecode has not.
	wantResult("[]")(t, p.run("import sys; [m for m in sys.modules if 'bytecode' in m]"))
	p.req.Close()
	p.wait()

	b = BootFor(path, py)
	if !b.FromBytecode() {
		t.Fatalf("after a start asked to: File %q, want its bytecode %q", b.File, b.Bytecode)
	}
	written, err := os.ReadFile(b.Bytecode)
	if err != nil {
		t.Fatal(err)
	}
	p = start(t, startOpts{runner: b.File})
	wantResult("True")(t, p.run(fmt.Sprintf("import sys; getattr(sys, 'orig_argv', [%q])[-1] == %q", b.File, b.File)))
	wantResult("[]")(t, p.run(fmt.Sprintf("[p for p in sys.path if %q in p]", filepath.Dir(path))))
	e, ok := p.run("def f():\n    1/0\nf()").first(frames.TypeError)
	if !ok {
		t.Fatal("no error frame for 1/0")
	}
	tb := strings.Join(e.Traceback, "")
	if !strings.Contains(tb, "ZeroDivisionError") || strings.Contains(tb, "runner.py") || strings.Contains(tb, "core.py") {
		t.Errorf("traceback shows the runner's frames, or not the error:\n%s", tb)
	}
	p.req.Close()
	p.wait()
	if now, err := os.ReadFile(b.Bytecode); err != nil || !bytes.Equal(now, written) {
		t.Errorf("a start from the bytecode rewrote it (err %v)", err)
	}
}

// TestBytecodeAskRefused: an ask that is not the host's for this runner
// writes nothing: not for another interpreter or runner.py, nor under a
// name that is not a bytecode file's in runner.py's __pycache__.
func TestBytecodeAskRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		field int
		value string // "" drops the field
	}{
		{"another interpreter's facts", 2, "1"},
		{"another runner.py's facts", 9, "1"},
		{"a name outside __pycache__", 1, "../runner.0123456789abcdef.pyc"},
		{"a runner file's name", 1, "../core.py"},
		{"a name of another form", 1, "runner.0123456789ABCDEF.pyc"},
		{"a key not hex", 0, strings.Repeat("zz", 12)},
		{"a field short", 9, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			path, err := Path(root)
			if err != nil {
				t.Fatal(err)
			}
			b := BootFor(path, python(t))
			f := askFields(t, b)
			f[tc.field] = tc.value
			if tc.value == "" {
				f = append(f[:tc.field], f[tc.field+1:]...)
			}
			p := start(t, startOpts{runner: path, env: []string{BootEnv + "=" + strings.Join(f, " ")}})
			wantResult("2")(t, p.run("1 + 1"))
			p.req.Close()
			p.wait()
			if got := BootFor(path, python(t)); got.FromBytecode() {
				t.Errorf("bytecode written for the ask %q", f)
			}
			onlyRunnerFiles(t, root, filepath.Dir(path))
		})
	}
}

// onlyRunnerFiles fails on a file under root that is not one of dir's
// embedded files, whole, or what Path and runner.py's cache keep there.
func onlyRunnerFiles(t *testing.T, root, dir string) {
	t.Helper()
	if !whole(dir) {
		t.Errorf("%s's files are not the embedded ones", dir)
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if slices.ContainsFunc(embeddedFiles, func(f file) bool { return f.name == rel }) || rel == stampName ||
			strings.HasPrefix(rel, "__pycache__/") && strings.HasSuffix(rel, ".evh") ||
			filepath.Dir(p) == root {
			return nil
		}
		t.Errorf("%s written", p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestBytecodeWriteRefusedByAuditHook: a write an audit hook refuses (a
// sandbox's sitecustomize raising RuntimeError at an open for writing)
// leaves the bytecode unwritten, as a read-only runner dir does: the
// runner serves its cells. It died after ready at each start asked (each
// start under that interpreter, the .evh files written before), so its
// first cell failed.
func TestBytecodeWriteRefusedByAuditHook(t *testing.T) {
	path, err := Path(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := start(t, startOpts{runner: path}) // the .evh files, which the hook would refuse too
	wantResult("2")(t, p.run("1 + 1"))
	p.req.Close()
	p.wait()

	site := t.TempDir()
	hook := "import sys\n" +
		"def _refuse(event, args):\n" +
		"    if event == 'open' and isinstance(args[0], str) and args[0].endswith('.tmp'):\n" +
		"        raise RuntimeError('sandbox: no writes here')\n" +
		"sys.addaudithook(_refuse)\n"
	if err := os.WriteFile(filepath.Join(site, "sitecustomize.py"), []byte(hook), 0o600); err != nil {
		t.Fatal(err)
	}
	b := BootFor(path, python(t))
	p = start(t, startOpts{runner: path, env: append([]string{"PYTHONPATH=" + site}, b.Env...)})
	wantResult("2")(t, p.run("1 + 1"))
	p.req.Close()
	p.wait()
	if b := BootFor(path, python(t)); b.FromBytecode() {
		t.Errorf("bytecode written though the hook refused its open")
	}
}
