package tests

import (
	"bufio"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/evalhost/evalhost/internal/testkit"
)

// A SIGTERM ends `evalhost mcp` even while its stdout is full: a client
// that stopped reading held a write of the server's for ever, and the
// shutdown waited for it (until SIGKILL). On a pipe, and on a Unix socket
// as Node's child_process gives, which the server wrote with blocking
// writes nothing could end.
func TestMCPSigtermWithStdoutFull(t *testing.T) {
	for _, kind := range []string{"pipe", "socket"} {
		t.Run(kind, func(t *testing.T) {
			cmd := command(t, "mcp")
			r, w := stdoutPair(t, kind)
			cmd.Stdout = w // kept open: its poll says when the output is full
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill() })
			fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
			if _, err := bufio.NewReader(r).ReadString('\n'); err != nil {
				t.Fatalf("initialize: %v", err)
			}
			fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			for id := 1; id <= 200; id++ {
				fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"eval","arguments":{"cells":[{"code":"print('x' * 60000)"}]}}}`+"\n", id)
			}
			// the event: the output has no room left, so the server's next
			// write waits
			testkit.WaitNoRoom(t, w)
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("exit: %v, want 0", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("evalhost mcp did not end after SIGTERM with its stdout full")
			}
		})
	}
}

// stdoutPair is a pipe, or a Unix stream socket pair, for a command's
// stdout: r is the client's end, w the command's; both close when the
// test ends.
func stdoutPair(t *testing.T, kind string) (r, w *os.File) {
	t.Helper()
	if kind == "pipe" {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r, w = pr, pw
	} else {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		r, w = os.NewFile(uintptr(fds[0]), "client"), os.NewFile(uintptr(fds[1]), "stdout")
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}
