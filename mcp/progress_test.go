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
	noted := make(chan string, 1)
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
			if req.Params.ProgressToken == "p-notebook_run" {
				once.Do(func() { close(heard) })
			}
			select {
			case noted <- req.Params.Message:
			default:
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
			for len(noted) > 0 {
				<-noted
			}
			params := &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args}
			params.SetProgressToken("p-" + tc.tool)
			res, err := session.CallTool(context.Background(), params)
			if err != nil || res.IsError {
				t.Fatalf("%s: %v %q", tc.tool, err, textOf(res))
			}
			select {
			case note := <-noted:
				if !strings.HasPrefix(note, tc.want) {
					t.Fatalf("progress note %q; want one starting %q", note, tc.want)
				}
			default:
				t.Fatalf("%s sent no progress note", tc.tool)
			}
		})
	}
}
