package tests

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
)

// daemonHome is a private evalhost home whose background process is
// stopped when the test ends, so no test leaves one running.
type daemonHome struct {
	t    *testing.T
	home string
	bin  string
}

func newDaemonHome(t *testing.T) *daemonHome {
	t.Helper()
	return newDaemonHomeAt(t, t.TempDir())
}

// newDaemonHomeAt is newDaemonHome for a given home.
func newDaemonHomeAt(t *testing.T, home string) *daemonHome {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not on PATH")
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	h := &daemonHome{t: t, home: home, bin: binary}
	t.Cleanup(func() {
		cmd := h.cmd("daemon", "stop")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("daemon stop: %v: %s", err, out)
		}
	})
	return h
}

func (h *daemonHome) cmd(args ...string) *exec.Cmd {
	cmd := exec.Command(h.bin, args...)
	cmd.Env = append(os.Environ(), "EVALHOST_HOME="+h.home)
	cmd.Dir = h.home
	return cmd
}

func (h *daemonHome) run(args ...string) (stdout, stderr string, code int) {
	h.t.Helper()
	return runCaptured(h.t, h.cmd(args...), false)
}

// pid is the background process's, as a cell sees it (its interpreter's
// parent).
func (h *daemonHome) pid(session string) int {
	h.t.Helper()
	out, stderr, code := h.run("run", "--session", session, "-c", daemonPIDCell)
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if code != 0 || err != nil {
		h.t.Fatalf("exit %d, stdout %q, stderr %s", code, out, stderr)
	}
	return pid
}

// The second run --session sees the first one's state; a run without
// --session does not; sessions lists it and kill ends it.
func TestDaemonStateAcrossCommands(t *testing.T) {
	h := newDaemonHome(t)
	steps := []struct {
		name       string
		args       []string
		code       int
		stdout     string
		stderrPart string
	}{
		{"first command sets x", []string{"run", "--session", "s", "-c", "x = 41"}, 0, "", ""},
		{"second command sees it", []string{"run", "--session", "s", "-c", "print(x + 1)"}, 0, "42\n", ""},
		{"a shell cell in the session", []string{"run", "--session", "s", "--language", "sh", "-c", "export Y=7"}, 0, "", ""},
		{"and its shell state too", []string{"run", "--session", "s", "--language", "sh", "-c", "echo $Y"}, 0, "7\n", ""},
		{"another session is separate", []string{"run", "--session", "other", "-c", "print(x)"}, 1, "", "NameError"},
		{"a one-shot run is separate", []string{"run", "-c", "print(x)"}, 1, "", "NameError"},
		{"kill of an unknown session", []string{"kill", "nosuch"}, 1, "", `no session "nosuch"`},
		{"kill ends it", []string{"kill", "s"}, 0, "ended session s\n", ""},
		{"its state is gone", []string{"run", "--session", "s", "-c", "print(x)"}, 1, "", "NameError"},
		{"an unsupported flag is refused", []string{"run", "--session", "s", "--grace", "5s", "-c", "1"}, 2, "", "--grace is not available with --session"},
	}
	for _, s := range steps {
		out, errOut, code := h.run(s.args...)
		if code != s.code || (s.stdout != "" && out != s.stdout) || !strings.Contains(errOut, s.stderrPart) {
			t.Fatalf("%s: exit %d stdout %q stderr %q; want exit %d stdout %q stderr containing %q",
				s.name, code, out, errOut, s.code, s.stdout, s.stderrPart)
		}
	}
	out, _, code := h.run("sessions")
	if code != 0 || !strings.Contains(out, "NAME") || !strings.Contains(out, "other") || !strings.Contains(out, h.home) {
		t.Fatalf("sessions: exit %d:\n%s", code, out)
	}
}

