package reaper

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
)

// A spare waiting for its child has subscribed to no signal: a Notify (a
// thread for the runtime's signal mask, a round trip with it per signal)
// would lie between the spare's start and its readiness, which its starter
// may be waiting for, and until its child comes it has nothing to clean
// up. A SIGTERM then ends it as it ends any Go program.
func TestWaitingSpareTakesNoSignal(t *testing.T) {
	leakcheck.Check(t, leakcheck.Options{FDs: true})
	pid := spareNow(t)
	waitPolling(t, pid) // past its start: waiting for its child
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	sp := takeSpare()
	ws, err := sp.proc.Wait()
	sp.sock.Close()
	sp.lifeline.Close()
	sp.statusR.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("a spare waiting for its child ended with status %#x at a SIGTERM, not of it: it had taken the signal", uint32(ws))
	}
}

// waitPolling waits until a thread of process pid blocks in Go's poller.
func waitPolling(t *testing.T, pid int) {
	t.Helper()
	want := strconv.Itoa(syscall.SYS_EPOLL_PWAIT) + " "
	deadline := time.Now().Add(20 * time.Second)
	for {
		tasks := "/proc/" + strconv.Itoa(pid) + "/task/"
		ents, _ := os.ReadDir(tasks)
		for _, e := range ents {
			if b, _ := os.ReadFile(tasks + e.Name() + "/syscall"); strings.HasPrefix(string(b), want) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no thread of %d waits in the poller", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
