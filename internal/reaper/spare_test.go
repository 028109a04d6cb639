package reaper

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/reaper/launch"
)

// spareNow starts a spare and returns its pid once it runs.
func spareNow(t *testing.T) int {
	t.Helper()
	Prestart()
	pid, err := launch.Peek()
	if err != nil {
		t.Fatalf("spare did not start: %v", err)
	}
	if pid == 0 {
		t.Fatal("Prestart left no spare")
	}
	return pid
}

func TestDropSpareEndsIt(t *testing.T) {
	leakcheck.Check(t, leakcheck.Options{FDs: true})
	pid := spareNow(t)
	Prestart() // one spare at most: this one is kept
	if got := spareNow(t); got != pid {
		t.Errorf("a second Prestart started spare %d beside %d", got, pid)
	}
	DropSpare()
	if !leakcheck.Gone(pid, 0) {
		t.Errorf("spare %d outlived DropSpare", pid)
	}
	DropSpare() // twice is fine
}

// A spare that died before its child came is replaced by a reaper
// started on demand.
func TestDeadSpareIsReplaced(t *testing.T) {
	leakcheck.Check(t, leakcheck.Options{FDs: true})
	pid := spareNow(t)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Gone waits for every thread, so the spare's end of the Spec socket is
	// closed: a Spec sent before would reach a dying spare, which Start must
	// take for one that may have started its child.
	if !leakcheck.Gone(pid, time.Minute) { // a hang's bound, not a timing
		t.Fatalf("spare %d survived SIGKILL for a minute", pid)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c, err := Start(context.Background(), Spec{Path: "/bin/sh", Args: []string{"sh", "-c", "echo ok"}, Files: []*os.File{os.Stdin, w, w}})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	got, _ := bufio.NewReader(r).ReadString('\n')
	if _, err := c.Wait(); err != nil {
		t.Fatal(err)
	}
	if got != "ok\n" || c.ReaperPid() == pid {
		t.Errorf("child said %q under reaper %d (dead spare %d)", got, c.ReaperPid(), pid)
	}
}

// A spare ends with the process that started it, even one killed by
// SIGKILL, which can run no clean-up.
func TestSpareEndsWithItsStarter(t *testing.T) {
	helper := exec.Command(os.Args[0], "-test.run=^TestHelperSpare$")
	helper.Env = append(os.Environ(), "REAPER_HELPER_SPARE=1")
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "spare "))
	if err != nil || perr != nil {
		_ = helper.Process.Kill()
		_ = helper.Wait()
		t.Fatalf("helper said %q (%v)", line, err)
	}
	_ = helper.Process.Kill()
	_ = helper.Wait()
	if !leakcheck.Gone(pid, 2*time.Second) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("spare %d outlived its SIGKILLed starter by 2 s", pid)
	}
}

func TestHelperSpare(t *testing.T) {
	if os.Getenv("REAPER_HELPER_SPARE") != "1" {
		t.Skip("helper process of TestSpareEndsWithItsStarter")
	}
	fmt.Printf("spare %d\n", spareNow(t))
	time.Sleep(time.Hour) // until killed
}
