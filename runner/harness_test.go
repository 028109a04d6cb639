package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/testkit"
)

// watchdog bounds every wait in these tests, so a hung runner fails the test
// instead of the whole binary.
const watchdog = 30 * time.Second

var runnerPath string

func TestMain(m *testing.M) {
	if path := os.Getenv(killedWriterEnv); path != "" {
		killedWriter(path) // a helper process, killed while it writes
	}
	flag.Parse()
	testkit.Hermetic()
	dir, err := os.MkdirTemp("", "runner-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	runnerPath, err = Path(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// The tests' temporary directory, and their interpreters' (TMPDIR): what
	// a test leaves there would stay in the machine's, so it fails the run.
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Setenv("TMPDIR", tmp)
	code := m.Run()
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		names := make([]string, len(left))
		for i, e := range left {
			names[i] = e.Name()
		}
		fmt.Fprintf(os.Stderr, "FAIL: the tests left %s in the temporary directory; a test removes what it makes there\n",
			strings.Join(names, ", "))
		code = 1
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// python is the real interpreter the tests run (see testkit.Python).
func python(tb testing.TB) string { tb.Helper(); return testkit.Python(tb) }

// needIPython skips tb unless python(tb) has IPython (fails it where the
// tests' modules are required: testkit.NeedModule).
func needIPython(tb testing.TB) { tb.Helper(); testkit.NeedModule(tb, "IPython", "ipython") }

// proc is one runner process wired like the host wires it.
type proc struct {
	tb      testing.TB // the test now using the proc
	owner   testing.TB // the test that started it
	cmd     *exec.Cmd
	req     *os.File
	nonce   string
	frames  chan frameOrErr
	out     *markBuf
	errs    *markBuf
	wg      sync.WaitGroup
	exited  chan struct{}
	quit    chan struct{} // closed by close: frame reader stops delivering
	waitEr  error
	closing sync.Once
	ready   frames.Frame
	early   []frames.Frame // frames before ready
	seq     int
}

type frameOrErr struct {
	f   frames.Frame
	err error
}

// markBuf collects a raw output pipe and hands it out up to sync marks.
type markBuf struct {
	mu      sync.Mutex
	buf     []byte
	eof     bool
	changed chan struct{}
	discard bool // keep only a tail long enough to find marks (benchmarks)
}

func newMarkBuf() *markBuf { return &markBuf{changed: make(chan struct{})} }

func (m *markBuf) fill(r io.Reader) {
	b := make([]byte, 64<<10)
	for {
		n, err := r.Read(b)
		m.mu.Lock()
		m.buf = append(m.buf, b[:n]...)
		if m.discard && len(m.buf) > 256 {
			m.buf = append(m.buf[:0], m.buf[len(m.buf)-256:]...)
		}
		if err != nil {
			m.eof = true
		}
		close(m.changed)
		m.changed = make(chan struct{})
		m.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// take returns the bytes read so far and drops them.
func (m *markBuf) take() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := string(m.buf)
	m.buf = m.buf[:0]
	return s
}

// until returns the bytes before mark and drops them and the mark.
func (m *markBuf) until(tb testing.TB, mark []byte, deadline <-chan time.Time) string {
	tb.Helper()
	for {
		m.mu.Lock()
		if i := bytes.Index(m.buf, mark); i >= 0 {
			s := string(m.buf[:i])
			m.buf = append(m.buf[:0], m.buf[i+len(mark):]...)
			m.mu.Unlock()
			return s
		}
		eof, changed := m.eof, m.changed
		m.mu.Unlock()
		if eof {
			tb.Fatalf("output pipe closed before sync mark %q", mark)
		}
		select {
		case <-changed:
		case <-deadline:
			tb.Fatalf("watchdog: no sync mark %q within %v", mark, watchdog)
		}
	}
}

type startOpts struct {
	env       []string // added to a minimal environment
	modules   []string // dirs of extension modules, found as a session finds them (FindModules)
	entries   []Module // EVALHOST_MODULES as given, in place of modules' (what FindModules judged, changed since)
	dir       string
	python    string           // the interpreter; testkit.Python's when empty
	pyArgs    []string         // interpreter options before runner.py (-S hides site-packages)
	runner    string           // runner.py to start; the shared copy when empty
	first     string           // a cell sent as id c1 before ready, as a host may pipeline it
	pipelined []map[string]any // requests sent as c1, c2, ... before ready (after first's)
}

// start spawns the runner and waits for ready.
// inBothModes runs f in a subtest on a runner of its own mode, then in one
// on a runner in full IPython mode (EVALHOST_IPYTHON=1).
func inBothModes(t *testing.T, f func(t *testing.T, p *proc)) {
	inBothModesWith(t, func(*testing.T) startOpts { return startOpts{} }, f)
}

// inBothModesWith is inBothModes with each runner started with opts(t)'s
// options (their env and EVALHOST_IPYTHON=1 in the second).
func inBothModesWith(t *testing.T, opts func(t *testing.T) startOpts, f func(t *testing.T, p *proc)) {
	for _, mode := range []struct {
		name string
		env  []string
	}{{"runner", nil}, {"full IPython", []string{"EVALHOST_IPYTHON=1"}}} {
		t.Run(mode.name, func(t *testing.T) {
			if mode.env != nil {
				needIPython(t)
			}
			o := opts(t)
			o.env = append(o.env, mode.env...)
			f(t, start(t, o))
		})
	}
}

func start(tb testing.TB, o startOpts) *proc {
	tb.Helper()
	exe := o.python
	if exe == "" {
		exe = python(tb)
	}
	p := &proc{tb: tb, owner: tb, nonce: fmt.Sprintf("%016x", time.Now().UnixNano()),
		frames: make(chan frameOrErr, 64), out: newMarkBuf(), errs: newMarkBuf(), exited: make(chan struct{}), quit: make(chan struct{})}
	reqR, reqW := mustPipe(tb)
	outR, outW := mustPipe(tb)
	errR, errW := mustPipe(tb)
	frR, frW := mustPipe(tb)
	path := runnerPath
	if o.runner != "" {
		path = o.runner
	}
	p.cmd = exec.Command(exe, append(append([]string{}, o.pyArgs...), path)...)
	p.cmd.Dir = o.dir
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = reqR, outW, errW
	p.cmd.ExtraFiles = []*os.File{frW}
	p.cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LANG=C.UTF-8",
		"TMPDIR=" + os.Getenv("TMPDIR"), "EVALHOST_SYNC_NONCE=" + p.nonce,
	}, o.env...)
	if mods := moduleEntries(tb, o); len(mods) > 0 {
		p.cmd.Env = append(p.cmd.Env, ModulesEnv+"="+ModulesValue(mods))
	}
	p.cmd.SysProcAttr = groupAttr()
	if err := p.cmd.Start(); err != nil {
		tb.Fatalf("start runner: %v", err)
	}
	for _, f := range []*os.File{reqR, outW, errW, frW} {
		f.Close()
	}
	p.req = reqW
	if o.first != "" {
		p.seq++
		p.send(map[string]any{"id": "c1", "code": o.first})
	}
	for _, req := range o.pipelined {
		p.seq++
		req["id"] = fmt.Sprintf("c%d", p.seq)
		p.send(req)
	}
	p.wg.Add(4)
	go func() { defer p.wg.Done(); defer outR.Close(); p.out.fill(outR) }()
	go func() { defer p.wg.Done(); defer errR.Close(); p.errs.fill(errR) }()
	go func() { defer p.wg.Done(); defer frR.Close(); p.readFrames(frR) }()
	go func() { defer p.wg.Done(); p.waitEr = p.cmd.Wait(); close(p.exited) }()
	tb.Cleanup(p.close)
	for {
		f := p.next()
		if f.Type == frames.TypeReady {
			p.ready = f
			return p
		}
		p.early = append(p.early, f)
	}
}

// moduleEntries are the modules o names: its entries, else what
// FindModules finds in its dirs, which must refuse nothing.
func moduleEntries(tb testing.TB, o startOpts) []Module {
	if o.entries != nil || len(o.modules) == 0 {
		return o.entries
	}
	var places []ModulePlace
	for _, d := range o.modules {
		places = append(places, ModulePlace{Base: filepath.Dir(d), Rel: filepath.Base(d)})
	}
	mods, refused := FindModules(places)
	if len(refused) > 0 {
		tb.Fatalf("FindModules refused %v", refused)
	}
	return mods
}

func mustPipe(tb testing.TB) (*os.File, *os.File) {
	r, w, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	return r, w
}

func (p *proc) readFrames(r io.Reader) {
	defer close(p.frames)
	fr := frames.NewReader(r, 0)
	for {
		f, err := fr.Next()
		if errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) {
			return
		}
		var pe *frames.ProtocolError
		if err != nil && !errors.As(err, &pe) {
			return
		}
		select {
		case p.frames <- frameOrErr{f, err}:
		case <-p.quit:
			return
		}
	}
}

