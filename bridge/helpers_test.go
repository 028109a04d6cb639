package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/testkit"
)

// echoTools returns {"name":…,"args":…} or fails when args has "fail".
var echoTools = ToolsFunc(func(ctx context.Context, c Call) (json.RawMessage, error) {
	var a map[string]any
	if err := json.Unmarshal(c.Args, &a); err != nil {
		return nil, err
	}
	if msg, ok := a["fail"].(string); ok {
		return nil, fmt.Errorf("%s", msg)
	}
	return json.Marshal(map[string]any{"name": c.Name, "session": c.Session, "run": c.Run, "args": a})
})

type testBridge struct {
	*Server
	url, token string
	client     *http.Client
}

// start runs a Server for one test; Close (checked) and the leak check run at
// cleanup.
func start(t *testing.T, tools Tools, o Options) *testBridge {
	t.Helper()
	testkit.Clean(t, time.Minute)
	s := New(tools, o)
	env, err := s.Env()
	if err != nil {
		t.Fatalf("Env: %v", err)
	}
	tr := &http.Transport{}
	b := &testBridge{Server: s, url: env[EnvURL], token: env[EnvToken], client: &http.Client{Transport: tr}}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return b
}

type reply struct {
	status int
	header http.Header
	raw    string
	OK     bool            `json:"ok"`
	Value  json.RawMessage `json:"value"`
	Error  string          `json:"error"`
}

// do sends a request and decodes the reply; every reply must be JSON.
func (b *testBridge) do(t *testing.T, method, target string, header map[string]string, body string) reply {
	t.Helper()
	req, err := http.NewRequest(method, b.url+target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read reply: %v", err)
	}
	r := reply{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("reply %d is not JSON: %v: %q", resp.StatusCode, err, raw)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	if strings.Contains(string(raw), b.token) {
		t.Errorf("reply carries the token: %s", raw)
	}
	return r
}

// call posts a tool call with the right token.
func (b *testBridge) call(t *testing.T, session, run, name, args string) reply {
	t.Helper()
	body := fmt.Sprintf(`{"session":%q,"run":%q,"name":%q,"args":%s}`, session, run, name, args)
	return b.do(t, "POST", Path, b.auth(), body)
}

func (b *testBridge) auth() map[string]string {
	return map[string]string{"Authorization": "Bearer " + b.token}
}

func jsonEqual(t *testing.T, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("value %q: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want %q: %v", want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if !bytes.Equal(gb, wb) {
		t.Errorf("value = %s, want %s", gb, wb)
	}
}

// sendUntilClosed writes send on a new connection to addr and reads until
// the server closes it. The 10 s deadline is a failure bound, not a timing
// claim: an error means the server kept the connection open.
func sendUntilClosed(t *testing.T, addr, send string) ([]byte, error) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, send); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	return io.ReadAll(conn)
}
