package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/sessions"
)

// serveHome runs Serve in this process for a temporary home and returns
// its paths and a function that waits for Serve's error.
func serveHome(t *testing.T, idle time.Duration) (Paths, func() error) {
	t.Helper()
	return serveAt(t, t.TempDir(), idle)
}

// serveAt is serveHome for a given home.
func serveAt(t *testing.T, home string, idle time.Duration) (Paths, func() error) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	paths := PathsFor(home)
	return paths, serveConfig(t, Config{Paths: paths, Version: "test", Idle: idle,
		Sessions: sessions.Config{Home: filepath.Dir(paths.Dir)}})
}

// serveConfig runs Serve with cfg (its Ready set here) until the test
// ends, and returns a function that waits for its error.
func serveConfig(t *testing.T, cfg Config) func() error {
	t.Helper()
	wait, _ := serveEnding(t, cfg)
	return wait
}

// serveEnding is serveConfig that also returns a channel closed when
// Serve has returned, for a test to select on.
func serveEnding(t *testing.T, cfg Config) (func() error, <-chan struct{}) {
	t.Helper()
	ready := make(chan struct{})
	ended := make(chan struct{})
	var got error
	ctx, cancel := context.WithCancel(context.Background())
	cfg.Ready = func() { close(ready) }
	go func() {
		got = Serve(ctx, cfg)
		close(ended)
	}()
	select {
	case <-ready:
	case <-ended:
		t.Fatalf("Serve: %v", got)
	}
	wait := func() error {
		<-ended
		return got
	}
	t.Cleanup(func() { cancel(); wait() })
	return wait, ended
}

// eval sends one sh cell on a fresh connection and returns its stdout.
func eval(t *testing.T, paths Paths, session, code string) string {
	t.Helper()
	return evalIn(t, paths, session, filepath.Dir(paths.Dir), code)
}

// evalIn is eval in the session of that name in cwd.
func evalIn(t *testing.T, paths Paths, session, cwd, code string) string {
	t.Helper()
	c, err := Dial(paths)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := map[string]any{"op": "eval", "id": "run", "session": session, "cwd": cwd,
		"cells": []map[string]string{{"language": "sh", "code": code}}}
	if err := c.Send(req); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for {
		line, err := c.Next()
		if err != nil {
			t.Fatalf("the connection ended before the end line: %v", err)
		}
		switch gjson.GetBytes(line, "type").String() {
		case "stdout":
			out.WriteString(gjson.GetBytes(line, "data").String())
		case "end":
			if st := gjson.GetBytes(line, "status").String(); st != "ok" {
				t.Fatalf("status %s: %s", st, out.String())
			}
			return out.String()
		case "request_error":
			t.Fatalf("refused: %s", line)
		}
	}
}

func TestServeKeepsSessionsAcrossConnections(t *testing.T) {
	leakcheck.Check(t, leakcheck.Options{FDs: true})
	paths, wait := serveHome(t, time.Hour)
	eval(t, paths, "s", "X=from-the-first")
	if got := eval(t, paths, "s", "echo $X"); got != "from-the-first\n" {
		t.Fatalf("second connection saw %q", got)
	}
	st, ok := readState(paths.State)
	if !ok || st.PID != os.Getpid() || fmt.Sprint(st.Sessions) != "[s]" {
		t.Fatalf("state %+v (ok %v): want this pid and session s", st, ok)
	}
	if _, err := Stop(paths); err != nil {
		t.Fatal(err)
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{paths.Socket, paths.State} {
		if _, err := os.Lstat(f); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is left after a clean stop: %v", f, err)
		}
	}
}

// A home too long for a socket path keeps its socket in its own 0700
// directory, named through /proc/self/fd: a shared temp dir, where the
// socket went before, let another user block the process by creating
// evalhost-<uid> there first.
func TestLongHomeKeepsItsSocket(t *testing.T) {
	if !longSocketPaths {
		t.Skip("no /proc/self/fd here: a long socket path moves to the temp dir")
	}
	leakcheck.Check(t, leakcheck.Options{FDs: true})
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	if err := os.WriteFile(filepath.Join(tmp, fmt.Sprintf("evalhost-%d", os.Getuid())), nil, 0o644); err != nil {
		t.Fatal(err) // what another user could plant in /tmp
	}
	home := filepath.Join(t.TempDir(), strings.Repeat("h", 120))
	paths, wait := serveAt(t, home, time.Hour)
	if want := filepath.Join(home, "daemon", "sock"); paths.Socket != want {
		t.Fatalf("socket at %s, want %s", paths.Socket, want)
	}
	if got := eval(t, paths, "s", "echo hi"); got != "hi\n" {
		t.Fatalf("eval through the long path: %q", got)
	}
	fi, err := os.Lstat(paths.Socket)
	if err != nil || fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %s: %v, %v; want a socket of mode 0600", paths.Socket, fi, err)
	}
	if _, err := Stop(paths); err != nil {
		t.Fatal(err)
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(paths.Socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket is left after a clean stop: %v", err)
	}
	if _, err := Dial(paths); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("Dial after the stop: %v, want ErrNotRunning", err)
	}
}

