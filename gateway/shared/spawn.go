package shared

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/evalhost/evalhost/gateway"
)

// DefaultStartTimeout bounds the start of the shared gateway.
const DefaultStartTimeout = 60 * time.Second

// Culling of orphaned kernels (no websocket connected, no iopub message for
// cullOrphansAfter), checked every cullEvery; whole seconds.
var (
	cullOrphansAfter = 60 * time.Second
	cullEvery        = 15 * time.Second
)

// spawn starts `python -m kernel_gateway` on 127.0.0.1 with a fresh token,
// in its own session so that it outlives this process (it is shared),
// waits until it listens (on Linux on a port it chose itself; see
// gatewayPort) and then until its health check passes. Its kernels get
// their sockets in a private directory (kernelDir).
func spawn(ctx context.Context, dir, python string, env []string) (Info, error) {
	port, err := gatewayPort()
	if err != nil {
		return Info{}, err
	}
	kdir, err := kernelDir(dir)
	if err != nil {
		return Info{}, err
	}
	info, err := startGateway(ctx, dir, python, env, port, kdir)
	if err != nil {
		removeKernelDir(Info{KernelDir: kdir})
	}
	return info, err
}

// startGateway runs the gateway with its kernels' sockets in kdir.
func startGateway(ctx context.Context, dir, python string, env []string, port int, kdir string) (Info, error) {
	token := randomToken()
	logFile := logPath(dir)
	before := logSize(logFile)
	log, err := os.OpenFile(logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return Info{}, fmt.Errorf("open gateway log: %w", err)
	}
	defer log.Close()
	cmd := exec.Command(python, gatewayArgs(port)...)
	// The token goes in the environment, not argv, where ps would show it.
	// Jupyter's runtime directory is where the gateway's kernels get their
	// connection files and, with transport ipc, their sockets.
	cmd.Env = append(withoutKeys(env, "KG_AUTH_TOKEN", "JUPYTER_RUNTIME_DIR"), "KG_AUTH_TOKEN="+token, "JUPYTER_RUNTIME_DIR="+kdir)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return Info{}, fmt.Errorf("start gateway with %s: %w", python, err)
	}
	pid := cmd.Process.Pid
	spawned.add(pid)
	_ = cmd.Process.Release()
	started := time.Now().UTC()
	if port, err = listeningPort(ctx, pid, port); err != nil {
		terminate(pid, 2*time.Second)
		return Info{}, fmt.Errorf("gateway (pid %d) did not start listening: %w; its log (%s) ends:\n%s",
			pid, err, logFile, logTail(logFile, before, 2000))
	}
	info := Info{URL: "http://127.0.0.1:" + strconv.Itoa(port), PID: pid, StartedAt: started,
		PythonPath: python, VenvPath: venvOf(python), Token: token, KernelDir: kdir}
	if err := waitHealthy(ctx, info); err != nil {
		terminate(pid, 2*time.Second)
		return Info{}, fmt.Errorf("gateway %s (pid %d) did not become healthy: %w; its log (%s) ends:\n%s",
			info.URL, pid, err, logFile, logTail(logFile, before, 2000))
	}
	return info, nil
}

// gatewayArgs are the gateway's arguments: python -m kernel_gateway on
// 127.0.0.1:port, its kernels on unix sockets.
func gatewayArgs(port int) []string {
	return []string{"-m", "kernel_gateway",
		"--KernelGatewayApp.ip=127.0.0.1",
		"--KernelGatewayApp.port=" + strconv.Itoa(port),
		"--KernelGatewayApp.port_retries=0",
		// Jupyter's websocket throttles iopub at 1 MB/s and then replaces
		// output with "IOPub data rate exceeded"; evalhost bounds output
		// itself and must never lose it silently.
		"--ZMQChannelsWebsocketConnection.limit_rate=False",
		// The restarter polls kernels this often; a dead kernel is reported
		// (and its cell retried) only then. Jupyter waits 3 s.
		"--KernelRestarter.time_to_dead=0.25",
		// Deleting a kernel asks it to shut down and waits this long before
		// killing it (Jupyter: 5 s). A kernel stuck in a loop that ignores
		// SIGINT never answers, and evalhost deletes kernels only when it
		// kills or closes them, so waiting long only delays the caller.
		"--KernelManager.shutdown_wait_time=0.5",
		// An evalhost process that was killed (SIGKILL, OOM) never deletes
		// its kernels, and the shared gateway outlives it: without culling
		// they would run until `evalhost gateway stop`. evalhost keeps a
		// kernel's websocket open for the kernel's whole life, so a kernel
		// without a connection has no owner; cull it, busy or not.
		"--MappingKernelManager.cull_idle_timeout=" + strconv.Itoa(int(cullOrphansAfter/time.Second)),
		"--MappingKernelManager.cull_interval=" + strconv.Itoa(int(cullEvery/time.Second)),
		"--MappingKernelManager.cull_connected=False",
		"--MappingKernelManager.cull_busy=True",
		// Kernels talk ZMQ over unix sockets in the runtime directory
		// (JUPYTER_RUNTIME_DIR, kernelDir), which only this user may
		// enter: on TCP any local user could reach a kernel's channels.
		"--KernelManager.transport=ipc"}
}

// waitHealthy polls the health check until it passes, the pid dies or ctx ends.
func waitHealthy(ctx context.Context, info Info) error {
	c, err := gateway.NewClient(info.Config())
	if err != nil {
		return err
	}
	var last error
	for delay := 20 * time.Millisecond; ; delay = min(delay*2, 250*time.Millisecond) {
		hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		last = c.Health(hctx)
		cancel()
		if last == nil {
			return nil
		}
		if !pidAlive(info.PID) {
			return fmt.Errorf("the gateway process exited (last health check: %v)", last)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last health check: %v)", ctx.Err(), last)
		case <-time.After(delay):
		}
	}
}

// terminate sends SIGTERM to the gateway's process group, then SIGKILL when
// it has not ended within wait.
func terminate(pid int, wait time.Duration) {
	if pid <= 0 {
		return
	}
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	_ = syscall.Kill(pid, syscall.SIGTERM)
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		if !pidAlive(pid) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

func randomToken() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// venvOf is the virtual environment python belongs to, if any.
func venvOf(python string) string {
	root := filepath.Dir(filepath.Dir(python))
	if _, err := os.Stat(filepath.Join(root, "pyvenv.cfg")); err == nil {
		return root
	}
	return ""
}

func withoutKeys(env []string, keys ...string) []string {
	out := make([]string, 0, len(env))
next:
	for _, kv := range env {
		for _, k := range keys {
			if strings.HasPrefix(kv, k+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

func logSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// logTail is the last max bytes the gateway logged since offset from.
func logTail(path string, from int64, max int) string {
	raw, err := os.ReadFile(path)
	if err != nil || int64(len(raw)) < from {
		return "(no log)"
	}
	raw = raw[from:]
	if len(raw) > max {
		raw = raw[len(raw)-max:]
	}
	return string(bytes.TrimSpace(raw))
}

// spawned are the gateways this process started: they stay its children
// until it exits, so it reaps the ones that ended rather than keep zombies.
var spawned pidSet

type pidSet struct {
	mu   sync.Mutex
	pids map[int]bool
}

func (s *pidSet) add(pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pids == nil {
		s.pids = map[int]bool{}
	}
	s.pids[pid] = true
}

// reap collects the exit status of spawned gateways that ended.
func (s *pidSet) reap() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for pid := range s.pids {
		var ws syscall.WaitStatus
		if got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); got == pid || err != nil {
			delete(s.pids, pid)
		}
	}
}
