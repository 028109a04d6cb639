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

// parityRun runs python3 ARGS... and evalhost run --python python3 ARGS...
// in dir with stdin, and fails t where their stdout, stderr or exit status
// differ. EVALHOST_TEST_PYTHON picks the interpreter for both.
func parityRun(t *testing.T, dir, stdin string, args ...string) {
	t.Helper()
	parityRunAs(t, dir, stdin, nil, args...)
}

// parityRunAs is parityRun comparing stdout and stderr as norm makes them
// (nil: as they are).
func parityRunAs(t *testing.T, dir, stdin string, norm func(string) string, args ...string) {
	t.Helper()
	parityRunWith(t, testkit.Python(t), dir, stdin, norm, args...)
}

// parityRunWith is parityRunAs with the interpreter python for both.
func parityRunWith(t *testing.T, python, dir, stdin string, norm func(string) string, args ...string) {
	t.Helper()
	py := exec.Command(python, args...)
	py.Dir = dir
	py.Stdin = strings.NewReader(stdin)
	wantOut, wantErr, wantCode := runCaptured(t, py, false)
	cmd := command(t, append([]string{"run", "--python", python}, args...)...)
	primeBytecode(t, cmd.Env, python)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	out, errOut, code := runCaptured(t, cmd, false)
	if norm != nil {
		out, errOut, wantOut, wantErr = norm(out), norm(errOut), norm(wantOut), norm(wantErr)
	}
	if out != wantOut {
		t.Errorf("stdout differs from python3's\n got %q\nwant %q", out, wantOut)
	}
	if errOut != wantErr {
		t.Errorf("stderr differs from python3's\n got %q\nwant %q", errOut, wantErr)
	}
	if code != wantCode {
		t.Errorf("exit %d, python3's %d", code, wantCode)
	}
}

// primeBytecode runs evalhost once in env's home, so that the run compared
// with python3 starts from runner.py's bytecode, as every start under an
// interpreter but its first does (runner.BootFor); the runner package's
// tests start from runner.py.
func primeBytecode(t *testing.T, env []string, python string) {
	t.Helper()
	prime := exec.Command(binary, "run", "--python", python, "-c", "pass")
	prime.Env = env
	if out, err := prime.CombinedOutput(); err != nil {
		t.Fatalf("evalhost run -c pass: %v\n%s", err, out)
	}
	var home string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "EVALHOST_HOME="); ok {
			home = v
		}
	}
	if found, _ := filepath.Glob(filepath.Join(home, "runner", "*", "__pycache__", "runner.*.pyc")); len(found) != 1 {
		t.Fatalf("runner bytecode in %s after a first run: %v, want one file", home, found)
	}
}

