package bridge

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/testkit"
)

// A command that succeeded leaves its background processes that do not
// hold its output running, as without a reaper, until they end (the next
// call lets go of their reaper) or the tools are closed (they are killed).
func TestCommandLeftoversLinger(t *testing.T) {
	testkit.Clean(t, time.Minute)
	dir := t.TempDir()
	bg := func(file string) string {
		return `sleep 300 >/dev/null 2>&1 & echo $! > ` + filepath.Join(dir, file) + `; echo ok`
	}
	tools := CommandTools(map[string]string{"bga": bg("a"), "bgb": bg("b"), "noop": `true`}).(*commandTools)
	call := func(name string) {
		t.Helper()
		if _, err := tools.Call(context.Background(), Call{Name: name, Args: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	pidOf := func(file string) int {
		b, err := os.ReadFile(filepath.Join(dir, file))
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			t.Fatalf("pid file %s: %q %v", file, b, err)
		}
		return pid
	}

	call("bga")
	a := pidOf("a")
	if !alive(a) {
		t.Fatalf("the background process %d of a call that succeeded was ended with the call", a)
	}
	syscall.Kill(a, syscall.SIGKILL)
	if !gone(a) {
		t.Fatalf("process %d did not end", a)
	}
	call("noop")
	tools.mu.Lock()
	n := len(tools.lingering)
	tools.mu.Unlock()
	if n != 0 {
		t.Errorf("%d calls still held after their processes ended; the next call should let go of them", n)
	}

	call("bgb")
	b := pidOf("b")
	if err := io.Closer(tools).Close(); err != nil {
		t.Fatal(err)
	}
	if alive(b) {
		syscall.Kill(b, syscall.SIGKILL)
		t.Errorf("process %d left by a tool outlived Close", b)
	}
	tools.Close() // twice is fine
}

// A process that has ended is not a leftover, though its parent has not
// reaped it yet (the reaper reaps on SIGCHLD, after the kill): here the
// parent never reaps, so the zombie stays listed below it.
func TestDescendantsSkipsEnded(t *testing.T) {
	testkit.Clean(t, time.Minute)
	cmd := exec.Command("sh", "-c", `sleep 300 >/dev/null 2>&1 & echo $!; exec sleep 301`)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	kid, _ := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || kid <= 0 {
		t.Fatalf("child pid: %q %v", line, err)
	}
	if n, ok := descendants(cmd.Process.Pid); !ok || n != 1 {
		t.Fatalf("descendants with one child running = %d, %v; want 1, true", n, ok)
	}
	syscall.Kill(kid, syscall.SIGKILL)
	if !gone(kid) {
		t.Fatalf("process %d did not end", kid)
	}
	if n, ok := descendants(cmd.Process.Pid); !ok || n != 0 {
		t.Errorf("descendants with only an ended (zombie) child = %d, %v; want 0, true", n, ok)
	}
}
