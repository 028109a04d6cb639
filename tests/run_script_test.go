package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// plainScripts are files without a cell marker whose last statement is an
// expression: python3 shows no expression statement's value, so `evalhost
// run FILE > out` must write only what the script prints.
var plainScripts = []struct{ name, src string }{
	{"main() returning 0", "def main():\n    print('working')\n    return 0\n\nmain()\n"},
	{"a write() call", "import os\nopen(os.devnull, 'w').write('hello')\n"},
	{"subprocess.run", "import subprocess\nsubprocess.run(['true'])\n"},
	{"a bare string", "x = 1\n'not shown'\n"},
	{"sys.displayhook replaced", "import sys\nsys.displayhook = lambda v: print('hook saw', v)\n42\n"},
	{"a docstring then code", "\"\"\"The script's doc.\"\"\"\nprint(__doc__)\n__doc__\n"},
	{"only a docstring", "\"\"\"Only a docstring.\"\"\"\n"},
	{"a one-line expression", "1 + 1\n"},
	{"a figure left open", "import os\nos.environ['MPLBACKEND'] = 'Agg'\ntry:\n    import matplotlib.pyplot as plt\n    plt.plot([1, 2])\nexcept ImportError:\n    pass\nprint('plotted')\n"},
	// python3 runs these and prints nothing
	{"an empty file", ""},
	{"only comments", "#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\n# nothing yet\n"},
	{"only blank lines", "\n  \n\n"},
}

// An empty plain script, or one of only comments, is as quiet under
// --session and as a shell script (bash FILE prints nothing either); a
// percent script without code cells still says that nothing ran.
func TestRunEmptyScriptQuiet(t *testing.T) {
	dir := t.TempDir()
	h := newDaemonHome(t)
	for _, tc := range []struct {
		name, src string
		args      []string
		stderr    string
	}{
		{name: "under --session", src: "# nothing yet\n", args: []string{"--session", "e"}},
		{name: "an empty one under --session", args: []string{"--session", "e"}},
		{name: "a shell script", src: "#!/bin/sh\n# nothing yet\n", args: []string{"--language", "sh"}},
		{name: "a percent script of markers", src: "# %%\n# %% [markdown]\n# notes\n",
			stderr: "evalhost run: s.py has no code cells; nothing ran\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writeScript(t, dir, "s.py", tc.src)
			cmd := h.cmd(append(append([]string{"run"}, tc.args...), "s.py")...)
			cmd.Dir = dir
			out, errOut, code := runCaptured(t, cmd, false)
			if out != "" || errOut != tc.stderr || code != 0 {
				t.Errorf("stdout %q, stderr %q, exit %d; want nothing, %q, 0", out, errOut, code, tc.stderr)
			}
		})
	}
}

// A plain script runs as python3 runs it: stdout, stderr and exit code
// byte for byte, as a FILE and on stdin (run -).
func TestRunPlainScriptShowsNoValue(t *testing.T) {
	for _, c := range plainScripts {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "script.py")
			if err := os.WriteFile(p, []byte(c.src), 0o600); err != nil {
				t.Fatal(err)
			}
			sameAsPython(t, []string{p}, []string{p})
		})
		t.Run(c.name+", run -", func(t *testing.T) {
			out, errOut, code := runEvalhost(t, c.src, "run", "-")
			py := exec.Command("python3", "-")
			py.Dir, py.Stdin = t.TempDir(), strings.NewReader(c.src)
			pyOut, pyErr, pyCode := runCaptured(t, py, false)
			if out != pyOut || errOut != pyErr || code != pyCode {
				t.Errorf("run -: stdout %q, stderr %q, exit %d; python3 -: %q, %q, %d", out, errOut, code, pyOut, pyErr, pyCode)
			}
		})
	}
}

// python3 compiles a file without top-level await: its SyntaxError, exit 1,
// where notebook cells (TestRunCellsShowTheirLastValue) await; on stdin
// (run -) too, at File "<stdin>", line N, as python3 - says it.
func TestRunPlainScriptRefusesTopLevelAwait(t *testing.T) {
	rows := []struct{ name, src string }{
		{"await", "import asyncio\nprint('not run')\nawait asyncio.sleep(0)\n"},
		{"async for", "async def g():\n    yield 1\nasync for x in g(): print(x)\n"},
		{"await in a comprehension", "import asyncio\nprint([await asyncio.sleep(0, i) for i in range(2)])\n"},
	}
	for _, c := range rows {
		t.Run(c.name, func(t *testing.T) {
			p := writeScript(t, t.TempDir(), "script.py", c.src)
			sameAsPython(t, []string{p}, []string{p})
		})
		t.Run(c.name+", run -", func(t *testing.T) {
			out, errOut, code := runEvalhost(t, c.src, "run", "-")
			py := exec.Command("python3", "-")
			py.Dir, py.Stdin = t.TempDir(), strings.NewReader(c.src)
			pyOut, pyErr, pyCode := runCaptured(t, py, false)
			if out != pyOut || code != pyCode || errOut != pyErr || !strings.HasPrefix(lastLine(pyErr), "SyntaxError") {
				t.Errorf("run -: stdout %q, stderr %q, exit %d; python3 -: %q, %q, %d", out, errOut, code, pyOut, pyErr, pyCode)
			}
		})
	}
}

