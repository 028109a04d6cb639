package tests

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/testkit"
)

// A client that closes its end of the server's stdout while a cell runs
// and its stdin stays open (it stopped reading, or died leaving the pipe
// to a child): serve and mcp notice at once, with no write to make (serve
// without progress lines; mcp writes nothing until the call ends), end the
// running cell and every session, say why on stderr and exit 141, the
// status README gives a closed output, instead of dying of SIGPIPE at their
// next write (mcp's: once the cell had ended on its own). Over a pipe, and
// over a Unix socket as Node's child_process gives a child's stdio. A
// client that closed stdin first (it wrote its requests, then died) gets
// the same: mcp's end of input, which waits for the answers, sees the
// reader gone too, and exited 0 in silence when it saw it first.
func TestStdoutClosedEndsTheServer(t *testing.T) {
	for _, socket := range []bool{false, true} {
		for _, stdinEOF := range []bool{false, true} {
			kind := "pipe"
			if socket {
				kind = "socket"
			}
			if stdinEOF {
				kind += ", stdin at its end"
			}
			t.Run(kind, func(t *testing.T) { stdoutClosedEndsTheServer(t, socket, stdinEOF) })
		}
	}
}

func stdoutClosedEndsTheServer(t *testing.T, socket, stdinEOF bool) {
	for _, tc := range []struct {
		name    string
		args    []string
		hello   []string                   // the lines that make the server answer a first line
		request func(code string) []string // the lines that start the cell
		said    string
	}{
		{"serve", []string{"serve", "--progress", "0"}, nil, func(code string) []string {
			return []string{jsonLine(map[string]any{"op": "eval", "id": "r1", "session": "s", "cells": []any{py(code)}})}
		}, "evalhost serve: stdout was closed"},
		{"mcp", []string{"mcp"}, []string{
			`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		}, func(code string) []string {
			return []string{
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
				jsonLine(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
					"params": map[string]any{"name": "eval", "arguments": map[string]any{"cells": []any{map[string]any{"code": code}}}}}),
			}
		}, "evalhost mcp: stdout was closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The cell says it runs through a FIFO the test reads: its pid,
			// then it sleeps far past the test's bound.
			fifo := filepath.Join(t.TempDir(), "running")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			code := fmt.Sprintf("import os, time\nwith open(%q, 'w') as f: f.write(str(os.getpid()))\ntime.sleep(600)", fifo)
			cmd := command(t, tc.args...)
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close() // open until the server has ended
			stdout, stderr := startWithStdout(t, cmd, socket)
			var waitErr error
			exited := make(chan struct{})
			go func() { waitErr = cmd.Wait(); close(exited) }()
			t.Cleanup(func() {
				select {
				case <-exited:
				default:
					cmd.Process.Kill()
					<-exited
				}
			})
			// The first line (serve's hello, mcp's initialize result) says
			// the server is up; the rest is read by no one.
			send := func(lines []string) {
				for _, line := range lines {
					if _, err := fmt.Fprintln(stdin, line); err != nil {
						t.Fatal(err)
					}
				}
			}
			send(tc.hello)
			if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
				t.Fatalf("the server's first line: %v", err)
			}
			send(tc.request(code))
			raw, err := os.ReadFile(fifo)
			if err != nil {
				t.Fatal(err)
			}
			pid, err := strconv.Atoi(string(raw))
			if err != nil {
				t.Fatalf("the cell's pid %q: %v", raw, err)
			}
			if stdinEOF {
				stdin.Close()
			}
			stdout.Close() // the client stops reading; stdin stays open unless stdinEOF

			select {
			case <-exited:
			case <-time.After(60 * time.Second):
				t.Fatalf("%s still runs 60 s after its stdout was closed (the cell sleeps 600 s); stderr:\n%s", tc.name, stderr)
			}
			var ee *exec.ExitError
			switch {
			case !errors.As(waitErr, &ee):
				t.Errorf("%s exited %v, want status 141", tc.name, waitErr)
			case ee.Sys().(syscall.WaitStatus).Signaled():
				t.Errorf("%s died of %v, want exit status 141; stderr:\n%s", tc.name, ee.Sys().(syscall.WaitStatus).Signal(), stderr)
			case ee.ExitCode() != 141:
				t.Errorf("%s exited %d, want 141; stderr:\n%s", tc.name, ee.ExitCode(), stderr)
			}
			if !strings.Contains(stderr.String(), tc.said) {
				t.Errorf("stderr does not say why (%q):\n%s", tc.said, stderr)
			}
			if !leakcheck.Gone(pid, hangBound) {
				t.Errorf("the cell's interpreter (pid %d) outlived the server", pid)
			}
		})
	}
}

// startWithStdout starts cmd with a pipe (or a Unix socket) from its
// stdout and its stderr collected.
func startWithStdout(t *testing.T, cmd *exec.Cmd, socket bool) (io.ReadCloser, *strings.Builder) {
	t.Helper()
	if !socket {
		return testkit.StartPiped(t, cmd)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "client"), os.NewFile(uintptr(fds[1]), "stdout")
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = theirs, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	theirs.Close()
	return ours, &stderr
}

func jsonLine(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
