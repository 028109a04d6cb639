package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/daemon"
)

// TestDaemonCommandsRefuseStrayArgs: sessions, daemon stop and daemon
// status take no arguments; one given is refused as a usage error (exit 2)
// naming it, not ignored ("daemon status --json" printed text, exit 0 or 1;
// "daemon stop now" stopped it).
func TestDaemonCommandsRefuseStrayArgs(t *testing.T) {
	t.Setenv("EVALHOST_HOME", t.TempDir()) // no background process runs there
	sessions := func(args []string, stderr *bytes.Buffer) int {
		return sessionsMain(args, nil, &bytes.Buffer{}, stderr, nil)
	}
	daemon := func(args []string, stderr *bytes.Buffer) int {
		return daemonMain(args, nil, &bytes.Buffer{}, stderr, nil)
	}
	tests := []struct {
		name string
		main func(args []string, stderr *bytes.Buffer) int
		args []string
		code int
		want string // in stderr ("" none)
	}{
		{"sessions NAME", sessions, []string{"s"}, exitUsage, `got "s"`},
		{"sessions", sessions, nil, exitOK, ""},
		{"daemon status --json", daemon, []string{"status", "--json"}, exitUsage, `got "--json"`},
		{"daemon stop now", daemon, []string{"stop", "now"}, exitUsage, `got "now"`},
		{"daemon stop --help", daemon, []string{"stop", "--help"}, exitOK, ""},
		{"daemon stop", daemon, []string{"stop"}, exitOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := tt.main(tt.args, &stderr); code != tt.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Fatalf("stderr %q, want %q in it", stderr.String(), tt.want)
			}
		})
	}
}

// TestDaemonStatusNotRunning: with none running, status says so in
// daemon stop's words (exit 1), without the dial's os error ("lstat
// .../sock: no such file or directory").
func TestDaemonStatusNotRunning(t *testing.T) {
	t.Setenv("EVALHOST_HOME", t.TempDir())
	var stdout, stderr bytes.Buffer
	if code := daemonMain([]string{"status"}, nil, &stdout, &stderr, nil); code != exitFailed {
		t.Fatalf("exit %d, want %d", code, exitFailed)
	}
	if got, want := stdout.String(), "no evalhost background process is running\n"; got != want {
		t.Fatalf("stdout %q, want %q (stderr %q)", got, want, stderr.String())
	}
}

// TestIdleFromEnv: EVALHOST_DAEMON_IDLE set to what is not a positive
// duration is an error naming it, its value and what it takes, as a bad
// EVALHOST_DAEMON_MAX_SESSIONS is; it fell back to the default with a
// warning.
func TestIdleFromEnv(t *testing.T) {
	tests := []struct {
		name, v string
		want    time.Duration // 0: an error
	}{
		{"unset", "", daemon.DefaultIdle},
		{"a duration", "10m", 10 * time.Minute},
		{"not a duration", "bogus", 0},
		{"a bare number", "600", 0},
		{"zero", "0", 0},
		{"negative", "-5m", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := idleFromEnv(tt.v)
			if tt.want == 0 {
				if err == nil || !strings.Contains(err.Error(), `EVALHOST_DAEMON_IDLE="`+tt.v+`": want a duration such as 10m`) {
					t.Fatalf("idleFromEnv(%q) = %v, %v; want an error naming the value and what it takes", tt.v, d, err)
				}
				return
			}
			if d != tt.want || err != nil {
				t.Fatalf("idleFromEnv(%q) = %v, %v; want %v", tt.v, d, err, tt.want)
			}
		})
	}
}

// TestDaemonMaxSessions: EVALHOST_DAEMON_MAX_SESSIONS unset or empty is
// the default; a whole number from 1 to the bound is taken; anything else
// is an error naming the variable and its value.
func TestDaemonMaxSessions(t *testing.T) {
	tests := []struct {
		name, v string
		want    int // 0: an error
	}{
		{"empty", "", defaultDaemonSessions},
		{"one", "1", 1},
		{"the bound", "1024", 1024},
		{"past the bound", "1025", 0},
		{"zero", "0", 0},
		{"negative", "-1", 0},
		{"not a number", "lots", 0},
		{"spaced", " 8", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("EVALHOST_DAEMON_MAX_SESSIONS", tt.v)
			n, err := daemonMaxSessions()
			if tt.want == 0 {
				if err == nil || !strings.Contains(err.Error(), `EVALHOST_DAEMON_MAX_SESSIONS="`+tt.v+`"`) {
					t.Fatalf("got %d, %v; want an error naming the value", n, err)
				}
				return
			}
			if err != nil || n != tt.want {
				t.Fatalf("got %d, %v; want %d", n, err, tt.want)
			}
		})
	}
}

// daemon serve's flags win over their variables, which are then not read;
// a flag not given takes its variable, and refuses a bad one.
func TestDaemonServeFlags(t *testing.T) {
	for _, tc := range []struct {
		name      string
		args      []string
		idleEnv   string
		maxEnv    string
		wantIdle  time.Duration
		wantMax   int
		wantError string // "": none
	}{
		{"defaults", nil, "", "", daemon.DefaultIdle, defaultDaemonSessions, ""},
		{"variables", nil, "2h", "3", 2 * time.Hour, 3, ""},
		{"flags over variables", []string{"--idle", "5m", "--max-sessions", "7"}, "2h", "3", 5 * time.Minute, 7, ""},
		{"--max-sessions over a bad variable", []string{"--max-sessions", "2"}, "", "0", daemon.DefaultIdle, 2, ""},
		{"--idle over a bad variable", []string{"--idle", "1ms"}, "bogus", "", time.Millisecond, defaultDaemonSessions, ""},
		{"a bad variable without its flag", []string{"--idle", "1m"}, "", "0", 0, 0, `EVALHOST_DAEMON_MAX_SESSIONS="0"`},
		{"a bad idle variable without its flag", []string{"--max-sessions", "2"}, "600", "", 0, 0, `EVALHOST_DAEMON_IDLE="600"`},
		{"a bad flag", []string{"--max-sessions", "0"}, "", "4", 0, 0, "--max-sessions 0: want"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("EVALHOST_DAEMON_IDLE", tc.idleEnv)
			t.Setenv("EVALHOST_DAEMON_MAX_SESSIONS", tc.maxEnv)
			var f daemonServeFlags
			fs := newDaemonServeFlagSet(&f)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := f.complete(fs)
			switch {
			case tc.wantError != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Errorf("error %v; want one with %q", err, tc.wantError)
				}
			case err != nil:
				t.Errorf("error %v", err)
			case f.idle != tc.wantIdle || f.maxSessions != tc.wantMax:
				t.Errorf("idle %v, max sessions %d; want %v, %d", f.idle, f.maxSessions, tc.wantIdle, tc.wantMax)
			}
		})
	}
}
