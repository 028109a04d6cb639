package mcp

import (
	"bufio"
	"context"
	"errors"
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

// idleTimeout is the tests' session timeout: short, and still long beside
// the moment between a client's initialize and its next request.
const idleTimeout = time.Second

// idleServer is an HTTP server whose MCP sessions end after idleTimeout;
// expired receives the id of each session that ended idle, and ended a
// value as each cell run ends.
func idleServer(t *testing.T) (ts *httptest.Server, token string, expired, ended chan string) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not on PATH")
	}
	t.Cleanup(leakcheck.Watchdog(t, 2*time.Minute))
	expired, ended = make(chan string, 8), make(chan string, 8)
	reg := sessions.New(sessions.Config{Home: t.TempDir(), RunHook: func(run sessions.RunInfo, active bool) {
		if !active {
			ended <- run.Session
		}
	}})
	srv, err := New(Config{Registry: reg, WorkDir: t.TempDir(), Progress: 20 * time.Millisecond, HTTPSessionTimeout: idleTimeout})
	if err != nil {
		t.Fatal(err)
	}
	srv.httpExpired = func(id string) { expired <- id }
	token = NewToken()
	h, err := srv.HTTPHandler(token)
	if err != nil {
		t.Fatal(err)
	}
	ts = httptest.NewServer(h)
	t.Cleanup(ts.Close)
	t.Cleanup(func() { reg.Close() }) // first: a call left running holds ts.Close
	return ts, token, expired, ended
}

// rawSession is an MCP session over plain HTTP requests, on connections
// of its own, so that a test can drop them as a dying client does.
type rawSession struct {
	t         *testing.T
	url, id   string
	token     string
	transport *http.Transport
}

// rawInitialize opens an MCP session on MCP 2025-11-25, where a client
// listens on a GET stream.
func rawInitialize(t *testing.T, url, token string) *rawSession {
	t.Helper()
	s := &rawSession{t: t, url: url, token: token, transport: &http.Transport{}}
	t.Cleanup(s.transport.CloseIdleConnections)
	resp := s.do(context.Background(), http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	body := readAll(resp)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"protocolVersion"`) {
		t.Fatalf("initialize: %s: %s", resp.Status, body)
	}
	if s.id = resp.Header.Get("Mcp-Session-Id"); s.id == "" {
		t.Fatal("initialize: no Mcp-Session-Id")
	}
	if code := s.status(http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
		t.Fatalf("notifications/initialized: status %d", code)
	}
	return s
}

// do sends a request of the session (its id once it has one) and returns
// the response, its body unread.
func (s *rawSession) do(ctx context.Context, method, body string) *http.Response {
	s.t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, s.url, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Accept", "application/json, text/event-stream")
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	resp, err := (&http.Client{Transport: s.transport}).Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp
}

// status sends a request and returns its status once the answer is read.
func (s *rawSession) status(method, body string) int {
	s.t.Helper()
	resp := s.do(context.Background(), method, body)
	readAll(resp)
	return resp.StatusCode
}

func (s *rawSession) ping() int {
	return s.status(http.MethodPost, `{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
}

func readAll(resp *http.Response) string {
	defer resp.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
	}
	return b.String()
}

// awaitLine reads resp's body until a line holding want.
func awaitLine(t *testing.T, resp *http.Response, want string) {
	t.Helper()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.Contains(sc.Text(), want) {
			return
		}
	}
	t.Fatalf("the stream ended (%v) before a line with %q", sc.Err(), want)
}

func awaitValue(t *testing.T, c chan string, what string) string {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: not within 20 s (session timeout %v)", what, idleTimeout)
		return ""
	}
}

