package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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

// A client that closes its end of the output with a call unanswered, its
// stdin closed first, after or never, makes RunStdio return ErrOutputGone:
// the call was cancelled because nobody could read its answer, which the
// program must tell from an end with every answer written (evalhost mcp
// exits 141 saying so; RunStdio returned nil, and mcp exited 0 in
// silence). A client that reads every answer before it closes gets nil,
// and its server ends with stdin still open as well, as nothing more can
// be answered: before, RunStdio did not watch the output until its input
// ended, and evalhost mcp ended it by cancelling its context, which it
// reported as calls cancelled (exit 141) though none was.
func TestRunStdioReaderGone(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not on PATH")
	}
	if runtime.GOOS == "windows" {
		t.Skip("no reader watch on Windows")
	}
	leakcheck.Check(t, leakcheck.Options{})
	type ending int
	const (
		inThenOut ending = iota // stdin closed, then the output's reader
		outThenIn
		outOnly // stdin stays open until RunStdio returned
	)
	for _, tc := range []struct {
		name     string
		code     string // the call's cell; "%s" is the marker file it makes
		answered bool   // the client reads the call's answer before it closes
		end      ending
		want     error
	}{
		{"the call unanswered", "open(%q, 'w').close()\nimport time\ntime.sleep(60)", false, inThenOut, ErrOutputGone},
		{"every call answered", "open(%q, 'w').close()", true, inThenOut, nil},
		{"the call unanswered, output closed first", "open(%q, 'w').close()\nimport time\ntime.sleep(60)", false, outThenIn, ErrOutputGone},
		{"every call answered, output closed first", "open(%q, 'w').close()", true, outThenIn, nil},
		{"the call unanswered, stdin open", "open(%q, 'w').close()\nimport time\ntime.sleep(60)", false, outOnly, ErrOutputGone},
		{"every call answered, stdin open", "open(%q, 'w').close()", true, outOnly, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := sessions.New(sessions.Config{Home: t.TempDir()})
			defer reg.Close()
			srv, err := New(Config{Registry: reg, WorkDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			inR, inW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer inR.Close()
			defer inW.Close()
			outR, outW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer outW.Close()
			done := make(chan error, 1)
			go func() { done <- srv.RunStdio(context.Background(), inR, outW, 0) }()
			marker := filepath.Join(t.TempDir(), "running")
			call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
				"params": map[string]any{"name": "eval", "arguments": map[string]any{"cells": []any{
					map[string]any{"code": fmt.Sprintf(tc.code, marker), "timeout": 120}}}}})
			fmt.Fprintf(inW, "%s\n%s\n%s\n",
				`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`, call)
			answers := bufio.NewReader(outR)
			if _, err := answers.ReadString('\n'); err != nil { // initialize's
				t.Fatal(err)
			}
			waitFile(t, marker)
			if tc.answered {
				if _, err := answers.ReadString('\n'); err != nil {
					t.Fatal(err)
				}
			}
			switch tc.end {
			case inThenOut:
				inW.Close()
				outR.Close()
			case outThenIn:
				outR.Close()
				inW.Close()
			case outOnly:
				outR.Close()
			}
			select {
			case err := <-done:
				if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
					t.Errorf("RunStdio returned %v, want %v", err, tc.want)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("RunStdio did not return within 20 s of its client's end")
			}
		})
	}
}
