package tests

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// serve and mcp whose stdout cannot be written (a full disk under
// `> file`; /dev/full) say so and exit 1, ending their work at once: they
// went on in silence, every answer lost, and exited 0. stdin is left open,
// a cell running, so the end is theirs, not the input's.
func TestServerOutputFailureIsSaid(t *testing.T) {
	const sleeper = "import time\ntime.sleep(600)"
	for _, tc := range []struct {
		name, first string
		args        []string
	}{
		{"serve", fmt.Sprintf(`{"op":"eval","id":"1","cells":[{"language":"py","code":%q}]}`, sleeper), []string{"serve"}},
		{"mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, []string{"mcp"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
			if err != nil {
				t.Skipf("no /dev/full: %v", err)
			}
			defer full.Close()
			cmd := command(t, tc.args...)
			cmd.Stdout = full
			var stderr strings.Builder
			cmd.Stderr = &stderr
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); stdin.Close() })
			fmt.Fprintln(stdin, tc.first)
			want := "evalhost " + tc.name + ": cannot write stdout: no space left on device; no answer could reach the client"
			if code := exitCodeOf(t, cmd); code != 1 || !strings.HasPrefix(stderr.String(), want) {
				t.Fatalf("exit %d, stderr %q; want 1 and a line starting %q", code, stderr.String(), want)
			}
		})
	}
}
