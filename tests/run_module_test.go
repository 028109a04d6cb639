package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// moduleFiles are the modules and packages the -m rows run from their cwd.
var moduleFiles = map[string]string{
	"mod.py": `import sys
def main(args):
    print("main", args, __name__, ascii(__file__), __spec__.name, repr(__package__))
    print("argv", sys.argv, "path0", ascii(sys.path[0]))
if __name__ == "__main__":
    main(sys.argv[1:])
`,
	"pkg/__init__.py": "print('pkg imported', __name__)\n",
	"pkg/__main__.py": `import sys
from . import helper
print("pkg main", sys.argv, __name__, __package__, __spec__.name, helper.X)
`,
	"pkg/helper.py":      "X = 42\n",
	"nomain/__init__.py": "",
	"cli.py": `import argparse
p = argparse.ArgumentParser(description="A tool.")
p.add_argument("n", type=int)
p.add_argument("--scale", type=float, default=1.0)
a = p.parse_args()
print(a.n * a.scale)
`,
	"boom.py":  "def f(x):\n    return 1 / x\n\nf(0)\n",
	"quits.py": "import sys\nprint('bye')\nsys.exit(3)\n",
}

// TestRunModule runs evalhost run -m beside python3 -m, the same
// arguments and stdin in the same cwd: stdout, exit code and stderr (the
// traceback with runpy's frames, argparse's usage, "No module named")
// must be python3's. The interpreter's path before "No module named" is
// not compared.
func TestRunModule(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not on PATH")
	}
	dir := t.TempDir()
	writeModuleFiles(t, dir)
	rows := []struct {
		name   string
		args   []string // after -m
		flags  []string // run's, before -m
		stdin  string
		code   int
		stdout string // a part python3's stdout must have, so the row tests something
	}{
		{name: "json.tool reads stdin", args: []string{"json.tool"}, stdin: `{"a": [1, 2]}`, stdout: `"a": [`},
		{name: "flags after MODULE are the module's, run's too", args: []string{"json.tool", "--sort-keys", "--json-lines"},
			stdin: "{\"b\": 1, \"a\": 2}\n{\"c\": 3}\n", stdout: "\"a\": 2,\n    \"b\": 1"}, // flags python3.8's json.tool has
		{name: "run's flags before -m", flags: []string{"--timeout", "20"}, args: []string{"json.tool"}, stdin: "[]", stdout: "[]"},
		{name: "-mMODULE", args: []string{"-mjson.tool"}, stdin: "[1]", stdout: "1"},
		{name: "a module with arguments and if __name__", args: []string{"mod", "a", "--b", "--", "-c"}, stdout: "main ['a', '--b', '--', '-c'] __main__"},
		{name: "a package's __main__", args: []string{"pkg", "x", "-y"}, stdout: "pkg main"},
		{name: "a package's module", args: []string{"pkg.helper"}},
		{name: "argparse --help", args: []string{"cli", "--help"}, stdout: "A tool."},
		{name: "argparse refuses", args: []string{"cli", "x"}, code: 2},
		{name: "argparse runs", args: []string{"cli", "3", "--scale", "2"}, stdout: "6.0"},
		{name: "http.server --help", args: []string{"http.server", "--help"}, stdout: "--bind"},
		{name: "a module not found", args: []string{"no_such_mod", "x"}, code: 1},
		{name: "a package without __main__", args: []string{"nomain"}, code: 1},
		{name: "a submodule not found", args: []string{"pkg.nope"}, code: 1, stdout: "pkg imported"},
		{name: "an error's traceback", args: []string{"boom"}, code: 1},
		{name: "sys.exit", args: []string{"quits"}, code: 3, stdout: "bye"},
	}
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			pyArgs := append([]string{"-m"}, tc.args...)
			if strings.HasPrefix(tc.args[0], "-m") {
				pyArgs = tc.args
			}
			py := exec.Command(python, pyArgs...)
			py.Dir = dir
			py.Stdin = strings.NewReader(tc.stdin)
			wantOut, wantErr, wantCode := runCaptured(t, py, false)
			if wantCode != tc.code || !strings.Contains(wantOut, tc.stdout) {
				t.Fatalf("python3 %q: exit %d, stdout %q; the row wants %d and %q", pyArgs, wantCode, wantOut, tc.code, tc.stdout)
			}
			args := append(append([]string{"run", "--python", python}, tc.flags...), pyArgs...)
			cmd := command(t, args...)
			cmd.Dir = dir
			cmd.Stdin = strings.NewReader(tc.stdin)
			out, errOut, code := runCaptured(t, cmd, false)
			if code != wantCode {
				t.Errorf("exit %d, python3's %d; stderr:\n%s", code, wantCode, errOut)
			}
			if out != wantOut {
				t.Errorf("stdout\n%s\nwant python3's\n%s", out, wantOut)
			}
			if got, want := moduleStderr(errOut), moduleStderr(wantErr); got != want {
				t.Errorf("stderr\n%s\nwant python3's\n%s", got, want)
			}
		})
	}
}

