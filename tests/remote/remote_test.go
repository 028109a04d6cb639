package remote

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evalhost/evalhost/bridge"
	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/remotetest"
	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

// kernelUser is the user the tests ask Enterprise Gateway for kernels as:
// it refuses root, whom CI runs as.
const kernelUser = "evalhost-test"

// grace is the registry's interrupt grace in these tests.
const grace = 2 * time.Second

// setup is one second host, an Enterprise Gateway launching kernels there,
// and a registry using it.
type setup struct {
	host  *remotetest.Host
	gw    *remotetest.Gateway
	reg   *sessions.Registry
	dir   string           // a cwd on both hosts (the filesystem is shared)
	calls chan bridge.Call // what the tool bridge's "echo" tool was called with
}

func newSetup(t *testing.T, cfg sessions.Config) *setup {
	t.Helper()
	h := remotetest.NewHost(t)
	g := remotetest.StartGateway(t, remotetest.GatewayOptions{Host: h})
	t.Cleanup(leakcheck.Watchdog(t, 4*time.Minute))
	leakcheck.Check(t, leakcheck.Options{IgnoreProcess: remotetest.Owns})
	cfg.Home = t.TempDir()
	cfg.Grace = grace
	cfg.StartTimeout = 60 * time.Second
	cfg.Sink.Store = streamsink.NewStore(filepath.Join(cfg.Home, "artifacts"))
	cfg.Starters = map[string]sessions.Starter{sessions.LangPython: sessions.GatewayStarter(sessions.GatewayConfig{
		URL: g.URL, Token: g.Token, Environ: append(os.Environ(), "KERNEL_USERNAME="+kernelUser)})}
	// The tool bridge, as `evalhost run` and `serve` wire it, on this
	// host's loopback, which the other host cannot reach.
	calls := make(chan bridge.Call, 16)
	tools := bridge.New(bridge.ToolsFunc(func(_ context.Context, c bridge.Call) (json.RawMessage, error) {
		calls <- c
		return c.Args, nil
	}), bridge.Options{})
	t.Cleanup(func() { tools.Close() })
	cfg.EnvHook = tools.Env
	cfg.RunHook = func(run sessions.RunInfo, active bool) { tools.RunHook(run.Session, run.Run, active) }
	r := sessions.New(cfg)
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &setup{host: h, gw: g, reg: r, dir: dir, calls: calls}
}

// collector gathers a request's frames and can wait for a text.
type collector struct {
	mu     sync.Mutex
	frames []frames.Frame
	seen   map[string]chan struct{}
}

func (c *collector) emit(_ int, f frames.Frame) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.frames = append(c.frames, f)
	for text, ch := range c.seen {
		if strings.Contains(f.Data, text) {
			close(ch)
			delete(c.seen, text)
		}
	}
}

// when returns a channel closed once a frame's data holds text.
func (c *collector) when(text string) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]chan struct{}{}
	}
	ch := make(chan struct{})
	c.seen[text] = ch
	return ch
}

func (c *collector) text(typ frames.Type) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, f := range c.frames {
		if f.Type == typ {
			b.WriteString(f.Data)
		}
	}
	return b.String()
}

func py(code string) sessions.Cell { return sessions.Cell{Language: sessions.LangPython, Code: code} }

func (s *setup) eval(t *testing.T, ctx context.Context, cells ...sessions.Cell) (sessions.Result, *collector) {
	t.Helper()
	c := &collector{}
	res, err := s.reg.Eval(ctx, sessions.Request{Session: "remote", Cwd: s.dir, Cells: cells}, c.emit)
	if err != nil {
		t.Fatalf("Eval: %v", err)
	}
	return res, c
}

func wantStatus(t *testing.T, res sessions.Result, want sessions.Status, c *collector) {
	t.Helper()
	if res.Status != want {
		t.Fatalf("status %s, want %s: %+v\nstdout %q\nstderr %q", res.Status, want, res.Cells,
			c.text(frames.TypeStdout), c.text(frames.TypeStderr))
	}
}

// whereCode prints the hostname and the address this kernel reaches the
// gateway's host from.
func whereCode(hostIP string) string {
	return "import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ns.connect((" +
		"'" + hostIP + "', 9))\nprint(socket.gethostname(), s.getsockname()[0])\ns.close()"
}

