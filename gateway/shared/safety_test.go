package shared

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/gateway"
)

// inUseGateway is a fresh home's gateway with a kernel on it holding state,
// standing for another evalhost process's work.
type inUseGateway struct {
	home string
	ep   *Endpoint
	k    *gateway.Kernel
}

func startInUse(t *testing.T) inUseGateway {
	t.Helper()
	home := freshHome(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ep, err := Acquire(ctx, home, testPython)
	if err != nil {
		t.Fatal(err)
	}
	k := kernelOn(t, ctx, ep)
	if out := cell(t, k, "x = 41"); out != "" {
		t.Fatalf("x = 41 printed %q", out)
	}
	return inUseGateway{home: home, ep: ep, k: k}
}

// intact fails t unless the gateway still runs as it was and its kernel
// kept its state.
func (g inUseGateway) intact(t *testing.T) {
	t.Helper()
	if !isGateway(g.ep.Info) {
		t.Fatalf("the gateway in use (pid %d) was ended", g.ep.PID)
	}
	if out := cell(t, g.k, "print(x + 1)"); out != "42\n" {
		t.Errorf("the kernel in use printed %q after, want its state kept (42)", out)
	}
}

// cell runs code and returns its stdout.
func cell(t *testing.T, k *gateway.Kernel, code string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out strings.Builder
	done, err := k.Execute(ctx, frames.Request{ID: "c", Code: code}, func(f frames.Frame) {
		if f.Type == frames.TypeStdout {
			out.WriteString(f.Data)
		}
	})
	if err != nil || done.Status != frames.StatusOK {
		t.Fatalf("cell %q: %v %s %s", code, err, done.Ename, done.Evalue)
	}
	return out.String()
}

// wrapper is an interpreter path of its own that runs testPython with
// flags: another venv, as far as the coordinator can tell.
func wrapper(t *testing.T, flags string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "python")
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexec "+testPython+" "+flags+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// A process with another interpreter gets a gateway of its own, or an
// error when its interpreter cannot run one; either way the gateway in use
// keeps running with its kernels.
func TestOtherInterpreterLeavesGatewayInUse(t *testing.T) {
	cases := []struct {
		name    string
		flags   string // for the other interpreter
		wantErr error
	}{
		{"interpreter without kernel_gateway", "-I -S", nil},
		{"interpreter with kernel_gateway", "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := startInUse(t)
			other := wrapper(t, tc.flags)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			ep, err := AcquireWith(ctx, g.home, other, AcquireOptions{StartTimeout: 30 * time.Second})
			if tc.flags != "" {
				if err == nil {
					t.Fatalf("Acquire with %s started %+v; want an error", tc.name, ep.Info)
				}
			} else {
				if err != nil {
					t.Fatalf("Acquire with another interpreter: %v", err)
				}
				if ep.PID == g.ep.PID || ep.Reused || ep.PythonPath != other {
					t.Errorf("Acquire with another interpreter = %+v; want a gateway of its own", ep.Info)
				}
				if st, err := Status(ctx, g.home); err != nil || len(st) != 2 {
					t.Errorf("Status = %+v, %v; want both gateways", st, err)
				}
			}
			g.intact(t)
			again, err := Acquire(ctx, g.home, testPython)
			if err != nil || again.PID != g.ep.PID || !again.Reused {
				t.Errorf("Acquire with the first interpreter again = %+v, %v; want the gateway in use", again, err)
			}
		})
	}
}

// A gateway.json whose token the gateway rejects is an error for this
// caller; the gateway, which other processes may hold the right token for,
// keeps running.
func TestRejectedTokenLeavesGatewayInUse(t *testing.T) {
	g := startInUse(t)
	dir := dirFor(g.home, testPython)
	wrong := g.ep.Info
	wrong.Token = "not-the-token"
	if err := writeInfo(dir, wrong); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ep, err := Acquire(ctx, g.home, testPython)
	var iu *InUseError
	if !errors.As(err, &iu) || !errors.Is(err, ErrInUse) || !errors.Is(err, gateway.ErrUnauthorized) {
		t.Fatalf("Acquire with a rejected token = %+v, %v; want an *InUseError matching ErrUnauthorized", ep, err)
	}
	if iu.Info.PID != g.ep.PID || iu.Info.Token != "" || !strings.Contains(err.Error(), "evalhost gateway stop") {
		t.Errorf("error %q (info %+v): want the gateway's pid, no token, and how to replace it", err, iu.Info)
	}
	g.intact(t)
}

