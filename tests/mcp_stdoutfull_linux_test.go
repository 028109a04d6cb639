package tests

import (
	"bufio"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A SIGTERM ends `evalhost mcp` even while its stdout is full: a client
// that stopped reading held a write of the server's for ever, and the
// shutdown waited for it (until SIGKILL).
func TestMCPSigtermWithStdoutFull(t *testing.T) {
	cmd := command(t, "mcp")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd.Stdout = w
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Close() // kept open: its poll says when the pipe is full
	t.Cleanup(func() { cmd.Process.Kill() })
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if _, err := bufio.NewReader(r).ReadString('\n'); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for id := 1; id <= 200; id++ {
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"eval","arguments":{"cells":[{"code":"print('x' * 60000)"}]}}}`+"\n", id)
	}
	// the event: the pipe has no room left (poll gives no POLLOUT on a
	// write end, the test's own), so the server's next write waits
	deadline := time.Now().Add(30 * time.Second)
	for {
		fds := []unix.PollFd{{Fd: int32(w.Fd()), Events: unix.POLLOUT}}
		n, err := unix.Poll(fds, 0)
		if err != nil && err != unix.EINTR {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server's stdout never filled")
		}
		time.Sleep(10 * time.Millisecond)
	}
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
}
