package daemon

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// holdUntilEnd makes the request of op and id wait, once the process has
// read it and before it is counted (an eval queued, a job's wait taken),
// until a stop's end has told its client and counted the rest; it returns
// a channel closed when the request got there. Where a slow interpreter
// resolution (a shim's probe) or the reader's pace left the window open.
func holdUntilEnd(t *testing.T, op, id string) <-chan struct{} {
	t.Helper()
	reached := make(chan struct{})
	beforeTaken = func(ctx context.Context, gotOp, gotID string) {
		if gotOp == op && gotID == id {
			close(reached)
			<-ctx.Done() // the connection's end: the stop has counted what it told
		}
	}
	t.Cleanup(func() { beforeTaken = func(context.Context, string, string) {} })
	return reached
}

// stopAndRead stops the process and reads c's lines to the connection's
// end, returning them; the process has ended when it returns.
func stopAndRead(t *testing.T, paths Paths, c *Client, wait func() error) (lines []string, end error) {
	t.Helper()
	stopped := make(chan error, 1)
	go func() { _, err := Stop(paths); stopped <- err }()
	for {
		line, err := c.Next()
		if err != nil {
			end = err
			break
		}
		lines = append(lines, string(line))
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	return lines, end
}

// lostSessions are the sessions the ended process left in lost.json, for
// the next one's cells to tell.
func lostSessions(t *testing.T, paths Paths) []string {
	t.Helper()
	var names []string
	for _, l := range readLost(openRoot(t, paths.Dir), filepath.Base(paths.Lost)) {
		names = append(names, l.Key.Session)
	}
	return names
}

// A stop after the process read an eval, before the eval had its place in
// its session's queue, tells its client (the stopping line, then the end
// of its cancelled cells), so lost.json must not keep the session for its
// next cell to tell again: the end counted only requests already queued,
// and `run --session` said "the state of session s is lost" twice. A
// session no client was told of is still kept, once.
func TestStopBeforeQueueToldOnce(t *testing.T) {
	paths, wait := serveHome(t, time.Hour)
	eval(t, paths, "s", "x=1")
	eval(t, paths, "idle", "x=1")
	reached := holdUntilEnd(t, "eval", "late")
	c := dialed(t, paths)
	if err := c.Send(map[string]any{"op": "eval", "id": "late", "session": "s", "cwd": filepath.Dir(paths.Dir),
		"cells": []map[string]string{{"language": "sh", "code": "echo ran"}}}); err != nil {
		t.Fatal(err)
	}
	<-reached
	lines, end := stopAndRead(t, paths, c, wait)
	var ended *EndedError
	if !errors.As(end, &ended) || !strings.HasPrefix(c.Ending(), "was stopped") {
		t.Fatalf("the connection ended with %v, Ending %q; want an EndedError after the stopping line", end, c.Ending())
	}
	if i := slices.IndexFunc(lines, func(l string) bool { return gjson.Get(l, "type").String() == "end" }); i < 0 || gjson.Get(lines[i], "status").String() != "cancelled" {
		t.Fatalf("lines %q; want the request's end, cancelled", lines)
	}
	if lost := lostSessions(t, paths); slices.Contains(lost, "s") || !slices.Contains(lost, "idle") {
		t.Fatalf("lost.json keeps %q; want idle's loss, not s's, whose client was told", lost)
	}
}

// A job's wait the process reads as it ends (the line came before its
// reader's end, after the stop counted what clients asked) is refused,
// and the refusal tells the client the process ended (jobs --wait: "job-1
// ended with it, and the state of its session j is lost"): lost.json must
// not keep the session for its next cell to tell again.
func TestStopBeforeJobWaitToldOnce(t *testing.T) {
	paths, wait := serveHome(t, time.Hour)
	flag := filepath.Join(t.TempDir(), "flag")
	c := dialed(t, paths)
	if err := c.Send(map[string]any{"op": "eval", "id": "run", "session": "j", "cwd": filepath.Dir(paths.Dir),
		"cells": []map[string]any{{"language": "sh", "timeout": 0.2, "onTimeout": "detach",
			"code": "while [ ! -e " + flag + " ]; do sleep 0.02; done"}}}); err != nil {
		t.Fatal(err)
	}
	if st := gjson.GetBytes(readUntil(t, c, "end"), "status").String(); st != "detached" {
		t.Fatalf("end %s, want detached", st)
	}
	reached := holdUntilEnd(t, "wait", "w")
	if err := c.Send(map[string]any{"op": "wait", "id": "w", "job": "job-1"}); err != nil {
		t.Fatal(err)
	}
	<-reached
	lines, _ := stopAndRead(t, paths, c, wait)
	if !slices.ContainsFunc(lines, func(l string) bool {
		return gjson.Get(l, "id").String() == "w" && gjson.Get(l, "type").String() == "request_error"
	}) || c.Ending() == "" {
		t.Fatalf("lines %q, Ending %q; want the wait refused after the stopping line", lines, c.Ending())
	}
	if lost := lostSessions(t, paths); slices.Contains(lost, "j") {
		t.Fatalf("lost.json keeps %q; want no loss of j, whose waiter was told", lost)
	}
}

// Answers counts what the process sent in answer to the client's lines,
// not its hello, its stopping line or the pongs of the liveness pings: a
// client whose eval got none when a stop ended the connection knows the
// process never read it.
func TestClientAnswers(t *testing.T) {
	paths, wait := serveHome(t, time.Hour)
	c := dialed(t, paths)
	if n := c.Answers(); n != 0 {
		t.Fatalf("Answers after the hello = %d, want 0", n)
	}
	if err := c.Send(map[string]string{"op": "ping", "id": "p"}); err != nil {
		t.Fatal(err)
	}
	readUntil(t, c, "pong")
	if n := c.Answers(); n != 1 {
		t.Fatalf("Answers after a pong = %d, want 1", n)
	}
	_, end := stopAndRead(t, paths, c, wait)
	if n := c.Answers(); n != 1 || !errors.As(end, new(*EndedError)) {
		t.Fatalf("Answers after the stop = %d (the connection ended with %v), want 1: the stopping line answers nothing", n, end)
	}
}
