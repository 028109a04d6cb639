package leakcheck_test

import (
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/testkit"
)

// A process whose leader is a zombie has not ended while another of its
// threads runs: its descriptors are still open (a Go process's leader may
// exit first as SIGKILL takes its threads one by one).
func TestGoneWaitsForEveryThread(t *testing.T) {
	cmd := exec.Command(testkit.Python(t), "-c", leakcheck.LeaderExits, strconv.Itoa(syscall.SYS_EXIT))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	testkit.WaitState(t, pid, 'Z')
	if leakcheck.Gone(pid, 0) {
		t.Fatalf("Gone took %d for ended while its reading thread runs", pid)
	}
	stdin.Close()
	if !leakcheck.Gone(pid, time.Minute) { // a hang's bound, not a timing
		t.Fatalf("%d did not end when its stdin closed", pid)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%d ended with %v, want its thread's exit 0", pid, err)
	}
}
