package termrelay

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/evalhost/evalhost/internal/testkit"
)

func termios(t *testing.T, f *os.File) unix.Termios {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	return *tio
}

// child starts python3 with the relay's slave as its stdin and
// controlling terminal, stdout and stderr on the user's terminal.
func child(t *testing.T, r *Relay, s *testkit.Terminal, code string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(testkit.Python(t), "-c", code)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = r.Slave(), s.Tty, s.Tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

func TestRelay(t *testing.T) {
	for _, tc := range []struct {
		name, code, keys, prompt, want, hidden string
	}{
		{"input reads a line the child's terminal echoes", `print("got", repr(input("name: ")))`,
			"bob\r", "name: ", "got 'bob'", ""},
		{"the line is edited as on the user's terminal", `print("got", repr(input("name: ")))`,
			"bxb\x7f\x7fob\r", "name: ", "got 'bob'", ""},
		{"getpass asks on /dev/tty and does not echo", `import getpass; print("got", repr(getpass.getpass("pw: ")))`,
			"s3cret\r", "pw: ", "got 's3cret'", "s3cret\r"},
		{"end of file", `
try:
    input("name: ")
except EOFError:
    print("eof")`, "\x04", "name: ", "eof", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testkit.NewTerminal(t)
			before := termios(t, s.Tty)
			r, err := Start(s.Tty)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if got := termios(t, s.Tty); got.Lflag&(unix.ICANON|unix.ECHO) != 0 || got.Lflag&unix.ISIG == 0 {
				t.Errorf("the user's terminal during the relay: lflag %#x; want no ICANON, no ECHO, ISIG kept", got.Lflag)
			}
			cmd := child(t, r, s, tc.code)
			s.Await(tc.prompt)
			s.Type(tc.keys)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("%v; screen %q", err, s.Shown())
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			s.Await(tc.want)
			if tc.hidden != "" && strings.Count(s.Shown(), strings.TrimSuffix(tc.hidden, "\r")) != 1 {
				t.Errorf("the screen shows what was typed unechoed: %q", s.Shown())
			}
			if after := termios(t, s.Tty); after != before {
				t.Errorf("the user's terminal after Close:\n%+v\nwant it as before:\n%+v", after, before)
			}
			if err := r.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
		})
	}
}

// sleeper starts a child on the relay's terminal that never reads it;
// stop kills it and waits.
func sleeper(t *testing.T, r *Relay) (stop func()) {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.Stdin = r.Slave()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return func() { cmd.Process.Kill(); cmd.Wait() }
}

// TestRelayCloseWithAGrandchildHoldingTheTerminal: Close returns though a
// process the child left holds the pseudo-terminal open.
func TestRelayCloseWithAGrandchildHoldingTheTerminal(t *testing.T) {
	s := testkit.NewTerminal(t)
	r, err := Start(s.Tty)
	if err != nil {
		t.Fatal(err)
	}
	stop := sleeper(t, r)
	defer stop()
	closed := make(chan error)
	go func() { closed <- r.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Close did not return while another process held the pseudo-terminal")
	}
}

func TestRelaySuspendResume(t *testing.T) {
	s := testkit.NewTerminal(t)
	before := termios(t, s.Tty)
	r, err := Start(s.Tty)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Resume(); err != nil { // a SIGCONT that continued nothing
		t.Fatal(err)
	}
	if err := r.Suspend(); err != nil {
		t.Fatal(err)
	}
	if got := termios(t, s.Tty); got != before {
		t.Errorf("suspended: the terminal is not as before the relay")
	}
	if err := r.Resume(); err != nil {
		t.Fatal(err)
	}
	if got := termios(t, s.Tty); got.Lflag&unix.ICANON != 0 {
		t.Errorf("resumed: the terminal is canonical again")
	}
	if err := r.Resume(); err != nil { // a second SIGCONT
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if got := termios(t, s.Tty); got != before {
		t.Errorf("closed after a suspend, a resume and a SIGCONT: the terminal is not as before the relay")
	}
	if err := r.Resume(); err == nil {
		t.Error("Resume after Close succeeded")
	}
}

func TestStartRefusesAFileNotATerminal(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := Start(f); err == nil || !strings.Contains(err.Error(), "not a terminal") {
		t.Errorf("Start on /dev/null: %v; want an error saying it is not a terminal", err)
	}
}

// TestRelayGivesBackTypeAhead: what was typed while the child did not read
// is in the real terminal's input after Close, for the shell, and shown
// once.
func TestRelayGivesBackTypeAhead(t *testing.T) {
	s := testkit.NewTerminal(t)
	r, err := Start(s.Tty)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	stop := sleeper(t, r)
	s.Type("ls -l\r")
	s.Await("ls -l") // the pseudo-terminal took it: its echo
	stop()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	tio := termios(t, s.Tty)
	tio.Lflag &^= unix.ICANON // a read that returns what is there, if anything
	tio.Cc[unix.VMIN], tio.Cc[unix.VTIME] = 0, 0
	if err := unix.IoctlSetTermios(int(s.Tty.Fd()), unix.TCSETS, &tio); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 100)
	n, _ := s.Tty.Read(buf)
	if got := string(buf[:n]); got != "ls -l\n" {
		t.Errorf("the shell would read %q, want %q", got, "ls -l\n")
	}
	if _, err := s.Tty.Write([]byte("END")); err != nil { // after all the Close showed
		t.Fatal(err)
	}
	s.Await("END")
	if shown := s.Shown(); strings.Count(shown, "ls -l") != 1 {
		t.Errorf("the terminal shows %q: the typed line more than once", shown)
	}
}
