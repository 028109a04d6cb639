package mcp

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

// connect serves a Server with a real registry over in-memory transports
// and returns a client session. Everything it started must be gone when the
// test ends.
func connect(t *testing.T, opts *sdk.ClientOptions) (*sdk.ClientSession, *Server) {
	t.Helper()
	return connectWith(t, opts, sessions.Config{})
}

// connectWith is connect with a registry configured as cfg (Home and Sink
// are the test's own).
func connectWith(t *testing.T, opts *sdk.ClientOptions, cfg sessions.Config) (*sdk.ClientSession, *Server) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not on PATH")
	}
	t.Cleanup(leakcheck.Watchdog(t, 2*time.Minute))
	leakcheck.Check(t, leakcheck.Options{FDs: true})
	home := t.TempDir()
	store := streamsink.NewStore(t.TempDir())
	cfg.Home, cfg.Sink = home, streamsink.Options{Store: store}
	reg := sessions.New(cfg)
	t.Cleanup(func() { reg.Close() })
	srv, err := New(Config{Registry: reg, Store: store, Progress: 20 * time.Millisecond, WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	st, ct := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	t.Cleanup(func() { cancel(); <-done })
	session, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { session.Close() })
	return session, srv
}

func TestNewNeedsRegistry(t *testing.T) {
	if _, err := New(Config{}); err != ErrNoRegistry {
		t.Fatalf("New without a registry: %v, want ErrNoRegistry", err)
	}
}

func TestProgressAndCancel(t *testing.T) {
	notes := make(chan string, 256)
	session, _ := connect(t, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			select {
			case notes <- req.Params.Message:
			default:
			}
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	params := &sdk.CallToolParams{Name: "eval", Arguments: map[string]any{"cells": []any{
		map[string]any{"code": "x = 5"},
		map[string]any{"code": "import time\nprint('step one', flush=True)\ntime.sleep(60)"},
	}}}
	params.SetProgressToken("p1")
	errc := make(chan error, 1)
	go func() { _, err := session.CallTool(ctx, params); errc <- err }()
	for note := range notes {
		if strings.HasPrefix(note, "cell 2/2 running for ") && strings.HasSuffix(note, ": step one") {
			break
		}
	}
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("cancelled call returned no error")
	}
	res, err := session.CallTool(context.Background(), &sdk.CallToolParams{Name: "eval",
		Arguments: map[string]any{"cells": []any{map[string]any{"code": "x"}}}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "5") {
		t.Fatalf("after cancel: %v %+v", err, res)
	}
}

func TestNoProgressWithoutToken(t *testing.T) {
	notes := make(chan string, 16)
	session, _ := connect(t, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			notes <- req.Params.Message
		},
	})
	res, err := session.CallTool(context.Background(), &sdk.CallToolParams{Name: "eval",
		Arguments: map[string]any{"cells": []any{map[string]any{"code": "import time; time.sleep(0.2)"}}}})
	if err != nil || res.IsError {
		t.Fatalf("eval: %v %+v", err, res)
	}
	// The result was sent after any note the server sent for the call.
	select {
	case n := <-notes:
		t.Fatalf("progress note %q for a call without a progress token", n)
	default:
	}
}

func TestNotebookRunWithoutRunner(t *testing.T) {
	session, _ := connect(t, nil)
	res, err := session.CallTool(context.Background(), &sdk.CallToolParams{Name: "notebook_run",
		Arguments: map[string]any{"path": "x.ipynb"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "not available") {
		t.Fatalf("notebook_run without a runner: %v %+v", err, res)
	}
}
