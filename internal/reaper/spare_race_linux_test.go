package reaper

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/testkit"
)

// A spare that a terminating signal ends as its Spec comes (pkill -f
// evalhost racing a run's start) exits without starting the child, and
// Start then starts it under a reaper of its own: the spare's clean exit
// before any "pid" says the child was not started, so starting it again
// runs it once, and so does its death of the signal before it took it.
// The spare is held stopped with the SIGTERM pending while the Spec goes
// into its socket; continued, it takes either first, so the race is run
// several times, every other time with a spare that is waiting already
// (it exits 0), else with one that may still be starting (it may die of
// the signal).
func TestSpareEndedAsItsSpecComesIsReplaced(t *testing.T) {
	leakcheck.Check(t, leakcheck.Options{FDs: true})
	for i := range 12 {
		pid := spareNow(t)
		if i%2 == 1 {
			waitPolling(t, pid)
		}
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		testkit.WaitState(t, pid, 'T')
		if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		type started struct {
			c   *Child
			err error
		}
		sent := make(chan struct{})
		specSent = func() { close(sent) }
		done := make(chan started, 1)
		go func() {
			c, err := Start(context.Background(), Spec{Path: "/bin/sh", Args: []string{"sh", "-c", "echo ok"}, Files: []*os.File{os.Stdin, w, w}})
			done <- started{c, err}
		}()
		<-sent
		specSent = nil
		_ = syscall.Kill(pid, syscall.SIGCONT)
		got := <-done
		w.Close()
		if got.err != nil {
			r.Close()
			t.Fatalf("round %d: %v", i, got.err)
		}
		line, _ := bufio.NewReader(r).ReadString('\n')
		r.Close()
		ws, err := got.c.Wait()
		if err != nil {
			t.Fatal(err)
		}
		// Either the child ran (the spare gone, under another reaper), or
		// the spare took its Spec first and then the signal, and ended it.
		if line != "ok\n" && !(ws.Signaled() && ws.Signal() == syscall.SIGKILL) {
			t.Fatalf("round %d: the child said %q and ended with %#x", i, line, uint32(ws))
		}
	}
}

// waitPolling waits until a thread of process pid blocks in Go's poller:
// a spare past its start, waiting for its Spec.
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
