package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A session's directory removed and made again (rm -rf d; mkdir d; cd d)
// is another directory: run --session there starts a fresh session in it,
// as python3 started there runs there, and says once why the state from
// before is gone. The background process kept the interpreter in the
// removed directory, where os.getcwd() failed (FileNotFoundError) and
// files written went nowhere. Twice: the second time the process watches
// the directory (a key used more than once).
func TestDaemonRecreatedCwdIsANewSession(t *testing.T) {
	h := newDaemonHome(t)
	d := filepath.Join(t.TempDir(), "d")
	in := func(args ...string) (string, string, int) {
		cmd := h.cmd(args...)
		cmd.Dir = d
		return runCaptured(t, cmd, false)
	}
	const cell = "import os\nopen('f', 'w').write('1')\nprint(os.getcwd(), sorted(os.listdir('.')), 'x' in dir())"
	for round := range 2 {
		if err := os.RemoveAll(d); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		out, stderr, code := in("run", "--session", "s", "-c", cell)
		py := exec.Command("python3", "-c", cell) // what python3 started there says
		py.Dir = d
		want, err := py.Output()
		if err != nil {
			t.Fatal(err)
		}
		notice := "[state lost: session s's py interpreter was left in " + d + ", a directory since removed"
		if code != 0 || out != string(want) || (round > 0) != strings.Contains(stderr, notice) || strings.Count(stderr, "state lost") > 1 {
			t.Fatalf("round %d: exit %d, stdout %q, stderr %q; want a fresh session in the new %s, the loss told once after the first", round, code, out, stderr, d)
		}
		for range 3 { // state kept while the directory stays
			if _, stderr, code := in("run", "--session", "s", "-c", "x = 1"); code != 0 {
				t.Fatal(stderr)
			}
		}
	}
	if out, _, _ := h.run("sessions"); strings.Count(out, "\ns ") != 1 {
		t.Fatalf("sessions lists s other than once:\n%s", out)
	}
}