// Concurrent first commands start one background process.
func TestDaemonConcurrentFirstCommandsStartOne(t *testing.T) {
	h := newDaemonHome(t)
	const n = 4
	pids := make([]string, n)
	errs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := h.cmd("run", "--session", fmt.Sprint("s", i), "-c", daemonPIDCell)
			out, err := cmd.Output()
			pids[i] = strings.TrimSpace(string(out))
			if err != nil {
				errs[i] = err.Error()
				var exit *exec.ExitError
				if errors.As(err, &exit) {
					errs[i] += ": " + string(exit.Stderr)
				}
			}
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != "" || pids[i] != pids[0] || pids[i] == "" {
			t.Fatalf("the cells ran under background processes %q (errors %q), want one", pids, errs)
		}
	}
}

// A background process killed with SIGKILL is replaced by the next
// command, which says whose state was lost.
func TestDaemonReplacedAfterSIGKILL(t *testing.T) {
	h := newDaemonHome(t)
	if _, stderr, code := h.run("run", "--session", "s", "-c", "x = 1"); code != 0 {
		t.Fatal(stderr)
	}
	pid := h.pid("s")
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
	_, stderr, code := h.run("run", "--session", "s", "-c", "print(x)")
	if code != 1 || !strings.Contains(stderr, "NameError") {
		t.Fatalf("exit %d, stderr %s; want the NameError of a fresh session", code, stderr)
	}
	// Told once, by the cell that relied on the state (the command that
	// found the dead process said it too, naming every session).
	want := fmt.Sprintf("[state lost: session s's py interpreter ended with the background process (pid %d), which ended without a stop (killed or crashed);", pid)
	if !strings.Contains(stderr, want) || strings.Count(stderr, fmt.Sprintf("(pid %d)", pid)) != 1 {
		t.Fatalf("stderr %q; want the loss told once, as %q", stderr, want)
	}
	if newPID := h.pid("s"); newPID == pid {
		t.Fatal("the killed process is still the one serving")
	}
	// Said once: the next command finds a live process.
	if _, stderr, _ := h.run("run", "--session", "s", "-c", "1"); strings.Contains(stderr, "had ended") {
		t.Fatalf("the loss was said again: %s", stderr)
	}
}

// A stopped background process takes its sessions' state: the next cell
// of each session says so, whichever command runs it, once.
func TestDaemonStopToldToEachSession(t *testing.T) {
	h := newDaemonHome(t)
	for _, s := range []string{"a", "b"} {
		if _, stderr, code := h.run("run", "--session", s, "-c", "x = 1"); code != 0 {
			t.Fatal(stderr)
		}
	}
	pid := h.pid("a")
	if _, stderr, code := h.run("daemon", "stop"); code != 0 {
		t.Fatal(stderr)
	}
	for _, s := range []string{"b", "a"} {
		_, stderr, code := h.run("run", "--session", s, "-c", "print(x)")
		want := fmt.Sprintf("[state lost: session %s's py interpreter ended with the background process (pid %d), which was stopped", s, pid)
		if code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "NameError") {
			t.Fatalf("session %s after the stop: exit %d, stderr %q; want %q and a NameError", s, code, stderr, want)
		}
	}
	if _, stderr, _ := h.run("run", "--session", "a", "-c", "1"); strings.Contains(stderr, "state lost") {
		t.Fatalf("the loss was told twice: %s", stderr)
	}
}