func TestServeEndsWhenIdle(t *testing.T) {
	leakcheck.Check(t, leakcheck.Options{})
	paths, wait := serveHome(t, 50*time.Millisecond)
	eval(t, paths, "s", "true")
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := Dial(paths); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("Dial after the idle end: %v, want ErrNotRunning", err)
	}
}

func TestServeRefusesSecond(t *testing.T) {
	paths, _ := serveHome(t, time.Hour)
	err := Serve(context.Background(), Config{Paths: paths, Version: "test"})
	if !errors.Is(err, ErrRunning) {
		t.Fatalf("second Serve: %v, want ErrRunning", err)
	}
}

// Two connections may both call their request "run"; each gets its own
// replies, and ops name requests of their own connection only.
func TestServeRequestIDsPerConnection(t *testing.T) {
	paths, _ := serveHome(t, time.Hour)
	c, err := Dial(paths)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Send(map[string]any{"op": "eval", "id": "run", "session": "a", "cwd": t.TempDir(),
		"cells": []map[string]string{{"language": "sh", "code": "echo started; sleep 30"}}})
	for {
		line, err := c.Next()
		if err != nil {
			t.Fatal(err)
		}
		if gjson.GetBytes(line, "type").String() == "stdout" {
			break
		}
	}
	if got := eval(t, paths, "b", "echo other"); got != "other\n" {
		t.Fatalf("the other connection's run printed %q", got)
	}
	c.Send(map[string]string{"op": "cancel", "id": "run"})
	for {
		line, err := c.Next()
		if err != nil {
			t.Fatal(err)
		}
		if gjson.GetBytes(line, "type").String() == "end" {
			var end struct{ Status string }
			json.Unmarshal(line, &end)
			if end.Status != "cancelled" {
				t.Fatalf("end %s, want cancelled", line)
			}
			return
		}
	}
}

