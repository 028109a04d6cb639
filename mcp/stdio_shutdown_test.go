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
	"sync"
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

// heldInput gives its first lines at once and holds the rest back until
// ReadSent, as a client's are when the watch of the output wakes before
// the reader; then the end.
type heldInput struct {
	first, held []byte
	can         bool // ReadSent can
	sent        chan struct{}
	once        sync.Once
}

func (in *heldInput) Read(p []byte) (int, error) {
	if len(in.first) == 0 {
		<-in.sent
		if len(in.held) == 0 {
			return 0, io.EOF
		}
		in.first, in.held = in.held, nil
	}
	n := copy(p, in.first)
	in.first = in.first[n:]
	return n, nil
}

func (in *heldInput) ReadSent() bool {
	if in.can {
		in.once.Do(func() { close(in.sent) })
	}
	return in.can
}

// A call the client sent before the reader of the output left counts as
// unanswered, read or not when the server saw the reader leave: RunStdio
// reads what was sent (an input's ReadSent), runs none of it, and returns
// ErrOutputGone, as for a call it read first. Before, it stopped reading
// at once and returned nil: evalhost mcp exited 0 or 141 for the same
// client by which it saw first.
func TestRunStdioReaderGoneReadsWhatWasSent(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no reader watch on Windows")
	}
	t.Cleanup(leakcheck.Watchdog(t, time.Minute))
	hello := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` +
		"\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	marker := filepath.Join(t.TempDir(), "ran")
	call := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"eval","arguments":{"cells":[{"code":"open('%s', 'w')"}]}}}`, marker) + "\n"
	for _, tc := range []struct {
		name string
		held string
		can  bool
		want error
	}{
		{"a call", call, true, ErrOutputGone},
		{"a call the SDK answers", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n", true, ErrOutputGone},
		{"a notification", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}` + "\n", true, nil},
		{"nothing", "", true, nil},
		{"a call, but the input cannot tell", call, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := sessions.New(sessions.Config{Home: t.TempDir()})
			defer reg.Close()
			srv, err := New(Config{Registry: reg, WorkDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			in := &heldInput{first: []byte(hello), held: []byte(tc.held), can: tc.can, sent: make(chan struct{})}
			defer in.once.Do(func() { close(in.sent) })
			outR, outW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer outW.Close()
			done := make(chan error, 1)
			go func() { done <- srv.RunStdio(context.Background(), in, outW, 0) }()
			if _, err := bufio.NewReader(outR).ReadString('\n'); err != nil { // initialize's answer
				t.Fatal(err)
			}
			outR.Close()
			if err := <-done; !errors.Is(err, tc.want) || tc.want == nil && err != nil {
				t.Errorf("RunStdio returned %v, want %v", err, tc.want)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("the call ran")
			}
		})
	}
}
