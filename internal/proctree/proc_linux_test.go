package proctree

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/evalhost/evalhost/internal/testkit"
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

// A process whose leader thread exited while another thread runs has not
// ended: its state field says zombie, and a caller counting what a tool
// command left running must still count it.
func TestZombieLeaderWithALiveThreadHasNotEnded(t *testing.T) {
	cmd, stdin := testkit.StartLeaderExits(t, "")
	pid := cmd.Process.Pid
	// Await the leader's exit: its state field turns Z while the thread runs.
	for deadline := time.Now().Add(time.Minute); leaderState(pid) != 'Z'; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("leader of %d never exited (state %q)", pid, leaderState(pid))
		}
	}
	if Ended(pid) {
		t.Fatalf("Ended(%d) with its second thread still running", pid)
	}
	stdin.Close() // the thread exits the process
	var info unix.Siginfo
	for {
		if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != unix.EINTR {
			if err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if !Ended(pid) {
		t.Errorf("Ended(%d) false once every thread exited", pid)
	}
}

// leaderState is the state field of pid's leader, as Ended reads it.
func leaderState(pid int) byte {
	st, _ := stateOf("/proc/" + strconv.Itoa(pid) + "/stat")
	return st
}
