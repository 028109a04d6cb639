package leakcheck

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// recorder is a testing.TB that keeps what a check reports, so a test can
// make the check fail on purpose.
type recorder struct {
	testing.TB
	mu       sync.Mutex
	errors   []string
	cleanups []func()
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, strings.TrimSpace(fmt.Sprintf(format, args...)))
}

func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

// finish runs the cleanups as testing would and returns what was reported.
func (r *recorder) finish() string {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	return strings.Join(r.errors, "\n")
}

func TestMain(m *testing.M) {
	if os.Getenv("LEAKCHECK_HANG") != "" {
		Watchdog(named{name: "hung"}, 10*time.Millisecond)
		select {}
	}
	settle = time.Second
	if os.Getenv("LEAKCHECK_FIRST_PIPE") != "" {
		firstPipe()
	}
	os.Exit(m.Run())
}

// firstPipe is TestFirstPipeLeaksNothing's process: a check around the
// first pipe it opens, which starts the runtime's poller. It prints what
// the check reported and exits.
func firstPipe() {
	r := &recorder{}
	Check(r, Options{FDs: true})
	pr, pw, err := os.Pipe()
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	pr.Close()
	pw.Close()
	fmt.Print(r.finish())
	os.Exit(0)
}

// named is a testing.TB with only a name, for the watchdog's hung child.
type named struct {
	testing.TB
	name string
}

func (n named) Name() string { return n.name }

func TestCleanPasses(t *testing.T) {
	r := &recorder{TB: t}
	Check(r, Options{FDs: true})
	done := make(chan struct{})
	go func() { close(done) }()
	<-done
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := exec.Command("true").Run(); err != nil {
		t.Fatal(err)
	}
	if got := r.finish(); got != "" {
		t.Fatalf("a clean test reported %q", got)
	}
}

func TestLeakedGoroutine(t *testing.T) {
	r := &recorder{TB: t}
	Check(r, Options{})
	release := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-release
	}()
	got := r.finish()
	close(release)
	wg.Wait()
	if !strings.Contains(got, "1 goroutines leaked") || !strings.Contains(got, "TestLeakedGoroutine") {
		t.Fatalf("report %q lacks the leaked goroutine and its stack", got)
	}
}

func TestLeakedFD(t *testing.T) {
	r := &recorder{TB: t}
	Check(r, Options{FDs: true})
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := r.finish(); !strings.Contains(got, "1 file descriptors leaked") || !strings.Contains(got, "→/dev/null") {
		t.Fatalf("report %q lacks the open /dev/null", got)
	}
}

// The descriptors Go's runtime opens for its poller the first time a
// pollable file is opened, and keeps, are no test's leak: a test that ran
// first in its process (go test -run) failed on them.
func TestFirstPipeLeaksNothing(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LEAKCHECK_FIRST_PIPE=1")
	out, err := cmd.CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Fatalf("exit %v, the check reported:\n%s", err, out)
	}
}

func TestLeakedGrandchildIsKilled(t *testing.T) {
	r := &recorder{TB: t}
	Check(r, Options{})
	// sh waits for its sleep, so the leak is a grandchild too.
	cmd := exec.Command("sh", "-c", "sleep 60; :")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	got := r.finish()
	if err := cmd.Wait(); err == nil {
		t.Errorf("sh exited cleanly; want it killed by the check")
	}
	if !strings.Contains(got, "processes left behind") || !strings.Contains(got, "sleep 60") {
		t.Fatalf("report %q lacks sh and its sleep", got)
	}
}

func TestIgnoredProcessAndItsChildren(t *testing.T) {
	cases := []struct {
		name string
		opts func(pid int) Options
	}{
		{"by command line", func(int) Options {
			return Options{IgnoreProcess: func(cmd string) bool { return strings.Contains(cmd, "shared-server") }}
		}},
		{"by pid", func(pid int) Options { return Options{IgnorePIDs: []int{pid}} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("sh", "-c", "sleep 60; : shared-server")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				cmd.Process.Kill()
				cmd.Wait()
			}()
			r := &recorder{TB: t}
			Check(r, tc.opts(cmd.Process.Pid))
			start := time.Now()
			if got := r.finish(); got != "" {
				t.Fatalf("an exempt server reported %q", got)
			}
			if el := time.Since(start); el > time.Second {
				t.Errorf("the check waited %v for an exempt process", el)
			}
		})
	}
}

func TestWatchdogFires(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LEAKCHECK_HANG=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "deadlock watchdog: hung still running after 10ms") ||
		!strings.Contains(string(out), "leakcheck.TestMain") {
		t.Fatalf("exit %v, output:\n%s\nwant a panic naming the test, with the stack of the hung goroutine", err, out)
	}
}

// A stopped watchdog does not fire. The bubble's clock passes its limit at
// once, and only when every goroutine in it waits, so a watchdog that still
// fired has panicked (and failed the test binary) before Sleep returns.
func TestWatchdogStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stop := Watchdog(t, time.Minute)
		stop()
		time.Sleep(2 * time.Minute) // the bubble's time, not the machine's
	})
}

// InDir finds a process by its working directory and GoneFromDir awaits its
// end; Parent names its parent.
func TestInDir(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("sleep", "1000")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if got := InDir(dir); len(got) != 1 || !strings.HasPrefix(got[0], fmt.Sprint(cmd.Process.Pid)+" sleep 1000") {
		t.Fatalf("InDir = %q, want the sleep %d", got, cmd.Process.Pid)
	}
	if ppid, ok := Parent(cmd.Process.Pid); !ok || ppid != os.Getpid() {
		t.Errorf("Parent = %d, %v; want %d", ppid, ok, os.Getpid())
	}
	if left := GoneFromDir(dir, 0); len(left) != 1 {
		t.Errorf("GoneFromDir with the sleep running = %q", left)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if left := GoneFromDir(dir, 5*time.Second); len(left) != 0 {
		t.Errorf("GoneFromDir after the kill = %q", left)
	}
}
