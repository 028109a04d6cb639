package tests

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/tidwall/gjson"
	"golang.org/x/sys/unix"

	"github.com/evalhost/evalhost/internal/testkit"
)

// One Unix socket as serve's stdin and stdout (socat's EXEC, inetd,
// systemd's Accept=yes) carries every reply to a client that reads only
// later: serve made the socket non-blocking to read its requests (the
// flag is the open file's, so stdout's too), and its writes of a full
// socket failed with EAGAIN, each losing its line, the cell's output and
// its end among them, silently. The cell writes until the pipe to serve
// stays full (serve waits for the client), or 64 MiB, then tells the
// test, which reads only then, to the end.
func TestServeOneSocketAsStdinAndStdout(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	client, theirs := os.NewFile(uintptr(fds[0]), "client"), os.NewFile(uintptr(fds[1]), "serve's stdio")
	defer client.Close()
	fifo := filepath.Join(t.TempDir(), "written")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := command(t, "serve", "--progress", "0")
	cmd.Stdin, cmd.Stdout = theirs, theirs
	w := startWatched(t, cmd)
	theirs.Close()
	code := fmt.Sprintf(`import os
os.set_blocking(1, False)
total = 0
while total < 64 << 20:
    try:
        total += os.write(1, b"x" * 65536)
    except BlockingIOError:
        break
os.set_blocking(1, True)
with open(%q, "w") as f:
    f.write(str(total))`, fifo)
	if _, err := fmt.Fprintln(client, jsonLine(map[string]any{"op": "eval", "id": "r", "cells": []any{py(code)}})); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(fifo) // the cell wrote all it will
	if err != nil {
		t.Fatal(err)
	}
	total, _ := strconv.Atoi(string(raw))
	// The end of the requests: serve drains this one and exits, closing
	// its end, so what it lost ends the reading too.
	if err := unix.Shutdown(int(client.Fd()), unix.SHUT_WR); err != nil {
		t.Fatal(err)
	}
	got, status := 0, ""
	sc := bufio.NewScanner(client)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		line := gjson.ParseBytes(sc.Bytes())
		switch line.Get("type").String() {
		case "stdout":
			got += len(line.Get("data").String())
		case "end":
			status = line.Get("status").String()
		}
	}
	if got != total || status != "ok" {
		t.Errorf("the client read %d bytes of the cell's %d and the end %q (want ok); serve's log:\n%s", got, total, status, w.log())
	}
	<-w.exited
	if w.waitErr != nil {
		t.Errorf("serve exited %v, want 0; log:\n%s", w.waitErr, w.log())
	}
}

// One socket as serve's stdin, stdout and stderr too (socat's EXEC with
// stderr, systemd's StandardError=socket, inetd): a line serve logs while
// the client reads slowly reaches it. Serve made the socket non-blocking to
// read its requests, and os.Stderr's plain write of a full socket failed
// with EAGAIN, losing the line (the second signal's here: logged, and the
// work cut, while the client took nothing). The test reads once the cut
// killed the interpreter, so after serve wrote, or began to write, the line.
func TestServeOneSocketAsStdinStdoutAndStderr(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	client, theirs := os.NewFile(uintptr(fds[0]), "client"), os.NewFile(uintptr(fds[1]), "serve's stdio")
	defer client.Close()
	fifo := filepath.Join(t.TempDir(), "written")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := command(t, "serve", "--progress", "0")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = theirs, theirs, theirs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	defer func() {
		_ = cmd.Process.Kill() // not once it exited: waited for
		<-exited
	}()
	defer theirs.Close() // kept until serve's end of the socket is full
	// The cell fills the pipe to serve, so serve's socket is full and its
	// write of the cell's output waits for the client.
	code := fmt.Sprintf(`import os
os.set_blocking(1, False)
total = 0
while total < 64 << 20:
    try:
        total += os.write(1, b"x" * 65536)
    except BlockingIOError:
        break
os.set_blocking(1, True)
with open(%q, "w") as f:
    f.write(str(os.getpid()))`, fifo)
	if _, err := fmt.Fprintln(client, jsonLine(map[string]any{"op": "eval", "id": "r", "cells": []any{py(code)}})); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(fifo)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(raw))
	testkit.WaitNoRoom(t, theirs) // serve's relay of the cell's output filled it
	theirs.Close()                // now the client sees the end of serve's
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("the interpreter %d: %v", pid, err)
	}
	defer unix.Close(pidfd)
	// Two signals, of two kinds so that neither is merged into the other.
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
	}
	for { // the second signal cut the work: the interpreter ends
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}, -1)
		if n == 1 {
			break
		}
		if err != nil && err != unix.EINTR {
			t.Fatal(err)
		}
	}
	var logged []string
	sc := bufio.NewScanner(client)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if line := sc.Text(); !strings.HasPrefix(line, "{") || !strings.HasSuffix(line, "}") {
			logged = append(logged, line[:min(len(line), 200)]) // or a reply line it tore
		}
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "second signal: ending every request at once") {
		t.Errorf("serve's log lines on the socket: %q; want the second signal's", logged)
	}
	<-exited
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("serve exited %d, want 130 (a second signal's)", code)
	}
}