// dialed is a connection to the process at paths, closed as the test ends.
func dialed(t *testing.T, paths Paths) *Client {
	t.Helper()
	c, err := Dial(paths)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readUntil reads c's lines until one of type typ, returning it.
func readUntil(t *testing.T, c *Client, typ string) []byte {
	t.Helper()
	for {
		line, err := c.Next()
		if err != nil {
			t.Fatalf("waiting for %s: %v", typ, err)
		}
		if gjson.GetBytes(line, "type").String() == typ {
			return append([]byte(nil), line...)
		}
	}
}

// A kill for a request still queued behind another client's in the same
// session cancels it alone: it must not kill the running cell it waits for.
func TestKillOfQueuedRequestSparesTheRunningOne(t *testing.T) {
	paths, _ := serveHome(t, time.Hour)
	cwd := filepath.Dir(paths.Dir)
	a, b := dialed(t, paths), dialed(t, paths)
	// A's cell outlasts B's eval and kill by far; no cancel of A is needed,
	// so only B's kill could end it early.
	a.Send(map[string]any{"op": "eval", "id": "run", "session": "s", "cwd": cwd,
		"cells": []map[string]string{{"language": "sh", "code": "echo started; sleep 3; echo survived"}}})
	readUntil(t, a, "stdout")
	b.Send(map[string]any{"op": "eval", "id": "run", "session": "s", "cwd": cwd,
		"cells": []map[string]string{{"language": "sh", "code": "echo b"}}})
	b.Send(map[string]string{"op": OpKill, "id": "run"})
	if st := gjson.GetBytes(readUntil(t, b, "end"), "status").String(); st != "cancelled" {
		t.Fatalf("the queued request ended %s, want cancelled", st)
	}
	end := readUntil(t, a, "cell_end")
	out := gjson.GetBytes(end, "output.text").String()
	if gjson.GetBytes(end, "status").String() != "ok" || gjson.GetBytes(end, "retried").Bool() || out != "started\nsurvived\n" {
		t.Fatalf("the running cell ended %s; want ok, run once to its end: the queued request's kill must not reach it", end)
	}
}

// A running job keeps the process from ending when idle, and the job's end
// starts the idle clock again. The job, wait and jobs ops answer as
// serve's do.
func TestServeStaysWhileAJobRuns(t *testing.T) {
	leakcheck.Check(t, leakcheck.Options{})
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	paths := PathsFor(t.TempDir())
	kept := make(chan struct{}, 1)
	wait, ended := serveEnding(t, Config{Paths: paths, Version: "test", Idle: 50 * time.Millisecond,
		Sessions: sessions.Config{Home: filepath.Dir(paths.Dir)},
		IdleKept: func() {
			select {
			case kept <- struct{}{}:
			default:
			}
		}})
	flag := filepath.Join(t.TempDir(), "flag")
	ask := func(c *Client, req map[string]any, want string) []byte {
		t.Helper()
		if err := c.Send(req); err != nil {
			t.Fatal(err)
		}
		for {
			line, err := c.Next()
			if err != nil {
				t.Fatalf("the connection ended before a %s line: %v", want, err)
			}
			switch gjson.GetBytes(line, "type").String() {
			case want:
				return line
			case "request_error":
				t.Fatalf("refused: %s", line)
			}
		}
	}
	c, err := Dial(paths)
	if err != nil {
		t.Fatal(err)
	}
	end := ask(c, map[string]any{"op": "eval", "id": "run", "session": "j", "cwd": filepath.Dir(paths.Dir),
		"cells": []map[string]any{{"language": "sh", "timeout": 0.2, "onTimeout": "detach",
			"code": "while [ ! -e " + flag + " ]; do sleep 0.02; done; echo done"}}}, "end")
	if st := gjson.GetBytes(end, "status").String(); st != "detached" {
		t.Fatalf("end %s, want detached", end)
	}
	c.Close()
	// Idle passes twice with no client: only the job keeps the process.
	for range 2 {
		select {
		case <-kept:
		case <-ended:
			t.Fatalf("the process ended while its job ran: %v", wait())
		}
	}
	c, err = Dial(paths)
	if err != nil {
		t.Fatalf("the process ended while its job ran: %v", err)
	}
	defer c.Close()
	if j := ask(c, map[string]any{"op": "jobs", "id": "l"}, "jobs"); gjson.GetBytes(j, "jobs.0.state").String() != "running" {
		t.Fatalf("jobs: %s, want job-1 running", j)
	}
	if err := os.WriteFile(flag, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	j := ask(c, map[string]any{"op": "wait", "id": "w", "job": "job-1"}, "job")
	if gjson.GetBytes(j, "status").String() != "ok" || gjson.GetBytes(j, "result.output.text").String() != "done\n" {
		t.Fatalf("wait: %s, want ok with its output", j)
	}
	c.Close()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
}

// A process that ends leaves the names of its sessions, and why their
// state went, for the next one (lost.json), which takes them at its start.
func TestServeEndLeavesItsSessionsLost(t *testing.T) {
	leakcheck.Check(t, leakcheck.Options{})
	paths, wait := serveHome(t, 50*time.Millisecond)
	eval(t, paths, "s", "true")
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	dir := openRoot(t, paths.Dir)
	got := readLost(dir, "lost.json")
	if len(got) != 1 || got[0].Key.Session != "s" || fmt.Sprint(got[0].Languages) != "[sh]" ||
		!strings.Contains(got[0].Why, "50ms") {
		// The process's idle end, or its registry's idle close just before.
		t.Fatalf("lost.json after the idle end: %+v", got)
	}
	if taken := takeLost(dir, "lost.json"); len(taken) != 1 {
		t.Fatalf("takeLost = %+v", taken)
	}
	if _, err := os.Lstat(paths.Lost); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lost.json is left after it was taken: %v", err)
	}
}

// lost.json is the user's own file, but what is there must not stop a
// process's start or its successor's notices: a FIFO is not read (it would
// block), and the writer keeps the file under the reader's bound.
func TestLostFileBounded(t *testing.T) {
	tmp := t.TempDir()
	dir := openRoot(t, tmp)
	if err := syscall.Mkfifo(filepath.Join(tmp, "fifo.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := readLost(dir, "fifo.json"); got != nil {
		t.Fatalf("readLost(FIFO) = %+v", got)
	}
	long := strings.Repeat("n", 4200)
	var losses []sessions.Loss
	for i := range 300 {
		losses = append(losses, sessions.Loss{Key: sessions.Key{Session: fmt.Sprint(long, i)}, Languages: []string{"py"}, Why: "w"})
	}
	if err := addLost(dir, "lost.json", losses); err != nil {
		t.Fatal(err)
	}
	got := readLost(dir, "lost.json")
	if len(got) == 0 || got[len(got)-1].Key.Session != fmt.Sprint(long, 299) {
		t.Fatalf("read back %d entries; want the newest kept", len(got))
	}
}

func openRoot(t *testing.T, dir string) *os.Root {
	t.Helper()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}
