package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
)

// bridgeCall is what a stand-in bridge received.
type bridgeCall struct {
	Auth               string
	Session, Run, Name string
	Args               map[string]any
	abandoned          bool
}

// fakeBridge answers /v1/tool as the bridge does, echoing args; the tool
// "block" waits until its request is abandoned. The real bridge and the
// real tools are end to end in tests/ and tests/remote.
func fakeBridge(t *testing.T) (*httptest.Server, chan bridgeCall, chan struct{}) {
	calls := make(chan bridgeCall, 16)
	blocking := make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var c bridgeCall
		_ = json.Unmarshal(raw, &c)
		c.Auth = r.Header.Get("Authorization")
		if c.Name == "block" {
			blocking <- struct{}{}
			<-r.Context().Done()
			c.abandoned = true
			calls <- c
			return
		}
		calls <- c
		value, _ := json.Marshal(map[string]any{"ok": true, "value": c.Args})
		w.Header().Set("Content-Type", "application/json")
		w.Write(value)
	}))
	t.Cleanup(srv.Close)
	return srv, calls, blocking
}

func bridgeKernel(t *testing.T, url string) *Kernel {
	return ownKernel(t, KernelOptions{NoPrelude: false, Env: map[string]*string{
		envBridgeURL: ptr(url), envBridgeToken: ptr("real-secret-token"), envBridgeSession: ptr("sess-1")}})
}

// A call travels over the kernel's channel, as the running cell in the
// kernel's session whatever the kernel claims, with the token only
// evalhost holds.
func TestToolCallOverKernelChannel(t *testing.T) {
	srv, calls, _ := fakeBridge(t)
	k := bridgeKernel(t, srv.URL)
	got, _, err := run(t, k, context.Background(), frames.Request{ID: "c1", Run: "run-1", Code: `import os
print(os.environ["PI_TOOL_BRIDGE_URL"], os.environ["PI_TOOL_BRIDGE_TOKEN"])
os.environ["EVALHOST_RUN"] = "forged-run"
os.environ["PI_TOOL_BRIDGE_SESSION"] = "other-session"
print(tool.echo(a=1))`})
	if err != nil {
		t.Fatal(err)
	}
	want := "stdout:" + kernelChannelURL + " " + kernelChannelToken + "\n"
	if all := strings.Join(got, ""); !strings.Contains(all, want) || !strings.Contains(all, "{'a': 1}") {
		t.Errorf("frames %q, want the stand-ins (%q) and the tool's value", got, want)
	}
	select {
	case c := <-calls:
		if c.Auth != "Bearer real-secret-token" || c.Run != "run-1" || c.Session != "sess-1" || c.Name != "echo" {
			t.Errorf("bridge got %+v, want the real token, run-1, sess-1, echo", c)
		}
	default:
		t.Fatal("the bridge got no call")
	}
}

// A cell stopped while its tool call waits ends within the grace, and the
// call is abandoned (its context cancelled) when the cell ends.
func TestToolCallAbandonedWhenCellEnds(t *testing.T) {
	srv, calls, blocking := fakeBridge(t)
	k := bridgeKernel(t, srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []string
	go func() {
		// The call waiting in the bridge is the moment to cancel.
		select {
		case <-blocking:
			cancel()
		case <-ctx.Done():
		}
	}()
	done, err := k.Execute(ctx, frames.Request{ID: "c2", Run: "run-2", Code: "tool.block()"}, func(f frames.Frame) {
		got = append(got, summary(f))
	})
	if err != nil {
		t.Fatalf("Execute = %v (%q), want the cell interrupted in its tool call", err, got)
	}
	if !done.Cancelled || !strings.Contains(strings.Join(got, "\n"), "KeyboardInterrupt") {
		t.Errorf("done %+v, frames %q: want cancelled with KeyboardInterrupt", done, got)
	}
	select {
	case c := <-calls:
		if !c.abandoned {
			t.Errorf("call %+v not abandoned", c)
		}
	case <-time.After(10 * time.Second):
		t.Error("the blocked call was not abandoned when its cell ended")
	}
	// The kernel and its channel still work.
	got, _, err = run(t, k, context.Background(), frames.Request{ID: "c3", Run: "run-3", Code: "print(tool.echo(b=2))"})
	if err != nil || !strings.Contains(strings.Join(got, ""), "{'b': 2}") {
		t.Errorf("after the abandoned call: %q %v", got, err)
	}
}

// A call made while none of the kernel's cells runs (a thread a finished
// cell left behind) is refused, not run as some later cell's.
func TestToolCallRefusedBetweenCells(t *testing.T) {
	srv, calls, _ := fakeBridge(t)
	k := bridgeKernel(t, srv.URL)
	gate := filepath.Join(t.TempDir(), "go")
	code := `import threading, os, time
r = []
def later():
    while not os.path.exists(` + pyString(gate) + `):
        time.sleep(0.01)
    try:
        r.append(tool.echo(c=3))
    except Exception as e:
        r.append(str(e))
th = threading.Thread(target=later)
th.start()`
	if _, done, err := run(t, k, context.Background(), frames.Request{ID: "b1", Run: "run-b1", Code: code}); err != nil || done.Status != frames.StatusOK {
		t.Fatalf("first cell: %+v %v", done, err)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// The call is in once its message is queued: no cell reads it yet.
	deadline := time.Now().Add(10 * time.Second)
	for len(k.in) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the thread's call never arrived")
		}
		time.Sleep(5 * time.Millisecond)
	}
	got, _, err := run(t, k, context.Background(), frames.Request{ID: "b2", Run: "run-b2", Code: "th.join(); print(r)"})
	if err != nil || !strings.Contains(strings.Join(got, ""), "no cell of this kernel is running") {
		t.Errorf("second cell: %q %v, want the thread's call refused", got, err)
	}
	select {
	case c := <-calls:
		t.Errorf("the bridge got %+v, want no call", c)
	default:
	}
}
