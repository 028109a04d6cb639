package tests

import (
	"strings"
	"testing"
)

// EVALHOST_DAEMON_MAX_SESSIONS sets how many idle sessions the background
// process a command starts keeps (a command's start took 16, and only
// `daemon serve --max-sessions`, by hand, took another): past it the least
// recently used one ends, and its next cell says why.
func TestDaemonMaxSessionsFromEnv(t *testing.T) {
	h := newDaemonHome(t)
	run := func(args ...string) (string, string, int) {
		cmd := h.cmd(args...)
		cmd.Env = append(cmd.Env, "EVALHOST_DAEMON_MAX_SESSIONS=2")
		return runCaptured(t, cmd, false)
	}
	for _, s := range []string{"a", "b", "c"} {
		if _, stderr, code := run("run", "--session", s, "-c", "x = 1"); code != 0 {
			t.Fatal(stderr)
		}
	}
	_, stderr, code := run("run", "--session", "a", "-c", "print(x)")
	if code != 1 || !strings.Contains(stderr, "[state lost: session a's py interpreter was closed to keep at most 2 sessions open") {
		t.Fatalf("session a's next cell: exit %d, stderr %q; want its state gone, a third session past the cap of 2", code, stderr)
	}
	if out, stderr, code := run("run", "--session", "c", "-c", "print(x)"); code != 0 || out != "1\n" {
		t.Fatalf("session c: exit %d, stdout %q, stderr %q; want its state kept", code, out, stderr)
	}
}

// A bad EVALHOST_DAEMON_MAX_SESSIONS is refused (exit 2) naming it and
// what it takes, before anything runs; it was ignored.
func TestDaemonMaxSessionsBadValue(t *testing.T) {
	h := newDaemonHome(t)
	for _, v := range []string{"0", "-3", "many", "2.5", "1e3", "100000"} {
		t.Run(v, func(t *testing.T) {
			cmd := h.cmd("run", "--session", "s", "-c", "print('ran')")
			cmd.Env = append(cmd.Env, "EVALHOST_DAEMON_MAX_SESSIONS="+v)
			out, stderr, code := runCaptured(t, cmd, false)
			want := `evalhost run: EVALHOST_DAEMON_MAX_SESSIONS="` + v + `": want a whole number of sessions from 1 to 1024`
			if code != 2 || out != "" || !strings.Contains(stderr, want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, stderr, want)
			}
		})
	}
}
