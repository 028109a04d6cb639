package shared

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/gateway"
	"github.com/evalhost/evalhost/internal/testkit"
)

// freshHome is an evalhost home whose gateway, if the test starts one, is
// stopped at the end.
func freshHome(t *testing.T) string {
	t.Helper()
	needGateway(t)
	home := t.TempDir()
	checkLeaks(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := Stop(ctx, home); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return home
}

func TestTwoProcessesShareOneGateway(t *testing.T) {
	home := freshHome(t)
	var cmds [2]*exec.Cmd
	var outs [2]strings.Builder
	for i := range cmds {
		cmds[i] = helper(home, testPython, "acquire")
		cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	var eps [2]Endpoint
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper %d: %v: %s", i, err, outs[i].String())
		}
		if err := json.Unmarshal([]byte(outs[i].String()), &eps[i]); err != nil {
			t.Fatalf("helper %d printed %q: %v", i, outs[i].String(), err)
		}
	}
	if eps[0].PID != eps[1].PID || eps[0].URL != eps[1].URL {
		t.Errorf("two gateways: %+v and %+v", eps[0].Info, eps[1].Info)
	}
	if eps[0].Reused == eps[1].Reused {
		t.Errorf("want exactly one process to start the gateway, Reused = %v, %v", eps[0].Reused, eps[1].Reused)
	}
}

func TestKilledGatewayRecoveredAndStatusStop(t *testing.T) {
	home := freshHome(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if st, err := Status(ctx, home); err != nil || len(st) != 0 {
		t.Fatalf("Status before start = %+v, %v; want nothing recorded", st, err)
	}
	first, err := Acquire(ctx, home, testPython)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(infoPath(dirFor(home, testPython)))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("gateway.json mode = %v, %v; want 0600", fi.Mode(), err)
	}
	st, err := Status(ctx, home)
	if err != nil || len(st) != 1 || !st[0].Running || !st[0].Healthy || st[0].Info.Token != "" || st[0].Info.PID != first.PID {
		t.Errorf("Status of running gateway = %+v, %v", st, err)
	}
	if err := syscall.Kill(first.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitDead(t, first.PID)
	if st, _ := Status(ctx, home); len(st) != 1 || st[0].Healthy || st[0].Running {
		t.Errorf("Status after kill = %+v, want one, not running", st)
	}
	second, err := Acquire(ctx, home, testPython)
	if err != nil {
		t.Fatalf("Acquire after kill: %v", err)
	}
	if second.Reused || second.PID == first.PID {
		t.Errorf("Acquire after kill reused %+v", second.Info)
	}
	c, _ := gateway.NewClient(second.Config())
	if err := c.Health(ctx); err != nil {
		t.Errorf("new gateway unhealthy: %v", err)
	}
	if stopped, err := Stop(ctx, home); err != nil || !slices.Equal(stopped, []int{second.PID}) {
		t.Fatalf("Stop = %v, %v; want it to say it stopped pid %d", stopped, err, second.PID)
	}
	waitDead(t, second.PID)
	if stopped, err := Stop(ctx, home); err != nil || len(stopped) != 0 {
		t.Errorf("Stop with none running = %v, %v; want nothing stopped", stopped, err)
	}
	if st, err := Status(ctx, home); err != nil || len(st) != 0 {
		t.Errorf("Status after Stop = %+v, %v", st, err)
	}
}

func waitDead(t *testing.T, pid int) {
	t.Helper()
	for i := 0; i < 500 && pidAlive(pid); i++ {
		spawned.reap()
		time.Sleep(20 * time.Millisecond)
	}
	if pidAlive(pid) {
		t.Fatalf("pid %d still alive", pid)
	}
}

// deadPID is the pid of a process that has exited.
func deadPID(t *testing.T) int {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestLockTakeover(t *testing.T) {
	needGateway(t)
	old := time.Now().Add(-time.Hour).UnixMilli()
	cases := []struct {
		name     string
		lock     lockState
		takeOver bool
	}{
		{"dead pid", lockState{PID: deadPID(t), Heartbeat: time.Now().UnixMilli()}, true},
		{"stale heartbeat", lockState{PID: os.Getpid(), Heartbeat: old}, true},
		{"live holder", lockState{PID: os.Getpid(), Heartbeat: time.Now().UnixMilli()}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw, _ := json.Marshal(tc.lock)
			lock := lockPath(dirFor(testHome, testPython))
			if err := os.WriteFile(lock, raw, 0o600); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(lock)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			ep, err := Acquire(ctx, testHome, testPython)
			if tc.takeOver {
				if err != nil || ep.PID != testEP.PID || !ep.Reused {
					t.Errorf("Acquire over a %s lock = %+v, %v; want the running gateway", tc.name, ep, err)
				}
				return
			}
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), fmt.Sprintf("held by pid %d", os.Getpid())) {
				t.Errorf("Acquire under a live lock: %v; want a timeout naming the holder", err)
			}
		})
	}
}

func TestRequireShared(t *testing.T) {
	if err := RequireShared(true); err != nil {
		t.Errorf("RequireShared(true) = %v", err)
	}
	err := RequireShared(false)
	if !errors.Is(err, ErrSharedRequired) || err.Error() != "Shared Python gateway required; local gateways are disabled" {
		t.Errorf("RequireShared(false) = %v", err)
	}
}

