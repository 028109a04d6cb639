//go:build unix

package runner

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// bootFiles makes a runner.py and an interpreter file of a test's own:
// BootFor stats them and runs neither.
func bootFiles(t *testing.T) (runnerPy, python string) {
	t.Helper()
	dir := t.TempDir()
	runnerPy, python = filepath.Join(dir, "runner", "runner.py"), filepath.Join(dir, "bin", "python3")
	for _, f := range []string{runnerPy, python} {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(f), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return runnerPy, python
}

// writeAsked writes the bytecode b asks for as the runner writes it: a
// magic number, the ask's key, a payload.
func writeAsked(t *testing.T, b Boot) {
	t.Helper()
	key, err := hex.DecodeString(askFields(t, b)[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(b.Bytecode), 0o700); err != nil {
		t.Fatal(err)
	}
	data := append(append([]byte{0xa7, 0x0d, '\r', '\n'}, key...), "payload"...)
	if err := os.WriteFile(b.Bytecode, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// askFields is b's ask: key, name, then the interpreter's and runner.py's
// inode, size, mtime and change time.
func askFields(t *testing.T, b Boot) []string {
	t.Helper()
	if len(b.Env) != 1 || !strings.HasPrefix(b.Env[0], BootEnv+"=") {
		t.Fatalf("Env %q, want one %s ask", b.Env, BootEnv)
	}
	f := strings.Split(strings.TrimPrefix(b.Env[0], BootEnv+"="), " ")
	if len(f) != 10 || len(f[0]) != 24 {
		t.Fatalf("ask %q, want a key of 24 hex digits, a name and 8 numbers", f)
	}
	return f
}

// replace puts a new file at path, as an upgrade does: by a rename.
func replace(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path+".new", []byte("another"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
}

func TestBootFor(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, runnerPy, python, bytecode string)
		want   bool // started from the bytecode
	}{
		{"as the runner wrote it", func(*testing.T, string, string, string) {}, true},
		{"none written", func(t *testing.T, _, _, bytecode string) { mustRemove(t, bytecode) }, false},
		{"a new interpreter at that path", func(t *testing.T, _, python, _ string) { replace(t, python) }, false},
		{"the interpreter's mtime changed", func(t *testing.T, _, python, _ string) {
			if err := os.Chtimes(python, time.Time{}, time.Unix(1e9, 0)); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"runner.py put back", func(t *testing.T, runnerPy, _, _ string) { replace(t, runnerPy) }, false},
		{"another user's", func(t *testing.T, _, _, bytecode string) { chown(t, bytecode, nobody) }, false},
		{"others may write it", func(t *testing.T, _, _, bytecode string) { mustChmod(t, bytecode, 0o602) }, false},
		{"its group may write it", func(t *testing.T, _, _, bytecode string) { mustChmod(t, bytecode, 0o620) }, false},
		{"behind a symlink", func(t *testing.T, _, _, bytecode string) {
			target := filepath.Join(t.TempDir(), "runner.pyc")
			if err := os.Rename(bytecode, target); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, bytecode); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a fifo", func(t *testing.T, _, _, bytecode string) {
			mustRemove(t, bytecode)
			if err := syscall.Mkfifo(bytecode, 0o600); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a directory", func(t *testing.T, _, _, bytecode string) {
			mustRemove(t, bytecode)
			if err := os.Mkdir(bytecode, 0o700); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"cut inside its header", func(t *testing.T, _, _, bytecode string) {
			if err := os.Truncate(bytecode, 15); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"no magic number", func(t *testing.T, _, _, bytecode string) { flip(t, bytecode, 3) }, false},
		{"another key", func(t *testing.T, _, _, bytecode string) { flip(t, bytecode, 15) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runnerPy, python := bootFiles(t)
			b := BootFor(runnerPy, python)
			if b.FromBytecode() || b.File != runnerPy {
				t.Fatalf("with no bytecode: File %q, want %q", b.File, runnerPy)
			}
			pyFacts, _ := statFacts(python)
			if name := askFields(t, b)[1]; name != bytecodeName(pyFacts) || filepath.Base(b.Bytecode) != name ||
				filepath.Dir(b.Bytecode) != filepath.Join(filepath.Dir(runnerPy), "__pycache__") {
				t.Fatalf("ask names %q, Bytecode %q: want %s in runner.py's __pycache__", name, b.Bytecode, bytecodeName(pyFacts))
			}
			writeAsked(t, b)
			tc.change(t, runnerPy, python, b.Bytecode)
			got := BootFor(runnerPy, python)
			if got.FromBytecode() != tc.want {
				t.Fatalf("FromBytecode %v (File %q), want %v", got.FromBytecode(), got.File, tc.want)
			}
			if tc.want {
				if got.File != b.Bytecode || got.Env != nil {
					t.Errorf("File %q, Env %q: want %q and no ask", got.File, got.Env, b.Bytecode)
				}
				return
			}
			if got.File != runnerPy {
				t.Errorf("File %q, want %q", got.File, runnerPy)
			}
			askFields(t, got)
		})
	}
}

// TestBootOneFilePerInterpreter: the bytecode is one file per interpreter
// (the file its path leads to), not per path. Every venv of one python
// (a link to it) shares one: a file per path grew the runner dir by one
// for each venv ever used (temporary ones too), and each start lists that
// dir. Two interpreters behind one path (homes shared by hosts or
// containers with another python at /usr/bin/python3, a link switched
// between versions) each keep theirs: one file per path was rewritten at
// each start of the other, which then compiled runner.py twice.
func TestBootOneFilePerInterpreter(t *testing.T) {
	runnerPy, python := bootFiles(t)
	other := python + "-other"
	if err := os.WriteFile(other, []byte("another interpreter"), 0o700); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	venvA, venvB, shared := filepath.Join(bin, "a-python"), filepath.Join(bin, "b-python"), filepath.Join(bin, "python3")
	for _, l := range []string{venvA, venvB, shared} {
		if err := os.Symlink(python, l); err != nil {
			t.Fatal(err)
		}
	}
	writeAsked(t, BootFor(runnerPy, venvA))
	if b := BootFor(runnerPy, venvB); !b.FromBytecode() {
		t.Errorf("a second venv of the interpreter: File %q, want the bytecode the first one's start wrote", b.File)
	}

	// The link switched to another interpreter, whose start writes its own,
	// then back: the first one's is still there.
	if err := os.Remove(shared); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, shared); err != nil {
		t.Fatal(err)
	}
	b := BootFor(runnerPy, shared)
	if b.FromBytecode() {
		t.Fatalf("another interpreter behind the link: File %q, want runner.py", b.File)
	}
	writeAsked(t, b)
	if err := os.Remove(shared); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(python, shared); err != nil {
		t.Fatal(err)
	}
	if b := BootFor(runnerPy, shared); !b.FromBytecode() {
		t.Errorf("the link back to the first interpreter: File %q, want its bytecode, kept", b.File)
	}
	if names, _ := filepath.Glob(filepath.Join(filepath.Dir(runnerPy), "__pycache__", "runner.*.pyc")); len(names) != 2 {
		t.Errorf("bytecode files %q, want one per interpreter: 2", names)
	}
}

// TestBootRefusedAsksAgain: a start from bytecode the interpreter refused
// goes on from runner.py, with the ask to write it anew, and without it.
func TestBootRefusedAsksAgain(t *testing.T) {
	runnerPy, python := bootFiles(t)
	writeAsked(t, BootFor(runnerPy, python))
	b := BootFor(runnerPy, python)
	if !b.FromBytecode() {
		t.Fatalf("File %q, want the bytecode", b.File)
	}
	r := b.Refused()
	if r.FromBytecode() || r.File != runnerPy {
		t.Fatalf("File %q, want %q", r.File, runnerPy)
	}
	if f := askFields(t, r); f[1] != filepath.Base(b.Bytecode) {
		t.Errorf("asks for %q, want %q", f[1], filepath.Base(b.Bytecode))
	}
	if _, err := os.Lstat(b.Bytecode); !os.IsNotExist(err) {
		t.Errorf("the refused bytecode is still there: %v", err)
	}
}

// TestBootWithoutKey: no bytecode is keyed to a relative path (another
// file in the interpreter's cwd than in this process's), nor to a file
// not there.
func TestBootWithoutKey(t *testing.T) {
	runnerPy, python := bootFiles(t)
	for _, tc := range []struct{ name, runnerPy, python string }{
		{"relative interpreter", runnerPy, "python3"},
		{"relative runner.py", "runner.py", python},
		{"interpreter not there", runnerPy, python + "-gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := BootFor(tc.runnerPy, tc.python)
			if b.File != tc.runnerPy || b.Bytecode != "" || b.Env != nil {
				t.Errorf("BootFor = %+v, want runner.py alone", b)
			}
		})
	}
}

func mustRemove(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

func mustChmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// flip inverts byte i of the file at path, in place.
func flip(t *testing.T, path string, i int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[i] ^= 0xff
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