// A loss is told to each session it took, in the cwd it held state in,
// also when the process that was to tell it ended first: a crash, then a
// stop before session a was used again, then a run in each cwd.
func TestDaemonLossToldAcrossProcesses(t *testing.T) {
	h := newDaemonHome(t)
	dirs := map[string]string{"x": t.TempDir(), "y": t.TempDir(), "fresh": t.TempDir()}
	in := func(dir string, args ...string) (string, int) {
		cmd := h.cmd(args...)
		cmd.Dir = dir
		_, stderr, code := runCaptured(t, cmd, false)
		return stderr, code
	}
	for _, d := range []string{"x", "y"} {
		if stderr, code := in(dirs[d], "run", "--session", "a", "-c", "v = 1"); code != 0 {
			t.Fatal(stderr)
		}
	}
	pid := h.pid("other")
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
	if _, stderr, code := h.run("run", "--session", "other", "-c", "1"); code != 0 {
		t.Fatal(stderr)
	}
	if _, stderr, code := h.run("daemon", "stop"); code != 0 {
		t.Fatal(stderr)
	}
	want := fmt.Sprintf("[state lost: session a's py interpreter ended with the background process (pid %d), which ended without a stop (killed or crashed)", pid)
	for _, d := range []string{"y", "x"} {
		if stderr, code := in(dirs[d], "run", "--session", "a", "-c", "print(v)"); code != 1 || !strings.Contains(stderr, want) {
			t.Fatalf("session a in cwd %s: exit %d, stderr %q; want %q", d, code, stderr, want)
		}
	}
	if stderr, _ := in(dirs["fresh"], "run", "--session", "a", "-c", "1"); strings.Contains(stderr, "state lost") {
		t.Fatalf("a cwd that held no state was told of a loss: %s", stderr)
	}
}

// hangBound bounds a wait for a process to end: a hang's bound, not a
// timing, which load stretches (the tests await the end). What they await
// would run far longer by itself (cells that sleep 300 s or more, a
// background process that ends after 30 idle minutes), so one left running
// still fails at it.
const hangBound = time.Minute

func waitGone(t *testing.T, pid int) {
	t.Helper()
	if !leakcheck.Gone(pid, hangBound) {
		t.Fatalf("pid %d still ran %s after it was to end", pid, hangBound)
	}
}

// otherBuild is a copy of the evalhost binary whose Go build ID differs
// (its last character changed; the runtime does not read it): another
// build identity (daemon.BuildIdentity) for the background process.
func otherBuild(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "tool", "buildid", binary).Output()
	if err != nil {
		t.Fatalf("go tool buildid: %v", err)
	}
	id := bytes.TrimSpace(out)
	other := slices.Clone(id)
	other[len(other)-1] ^= 1 // still a letter or digit
	return copyBinary(t, func(b []byte) []byte {
		if !bytes.Contains(b, id) {
			t.Fatalf("the build ID %s is not in %s", id, binary)
		}
		return bytes.ReplaceAll(b, id, other)
	})
}

// copyBinary is a copy of the evalhost binary at another path, its bytes
// changed by edit (nil: unchanged).
func copyBinary(t *testing.T, edit func([]byte) []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "evalhost")
	b, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		b = edit(b)
	}
	if err := os.WriteFile(path, b, 0o700); err != nil {
		t.Fatal(err)
	}
	return path
}

// Two copies of one build at different paths are one build: the second
// attaches to the process the first started, state and all (the path was
// part of the identity, so each copy replaced the other's process).
func TestDaemonCopiedBinaryShares(t *testing.T) {
	h := newDaemonHome(t)
	if _, stderr, code := h.run("run", "--session", "s", "-c", "x = 41"); code != 0 {
		t.Fatal(stderr)
	}
	pid := h.pid("s")
	h.bin = copyBinary(t, nil)
	out, stderr, code := h.run("run", "--session", "s", "-c", "print(x + 1)")
	if code != 0 || out != "42\n" || strings.Contains(stderr, "replaced") {
		t.Fatalf("the copy: exit %d, stdout %q, stderr %q; want 42 from the same process", code, out, stderr)
	}
	if got := h.pid("s"); got != pid {
		t.Fatalf("the copy runs in process %d, want %d", got, pid)
	}
}

