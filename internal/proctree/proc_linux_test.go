package proctree

import (
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// A child is listed below its parent and is running; killed, it has ended
// while still unreaped (a zombie), and once reaped it is gone and ended.
func TestChildrenAndEnded(t *testing.T) {
	cmd := exec.Command("sleep", "1000")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	if kids, ok := Children(os.Getpid()); ok && !slices.Contains(kids, pid) {
		t.Errorf("Children(self) = %v, want it to hold %d", kids, pid)
	}
	if Ended(pid) {
		t.Fatalf("Ended(%d) for a running sleep", pid)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Wait for the exit without reaping it, so the zombie is what Ended sees.
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			if err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if !Ended(pid) {
		t.Errorf("Ended(%d) false for a killed, unreaped child", pid)
	}
	_ = cmd.Wait()
	if !Ended(pid) {
		t.Errorf("Ended(%d) false once reaped", pid)
	}
	if kids, _ := Children(pid); kids != nil {
		t.Errorf("Children of a gone process = %v, want none", kids)
	}
}
