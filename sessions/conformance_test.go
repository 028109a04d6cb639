package sessions

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/gateway/shared"
	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/remotetest"
	"github.com/evalhost/evalhost/internal/testkit"
)

// backendCase is one way to run Python cells.
type backendCase struct {
	name    string
	starter func(t *testing.T, home string) Starter
	skip    func() string
}

var backends = []backendCase{
	{"runner", func(_ *testing.T, home string) Starter { return RunnerStarter(home) }, func() string { return "" }},
	{"gateway", func(_ *testing.T, home string) Starter { return GatewayStarter(GatewayConfig{Home: home}) }, gatewayMissing},
	// Jupyter Enterprise Gateway 3.3 with kernels on this host; its kernels
	// on another host are tested in tests/remote.
	{"enterprise-gateway", enterpriseGateway, remotetest.Missing},
}

// enterpriseGateway starts a real Enterprise Gateway for the test. It runs
// as whoever runs the tests, root in CI, which it refuses kernels for: the
// kernels are asked for as another user (KERNEL_USERNAME).
func enterpriseGateway(t *testing.T, _ string) Starter {
	g := remotetest.StartGateway(t, remotetest.GatewayOptions{})
	return GatewayStarter(GatewayConfig{URL: g.URL, Token: g.Token,
		Environ: append(os.Environ(), "KERNEL_USERNAME=evalhost-test")})
}

func gatewayMissing() string {
	if err := exec.Command("python3", "-c", "import kernel_gateway, ipykernel").Run(); err != nil {
		return "jupyter_kernel_gateway and ipykernel are not installed (python3 -m pip install jupyter_kernel_gateway ipykernel)"
	}
	return ""
}

