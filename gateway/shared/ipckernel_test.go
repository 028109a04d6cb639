package shared

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
)

// The shared gateway's kernels, on unix sockets, do all a kernel does:
// run cells, take interrupts through the control channel, restart through
// the gateway's endpoint (on the same socket paths), and after a death a
// new kernel takes over, as evalhost's sessions replace one.
func TestIPCKernelExecuteInterruptRestart(t *testing.T) {
	needGateway(t)
	checkLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	k := testKernel(t, ctx)

	if out := cell(t, k, "x = 41\nprint(x + 1)"); out != "42\n" {
		t.Fatalf("cell printed %q, want 42", out)
	}

	// evalhost interrupts a cell whose context ends: through the control
	// channel, the kernel killed only if the cell outlives its grace.
	cctx, stop := context.WithCancel(ctx)
	var ename string
	done, err := k.Execute(cctx, frames.Request{ID: "sleep", Code: "import time; time.sleep(60)"}, func(f frames.Frame) {
		switch f.Type {
		case frames.TypeStarted:
			stop()
		case frames.TypeError:
			ename = f.Ename
		}
	})
	stop()
	if err != nil || !done.Cancelled || ename != "KeyboardInterrupt" {
		t.Fatalf("interrupted cell: %v, done %+v, error %q; want it cancelled with KeyboardInterrupt", err, done, ename)
	}
	if out := cell(t, k, "print(x)"); out != "41\n" {
		t.Fatalf("after the interrupt the kernel printed %q, want its state (41)", out)
	}

	// The restarted kernel binds the same socket paths, and the gateway's
	// channels reconnect to them. Output the kernel sends before iopub's
	// subscription is back is dropped (so it is over TCP too): the check
	// runs until its output arrives.
	before := strings.TrimSpace(cell(t, k, "import os; print(os.getpid())"))
	restartKernel(ctx, t, k.ID())
	var after string
	for after == "" && ctx.Err() == nil {
		after = strings.TrimSpace(cell(t, k, "import os; print(os.getpid(), 'x' in dir())"))
	}
	if pid, _, _ := strings.Cut(after, " "); pid == before || !strings.HasSuffix(after, " False") {
		t.Errorf("after the restart the kernel printed %q; want another pid than %s, and no x", after, before)
	}

	// A kernel that dies is reported lost; a new one takes over.
	_, err = k.Execute(ctx, frames.Request{ID: "die", Code: "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"}, func(frames.Frame) {})
	var death *backend.DeathError
	if !errors.As(err, &death) {
		t.Fatalf("cell that killed its kernel: %v; want the kernel reported lost", err)
	}
	k2 := testKernel(t, ctx)
	if out := cell(t, k2, "print(1 + 1)"); out != "2\n" {
		t.Errorf("the new kernel printed %q, want 2", out)
	}
}

// restartKernel restarts kernel id through the gateway's REST endpoint,
// which answers once the restarted kernel replied to kernel_info over its
// (ipc) shell channel.
func restartKernel(ctx context.Context, t *testing.T, id string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, testEP.URL+"/api/kernels/"+id+"/restart", strings.NewReader("{}"))
	req.Header.Set("Authorization", "token "+testEP.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("restart kernel %s: %s", id, resp.Status)
	}
}
