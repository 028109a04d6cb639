package mcp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/sessions"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// newTestServer is a Server on a registry of its own, closed when the
// test ends.
func newTestServer(t *testing.T) *Server {
	t.Helper()
	reg := sessions.New(sessions.Config{Home: t.TempDir()})
	t.Cleanup(func() { reg.Close() })
	srv, err := New(Config{Registry: reg, WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// goClientOverStdio connects the SDK's own Go client to srv over stdio.
func goClientOverStdio(t *testing.T, srv *Server) *sdk.ClientSession {
	t.Helper()
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.RunStdio(context.Background(), cr, sw, 0); sw.Close() }()
	session, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).
		Connect(context.Background(), &sdk.IOTransport{Reader: sr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { session.Close(); <-done })
	return session
}

// goClientOverHTTP connects the SDK's own Go client to srv over streamable
// HTTP.
func goClientOverHTTP(t *testing.T, srv *Server) *sdk.ClientSession {
	t.Helper()
	token := NewToken()
	h, err := srv.HTTPHandler(token)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	hc := &http.Client{Transport: bearerTransport(token)}
	session, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).
		Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { session.Close() })
	return session
}

// bearerTransport sends the token with every request.
type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// A notification the server cannot read (deeper than the SDK reads, or
// longer than the limit) is dropped: the Go SDK's client closed its
// session at the answer it got (an id-null error on stdio, the SDK's plain
// 400 or 413 over HTTP), so every later call failed with "client is
// closing".
func TestGoClientSurvivesUnreadableNotifications(t *testing.T) {
	var deep any = 1
	for range 1500 {
		deep = []any{deep}
	}
	for _, transport := range []struct {
		name    string
		connect func(t *testing.T, srv *Server) *sdk.ClientSession
	}{
		{"stdio", goClientOverStdio},
		{"HTTP", goClientOverHTTP},
	} {
		for _, tc := range []struct {
			name   string
			params *sdk.ProgressNotificationParams
		}{
			{"too deep", &sdk.ProgressNotificationParams{ProgressToken: "t", Meta: sdk.Meta{"x": deep}}},
			{"too long", &sdk.ProgressNotificationParams{ProgressToken: "t", Message: strings.Repeat("x", DefaultMaxLine)}},
		} {
			t.Run(transport.name+", "+tc.name, func(t *testing.T) {
				srv := newTestServer(t)
				session := transport.connect(t, srv)
				if err := session.NotifyProgress(context.Background(), tc.params); err != nil {
					t.Logf("the notification: %v", err)
				}
				if _, err := session.ListTools(context.Background(), nil); err != nil {
					t.Fatalf("a call after the notification: %v", err)
				}
			})
		}
	}
}
