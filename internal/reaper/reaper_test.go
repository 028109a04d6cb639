package reaper_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/reaper"
)

// spawnAll starts, from sh, one process of each way of leaving a parent
// behind, prints their pids on one line, then runs tail.
const spawnAll = `
sleep 1000 & a=$!
setsid sleep 1001 >/dev/null 2>&1 & b=$!
nohup sleep 1002 >/dev/null 2>&1 & c=$!
d=$(sh -c 'sleep 1003 >/dev/null 2>&1 & echo $!')
e=$(setsid sh -c 'sleep 1004 >/dev/null 2>&1 & echo $!')
echo $a $b $c $d $e
`

// way is one way of starting a reaper: on demand, or as a spare started
// ahead (Prestart) that Start then hands the child.
type way struct {
	name  string
	start func(t *testing.T, s reaper.Spec) (*reaper.Child, error)
}

var ways = []way{
	{"on demand", func(t *testing.T, s reaper.Spec) (*reaper.Child, error) {
		return reaper.Start(context.Background(), s)
	}},
	{"spare", func(t *testing.T, s reaper.Spec) (*reaper.Child, error) {
		t.Cleanup(reaper.DropSpare) // before the leak check: a spare Start refused is not left
		reaper.Prestart()
		return reaper.Start(context.Background(), s)
	}},
}

// eachWay runs test once for each way of starting a reaper.
func eachWay(t *testing.T, test func(t *testing.T, w way)) {
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) { test(t, w) })
	}
}

// start runs sh -c script under a reaper and returns it with the pids the
// script printed on its first line, and the write end of its stdin.
func start(t *testing.T, wy way, script string) (*reaper.Child, []int, *os.File) {
	t.Helper()
	leakcheck.Check(t, leakcheck.Options{FDs: true})
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inW.Close() })
	c, err := wy.start(t, reaper.Spec{
		Path: "/bin/sh", Args: []string{"sh", "-c", script},
		Files: []*os.File{inR, w, w}, Dir: t.TempDir(),
	})
	w.Close()
	inR.Close()
	if err != nil {
		t.Fatal(err)
	}
	fail := func(format string, a ...any) {
		t.Helper()
		c.Kill()
		_, _ = c.Wait()
		t.Fatalf(format, a...)
	}
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		fail("read pids: %v", err)
	}
	var pids []int
	for _, f := range strings.Fields(line) {
		n, err := strconv.Atoi(f)
		if err != nil {
			fail("bad pid line %q", line)
		}
		pids = append(pids, n)
	}
	t.Cleanup(func() { // after a failure, so nothing outlives the test
		if !t.Failed() {
			return // they are gone, and their pids may be another's by now
		}
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	})
	if len(pids) != 5 {
		fail("want 5 pids, got line %q", line)
	}
	for _, p := range pids {
		if leakcheck.Gone(p, 0) {
			fail("process %d ended before the test ended it", p)
		}
	}
	return c, pids, inW
}

// allGone fails for every pid still alive. Wait returns only once the
// reaper has reaped every process below it, so none may be left by then.
func allGone(t *testing.T, pids []int) {
	t.Helper()
	for _, p := range pids {
		if !leakcheck.Gone(p, 0) {
			t.Errorf("process %d outlived its reaper", p)
		}
	}
}

func requireLinux(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux has child subreapers; elsewhere only the child's process group is ended")
	}
}

func TestKillEndsEverything(t *testing.T) {
	requireLinux(t)
	eachWay(t, func(t *testing.T, w way) {
		c, pids, _ := start(t, w, spawnAll+"exec sleep 1005")
		c.Kill()
		ws, err := c.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Errorf("child status %v, want killed by SIGKILL", ws)
		}
		allGone(t, append(pids, c.Pid))
		c.Kill() // twice is fine
	})
}

func TestChildExitEndsEverything(t *testing.T) {
	requireLinux(t)
	eachWay(t, func(t *testing.T, w way) {
		c, pids, stdin := start(t, w, spawnAll+"read go; exit 3")
		stdin.Close() // the read ends: sh exits
		ws, err := c.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if !ws.Exited() || ws.ExitStatus() != 3 {
			t.Errorf("child status %v, want exit 3", ws)
		}
		allGone(t, pids)
	})
}

func TestTerminatingSignalEndsEverything(t *testing.T) {
	requireLinux(t)
	eachWay(t, func(t *testing.T, w way) {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
			t.Run(sig.String(), func(t *testing.T) {
				if signal.Ignored(sig) {
					// As nohup leaves SIGHUP: the reaper keeps an inherited
					// ignore (its doc), so it would wait on, and so would this.
					t.Skipf("%v is ignored in this process (started under nohup?), so the reaper ignores it too", sig)
				}
				c, pids, _ := start(t, w, spawnAll+"exec sleep 1005")
				if err := syscall.Kill(c.ReaperPid(), sig); err != nil {
					t.Fatal(err)
				}
				if _, err := c.Wait(); err != nil {
					t.Fatal(err)
				}
				allGone(t, append(pids, c.Pid))
			})
		}
	})
}

