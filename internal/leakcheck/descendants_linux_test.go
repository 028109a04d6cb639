package leakcheck_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/testkit"
)

// A child whose leader is a zombie while another of its threads runs has
// not ended: Check reports it and kills it, where it took it for ended.
func TestZombieLeaderWithALiveThreadIsLeft(t *testing.T) {
	r := &leakcheck.Recorder{TB: t}
	leakcheck.Check(r, leakcheck.Options{})
	cmd, _ := testkit.StartLeaderExits(t, "")
	pid := cmd.Process.Pid
	testkit.WaitState(t, pid, 'Z')
	if got := r.Finish(); !strings.Contains(got, "processes left behind") || !strings.Contains(got, fmt.Sprint(pid)+" ") {
		t.Fatalf("report %q lacks %d, whose thread still ran", got, pid)
	}
	if err := cmd.Wait(); err == nil {
		t.Errorf("%d exited cleanly; want it killed by the check", pid)
	}
}