// Under --session too: the background process's eval line carries the
// flag (serve's cell "script").
func TestRunPlainScriptSession(t *testing.T) {
	h := newDaemonHome(t)
	for _, c := range plainScripts[:5] {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "script.py")
			if err := os.WriteFile(p, []byte(c.src), 0o600); err != nil {
				t.Fatal(err)
			}
			out, errOut, code := h.run("run", "--session", "plain", p)
			pyOut, pyErr, pyCode := python(t, false, p)
			if out != pyOut || errOut != pyErr || code != pyCode {
				t.Errorf("run --session: stdout %q, stderr %q, exit %d; python3: %q, %q, %d", out, errOut, code, pyOut, pyErr, pyCode)
			}
		})
	}
	// The session's next -c cell is a notebook's again.
	if out, _, code := h.run("run", "--session", "plain", "-c", "6 * 7"); out != "42\n" || code != 0 {
		t.Errorf("a -c cell after the script: stdout %q, exit %d, want 42", out, code)
	}
}

// Cells keep notebook semantics: a percent script's cells and -c cells
// show their last expression (README's examples), and so does a script
// with only a markdown marker or Jupytext's header.
func TestRunCellsShowTheirLastValue(t *testing.T) {
	cases := []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"percent script", "x = 41\n# %%\nx + 1\n", []string{"run", "-"}, "42\n"},
		{"code before the first marker", "x = 41\nx\n# %%\nx + 1\n", []string{"run", "-"}, "41\n42\n"},
		{"only a markdown marker", "x = 41\nx + 1\n# %% [markdown]\n# prose\n", []string{"run", "-"}, "42\n"},
		{"Jupytext's header", "# ---\n# jupyter:\n#   jupytext:\n#     formats: py:light\n# ---\n\nx = 41\nx + 1\n", []string{"run", "-"}, "42\n"},
		{"-c", "", []string{"run", "-c", "import sys; sys.version_info[:1]"}, "(3,)\n"},
		{"-c cells", "", []string{"run", "-c", "x = 2", "-c", "x * 21"}, "42\n"},
		// Top-level await stays where cells are a notebook's.
		{"percent script awaits", "import asyncio\n# %%\nawait asyncio.sleep(0, 42)\n", []string{"run", "-"}, "42\n"},
		{"-c awaits", "", []string{"run", "-c", "import asyncio", "-c", "await asyncio.sleep(0, 42)"}, "42\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := runEvalhost(t, c.stdin, c.args...)
			if out != c.want || code != 0 {
				t.Errorf("stdout %q, exit %d, want %q; stderr:\n%s", out, code, c.want, errOut)
			}
		})
	}
}

// A plain script's plt.show() sends its figures (under the runner's Agg,
// where python3 would show nothing): a file an agent can look at. The
// figure it leaves open after is not shown, as python3 shows none.
func TestRunPlainScriptShowsFiguresAtShow(t *testing.T) {
	testkit.NeedModuleIn(t, "python3", "matplotlib", "matplotlib")
	dir := t.TempDir()
	p := filepath.Join(dir, "plot.py")
	src := "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nprint('before')\nplt.show()\nprint('after')\nplt.figure()\nplt.plot([2, 1])\n"
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	images := filepath.Join(dir, "images")
	out, errOut, code := runEvalhost(t, "", "run", "--images-dir", images, p)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || len(lines) != 3 || lines[0] != "before" || !strings.HasPrefix(lines[1], "[image/png saved to ") || lines[2] != "after" {
		t.Fatalf("exit %d, stdout %q, want before, the shown figure's image, after; stderr:\n%s", code, out, errOut)
	}
	if saved, _ := filepath.Glob(filepath.Join(images, "*.png")); len(saved) != 1 {
		t.Errorf("images saved: %q, want the one plt.show() showed", saved)
	}
}

