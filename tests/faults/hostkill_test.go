package faults

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/testkit"
	"github.com/evalhost/evalhost/sessions"
)

// helperEnv makes the test binary act as a host (see TestMain); its value
// is "LANG:busy", "LANG:idle" or "soak".
const helperEnv = "EVALHOST_FAULTS_HOST"

// hangBound bounds a wait for a process to end, or another event that must
// come: a hang's bound, not a timing, which load stretches (the guarantee
// is that it ends, found by awaiting the end). Every process the tests here
// await the end of would run far longer by itself (sleeps of 600 s and
// more, an interpreter spinning), so one left running still fails at it.
const hangBound = time.Minute

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHostHelper(mode))
	}
	testkit.Hermetic()
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// runHostHelper is a host built on the sessions registry. With a language
// it runs one spawning cell in EVALHOST_FAULTS_CWD, prints "idle" when an
// idle cell ended, and waits to be killed; "soak" runs random cells.
func runHostHelper(mode string) int {
	r := sessions.New(sessions.Config{Home: os.Getenv("EVALHOST_FAULTS_HOME")})
	dir := os.Getenv("EVALHOST_FAULTS_CWD")
	if mode == "soak" {
		return runSoakHost(r, dir)
	}
	lang, state, _ := strings.Cut(mode, ":")
	emit := func(_ int, f frames.Frame) {
		if f.Type == frames.TypeStdout {
			fmt.Print(f.Data)
		}
	}
	cell := sessions.Cell{Language: lang, Code: spawnCode(lang, state == "busy"), Timeout: 600 * time.Second}
	res, err := r.Eval(context.Background(), sessions.Request{Cwd: dir, Cells: []sessions.Cell{cell}}, emit)
	if err != nil || res.Status != sessions.StatusOK {
		fmt.Fprintf(os.Stderr, "helper: %v %+v\n", err, res)
		return 1
	}
	fmt.Println("idle")
	select {} // wait for SIGKILL
}

// binDir holds the evalhost binary, built once when a test needs it.
var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

func evalhostBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "evalhost-faults-"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "evalhost")
		out, err := exec.Command("go", "build", "-o", binPath, "../../cmd/evalhost").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// host is one host process under test and the lines of cell output it
// prints; a serve host's frames are decoded and its "end" reply becomes
// the line "idle".
type host struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string // closed once its stdout is at EOF
}