// conformance is the table every backend must pass: the same cells give
// the same statuses and the same text.
var conformance = []struct {
	name   string
	cells  []Cell
	cancel time.Duration // cancel the request after this long
	// check judges the outcome; took is how long the request took, for a
	// lower bound only: load can make a request slower, never faster.
	check func(t *testing.T, res Result, c *collector, dir string, took time.Duration)
}{
	{"secrets stay out", []Cell{py("import os\nprint(os.environ.get('EVALHOST_CONF_SECRET_TOKEN'), os.environ.get('CONF_VAR'))")}, 0, func(t *testing.T, res Result, c *collector, _ string, _ time.Duration) {
		wantStatus(t, res, StatusOK)
		wantText(t, c, frames.TypeStdout, "None from-request\n")
	}},
	{"prints", []Cell{py("print('hi')\nimport sys; print('oops', file=sys.stderr)")}, 0, func(t *testing.T, res Result, c *collector, _ string, _ time.Duration) {
		wantStatus(t, res, StatusOK)
		wantText(t, c, frames.TypeStdout, "hi\n")
		wantText(t, c, frames.TypeStderr, "oops\n")
	}},
	{"result and state", []Cell{py("x = 20"), py("x * 2 + 2")}, 0, func(t *testing.T, res Result, c *collector, _ string, _ time.Duration) {
		wantStatus(t, res, StatusOK)
		if r := c.First(frames.TypeResult); r == nil || r.Bundle.DisplayText() != "42" {
			t.Errorf("result = %+v, want 42", r)
		}
	}},
	{"display", []Cell{py("class H:\n    def _repr_html_(self): return '<b>x</b>'\n    def __repr__(self): return 'H()'\ndisplay(H())")}, 0, func(t *testing.T, res Result, c *collector, _ string, _ time.Duration) {
		wantStatus(t, res, StatusOK)
		d := c.First(frames.TypeDisplay)
		if html, _ := d.Bundle.Text("text/html"); d == nil || html != "<b>x</b>" {
			t.Errorf("display = %+v", d)
		}
	}},
	{"error", []Cell{py("undefined_name")}, 0, func(t *testing.T, res Result, c *collector, _ string, _ time.Duration) {
		wantStatus(t, res, StatusError)
		if e := c.First(frames.TypeError); e == nil || e.Ename != "NameError" {
			t.Errorf("error = %+v", e)
		}
	}},
	{"stdin", []Cell{py("input('name? ')")}, 0, func(t *testing.T, res Result, c *collector, _ string, _ time.Duration) {
		wantStatus(t, res, StatusError)
		if c.First(frames.TypeInput) == nil {
			t.Errorf("no input frame")
		}
	}},
	{"timeout", []Cell{{Language: LangPython, Code: "import time\nprint('before', flush=True)\ntime.sleep(30)", Timeout: time.Second}}, 0, func(t *testing.T, res Result, c *collector, _ string, _ time.Duration) {
		wantStatus(t, res, StatusTimeout)
		wantKept(t, res)
		wantText(t, c, frames.TypeStdout, "before\n")
		wantText(t, c, frames.TypeStderr, "Command timed out after 1 seconds")
	}},
	{"interrupt", []Cell{py("import time\ntime.sleep(30)")}, 1500 * time.Millisecond, func(t *testing.T, res Result, c *collector, _ string, _ time.Duration) {
		wantStatus(t, res, StatusCancelled)
		wantKept(t, res)
	}},
	{"state survives an interrupt", []Cell{py("print(x)")}, 0, func(t *testing.T, res Result, c *collector, _ string, _ time.Duration) {
		wantStatus(t, res, StatusOK)
		wantText(t, c, frames.TypeStdout, "20\n")
	}},
	// A cell that catches the interrupt ends without an error; its result
	// must still say the timeout (or cancel) stopped it. It used to be ok.
	{"timeout caught by the cell", []Cell{{Language: LangPython, Code: caughtCode, Timeout: time.Second}}, 0, func(t *testing.T, res Result, c *collector, _ string, _ time.Duration) {
		wantStatus(t, res, StatusTimeout)
		wantCaught(t, res, c)
		wantText(t, c, frames.TypeStderr, "Command timed out after 1 seconds")
	}},
	{"cancel caught by the cell", []Cell{py(caughtCode)}, 1500 * time.Millisecond, func(t *testing.T, res Result, c *collector, _ string, _ time.Duration) {
		wantStatus(t, res, StatusCancelled)
		wantCaught(t, res, c)
	}},
	{"death with retry", []Cell{py("import os\nif not os.path.exists('died'):\n    open('died', 'w').close()\n    os._exit(9)\nprint('again')")}, 0, func(t *testing.T, res Result, c *collector, _ string, _ time.Duration) {
		wantStatus(t, res, StatusOK)
		if !res.Cells[0].Retried || !res.Cells[0].StateLost {
			t.Errorf("cell = %+v, want retried and stateLost", res.Cells[0])
		}
		wantText(t, c, frames.TypeStdout, "again\n")
	}},
	{"reset", []Cell{py("y = 1"), {Language: LangPython, Code: "print('y' in globals())", Reset: true}}, 0, func(t *testing.T, res Result, c *collector, _ string, _ time.Duration) {
		wantStatus(t, res, StatusOK)
		wantText(t, c, frames.TypeStdout, "False\n")
	}},
	{"cwd and env", []Cell{py("import os, sys\nprint(os.getcwd()); print(os.environ.get('CONF_VAR')); print(sys.path[0] == os.getcwd())")}, 0, func(t *testing.T, res Result, c *collector, dir string, _ time.Duration) {
		wantStatus(t, res, StatusOK)
		wantText(t, c, frames.TypeStdout, dir+"\nfrom-request\nTrue\n")
	}},
	{"last result as _", []Cell{py("6 * 7"), py("print(_)")}, 0, func(t *testing.T, res Result, c *collector, _ string, _ time.Duration) {
		wantStatus(t, res, StatusOK)
		wantText(t, c, frames.TypeStdout, "42\n")
	}},
	// IPython's surface, which the runner emulates and ipykernel has.
	{"shell escape into a list", []Cell{py("files = !printf 'a\\nb\\n'\nprint(list(files))")}, 0, func(t *testing.T, res Result, c *collector, _ string, _ time.Duration) {
		wantStatus(t, res, StatusOK)
		wantText(t, c, frames.TypeStdout, "['a', 'b']\n")
	}},
	{"cell magic capture", []Cell{py("%%capture cap\nprint('hidden')"), py("print(repr(cap.stdout))")}, 0, func(t *testing.T, res Result, c *collector, _ string, _ time.Duration) {
		wantStatus(t, res, StatusOK)
		wantText(t, c, frames.TypeStdout, "'hidden\\n'\n")
	}},
	{"display id updated from a later cell", []Cell{py("from IPython.display import display, update_display, clear_output\ndisplay('v1', display_id='conf')"), py("update_display('v2', display_id='conf')\nclear_output(wait=True)")}, 0, func(t *testing.T, res Result, c *collector, _ string, _ time.Duration) {
		wantStatus(t, res, StatusOK)
		u := c.First(frames.TypeUpdateDisplay)
		if u == nil || u.DisplayID != "conf" || u.Bundle.DisplayText() != "'v2'" {
			t.Errorf("update_display = %+v", u)
		}
		if co := c.First(frames.TypeClearOutput); co == nil || !co.Wait {
			t.Errorf("clear_output = %+v, want wait", co)
		}
	}},
	{"history", []Cell{py("40 + 2"), py("print(Out[max(Out)], In[-1].strip() if isinstance(In, list) else '')")}, 0, func(t *testing.T, res Result, c *collector, _ string, _ time.Duration) {
		wantStatus(t, res, StatusOK)
		wantText(t, c, frames.TypeStdout, "42 print(")
	}},
	// Last: it kills the session's interpreter.
	{"ignored interrupt is killed after the grace", []Cell{{Language: LangPython, Code: spinCode, Timeout: time.Second}}, 0, func(t *testing.T, res Result, c *collector, _ string, took time.Duration) {
		wantStatus(t, res, StatusTimeout)
		wantKilledAfterGrace(t, res, c, took, time.Second)
	}},
}

