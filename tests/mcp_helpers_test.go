package tests

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// startMCPHTTP starts `evalhost mcp --http` on a free loopback port for
// the test's length and returns its URL and generated token.
func startMCPHTTP(t *testing.T) (url, token string) {
	t.Helper()
	cmd := command(t, "mcp", "--http", "127.0.0.1:0")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	return readHTTPBanner(t, stderr)
}

// readHTTPBanner reads `evalhost mcp --http`'s stderr up to its URL and
// generated token, then keeps draining it.
func readHTTPBanner(t *testing.T, stderr io.Reader) (url, token string) {
	t.Helper()
	type banner struct{ url, token string }
	got := make(chan banner, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		var b banner
		for sc.Scan() {
			line := sc.Text()
			if u, ok := strings.CutPrefix(line, "evalhost mcp: listening on "); ok {
				b.url = u
			}
			if tok, ok := strings.CutPrefix(line, "evalhost mcp: token "); ok {
				b.token = tok
				got <- b
			}
		}
	}()
	select {
	case b := <-got:
		return b.url, b.token
	case <-time.After(60 * time.Second):
		t.Fatal("evalhost mcp --http printed no URL and token")
	}
	return "", ""
}

// postInitialize sends an initialize request with the given Authorization
// header and returns the HTTP status.
func postInitialize(t *testing.T, url, auth string) int {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// bearer adds the token to every request of an HTTP client.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}
