package mcp

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evalhost/evalhost/sessions"
)

// The tools that can run long besides eval (wait up to 600 s, notebook_run
// for its cells, stop and reset for a cell to end) send progress to a call
// that carries a token, as eval does: they sent none, so a client that
// ends a request at its timeout unless progress resets it (the TypeScript
// SDK's, 60 s by default: wait's own default) failed them.
func TestLongToolsSendProgress(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not on PATH")
	}
	// Every note, with its call's token: a note may come after its call
	// returned (a late one of wait's), or be handed on just after the
	// notebook run saw it heard, so each call's note is awaited by token.
	type note struct{ token, msg string }
	noted := make(chan note, 256)
	heard := make(chan struct{}) // a note for the notebook_run call came
	var once sync.Once
	reg := sessions.New(sessions.Config{Home: t.TempDir()})
	defer reg.Close()
	runner := func(ctx context.Context, _ NotebookRunRequest) (NotebookRunResult, error) {
		select { // the run lasts until the client heard of it
		case <-heard:
			return NotebookRunResult{Result: sessions.Result{Status: sessions.StatusOK, FailedCell: -1}}, nil
		case <-ctx.Done():
			return NotebookRunResult{}, ctx.Err()
		case <-time.After(30 * time.Second):
			return NotebookRunResult{}, errors.New("no progress note in 30 s")
		}
	}
	srv, err := New(Config{Registry: reg, WorkDir: t.TempDir(), Progress: 20 * time.Millisecond, RunNotebook: runner})
	if err != nil {
		t.Fatal(err)
	}
	st, ct := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	defer func() { cancel(); <-done }()
	session, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			token, _ := req.Params.ProgressToken.(string)
			select {
			case noted <- note{token, req.Params.Message}:
			default: // the test looks at the first ones only
			}
			if token == "p-notebook_run" {
				once.Do(func() { close(heard) })
			}
		},
	}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()

	res := call(t, session, "eval", map[string]any{"session": "w", "cells": []any{
		map[string]any{"code": "import time\ntime.sleep(60)", "timeout": 0.5, "onTimeout": "detach"}}})
	var out EvalOutput
	structured(t, res, &out)
	job := out.Cells[0].Job
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"wait", map[string]any{"job": job, "timeout": 1}, "wait: waiting for " + job + " for "},
		{"notebook_run", map[string]any{"path": "n.ipynb"}, "notebook_run: running for "},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			params := &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args}
			params.SetProgressToken("p-" + tc.tool)
			res, err := session.CallTool(context.Background(), params)
			if err != nil || res.IsError {
				t.Fatalf("%s: %v %q", tc.tool, err, textOf(res))
			}
			deadline := time.After(10 * time.Second)
			for {
				select {
				case n := <-noted:
					if n.token != "p-"+tc.tool {
						continue // another call's
					}
					if !strings.HasPrefix(n.msg, tc.want) {
						t.Fatalf("progress note %q; want one starting %q", n.msg, tc.want)
					}
					return
				case <-deadline:
					t.Fatalf("%s sent no progress note", tc.tool)
				}
			}
		})
	}
}