// conformanceGrace is the registry's grace in the conformance run.
const conformanceGrace = 3 * time.Second

func TestConformance(t *testing.T) {
	// A secret in the host's environment reaches no interpreter, whoever
	// started it (the shared gateway's kernels inherit the gateway's).
	t.Setenv("EVALHOST_CONF_SECRET_TOKEN", "leaked")
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			if why := b.skip(); why != "" {
				testkit.Unavailable(t, why)
			}
			home := t.TempDir()
			// The shared gateway outlives its users by design; the test's
			// own one ends with the test (cleanups run last-registered first,
			// so this runs after the registry closed its kernels).
			t.Cleanup(func() {
				if _, err := shared.Stop(context.Background(), home); err != nil {
					t.Errorf("stopping the test's gateway: %v", err)
				}
			})
			r := newTestRegistry(t, Config{Home: home, Grace: conformanceGrace,
				Starters: map[string]Starter{LangPython: b.starter(t, home)}})
			dir, _ := filepath.EvalSymlinks(t.TempDir())
			for _, tc := range conformance {
				t.Run(tc.name, func(t *testing.T) {
					ctx := context.Background()
					if tc.cancel > 0 {
						var cancel context.CancelFunc
						ctx, cancel = context.WithTimeout(ctx, tc.cancel)
						defer cancel()
					}
					c := &collector{}
					start := time.Now()
					res, err := r.Eval(ctx, Request{Session: "conf", Cwd: dir, Env: map[string]string{"CONF_VAR": "from-request"}, Cells: tc.cells}, c.Cell)
					if err != nil {
						t.Fatalf("Eval: %v", err)
					}
					tc.check(t, res, c, dir, time.Since(start))
				})
			}
		})
	}
	os.Remove("died")
}

func wantStatus(t *testing.T, res Result, want Status) {
	t.Helper()
	if res.Status != want {
		t.Fatalf("status %s, want %s: %+v", res.Status, want, res.Cells)
	}
}

func wantText(t *testing.T, c *collector, typ frames.Type, want string) {
	t.Helper()
	if got := c.Text(typ); !strings.Contains(got, want) {
		t.Errorf("%s text %q lacks %q", typ, got, want)
	}
}

// wantKept fails unless the request's first cell stopped without a kill:
// it took the interrupt, and its interpreter and state are kept.
func wantKept(t *testing.T, res Result) {
	t.Helper()
	if cr := res.Cells[0]; cr.StateLost || strings.Contains(cr.Message, "killed") {
		t.Errorf("cell = %+v, want it interrupted, its interpreter kept", cr)
	}
}

// spinCode ignores SIGINT and spins, saying its interpreter's pid first.
const spinCode = "import os, signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('spinning', os.getpid(), flush=True)\nwhile True: pass"

// wantKilledAfterGrace checks the kill of a cell that ignored the interrupt
// at its timeout by events, not by an upper bound on the time, which load
// broke: the result says the interpreter was killed, its process ends, and
// the request, begun before its timeout counted, took at least the timeout
// and the grace, so a kill before the grace fails. A kill that never comes
// hangs Eval, which go test's timeout ends.
func wantKilledAfterGrace(t *testing.T, res Result, c *collector, took, timeout time.Duration) {
	t.Helper()
	cr := res.Cells[0]
	if !cr.StateLost || !strings.Contains(cr.Message, "did not stop within the grace window and was killed") {
		t.Errorf("cell = %+v, want its interpreter killed after the grace", cr)
	}
	if least := timeout + conformanceGrace; took < least {
		t.Errorf("the request ended %v after it began, before its timeout and the grace (%v) had run", took, least)
	}
	var pid int
	if _, err := fmt.Sscanf(c.Text(frames.TypeStdout), "spinning %d", &pid); err != nil {
		t.Fatalf("stdout %q does not say the interpreter's pid: %v", c.Text(frames.TypeStdout), err)
	}
	// A bound on a hang only: a gateway's kernel may end after the reply
	// to its deletion.
	if !leakcheck.Gone(pid, time.Minute) {
		t.Errorf("interpreter %d still runs a minute after its kill was reported", pid)
	}
}

// caughtCode sleeps and handles the interrupt that stops it.
const caughtCode = "import time\ntry:\n    print('sleeping', flush=True)\n    time.sleep(30)\nexcept KeyboardInterrupt:\n    print('caught')"

func wantCaught(t *testing.T, res Result, c *collector) {
	t.Helper()
	wantKept(t, res)
	wantText(t, c, frames.TypeStdout, "sleeping\ncaught\n")
	wantText(t, c, frames.TypeStderr, "the cell caught the interrupt")
	if d := c.First(frames.TypeDone); d == nil || !d.Cancelled {
		t.Errorf("done = %+v, want cancelled", d)
	}
	if !strings.Contains(res.Cells[0].Message, "caught the interrupt") {
		t.Errorf("message %q does not say the cell caught the interrupt", res.Cells[0].Message)
	}
}
