package tests

import (
	"bufio"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// An MCP session over HTTP whose client holds no request or stream open
// for --http-session-timeout ends: its end is logged, and a request with
// its id gets 404, the MCP spec's answer that has a client initialize
// anew. Before, a session lived for as long as the server.
func TestMCPHTTPSessionTimeout(t *testing.T) {
	cmd := command(t, "mcp", "--http", "127.0.0.1:0", "--http-session-timeout", "1s")
	cmd.Env = append(cmd.Env, "EVALHOST_DEBUG=1") // logs the end
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	lines := make(chan string, 256)
	go func() {
		defer close(lines)
		for sc := bufio.NewScanner(stderr); sc.Scan(); {
			lines <- sc.Text()
		}
	}()
	await := func(what string, match func(string) bool) string {
		t.Helper()
		timeout := time.After(60 * time.Second)
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("evalhost mcp ended before %s", what)
				}
				if match(line) {
					return line
				}
			case <-timeout:
				t.Fatalf("evalhost mcp did not log %s within 60 s", what)
			}
		}
	}
	url := strings.TrimPrefix(await("its URL", func(l string) bool { return strings.HasPrefix(l, "evalhost mcp: listening on ") }),
		"evalhost mcp: listening on ")
	token := strings.TrimPrefix(await("its token", func(l string) bool { return strings.HasPrefix(l, "evalhost mcp: token ") }),
		"evalhost mcp: token ")
	post := func(id, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		if id != "" {
			req.Header.Set("Mcp-Session-Id", id)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: %s, session %q", resp.Status, id)
	}
	await("the session's end", func(l string) bool { return strings.Contains(l, "HTTP session ended") && strings.Contains(l, id) })
	if resp := post(id, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a request of the ended session: %s, want 404 Not Found", resp.Status)
	}
}
