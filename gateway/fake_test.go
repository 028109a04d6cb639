package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
)

// These fakes cover only what the real gateway cannot be made to do.

func TestFakeAuthFailureNamesToken(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(status)
			}))
			defer srv.Close()
			c, _ := NewClient(Config{URL: srv.URL})
			err := c.Health(context.Background())
			if !errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), "set PI_PYTHON_GATEWAY_TOKEN") {
				t.Errorf("Health = %v", err)
			}
		})
	}
}

func TestFakeCreateRetriesOnceOn5xx(t *testing.T) {
	cases := []struct {
		name      string
		failures  int32
		wantCalls int32
		wantErr   bool
	}{
		{"one 503 then created", 1, 2, false},
		{"two 500s", 2, 2, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost || r.URL.Path != "/api/kernels" {
					http.NotFound(w, r)
					return
				}
				if calls.Add(1) <= tc.failures {
					http.Error(w, "kernel spawn failed", http.StatusServiceUnavailable)
					return
				}
				w.WriteHeader(http.StatusCreated)
				_, _ = w.Write([]byte(`{"id":"k1","name":"python3"}`))
			}))
			defer srv.Close()
			c, _ := NewClient(Config{URL: srv.URL})
			km, err := c.createKernel(context.Background())
			if calls.Load() != tc.wantCalls {
				t.Errorf("calls = %d, want %d", calls.Load(), tc.wantCalls)
			}
			if tc.wantErr {
				var he *HTTPError
				if !errors.As(err, &he) || he.Status != http.StatusServiceUnavailable {
					t.Errorf("err = %v, want the 503", err)
				}
			} else if err != nil || km.ID != "k1" {
				t.Errorf("createKernel = %+v, %v", km, err)
			}
		})
	}
}

func TestFakeSocketDroppedMidCell(t *testing.T) {
	k := fakeKernel(t, []struct{ typ, content string }{
		{"status", `{"execution_state":"busy"}`},
		{"stream", `{"name":"stdout","text":"partial\n"}`},
	}, true)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []string
	_, err := k.Execute(ctx, frames.Request{ID: "c", Code: "print('partial'); more()"}, func(f frames.Frame) { got = append(got, summary(f)) })
	var de *backend.DeathError
	if !errors.As(err, &de) || !strings.Contains(de.Reason, "websocket") {
		t.Fatalf("err = %v, want a DeathError about the socket", err)
	}
	if strings.Join(got, ",") != "started,stdout:partial\n" {
		t.Errorf("frames before the drop = %q", got)
	}
}

// TestNewClientRejectsBadURLs: what ParseURL refuses, NewClient refuses,
// saying what is wrong: a query was dropped without a word (a Jupyter
// URL's ?token= went nowhere, and the gateway answered 403), a space in
// the path was sent escaped, and a port past 65535 failed as a dial.
func TestNewClientRejectsBadURLs(t *testing.T) {
	cases := []struct{ name, url, want string }{
		{"empty", "", "PI_PYTHON_GATEWAY_URL"},
		{"no scheme", "127.0.0.1:8888", "it does not start with http:// or https://"},
		{"a word", "gateway", "it does not start with http:// or https://"},
		{"words", "not a url", "it holds ' ' at byte 3"},
		{"ws scheme", "ws://127.0.0.1:8888", `its scheme is "ws", not http or https`},
		{"ftp scheme", "ftp://x", `its scheme is "ftp", not http or https`},
		{"no host", "http://", "it has no host"},
		{"only a port", "http://:8888", "it has no host"},
		{"a space in the path", "http://127.0.0.1:8888/a b", "it holds ' ' at byte 23"},
		{"a space in the host", "http://127.0 .0.1:8888", "it holds ' '"},
		{"a tab", "http://127.0.0.1:8888/\tx", "it holds '\\t' at byte 22"},
		{"a newline", "http://127.0.0.1:8888\n/x", "it holds '\\n' at byte 21"},
		{"a bad port", "http://127.0.0.1:88a8", "it is not a URL (invalid port"},
		{"a port too large", "http://127.0.0.1:99999", "its port 99999 is not one from 1 to 65535"},
		{"a port zero", "http://127.0.0.1:0", "its port 0 is not one from 1 to 65535"},
		{"a query", "http://127.0.0.1:8888/?token=abc", "it has a query (?...), which evalhost does not send: the gateway's token goes in PI_PYTHON_GATEWAY_TOKEN"},
		{"an empty query", "http://127.0.0.1:8888/?", "it has a query"},
		{"a fragment", "http://127.0.0.1:8888/#x", "it has a fragment"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewClient(Config{URL: tc.url})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewClient(%q) = %v, want an error containing %q", tc.url, err, tc.want)
			}
		})
	}
	c, err := NewClient(Config{URL: " https://gw.example:8443/base/ "})
	if err != nil || c.URL() != "https://gw.example:8443/base" || c.channelsURL("k") != "wss://gw.example:8443/base/api/kernels/k/channels" {
		t.Errorf("NewClient(base path) = %v, %v", c, err)
	}
	for _, ok := range []string{"http://127.0.0.1:8888", "HTTP://localhost", "https://[::1]:443/a%20b/", "http://user:pw@gw.example:8888"} {
		if _, err := ParseURL(ok); err != nil {
			t.Errorf("ParseURL(%q) = %v, want it taken", ok, err)
		}
	}
}

