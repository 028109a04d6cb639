package reap

import (
	"os"
	"os/exec"
	"slices"
	"testing"

	"github.com/evalhost/evalhost/internal/proctree"
)

// proctree.Children finds a child through the task children files, and killByParent
// (the fallback where the kernel lacks them) finds and kills it too.
func TestChildrenAndKillByParent(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc")
	}
	cmd := exec.Command("sleep", "1000")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	kids, ok := proctree.Children(os.Getpid())
	if !ok {
		t.Log("this kernel has no /proc/PID/task/TID/children; killTree scans /proc")
	} else if !slices.Contains(kids, cmd.Process.Pid) {
		t.Errorf("proctree.Children(self) = %v, want it to hold %d", kids, cmd.Process.Pid)
	}
	killByParent(os.Getpid())
	if err := cmd.Wait(); err == nil || cmd.ProcessState.Success() {
		t.Errorf("sleep was not killed: %v", err)
	}
}