// startHost starts a host of kind "registry" (this test binary as a host),
// "serve" or "run" (the evalhost binary), running the spawning cell of lang
// in dir.
func startHost(t *testing.T, kind, lang string, busy bool, dir string) *host {
	t.Helper()
	state := map[bool]string{true: "busy", false: "idle"}[busy]
	var cmd *exec.Cmd
	switch kind {
	case "registry":
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		cmd = exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"="+lang+":"+state, "EVALHOST_FAULTS_HOME="+t.TempDir(), "EVALHOST_FAULTS_CWD="+dir)
	case "serve":
		cmd = exec.Command(evalhostBinary(t), "serve")
	case "run":
		cmd = exec.Command(evalhostBinary(t), "run", "--cwd", dir, "--language", lang, "--timeout", "600", "-c", spawnCode(lang, busy))
	}
	if cmd.Env == nil {
		cmd.Env = append(os.Environ(), "EVALHOST_HOME="+t.TempDir())
	}
	h := launchHost(t, cmd, kind)
	if kind == "serve" {
		req, _ := json.Marshal(map[string]any{"op": "eval", "id": "k", "session": "s", "cwd": dir,
			"cells": []map[string]any{{"language": lang, "code": spawnCode(lang, busy), "timeout": 600}}})
		if _, err := h.stdin.Write(append(req, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// launchHost starts cmd, a host of kind, with its stdin held by the test
// and its stdout read line by line into h.lines.
func launchHost(t *testing.T, cmd *exec.Cmd, kind string) *host {
	t.Helper()
	cmd.Stderr = os.Stderr
	h := &host{cmd: cmd, lines: make(chan string, 64)}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	h.stdin = stdin
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	err = cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		t.Fatal(err)
	}
	go h.read(kind, r)
	return h
}

// read sends stdout's lines until EOF; the host's death ends it.
func (h *host) read(kind string, r *os.File) {
	defer close(h.lines)
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	var partial string
	for sc.Scan() {
		if kind == "mcp" {
			h.readMCP(sc.Bytes())
			continue
		}
		if kind != "serve" {
			h.lines <- sc.Text()
			continue
		}
		var f struct{ Type, Data string }
		if json.Unmarshal(sc.Bytes(), &f) != nil {
			continue
		}
		switch f.Type {
		case "stdout":
			partial += f.Data
			for {
				line, rest, ok := strings.Cut(partial, "\n")
				if !ok {
					break
				}
				h.lines <- line
				partial = rest
			}
		case "end":
			h.lines <- "idle"
		}
	}
}

// readMCP sends the lines of an eval tool result's text, then "idle".
func (h *host) readMCP(line []byte) {
	var resp struct {
		Result struct {
			Content []struct{ Type, Text string }
		}
	}
	if json.Unmarshal(line, &resp) != nil || len(resp.Result.Content) == 0 {
		return
	}
	for _, c := range resp.Result.Content {
		for _, l := range strings.Split(c.Text, "\n") {
			h.lines <- l
		}
	}
	h.lines <- "idle"
}

// awaitPIDs reads the cell's "pid" and "pids" lines, and with idle waits
// for "idle" too, so the kill lands after the cell ended.
func (h *host) awaitPIDs(idle bool) (interp int, spawned []int, err error) {
	stuck := time.AfterFunc(60*time.Second, func() { _ = h.cmd.Process.Kill() })
	defer stuck.Stop()
	for line := range h.lines {
		if rest, ok := strings.CutPrefix(line, "pid "); ok {
			if interp, err = strconv.Atoi(strings.TrimSpace(rest)); err != nil {
				return 0, nil, fmt.Errorf("bad pid line %q", line)
			}
		}
		if rest, ok := strings.CutPrefix(line, "pids "); ok {
			for _, f := range strings.Fields(rest) {
				n, err := strconv.Atoi(f)
				if err != nil {
					return 0, nil, fmt.Errorf("bad pids line %q", line)
				}
				spawned = append(spawned, n)
			}
		}
		if interp != 0 && len(spawned) == 5 && (!idle || line == "idle") {
			return interp, spawned, nil
		}
	}
	return 0, nil, fmt.Errorf("host ended without pid and pids lines (got pid %d, pids %v)", interp, spawned)
}

// kill SIGKILLs the host and reaps it.
func (h *host) kill() {
	_ = h.cmd.Process.Signal(syscall.SIGKILL)
	_ = h.cmd.Wait()
	for range h.lines {
	}
}

// When a host is SIGKILLed, in the middle of a cell or idle, its
// interpreter, the interpreter's reaper and everything the cell started
// (background, setsid, nohup, double-forked) end.
func TestHostKilled(t *testing.T) {
	testkit.Python(t)
	t.Cleanup(leakcheck.Watchdog(t, watchdogAfter))
	tests := []struct {
		kind, lang string
		busy       bool
	}{
		{"registry", "py", true}, {"registry", "py", false},
		{"registry", "sh", true}, {"registry", "sh", false},
		{"serve", "py", true}, {"serve", "py", false},
		{"serve", "sh", true}, {"serve", "sh", false},
		{"run", "py", true}, {"run", "sh", true},
	}
	for _, tc := range tests {
		name := fmt.Sprintf("%s %s %s", tc.kind, tc.lang, map[bool]string{true: "busy", false: "idle"}[tc.busy])
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			h := startHost(t, tc.kind, tc.lang, tc.busy, dir)
			interp, spawned, err := h.awaitPIDs(!tc.busy)
			if err != nil {
				h.kill()
				t.Fatalf("host: %v", err)
			}
			watched := append([]int{interp}, spawned...)
			if reaper, ok := leakcheck.Parent(interp); ok {
				watched = append(watched, reaper)
			}
			for _, pid := range watched {
				if leakcheck.Gone(pid, 0) {
					t.Fatalf("process %d not running before the host is killed", pid)
				}
			}
			before := len(leakcheck.InDir(dir))
			h.kill()
			killed := time.Now()
			for _, pid := range watched {
				if !leakcheck.Gone(pid, time.Until(killed.Add(hangBound))) {
					t.Errorf("process %d still ran %s after its host's SIGKILL", pid, hangBound)
				}
			}
			if left := leakcheck.GoneFromDir(dir, time.Until(killed.Add(hangBound))); len(left) > 0 {
				t.Errorf("processes in the cell's directory still ran %s after the host's SIGKILL: %q", hangBound, left)
			}
			t.Logf("%d processes in the cell's directory before the kill; all gone %v after it", before, time.Since(killed))
			if t.Failed() { // so one failure does not leave sleeps behind
				for _, pid := range watched {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		})
	}
}
