package main

import (
	"bytes"
	"io"
	"log/slog"
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

// gateway stop with none running says so (it said "stopped") and exits 0,
// as daemon stop does with no background process: the state asked for
// holds. With some, it names what it ended.
func TestStopWithNoneRunning(t *testing.T) {
	tests := []struct {
		name string
		main func(args []string, stdin io.Reader, stdout, stderr io.Writer, logger *slog.Logger) int
		want string
	}{
		{"daemon stop", daemonMain, "no evalhost background process is running\n"},
		{"gateway stop", gatewayMain, "no shared gateway is running\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("EVALHOST_HOME", t.TempDir())
			var stdout, stderr bytes.Buffer
			if code := tt.main([]string{"stop"}, nil, &stdout, &stderr, nil); code != exitOK || stdout.String() != tt.want || stderr.Len() != 0 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %d and %q", code, stdout.String(), stderr.String(), exitOK, tt.want)
			}
		})
	}
	for _, tt := range []struct {
		pids []int
		want string
	}{
		{nil, "no shared gateway is running"},
		{[]int{41}, "stopped the shared gateway (pid 41)"},
		{[]int{41, 43}, "stopped 2 shared gateways (pids 41, 43)"},
	} {
		if got := stoppedGateways(tt.pids); got != tt.want {
			t.Errorf("stoppedGateways(%v) = %q, want %q", tt.pids, got, tt.want)
		}
	}
}
