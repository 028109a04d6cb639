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
