package tests

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/tidwall/gjson"
	"golang.org/x/sys/unix"
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