// TestRunPdbStackAsPython: a breakpoint() in a script run by evalhost run
// shows pdb the stack python3's shows: where lists the script's frames
// only (not the runner's above its <module>), up stops at <module> with
// "Oldest frame" and down at the breakpoint with "Newest frame". As a
// module (-m), the stack starts at runpy's frames, as python3 -m's.
func TestRunPdbStackAsPython(t *testing.T) {
	const commands = "where\nup\nup\nup\ndown\ndown\ndown\nwhere\nc\n"
	dir := t.TempDir()
	src := "def f():\n    x = 1\n    breakpoint()\n    return x\n\nf()\nprint('after')\n"
	for _, name := range []string{"bp.py", "bpmod.py"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("script", func(t *testing.T) {
		parityRun(t, dir, commands, filepath.Join(dir, "bp.py"))
	})
	t.Run("module", func(t *testing.T) {
		parityRun(t, dir, commands, "-m", "bpmod")
	})
}

// parityScript is a script file that python3 FILE and python3 - compile
// (and show an error of) as evalhost run FILE and run - must.
type parityScript struct{ name, src string }

// parityScripts runs each script as a file (by its absolute path: 3.8's
// python3 names a relative one as given) and on stdin, under python3 and
// evalhost run, and compares all they print and their exit statuses.
func parityScripts(t *testing.T, scripts []parityScript) {
	t.Helper()
	dir := t.TempDir()
	for _, s := range scripts {
		path := filepath.Join(dir, s.name+".py")
		if err := os.WriteFile(path, []byte(s.src), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Run(s.name+"/file", func(t *testing.T) { parityRun(t, dir, "", path) })
		t.Run(s.name+"/stdin", func(t *testing.T) { parityRun(t, dir, s.src, "-") })
	}
}

// TestRunIndentErrorAsPython: a TabError or IndentationError (and a
// SyntaxError on a tab-indented line) is shown as python3's display shows
// it (its C code before 3.13): the line stripped of its leading tabs too,
// the caret placed and clipped as there, none for an offset of 0 (a block
// missing at the end of the file, 3.10-3.12).
func TestRunIndentErrorAsPython(t *testing.T) {
	parityScripts(t, []parityScript{
		{"tab_after_spaces", "if True:\n        x = 1\n\ty = 2\n"},
		{"tab_inside_line", "if 1:\n\tx = 1\n    \ty = 2\t# c\n"},
		{"tab_then_spaces", "def f():\n\tif x:\n\t\ty\n        \tz\n"},
		{"unexpected_indent_tabs", "if 1:\n\tx=1\n\t\ty=2\n"},
		{"unexpected_indent_mixed", "if 1:\n    pass\n  \t  x=1\n"},
		{"syntax_error_tab_line", "if 1:\n  \t  x = = 1\n"},
		{"no_indented_block", "def f():\nreturn 1\n"},
		{"no_block_at_end", "x = 1\nif x:\n"},
		{"unindent_mismatch", "if x:\n    pass\n  y\n"},
	})
}

// TestRunNulByteAsPython: a NUL byte in a script is what python3's reading
// of the file makes of it: 3.12+ (and 3.11's later releases) a
// SyntaxError "source code cannot contain null bytes" at its line, before
// any other error; before, the rest of its line is dropped, its newline
// too, so the line runs on into the next (a SyntaxError there, or a script
// that runs), where compile() raised ValueError. 3.9's and 3.10's parser
// show such an error with the physical line of its number, cut at the NUL,
// from stdin (3.10) as from the file, not the line the parser joined.
func TestRunNulByteAsPython(t *testing.T) {
	parityScripts(t, []parityScript{
		{"nul_in_code", "x = 1\ny = 2\x00\nz=3\n"},
		{"nul_after_an_error", "x = = 1\ny\x00\n"},
		{"nul_in_a_comment", "x = 1\n# c\x00 junk\nprint(x)\nprint('last')\n"},
		{"nul_last", "print(1)\n\x00"},
		{"nul_then_parser_error", "x = 1\ny = (2\x00junk\n+ = 3\n"},
		{"nul_joins_a_block", "x = 1\nif x\x00:\n    pass\n"},
		{"nul_then_blank_line", "y = 2\x00\n\nz = = 3\n"},
		{"nul_error_lines_later", "a = 1 \x00\n+ 2\nc = 3\nd = = 4\n"},
		{"nul_then_indent", "if 1:\x00\n    x\n  y\n"},
	})
}

// TestRunEOFErrorAsPython: an error at the end of a script is placed as
// python3's compile of the file places it: on 3.8 and 3.9 "unexpected EOF
// while parsing" (3.9's missing block too) one line past the last, with no
// text, two after a backslash continuation, and an unterminated
// triple-quoted string two past it (one without a last newline); trailing
// blank lines count, as in the file.
func TestRunEOFErrorAsPython(t *testing.T) {
	parityScripts(t, []parityScript{
		{"open_paren", "x = (1,\n2\n"},
		{"open_paren_no_newline", "x = (1,\n2"},
		{"open_paren_blank_lines", "x = (1,\n2\n\n\n"},
		{"backslash_at_end", "x = 1 + \\\n"},
		{"triple_quote", "x = 1\ns = \"\"\"abc\ndef\n"},
		{"triple_quote_no_newline", "s = '''a\nb\nc\nd"},
		{"triple_quote_blank_lines", "x=1\ns = \"\"\"abc\n\n\n"},
		{"def_at_end", "def f():\n"},
		{"if_then_blank_line", "if x:\n\n"},
		{"try_at_end", "try:\n    x\n"},
	})
}

// TestRunRelativeFileAsPython: a FILE given by a relative path is named as
// python3 names it: 3.8's python3 as given (./x.py, sub/x.py), in
// tracebacks, warnings, SyntaxErrors, __file__, inspect and its loader,
// 3.9+'s by its absolute path. A directory's __main__ too (3.8's sys.path
// holds the directory as given).
func TestRunRelativeFileAsPython(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"tb.py": "import inspect, warnings\nwarnings.warn('careful')\n" +
			"def f(x):\n    return 1/x\nprint(__file__, __loader__.path, inspect.getsourcefile(f))\nf(0)\n",
		"syntax.py":          "x = 1\nif x:\n\ty = = 2\n",
		"cells.py":           "print('cell 1')\n# %%\ndef g():\n    raise KeyError('k')\n# %%\ng()\n",
		"sub/deep.py":        "import sys\nprint(__file__, sys.argv[0])\n1/0\n",
		"app/__main__.py":    "import sys\nprint(__file__, sys.path[0], sys.argv[0])\n",
		"sub/../tb_again.py": "raise ValueError('v')\n",
	}
	for name, src := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, arg := range []string{"tb.py", "./tb.py", "syntax.py", "sub/deep.py", "sub/../tb_again.py", "app", "cells.py"} {
		t.Run(arg, func(t *testing.T) { parityRun(t, dir, "", arg) })
	}
}

// TestRunPdbPastTheEndAsPython: stepping (next, step, return) past the
// end of a script that called breakpoint() ends as python3's: the
// script's <module> returns (--Return--) and the debugger stops nowhere
// after it, but in threading's exit and atexit handlers, as python3's at
// its exit, never in the runner's code (3.13's python3 steps into
// readline's atexit handler too, and ends there at the end of its input
// with "Exception ignored"). python3 -m pdb's restart is left as it was.
func TestRunPdbPastTheEndAsPython(t *testing.T) {
	scripts := []struct{ name, src, commands string }{
		{"next", "x = 1\nbreakpoint()\ny = 2\nprint('end')\n", strings.Repeat("n\n", 60)},
		{"step", "x = 1\nbreakpoint()\ny = 2\nprint('end')\n", strings.Repeat("s\n", 200)},
		{"return", "x = 1\nbreakpoint()\ny = 2\nprint('end')\n", "r\nr\nr\nr\n"},
		{"out_of_a_function", "def f():\n    breakpoint()\n    return 1\nf()\nprint('after')\n", strings.Repeat("n\n", 60)},
		{"into_atexit", "import atexit\ndef bye():\n    print('bye')\natexit.register(bye)\nbreakpoint()\ny = 2\n", strings.Repeat("n\n", 60)},
		{"continue", "x = 1\nbreakpoint()\ny = 2\nprint('end')\n", "n\nc\nn\n"},
		// the input ends in the exit: BdbQuit there is "Exception ignored"
		{"input_ends_in_the_exit", "import atexit\ndef bye():\n    print('bye')\natexit.register(bye)\nbreakpoint()\ny = 2\n", "n\nn\nn\n"},
		// threading imported: python3's exit steps through threading._shutdown
		{"into_threading_shutdown", "import threading\nt = threading.Thread(target=print, args=('t',))\nt.start()\nt.join()\nbreakpoint()\nx = 1\n", strings.Repeat("n\n", 4)},
	}
	dir := t.TempDir()
	for _, s := range scripts {
		path := filepath.Join(dir, s.name+".py")
		if err := os.WriteFile(path, []byte(s.src), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Run(s.name, func(t *testing.T) { parityRunAs(t, dir, s.commands, withoutAddresses, path) })
	}
	// python3 -c: the code is <string>, its lines listed only on 3.13+
	t.Run("-c", func(t *testing.T) {
		parityRunAs(t, dir, "l\n"+strings.Repeat("n\n", 8), withoutAddresses, "-c", "x = 1\nbreakpoint()\ny = 2\n")
	})
	// python3 -m pdb: past the end the program "will be restarted"
	t.Run("-m pdb", func(t *testing.T) {
		parityRunAs(t, dir, strings.Repeat("n\n", 8)+"q\n", withoutAddresses, "-m", "pdb", filepath.Join(dir, "next.py"))
	})
}

var (
	objectAddress = regexp.MustCompile(`\b0?x[0-9a-f]{6,}\b`)
	threadIdent   = regexp.MustCompile(`\b\d{9,}\b`)
)

// withoutAddresses is s with each object's address (a repr's "at 0x...",
// or its tail "...x7f...") and each thread's ident, which no two runs
// share, made one.
func withoutAddresses(s string) string {
	return threadIdent.ReplaceAllString(objectAddress.ReplaceAllString(s, "0x..."), "N")
}