// A gateway that stalls past one health check (a flood, CPU starvation,
// here SIGSTOP) is checked again, and reused once it answers.
func TestStalledGatewayIsRetriedNotReplaced(t *testing.T) {
	g := startInUse(t)
	if err := syscall.Kill(g.ep.PID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(g.ep.PID, syscall.SIGCONT) })
	retried := make(chan error, len(healthAttempts))
	onHealthRetry = func(err error) { retried <- err }
	defer func() { onHealthRetry = nil }()
	type result struct {
		ep  *Endpoint
		err error
	}
	got := make(chan result, 1)
	go func() {
		ep, err := Acquire(context.Background(), g.home, testPython)
		got <- result{ep, err}
	}()
	var r result
	select {
	case err := <-retried:
		t.Logf("first health check of the stopped gateway: %v", err)
		if err := syscall.Kill(g.ep.PID, syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		r = <-got
	case r = <-got:
		t.Errorf("Acquire returned before checking the stopped gateway again")
	}
	if r.err != nil || r.ep.PID != g.ep.PID || !r.ep.Reused {
		t.Errorf("Acquire over a stalled gateway = %+v, %v; want it reused (pid %d)", r.ep, r.err, g.ep.PID)
	}
	g.intact(t)
}

// A kernel's environment is its own caller's: a process that did not start
// the shared gateway sees none of the starter's variables, and a caller
// without PATH has none in its kernel, nor the LC_CTYPE that Python, started
// without a locale, sets for itself.
func TestKernelEnvIsItsCallers(t *testing.T) {
	home := freshHome(t)
	base := slices.Clip(withoutVars(os.Environ(), "FOO", "LC_CTYPE")) // each case appends its own
	code := `import os; print(os.environ.get("FOO"), "PATH" in os.environ, os.environ.get("LC_CTYPE"))`
	cases := []struct {
		name string
		env  []string
		want string
	}{
		{"starter with FOO", append(base, "FOO=a"), "a True None\n"},
		{"later process without FOO", base, "None True None\n"},
		{"later process without PATH", withoutVars(base, "PATH"), "None False None\n"},
		{"later process with LC_CTYPE", append(base, "LC_CTYPE=C"), "None True C\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := helper(home, testPython, "cell", "EVALHOST_SHARED_TEST_CODE="+code)
			cmd.Env = append(withoutVars(cmd.Env, "FOO", "PATH", "LC_CTYPE"), tc.env...)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("helper: %v: %s", err, stderrOf(err))
			}
			_, printed, _ := strings.Cut(string(out), "\n") // after the "kernel <id>" line
			if printed != tc.want {
				t.Errorf("cell printed %q, want %q", printed, tc.want)
			}
		})
	}
}

// withoutVars drops names from env.
func withoutVars(env []string, names ...string) []string {
	var out []string
next:
	for _, kv := range env {
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

func stderrOf(err error) string {
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		return string(xe.Stderr)
	}
	return ""
}

// Concurrent callers in one process share one acquisition: one start, whose
// endpoint they all get, rather than one start and a queue at the lock.
func TestConcurrentAcquiresShareOneStart(t *testing.T) {
	home := freshHome(t)
	const n = 4
	type result struct {
		ep  *Endpoint
		err error
	}
	results := make(chan result, n)
	for range n {
		go func() {
			ep, err := Acquire(context.Background(), home, testPython)
			results <- result{ep, err}
		}()
	}
	var pids []int
	for range n {
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		ep := r.ep
		if ep.Reused {
			t.Errorf("a caller waited at the lock and reused %+v instead of sharing the start", ep.Info)
		}
		pids = append(pids, ep.PID)
	}
	for _, pid := range pids[1:] {
		if pid != pids[0] {
			t.Errorf("concurrent callers got gateways %v, want one", pids)
			break
		}
	}
}

// Only the gateway's own fd exhaustion restarts it: this process running
// out is not cured by ending every other process's kernels.
func TestRestartOnlyForTheGatewaysExhaustion(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"gateway 500 naming EMFILE", fmt.Errorf("start kernel: %w",
			&gateway.HTTPError{Status: 500, Body: "OSError: [Errno 24] Too many open files"}), true},
		{"local EMFILE", &net.OpError{Op: "dial", Err: os.NewSyscallError("socket", syscall.EMFILE)}, false},
		{"gateway 500 otherwise", &gateway.HTTPError{Status: 500, Body: "boom"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := restartHelps(tc.err); got != tc.want {
				t.Errorf("restartHelps(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