// A kernel behind the gateway runs -m as the same runpy call in a cell:
// a package's __main__ with its relative import, and a module not found
// said as python3 says it, not as IPython failing to show the chained
// runpy._Error (AttributeError: 'tuple' object has no attribute 'tb_frame').
func TestRunModuleGateway(t *testing.T) {
	testkit.NeedModuleIn(t, "python3", "kernel_gateway, ipykernel", "jupyter_kernel_gateway ipykernel")
	home, dir := t.TempDir(), t.TempDir()
	writeModuleFiles(t, dir)
	run := func(args ...string) (string, int) {
		cmd := exec.Command(binary, append([]string{"run", "--backend", "gateway"}, args...)...)
		cmd.Env = append(os.Environ(), "EVALHOST_HOME="+home)
		cmd.Dir = dir
		out, _, code := runCaptured(t, cmd, true)
		return out, code
	}
	t.Cleanup(func() {
		stop := exec.Command(binary, "gateway", "stop")
		stop.Env = append(os.Environ(), "EVALHOST_HOME="+home)
		stop.Run()
	})
	if out, code := run("-m", "pkg", "x"); code != 0 || !strings.Contains(out, "pkg main ['"+filepath.Join(dir, "pkg", "__main__.py")+"', 'x'] __main__ pkg pkg.__main__ 42") {
		t.Errorf("-m pkg x: exit %d:\n%s", code, out)
	}
	out, code := run("-m", "no_such_mod")
	if code != 1 || !strings.Contains(out, "SystemExit: ") || !strings.Contains(out, ": No module named no_such_mod") || strings.Contains(out, "AttributeError") {
		t.Errorf("-m no_such_mod: exit %d, want 1 and python3's message alone:\n%s", code, out)
	}
}

var noModulePfx = regexp.MustCompile(`(?m)^\S+: (No module named|Error while finding)`)

// moduleStderr is a -m run's stderr as compared: with "PYTHON" for the
// interpreter's path that runpy puts before "No module named"
// (sys.executable, which a venv or a link may spell differently).
func moduleStderr(s string) string {
	return noModulePfx.ReplaceAllString(s, "PYTHON: $1")
}

// A -m module runs in __main__'s namespace: under --session its globals
// stay in the session for the next command, as python3 -i -m shows them.
// What runpy set as the module's own (__spec__, __file__, __package__,
// __loader__, __cached__) goes with the next command, as a FILE's
// __file__ does: a later -c or FILE that kept the module's __spec__
// would have multiprocessing's spawn re-run the module in its workers.
func TestRunModuleSession(t *testing.T) {
	h := newDaemonHome(t)
	dir := t.TempDir()
	src := "import sys\ncount = globals().get('count', 0) + 1\nprint('run', count, sys.argv[1:])\n"
	if err := os.WriteFile(filepath.Join(dir, "counter.py"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "pk"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string]string{"pk/__init__.py": "", "pk/__main__.py": "print('pk', __package__)\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dunders := "print(count, __name__, __spec__, __package__, getattr(__loader__, '__name__', type(__loader__).__name__), '__file__' in globals(), '__cached__' in globals())"
	if err := os.WriteFile(filepath.Join(dir, "after.py"), []byte(dunders+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cached := "True" // 3.15 sets no __cached__ for a FILE
	if testkit.PythonAtLeast(t, 3, 15) {
		cached = "False"
	}
	steps := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--session", "m", "-m", "counter", "a"}, "run 1 ['a']\n"},
		{[]string{"run", "--session", "m", "-m", "counter", "--json"}, "run 2 ['--json']\n"},
		// -c's and FILE's own, as python3 sets them (TestRunOrigArgvAsPython)
		{[]string{"run", "--session", "m", "-c", dunders}, "2 __main__ None None BuiltinImporter False False\n"},
		{[]string{"run", "--session", "m", "-m", "pk"}, "pk pk\n"},
		{[]string{"run", "--session", "m", "after.py"}, "2 __main__ None None SourceFileLoader True " + cached + "\n"},
	}
	for _, s := range steps {
		cmd := h.cmd(s.args...)
		cmd.Dir = dir
		out, errOut, code := runCaptured(t, cmd, false)
		if code != 0 || out != s.want {
			t.Fatalf("%q: exit %d, stdout %q, want %q; stderr:\n%s", s.args, code, out, s.want, errOut)
		}
	}
}

// What -m refuses, as a usage error, before anything runs.
func TestRunModuleRefused(t *testing.T) {
	rows := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"-m without MODULE", []string{"run", "--json", "-m"}, "-m needs a MODULE"},
		{"-c then -m", []string{"run", "-c", "print(1)", "-m", "json.tool"}, "-m MODULE and -c CODE"},
		{"parameters and -m", []string{"run", "-p", "a", "1", "-m", "json.tool"}, "a module has no parameters cell"},
	}
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCaptured(t, command(t, tc.args...), false)
			if code != 2 || !strings.Contains(errOut, tc.wantErr) || out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, out, errOut, tc.wantErr)
			}
		})
	}
}

// writeModuleFiles writes moduleFiles, a package and modules, into dir.
func writeModuleFiles(t *testing.T, dir string) {
	t.Helper()
	for name, src := range moduleFiles {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
