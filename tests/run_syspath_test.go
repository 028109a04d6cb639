package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// pathProbe prints sys.path reduced to the entries that differ between
// command lines, named: ” and the directories of names (the cwd w, the
// script's t, the link's l, PYTHONPATH's pp), which pathTree fills in;
// then which json it imports, the cwd's (which says SHADOW) or the
// stdlib's. It forgets an earlier json first, so a session's later run
// imports it again as a new python3 would.
const pathProbe = `import sys
names = NAMES
print([("''" if p == "" else names.get(p)) for p in sys.path if p == "" or p in names])
sys.modules.pop("json", None)
import json
print(json.dumps(1))
`

// pathTree lays out the side-by-side runs' files under a new directory:
// w, the cwd, with a json.py that shadows the stdlib's and probe.py (for
// -m and a script in the cwd); t/r.py, a script elsewhere, with the
// brief's plain repro t/plain.py; l/link.py, a link to t/r.py; pp, an
// empty PYTHONPATH directory, which env (what both runs get) names.
func pathTree(t *testing.T) (w, probe string, env []string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range []string{"w", "t", "l", "pp"} {
		names = append(names, strconv.Quote(filepath.Join(root, d))+": "+strconv.Quote(d))
	}
	probe = strings.Replace(pathProbe, "NAMES", "{"+strings.Join(names, ", ")+"}", 1)
	files := map[string]string{
		"w/json.py":  "print('SHADOW')\ndef dumps(x):\n    return 'the cwd json'\n",
		"w/probe.py": probe,
		"t/r.py":     probe,
		"t/plain.py": "import json; print(json.dumps(1))\n",
		"pp/.keep":   "",
	}
	for name, src := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, "l"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "t", "r.py"), filepath.Join(root, "l", "link.py")); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "w"), probe, []string{"PYTHONPATH=" + filepath.Join(root, "pp")}
}

// pathRows are python3 command lines run from w, whose json.py shadows
// the stdlib's where python3 puts the cwd on sys.path: -c, - and -m, not
// FILE.
// PROBE in args and stdin is pathTree's probe.
var pathRows = []struct {
	name  string
	args  []string
	stdin string
}{
	{name: "the brief's repro: a script elsewhere imports the stdlib's json", args: []string{"../t/plain.py"}},
	{name: "a script elsewhere: its directory, no cwd, no ''", args: []string{"../t/r.py"}},
	{name: "-c: '' first, as python3 -c (the cwd's json)", args: []string{"-c", "PROBE"}},
	{name: "- (stdin): '' first", args: []string{"-"}, stdin: "PROBE"},
	{name: "-m: the cwd's full path first", args: []string{"-m", "probe"}},
	{name: "a script in the cwd: its directory once, no ''", args: []string{"probe.py"}},
	{name: "a linked script: the target's directory", args: []string{"../l/link.py"}},
	{name: "the script elsewhere again", args: []string{"../t/r.py", "x"}},
}

// evalhost run's sys.path is python3's for the same command line, so a
// module in the cwd shadows the stdlib's only where python3's would:
// one-shot (from runner.py, and from its bytecode, as every start but an
// interpreter's first), and under one --session running them in turn
// (each run takes back what the one before set).
func TestRunSysPathAsPython(t *testing.T) {
	w, probe, env := pathTree(t)
	h := newDaemonHome(t)
	for _, mode := range []struct {
		name string
		cmd  func(args ...string) *exec.Cmd
	}{
		{"one-shot", func(args ...string) *exec.Cmd { return command(t, append([]string{"run"}, args...)...) }},
		{"one-shot from the runner's bytecode", func(args ...string) *exec.Cmd {
			cmd := command(t, append([]string{"run"}, args...)...)
			primeBytecode(t, cmd.Env, testkit.Python(t))
			return cmd
		}},
		{"one --session in turn", func(args ...string) *exec.Cmd {
			return h.cmd(append([]string{"run", "--session", "paths"}, args...)...)
		}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			for _, r := range pathRows {
				t.Run(r.name, func(t *testing.T) {
					args, stdin := withProbe(r.args, probe), strings.ReplaceAll(r.stdin, "PROBE", probe)
					cmd := mode.cmd(args...)
					cmd.Dir, cmd.Env, cmd.Stdin = w, append(cmd.Env, env...), strings.NewReader(stdin)
					pyCmd := exec.Command("python3", args...)
					pyCmd.Dir, pyCmd.Env, pyCmd.Stdin = w, append(os.Environ(), env...), strings.NewReader(stdin)
					sameAsPythonCmd(t, cmd, pyCmd)
				})
			}
		})
	}
}

// A kernel behind the gateway gets python3's sys.path too: the runner's
// rule (runner.ArgvSource) takes the kernel's cwd entry and IPython's ”.
func TestRunSysPathAsPythonGateway(t *testing.T) {
	testkit.NeedModuleIn(t, "python3", "kernel_gateway, ipykernel", "jupyter_kernel_gateway ipykernel")
	w, probe, _ := pathTree(t) // the kernel has the gateway's environment: no PYTHONPATH
	home := t.TempDir()
	run := func(args ...string) *exec.Cmd {
		cmd := exec.Command(binary, args...)
		cmd.Env = append(os.Environ(), "EVALHOST_HOME="+home)
		cmd.Dir = w
		return cmd
	}
	t.Cleanup(func() { run("gateway", "stop").Run() })
	for _, r := range pathRows {
		if r.stdin != "" || r.args[0] == "-m" {
			continue // the gateway's -m and stdin are the runner's rule as above; spare the kernels
		}
		t.Run(r.name, func(t *testing.T) {
			args := withProbe(r.args, probe)
			out, errOut, code := runCaptured(t, run(append([]string{"run", "--backend", "gateway"}, args...)...), false)
			pyCmd := exec.Command("python3", args...)
			pyCmd.Dir = w
			pyOut, _, _ := runCaptured(t, pyCmd, false)
			if out != pyOut || code != 0 {
				t.Errorf("exit %d, stdout %q, python3 printed %q; stderr:\n%s", code, out, pyOut, errOut)
			}
		})
	}
}

// withProbe is args with PROBE replaced by probe.
func withProbe(args []string, probe string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, "PROBE", probe)
	}
	return out
}

// TestRunSysPathWholeAsPython: the whole of a script's sys.path is
// python3's, started from runner.py's bytecode (every start under an
// interpreter but its first) too: neither the runner's dir nor its
// __pycache__, python3's first entry for a .pyc script, is on it.
func TestRunSysPathWholeAsPython(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "path.py")
	if err := os.WriteFile(script, []byte("import sys\nprint(sys.path)\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("file", func(t *testing.T) { parityRun(t, dir, "", script) })
	t.Run("isolated file", func(t *testing.T) { parityRun(t, dir, "", "-I", script) })
	t.Run("code", func(t *testing.T) { parityRun(t, dir, "", "-c", "import sys; print(sys.path)") })
}
