package tests

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
)

// serveClient drives one `evalhost serve` child.
type serveClient struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser

	mu      sync.Mutex
	byID    map[string][]map[string]any
	noID    []map[string]any
	stderr  strings.Builder // serve's log, under mu
	changed chan struct{}
	readerW sync.WaitGroup
}

func startServe(t *testing.T, args ...string) *serveClient {
	t.Helper()
	return startServeEnv(t, nil, args...)
}

// startServeEnv starts serve with env added to its environment.
func startServeEnv(t *testing.T, env []string, args ...string) *serveClient {
	t.Helper()
	cmd := command(t, append([]string{"serve"}, args...)...)
	cmd.Env = append(cmd.Env, env...)
	c := &serveClient{t: t, cmd: cmd, byID: map[string][]map[string]any{}, changed: make(chan struct{}, 1)}
	cmd.Stderr = lockedWriter{&c.mu, &c.stderr}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.stdin = stdin
	c.readerW.Add(1)
	go c.read(stdout)
	t.Cleanup(func() {
		c.stdin.Close()
		done := make(chan struct{})
		go func() { c.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			c.cmd.Process.Kill()
			<-done
			t.Errorf("serve did not exit within 30 s of stdin closing")
		}
		c.readerW.Wait()
	})
	return c
}

func (c *serveClient) read(r io.Reader) {
	defer c.readerW.Done()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			m = map[string]any{"type": "UNPARSEABLE", "raw": sc.Text()}
		}
		c.mu.Lock()
		if id, ok := m["id"].(string); ok && id != "" {
			c.byID[id] = append(c.byID[id], m)
		} else {
			c.noID = append(c.noID, m)
		}
		c.mu.Unlock()
		select {
		case c.changed <- struct{}{}:
		default:
		}
	}
}

// lockedWriter writes under mu, so a test may read what was written.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (c *serveClient) send(v any) {
	c.t.Helper()
	b, _ := json.Marshal(v)
	c.sendRaw(string(b))
}

func (c *serveClient) sendRaw(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.stdin, line+"\n"); err != nil {
		c.t.Fatalf("writing to serve: %v", err)
	}
}

// waitFor blocks until cond holds over the replies (at most 60 s).
func (c *serveClient) waitFor(what string, cond func() bool) {
	c.t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		c.mu.Lock()
		ok := cond()
		c.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-c.changed:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			c.t.Fatalf("timed out waiting for %s; replies: %v / %v", what, c.byID, c.noID)
		}
	}
}

// result waits for a request's end (or the request_error that refused it)
// and returns its lines.
func (c *serveClient) result(id string) []map[string]any {
	c.t.Helper()
	c.waitFor("end of "+id, func() bool {
		for _, m := range c.byID[id] {
			// A refusal of another op (a late cancel), or of a duplicate
			// while this eval is in flight, is not this eval's end.
			if m["type"] == "end" || m["type"] == "request_error" && (m["op"] == "eval" || m["op"] == nil) && m["inFlight"] != true {
				return true
			}
		}
		return false
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]map[string]any(nil), c.byID[id]...)
}

func ofType(lines []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, m := range lines {
		if m["type"] == typ {
			out = append(out, m)
		}
	}
	return out
}

func stdoutOf(lines []map[string]any) string {
	var s string
	for _, m := range ofType(lines, "stdout") {
		s += m["data"].(string)
	}
	return s
}

func endOf(t *testing.T, lines []map[string]any) map[string]any {
	t.Helper()
	ends := ofType(lines, "end")
	if len(ends) != 1 {
		t.Fatalf("%d end lines, want exactly 1: %v", len(ends), lines)
	}
	return ends[0]
}

func py(code string) map[string]any { return map[string]any{"language": "py", "code": code} }

// pids are the interpreter pids of every ready line seen.
func (c *serveClient) pids() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var pids []int
	for _, lines := range c.byID {
		for _, m := range ofType(lines, "ready") {
			pids = append(pids, int(m["pid"].(float64)))
		}
	}
	return pids
}

// checkPidsGone fails for any process that does not end (zombies of other
// parents count as ended, once all their threads have: they hold no
// resources but a slot), awaiting the ends with hangBound on a hang.
func checkPidsGone(t *testing.T, pids []int) {
	t.Helper()
	if len(pids) == 0 {
		t.Fatal("no interpreter pids were seen")
	}
	deadline := time.Now().Add(hangBound)
	for _, pid := range pids {
		if !leakcheck.Gone(pid, time.Until(deadline)) {
			t.Errorf("interpreter %d still ran %s after the server ended", pid, hangBound)
		}
	}
}
