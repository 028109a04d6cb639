package main

import (
	"bytes"
	"strings"
	"testing"
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
