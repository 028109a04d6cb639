package tests

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"regexp"
	"strconv"
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
	req, _ := json.Marshal(map[string]any{"op": "eval", "id": "f", "cells": []any{map[string]any{
		"code": "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: print('z' * 1000)", "timeout": 600}}})
	if _, err := stdin.Write(append(req, '\n')); err != nil {
		t.Fatal(err)
	}
	// Read up to the cell's first output, then stop reading.
	var seen []byte
	buf := make([]byte, 1<<16)
	for !bytes.Contains(seen, []byte(`"type":"stdout"`)) {
		n, err := out.Read(buf)
		if err != nil {
			t.Fatalf("serve's stdout ended: %v; log:\n%s", err, log())
		}
		seen = append(seen, buf[:n]...)
	}
	m := regexp.MustCompile(`"type":"ready"[^\n]*"pid":([0-9]+)`).FindSubmatch(seen)
	if m == nil {
		t.Fatalf("no ready line with the interpreter's pid in %.2000s", seen)
	}
	pid, _ := strconv.Atoi(string(m[1]))
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