func TestUnreachableNamesURL(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close() // nothing listens there now
	c, _ := NewClient(Config{URL: url})
	err = c.Health(context.Background())
	var ue *UnreachableError
	if !errors.As(err, &ue) || !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), url) ||
		!strings.Contains(err.Error(), "connection refused") {
		t.Errorf("Health = %v, want an UnreachableError naming %s and the cause", err, url)
	}
}

func TestIsFDExhausted(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"gateway 500 naming it", &HTTPError{Status: 500, Body: "OSError: [Errno 24] Too many open files"}, true},
		{"local EMFILE", &net.OpError{Op: "dial", Err: os.NewSyscallError("socket", syscall.EMFILE)}, true},
		{"other errno", &net.OpError{Op: "dial", Err: os.NewSyscallError("socket", syscall.ECONNREFUSED)}, false},
		{"plain 500", &HTTPError{Status: 500, Body: "boom"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsFDExhausted(tc.err); got != tc.want {
				t.Errorf("IsFDExhausted(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

// fakeKernel answers each execute_request with msgs (iopub unless the type
// ends in _reply), parented to the request; with drop it then drops the TCP
// connection without a close frame. Steps that are not messages: "sleep"
// pauses for its content's duration; "marker" reads the client's requests,
// answering pings at once as an idle gateway does, until a
// kernel_info_request (evalhost's marker) comes, or gives up after 5 s; a
// type "marker:T" is a message of type T parented to the last marker,
// which may be an earlier cell's (none yet: skipped).
func fakeKernel(t *testing.T, msgs []struct{ typ, content string }, drop bool) *Kernel {
	t.Helper()
	var marker string // the server's goroutine's
	return scriptedKernel(t, func(ctx context.Context, conn *websocket.Conn, parent string) error {
		for _, m := range msgs {
			typ, to := m.typ, parent
			switch {
			case typ == "sleep":
				d, _ := time.ParseDuration(m.content)
				time.Sleep(d)
				continue
			case typ == "marker":
				id, err := awaitMarker(ctx, conn)
				if err != nil {
					return err
				}
				marker = id
				continue
			case strings.HasPrefix(typ, "marker:"):
				if marker == "" {
					continue
				}
				typ, to = strings.TrimPrefix(typ, "marker:"), marker
			}
			if err := conn.Write(ctx, websocket.MessageText, jupyterMessage(typ, to, []byte(m.content))); err != nil {
				return err
			}
		}
		if drop {
			return errors.New("dropped")
		}
		return nil
	}, nil)
}

// awaitMarker reads requests until a kernel_info_request, whose msg_id it
// returns.
func awaitMarker(ctx context.Context, conn *websocket.Conn) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for {
		_, raw, err := conn.Read(ctx)
		if err != nil {
			return "", fmt.Errorf("no marker: %w", err)
		}
		var req message
		if json.Unmarshal(raw, &req) == nil && req.Header.MsgType == "kernel_info_request" {
			return req.Header.MsgID, nil
		}
	}
}

// Jupyter's iopub drops messages under overload (a real gateway does so
// only under a flood, unpredictably): a lost idle status must not hang the
// cell, and lost output is reported with its size. The marker the idle
// watch sends decides it by the kernel's iopub order, not by the gateway:
// a display the kernel hands over only after the wait is not lost, and the
// marker's own messages, however late, are nobody's frames.
func TestFakeIopubDrops(t *testing.T) {
	old := [...]time.Duration{idleWait, markerWait}
	idleWait, markerWait = 200*time.Millisecond, 300*time.Millisecond
	t.Cleanup(func() { idleWait, markerWait = old[0], old[1] })
	reply := func(stdout, stderr int) string {
		return fmt.Sprintf(`{"status":"ok","execution_count":1,"user_expressions":{%q:{"status":"ok","data":{"text/plain":"[%d, %d]"}}}}`,
			writtenKey, stdout, stderr)
	}
	const (
		busy = `{"execution_state":"busy"}`
		idle = `{"execution_state":"idle"}`
		lost = "warning:6 of the 10 characters the cell wrote to stdout had not arrived when it ended: Jupyter's iopub channel drops messages when a kernel writes faster than the gateway forwards them (the runner backend has no such limit)"
	)
	dropped := "warning:" + droppedWarning()
	noMarker := "warning:the kernel answered the cell, but neither its idle status nor the status of a later request had come after 300ms without any message: Jupyter's iopub channel drops (or holds back) messages when a kernel writes faster than the gateway forwards them, so output may be missing"
	type msg = struct{ typ, content string }
	cases := []struct {
		name string
		msgs []msg
		runs int // cells run on the kernel, each with msgs and want; 1 when 0
		want []string
	}{
		{"nothing lost",
			[]msg{{"status", busy}, {"stream", `{"name":"stdout","text":"héllo\n"}`}, {"execute_reply", reply(6, 0)}, {"status", idle}},
			0, []string{"started", "stdout:héllo\n", "done:ok"}},
		{"output and idle lost: the marker's status tells",
			[]msg{{"stream", `{"name":"stdout","text":"abcd"}`}, {"execute_reply", reply(10, 3)}},
			0, []string{"started", "stdout:abcd", dropped, lost,
				"warning:3 of the 3 characters the cell wrote to stderr had not arrived when it ended: Jupyter's iopub channel drops messages when a kernel writes faster than the gateway forwards them (the runner backend has no such limit)",
				"done:ok"}},
		{"a display the kernel hands over after the wait, the gateway answering pings at once",
			[]msg{{"status", busy}, {"execute_reply", reply(0, 0)}, {"marker", ""},
				{"display_data", `{"data":{"text/plain":"late"},"metadata":{},"transient":{}}`}, {"status", idle},
				{"marker:status", busy}, {"marker:kernel_info_reply", infoReply}, {"marker:status", idle}},
			0, []string{"started", "display:late", "done:ok"}},
		{"the marker's reply and idle come in the next cell",
			[]msg{{"marker:kernel_info_reply", infoReply}, {"marker:status", idle},
				{"stream", `{"name":"stdout","text":"abcd"}`}, {"execute_reply", reply(10, 0)}, {"marker", ""}, {"marker:status", busy}},
			3, []string{"started", "stdout:abcd", dropped, lost, "done:ok"}},
		{"the marker's status lost too: the ping ends the cell",
			[]msg{{"stream", `{"name":"stdout","text":"abcd"}`}, {"execute_reply", reply(10, 0)}, {"marker", ""},
				{"marker:kernel_info_reply", infoReply}},
			2, []string{"started", "stdout:abcd", noMarker, lost, "done:ok"}},
		{"a kernel that never answers the marker",
			[]msg{{"stream", `{"name":"stdout","text":"abcd"}`}, {"execute_reply", reply(10, 0)}, {"marker", ""}},
			2, []string{"started", "stdout:abcd", noMarker, lost, "done:ok"}},
		{"a backlog trailing the reply longer than the wait, but steadily",
			[]msg{{"execute_reply", reply(4, 0)}, {"sleep", "120ms"}, {"stream", `{"name":"stdout","text":"a"}`}, {"sleep", "120ms"},
				{"stream", `{"name":"stdout","text":"b"}`}, {"sleep", "120ms"}, {"stream", `{"name":"stdout","text":"cd"}`}, {"status", idle}},
			0, []string{"started", "stdout:a", "stdout:b", "stdout:cd", "done:ok"}},
		{"a reply without the counts",
			[]msg{{"stream", `{"name":"stdout","text":"x"}`}, {"execute_reply", `{"status":"ok","execution_count":1,"user_expressions":{}}`}, {"status", idle}},
			0, []string{"started", "stdout:x", "done:ok"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := fakeKernel(t, tc.msgs, false)
			for i := range max(tc.runs, 1) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				got, _, err := run(t, k, ctx, frames.Request{ID: "c", Code: "print('x')"})
				cancel()
				if err != nil {
					t.Fatalf("cell %d: %v", i+1, err)
				}
				if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
					t.Errorf("cell %d frames:\n%s\nwant:\n%s", i+1, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
				}
			}
		})
	}
}

// Jupyter answers DELETE with 500 while its restarter brings a dead kernel
// back; the delete must be retried, or the restarted kernel runs on until
// the gateway stops.
func TestFakeDeleteRetriesWhileRestarting(t *testing.T) {
	defer func(old time.Duration) { deleteRetryFor = old }(deleteRetryFor)
	deleteRetryFor = 2 * time.Second
	cases := []struct {
		name     string
		answers  []int // status per DELETE; the last repeats
		minCalls int32
		maxCalls int32
		wantErr  bool
	}{
		{"restarting: two 500s then deleted", []int{500, 500, 204}, 3, 3, false},
		{"already gone", []int{404}, 1, 1, false},
		{"unauthorized is not retried", []int{403}, 1, 1, true},
		{"a 500 that never ends gives up", []int{500}, 2, 100, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodDelete || r.URL.Path != "/api/kernels/k1" {
					http.NotFound(w, r)
					return
				}
				n := int(calls.Add(1))
				w.WriteHeader(tc.answers[min(n, len(tc.answers))-1])
			}))
			defer srv.Close()
			c, _ := NewClient(Config{URL: srv.URL})
			err := c.deleteKernel(context.Background(), "k1")
			if n := calls.Load(); n < tc.minCalls || n > tc.maxCalls {
				t.Errorf("DELETE sent %d times, want %d..%d", n, tc.minCalls, tc.maxCalls)
			}
			if (err != nil) != tc.wantErr {
				t.Errorf("deleteKernel = %v, want error %v", err, tc.wantErr)
			}
		})
	}
}

