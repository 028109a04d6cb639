package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Detached jobs (run --detach, jobs) through the background process.

// waitForFlag is a cell that prints "started", then runs until the file
// flag exists and prints "done": a job a test ends by an event, not a
// sleep.
func waitForFlag(flag string) string {
	return fmt.Sprintf("import os, time\nprint('started', flush=True)\nwhile not os.path.exists(%q): time.sleep(0.02)\nprint('done')", flag)
}

// jobJSON is `evalhost jobs ARGS --json`'s one line.
type jobJSON struct {
	Job     string `json:"job"`
	Session string `json:"session"`
	State   string `json:"state"`
	Status  string `json:"status"`
	Message string `json:"message"`
	Result  *struct {
		Output struct {
			Text string `json:"text"`
		} `json:"output"`
	} `json:"result"`
}

func (h *daemonHome) job(args ...string) jobJSON {
	h.t.Helper()
	out, stderr, code := h.run(append(append([]string{"jobs"}, args...), "--json")...)
	var j jobJSON
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		h.t.Fatalf("jobs %v: exit %d, stdout %q (%v), stderr %s", args, code, out, err, stderr)
	}
	// As run's: a job that ended badly fails the command (jobs --wait &&
	// deploy); a running or stopped one does not. A cancelled one was
	// stopped by another command (jobs --stop, kill), not by a Ctrl-C of
	// this one: a failure (1), not 130.
	want := map[string]int{"ok": 0, "detached": 0, "timeout": 124}[j.Status]
	if _, known := map[string]bool{"ok": true, "detached": true, "timeout": true}[j.Status]; !known {
		want = 1
	}
	if j.State == "running" || slices.Contains(args, "--stop") {
		want = 0
	}
	if code != want {
		h.t.Fatalf("jobs %v: exit %d for a job %s %s, want %d; stderr %s", args, code, j.State, j.Status, want, stderr)
	}
	return j
}

// A cell of run --session --detach that outlives its timeout goes on as a
// job: the command ends 0 naming it, evalhost jobs lists it, its session
// refuses other cells meanwhile, and --wait gives its end and output.
func TestDaemonDetachedJob(t *testing.T) {
	h := newDaemonHome(t)
	if _, stderr, code := h.run("run", "--detach", "-c", "1"); code != 2 || !strings.Contains(stderr, "--detach needs --session") {
		t.Fatalf("--detach without --session: exit %d, stderr %s", code, stderr)
	}
	flag := filepath.Join(h.home, "flag")
	out, stderr, code := h.run("run", "--session", "j", "--timeout", "1", "--detach", "-c", waitForFlag(flag), "-c", "print('later')")
	if code != 0 || out != "started\n" || !strings.Contains(stderr, `"evalhost jobs job-1" shows its output`) {
		t.Fatalf("detach: exit %d, stdout %q, stderr %s", code, out, stderr)
	}
	if !strings.Contains(stderr, "[cell 2 was not run: job-1 holds the session until it ends]") {
		t.Errorf("detach: stderr %s; want it to say cell 2 was not run", stderr)
	}
	out, _, _ = h.run("jobs")
	if !regexp.MustCompile(`(?m)^job-1\s+j\s+detached\s`).MatchString(out) {
		t.Errorf("evalhost jobs:\n%s\nwant job-1 of session j, detached", out)
	}
	out, _, _ = h.run("sessions")
	if !regexp.MustCompile(`(?m)^j\s.*\sjob-1\s`).MatchString(out) {
		t.Errorf("evalhost sessions:\n%s\nwant session j busy with job-1", out)
	}
	if j := h.job("job-1"); j.State != "running" || j.Session != "j" {
		t.Errorf("jobs job-1: %+v, want running in session j", j)
	}
	if _, stderr, code := h.run("run", "--session", "j", "-c", "1"); code != 1 || !strings.Contains(stderr, "busy: job job-1") {
		t.Errorf("a cell for the job's session: exit %d, stderr %s; want it refused, naming the job", code, stderr)
	}
	if err := os.WriteFile(flag, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	j := h.job("--wait", "job-1")
	if j.State != "done" || j.Status != "ok" || j.Result == nil || j.Result.Output.Text != "started\ndone\n" {
		t.Fatalf("jobs --wait job-1: %+v, want done, ok, with the whole output", j)
	}
	if out, stderr, code := h.run("jobs", "job-1", "--offset", "8"); code != 0 || out != "done\n" {
		t.Errorf("jobs job-1 --offset 8 (after %q): exit %d, stdout %q, stderr %s", "started\n", code, out, stderr)
	}
	if out, stderr, code := h.run("run", "--session", "j", "-c", "print('free')"); code != 0 || out != "free\n" {
		t.Errorf("after the job: exit %d, stdout %q, stderr %s", code, out, stderr)
	}
	if _, stderr, code := h.run("jobs", "job-9"); code != 1 || !strings.Contains(stderr, `no job "job-9"`) {
		t.Errorf("an unknown job: exit %d, stderr %s", code, stderr)
	}
}

// A job that something else ends says why: its session closed (evalhost
// kill) or its job stopped (jobs --stop). (A second Ctrl-C of a command in
// another cwd killed it too, "its session's interpreters were killed":
// TestDaemonSecondCtrlCSparesOtherCwds.)
func TestDaemonJobEndSaysWhy(t *testing.T) {
	tests := []struct {
		name string
		end  func(h *daemonHome)
		want string
	}{
		{"evalhost kill", func(h *daemonHome) {
			if out, stderr, code := h.run("kill", "k"); code != 0 {
				t.Fatalf("kill: exit %d %q %s", code, out, stderr)
			}
		}, "its session was closed"},
		{"jobs --stop", func(h *daemonHome) {
			if j := h.job("--stop", "job-1"); j.State != "done" {
				t.Fatalf("jobs --stop: %+v, want done", j)
			}
		}, "stopped by request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newDaemonHome(t)
			out, stderr, code := h.run("run", "--session", "k", "--timeout", "1", "--detach", "-c", waitForFlag(filepath.Join(h.home, "never")))
			if code != 0 || out != "started\n" {
				t.Fatalf("detach: exit %d, stdout %q, stderr %s", code, out, stderr)
			}
			tc.end(h)
			j := h.job("--wait", "job-1")
			if j.State != "done" || j.Status == "ok" || !strings.Contains(j.Message, tc.want) {
				t.Errorf("job-1 ended %s with %q, want a failure saying %q", j.Status, j.Message, tc.want)
			}
		})
	}
}

