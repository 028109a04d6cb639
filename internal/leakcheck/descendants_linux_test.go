package leakcheck

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// LeaderExits ends its main thread alone (SYS_exit, not exit_group, its
// first argument): the kernel shows the leader as a zombie while the other
// thread, which holds the process's descriptors, runs until its stdin
// closes. Exported for this package's external tests (testkit, which finds
// python3 for them, imports this package).
const LeaderExits = `
import ctypes, os, sys, threading
def rest():
    os.read(0, 1)
    os._exit(0)
threading.Thread(target=rest).start()
ctypes.CDLL(None).syscall(ctypes.c_long(int(sys.argv[1])), ctypes.c_long(0))
`

// A child whose leader is a zombie while another of its threads runs has
// not ended: Check reports it and kills it, where it took it for ended.
func TestZombieLeaderWithALiveThreadIsLeft(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("needs python3")
	}
	r := &recorder{TB: t}
	Check(r, Options{})
	cmd := exec.Command(py, "-c", LeaderExits, strconv.Itoa(syscall.SYS_EXIT))
	stdin, err := cmd.StdinPipe() // kept open: the thread blocks on it
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer func() { stdin.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	waitZombieLeader(t, pid)
	if got := r.finish(); !strings.Contains(got, "processes left behind") || !strings.Contains(got, fmt.Sprint(pid)+" ") {
		t.Fatalf("report %q lacks %d, whose thread still ran", got, pid)
	}
	if err := cmd.Wait(); err == nil {
		t.Errorf("%d exited cleanly; want it killed by the check", pid)
	}
}

// waitZombieLeader waits until pid's leader is a zombie; a minute bounds a
// hang, not a timing.
func waitZombieLeader(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		s, ok := readStat(pid)
		if ok && s.state == 'Z' {
			return
		}
		if !ok || time.Now().After(deadline) {
			t.Fatalf("the leader of %d never became a zombie (stat %+v, %v)", pid, s, ok)
		}
	}
}
