package tests

import (
	"bufio"
	"os"
	"strings"
	"syscall"
	"testing"
)

// run, serve and mcp grow a pipe they write to, so bulk output (a cell's
// stream lines, a large result) does not wait for the reader at every 64
// KiB.
func TestCommandsGrowTheirOutputPipe(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		input string
	}{
		{"run", []string{"run", "-c", "print('hi')"}, ""},
		{"serve", []string{"serve"}, ""},
		{"mcp", []string{"mcp"}, `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			cmd := command(t, tc.args...)
			cmd.Stdout = w
			cmd.Stdin = strings.NewReader(tc.input)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			w.Close()
			// Its first line: by then it has set up its output.
			if _, err := bufio.NewReader(r).ReadString('\n'); err != nil {
				t.Fatalf("%s wrote no line: %v", tc.name, err)
			}
			size, _, errno := syscall.Syscall(syscall.SYS_FCNTL, r.Fd(), syscall.F_GETPIPE_SZ, 0)
			if errno != 0 {
				t.Fatal(errno)
			}
			if size < 1<<20 {
				t.Errorf("%s's output pipe holds %d bytes, want at least 1 MiB", tc.name, size)
			}
			r.Close() // the rest is not read
			if err := cmd.Wait(); err != nil && tc.name == "run" {
				t.Fatalf("run: %v", err)
			}
		})
	}
}
