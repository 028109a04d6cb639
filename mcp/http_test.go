package mcp

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestListenLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:0", true},
		{"localhost:0", true},
		{"127.0.0.2:0", true},
		{"0.0.0.0:0", false},
		{":0", false},
		{"[::]:0", false},
		{"10.1.2.3:0", false},
		{"example.com:0", false},
		{"127.0.0.1", false}, // no port
	} {
		ln, err := ListenLoopback(tc.addr)
		if tc.ok != (err == nil) {
			t.Errorf("ListenLoopback(%q): %v, want ok=%v", tc.addr, err, tc.ok)
		}
		if err == nil {
			if ip := ln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
				t.Errorf("ListenLoopback(%q) listens on %v", tc.addr, ip)
			}
			ln.Close()
		}
		if !tc.ok && tc.addr != "127.0.0.1" && !errors.Is(err, ErrNotLoopback) {
			t.Errorf("ListenLoopback(%q): %v does not wrap ErrNotLoopback", tc.addr, err)
		}
	}
}

func TestHTTPHandlerToken(t *testing.T) {
	srv := newTestServer(t)
	if _, err := srv.HTTPHandler("short"); !errors.Is(err, ErrWeakToken) {
		t.Fatalf("a 5-character token: %v, want ErrWeakToken", err)
	}
	token := NewToken()
	h, err := srv.HTTPHandler(token)
	if err != nil {
		t.Fatal(err)
	}
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, tc := range []struct {
		name, auth string
		want       int
	}{
		{"none", "", http.StatusUnauthorized},
		{"wrong", "Bearer " + NewToken(), http.StatusUnauthorized},
		{"prefix of it", "Bearer " + token[:32], http.StatusUnauthorized},
		{"not bearer", "Basic " + token, http.StatusUnauthorized},
		{"in the query", "", http.StatusUnauthorized},
		{"right", "Bearer " + token, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := "http://127.0.0.1/"
			if tc.name == "in the query" {
				url += "?token=" + token
			}
			req := httptest.NewRequest("POST", url, strings.NewReader(initialize))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.want, rec.Body)
			}
			if tc.want == http.StatusUnauthorized && (rec.Header().Get("WWW-Authenticate") == "" || strings.Contains(rec.Body.String(), token)) {
				t.Fatalf("401 without WWW-Authenticate, or echoing the token: %s", rec.Body)
			}
		})
	}
}

// A browser page of another origin is refused before anything else, even
// with the token: the MCP spec asks local servers to check Origin against
// DNS rebinding, and the SDK's Host check alone let any Origin through.
func TestHTTPHandlerOrigin(t *testing.T) {
	srv := newTestServer(t)
	token := NewToken()
	h, err := srv.HTTPHandler(token)
	if err != nil {
		t.Fatal(err)
	}
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, tc := range []struct {
		name   string
		origin []string // nil: no header
		want   int
	}{
		{"no origin", nil, http.StatusOK},
		{"its own origin", []string{"http://127.0.0.1:8765"}, http.StatusOK},
		{"another site", []string{"http://evil.example"}, http.StatusForbidden},
		{"a rebound name", []string{"http://evil.example:8765"}, http.StatusForbidden},
		{"another local port", []string{"http://127.0.0.1:3000"}, http.StatusForbidden},
		{"localhost for 127.0.0.1", []string{"http://localhost:8765"}, http.StatusForbidden},
		{"an opaque origin", []string{"null"}, http.StatusForbidden},
		{"https", []string{"https://127.0.0.1:8765"}, http.StatusForbidden},
		{"two origins", []string{"http://127.0.0.1:8765", "http://evil.example"}, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest("POST", "http://127.0.0.1:8765/", strings.NewReader(initialize))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", "Bearer "+token)
			for _, o := range tc.origin {
				req.Header.Add("Origin", o)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.want, rec.Body)
			}
		})
	}
}

