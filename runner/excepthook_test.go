package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
)

// fileLines are a traceback's frame lines (`  File "...", line N, in F`).
func fileLines(tb []string) []string {
	var out []string
	for _, l := range tb {
		if strings.HasPrefix(l, "  File ") {
			out = append(out, l)
		}
	}
	return out
}

// A script's uncaught error (its request has argv, or inScript: a later
// cell of the script) goes as python3's: the cells' sys.excepthook is
// called and its error frame marked reported, as is one whose traceback
// went to a replaced sys.stderr; sys.tracebacklimit keeps the innermost
// frames of the frame's traceback. A notebook's cell (neither), before or
// after a script's, is reported as Jupyter's kernel does: no hook, every
// frame.
func TestUncaughtErrorOfAScript(t *testing.T) {
	p := start(t, startOpts{})
	const setup = "import sys\ndef hook(t, v, tb):\n    names = []\n    while tb:\n        names.append(tb.tb_frame.f_code.co_name)\n        tb = tb.tb_next\n" +
		"    print('HOOK', t.__name__, names)\nsys.excepthook = hook\nsys.tracebacklimit = 1\ndef f():\n    1/0\n"
	var written []string // the traceback the replaced stderr's row's frame carried
	for _, tc := range []struct {
		name   string
		req    map[string]any
		stdout string
		stderr string
		own    bool // check looks at the output itself
		check  func(t *testing.T, c cellResult)
	}{
		{name: "not a script: no hook, every frame", req: map[string]any{"code": setup + "f()"},
			check: func(t *testing.T, c cellResult) {
				e := wantError(t, c, "ZeroDivisionError")
				if e.Reported || len(fileLines(e.Traceback)) != 2 {
					t.Errorf("reported %v, traceback:\n%s\nwant unreported, both frames", e.Reported, strings.Join(e.Traceback, "\n"))
				}
			}},
		{name: "a script's: the hook gets the script's frames", req: map[string]any{"code": "f()", "argv": []string{"-c"}},
			stdout: "HOOK ZeroDivisionError ['<module>', 'f']\n",
			check: func(t *testing.T, c cellResult) {
				e := wantError(t, c, "ZeroDivisionError")
				files := fileLines(e.Traceback)
				if !e.Reported || e.Evalue != "division by zero" || len(files) != 1 || !strings.HasSuffix(files[0], "in f") {
					t.Errorf("reported %v, evalue %q, traceback:\n%s\nwant reported, f's frame alone (tracebacklimit 1)", e.Reported, e.Evalue, strings.Join(e.Traceback, "\n"))
				}
			}},
		{name: "a later cell of the script's", req: map[string]any{"code": "f()", "inScript": true},
			stdout: "HOOK ZeroDivisionError ['<module>', 'f']\n",
			check: func(t *testing.T, c cellResult) {
				if !wantError(t, c, "ZeroDivisionError").Reported {
					t.Error("error not marked reported")
				}
			}},
		{name: "a notebook's cell after the script's: no hook, every frame", req: map[string]any{"code": "f()"},
			check: func(t *testing.T, c cellResult) {
				e := wantError(t, c, "ZeroDivisionError")
				if e.Reported || len(fileLines(e.Traceback)) != 2 {
					t.Errorf("reported %v, traceback:\n%s\nwant unreported, both frames", e.Reported, strings.Join(e.Traceback, "\n"))
				}
			}},
		{name: "the default hook: the frame shows it, no frames under limit 0", req: map[string]any{"inScript": true, "code": "sys.excepthook = sys.__excepthook__\nsys.tracebacklimit = 0\nf()"},
			check: func(t *testing.T, c cellResult) {
				e := wantError(t, c, "ZeroDivisionError")
				if e.Reported || strings.Join(e.Traceback, "\n") != "ZeroDivisionError: division by zero" {
					t.Errorf("reported %v, traceback %q; want unreported, the error's line alone", e.Reported, e.Traceback)
				}
			}},
		{name: "a replaced stderr gets the traceback", req: map[string]any{"inScript": true, "code": "import io\nsys.tracebacklimit = 2\nbuf = sys.stderr = io.StringIO()\nf()"},
			check: func(t *testing.T, c cellResult) {
				e := wantError(t, c, "ZeroDivisionError")
				if !e.Reported || len(fileLines(e.Traceback)) != 2 {
					t.Errorf("reported %v, traceback:\n%s\nwant reported, two frames", e.Reported, strings.Join(e.Traceback, "\n"))
				}
				written = e.Traceback
			}},
		{name: "what it got", req: map[string]any{"code": "sys.stderr = sys.__stderr__\nprint(buf.getvalue(), end='')"}, own: true,
			check: func(t *testing.T, c cellResult) {
				if want := strings.Join(written, "\n") + "\n"; c.stdout != want {
					t.Errorf("the replaced stderr got %q, want the frame's traceback %q", c.stdout, want)
				}
			}},
		{name: "a hook that raises", req: map[string]any{"inScript": true, "code": "def bad(*a):\n    raise RuntimeError('hook broke')\nsys.excepthook = bad\nsys.tracebacklimit = 1\nf()"}, own: true,
			check: func(t *testing.T, c cellResult) {
				if !wantError(t, c, "ZeroDivisionError").Reported {
					t.Error("error not marked reported")
				}
				for _, want := range []string{"Error in sys.excepthook:\nTraceback", "in bad\n", "RuntimeError: hook broke\n\nOriginal exception was:\nTraceback", "ZeroDivisionError: division by zero\n"} {
					if !strings.Contains(c.stderr, want) {
						t.Errorf("stderr lacks %q:\n%s", want, c.stderr)
					}
				}
				if strings.Contains(c.stderr, "During handling") {
					t.Errorf("the hook's error is chained to the cell's, as python3's is not:\n%s", c.stderr)
				}
			}},
		{name: "a hook's sys.exit ends the script", req: map[string]any{"inScript": true, "code": "sys.excepthook = lambda *a: sys.exit(3)\nf()"},
			check: func(t *testing.T, c cellResult) {
				e := wantError(t, c, "SystemExit")
				if !e.Exit || e.Reported || !c.done().Exit || c.done().ExitStatus != 3 {
					t.Errorf("error %+v, done %+v; want the hook's SystemExit(3)", e, c.done())
				}
			}},
		{name: "a closed stdout leaves stderr writable", req: map[string]any{"inScript": true, "code": "sys.excepthook = sys.__excepthook__\nsys.stdout.close()\nprint('still', file=sys.stderr)\nf()"},
			stderr: "still\n",
			check: func(t *testing.T, c cellResult) {
				if e := wantError(t, c, "ZeroDivisionError"); e.Reported {
					t.Error("error marked reported")
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := p.runReq(tc.req)
			if !tc.own && (c.stdout != tc.stdout || c.stderr != tc.stderr) {
				t.Errorf("stdout %q, stderr %q; want %q, %q", c.stdout, c.stderr, tc.stdout, tc.stderr)
			}
			tc.check(t, c)
		})
	}
}

// The host's interrupt is evalhost's, not the script's error: the cells'
// sys.excepthook is not called for it.
func TestUncaughtErrorHookNotForTheHostsInterrupt(t *testing.T) {
	p := start(t, startOpts{})
	code := "import sys, time\nsys.excepthook = lambda *a: print('HOOK')\nprint('sleeping', flush=True)\ntime.sleep(30)"
	p.send(map[string]any{"id": "s", "code": code, "argv": []string{"-c"}})
	c := p.collect("s", func(f frames.Frame) {
		if f.Type == frames.TypeStarted {
			p.out.waitFor(t, "sleeping\n")
			time.Sleep(20 * time.Millisecond) // let it reach time.sleep; either line is correct
			p.interrupt()
		}
	})
	e := wantError(t, c, "KeyboardInterrupt")
	if e.Reported || !c.done().Cancelled || strings.Contains(c.stdout, "HOOK") {
		t.Errorf("error %+v, done %+v, stdout %q; want the cancelled cell's error, no hook", e, c.done(), c.stdout)
	}
}

// A script's hook gets the whole chain without the runner's frames: a
// cause raised inside a runner helper the cells called (display of an
// object whose repr raises) carries core.py's and display.py's frames,
// which the hook would print as the script's.
func TestUncaughtErrorHookSeesNoRunnerFramesInTheChain(t *testing.T) {
	p := start(t, startOpts{})
	code := "import sys, traceback\nclass Bad:\n    def __repr__(self):\n        raise RuntimeError('bad repr')\n" +
		"sys.excepthook = lambda t, v, tb: traceback.print_exception(t, v, tb)\n" +
		"try:\n    display(Bad())\nexcept Exception as e:\n    raise ValueError('wrapped') from e\n"
	c := p.runReq(map[string]any{"code": code, "argv": []string{"-c"}})
	wantError(t, c, "ValueError")
	if !strings.Contains(c.stderr, "RuntimeError: bad repr") || !strings.Contains(c.stderr, "in __repr__") {
		t.Fatalf("the hook did not print the cause:\n%s", c.stderr)
	}
	for _, own := range []string{"core.py", "display.py"} {
		if strings.Contains(c.stderr, own) {
			t.Errorf("the hook printed the runner's %s:\n%s", own, c.stderr)
		}
	}
}

// A replaced sys.stderr that cannot take the report (no write, closed,
// binary) loses it: python3 then says "lost sys.stderr" on fd 2 and dumps
// the error there. The frame is not marked reported, so a client shows the
// traceback and the failure is never silent; None, which python3 skips
// silently, stays reported.
func TestUncaughtErrorUnwritableStderr(t *testing.T) {
	p := start(t, startOpts{})
	for _, tc := range []struct {
		name, stderr string
		reported     bool
	}{
		{"no write", "class S: pass\nsys.stderr = S()", false},
		{"closed", "sys.stderr = open(os.devnull, 'w')\nsys.stderr.close()", false},
		{"binary", "sys.stderr = open(os.devnull, 'wb')", false},
		{"None", "sys.stderr = None", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code := "import os, sys\nsys.excepthook = sys.__excepthook__\n" + tc.stderr + "\n1/0\n"
			c := p.runReq(map[string]any{"code": code, "argv": []string{"-c"}})
			if e := wantError(t, c, "ZeroDivisionError"); e.Reported != tc.reported {
				t.Errorf("reported %v, want %v", e.Reported, tc.reported)
			}
		})
	}
}
