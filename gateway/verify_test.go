package gateway

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// Config.VerifyConn sees every connection before anything is sent on it,
// the websocket's included, and a refusal fails the call with its error.
func TestVerifyConnGuardsEveryConnection(t *testing.T) {
	refused := errors.New("not ours")
	cases := []struct {
		name   string
		verify func(net.Conn) error
		call   func(ctx context.Context, c *Client) error
	}{
		{"health check refused", func(net.Conn) error { return refused }, func(ctx context.Context, c *Client) error { return c.Health(ctx) }},
		{"kernel start refused", func(net.Conn) error { return refused }, func(ctx context.Context, c *Client) error {
			_, err := c.createKernel(ctx)
			return err
		}},
		{"websocket refused", func(net.Conn) error { return refused }, func(ctx context.Context, c *Client) error {
			_, err := c.dialChannels(ctx, "k1", "s1")
			return err
		}},
		{"accepted", func(net.Conn) error { return nil }, func(ctx context.Context, c *Client) error { return c.Health(ctx) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var requests atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				w.Write([]byte(`{"default":"python3","kernelspecs":{}}`))
			}))
			defer srv.Close()
			var seen []string
			c, err := NewClient(Config{URL: srv.URL, Token: "secret", VerifyConn: func(conn net.Conn) error {
				seen = append(seen, conn.RemoteAddr().String())
				return tc.verify(conn)
			}})
			if err != nil {
				t.Fatal(err)
			}
			err = tc.call(context.Background(), c)
			if len(seen) == 0 || seen[0] != srv.Listener.Addr().String() {
				t.Errorf("VerifyConn saw %q, want the server's %s", seen, srv.Listener.Addr())
			}
			if tc.verify(nil) != nil {
				if !errors.Is(err, refused) || requests.Load() != 0 {
					t.Errorf("err = %v after %d requests; want the refusal, and nothing sent", err, requests.Load())
				}
				return
			}
			if err != nil || requests.Load() != 1 {
				t.Errorf("err = %v after %d requests; want one request, answered", err, requests.Load())
			}
		})
	}
	if _, err := NewClient(Config{URL: "http://127.0.0.1:1", HTTPClient: http.DefaultClient, VerifyConn: func(net.Conn) error { return nil }}); err == nil {
		t.Errorf("NewClient accepted VerifyConn with an HTTPClient it cannot apply it to")
	}
}
