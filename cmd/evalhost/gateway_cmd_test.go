package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestGatewayUsageSaysWhatWasWrong: an unknown gateway command or a stray
// argument is named before the usage (it printed the usage alone), exit 2.
func TestGatewayUsageSaysWhatWasWrong(t *testing.T) {
	t.Setenv("EVALHOST_HOME", t.TempDir())
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown command", []string{"frob"}, `evalhost gateway: unknown command "frob"`},
		{"stray argument", []string{"status", "now"}, `evalhost gateway status: unexpected argument "now"`},
		{"no command", nil, "Usage: evalhost gateway"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := gatewayMain(tt.args, nil, &bytes.Buffer{}, &stderr, nil); code != exitUsage {
				t.Fatalf("exit %d, want %d", code, exitUsage)
			}
			if !strings.HasPrefix(stderr.String(), tt.want) {
				t.Fatalf("stderr %q, want it to start with %q", stderr.String(), tt.want)
			}
		})
	}
}