// next returns the next frame; a protocol error or EOF fails the test.
func (p *proc) next() frames.Frame {
	p.tb.Helper()
	select {
	case fe, ok := <-p.frames:
		if !ok {
			exit := "still running"
			select { // the pipe closes as the runner dies: say how it died
			case <-p.exited:
				exit = fmt.Sprint(p.waitEr)
			case <-time.After(time.Second):
			}
			p.tb.Fatalf("frames pipe closed (runner: %s); runner stderr: %q", exit, p.errs.snapshot())
		}
		if fe.err != nil {
			p.tb.Fatalf("bad frame: %v", fe.err)
		}
		return fe.f
	case <-time.After(watchdog):
		p.tb.Fatalf("watchdog: no frame within %v", watchdog)
	}
	return frames.Frame{}
}

// waitFor waits until the unconsumed output contains s.
func (m *markBuf) waitFor(tb testing.TB, s string) {
	tb.Helper()
	deadline := time.After(watchdog)
	for {
		m.mu.Lock()
		found, changed := bytes.Contains(m.buf, []byte(s)), m.changed
		m.mu.Unlock()
		if found {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			tb.Fatalf("watchdog: no %q in output within %v", s, watchdog)
		}
	}
}

func (m *markBuf) snapshot() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return string(m.buf)
}