// A background process of another build is replaced, and the replacement
// is said.
// The state it took is told once, by the cell that relied on it (the
// replacement's notice said it too).
func TestDaemonOtherVersionReplaced(t *testing.T) {
	h := newDaemonHome(t)
	old := h.pid("s")
	h.bin = otherBuild(t)
	_, stderr, code := h.run("run", "--session", "s", "-c", "1")
	if code != 0 || !strings.Contains(stderr, "replaced the background process of evalhost ") || !strings.Contains(stderr, fmt.Sprintf("(pid %d)", old)) {
		t.Fatalf("exit %d, stderr %q; want the replacement said", code, stderr)
	}
	if !strings.Contains(stderr, "[state lost: session s's py interpreter ended with the background process") || strings.Count(stderr, "lost") != 1 {
		t.Fatalf("stderr %q; want the loss of session s's state told once", stderr)
	}
	waitGone(t, old) // it released its lock; its exit follows
	if newPID := h.pid("s"); newPID == old {
		t.Fatal("the old process still serves")
	}
}

// A background process of another build that runs a cell is not replaced
// under it: the other build's command is refused, saying why and what to
// do, and the running cell ends ok; once it is idle, it is replaced.
func TestDaemonOtherVersionBusyNotReplaced(t *testing.T) {
	h := newDaemonHome(t)
	flag := filepath.Join(h.home, "flag")
	running := h.cmd("run", "--session", "busy", "-c", waitForFlag(flag))
	stdout, err := running.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := running.Start(); err != nil {
		t.Fatal(err)
	}
	defer running.Process.Kill()
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() || sc.Text() != "started" {
		t.Fatalf("first line %q, want started", sc.Text())
	}
	otherHome := *h
	otherHome.bin = otherBuild(t)
	_, stderr, code := otherHome.run("run", "--session", "s", "-c", "1")
	if code != 1 || !strings.Contains(stderr, "runs cells or jobs in sessions busy") || !strings.Contains(stderr, "evalhost daemon stop") {
		t.Fatalf("the other build while a cell runs: exit %d, stderr %q; want it refused, naming the session", code, stderr)
	}
	if err := os.WriteFile(flag, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if !sc.Scan() || sc.Text() != "done" {
		t.Errorf("the running cell's last line %q, want done", sc.Text())
	}
	if code := exitCodeOf(t, running); code != 0 {
		t.Errorf("the running cell's command exited %d, want 0", code)
	}
	// Once idle it is replaced; the loss of busy's state is told to
	// busy's next command, once (the replacing command, in session s,
	// told it too).
	if _, stderr, code := otherHome.run("run", "--session", "s", "-c", "1"); code != 0 || !strings.Contains(stderr, "replaced the background process") || strings.Contains(stderr, "busy") {
		t.Errorf("the other build once idle: exit %d, stderr %q; want the replacement said, and busy's loss left to busy", code, stderr)
	}
	if _, stderr, _ := otherHome.run("run", "--session", "busy", "-c", "1"); strings.Count(stderr, "[state lost: session busy's") != 1 {
		t.Errorf("busy's next command: stderr %q; want its loss told once", stderr)
	}
}

// Ctrl-C and a timeout behave through an attached run as in a one-shot
// one: the first Ctrl-C interrupts (state kept), the second kills, a
// timeout exits 124.
// startRunning starts an evalhost command whose first cell prints the
// line "running", and returns once it has; the rest of its stdout is read
// and dropped, and its stderr is collected.
func (h *daemonHome) startRunning(t *testing.T, args ...string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	return h.startCmdRunning(t, h.cmd(args...))
}

// startCmdRunning is startRunning for a command made ready to start.
func (h *daemonHome) startCmdRunning(t *testing.T, cmd *exec.Cmd) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() || sc.Text() != "running" {
		t.Fatalf("first line %q, want running; stderr %s", sc.Text(), &stderr)
	}
	// It ends when Wait closes the pipe.
	go func() {
		for sc.Scan() {
		}
	}()
	return cmd, &stderr
}

