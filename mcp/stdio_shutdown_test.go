package mcp

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/sessions"
)

// A requested shutdown (SIGTERM: RunStdio's ctx ends) ends the server at
// once, cancelling the calls in flight, those the SDK runs (a call with a
// progress token) as well as the fast path's: before, RunStdio waited for
// an SDK call to end on its own, up to its cell's timeout.
func TestRunStdioCancelEndsTheSDKsCalls(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not on PATH")
	}
	leakcheck.Check(t, leakcheck.Options{})
	for _, progress := range []bool{false, true} {
		name := "fast path"
		if progress {
			name = "SDK (progress token)"
		}
		t.Run(name, func(t *testing.T) {
			reg := sessions.New(sessions.Config{Home: t.TempDir()})
			defer reg.Close()
			srv, err := New(Config{Registry: reg, WorkDir: t.TempDir(), Progress: 20 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			cr, cw := io.Pipe()
			sr, sw := io.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- srv.RunStdio(ctx, cr, sw, 0); sw.Close() }()
			// 2025-11-25: the SDK's client's first call on its default
			// protocol goes to the SDK (new _meta), and this one must not.
			session, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(),
				&sdk.IOTransport{Reader: sr, Writer: cw}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			defer session.Close()
			marker := filepath.Join(t.TempDir(), "running")
			code := fmt.Sprintf("open(%q, 'w').close()\nimport time\ntime.sleep(60)", marker)
			params := &sdk.CallToolParams{Name: "eval", Arguments: map[string]any{"cells": []any{
				map[string]any{"code": code, "timeout": 120}}}}
			if progress {
				params.SetProgressToken("p")
			}
			go session.CallTool(context.Background(), params)
			waitFile(t, marker)
			cancel()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("RunStdio did not return within 20 s of its ctx's end, with a call running")
			}
			if fast := srv.fastCalls.Load() == 1; fast == progress {
				t.Fatalf("the call took the fast path: %v; want %v", fast, !progress)
			}
		})
	}
}

// waitFile returns once path exists.
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
