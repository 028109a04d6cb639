package runner

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/testkit"
)

// TestWarningsIgnoreTheCwd is TestOwnImportsIgnoreTheCwd for warnings: the
// interpreter shows a warning in the thread that warned, and on the way
// imports warnings (3.13 for any warning, every version for a coroutine
// never awaited), linecache (warnings' formatting), tracemalloc (a
// warning with its source), tokenize (3.13's linecache, for a file on
// disk) and traceback (a coroutine's origin): all found where the
// interpreter found modules as it started, never where another user
// planted them. The cells come before the warm-up, which imports
// linecache itself. Each row on the machine's python3, 3.12 and 3.13.
func TestWarningsIgnoreTheCwd(t *testing.T) {
	onDisk := filepath.Join(t.TempDir(), "warner.py")
	writeFile(t, filepath.Dir(onDisk), filepath.Base(onDisk), "the line on disk\n")
	rows := []struct {
		attack
		since int // the first 3.x that warns so
	}{
		{attack{name: "SyntaxWarning once a cell imported warnings", imports: "import warnings",
			cells: []string{"import warnings", `x = '\d'`},
			check: func(t *testing.T, c cellResult) {
				// 3.14 words it so (the row runs on several interpreters)
				line := `:1: SyntaxWarning: invalid escape sequence '\d'`
				if strings.Contains(c.stderr, "is an invalid escape sequence") {
					line = `:1: SyntaxWarning: "\d" is an invalid escape sequence.`
				}
				wantStderr(line)(t, c)
			}}, 12},
		{attack{name: "SyntaxWarning in a first cell", cells: []string{"x = 1\nx is 1"},
			check: wantStderr(`:2: SyntaxWarning: "is" with `)}, 8},
		{attack{name: "coroutine never awaited", cells: []string{"async def f():\n    pass\nf()\nNone"},
			check: wantStderr(":3: RuntimeWarning: coroutine 'f' was never awaited")}, 8},
		{attack{name: "coroutine never awaited, with its origin",
			cells: []string{"import sys\nsys.set_coroutine_origin_tracking_depth(2)\nasync def f():\n    pass\nf()\n" +
				"sys.set_coroutine_origin_tracking_depth(0)"},
			check: wantStderr("coroutine 'f' was never awaited", "Coroutine created at", "    f()")}, 8},
		{attack{name: "ResourceWarning with its source", imports: "import warnings",
			cells: []string{"import os, warnings\nwarnings.simplefilter('default')\nf = open(os.devnull)\ndel f"},
			check: wantStderr("ResourceWarning: unclosed file", "tracemalloc")}, 8},
		{attack{name: "warning of a file on disk", imports: "import warnings",
			cells: []string{"import warnings\nwarnings.warn_explicit('look', UserWarning, " + pyStr(onDisk) + ", 1)"},
			check: wantStderr("warner.py:1: UserWarning: look", "  the line on disk")}, 8},
		{attack{name: "warnings as errors", imports: "import warnings",
			cells: []string{"import warnings\nwarnings.simplefilter('error')\nwarnings.warn('boom')"}, ename: "UserWarning",
			check: wantTraceback("    warnings.warn('boom')", "UserWarning: boom")}, 8},
		// warnings is the interpreter's even for a cell: the import above
		// cannot be told from it
		{attack{name: "a cell's own import of warnings", cells: []string{"import warnings\nwarnings.warn('own')"},
			check: wantStderr(":2: UserWarning: own")}, 8},
	}
	for _, py := range []string{"", "3.12", "3.13"} {
		t.Run("python"+py, func(t *testing.T) {
			exe, runner := testkit.Python(t), ""
			if py != "" {
				// a copy of its own: the shared one's tests expect one bytecode cache
				exe = testkit.PythonVersion(t, py)
				var err error
				if runner, err = Path(t.TempDir()); err != nil {
					t.Fatal(err)
				}
			}
			minor := minorOf(t, exe)
			for _, row := range rows {
				for _, where := range []string{"start cwd", "request cwd", "directory a cell added"} {
					t.Run(row.name+" in the "+where, func(t *testing.T) {
						if minor < row.since {
							t.Skipf("3.%d does not warn so: 3.%d+ does", minor, row.since)
						}
						tc := row.attack
						tc.python, tc.runner, tc.when = exe, runner, beforeWarmUp
						dir, markers := plant(t, exe, tc.imports)
						c, _ := tc.run(t, dir, where, markers)
						tc.check(t, c)
						if tc.ename == "" && c.done().Status != frames.StatusOK {
							t.Errorf("done %+v", c.done())
						}
						if got := ran(t, markers); len(got) > 0 {
							t.Errorf("the runner ran planted %v", got)
						}
					})
				}
			}
		})
	}
}

// minorOf is the x of exe's Python 3.x.
func minorOf(t *testing.T, exe string) int {
	t.Helper()
	out, err := exec.Command(exe, "-c", "import sys; print(sys.version_info[1])").Output()
	if err != nil {
		t.Fatalf("%s: %v", exe, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("%s: version %q", exe, out)
	}
	return n
}

// TestSyntaxWarningFilteredAsPython: a cell's compile-time warning meets a
// -W filter's module as python3's of a script does (3.15 compiles it as
// module __main__, its filename no longer matched), the first cell
// (treeless.py) and a later one, as <cell N> and with its file's name.
func TestSyntaxWarningFilteredAsPython(t *testing.T) {
	dir := t.TempDir()
	code := "x = 1\nx is 1\n"
	file := writeFile(t, dir, "case.py", code)
	for _, filter := range []string{"error::SyntaxWarning:__main__", "error::SyntaxWarning:case", "error::SyntaxWarning"} {
		out, err := exec.Command(python(t), "-W", filter, file).CombinedOutput()
		errs := err != nil && strings.Contains(string(out), "SyntaxError: ")
		for _, tc := range []struct {
			name  string
			first bool
			req   map[string]any
		}{
			{"first cell", true, map[string]any{"code": code}},
			{"later cell", false, map[string]any{"code": code}},
			{"first cell of the file", true, map[string]any{"code": code, "filename": file}},
			{"later cell of the file", false, map[string]any{"code": code, "filename": file}},
		} {
			t.Run(filter+"/"+tc.name, func(t *testing.T) {
				p := start(t, startOpts{pyArgs: []string{"-W", filter}})
				if !tc.first {
					p.run("pass")
				}
				c := p.runReq(tc.req)
				if errs {
					wantError(t, c, "SyntaxError")
				} else if !strings.Contains(c.stderr, "SyntaxWarning") || c.done().Status != frames.StatusOK {
					t.Errorf("done %+v, stderr %q; want the warning shown, as python3 -W %s shows it:\n%s", c.done(), c.stderr, filter, out)
				}
			})
		}
	}
}