func TestDaemonInterruptAndTimeout(t *testing.T) {
	h := newDaemonHome(t)
	if _, stderr, code := h.run("run", "--session", "s", "-c", "kept = 'yes'"); code != 0 {
		t.Fatal(stderr)
	}
	start := func(code string) (*exec.Cmd, *strings.Builder) {
		return h.startRunning(t, "run", "--session", "s", "-c", code, "-c", "print('later')")
	}

	cmd, stderr := start("import time\nprint('running', flush=True)\ntime.sleep(60)")
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitCodeOf(t, cmd); code != 130 || !strings.Contains(stderr.String(), "KeyboardInterrupt") ||
		!strings.Contains(stderr.String(), "[cell 2 was not run: the run was cancelled before it started]") {
		t.Fatalf("first Ctrl-C: exit %d, stderr %s", code, stderr)
	}
	if out, stderr, code := h.run("run", "--session", "s", "-c", "print(kept)"); code != 0 || out != "yes\n" {
		t.Fatalf("after an interrupt the state is gone: exit %d %q %s", code, out, stderr)
	}

	cmd, stderr = start("import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('running', flush=True)\nwhile True: pass")
	cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(200 * time.Millisecond) // two separate Ctrl-Cs, as a person presses them
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitCodeOf(t, cmd); code != 130 {
		t.Fatalf("second Ctrl-C: exit %d, stderr %s", code, stderr)
	}

	out, errOut, code := h.run("run", "--session", "s", "--timeout", "1", "-c", "import time; time.sleep(30)")
	if code != 124 || !strings.Contains(errOut, "timed out") {
		t.Fatalf("timeout: exit %d stdout %q stderr %s", code, out, errOut)
	}
	out, errOut, code = h.run("run", "--session", "s", "--json", "-c", "print('j')")
	if code != 0 || !strings.Contains(out, `{"cell":0,"type":"stdout","data":"j\n"}`) || !strings.Contains(out, `"type":"end"`) {
		t.Fatalf("--json: exit %d stdout %q stderr %s", code, out, errOut)
	}
}

// A cell's tool call comes back to the attached command and runs there.
func TestDaemonToolBridge(t *testing.T) {
	h := newDaemonHome(t)
	out, stderr, code := h.run("run", "--session", "s", "--tool", "echo=cat", "-c", "print(tool.echo(a=1))")
	if code != 0 || strings.TrimSpace(out) != "{'a': 1}" {
		t.Fatalf("exit %d stdout %q stderr %s", code, out, stderr)
	}
}

// The directory is 0700 and the socket 0600, both the user's.
func TestDaemonFileModes(t *testing.T) {
	h := newDaemonHome(t)
	h.pid("s")
	for _, f := range []struct {
		path string
		mode os.FileMode
	}{{filepath.Join(h.home, "daemon"), os.ModeDir | 0o700}, {filepath.Join(h.home, "daemon", "sock"), os.ModeSocket | 0o600}} {
		fi, err := os.Lstat(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != f.mode || int(fi.Sys().(*syscall.Stat_t).Uid) != os.Getuid() {
			t.Errorf("%s: mode %v uid %d, want %v uid %d", f.path, fi.Mode(), fi.Sys().(*syscall.Stat_t).Uid, f.mode, os.Getuid())
		}
	}
}

// A directory or socket that is not the user's own, or a socket served by
// another user's process, is refused, never used or removed.
func TestDaemonRefusesForeignFiles(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to make files of another user")
	}
	const nobody = 65534
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string
		// a socket is there, so daemon status must say why it is refused
		socket bool
	}{
		{"directory of another user", func(t *testing.T, dir string) {
			os.Mkdir(dir, 0o700)
			os.Chown(dir, nobody, nobody)
		}, "belongs to uid 65534", false},
		{"socket of another user", func(t *testing.T, dir string) {
			os.Mkdir(dir, 0o700)
			listenAt(t, filepath.Join(dir, "sock"))
			os.Chown(filepath.Join(dir, "sock"), nobody, nobody)
		}, "belongs to uid 65534", true},
		{"socket others can use", func(t *testing.T, dir string) {
			os.Mkdir(dir, 0o700)
			listenAt(t, filepath.Join(dir, "sock"))
			os.Chmod(filepath.Join(dir, "sock"), 0o666)
		}, "others could connect", true},
		{"socket served by another user's process", func(t *testing.T, dir string) {
			os.Mkdir(dir, 0o700)
			foreignListener(t, filepath.Join(dir, "sock"), nobody)
		}, "is served by a process of uid 65534", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &daemonHome{t: t, home: t.TempDir(), bin: binary}
			tt.setup(t, filepath.Join(h.home, "daemon"))
			_, stderr, code := h.run("run", "--session", "s", "-c", "1")
			if code != 1 || !strings.Contains(stderr, "refusing") || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want a refusal saying %q", code, stderr, tt.want)
			}
			if !tt.socket {
				return
			}
			// status must not call a process it refuses to reach "not running"
			stdout, stderr, code := h.run("daemon", "status")
			if code != 1 || stdout != "" || !strings.Contains(stderr, tt.want) {
				t.Fatalf("daemon status: exit %d, stdout %q, stderr %q; want the refusal, not \"not running\"", code, stdout, stderr)
			}
		})
	}
}