// A client that vanishes without a DELETE (killed: its connections
// close, a call's POST and its GET stream with them) leaves its session
// idle; once idle for the session timeout the session ends as at a DELETE:
// the call it left running is cancelled (the cell interrupted), and a
// request with its id gets 404, which tells a client to initialize anew.
// Before, nothing ended such a session: the cell ran to its own timeout
// (here ten minutes) and the session lived for ever.
func TestHTTPSessionOfAVanishedClientEnds(t *testing.T) {
	ts, token, expired, ended := idleServer(t)
	s := rawInitialize(t, ts.URL, token)
	ctx, vanish := context.WithCancel(context.Background())
	defer vanish()
	stream := s.do(ctx, http.MethodGet, "")
	if stream.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %s", stream.Status)
	}
	marker := filepath.Join(t.TempDir(), "interrupted")
	code := "import time\ntry:\n    print('started', flush=True)\n    time.sleep(600)\nexcept KeyboardInterrupt:\n    open(" +
		strconv.Quote(marker) + ", 'w').close()\n    raise"
	call := s.do(ctx, http.MethodPost, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"eval","_meta":{"progressToken":"p"},`+
		`"arguments":{"session":"v","cells":[{"code":`+strconv.Quote(code)+`,"timeout":600}]}}}`)
	awaitLine(t, call, `: started"`)
	vanish()
	start := time.Now()
	if id := awaitValue(t, expired, "the vanished client's session to end"); id != s.id {
		t.Fatalf("session %s ended, want %s", id, s.id)
	}
	t.Logf("the session ended %v after its client vanished", time.Since(start).Round(time.Millisecond))
	awaitValue(t, ended, "the cell to end after its session ended")
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the cell was not interrupted: %v", err)
	}
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		body := ""
		if method == http.MethodPost {
			body = `{"jsonrpc":"2.0","id":"ping","method":"ping"}`
		}
		if code := s.status(method, body); code != http.StatusNotFound {
			t.Errorf("%s with the ended session's id: status %d, want 404", method, code)
		}
	}
}

// A session whose client awaits a call's answer, or listens on its GET
// stream, does not end however long that lasts; one that does neither
// ends (the Go SDK's client then fails with ErrSessionMissing).
func TestHTTPSessionLivesWhileACallOrStreamIsOpen(t *testing.T) {
	ts, token, expired, _ := idleServer(t)
	// The Go SDK's client listens on a GET stream unless told not to.
	connect := func(opts *sdk.ClientOptions) *sdk.ClientSession {
		session, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, opts).Connect(context.Background(),
			&sdk.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: bearerTransport(token)},
				DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { session.Close() })
		return session
	}
	// In a call: a cell that runs until the test lets it end.
	opts, notes := progressNotes()
	inCall := connect(opts)
	release := filepath.Join(t.TempDir(), "release")
	t.Cleanup(func() { os.WriteFile(release, nil, 0o600) })
	code := "import os, time\nprint('started', flush=True)\nwhile not os.path.exists(" + strconv.Quote(release) + "):\n    time.sleep(0.02)\nprint('released')"
	done := make(chan *sdk.CallToolResult, 1)
	go func() {
		params := &sdk.CallToolParams{Name: "eval", Arguments: map[string]any{"session": "c", "cells": []any{map[string]any{"code": code}}}}
		params.SetProgressToken("p")
		res, err := inCall.CallTool(context.Background(), params)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	for note := range notes {
		if strings.HasSuffix(note, ": started") {
			break
		}
	}
	// Listening: a GET stream open.
	listening := rawInitialize(t, ts.URL, token)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if stream := listening.do(ctx, http.MethodGet, ""); stream.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %s", stream.Status)
	}
	// Idle, opened last: its end shows the others were as idle as long.
	idle := connect(nil)
	if id := awaitValue(t, expired, "the idle session to end"); id != idle.ID() {
		t.Fatalf("session %s ended first; want the idle one, %s (in a call: %s, listening: %s)", id, idle.ID(), inCall.ID(), listening.id)
	}
	if _, err := idle.ListTools(context.Background(), nil); !errors.Is(err, sdk.ErrSessionMissing) {
		t.Errorf("a call on the ended session: %v, want ErrSessionMissing", err)
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if res := <-done; res == nil || res.IsError || !strings.Contains(textOf(res), "released") {
		t.Fatalf("the call that outlasted the timeout: %q", textOf(res))
	}
	if _, err := inCall.ListTools(context.Background(), nil); err != nil {
		t.Errorf("the session of the call, after it: %v", err)
	}
	if code := listening.ping(); code != http.StatusOK {
		t.Errorf("the listening session: ping status %d, want 200", code)
	}
	if code := listening.status(http.MethodDelete, ""); code != http.StatusNoContent {
		t.Errorf("DELETE of the listening session: status %d", code)
	}
}