// A URL that names something other than a gateway says so and what to set,
// on one line.
func TestFakeNotAGatewaySaysWhatToSet(t *testing.T) {
	const hint = "no Jupyter kernel gateway answers at this address; set PI_PYTHON_GATEWAY_URL"
	htmlPage := "<!DOCTYPE HTML>\n<html>\n  <body>\n    <h1>Error response</h1>\n  </body>\n</html>\n"
	cases := []struct {
		name     string
		status   int
		body     string
		wantHint bool
	}{
		{"plain web server: 501 page", http.StatusNotImplemented, htmlPage, true},
		{"wrong base path: 404", http.StatusNotFound, `{"reason": "Not Found", "message": ""}`, true},
		{"method not allowed", http.StatusMethodNotAllowed, "", true},
		{"a gateway failing: 500", http.StatusInternalServerError, "kernel spawn failed", false},
		{"bad token: 403", http.StatusForbidden, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			c, _ := NewClient(Config{URL: srv.URL})
			_, err := c.createKernel(context.Background())
			if err == nil {
				t.Fatal("createKernel succeeded")
			}
			if got := strings.Contains(err.Error(), hint); got != tc.wantHint {
				t.Errorf("error %q: hint %v, want %v", err, got, tc.wantHint)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spreads over lines: %q", err)
			}
		})
	}
	// A kernel that vanished is no reason to doubt the URL.
	he := &HTTPError{Method: "GET", URL: "http://gw/api/kernels/k1/channels", Status: 404}
	if strings.Contains(he.Error(), hint) {
		t.Errorf("channels 404 = %q, want no hint about the URL", he)
	}
}

// A gateway that accepts connections but never answers (hung, stopped) is
// reported as unreachable by the health check's bound, not after the whole
// kernel start timeout as a bare "context deadline exceeded".
func TestFakeHungGatewayIsUnreachable(t *testing.T) {
	defer func(old time.Duration) { healthTimeout = old }(healthTimeout)
	healthTimeout = 200 * time.Millisecond
	release := make(chan struct{}) // lets the hung handler return when its server closes
	defer close(release)
	cases := []struct {
		name    string
		handler http.HandlerFunc
		want    []string
	}{
		{"never answers", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}, []string{"gateway unreachable at", "GET /api/kernelspecs got no answer within 200ms"}},
		{"kernelspecs missing", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) },
			[]string{"status 404", "set PI_PYTHON_GATEWAY_URL"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			c, _ := NewClient(Config{URL: srv.URL})
			_, err := c.StartKernel(context.Background(), KernelOptions{StartTimeout: time.Minute})
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("StartKernel = %v, want it to contain %q", err, w)
				}
			}
		})
	}
}
