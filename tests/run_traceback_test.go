package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Scripts whose tracebacks, warnings and SyntaxErrors evalhost run must
// place as python3 does: in the script, at its own line numbers, after a
// Jupytext header and a markdown cell too.
// stdout, when set, is evalhost's where it differs from python3's: a
// SyntaxError stops python3 before its first line runs, evalhost at its
// cell, after the cells before it ran.
var tracebackScripts = []struct{ name, src, stdout string }{
	{"tb.py", "import inspect, warnings\ndef f(x):\n    return 1/x\nwarnings.warn(\"careful\")\n# %%\nprint(\"cell 2\")\nf(0)\n", ""},
	{"header.py", "# ---\n# jupyter:\n#   kernelspec:\n#     display_name: Python 3\n#     name: python3\n# ---\n\n# %% [markdown]\n# Some prose.\n\n# %%\n" +
		"def g(n):\n    if n:\n        return g(n - 1)\n    raise ValueError(\"bottom\")\n# %%\ntry:\n    g(2)\nexcept ValueError as e:\n    raise KeyError(\"again\") from e\n", ""},
	{"syntax.py", "print(\"cell 1\")\n# %%\n\nx = 1\ny = (1,\n", "cell 1\n"},
	{"source.py", "import inspect\n# %%\n\ndef h():\n    \"\"\"Doc.\"\"\"\n    return 1\n# %%\nprint(inspect.getsource(h), end=\"\")\nprint(inspect.getsourcelines(h)[1])\n", ""},
	// past 1,000 lines a cell is compiled where it stands and moved (runner/lineshift.py):
	// a SyntaxError's message naming a line, an f-string's (3.9-3.11: its expression shown)
	{"far_bracket.py", "print(\"cell 1\")\n" + strings.Repeat("# filler\n", 1500) + "# %%\nx = (1,\n  2]\n", "cell 1\n"},
	{"far_fstring.py", "print(\"cell 1\")\n" + strings.Repeat("# filler\n", 1500) + "# %%\nx = 1\ny = f\"{x +}\"\n", "cell 1\n"},
}

// TestRunTracebackNamesTheFile compares evalhost run FILE (one-shot and
// under --session) with python3 FILE: each traceback's frame lines
// (`File "...", line N, in F`) and its last line, a warning's FILE:LINE:
// prefix, a SyntaxError's place and inspect.getsource's output.
func TestRunTracebackNamesTheFile(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not on PATH")
	}
	dir := t.TempDir()
	h := newDaemonHome(t)
	for _, s := range tracebackScripts {
		if err := os.WriteFile(filepath.Join(dir, s.name), []byte(s.src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range tracebackScripts {
		py := exec.Command(python, s.name)
		py.Dir = dir
		wantOut, wantErr, _ := runCaptured(t, py, false)
		if s.stdout != "" {
			wantOut = s.stdout
		}
		want := placeLines(wantErr)
		if s.name != "source.py" && len(want) == 0 {
			t.Fatalf("python3 %s printed no traceback or warning:\n%s", s.name, wantErr)
		}
		for _, mode := range []struct{ name string }{{"one-shot"}, {"--session"}} {
			t.Run(s.name+"/"+mode.name, func(t *testing.T) {
				args := []string{"run", "--python", python, s.name}
				if mode.name == "--session" {
					args = []string{"run", "--session", "tb", "--python", python, s.name}
				}
				cmd := h.cmd(args...)
				cmd.Dir = dir
				out, errOut, _ := runCaptured(t, cmd, false)
				if got := placeLines(errOut); strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("stderr's places differ from python3's\n got %q\nwant %q\nstderr:\n%s", got, want, errOut)
				}
				if out != wantOut {
					t.Errorf("stdout %q, want python3's %q", out, wantOut)
				}
			})
		}
	}
}

var (
	frameLine   = regexp.MustCompile(`^  File "[^"]*", line \d+`)
	warningLine = regexp.MustCompile(`^/\S*:\d+: \w*Warning: `)
	errorLine   = regexp.MustCompile(`^\w+(Error|Exception|Warning)\b`)
)

// placeLines are a run's stderr lines that say where: traceback frames
// with the source line shown under each (read from the file), warnings and
// each error's last line. What may be formatted differently (carets) is
// left out.
func placeLines(stderr string) []string {
	var out []string
	lines := strings.Split(stderr, "\n")
	for i, l := range lines {
		if frameLine.MatchString(l) || warningLine.MatchString(l) || errorLine.MatchString(l) {
			out = append(out, l)
			if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "    ") && strings.Trim(lines[i+1], " ^~") != "" {
				out = append(out, lines[i+1])
			}
		}
	}
	return out
}

// TestRunStdinTracebackAsPython compares evalhost run - (one-shot and
// under --session) with python3 - reading the same script on stdin: a
// traceback names File "<stdin>", line N (the line in the whole input, a
// percent script's later cells included) and shows no source line, as
// python3 cannot read one back; a warning is <stdin>:N: with none either.
// The whole stderr is compared, and stdout where python3 ran the script.
func TestRunStdinTracebackAsPython(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not on PATH")
	}
	dir := t.TempDir()
	h := newDaemonHome(t)
	for _, s := range tracebackScripts {
		py := exec.Command(python, "-")
		py.Dir, py.Stdin = dir, strings.NewReader(s.src)
		wantOut, wantErr, _ := runCaptured(t, py, false)
		if s.stdout != "" {
			wantOut = s.stdout
		}
		if !strings.Contains(wantErr, "<stdin>") && s.name != "source.py" {
			t.Fatalf("python3 - printed no place in <stdin>:\n%s", wantErr)
		}
		for _, mode := range []string{"one-shot", "--session"} {
			t.Run(s.name+"/"+mode, func(t *testing.T) {
				args := []string{"run", "--python", python, "-"}
				if mode == "--session" {
					args = []string{"run", "--session", "stdin-tb", "--python", python, "-"}
				}
				cmd := h.cmd(args...)
				cmd.Dir, cmd.Stdin = dir, strings.NewReader(s.src)
				out, errOut, _ := runCaptured(t, cmd, false)
				if errOut != wantErr {
					t.Errorf("stderr differs from python3 -'s\n got %q\nwant %q", errOut, wantErr)
				}
				if out != wantOut {
					t.Errorf("stdout %q, want python3's %q", out, wantOut)
				}
			})
		}
	}
}
