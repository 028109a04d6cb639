package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestHelpCommand: "evalhost help COMMAND" shows COMMAND's help, as git
// help and go help do (it showed the overview), and an unknown COMMAND
// is refused as "evalhost COMMAND" is.
func TestHelpCommand(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string // in stdout or stderr
	}{
		{"help kill", []string{"help", "kill"}, exitOK, "Ends the session NAME"},
		{"help daemon", []string{"help", "daemon"}, exitOK, "Usage: evalhost daemon serve|stop|status"},
		{"help", []string{"help"}, exitOK, "Run \"evalhost COMMAND --help\""},
		{"help frob", []string{"help", "frob"}, exitUsage, `unknown command "frob"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := dispatch(tt.args, nil, &stdout, &stderr); code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, tt.code, stderr.String())
			}
			if out := stdout.String() + stderr.String(); !strings.Contains(out, tt.want) {
				t.Fatalf("output %q lacks %q", out, tt.want)
			}
		})
	}
}

// TestHelpGoesToStdout: a command's --help, asked for, is its output, as
// git's and go's: on stdout, exit 0, nothing on stderr, so
// `evalhost run --help | grep timeout` finds it. Most subcommands wrote it
// to stderr.
func TestHelpGoesToStdout(t *testing.T) {
	for _, args := range [][]string{
		{"--help"}, {"run", "--help"}, {"run", "-h"}, {"nb", "run", "--help"}, {"nb", "view", "--help"},
		{"nb", "--help"}, {"sessions", "--help"}, {"kill", "--help"}, {"jobs", "--help"},
		{"doctor", "--help"}, {"serve", "--help"}, {"mcp", "--help"}, {"daemon", "--help"},
		{"daemon", "stop", "--help"}, {"gateway", "--help"}, {"help", "run"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := dispatch(args, nil, &stdout, &stderr); code != exitOK {
				t.Fatalf("exit %d, want 0; stderr %s", code, stderr.String())
			}
			// stderr may hold EVALHOST_DEBUG's timeline (the suite sets it).
			if !strings.Contains(stdout.String(), "Usage") || strings.Contains(stderr.String(), "Usage") {
				t.Fatalf("stdout %.80q, stderr %.200q: want the help on stdout alone", stdout.String(), stderr.String())
			}
		})
	}
}