// TestRemoteKernels runs the scenarios in order on one second host and one
// gateway (each costs seconds to make): the ones that end a kernel last.
func TestRemoteKernels(t *testing.T) {
	// Registered before the setup, so it runs after the setup's teardown.
	var kernelFiles []string
	t.Cleanup(func() {
		for _, f := range kernelFiles {
			if _, err := os.Lstat(f); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the remote kernel's connection file %s outlived the test (lstat: %v)", f, err)
			}
		}
	})
	s := newSetup(t, sessions.Config{})
	ctx := context.Background()
	hostname, _ := os.Hostname()

	t.Run("the kernel's files stay on its host", func(t *testing.T) {
		res, c := s.eval(t, ctx, py("from ipykernel.connect import get_connection_file\nprint(get_connection_file())"))
		wantStatus(t, res, sessions.StatusOK, c)
		f := strings.TrimSpace(c.text(frames.TypeStdout))
		if !filepath.IsAbs(f) {
			t.Fatalf("the kernel's connection file is %q, want an absolute path", f)
		}
		kernelFiles = append(kernelFiles, f)
	})

	t.Run("state across cells, on the other host", func(t *testing.T) {
		res, c := s.eval(t, ctx, py("x = 20"), py(whereCode(s.host.HostIP)), py("print(x * 2 + 2)"))
		wantStatus(t, res, sessions.StatusOK, c)
		want := s.host.Name + " " + s.host.IP + "\n42\n"
		if got := c.text(frames.TypeStdout); got != want {
			t.Errorf("stdout %q, want %q (this host is %q)", got, want, hostname)
		}
	})

	t.Run("tool call from the other host", func(t *testing.T) {
		res, c := s.eval(t, ctx, py("import socket\nprint(tool.echo(host=socket.gethostname()))"))
		wantStatus(t, res, sessions.StatusOK, c)
		if got, want := c.text(frames.TypeStdout), "{'host': '"+s.host.Name+"'}\n"; got != want {
			t.Errorf("stdout %q, want %q", got, want)
		}
		select {
		case call := <-s.calls:
			if call.Session != "remote" || call.Name != "echo" || !strings.Contains(string(call.Args), s.host.Name) {
				t.Errorf("the tool got %+v", call)
			}
		default:
			t.Error("the tool was not called")
		}
	})

	t.Run("a cwd the other host lacks", func(t *testing.T) {
		c := &collector{}
		res, err := s.reg.Eval(ctx, sessions.Request{Session: "remote", Cwd: s.host.Hidden,
			Cells: []sessions.Cell{py("print('ran')")}}, c.emit)
		if err != nil {
			t.Fatalf("Eval: %v", err)
		}
		all := c.text(frames.TypeStderr) + c.text(frames.TypeStdout) + res.Cells[0].Message
		for _, f := range c.frames {
			all += f.Evalue + f.Message
		}
		if res.Status == sessions.StatusOK || !strings.Contains(all, "does not exist on the kernel's host "+s.host.Name) {
			t.Errorf("status %s, output %q: want a failure naming the missing directory and host %s", res.Status, all, s.host.Name)
		}
	})

	t.Run("timeout keeps the kernel and its state", func(t *testing.T) {
		res, c := s.eval(t, ctx, sessions.Cell{Language: sessions.LangPython, Timeout: 2 * time.Second,
			Code: "import time\nprint('before', flush=True)\ntime.sleep(30)"})
		wantStatus(t, res, sessions.StatusTimeout, c)
		if !strings.Contains(c.text(frames.TypeStdout), "before") || !strings.Contains(c.text(frames.TypeStderr), "Command timed out after 2 seconds") {
			t.Errorf("stdout %q stderr %q", c.text(frames.TypeStdout), c.text(frames.TypeStderr))
		}
		if res.Cells[0].StateLost {
			t.Errorf("cell = %+v: an interrupted remote kernel keeps its state", res.Cells[0])
		}
		res, c = s.eval(t, ctx, py("print(x)"))
		wantStatus(t, res, sessions.StatusOK, c)
		if got := c.text(frames.TypeStdout); got != "20\n" {
			t.Errorf("after the timeout x printed %q, want 20", got)
		}
	})

	t.Run("death on the other host is retried", func(t *testing.T) {
		marker := filepath.Join(s.dir, "died")
		res, c := s.eval(t, ctx, py("import os, socket\nif not os.path.exists('died'):\n    open('died', 'w').close()\n    os._exit(9)\nprint('again on', socket.gethostname())"))
		wantStatus(t, res, sessions.StatusOK, c)
		if !res.Cells[0].Retried || !res.Cells[0].StateLost {
			t.Errorf("cell = %+v, want retried and stateLost", res.Cells[0])
		}
		if got, want := c.text(frames.TypeStdout), "again on "+s.host.Name+"\n"; got != want {
			t.Errorf("stdout %q, want %q", got, want)
		}
		os.Remove(marker)
	})

	t.Run("50 ms of delay on the link", func(t *testing.T) { delayed(t, s) })
	t.Run("link down mid-cell ends the cell", func(t *testing.T) { linkDown(t, s) })
	t.Run("the other host dies mid-cell", func(t *testing.T) { hostDies(t, s) })
}

