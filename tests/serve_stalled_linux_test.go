package tests

import (
	"bufio"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/testkit"
)

// A client that stopped reading serve's stdout while a cell floods it
// (hung, or busy elsewhere) held serve for ever: a first signal drains,
// which waits for that client as it must, but the second, which ends the
// work at once, waited too, in the kill of the interpreter whose frames
// could not be written. serve now gives up a reply the client has not
// taken within 5 s once the second signal came, and exits 130, leaving no
// interpreter. On a pipe, and on a Unix socket as Node's child_process
// gives, which serve wrote with blocking writes no bound could end.
func TestServeSecondSignalWithAStalledClient(t *testing.T) {
	for _, kind := range []string{"pipe", "socket"} {
		t.Run(kind, func(t *testing.T) { serveSecondSignalWithAStalledClient(t, kind) })
	}
}

func serveSecondSignalWithAStalledClient(t *testing.T, kind string) {
	cmd := command(t, "serve", "--grace", "10m")
	cmd.Env = append(cmd.Env, "EVALHOST_DEBUG=1") // logs "stopping on signal"
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, stdout := stdoutPair(t, kind)
	cmd.Stdout = stdout // kept open: its poll says when the output is full
	w := startWatched(t, cmd)
	log := w.log
	send := func(id, code string) {
		req, _ := json.Marshal(map[string]any{"op": "eval", "id": id, "cells": []any{map[string]any{"code": code, "timeout": 600}}})
		if _, err := stdin.Write(append(req, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	// The client reads the reply to a first request, which starts the
	// session (its ready line has the interpreter's pid), and then nothing:
	// its last read comes before the flood, as WaitNoRoom needs. A read
	// after serve's write had begun to wait (the flood's first lines read
	// here) left it waiting with the socket's count short of its buffer.
	send("r", "pass")
	lines := bufio.NewReader(out)
	pid := 0
	for {
		line, err := lines.ReadBytes('\n')
		if err != nil {
			t.Fatalf("serve's stdout ended: %v; log:\n%s", err, log())
		}
		var l struct {
			Type, ID string
			Pid      int
		}
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if l.Type == "ready" {
			pid = l.Pid
		}
		if l.Type == "end" && l.ID == "r" {
			break
		}
	}
	if pid == 0 {
		t.Fatal("no ready line with the interpreter's pid")
	}
	send("f", "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: print('z' * 1000)")
	testkit.WaitNoRoom(t, stdout)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(log(), "stopping on signal"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("serve did not take the first signal; log:\n%s", log())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.exited:
		var ee *exec.ExitError
		if !errors.As(w.waitErr, &ee) || ee.ExitCode() != 130 {
			t.Errorf("serve ended %v after a second signal, want exit status 130; log:\n%s", w.waitErr, log())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not exit within 30 s of a second signal while its client read nothing; log:\n%s", log())
	}
	checkPidsGone(t, []int{pid})
}