// Through IPython too, in the runner (--ipython) and in a gateway kernel:
// a plain script shows no value, as `ipython FILE` runs one, while the
// session's notebook cells still show theirs (the interactivity the script
// cell set aside is put back).
func TestRunPlainScriptIPythonAndGateway(t *testing.T) {
	testkit.NeedModuleIn(t, "python3", "IPython", "ipython")
	home, dir := t.TempDir(), t.TempDir()
	p := filepath.Join(dir, "s.py")
	if err := os.WriteFile(p, []byte("def main():\n    print('working')\n    return 0\n\nmain()\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, string, int) {
		cmd := exec.Command(binary, args...)
		cmd.Env = append(os.Environ(), "EVALHOST_HOME="+home)
		cmd.Dir = dir
		return runCaptured(t, cmd, false)
	}
	for _, backend := range [][]string{{"--ipython"}, {"--backend", "gateway"}} {
		t.Run(backend[len(backend)-1], func(t *testing.T) {
			if backend[0] != "--ipython" {
				testkit.NeedModuleIn(t, "python3", "kernel_gateway, ipykernel", "jupyter_kernel_gateway ipykernel")
				t.Cleanup(func() { run("gateway", "stop") })
			}
			if out, errOut, code := run(append(append([]string{"run"}, backend...), p)...); out != "working\n" || code != 0 {
				t.Errorf("a plain script: stdout %q, exit %d, want only what it printed; stderr:\n%s", out, code, errOut)
			}
			// A percent script: its first cell is the script above, its second a notebook cell.
			nb := filepath.Join(dir, "nb.py")
			if err := os.WriteFile(nb, []byte("# %%\nx = 41\nx\n# %%\nx + 1\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if out, errOut, code := run(append(append([]string{"run"}, backend...), nb)...); out != "41\n42\n" || code != 0 {
				t.Errorf("a percent script: stdout %q, exit %d, want 41 and 42; stderr:\n%s", out, code, errOut)
			}
		})
	}
}

// A percent script whose Jupytext header jupytext cannot read runs, as
// python3 runs the file (the header is comments to it), with one line on
// stderr naming what jupytext refuses: where the rest of the header still
// says how to cut the cells, they run as the percent script's; where it
// cannot say the format (format_name no string, the section not YAML),
// the file runs whole, as python3 runs it, not cut into cells of a
// format it may not be. stdout and the exit code are python3's.
func TestRunAHeaderJupytextRefuses(t *testing.T) {
	const cells = "\n# %%\nx = 41\nprint(x + 1)\n# %%\nprint('second')\n"
	header := func(lines ...string) string {
		return "# ---\n# jupyter:\n" + strings.Join(lines, "\n") + "\n# ---\n"
	}
	cases := []struct {
		name, src string
		says      string // in the warning
	}{
		{"a kernelspec without display_name", header("#   kernelspec:", "#     name: python3") + cells,
			"jupyter.kernelspec has no display_name (a string)"},
		{"kernelspec: 3", header("#   kernelspec: 3") + cells, "jupyter.kernelspec is 3 (an int), where jupytext reads a mapping"},
		{"language_info without name", header("#   language_info:", "#     version: 3.11") + cells, "jupyter.language_info has no name"},
		// comment_magics: false still holds: the commented magic stays a
		// comment, as under python3.
		{"comment_magics: false past a bad kernelspec",
			header("#   jupytext:", "#     comment_magics: false", "#   kernelspec: 3") + "\n# %%\n# %time x = 1\nprint('no magic')\n",
			"jupyter.kernelspec is 3 (an int)"},
		// Run whole: a bare expression at a cell's end shows nothing, as
		// under python3 (a notebook's cell would show 42).
		{"format_name: 3", header("#   jupytext:", "#     text_representation:", "#       format_name: 3") + "\n# %%\nx = 41\nx + 1\n# %%\nprint(x)\n",
			"format_name is 3 (an int), where jupytext reads a string"},
		{"a section that is not YAML", header("#   kernelspec:", "#     display_name: Python 3: env", "#     name: python3") + "\n# %%\nx = 41\nx + 1\n# %%\nprint(x)\n",
			"not YAML"},
	}
	dir := t.TempDir()
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			script := writeScript(t, dir, "h"+string(rune('a'+i))+".py", c.src)
			out, errOut, code := runCaptured(t, command(t, "run", script), false)
			pyOut, pyErr, pyCode := runCaptured(t, pythonCmd(t, script), false)
			if out != pyOut || code != pyCode || pyErr != "" {
				t.Errorf("stdout %q, exit %d; python3's %q, %d (stderr %q)", out, code, pyOut, pyCode, pyErr)
			}
			if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "evalhost run: warning: ") || !strings.Contains(errOut, c.says) {
				t.Errorf("stderr %q, want one warning line saying %q", errOut, c.says)
			}
		})
	}
}
