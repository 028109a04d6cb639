package tests

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A bad value of a variable that sets a limit, a duration or a switch
// (EVALHOST_DEBUG, read by every command) is refused by every command that
// reads it (exit 2, nothing run), naming the variable,
// its value and what it takes: EVALHOST_DAEMON_IDLE and
// EVALHOST_ARTIFACTS_MAX only warned and fell back to their default, where
// EVALHOST_DAEMON_MAX_SESSIONS was refused. run --session refuses a bad
// value of those the background process reads as it starts, whether or
// not it has to start one, as it does MAX_SESSIONS's.
func TestBadEnvValueRefused(t *testing.T) {
	h := newDaemonHome(t)
	nb := filepath.Join(t.TempDir(), "n.ipynb")
	writeNotebook(t, nb, "print('ran')")
	// A PI_ARTIFACTS_DIR whose parent is missing: the first spill would
	// have made both (as root, /nonexistent/...), now it makes neither.
	noArtifacts := "PI_ARTIFACTS_DIR=" + filepath.Join(t.TempDir(), "nonexistent", "artifacts")
	cases := []struct {
		name, env string
		args      []string
		said      string // the command's prefix
	}{
		{"run, EVALHOST_ARTIFACTS_MAX", `EVALHOST_ARTIFACTS_MAX=big`, []string{"run", "-c", "print('ran')"}, "evalhost run"},
		{"run, EVALHOST_ARTIFACTS_MAX negative", `EVALHOST_ARTIFACTS_MAX=-1`, []string{"run", "-c", "print('ran')"}, "evalhost run"},
		{"run --session, EVALHOST_ARTIFACTS_MAX", `EVALHOST_ARTIFACTS_MAX=2X`, []string{"run", "--session", "s", "-c", "print('ran')"}, "evalhost run"},
		{"run --session, EVALHOST_DAEMON_IDLE", `EVALHOST_DAEMON_IDLE=bogus`, []string{"run", "--session", "s", "-c", "print('ran')"}, "evalhost run"},
		{"run --session, EVALHOST_DAEMON_IDLE a bare number", `EVALHOST_DAEMON_IDLE=600`, []string{"run", "--session", "s", "-c", "print('ran')"}, "evalhost run"},
		{"run --session, EVALHOST_DAEMON_IDLE zero", `EVALHOST_DAEMON_IDLE=0s`, []string{"run", "--session", "s", "-c", "print('ran')"}, "evalhost run"},
		{"run --session, EVALHOST_DAEMON_MAX_SESSIONS", `EVALHOST_DAEMON_MAX_SESSIONS=0`, []string{"run", "--session", "s", "-c", "print('ran')"}, "evalhost run"},
		{"nb run, EVALHOST_ARTIFACTS_MAX", `EVALHOST_ARTIFACTS_MAX=big`, []string{"nb", "run", nb, "-o", nb + ".out.ipynb"}, "evalhost nb run"},
		{"serve, EVALHOST_ARTIFACTS_MAX", `EVALHOST_ARTIFACTS_MAX=big`, []string{"serve"}, "evalhost serve"},
		{"mcp, EVALHOST_ARTIFACTS_MAX", `EVALHOST_ARTIFACTS_MAX=big`, []string{"mcp"}, "evalhost mcp"},
		// What a command starts: refused there too, unless its flag is
		// given (TestDaemonServeFlagWinsOverEnv); --idle bounds a run that
		// was not refused.
		{"daemon serve, EVALHOST_DAEMON_MAX_SESSIONS", `EVALHOST_DAEMON_MAX_SESSIONS=0`, []string{"daemon", "serve", "--idle", "1ms"}, "evalhost daemon serve"},
		{"daemon serve, EVALHOST_ARTIFACTS_MAX", `EVALHOST_ARTIFACTS_MAX=big`, []string{"daemon", "serve", "--idle", "1ms"}, "evalhost daemon serve"},
		// Refused up front, without a look at the network: it failed the
		// first Python cell (exit 1), after whatever ran before it.
		{"run, PI_PYTHON_GATEWAY_URL not a URL", "PI_PYTHON_GATEWAY_URL=not a url", []string{"run", "-c", "print('ran')"}, "evalhost run"},
		{"run, PI_PYTHON_GATEWAY_URL ftp", "PI_PYTHON_GATEWAY_URL=ftp://x", []string{"run", "-c", "print('ran')"}, "evalhost run"},
		{"run, PI_PYTHON_GATEWAY_URL no host", "PI_PYTHON_GATEWAY_URL=http://", []string{"run", "-c", "print('ran')"}, "evalhost run"},
		{"run, PI_PYTHON_GATEWAY_URL a space", "PI_PYTHON_GATEWAY_URL=http://127.0.0.1:8888/a b", []string{"run", "-c", "print('ran')"}, "evalhost run"},
		{"run, PI_PYTHON_GATEWAY_URL a query", "PI_PYTHON_GATEWAY_URL=http://127.0.0.1:8888/?token=x", []string{"run", "-c", "print('ran')"}, "evalhost run"},
		{"run --backend runner, PI_PYTHON_GATEWAY_URL", "PI_PYTHON_GATEWAY_URL=ftp://x", []string{"run", "--backend", "runner", "-c", "print('ran')"}, "evalhost run"},
		{"run a shell cell, PI_PYTHON_GATEWAY_URL", "PI_PYTHON_GATEWAY_URL=ftp://x", []string{"run", "--language", "sh", "-c", "echo ran"}, "evalhost run"},
		{"run --session, PI_PYTHON_GATEWAY_URL", "PI_PYTHON_GATEWAY_URL=not a url", []string{"run", "--session", "s", "-c", "print('ran')"}, "evalhost run"},
		{"nb run, PI_PYTHON_GATEWAY_URL", "PI_PYTHON_GATEWAY_URL=ftp://x", []string{"nb", "run", nb, "-o", nb + ".out.ipynb"}, "evalhost nb run"},
		{"serve, PI_PYTHON_GATEWAY_URL", "PI_PYTHON_GATEWAY_URL=http://", []string{"serve"}, "evalhost serve"},
		{"mcp, PI_PYTHON_GATEWAY_URL", "PI_PYTHON_GATEWAY_URL=http://", []string{"mcp"}, "evalhost mcp"},
		{"daemon serve, PI_PYTHON_GATEWAY_URL", "PI_PYTHON_GATEWAY_URL=not a url", []string{"daemon", "serve", "--idle", "1ms"}, "evalhost daemon serve"},
		{"run, PI_ARTIFACTS_DIR in a missing directory", noArtifacts, []string{"run", "-c", "print('ran')"}, "evalhost run"},
		{"run --session, PI_ARTIFACTS_DIR in a missing directory", noArtifacts, []string{"run", "--session", "s", "-c", "print('ran')"}, "evalhost run"},
		{"nb run, PI_ARTIFACTS_DIR in a missing directory", noArtifacts, []string{"nb", "run", nb, "-o", nb + ".out.ipynb"}, "evalhost nb run"},
		{"serve, PI_ARTIFACTS_DIR in a missing directory", noArtifacts, []string{"serve"}, "evalhost serve"},
		{"mcp, PI_ARTIFACTS_DIR in a missing directory", noArtifacts, []string{"mcp"}, "evalhost mcp"},
		{"daemon serve, PI_ARTIFACTS_DIR in a missing directory", noArtifacts, []string{"daemon", "serve", "--idle", "1ms"}, "evalhost daemon serve"},
		// A switch: on or off, nothing else (its other values were on).
		{"run, EVALHOST_DEBUG", `EVALHOST_DEBUG=maybe`, []string{"run", "-c", "print('ran')"}, "evalhost run"},
		{"run, EVALHOST_DEBUG a number", `EVALHOST_DEBUG=2`, []string{"run", "-c", "print('ran')"}, "evalhost run"},
		{"nb run, EVALHOST_DEBUG", `EVALHOST_DEBUG=maybe`, []string{"nb", "run", nb, "-o", nb + ".out.ipynb"}, "evalhost nb run"},
		{"serve, EVALHOST_DEBUG", `EVALHOST_DEBUG=enabled`, []string{"serve"}, "evalhost serve"},
		{"mcp, EVALHOST_DEBUG", `EVALHOST_DEBUG=y`, []string{"mcp"}, "evalhost mcp"},
		{"version, EVALHOST_DEBUG", `EVALHOST_DEBUG=maybe`, []string{"version"}, "evalhost version"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := h.cmd(c.args...)
			cmd.Env = append(cmd.Env, c.env)
			out, stderr, code := runCaptured(t, cmd, false)
			name, value, _ := strings.Cut(c.env, "=")
			want := c.said + ": " + name + `="` + value + `": want `
			if code != 2 || out != "" || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line %q…", code, out, stderr, want)
			}
			if name == "PI_ARTIFACTS_DIR" {
				if _, err := os.Lstat(filepath.Dir(value)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s was made: %v", filepath.Dir(value), err)
				}
			}
		})
	}
}

