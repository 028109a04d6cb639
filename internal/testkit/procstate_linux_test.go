package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// reapedAfterOpen returns a process that had ended, its /proc/PID/stat
// opened, and then was reaped: as an interpreter that died of its pending
// SIGTERM as it was continued, reaped by evalhost's reaper while a test's
// WaitState was between its open and its read.
func reapedAfterOpen(t *testing.T) (int, *os.File) {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	WaitState(t, pid, 'Z')
	f, err := os.Open(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	return pid, f
}

// A process gone at WaitState's read (ESRCH: reaped after the open) is
// gone as one gone at the open (ENOENT) is: WaitState(pid, 0) returns,
// and a wait for a state fails saying so. Before, the read's ESRCH
// failed WaitState(pid, 0): a CI run of TestRunJobControlAsPython failed
// with "read /proc/PID/stat: no such process".
func TestWaitStateOfAReapedProcess(t *testing.T) {
	for _, tc := range []struct {
		name  string
		open  func(t *testing.T) int // sets openStat
		state byte
		fails bool
	}{
		{"reaped after the open, wait for it to run or end", func(t *testing.T) int {
			pid, f := reapedAfterOpen(t)
			openStat = func(int) (*os.File, error) { return f, nil }
			return pid
		}, 0, false},
		{"reaped before the open, wait for it to run or end", func(t *testing.T) int {
			pid, f := reapedAfterOpen(t)
			f.Close()
			openStat = func(int) (*os.File, error) { return os.Open("/proc/self/no such file") }
			return pid
		}, 0, false},
		{"reaped after the open, wait for it to stop", func(t *testing.T) int {
			pid, f := reapedAfterOpen(t)
			openStat = func(int) (*os.File, error) { return f, nil }
			return pid
		}, 'T', true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved := openStat
			t.Cleanup(func() { openStat = saved })
			pid := tc.open(t)
			tb := &fatalTB{TB: t}
			done := make(chan struct{})
			go func() { defer close(done); WaitState(tb, pid, tc.state) }()
			<-done
			if tc.fails != (tb.msg != "") {
				t.Fatalf("WaitState(%d, %q) failed: %q; want a failure: %v", pid, tc.state, tb.msg, tc.fails)
			}
			if tc.fails && !strings.Contains(tb.msg, "gone") {
				t.Errorf("the failure %q does not say the process is gone", tb.msg)
			}
		})
	}
}

func TestLeadingArgs(t *testing.T) {
	const line = "1 0x4 0xc0012345 0x9 0x0 0x0 0x0 0x7ffd 0x4a1b\n" // each fits a 32-bit uintptr
	for _, tc := range []struct {
		name string
		args []uintptr
		want bool
	}{
		{"none", nil, true},
		{"the fd", []uintptr{4}, true},
		{"two", []uintptr{4, 0xc0012345}, true},
		{"another fd", []uintptr{5}, false},
		{"a prefix of its hex", []uintptr{4, 0xc001}, false},
		{"more than the line has", make([]uintptr, 9), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := leadingArgs([]byte(line), tc.args); got != tc.want {
				t.Errorf("leadingArgs(%q, %x) = %v, want %v", line, tc.args, got, tc.want)
			}
		})
	}
}
