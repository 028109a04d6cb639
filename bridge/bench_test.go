package bridge

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/testkit"
)

// trivial answers every call with a constant.
var trivial = ToolsFunc(func(context.Context, Call) (json.RawMessage, error) {
	return json.RawMessage(`{"ok":1}`), nil
})

// bareServer is the anchor: plain net/http on loopback that reads the body and
// writes a constant reply, with none of the bridge's checks.
func bareServer(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true,"value":{"ok":1}}`+"\n")
	})}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(ln) }()
	b.Cleanup(func() { srv.Close(); <-done })
	return "http://" + ln.Addr().String()
}

func p50(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

func report(b *testing.B, name string, got, anchor []time.Duration) {
	g, a := p50(got), p50(anchor)
	b.ReportMetric(float64(g.Microseconds()), name+"-p50-µs")
	b.ReportMetric(float64(a.Microseconds()), "anchor-p50-µs")
	b.ReportMetric(float64(g)/float64(a), "ratio")
}

func post(b *testing.B, c *http.Client, url, token, body string) {
	req, _ := http.NewRequest("POST", url+Path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("status %d", resp.StatusCode)
	}
}

// BenchmarkGoRoundTrip: a call from a keep-alive Go client through the bridge
// to a trivial Tools, interleaved with the same request to bare net/http.
func BenchmarkGoRoundTrip(b *testing.B) {
	s := New(trivial, Options{})
	defer s.Close()
	env, err := s.Env()
	if err != nil {
		b.Fatal(err)
	}
	s.RunHook("s", "r", true)
	anchor := bareServer(b)
	c := &http.Client{Transport: &http.Transport{}}
	body := `{"session":"s","run":"r","name":"echo","args":{"i":1}}`
	post(b, c, env[EnvURL], env[EnvToken], body)
	post(b, c, anchor, "x", body)
	got, base := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		post(b, c, env[EnvURL], env[EnvToken], body)
		t1 := time.Now()
		post(b, c, anchor, "x", body)
		got, base = append(got, t1.Sub(t0)), append(base, time.Since(t1))
	}
	report(b, "bridge", got, base)
}

// BenchmarkPythonRoundTrip: a call from Python through the proposed prelude
// helper (keep-alive http.client) to a trivial Tools, and to a Relay answered
// by a goroutine (serve's path minus its stdio), each interleaved with a bare
// http.client request to plain net/http. Latencies are taken in Python.
func BenchmarkPythonRoundTrip(b *testing.B) {
	b.Run("trivial", func(b *testing.B) { pythonRoundTrip(b, trivial) })
	b.Run("relay", func(b *testing.B) {
		calls := make(chan string, 16)
		relay := NewRelay(func(id string, c Call) error { calls <- id; return nil }, nil)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for id := range calls {
				relay.Resolve(id, true, json.RawMessage(`{"ok":1}`), "")
			}
		}()
		defer func() { close(calls); <-done }()
		pythonRoundTrip(b, relay)
	})
}

func pythonRoundTrip(b *testing.B, tools Tools) {
	py := testkit.Python(b)
	s := New(tools, Options{})
	defer s.Close()
	env, err := s.Env()
	if err != nil {
		b.Fatal(err)
	}
	s.RunHook("s", "r", true)
	anchor := bareServer(b)
	n := max(b.N, 200)
	cmd := exec.Command(py, "testdata/bench_client.py", helperFile(b), itoa(n), anchor)
	cmd.Env = append(os.Environ(), EnvURL+"="+env[EnvURL], EnvToken+"="+env[EnvToken], EnvSession+"=s", EnvRun+"=r")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatal(err)
	}
	var res struct{ Helper, Bare []int64 }
	if err := json.Unmarshal(out, &res); err != nil {
		b.Fatal(err)
	}
	report(b, "bridge", durations(res.Helper), durations(res.Bare))
}

// BenchmarkCommandTool: a trivial --tool (`cat`) called through CommandTools,
// interleaved with the anchor of running `sh -c cat` directly.
func BenchmarkCommandTool(b *testing.B) {
	tools := CommandTools(map[string]string{"echo": "cat"})
	call := Call{Session: "s", Run: "r", Name: "echo", Args: json.RawMessage(`{"i":1}`)}
	got, base := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
	for b.Loop() {
		t0 := time.Now()
		if _, err := tools.Call(context.Background(), call); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		cmd := exec.Command("sh", "-c", "cat")
		cmd.Stdin = strings.NewReader(`{"i":1}`)
		if _, err := cmd.Output(); err != nil {
			b.Fatal(err)
		}
		got, base = append(got, t1.Sub(t0)), append(base, time.Since(t1))
	}
	report(b, "tool", got, base)
}

func durations(ns []int64) []time.Duration {
	d := make([]time.Duration, len(ns))
	for i, v := range ns {
		d[i] = time.Duration(v)
	}
	return d
}

func itoa(n int) string { return strconv.Itoa(n) }