func listenAt(t *testing.T, path string) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o600)
	t.Cleanup(func() { ln.Close() })
}

// foreignListener has a process of uid listen on a socket, then moves the
// socket to path as this user's, mode 0600: only the peer check can tell.
// The process is this test binary (TestHelperListener), copied where uid
// may run it.
func foreignListener(t *testing.T, path string, uid int) {
	t.Helper()
	tmp, err := os.MkdirTemp("", "foreign-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	os.Chmod(tmp, 0o777)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(tmp, "helper")
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(tmp, "s")
	cmd := exec.Command(exe, "-test.run=^TestHelperListener$")
	cmd.Env = append(os.Environ(), "EVALHOST_TEST_HELPER=1", "EVALHOST_TEST_LISTEN="+sock)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if sc := bufio.NewScanner(stdout); !sc.Scan() || sc.Text() != "ready" {
		t.Fatal("the foreign listener did not start")
	}
	if err := os.Chown(sock, os.Getuid(), os.Getgid()); err != nil {
		t.Fatal(err)
	}
	os.Chmod(sock, 0o600)
	if err := os.Rename(sock, path); err != nil {
		t.Fatal(err)
	}
}

// TestHelperListener is foreignListener's process: it listens where
// EVALHOST_TEST_LISTEN says and greets every connection as a background
// process would.
func TestHelperListener(t *testing.T) {
	path := os.Getenv("EVALHOST_TEST_LISTEN")
	if path == "" {
		t.Skip("a helper process, run by foreignListener")
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("ready")
	for {
		c, err := ln.Accept()
		if err != nil {
			os.Exit(0)
		}
		c.Write([]byte(`{"type":"hello","version":"x","pid":1}` + "\n"))
	}
}

// An attached run's --json lines are a one-shot run's, but for times,
// pids and the frames of an interpreter start (ready, once per session).
func TestDaemonJSONSameAsOneShot(t *testing.T) {
	h := newDaemonHome(t)
	norm := regexp.MustCompile(`"(durationMs|pid|executionCount)":[0-9.]+`)
	cells := []string{"--json", "-c", "print('a')", "-c", "from IPython.display import display, HTML; display(HTML('<b>x</b>'))", "-c", "1/0"}
	oneShot, _, code1 := h.run(append([]string{"run"}, cells...)...)
	attached, _, code2 := h.run(append([]string{"run", "--session", "j"}, cells...)...)
	a, b := norm.ReplaceAllString(oneShot, "$1"), norm.ReplaceAllString(attached, "$1")
	if code1 != 1 || code2 != code1 || a != b {
		t.Fatalf("one-shot (exit %d):\n%s\nattached (exit %d):\n%s", code1, a, code2, b)
	}
}

// A closed output (| head -1) cancels the attached run's cell, as it
// stops a one-shot run, and the session is left idle for the next command.
func TestDaemonOutputClosed(t *testing.T) {
	h := newDaemonHome(t)
	cmd := h.cmd("run", "--session", "s", "-c", "import time\nfor i in range(3000):\n    print(i, flush=True); time.sleep(0.01)")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "0\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	stdout.Close()
	if code := exitCodeOf(t, cmd); code != 141 {
		t.Fatalf("exit %d, want 141", code)
	}
	if out, stderr, code := h.run("run", "--session", "s", "-c", "print('next')"); code != 0 || out != "next\n" {
		t.Fatalf("the next command: exit %d %q %s", code, out, stderr)
	}
}

// daemonPIDCell prints the pid of the process serving the session: each
// interpreter runs under its own reaper (internal/reaper), whose parent is
// the background process.
const daemonPIDCell = "import os; print(open('/proc/%d/stat' % os.getppid()).read().rsplit(')', 1)[1].split()[1])"

// A background process that is stopped (SIGSTOP) or hung is named with what
// to do once its hello does not come, rather than a wait for its lock and a
// vaguer error (or "no background process is running", which sessions
// said); resumed, it serves again with its state.
func TestDaemonHungIsSaid(t *testing.T) {
	h := newDaemonHome(t)
	pid := h.pid("s")
	if _, _, code := h.run("run", "--session", "s", "-c", "kept = 1"); code != 0 {
		t.Fatal("a cell failed")
	}
	// Stopped for certain: a SIGSTOP is only sent by Kill, and a thread of
	// the process could still answer a connection (twice in CI under load).
	stopProcess(t, pid)
	for _, args := range [][]string{{"sessions"}, {"run", "--session", "s", "-c", "kept"}} {
		want := fmt.Sprintf("the background process (pid %d) accepted the connection but sent nothing", pid)
		if _, stderr, code := h.run(args...); code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, fmt.Sprintf("kill -CONT %d", pid)) {
			t.Errorf("%v while it is stopped: exit %d, stderr %q; want %q", args, code, stderr, want)
		}
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if out, stderr, code := h.run("run", "--session", "s", "-c", "kept"); code != 0 || out != "1\n" {
		t.Errorf("after SIGCONT: exit %d, stdout %q, stderr %s", code, out, stderr)
	}
}

// A script as large as a one-shot run takes runs attached too: 20 MiB,
// over serve's default line bound, used to end with "broken pipe". One
// whose JSON is over the process's bound is refused, saying what to do.
func TestDaemonLargeScript(t *testing.T) {
	h := newDaemonHome(t)
	dir := t.TempDir()
	big := filepath.Join(dir, "big.py")
	if err := os.WriteFile(big, []byte("x = 1  # "+strings.Repeat("a", 20<<20)+"\nprint(x)\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, stderr, code := h.run("run", "--session", "s", big); code != 0 || out != "1\n" {
		t.Fatalf("20 MiB script: exit %d, stdout %q, stderr %.300s", code, out, stderr)
	}
	// 60 MiB of control characters, 360 MiB escaped.
	escaped := filepath.Join(dir, "escaped.py")
	if err := os.WriteFile(escaped, []byte("s = '"+strings.Repeat("\x01", 60<<20)+"'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := h.run("run", "--session", "s", escaped); code != 1 || !strings.Contains(stderr, "run it without a session") {
		t.Fatalf("over the bound: exit %d, stderr %.300s; want exit 1 and what to do", code, stderr)
	}
	if out, stderr, code := h.run("run", "--session", "s", "-c", "x"); code != 0 || out != "1\n" {
		t.Errorf("after the refusal: exit %d, stdout %q, stderr %s; want the session as it was", code, out, stderr)
	}
}
