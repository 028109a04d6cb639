package mcp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/sessions"
)

// A client that ends its MCP session over HTTP (DELETE) cancels the session's calls in flight: the
// running cell is interrupted, as for a cancel. Before, the SDK closed the
// session only once its calls had returned, so the cell ran on to its own
// end (here ten minutes) for a client that was gone, and the DELETE waited
// for it.
func TestHTTPSessionEndCancelsItsCalls(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not on PATH")
	}
	t.Cleanup(leakcheck.Watchdog(t, 2*time.Minute))
	ended := make(chan struct{}, 4)
	reg := sessions.New(sessions.Config{Home: t.TempDir(), RunHook: func(_ sessions.RunInfo, active bool) {
		if !active {
			ended <- struct{}{}
		}
	}})
	srv, err := New(Config{Registry: reg, WorkDir: t.TempDir(), Progress: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	token := NewToken()
	h, err := srv.HTTPHandler(token)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	t.Cleanup(func() { reg.Close() }) // first: a call left running holds ts.Close
	opts, notes := progressNotes()
	session, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, opts).Connect(context.Background(),
		&sdk.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: bearerTransport(token)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "interrupted")
	code := "import time\ntry:\n    print('started', flush=True)\n    time.sleep(600)\nexcept KeyboardInterrupt:\n    open(" +
		strconv.Quote(marker) + ", 'w').close()\n    raise"
	params := &sdk.CallToolParams{Name: "eval", Arguments: map[string]any{"session": "h",
		"cells": []any{map[string]any{"code": code, "timeout": 600}}}}
	params.SetProgressToken("p")
	go func() { _, _ = session.CallTool(context.Background(), params) }()
	for note := range notes {
		if strings.HasSuffix(note, ": started") {
			break
		}
	}
	// The DELETE a client sends as it ends its session (the Python SDK's
	// on leaving its streamablehttp_client; the Go SDK's Close sends it
	// only once its own calls have returned).
	del, err := http.NewRequest(http.MethodDelete, ts.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	del.Header.Set("Mcp-Session-Id", session.ID())
	closed := make(chan error, 1)
	start := time.Now()
	go func() {
		resp, err := (&http.Client{Transport: bearerTransport(token)}).Do(del)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusNoContent {
				err = fmt.Errorf("DELETE: %s", resp.Status)
			}
		}
		closed <- err
	}()
	select {
	case <-ended:
		t.Logf("the cell ended %v after the session's end", time.Since(start).Round(time.Millisecond))
	case <-time.After(20 * time.Second):
		t.Fatal("the cell still runs 20 s after the client ended its MCP session")
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the cell was not interrupted: %v", err)
	}
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the DELETE is still not answered 20 s after the cell ended")
	}
}