// A second Ctrl-C of a command kills its own session's interpreters, not
// those of the session of that name in another cwd: a job running there
// runs on (it was killed, "its session's interpreters were killed").
func TestDaemonSecondCtrlCSparesOtherCwds(t *testing.T) {
	h := newDaemonHome(t)
	out, stderr, code := h.run("run", "--session", "k", "--timeout", "1", "--detach", "-c", waitForFlag(filepath.Join(h.home, "never")))
	if code != 0 || out != "started\n" {
		t.Fatalf("detach: exit %d, stdout %q, stderr %s", code, out, stderr)
	}
	other := filepath.Join(h.home, "other")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := h.cmd("run", "--session", "k", "--cwd", other, "-c",
		"import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('running', flush=True)\nwhile True: pass")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() || sc.Text() != "running" {
		t.Fatalf("first line %q, want running", sc.Text())
	}
	go func() {
		for sc.Scan() {
		}
	}()
	cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(200 * time.Millisecond) // two separate Ctrl-Cs, as a person presses them
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitCodeOf(t, cmd); code != 130 {
		t.Fatalf("second Ctrl-C: exit %d", code)
	}
	if j := h.job("job-1"); j.State != "running" {
		t.Fatalf("job-1 in the other cwd's session after the second Ctrl-C: %+v, want it running", j)
	}
	h.job("--stop", "job-1")
}

// Job ids go on counting across background processes (a stop, a crash, the
// idle exit): after a restart, "jobs job-1" finds no job instead of the new
// process's first one.
func TestDaemonJobIDsOutliveTheProcess(t *testing.T) {
	h := newDaemonHome(t)
	detach := func(want string) {
		t.Helper()
		out, stderr, code := h.run("run", "--session", "j", "--timeout", "1", "--detach", "-c", waitForFlag(filepath.Join(h.home, "never")))
		if code != 0 || out != "started\n" || !strings.Contains(stderr, `"evalhost jobs `+want+`" shows its output`) {
			t.Fatalf("detach: exit %d, stdout %q, stderr %s; want %s", code, out, stderr, want)
		}
	}
	detach("job-1")
	if _, stderr, code := h.run("daemon", "stop"); code != 0 {
		t.Fatalf("daemon stop: exit %d, stderr %s", code, stderr)
	}
	detach("job-2")
	if _, stderr, code := h.run("jobs", "job-1"); code != 1 || !strings.Contains(stderr, `no job "job-1"`) {
		t.Errorf("jobs job-1 after the restart: exit %d, stderr %s; want no such job", code, stderr)
	}
}
