package leakcheck_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/testkit"
)

// A process whose leader is a zombie has not ended while another of its
// threads runs: its descriptors are still open (a Go process's leader may
// exit first as SIGKILL takes its threads one by one).
func TestGoneWaitsForEveryThread(t *testing.T) {
	cmd, stdin := testkit.StartLeaderExits(t, "")
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

// A process whose leader is a zombie still works in its directory while
// another of its threads runs: InDir lists it, by its command line,
// GoneFromDir waits for that thread, as Gone does, and Parent names its
// parent.
func TestInDirSeesEveryThread(t *testing.T) {
	dir := t.TempDir()
	cmd, stdin := testkit.StartLeaderExits(t, dir)
	pid := cmd.Process.Pid
	testkit.WaitState(t, pid, 'Z')
	want := fmt.Sprintf("%d %s -c ", pid, cmd.Path)
	if got := leakcheck.InDir(dir); len(got) != 1 || !strings.HasPrefix(got[0], want) {
		t.Fatalf("InDir = %q, want %q... (its reading thread runs in %s)", got, want, dir)
	}
	if ppid, ok := leakcheck.Parent(pid); !ok || ppid != os.Getpid() {
		t.Errorf("Parent(%d) = %d, %v; want %d", pid, ppid, ok, os.Getpid())
	}
	if left := leakcheck.GoneFromDir(dir, 0); len(left) != 1 {
		t.Fatalf("GoneFromDir = %q while %d's reading thread runs", left, pid)
	}
	stdin.Close()
	if left := leakcheck.GoneFromDir(dir, time.Minute); len(left) != 0 { // a hang's bound, not a timing
		t.Fatalf("GoneFromDir = %q after %d's stdin closed", left, pid)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%d ended with %v, want its thread's exit 0", pid, err)
	}
}
