package reaper_test

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/reaper/reap"
	"github.com/evalhost/evalhost/internal/testkit"
)

// A terminating signal that reaches a reaper once its child has been
// exec'd ends in the clean-up, however soon it comes: the child runs from
// its exec on, and sh forks within a millisecond, before a reaper that
// subscribed only after the child's start (a Notify, ~0.1-1 ms) had. A
// reaper that died of the signal meanwhile left what the child had started
// to init: its Pdeathsig ends the child only. The reaper (on demand, or a
// spare given its Spec) is started here with its status pipe full: its
// "pid" report, the first thing after the child's start, blocks until the
// test reads, as a loaded machine may hold a reaper there; the SIGTERM
// comes once the child has forked.
//
// An idle child (Spec.Idle) is forked before its reaper has subscribed,
// but its pid is reported only once it has: a SIGTERM after the report,
// when the child's first request can have come and the child forked, ends
// in the clean-up too. Its rows' child forks only once it reads a line
// (its first request), sent once the reaper is blocked at its report.
func TestSignalAsChildStartsEndsEverything(t *testing.T) {
	requireLinux(t)
	if signal.Ignored(syscall.SIGTERM) {
		t.Skip("SIGTERM is ignored in this process, so the reaper would ignore it too")
	}
	const forks = "setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $!; exec sleep 1001"
	for _, tc := range []struct {
		name        string
		spare, idle bool
	}{
		{"on demand", false, false},
		{"spare", true, false},
		{"idle, on demand", false, true},
		{"idle, spare", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakcheck.Check(t, leakcheck.Options{FDs: true})
			statR, statW := fullPipe(t)
			defer statR.Close()
			outR, outW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer outR.Close()
			h := held{spare: tc.spare, idle: tc.idle, status: statW, out: outW, script: forks}
			if !tc.idle {
				termEndsAll(t, heldReaper(t, h), outR, statR, "before its reaper got SIGTERM")
				return
			}
			inR, inW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer inW.Close()
			h.stdin, h.script = inR, "read request; "+forks
			cmd := heldReaper(t, h)
			testkit.WaitSyscall(t, cmd.Process.Pid, syscall.SYS_WRITE, 4) // at its "pid" report, on fd 4
			if _, err := inW.WriteString("go\n"); err != nil {
				t.Fatal(err)
			}
			termEndsAll(t, cmd, outR, statR, "after its pid was reported")
		})
	}
}

// termEndsAll reads the pid of the background process the child of
// reaper cmd printed on out, sends the reaper SIGTERM, lets it on past its
// held report (status) and checks that it reported the child's start and
// exit and that the background process, started when says, is gone.
func termEndsAll(t *testing.T, cmd *exec.Cmd, out, status *os.File, when string) {
	t.Helper()
	line, _ := bufio.NewReader(out).ReadString('\n')
	bg, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the child printed %q, not its background process's pid", line)
	}
	t.Cleanup(func() {
		if t.Failed() {
			_ = syscall.Kill(bg, syscall.SIGKILL)
		}
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	awaitTaken(t, cmd.Process.Pid, syscall.SIGTERM)
	report, _ := io.ReadAll(status) // lets the reaper on: to its EOF
	werr := cmd.Wait()
	lines := strings.Fields(string(report)) // the filler is newlines
	if len(lines) < 2 || lines[0] != "pid" || lines[len(lines)-2] != "exit" {
		t.Errorf("the reaper reported %q (then %v), not its child's start and exit", lines, werr)
	}
	if !leakcheck.Gone(bg, 5*time.Second) {
		t.Errorf("process %d, which the child started %s, outlived the reaper (%v)", bg, when, werr)
	}
}

// held is a reaper for heldReaper: of sh -c script, whose stdin is stdin
// (nil: /dev/null) and stdout out, with status as its status pipe; a spare
// is sent its Spec at once; idle says the child is (Spec.Idle).
type held struct {
	spare, idle        bool
	status, out, stdin *os.File
	script             string
}

// heldReaper starts this test binary as the reaper h says. h's files are
// closed; the lifeline is held until the test ends.
func heldReaper(t *testing.T, h held) *exec.Cmd {
	t.Helper()
	defer h.status.Close()
	defer h.out.Close()
	stdin := h.stdin
	if stdin == nil {
		null, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		stdin = null
	}
	defer stdin.Close()
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer lifeR.Close()
	t.Cleanup(func() { lifeW.Close() })
	argv := []string{"/bin/sh", "sh", "-c", h.script}
	conf := "3"
	if h.idle {
		conf += ",idle"
	}
	cmd := exec.Command(os.Args[0], argv...)
	cmd.Args[0] = "evalhost-reaper"
	cmd.Env = append(os.Environ(), reap.EnvVar+"="+conf)
	cmd.Stdin, cmd.Stdout = stdin, h.out
	cmd.ExtraFiles = []*os.File{lifeR, h.status}
	var sock *os.File
	if h.spare {
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		sock = os.NewFile(uintptr(fds[0]), "spec")
		defer sock.Close()
		peer := os.NewFile(uintptr(fds[1]), "spec-peer")
		defer peer.Close()
		cmd.Args, cmd.Stdin, cmd.Stdout = cmd.Args[:1], nil, nil
		cmd.Env = append(os.Environ(), reap.EnvVar+"="+reap.Spare)
		cmd.ExtraFiles = append(cmd.ExtraFiles, peer)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if h.spare {
		null, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		defer null.Close()
		msg := reap.Spec{Path: argv[0], Argv: argv[1:], Env: os.Environ(), Idle: h.idle}.Encode()
		rights := syscall.UnixRights(int(stdin.Fd()), int(h.out.Fd()), int(null.Fd()))
		if err := syscall.Sendmsg(int(sock.Fd()), msg, rights, nil, 0); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatal(err)
		}
	}
	return cmd
}

// fullPipe is a pipe whose buffer (one page) is full, its write end
// blocking again: the next write to it blocks until the read end is read.
func fullPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		t.Fatal(err)
	}
	r, w = os.NewFile(uintptr(p[0]), "status-r"), os.NewFile(uintptr(p[1]), "status-w")
	if _, err := unix.FcntlInt(uintptr(p[1]), unix.F_SETPIPE_SZ, os.Getpagesize()); err != nil {
		r.Close()
		w.Close()
		t.Fatal(err)
	}
	filler := bytes.Repeat([]byte{'\n'}, os.Getpagesize())
	for {
		_, err := syscall.Write(p[1], filler)
		if err == syscall.EAGAIN {
			break
		}
		if err != nil {
			r.Close()
			w.Close()
			t.Fatal(err)
		}
	}
	if err := syscall.SetNonblock(p[1], false); err != nil {
		r.Close()
		w.Close()
		t.Fatal(err)
	}
	return r, w
}

// awaitTaken waits until process pid has taken sig: it is no longer
// pending for the process (its handler ran, or it ended the process).
func awaitTaken(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	bit := uint64(1) << (sig - 1)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if err != nil {
			t.Fatal(err)
		}
		_, rest, _ := strings.Cut(string(b), "\nShdPnd:")
		hex, _, _ := strings.Cut(strings.TrimSpace(rest), "\n")
		pending, err := strconv.ParseUint(hex, 16, 64)
		if err != nil {
			t.Fatalf("no ShdPnd in /proc/%d/status: %v", pid, err)
		}
		if pending&bit == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d never took %v", pid, sig)
		}
	}
}