// cellResult is everything one cell produced.
type cellResult struct {
	frames    []frames.Frame // started .. done
	stdout    string
	stderr    string
	positions [3][]int  // the numbers of the position marks on fd 1 and fd 2
	raw       [3]string // stdout and stderr with their position marks as "<k>"
}

func (c cellResult) done() frames.Frame { return c.frames[len(c.frames)-1] }

func (c cellResult) first(t frames.Type) (frames.Frame, bool) {
	for _, f := range c.frames {
		if f.Type == t {
			return f, true
		}
	}
	return frames.Frame{}, false
}

// send writes one request line.
func (p *proc) send(v any) {
	p.tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		p.tb.Fatal(err)
	}
	if _, err := p.req.Write(append(b, '\n')); err != nil {
		p.tb.Fatalf("write request: %v", err)
	}
}

// run executes code as one cell and collects its frames and output.
func (p *proc) run(code string) cellResult {
	p.tb.Helper()
	return p.runReq(map[string]any{"code": code})
}

func (p *proc) runReq(req map[string]any) cellResult {
	p.tb.Helper()
	p.seq++
	id := fmt.Sprintf("c%d", p.seq)
	req["id"] = id
	p.send(req)
	return p.collect(id, nil)
}

// collect reads frames of cell id until done (calling onFrame for each) and
// the output up to its sync marks.
func (p *proc) collect(id string, onFrame func(frames.Frame)) cellResult {
	p.tb.Helper()
	var res cellResult
	for {
		f := p.next()
		if f.ID != id && f.Type != frames.TypeWarning {
			p.tb.Fatalf("frame for %q while running %q: %+v", f.ID, id, f)
		}
		if onFrame != nil {
			onFrame(f)
		}
		res.frames = append(res.frames, f)
		if f.Type == frames.TypeDone {
			break
		}
	}
	deadline := time.After(watchdog)
	// Position marks (frames doc, "Order") sit between text and rich
	// frames; the text itself is what the cell wrote around them.
	n, err := strconv.Atoi(strings.TrimPrefix(id, "c"))
	behind := err == nil && p.seq > n // cells sent after it, pipelined
	res.stdout = p.text(p.out, 1, res, id, behind, deadline)
	res.stderr = p.text(p.errs, 2, res, id, behind, deadline)
	pos := regexp.MustCompile("\x00\x1eEVH" + p.nonce + ":\x02([0-9]+)\x1e\x00")
	for fd, s := range map[int]*string{1: &res.stdout, 2: &res.stderr} {
		res.raw[fd] = pos.ReplaceAllString(*s, "<$1>")
		for _, m := range pos.FindAllStringSubmatch(*s, -1) {
			k, _ := strconv.Atoi(m[1])
			res.positions[fd] = append(res.positions[fd], k)
		}
		*s = pos.ReplaceAllString(*s, "")
	}
	return res
}

