package mcp

import (
	"context"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evalhost/evalhost/sessions"
)

// startedCell calls eval with code in session and returns once the cell
// printed its first line (a progress note says so), with the channel its
// result comes on.
func startedCell(t *testing.T, session *sdk.ClientSession, notes <-chan string, name, code string) <-chan *sdk.CallToolResult {
	t.Helper()
	params := &sdk.CallToolParams{Name: "eval", Arguments: map[string]any{"session": name,
		"cells": []any{map[string]any{"code": code, "timeout": 600}}}}
	params.SetProgressToken("p-" + name)
	done := make(chan *sdk.CallToolResult, 1)
	go func() {
		res, err := session.CallTool(context.Background(), params)
		if err != nil {
			t.Errorf("eval: %v", err)
		}
		done <- res
	}()
	for note := range notes {
		if strings.HasSuffix(note, ": started") {
			break
		}
	}
	return done
}

// progressNotes connects with a handler that passes progress messages on.
func progressNotes() (*sdk.ClientOptions, chan string) {
	notes := make(chan string, 256)
	return &sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
		select {
		case notes <- req.Params.Message:
		default:
		}
	}}, notes
}

// close stops the session's running cell at once: it is interrupted (its
// handler runs), and the eval ends then, killed, its state gone. Before,
// the cell ran on, never interrupted, until the grace window passed and
// its interpreter was terminated: a user who closed the session waited the
// whole window (here a minute) with the cell still at work.
func TestCloseInterruptsTheRunningCell(t *testing.T) {
	opts, notes := progressNotes()
	session, _ := connectWith(t, opts, sessions.Config{Grace: time.Minute})
	code := "import time\ntry:\n    print('started', flush=True)\n    time.sleep(600)\nexcept KeyboardInterrupt:\n    print('interrupted', flush=True)\n    raise"
	done := startedCell(t, session, notes, "c", code)
	start := time.Now()
	if res := call(t, session, "close", map[string]any{"session": "c"}); res.IsError || !strings.Contains(textOf(res), "closed") {
		t.Fatalf("close: %q", textOf(res))
	}
	select {
	case res := <-done:
		var out EvalOutput
		structured(t, res, &out)
		cell := out.Cells[0]
		if !strings.Contains(textOf(res), "interrupted") || cell.Status != "killed" || !cell.StateLost ||
			!strings.Contains(cell.Message, "session was closed") {
			t.Fatalf("the closed session's cell: %+v, text %q; want it interrupted, killed, state lost, saying why", cell, textOf(res))
		}
		t.Logf("the cell ended %v after the close", time.Since(start).Round(time.Millisecond))
	case <-time.After(20 * time.Second):
		t.Fatal("the cell still runs 20 s after its session was closed (grace window 1 min)")
	}
	if res := call(t, session, "eval", map[string]any{"session": "c", "cells": []any{map[string]any{"code": "print('fresh')"}}}); res.IsError {
		t.Fatalf("eval after the close: %q", textOf(res))
	}
}

// close with a cwd ends the session of that id in that directory alone, as
// reset with a cwd resets one and serve's close takes one; the same id in
// another directory keeps its state.
func TestCloseInOneCwd(t *testing.T) {
	session, _ := connect(t, nil)
	a, b := t.TempDir(), t.TempDir()
	eval := func(cwd, code string) string {
		res := call(t, session, "eval", map[string]any{"session": "s", "cwd": cwd, "cells": []any{map[string]any{"code": code}}})
		return textOf(res)
	}
	eval(a, "x = 'a'")
	eval(b, "x = 'b'")
	res := call(t, session, "close", map[string]any{"session": "s", "cwd": a})
	if res.IsError || !strings.Contains(textOf(res), "closed") {
		t.Fatalf("close in a: %q", textOf(res))
	}
	if got := eval(b, "print(x)"); !strings.Contains(got, "b") || strings.Contains(got, "NameError") {
		t.Errorf("the session in b after closing a's: %q; want its x still 'b'", got)
	}
	if got := eval(a, "print(x)"); !strings.Contains(got, "NameError") {
		t.Errorf("the session in a after its close: %q; want a fresh one (NameError)", got)
	}
}