// A POSTed request the SDK cannot read gets a JSON-RPC error under its id,
// and such a notification 202 Accepted; everything else reaches the SDK
// with its body whole.
func TestGuardBody(t *testing.T) {
	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	long := `{"jsonrpc":"2.0","id":"L","method":"tools/call","params":{"x":"` + strings.Repeat("x", maxBody) + `"}}`
	for _, tc := range []struct {
		name, method, body string
		want               string // the answer's start; "" when the SDK is to get it
		accepted           bool   // dropped with 202 Accepted (a notification)
	}{
		{"too deep", "POST", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":` + deep + `}}`, `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"invalid request: the message nests`, false},
		{"too deep, string id", "POST", `{"jsonrpc":"2.0","id":"a","method":"m","params":` + deep + `}`, `{"jsonrpc":"2.0","id":"a","error":{"code":-32600`, false},
		{"too long", "POST", long, `{"jsonrpc":"2.0","id":"L","error":{"code":-32600,"message":"request of more than 16777216 bytes`, false},
		// The TypeScript SDK's client writes a request's id after its
		// params: the SDK's plain 413 failed the call without its id.
		{"too long, id last", "POST", `{"method":"m","params":{"x":"` + strings.Repeat("x", maxBody) + `"},"jsonrpc":"2.0","id":1}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"request of more than 16777216 bytes`, false},
		{"too long, no id", "POST", `{"jsonrpc":"2.0","method":"m","params":{"x":"` + strings.Repeat("x", maxBody) + `"},"x":{"id":1}}`, "", false},
		// A notification is never answered; the SDK's plain 400 or 413
		// closed a Go SDK client's session.
		{"a deep notification", "POST", `{"jsonrpc":"2.0","method":"n","params":` + deep + `}`, "", true},
		{"a deep notification, id null", "POST", `{"jsonrpc":"2.0","id":null,"method":"notifications/progress","params":` + deep + `}`, "", true},
		{"a long notification", "POST", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"message":"` + strings.Repeat("x", maxBody) + `"}}`, "", true},
		{"a deep request, id null", "POST", `{"jsonrpc":"2.0","id":null,"method":"tools/call","params":` + deep + `}`, "", false},
		{"a deep response", "POST", `{"jsonrpc":"2.0","id":1,"result":` + deep + `}`, "", false},
		{"not JSON", "POST", `{"jsonrpc":`, "", false},
		{"plain", "POST", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "", false},
		{"a GET", "GET", deep, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			r := httptest.NewRequest(tc.method, "/", strings.NewReader(tc.body))
			answered := guardBody(w, r, nil)
			if answered != (tc.want != "" || tc.accepted) {
				t.Fatalf("answered %v: %.200s", answered, w.Body.String())
			}
			if !answered {
				if b, _ := io.ReadAll(r.Body); string(b) != tc.body && (len(tc.body) <= maxBody || string(b) != tc.body[:maxBody+1]) {
					t.Fatalf("the SDK gets %d bytes of the %d sent", len(b), len(tc.body))
				}
				return
			}
			if tc.accepted {
				if w.Code != http.StatusAccepted || w.Body.Len() > 0 {
					t.Errorf("%d %.300s, want 202 and no body", w.Code, w.Body.String())
				}
				return
			}
			if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" || !strings.HasPrefix(w.Body.String(), tc.want) {
				t.Errorf("%d %s %.300s, want 200 JSON %s", w.Code, w.Header().Get("Content-Type"), w.Body.String(), tc.want)
			}
		})
	}
}

// BenchmarkGuardLargeBody is what the guard costs a request near the limit
// before the SDK reads it again (bytes allocated per request).
func BenchmarkGuardLargeBody(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"eval","arguments":{"cells":[{"code":"` +
		strings.Repeat("x", 15<<20) + `"}]}}}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		w := httptest.NewRecorder()
		if guardBody(w, r, nil) {
			b.Fatal("answered a request the SDK can read")
		}
		if n, err := io.Copy(io.Discard, r.Body); err != nil || n != int64(len(body)) {
			b.Fatalf("the SDK would read %d bytes (%v), want %d", n, err, len(body))
		}
	}
}