// text is the cell's text on fd (1 or 2), read from m: up to its sync
// mark. An fd the done frame names as unmarked had nothing more the runner
// knew of: all read so far is the cell's, unless requests sent after it
// (behind) may have written already, when only what comes up to its own
// last position mark on fd is (and without one, nothing): what a cell
// queued behind wrote is its own, mark included.
func (p *proc) text(m *markBuf, fd uint8, res cellResult, id string, behind bool, deadline <-chan time.Time) string {
	p.tb.Helper()
	if res.done().Unmarked&fd == 0 {
		return m.until(p.tb, []byte("\x00\x1eEVH"+p.nonce+":"+id+"\x1e\x00"), deadline)
	}
	if !behind {
		return m.take()
	}
	k := 0
	for _, f := range res.frames {
		if f.Pos > 0 && f.Unmarked&fd == 0 {
			k = max(k, f.Pos)
		}
	}
	if k == 0 {
		return ""
	}
	pos := fmt.Sprintf("\x00\x1eEVH%s:\x02%d\x1e\x00", p.nonce, k)
	return m.until(p.tb, []byte(pos), deadline) + pos
}

// interrupt sends SIGINT to the runner's process group as the host does,
// wake-ups included (host's interruptCell): CPython handles a SIGINT that
// lands just before a blocking call (time.sleep, a read) only when the call
// returns, so a bare SIGINT now and then waited out a test's 30 s sleep.
// The wake signal's handler does nothing: wake-ups after the interrupt
// landed are harmless, and they stop after ~3 s or at close.
func (p *proc) interrupt() {
	p.tb.Helper()
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGINT); err != nil {
		p.tb.Fatalf("sigint: %v", err)
	}
	if p.ready.Wake <= 0 {
		return
	}
	pid, sig := p.cmd.Process.Pid, syscall.Signal(p.ready.Wake)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for delay := 50 * time.Millisecond; delay < 2*time.Second; delay *= 2 {
			select {
			case <-p.quit:
				return
			case <-p.exited:
				return
			case <-time.After(delay):
				select {
				case <-p.exited: // its pid may be another process's
					return
				default:
					wakeMain(pid, sig)
				}
			}
		}
	}()
}

// wait waits for the runner to exit and returns its exit code.
func (p *proc) wait() int {
	p.tb.Helper()
	select {
	case <-p.exited:
	case <-time.After(watchdog):
		p.tb.Fatalf("watchdog: runner did not exit within %v", watchdog)
	}
	if p.waitEr == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(p.waitEr, &ee) {
		return ee.ExitCode()
	}
	p.tb.Fatalf("wait: %v", p.waitEr)
	return -1
}

// close ends the runner (EOF on fd 0, then SIGKILL to the group if it
// lingers) and checks that none of its goroutines or processes is left;
// once: a test that closes it early leaves its Cleanup nothing to do.
func (p *proc) close() { p.closing.Do(p.end) }

func (p *proc) end() {
	tb := p.owner
	p.req.Close()
	close(p.quit)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		tb.Errorf("runner did not exit on EOF; killing it")
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(watchdog):
		tb.Errorf("goroutine leak: the harness's pipe readers did not end")
	}
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) // children a cell left behind
	if err := syscall.Kill(p.cmd.Process.Pid, 0); !errors.Is(err, syscall.ESRCH) {
		tb.Errorf("runner pid %d still exists after wait: %v", p.cmd.Process.Pid, err)
	}
}

// text returns a bundle entry as a string, failing when absent.
func text(tb testing.TB, b frames.Bundle, mime string) string {
	tb.Helper()
	s, ok := b.Text(mime)
	if !ok {
		tb.Fatalf("bundle has no string %s: %v", mime, keys(b))
	}
	return s
}

func keys(b frames.Bundle) []string {
	var ks []string
	for k := range b {
		ks = append(ks, k)
	}
	return ks
}

func writeFile(tb testing.TB, dir, name, content string) string {
	tb.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}