// delayed measures warm 1+1 round trips to the other host, then with 50 ms
// of delay on the link (netem, or where the kernel has none the test's
// frame forwarder: remotetest.LinkKind).
func delayed(t *testing.T, s *setup) {
	const d = 50 * time.Millisecond
	roundTrips(t, s, 1) // the kernel is warm before anything is timed
	plain := roundTrips(t, s, 5)
	s.host.Delay(t, d)
	delayed := roundTrips(t, s, 5)
	s.host.Delay(t, 0)
	t.Logf("median warm 1+1 round trip through Enterprise Gateway to the other host: %v plain, %v with %v of delay (%s)",
		plain, delayed, d, s.host.Kind)
	if delayed < d {
		t.Errorf("with %v of delay a round trip took %v: the delay was not on the kernel's path", d, delayed)
	}
}

// linkDown takes the link to the other host down mid-cell: the cell ends
// (no reply can come while the link is down, so a cell that waits for one
// hangs to the watchdog), failed, with its state lost, and once the link
// is back the next cell gets a new kernel there.
func linkDown(t *testing.T, s *setup) {
	ctx := context.Background()
	const timeout = 3 * time.Second
	c := &collector{}
	started, ended := c.when("linked"), make(chan struct{})
	defer close(ended)
	go func() {
		select {
		case <-started:
			s.host.SetLink(t, false)
		case <-ended:
		}
	}()
	begin := time.Now()
	res, err := s.reg.Eval(ctx, sessions.Request{Session: "remote", Cwd: s.dir, Cells: []sessions.Cell{{
		Language: sessions.LangPython, Timeout: timeout,
		Code: "import time\nprint('linked', flush=True)\ntime.sleep(60)\nprint('never')"}}}, c.emit)
	took := time.Since(begin)
	s.host.SetLink(t, true)
	if err != nil {
		t.Fatalf("Eval: %v", err)
	}
	t.Logf("ended after %v: %+v; stderr %q", took.Round(time.Millisecond), res.Cells[0], c.text(frames.TypeStderr))
	// Which end comes first depends on the gateway: the cell's timeout
	// (the interrupt cannot arrive), or Enterprise Gateway's poll of
	// the kernel over ssh failing, which it reports as the kernel
	// restarting; then evalhost retries once, and the new kernel
	// cannot start while the link is down. Either way the cell failed
	// and its state is gone, and the result says so.
	if res.Status == sessions.StatusOK || !res.Cells[0].StateLost {
		t.Errorf("cell = %+v, want a failure with state lost (the kernel could not be reached)", res.Cells[0])
	}
	if !strings.Contains(c.text(frames.TypeStdout), "linked") {
		t.Errorf("output before the drop was lost: %q", c.text(frames.TypeStdout))
	}
	if msg := res.Cells[0].Message; strings.Contains(msg, "SSHClient") && !strings.Contains(msg, "reachable from the gateway") {
		t.Errorf("message %q does not explain Enterprise Gateway's SSH failure", msg)
	}
	// With the link back, the next cell gets a new kernel there.
	res, c = s.eval(t, ctx, py(whereCode(s.host.HostIP)))
	wantStatus(t, res, sessions.StatusOK, c)
	if !strings.Contains(c.text(frames.TypeStdout), s.host.Name) {
		t.Errorf("after the link came back: %q", c.text(frames.TypeStdout))
	}

}

// hostDies ends the scenarios: the other host dies (every process of it)
// mid-cell, and the cell ends with its state lost (no reply comes from a
// dead host, so a cell that waits for one hangs to the watchdog).
func hostDies(t *testing.T, s *setup) {
	const timeout = 3 * time.Second
	c := &collector{}
	started, ended := c.when("alive"), make(chan struct{})
	defer close(ended)
	go func() {
		select {
		case <-started:
			s.host.Die(t)
		case <-ended:
		}
	}()
	begin := time.Now()
	res, err := s.reg.Eval(context.Background(), sessions.Request{Session: "remote", Cwd: s.dir, Cells: []sessions.Cell{{
		Language: sessions.LangPython, Timeout: timeout, Code: "import time\nprint('alive', flush=True)\ntime.sleep(60)"}}}, c.emit)
	took := time.Since(begin)
	if err != nil {
		t.Fatalf("Eval: %v", err)
	}
	t.Logf("ended after %v: %+v", took.Round(time.Millisecond), res.Cells[0])
	if res.Status == sessions.StatusOK || !res.Cells[0].StateLost {
		t.Errorf("cell = %+v, want a failure with state lost", res.Cells[0])
	}
}

// roundTrips is the median time of n `1+1` cells.
func roundTrips(t *testing.T, s *setup, n int) time.Duration {
	t.Helper()
	var ds []time.Duration
	for range n {
		start := time.Now()
		res, c := s.eval(t, context.Background(), py("1+1"))
		ds = append(ds, time.Since(start))
		wantStatus(t, res, sessions.StatusOK, c)
	}
	slices.Sort(ds)
	return ds[n/2]
}