// EVALHOST_DEBUG is off at 0, false, no, off (any case) and empty, on at
// 1, true, yes, on: 0 turned it on, as any value but empty did. On, every
// command writes its timeline on stderr.
func TestDebugSwitch(t *testing.T) {
	for _, c := range []struct {
		value string
		on    bool
	}{
		{"1", true}, {"true", true}, {"YES", true}, {"On", true},
		{"0", false}, {"false", false}, {"No", false}, {"OFF", false}, {"", false},
	} {
		t.Run(fmt.Sprintf("%q", c.value), func(t *testing.T) {
			cmd := command(t, "version")
			cmd.Env = append(cmd.Env, "EVALHOST_DEBUG="+c.value)
			out, stderr, code := runCaptured(t, cmd, false)
			if code != 0 || !strings.HasPrefix(out, "evalhost ") {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
			}
			if on := strings.Contains(stderr, "evalhost: timeline"); on != c.on {
				t.Errorf("EVALHOST_DEBUG=%q: timeline written %v, want %v; stderr %q", c.value, on, c.on, stderr)
			}
		})
	}
}

// A flag given wins over its variable, which is then not read: a bad
// EVALHOST_DAEMON_MAX_SESSIONS refused `daemon serve --max-sessions 2`,
// and a bad EVALHOST_DAEMON_IDLE `daemon serve --idle 1ms`. Each runs and
// ends at its 1 ms idle time.
func TestDaemonServeFlagWinsOverEnv(t *testing.T) {
	for _, c := range []struct {
		name, env string
		args      []string
	}{
		{"--max-sessions", `EVALHOST_DAEMON_MAX_SESSIONS=0`, []string{"daemon", "serve", "--max-sessions", "2", "--idle", "1ms"}},
		{"--idle", `EVALHOST_DAEMON_IDLE=bogus`, []string{"daemon", "serve", "--idle", "1ms"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newDaemonHome(t)
			cmd := h.cmd(c.args...)
			cmd.Env = append(cmd.Env, c.env)
			out, stderr, code := runCaptured(t, cmd, false)
			if code != 0 || out != "" || strings.Contains(stderr, "want ") {
				t.Errorf("%s: exit %d, stdout %q, stderr %q; want it to serve and end, exit 0", c.env, code, out, stderr)
			}
		})
	}
}
