package daemon

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/evalhost/evalhost/serve"
	"github.com/evalhost/evalhost/sessions"
)

// A process of another build that a command finds only under the start
// lock (a command of that build started it while this one waited for the
// lock) is replaced there. It was closed and its lock waited for, as if
// it were dying: 30 s later the command failed with "holds ... lock but
// does not answer", and every command queued on the start lock behind it
// waited as long (seen with two builds' commands racing: 150 s).
func TestStartReplacesAnotherBuildFoundUnderTheLock(t *testing.T) {
	paths, wait := serveHome(t, time.Hour) // version "test"
	cfg := DialConfig{Paths: paths, Version: "new", Command: helperServe(paths, "new")}
	t.Cleanup(func() { Stop(paths) })
	done := make(chan struct{})
	var (
		c       *Client
		notices []string
		err     error
	)
	go func() { defer close(done); c, notices, err = start(context.Background(), cfg) }()
	<-done // waiting for it as if it were dying failed after lockWait: the error below
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	defer c.Close()
	if c.Hello.Version != "new" || len(notices) == 0 || !strings.Contains(notices[0], "replaced the background process of evalhost test") {
		t.Fatalf("start: version %q, notices %q; want the new build, saying it replaced the old", c.Hello.Version, notices)
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
}

// helperServe starts TestHelperServe: this test binary serving paths as a
// background process of version.
func helperServe(paths Paths, version string) func() *exec.Cmd {
	return func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperServe$")
		cmd.Env = append(os.Environ(), "EVALHOST_TEST_SERVE_HOME="+filepath.Dir(paths.Dir), "EVALHOST_TEST_SERVE_VERSION="+version)
		return cmd
	}
}

// TestHelperServe is helperServe's process.
func TestHelperServe(t *testing.T) {
	home := os.Getenv("EVALHOST_TEST_SERVE_HOME")
	if home == "" {
		t.Skip("a helper process")
	}
	err := Serve(context.Background(), Config{Paths: PathsFor(home), Version: os.Getenv("EVALHOST_TEST_SERVE_VERSION"), Idle: time.Minute,
		Sessions: sessions.Config{Home: home}, Ready: SignalReady})
	if err != nil {
		t.Fatal(err)
	}
}

// A stop that replaces the process for another build ("ifIdle") is
// refused while another client has a request in it, queued or running:
// the replacing command asked whether a cell ran, then stopped the
// process, and a cell sent in between was interrupted and its session's
// state lost (seen with two builds' commands racing). Once idle, the stop
// goes through.
func TestReplaceStopRefusedWhileAnotherClientRuns(t *testing.T) {
	paths, wait := serveHome(t, time.Hour)
	runner, err := Dial(paths)
	if err != nil {
		t.Fatal(err)
	}
	defer runner.Close()
	req := map[string]any{"op": "eval", "id": "run", "session": "s", "cwd": filepath.Dir(paths.Dir),
		"cells": []map[string]string{{"language": "sh", "code": "echo running; sleep 30"}}}
	if err := runner.Send(req); err != nil {
		t.Fatal(err)
	}
	for {
		line, err := runner.Next()
		if err != nil {
			t.Fatal(err)
		}
		if gjson.GetBytes(line, "type").String() == "stdout" {
			break
		}
	}
	replacer, err := Dial(paths)
	if err != nil {
		t.Fatal(err)
	}
	// The stop itself, as replace sends it after its question: the
	// question's answer may be old by then.
	if err := replacer.Send(map[string]any{"op": OpStop, "ifIdle": true}); err != nil {
		t.Fatal(err)
	}
	line, err := replacer.Next()
	if err != nil || gjson.GetBytes(line, "type").String() != "request_error" {
		t.Fatalf("stop ifIdle while another client's cell runs: %s (%v), want it refused", line, err)
	}
	replacer.Close()
	runner.Send(map[string]string{"op": "cancel", "id": "run"})
	for {
		line, err := runner.Next()
		if err != nil {
			t.Fatalf("the running request: %v (the process stopped under it)", err)
		}
		if gjson.GetBytes(line, "type").String() == "end" {
			break
		}
	}
	replacer, err = Dial(paths)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := replacer.replace(paths); err != nil {
		t.Fatalf("replace once idle: %v", err)
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
}

// An eval that comes once the process is ending (its idle end, a stop,
// after the client's hello) is refused as not run, which a client may
// send to the next process; it is not queued into a registry being
// closed.
func TestEvalWhileEndingIsNotRun(t *testing.T) {
	s := &Server{stopped: make(chan struct{}), conns: map[int]*conn{}}
	s.stop("ended itself after 30m0s without a client")
	var out strings.Builder
	c := &conn{srv: s, enc: serve.NewEncoder(&out), inflight: map[string]*flight{}}
	refusal := c.takeOff("run", &flight{})
	if refusal == nil {
		t.Fatal("an eval was taken by a process that is ending")
	}
	c.enc.Line(refusal)
	c.enc.Flush()
	line := []byte(strings.TrimSpace(out.String()))
	if !IsNotRun(line) || !strings.Contains(out.String(), "nothing of this request ran") || len(c.inflight) != 0 {
		t.Fatalf("refusal %s (in flight %d); want a not-run request_error", line, len(c.inflight))
	}
}