// A reaper that is SIGKILLed cannot clean up: its child dies by its
// parent-death signal, Wait says the status is lost, and what is left in
// the child's process group is the caller's to kill, as host does.
func TestReaperKilled(t *testing.T) {
	requireLinux(t)
	eachWay(t, func(t *testing.T, w way) {
		c, pids, _ := start(t, w, "sleep 1001 & echo $! $$ $$ $$ $$; exec sleep 1005")
		if err := syscall.Kill(c.ReaperPid(), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		ws, err := c.Wait()
		if !errors.Is(err, reaper.ErrReaperDied) {
			t.Fatalf("Wait: %v, want ErrReaperDied", err)
		}
		if !strings.Contains(err.Error(), "signal: killed") {
			t.Errorf("Wait: %q does not say how the reaper ended", err)
		}
		if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Errorf("status %v, want the reaper's own SIGKILL", ws)
		}
		if !leakcheck.Gone(c.Pid, 5*time.Second) {
			t.Errorf("child %d outlived its killed reaper", c.Pid)
		}
		if err := syscall.Kill(-c.Pid, syscall.SIGKILL); err != nil {
			t.Errorf("kill the child's group: %v", err)
		}
		if !leakcheck.Gone(pids[0], 5*time.Second) {
			t.Errorf("background sleep %d outlived the kill of its group", pids[0])
		}
	})
}

func TestStartErrors(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	tests := []struct {
		name string
		spec reaper.Spec
		want string
	}{
		{"missing executable", reaper.Spec{Path: "/nonexistent/python", Args: []string{"python"}, Files: []*os.File{null, null, null}}, "run /nonexistent/python"},
		{"too few files", reaper.Spec{Path: "/bin/true", Args: []string{"true"}, Files: []*os.File{null}}, "at least 0, 1 and 2"},
	}
	eachWay(t, func(t *testing.T, w way) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				leakcheck.Check(t, leakcheck.Options{FDs: true})
				c, err := w.start(t, tc.spec)
				if err == nil {
					c.Kill()
					_, _ = c.Wait()
					t.Fatal("Start succeeded")
				}
				if !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error %q does not say %q", err, tc.want)
				}
			})
		}
	})
}

// The child gets exactly the environment it was given: the reaper's own
// variables (EVALHOST_REAPER, the GOMAXPROCS=1 it starts with) are taken
// out, and a GOMAXPROCS the caller set is kept.
func TestChildEnvironment(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		want string
	}{
		{"none set", []string{"A=1"}, "A=1|unset|unset\n"},
		{"caller's GOMAXPROCS kept", []string{"A=1", "GOMAXPROCS=7"}, "A=1|7|unset\n"},
	}
	eachWay(t, func(t *testing.T, wy way) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				leakcheck.Check(t, leakcheck.Options{FDs: true})
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				null, err := os.Open(os.DevNull)
				if err != nil {
					t.Fatal(err)
				}
				defer null.Close()
				c, err := wy.start(t, reaper.Spec{
					Path:  "/bin/sh",
					Args:  []string{"sh", "-c", `echo "A=$A|${GOMAXPROCS-unset}|${EVALHOST_REAPER-unset}"`},
					Env:   tc.env,
					Files: []*os.File{null, w, w},
				})
				w.Close()
				if err != nil {
					t.Fatal(err)
				}
				got, _ := bufio.NewReader(r).ReadString('\n')
				if _, err := c.Wait(); err != nil {
					t.Fatal(err)
				}
				if got != tc.want {
					t.Errorf("child saw %q, want %q", got, tc.want)
				}
			})
		}
	})
}

// Wait returns on the reaper's report, before the reaper has exited; the
// reaper is collected later, so a long-lived caller is left no zombie.
func TestReportedReaperIsCollected(t *testing.T) {
	requireLinux(t)
	eachWay(t, func(t *testing.T, w way) {
		c, _, stdin := start(t, w, spawnAll+"read go; exit 3")
		stdin.Close()
		if _, err := c.Wait(); err != nil {
			t.Fatal(err)
		}
		reaperPid := c.ReaperPid()
		if !waitable(reaperPid, time.Minute) {
			t.Fatalf("reaper %d still running (or not collectable) after its report", reaperPid)
		}
		// The next Start collects it.
		next, _, _ := start(t, w, spawnAll+"exec sleep 1005")
		next.Kill()
		if _, err := next.Wait(); err != nil {
			t.Fatal(err)
		}
		var ws syscall.WaitStatus
		if got, err := syscall.Wait4(reaperPid, &ws, syscall.WNOHANG, nil); err != syscall.ECHILD {
			t.Errorf("wait4(reaper %d) = %d, %v: want ECHILD, the reaper already collected", reaperPid, got, err)
		}
	})
}