func TestCheckNamesPipCommand(t *testing.T) {
	skipReason := setupOnce.Run(setupGateway)
	if testPython == "" {
		t.Skip("no python: " + skipReason)
	}
	// An interpreter without site-packages stands in for one that lacks them.
	bare := filepath.Join(t.TempDir(), "python-bare")
	script := "#!/bin/sh\nexec " + testPython + " -I -S \"$@\"\n"
	if err := os.WriteFile(bare, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	err := Check(context.Background(), bare)
	var me *MissingPackagesError
	if !errors.As(err, &me) || !errors.Is(err, ErrMissingPackages) {
		t.Fatalf("Check(bare) = %v, want *MissingPackagesError", err)
	}
	if !strings.Contains(err.Error(), bare+" -m pip install jupyter_kernel_gateway ipykernel") ||
		!strings.Contains(err.Error(), "kernel_gateway") {
		t.Errorf("message %q lacks the pip command", err)
	}
	if err := Check(context.Background(), filepath.Join(t.TempDir(), "no-python")); err == nil || errors.Is(err, ErrMissingPackages) {
		t.Errorf("Check(missing interpreter) = %v, want a plain error", err)
	}
	needGateway(t)
	if err := Check(context.Background(), testPython); err != nil {
		t.Errorf("Check(real) = %v", err)
	}
}

func TestRealGatewayRejectsWrongToken(t *testing.T) {
	needGateway(t)
	c, err := gateway.NewClient(gateway.Config{URL: testEP.URL, Token: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Health(context.Background())
	if !errors.Is(err, gateway.ErrUnauthorized) || !strings.Contains(err.Error(), "PI_PYTHON_GATEWAY_TOKEN") {
		t.Errorf("Health with a wrong token = %v, want ErrUnauthorized naming PI_PYTHON_GATEWAY_TOKEN", err)
	}
}

// A kernel whose evalhost was killed (its websocket gone, no DELETE) is
// culled by the shared gateway, busy or idle; a connected one is kept.
func TestOrphanedKernelsCulled(t *testing.T) {
	defer func(after, every time.Duration) { cullOrphansAfter, cullEvery = after, every }(cullOrphansAfter, cullEvery)
	// Not 1 s: the culler also takes a kernel that is still starting (not
	// yet connected) for an idle orphan, and on a loaded 2-core machine the
	// kept kernel's websocket came more than a second after its create, so
	// it was culled before it connected (the dial failed in every run at
	// load ~8).
	cullOrphansAfter, cullEvery = 5*time.Second, time.Second
	home := freshHome(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ep, err := Acquire(ctx, home, testPython)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := gateway.NewClient(ep.Config())
	exists := func(id string) bool {
		req, _ := http.NewRequestWithContext(ctx, "GET", ep.URL+"/api/kernels/"+id, nil)
		req.Header.Set("Authorization", "token "+ep.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET kernel %s: %v", id, err)
		}
		resp.Body.Close()
		return resp.StatusCode != http.StatusNotFound
	}
	kept, err := c.StartKernel(ctx, gateway.KernelOptions{NoPrelude: true})
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	cases := []struct{ name, code string }{
		{"idle orphan", "pass"},
		{"busy orphan", "import time; time.sleep(1000)"},
	}
	var orphans []string
	for _, tc := range cases {
		// What a SIGKILLed evalhost leaves: the socket closes, nothing is deleted.
		id := killedMidCell(t, home, tc.code)
		orphans = append(orphans, id)
	}
	for i, tc := range cases {
		for exists(orphans[i]) {
			select {
			case <-ctx.Done():
				t.Fatalf("%s %s was never culled", tc.name, orphans[i])
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	if !exists(kept.ID()) {
		t.Errorf("the connected kernel %s was culled too", kept.ID())
	}
}

// killedMidCell runs code in a kernel of another process, which is
// SIGKILLed once the cell has started (or, for a quick cell, has ended),
// and returns the kernel's id.
func killedMidCell(t *testing.T, home, code string) string {
	t.Helper()
	cmd := helper(home, testPython, "cell", "EVALHOST_SHARED_TEST_CODE="+code, "EVALHOST_SHARED_TEST_HANG=1")
	out, stderr := testkit.StartPiped(t, cmd)
	line, _ := bufio.NewReader(out).ReadString('\n')
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	id, ok := strings.CutPrefix(strings.TrimSpace(line), "kernel ")
	if !ok {
		t.Fatalf("helper printed %q: %s", line, stderr.String())
	}
	return id
}

// gateway.json outlives reboots, and its pid may then name any process:
// Status, Stop and Acquire must not take it for the gateway, let alone
// signal it.
func TestRecordedPidReusedIsLeftAlone(t *testing.T) {
	home := freshHome(t)
	cases := []struct {
		name string
		op   func(ctx context.Context) error
	}{
		{"status", func(ctx context.Context) error {
			st, err := Status(ctx, home)
			if err == nil && (len(st) != 1 || st[0].Running) {
				return fmt.Errorf("Status = %+v, want not running", st)
			}
			return err
		}},
		{"stop", func(ctx context.Context) error {
			stopped, err := Stop(ctx, home)
			if err == nil && len(stopped) != 0 {
				return fmt.Errorf("Stop = %v, want nothing stopped: none ran", stopped)
			}
			return err
		}},
		{"acquire", func(ctx context.Context) error {
			ep, err := Acquire(ctx, home, testPython)
			if err == nil && ep.Reused {
				return fmt.Errorf("Acquire reused %+v", ep.Info)
			}
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			other := exec.Command("sleep", "600")
			other.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if err := other.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- other.Wait() }()
			defer func() { _ = other.Process.Kill(); <-exited }()
			dir := dirFor(home, testPython)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := writeInfo(dir, Info{URL: "http://127.0.0.1:1", PID: other.Process.Pid, PythonPath: testPython, Token: "x"}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if err := tc.op(ctx); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-exited:
				exited <- err // for the deferred wait
				t.Fatalf("the unrelated process with the recorded pid was ended: %v", err)
			default:
			}
		})
	}
}
