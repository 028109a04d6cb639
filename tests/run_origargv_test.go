package tests

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// origArgvScript prints what a script sees of python3's own command line
// and of how __main__ was loaded.
const origArgvScript = `import sys, __main__
d = vars(__main__)
ldr = d.get('__loader__', 'absent')
print('orig_argv', sys.orig_argv[1:])
print('loader', ldr if isinstance(ldr, (type, str)) else (type(ldr).__name__, ldr.name, ldr.path))
print('cached', d.get('__cached__', 'absent'), 'spec', getattr(d.get('__spec__'), 'name', None), 'package', d.get('__package__'))
`

// sys.orig_argv is python3's for the same command line, after the
// interpreter evalhost started (not runner.py), and __main__'s __loader__
// and __cached__ are python3's: FILE, -c, -, -m, with interpreter options,
// one-shot and under --session.
func TestRunOrigArgvAsPython(t *testing.T) {
	if !testkit.PythonAtLeast(t, 3, 10) {
		t.Skip("sys.orig_argv is 3.10's")
	}
	dir := t.TempDir()
	main := writeScript(t, dir, "main.py", origArgvScript)
	writeScript(t, dir, "origmod.py", origArgvScript)
	rows := []struct {
		name  string
		args  []string // after run and python3 alike
		stdin string
	}{
		{name: "a relative FILE and its arguments", args: []string{"main.py", "a", "--b", "-c"}},
		{name: "an absolute FILE", args: []string{main}},
		{name: "-c CODE and its arguments", args: []string{"-c", origArgvScript, "x", "-y"}},
		{name: "- on stdin", args: []string{"-", "y"}, stdin: origArgvScript},
		{name: "-m MODULE", args: []string{"-m", "origmod", "x"}},
		{name: "interpreter options first", args: []string{"-u", "-B", "-W", "error", "-X", "dev", "main.py", "z"}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			cmd := command(t, append([]string{"run"}, r.args...)...)
			py := exec.Command("python3", r.args...)
			cmd.Dir, py.Dir = dir, dir
			if r.stdin != "" {
				cmd.Stdin, py.Stdin = strings.NewReader(r.stdin), strings.NewReader(r.stdin)
			}
			sameAsPythonCmd(t, cmd, py)
		})
	}
	t.Run("--session", func(t *testing.T) {
		h := newDaemonHome(t)
		for _, args := range [][]string{{main, "a"}, {"-c", origArgvScript, "b"}} {
			cmd := h.cmd(append([]string{"run", "--session", "orig"}, args...)...)
			py := exec.Command("python3", args...)
			cmd.Dir, py.Dir = dir, dir
			sameAsPythonCmd(t, cmd, py)
		}
	})
	// argv[0] is the interpreter evalhost started, not runner.py's.
	t.Run("the interpreter first", func(t *testing.T) {
		out, errOut, code := runEvalhost(t, "", "run", "-c", "import sys; print(sys.orig_argv[0] == sys.executable, sys.orig_argv[0])")
		if code != 0 || !strings.HasPrefix(out, "True ") || !filepath.IsAbs(strings.TrimSpace(strings.TrimPrefix(out, "True "))) {
			t.Errorf("stdout %q, exit %d, want True and the interpreter's path; stderr:\n%s", out, code, errOut)
		}
	})
}
