package runner

import (
	"encoding/base64"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/testkit"
)

func TestReady(t *testing.T) {
	p := start(t, startOpts{})
	r := p.ready
	if Version != frames.Version {
		t.Errorf("runner.Version %q differs from frames.Version %q", Version, frames.Version)
	}
	if r.Runner != Version {
		t.Errorf("ready runner version %q, want %q", r.Runner, frames.Version)
	}
	if r.PID != p.cmd.Process.Pid {
		t.Errorf("ready pid %d, want %d", r.PID, p.cmd.Process.Pid)
	}
	if r.Executable != python(t) {
		t.Errorf("ready executable %q, want %q", r.Executable, python(t))
	}
	if !strings.HasPrefix(r.Python, "3.") {
		t.Errorf("ready python version %q", r.Python)
	}
	if len(p.early) != 0 {
		t.Errorf("frames before ready: %+v", p.early)
	}
}

// cellCase runs in one shared runner, in order: later cases may use state.
type cellCase struct {
	name   string
	code   string
	status string
	stdout string
	stderr string
	check  func(t *testing.T, c cellResult)
}

func TestCells(t *testing.T) {
	p := start(t, startOpts{})
	count := 0
	for _, tc := range []cellCase{
		{name: "print and result", code: "print('hi')\n1 + 1", stdout: "hi\n",
			check: wantResult("2")},
		{name: "result of last expression after statements", code: "x = 41\nx + 1",
			check: wantResult("42")},
		{name: "result is stored as _", code: "_ * 2", check: wantResult("84")},
		{name: "None result sends no result frame", code: "None", check: wantNo(frames.TypeResult)},
		{name: "trailing semicolon silences the result", code: "x;", check: wantNo(frames.TypeResult)},
		{name: "statement only", code: "y = 1", check: wantNo(frames.TypeResult)},
		{name: "empty cell", code: "", check: wantNo(frames.TypeResult)},
		// One-line cells are first compiled as an expression (cells._compile).
		{name: "one-line expression with a comment", code: "y + 1  # note", check: wantResult("2")},
		{name: "one-line statement after the expression try", code: "z = y + 2", check: wantNo(frames.TypeResult)},
		{name: "one-line quiet expression", code: "z;  # still quiet", check: wantNo(frames.TypeResult)},
		{name: "one-line top-level await", code: "await __import__('asyncio').sleep(0, result=z)", check: wantResult("3")},
		{name: "one-line indented is an error", code: " z", status: "error",
			check: func(t *testing.T, c cellResult) { wantError(t, c, "IndentationError") }},
		{name: "syntax error shows caret and no runner frames", code: "x = (1,\n", status: "error",
			check: func(t *testing.T, c cellResult) {
				e := wantError(t, c, "SyntaxError")
				tb := strings.Join(e.Traceback, "\n")
				for _, want := range []string{`File "<cell `, "x = (1,", "^", "SyntaxError: "} {
					if !strings.Contains(tb, want) {
						t.Errorf("traceback lacks %q:\n%s", want, tb)
					}
				}
				if strings.Contains(tb, "Traceback (most recent") {
					t.Errorf("syntax error with a call stack:\n%s", tb)
				}
			}},
		{name: "name error traceback starts at the cell", code: "def f():\n    return missing\nf()", status: "error",
			check: func(t *testing.T, c cellResult) {
				e := wantError(t, c, "NameError")
				tb := strings.Join(e.Traceback, "\n")
				if !strings.Contains(tb, "return missing") || !strings.Contains(tb, ", in f") {
					t.Errorf("traceback lacks the cell's code:\n%s", tb)
				}
				if e.Evalue != "name 'missing' is not defined" {
					t.Errorf("evalue %q", e.Evalue)
				}
			}},
		{name: "chained exception keeps both without runner frames", status: "error",
			code: "try:\n    1/0\nexcept ZeroDivisionError as e:\n    raise ValueError('bad') from e",
			check: func(t *testing.T, c cellResult) {
				e := wantError(t, c, "ValueError")
				tb := strings.Join(e.Traceback, "\n")
				if !strings.Contains(tb, "ZeroDivisionError") || !strings.Contains(tb, "direct cause") {
					t.Errorf("chain lost:\n%s", tb)
				}
			}},
		{name: "top-level await", code: "import asyncio\nawait asyncio.sleep(0)\nasync def f():\n    return 7\nawait f()",
			check: wantResult("7")},
		{name: "tasks persist on the session loop", code: "t = asyncio.ensure_future(f())\nawait t",
			check: wantResult("7")},
		{name: "input fails at once with an input frame", code: "input('name? ')", status: "error",
			check: func(t *testing.T, c cellResult) {
				in, ok := c.first(frames.TypeInput)
				if !ok || in.Prompt != "name? " {
					t.Errorf("input frame %+v, found %v", in, ok)
				}
				e := wantError(t, c, "StdinNotImplementedError")
				if !strings.Contains(e.Evalue, "no interactive stdin") {
					t.Errorf("evalue %q", e.Evalue)
				}
			}},
		// As ipykernel's sys.stdin, a kernel's fd 0 at its end (nbclient):
		// reading gives nothing; only input() asks for input, and refuses.
		{name: "stdin reads empty as ipykernel's", code: "import sys, subprocess\n" +
			"(sys.stdin.read(), sys.stdin.readline(), sys.stdin.readlines(), list(sys.stdin), sys.stdin.buffer.read(), " +
			"sys.stdin.isatty(), sys.stdin.fileno(), subprocess.run(['cat'], capture_output=True).stdout)",
			check: wantResult("('', '', [], [], b'', False, 0, b'')")},
		{name: "the runner's directory is not on sys.path",
			code:  "import sys\n" + strconv.Quote(filepath.Dir(runnerPath)) + " in sys.path",
			check: wantResult("False")},
		{name: "fd 0 is not the request pipe", code: "import os\nos.read(0, 10)", check: wantResult("b''")},
		{name: "display with html and png", code: "class R:\n" +
			"    def _repr_html_(self): return '<b>r</b>'\n" +
			"    def _repr_png_(self): return b'\\x89PNG'\n" +
			"    def __repr__(self): return 'R()'\n" +
			"print('before')\ndisplay(R())\nprint('after')",
			stdout: "before\nafter\n",
			check: func(t *testing.T, c cellResult) {
				d, ok := c.first(frames.TypeDisplay)
				if !ok {
					t.Fatal("no display frame")
				}
				if got := text(t, d.Bundle, "text/html"); got != "<b>r</b>" {
					t.Errorf("text/html %q", got)
				}
				if got := text(t, d.Bundle, "image/png"); got != base64.StdEncoding.EncodeToString([]byte("\x89PNG")) {
					t.Errorf("image/png %q", got)
				}
				if got := text(t, d.Bundle, "text/plain"); got != "R()" {
					t.Errorf("text/plain %q", got)
				}
			}},
		{name: "result uses the display formatter", code: "R()",
			check: func(t *testing.T, c cellResult) {
				r := wantResultFrame(t, c)
				text(t, r.Bundle, "text/html")
				text(t, r.Bundle, "image/png")
			}},
		{name: "mimebundle, json and display handle update", code: "class M:\n" +
			"    def _repr_mimebundle_(self, include=None, exclude=None):\n" +
			"        return {'text/markdown': '# hi', 'application/json': {'a': [1, 2]}}\n" +
			"h = display(M(), display_id=True)\nh.update(R())",
			check: func(t *testing.T, c cellResult) {
				d, _ := c.first(frames.TypeDisplay)
				if got := text(t, d.Bundle, "text/markdown"); got != "# hi" {
					t.Errorf("text/markdown %q", got)
				}
				if got := string(d.Bundle["application/json"]); got != `{"a":[1,2]}` {
					t.Errorf("application/json %s", got)
				}
				u, ok := c.first(frames.TypeUpdateDisplay)
				if !ok || d.DisplayID == "" || u.DisplayID != d.DisplayID {
					t.Errorf("display id %q, update %+v", d.DisplayID, u)
				}
			}},
		{name: "direct fd writes and subprocesses keep order with prints",
			code: "import os, subprocess, sys\nprint('a')\nos.write(1, b'raw\\n')\nsubprocess.run(['echo', 'sub'])\n" +
				"print('b')\nos.system('echo sys')\nprint('c')\nprint('e1', file=sys.stderr)\nos.write(2, b'e2\\n')",
			stdout: "a\nraw\nsub\nb\nsys\nc\n", stderr: "e1\ne2\n"},
		{name: "a subprocess right after a print keeps order",
			code:   "print('a')\nimport subprocess\nsubprocess.run(['echo', 'sub'])\nprint('b')",
			stdout: "a\nsub\nb\n"},
		{name: "large print arrives whole", code: "print('x' * 3000000)", stdout: strings.Repeat("x", 3000000) + "\n"},
		{name: "non-utf8 text is escaped, not fatal", code: "print('\\udcff')", stdout: "\\udcff\n"},
		{name: "sys.exit(0) is ok and the runner stays", code: "import sys\nsys.exit(0)"},
		{name: "sys.exit(3) is an error", code: "sys.exit(3)", status: "error",
			check: wantExit(3, nil)},
		{name: "sys.exit(text) is status 1 and its text", code: "sys.exit('bad \"input\"\\n')", status: "error",
			check: wantExit(1, ptr("bad \"input\"\n"))},
		{name: "sys.exit(text) escapes a lone surrogate as python3's stderr", code: "sys.exit('x\\udcff')", status: "error",
			check: wantExit(1, ptr("x\\udcff"))},
		{name: "a huge sys.exit(text) is cut to fit its done frame", code: "sys.exit('y' * (33 << 20))", status: "error",
			check: func(t *testing.T, c cellResult) {
				if d := c.done(); d.ExitStatus != 1 || !strings.HasPrefix(d.ExitMessage, "yyy") || !strings.HasSuffix(d.ExitMessage, " more characters of the exit message]") {
					t.Errorf("done status %d message of %d bytes ending %q", d.ExitStatus, len(d.ExitMessage), d.ExitMessage[max(0, len(d.ExitMessage)-60):])
				}
			}},
		{name: "sys.exit past a C int is -1", code: "sys.exit(2**70)", status: "error", check: wantExit(-1, nil)},
		{name: "sys.exit(2**32+3) is cast to a C int, as python3 does", code: "sys.exit(2**32+3)", status: "error", check: wantExit(3, nil)},
		{name: "sys.exit(2**32) is cast to 0: ok, and the batch stops", code: "sys.exit(2**32)", check: func(t *testing.T, c cellResult) {
			if d := c.done(); !d.Exit || d.ExitStatus != 0 || d.ExitPrints {
				t.Errorf("done %+v, want exit without a status", d)
			}
		}},
		{name: "SystemExit of two args prints them", code: "raise SystemExit(1, 'x')", status: "error",
			check: wantExit(1, ptr("(1, 'x')"))},
		{name: "sys.exit(0.0) is python3's 1", code: "sys.exit(0.0)", status: "error", check: wantExit(1, ptr("0.0"))},
		{name: "prelude helpers", code: "import tempfile, os\nwith tempfile.TemporaryDirectory() as d:\n" +
			"    write(os.path.join(d, 'a', 'f.txt'), 'one\\n')\n    print(read(os.path.join(d, 'a', 'f.txt')), end='')\n" +
			"    diff('one\\n', 'two\\n')\n    tree(d)",
			check: func(t *testing.T, c cellResult) {
				for _, want := range []string{"one\n", "-one", "+two", "└── a/", "    └── f.txt"} {
					if !strings.Contains(c.stdout, want) {
						t.Errorf("stdout lacks %q:\n%s", want, c.stdout)
					}
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := p.run(tc.code)
			count++
			d := c.done()
			want := tc.status
			if want == "" {
				want = frames.StatusOK
			}
			if c.frames[0].Type != frames.TypeStarted {
				t.Errorf("first frame %v, want started", c.frames[0].Type)
			}
			if d.Status != want || d.Cancelled || d.ExecutionCount != count {
				t.Errorf("done %+v, want status %s count %d", d, want, count)
			}
			if want == frames.StatusOK {
				if e, ok := c.first(frames.TypeError); ok {
					t.Errorf("unexpected error: %s", strings.Join(e.Traceback, "\n"))
				}
			}
			for _, f := range c.frames {
				for _, l := range f.Traceback {
					if strings.Contains(l, "runner.py") {
						t.Errorf("runner frame in traceback: %q", l)
					}
				}
			}
			if tc.stdout != "" && c.stdout != tc.stdout {
				t.Errorf("stdout %.200q, want %.200q", c.stdout, tc.stdout)
			}
			if tc.stderr != "" && c.stderr != tc.stderr {
				t.Errorf("stderr %q, want %q", c.stderr, tc.stderr)
			}
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}

// wantExit checks a cell that raised SystemExit other than 0: an error
// frame, and the done frame's python3 exit status and message.
func wantExit(status int, message *string) func(*testing.T, cellResult) {
	return func(t *testing.T, c cellResult) {
		t.Helper()
		wantError(t, c, "SystemExit")
		d := c.done()
		if !d.Exit || d.ExitStatus != status || d.ExitPrints != (message != nil) || message != nil && d.ExitMessage != *message {
			t.Errorf("done %+v, want exit status %d message %v", d, status, message)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func wantResultFrame(t *testing.T, c cellResult) frames.Frame {
	t.Helper()
	r, ok := c.first(frames.TypeResult)
	if !ok {
		t.Fatalf("no result frame in %+v", c.frames)
	}
	if r.ExecutionCount != c.done().ExecutionCount {
		t.Errorf("result executionCount %d, done %d", r.ExecutionCount, c.done().ExecutionCount)
	}
	return r
}

func wantResult(plain string) func(*testing.T, cellResult) {
	return func(t *testing.T, c cellResult) {
		t.Helper()
		if got := text(t, wantResultFrame(t, c).Bundle, "text/plain"); got != plain {
			t.Errorf("result %q, want %q", got, plain)
		}
	}
}

func wantNo(typ frames.Type) func(*testing.T, cellResult) {
	return func(t *testing.T, c cellResult) {
		t.Helper()
		if f, ok := c.first(typ); ok {
			t.Errorf("unexpected %v frame: %+v", typ, f)
		}
	}
}

func wantError(t *testing.T, c cellResult, ename string) frames.Frame {
	t.Helper()
	e, ok := c.first(frames.TypeError)
	if !ok {
		t.Fatalf("no error frame in %+v", c.frames)
	}
	if e.Ename != ename {
		t.Errorf("ename %q, want %q; traceback:\n%s", e.Ename, ename, strings.Join(e.Traceback, "\n"))
	}
	return e
}

func TestRequestEnvAndCwd(t *testing.T) {
	p := start(t, startOpts{env: []string{"GONE=1"}})
	dir := t.TempDir()
	writeFile(t, dir, "localmod.py", "VALUE = 'local'\n")
	for _, tc := range []struct {
		name   string
		req    map[string]any
		status string
		check  func(t *testing.T, c cellResult)
	}{
		{name: "env null unsets and strings set",
			req:   map[string]any{"code": "import os\n(os.environ.get('GONE'), os.environ['NEW'])", "env": map[string]any{"GONE": nil, "NEW": "x"}},
			check: wantResult("(None, 'x')")},
		{name: "cwd applied and first on sys.path",
			req:   map[string]any{"code": "import os, sys, localmod\n(os.getcwd() == sys.path[0], localmod.VALUE)", "cwd": dir},
			check: wantResult("(True, 'local')")},
		{name: "run id exposed", req: map[string]any{"code": "os.environ['EVALHOST_RUN']", "run": "r-1"},
			check: wantResult("'r-1'")},
		{name: "missing cwd is a request error", status: "error",
			req: map[string]any{"code": "1", "cwd": filepath.Join(dir, "nope")},
			check: func(t *testing.T, c cellResult) {
				e := wantError(t, c, "RequestError")
				if !strings.Contains(e.Evalue, "pass an existing directory") {
					t.Errorf("evalue %q", e.Evalue)
				}
			}},
		{name: "non-string code is a request error", status: "error", req: map[string]any{"code": 5},
			check: func(t *testing.T, c cellResult) { wantError(t, c, "RequestError") }},
		{name: "sync nonce is not visible to cells", req: map[string]any{"code": "'EVALHOST_SYNC_NONCE' in os.environ"},
			check: wantResult("False")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := p.runReq(tc.req)
			want := tc.status
			if want == "" {
				want = frames.StatusOK
			}
			if d := c.done(); d.Status != want {
				t.Errorf("done %+v, want %s; frames %+v", d, want, c.frames)
			}
			tc.check(t, c)
		})
	}
}

func TestExtensionModules(t *testing.T) {
	user, project := t.TempDir(), t.TempDir()
	writeFile(t, user, "a_broken.py", "raise ValueError('boom')\n")
	writeFile(t, user, "shared.py", "WHO = 'user'\n")
	writeFile(t, project, "shared.py", "WHO = 'project'\n")
	writeFile(t, project, "helper.py", "def greet(n):\n    return 'hi ' + n\n")
	writeFile(t, project, "chatty.py", "print('loading')\n")
	p := start(t, startOpts{modules: []string{user, project}})
	var broken, chatty bool
	for _, f := range p.early {
		if f.Type != frames.TypeWarning {
			t.Errorf("unexpected frame before ready: %+v", f)
			continue
		}
		switch {
		case strings.Contains(f.Message, "a_broken.py") && strings.Contains(f.Message, "ValueError: boom"):
			broken = true
			if strings.Contains(f.Message, "runner.py") {
				t.Errorf("runner frames in module warning: %s", f.Message)
			}
		case strings.Contains(f.Message, "chatty.py") && strings.Contains(f.Message, "loading"):
			chatty = true
		default:
			t.Errorf("unexpected warning: %s", f.Message)
		}
	}
	if !broken || !chatty {
		t.Errorf("warnings: broken=%v chatty=%v; early frames %+v", broken, chatty, p.early)
	}
	c := p.run("(WHO, greet('x'))")
	if d := c.done(); d.Status != frames.StatusOK {
		t.Fatalf("done %+v", d)
	}
	wantResult("('project', 'hi x')")(t, c)
}

func TestMatplotlibFigures(t *testing.T) {
	testkit.NeedModule(t, "matplotlib", "matplotlib")
	p := start(t, startOpts{})
	c := p.run("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nprint('plotted')")
	d, ok := c.first(frames.TypeDisplay)
	if !ok {
		t.Fatalf("no display frame: %+v", c.frames)
	}
	png, err := base64.StdEncoding.DecodeString(text(t, d.Bundle, "image/png"))
	if err != nil || !strings.HasPrefix(string(png), "\x89PNG") {
		t.Errorf("image/png is not a PNG (%v)", err)
	}
	if plain := text(t, d.Bundle, "text/plain"); !strings.HasPrefix(plain, "<Figure size") {
		t.Errorf("text/plain %q", plain)
	}
	c = p.run("len(plt.get_fignums())")
	wantResult("0")(t, c)
}

func TestFd3IsPrivate(t *testing.T) {
	p := start(t, startOpts{})
	c := p.run("import subprocess\nsubprocess.run(['sh', '-c', 'echo x >&3'], capture_output=True).returncode")
	if r := wantResultFrame(t, c); text(t, r.Bundle, "text/plain") == "0" {
		t.Errorf("a subprocess could write to fd 3")
	}
}

// TestRequestArgv runs one session's requests in order: each row's state
// follows the rows before it, as runs under one --session do.
func TestRequestArgv(t *testing.T) {
	const look = "import sys\n(sys.argv, globals().get('__file__'))"
	rows := []struct {
		name   string
		req    map[string]any
		want   string
		status string
	}{
		{name: "a fresh runner has the interactive interpreter's argv", req: map[string]any{"code": look},
			want: "([''], None)"},
		{name: "a script's argv and file", req: map[string]any{"code": look, "argv": []string{"a.py", "-n", "x y"}, "file": "/w/a.py"},
			want: "(['a.py', '-n', 'x y'], '/w/a.py')"},
		{name: "a request without argv keeps them", req: map[string]any{"code": look},
			want: "(['a.py', '-n', 'x y'], '/w/a.py')"},
		{name: "-c removes the file an earlier request set", req: map[string]any{"code": look, "argv": []string{"-c"}},
			want: "(['-c'], None)"},
		{name: "the cells' own __file__", req: map[string]any{"code": "__file__ = 'mine'\n" + look, "argv": []string{"-c"}},
			want: "(['-c'], 'mine')"},
		{name: "stays through a request without file", req: map[string]any{"code": look, "argv": []string{"-"}},
			want: "(['-'], 'mine')"},
		{name: "a file replaces it", req: map[string]any{"code": look, "argv": []string{"b.py"}, "file": "/w/b.py"},
			want: "(['b.py'], '/w/b.py')"},
		{name: "one the cells set over it stays", req: map[string]any{"code": "__file__ = 'again'\n" + look, "argv": []string{"-c"}},
			want: "(['-c'], 'again')"},
		{name: "argv not a list", req: map[string]any{"code": "1", "argv": "a.py"}, status: frames.StatusError},
		{name: "argv empty", req: map[string]any{"code": "1", "argv": []string{}}, status: frames.StatusError},
		{name: "argv of numbers", req: map[string]any{"code": "1", "argv": []any{"a", 1}}, status: frames.StatusError},
		{name: "file not a string", req: map[string]any{"code": "1", "argv": []string{"a"}, "file": 3}, status: frames.StatusError},
	}
	inBothModes(t, func(t *testing.T, p *proc) {
		for _, tc := range rows {
			t.Run(tc.name, func(t *testing.T) {
				c := p.runReq(tc.req)
				if tc.status != "" {
					if d := c.done(); d.Status != tc.status {
						t.Fatalf("done %+v, want %s", d, tc.status)
					}
					wantError(t, c, "RequestError")
					return
				}
				wantOK(t, c)
				wantResult(tc.want)(t, c)
			})
		}
	})
}

// %config InlineBackend.figure_format, the line many notebooks start with,
// chooses the formats in the runner's own mode too, as matplotlib-inline
// does in a kernel; any other %config says where the rest is.
func TestFigureFormats(t *testing.T) {
	testkit.NeedModule(t, "matplotlib", "matplotlib")
	for _, tc := range figureFormats {
		t.Run(tc.name, func(t *testing.T) { checkFigureFormat(t, tc, nil) })
	}
	p := start(t, startOpts{})
	for _, tc := range []struct{ name, code, evalue string }{
		{"an unknown format", "%config InlineBackend.figure_format = 'bmp'", "supported formats are png, retina"},
		{"a name the cells do not have", "%config InlineBackend.figure_format = svg", "the value svg could not be evaluated: NameError"},
		{"another setting", "%config InlineBackend.rc = {}", "--ipython"},
		{"another class", "%config InteractiveShell.ast_node_interactivity = 'all'", "--ipython"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := p.run(tc.code)
			if e := wantError(t, c, "UsageError"); !strings.Contains(e.Evalue, tc.evalue) {
				t.Errorf("evalue %q, want %q in it", e.Evalue, tc.evalue)
			}
		})
	}
	for _, code := range []string{"%config Completer.use_jedi = False", "%config IPCompleter.greedy = True"} {
		c := p.run(code)
		wantOK(t, c)
		if !strings.Contains(c.stderr, "completion settings do nothing") {
			t.Errorf("%s: stderr %q, want a note that it is ignored", code, c.stderr)
		}
	}
	t.Run("jpeg without Pillow", func(t *testing.T) {
		// matplotlib-inline refuses it at %config (a TraitError), not
		// with every figure after it.
		p := start(t, startOpts{})
		c := p.run("import sys\nsys.modules['PIL'] = None\n%config InlineBackend.figure_formats = {'png', 'jpg'}")
		if e := wantError(t, c, "UsageError"); !strings.Contains(e.Evalue, "Pillow") {
			t.Errorf("evalue %q, want Pillow named", e.Evalue)
		}
	})
	t.Run("display after set_matplotlib_formats", func(t *testing.T) {
		// matplotlib-inline's own made an InteractiveShell, which then took display()'s output.
		testkit.NeedModule(t, "matplotlib_inline", "matplotlib-inline")
		p := start(t, startOpts{})
		c := p.run("from matplotlib_inline.backend_inline import set_matplotlib_formats, set_matplotlib_close\n" +
			"set_matplotlib_formats('svg')\nset_matplotlib_close(False)\n" +
			"from IPython.display import display\ndisplay({'text/html': '<b>x</b>'}, raw=True)")
		wantOK(t, c)
		if d, ok := c.first(frames.TypeDisplay); !ok || text(t, d.Bundle, "text/html") != "<b>x</b>" {
			t.Errorf("no display: %+v", c.frames)
		}
		if !strings.Contains(c.stderr, "closes figures after each cell") {
			t.Errorf("stderr %q, want a note that set_matplotlib_close(False) is ignored", c.stderr)
		}
	})
	c := p.run("%config InlineBackend")
	wantOK(t, c)
	if !strings.Contains(c.stdout, "InlineBackend.figure_formats = {'png'}") {
		t.Errorf("stdout %q, want the formats", c.stdout)
	}
}

// A figure that fails in one format still goes out in the others, and the
// figures after it go out too, as IPython's formatters do (each failure is
// its own traceback there; a warning naming the figure and format here).
func TestFigureFormatFailure(t *testing.T) {
	testkit.NeedModule(t, "matplotlib", "matplotlib")
	p := start(t, startOpts{})
	wantOK(t, p.run("%config InlineBackend.figure_formats = {'png', 'svg'}"))
	c := p.run(`import matplotlib.pyplot as plt
from matplotlib.backends import backend_svg
def _boom(*a, **k):
    raise RuntimeError("svg broke")
backend_svg.FigureCanvasSVG.print_svg = _boom
plt.figure(); plt.plot([1, 2])
plt.figure(); plt.plot([3, 4]);`)
	wantOK(t, c)
	ds := displays(c)
	if len(ds) != 2 {
		t.Fatalf("want both figures, got %d displays: %+v", len(ds), c.frames)
	}
	for i, d := range ds {
		if _, ok := d.Bundle["image/png"]; !ok {
			t.Errorf("figure %d: bundle %v, want its PNG", i+1, keys(d.Bundle))
		}
	}
	var warned int
	for _, f := range c.frames {
		if f.Type == frames.TypeWarning && strings.Contains(f.Message, "svg broke") && strings.Contains(f.Message, "svg") {
			warned++
		}
	}
	if warned != 2 {
		t.Errorf("%d warnings about svg, want one per figure: %+v", warned, c.frames)
	}
}

// A figure whose SVG is over the frame line limit still goes out as its
// PNG: the frame without the SVG, and a warning that says so (before, the
// whole display was dropped, the PNG with it).
func TestFigureFormatOverLineLimit(t *testing.T) {
	testkit.NeedModule(t, "matplotlib", "matplotlib")
	p := start(t, startOpts{})
	wantOK(t, p.run("%config InlineBackend.figure_formats = {'png', 'svg'}"))
	c := p.run(`import matplotlib.pyplot as plt
import functools
from matplotlib.backends import backend_svg
_svg = backend_svg.FigureCanvasSVG.print_svg
@functools.wraps(_svg)  # matplotlib passes what its signature takes
def _big(self, fh, *a, **k):
    _svg(self, fh, *a, **k)
    fh.write(b"<!--" + b'"' * (20 << 20) + b"-->")  # escaped, 40 MiB in JSON
backend_svg.FigureCanvasSVG.print_svg = _big
plt.plot([1, 2]);`)
	wantOK(t, c)
	ds := displays(c)
	if len(ds) != 1 {
		t.Fatalf("want the figure, got %d displays: %+v", len(ds), c.frames)
	}
	got := keys(ds[0].Bundle)
	slices.Sort(got)
	if strings.Join(got, " ") != "image/png text/plain" {
		t.Errorf("bundle %v, want the PNG without the SVG", got)
	}
	var warned bool
	for _, f := range c.frames {
		warned = warned || f.Type == frames.TypeWarning && strings.Contains(f.Message, "image/svg+xml")
	}
	if !warned {
		t.Errorf("no warning naming the SVG left out: %+v", c.frames)
	}
}

// A figure with nothing drawn goes out as its text alone, as IPython's
// print_figure makes no image of it (no blank picture in the notebook).
func TestFigureEmpty(t *testing.T) {
	testkit.NeedModule(t, "matplotlib", "matplotlib")
	p := start(t, startOpts{})
	c := p.run("import matplotlib.pyplot as plt\nplt.figure();")
	wantOK(t, c)
	ds := displays(c)
	if len(ds) != 1 {
		t.Fatalf("want one display, got %d: %+v", len(ds), c.frames)
	}
	if got := keys(ds[0].Bundle); len(got) != 1 || got[0] != "text/plain" {
		t.Errorf("bundle %v, want text/plain alone", got)
	}
}

// %%capture holds the figures its cell leaves open, as IPython's does (its
// post-cell flush runs inside the capture): cap.show() shows them, and
// nothing goes out after the cell.
func TestFigureCaptured(t *testing.T) {
	testkit.NeedModule(t, "matplotlib", "matplotlib")
	p := start(t, startOpts{})
	wantOK(t, p.run("import matplotlib.pyplot as plt"))
	c := p.run("%%capture cap\nplt.plot([1, 2])\nx = 1")
	wantOK(t, c)
	if ds := displays(c); len(ds) != 0 {
		t.Errorf("%d displays went out of the captured cell", len(ds))
	}
	wantResult("[['image/png', 'text/plain']]")(t, p.run("[sorted(o.data) for o in cap.outputs]"))
}
