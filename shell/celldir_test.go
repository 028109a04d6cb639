package shell

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cellDirHelperEnv makes the test binary a process that makes a cell
// directory, prints its path and waits to be killed (TestMain): a shell's
// evalhost, whose death lets its directory's lock go as SIGKILL's does.
const cellDirHelperEnv = "EVALHOST_SHELL_CELLDIR_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(cellDirHelperEnv) != "" {
		d, err := makeCellDir()
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString(d.path + "\n")
		for { // until killed
			time.Sleep(time.Hour)
		}
	}
	os.Exit(m.Run())
}

// cellDirOwner starts a process that makes a cell directory in tmp and
// lives until killed; it returns the directory and a kill that SIGKILLs
// and reaps the process.
func cellDirOwner(t *testing.T, tmp string) (dir string, kill func()) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), cellDirHelperEnv+"=1", "TMPDIR="+tmp)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	kill = func() {
		if !killed {
			killed = true
			_ = cmd.Process.Signal(syscall.SIGKILL)
			_ = cmd.Wait()
		}
	}
	t.Cleanup(kill)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("cell directory owner: %v", err)
	}
	return strings.TrimSuffix(line, "\n"), kill
}

// plantCellDir makes what a sweep must judge: a directory of mode, with
// the owner's mark unless unmarked, at tmp/name.
func plantCellDir(t *testing.T, tmp, name string, mode os.FileMode, marked bool) string {
	t.Helper()
	p := filepath.Join(tmp, name)
	if err := os.Mkdir(p, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, "cell.sh"), []byte("echo hi\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if marked {
		if err := os.WriteFile(filepath.Join(p, ownerMark), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// A cell directory whose evalhost was killed is removed by a later sweep,
// and nothing else is: not a live owner's (another process's, or this
// one's own shell's), not another user's, not a link planted under the
// name (nor what it points to), not one of another mode, unmarked (an
// older evalhost's), or named otherwise.
func TestSweepCellDirs(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	own := startShell(t, Options{}) // first: the first Start in a process sweeps too
	dead, kill := cellDirOwner(t, tmp)
	live, _ := cellDirOwner(t, tmp)
	kill()
	victim := plantCellDir(t, t.TempDir(), "victim", 0o700, true)
	link := filepath.Join(tmp, cellDirPrefix+"111")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	fileNamed := filepath.Join(tmp, cellDirPrefix+"222")
	if err := os.WriteFile(fileNamed, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(tmp, cellDirPrefix+"888") // an open for reading would wait for a writer
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// A link in the dead owner's directory is removed, not followed.
	if err := os.Symlink(victim, filepath.Join(dead, "escape")); err != nil {
		t.Fatal(err)
	}
	kept := map[string]string{
		"a live owner's":             live,
		"this process's own shell's": own.dir,
		"a link under the name":      link,
		"the link's target":          victim,
		"a file under the name":      fileNamed,
		"one of mode 0755":           plantCellDir(t, tmp, cellDirPrefix+"333", 0o755, true),
		"an unmarked one (older)":    plantCellDir(t, tmp, cellDirPrefix+"444", 0o700, false),
		"one named otherwise":        plantCellDir(t, tmp, cellDirPrefix+"5x", 0o700, true),
		"one with no digits":         plantCellDir(t, tmp, cellDirPrefix, 0o700, true),
		"another prefix's":           plantCellDir(t, tmp, "evalhost-gw-666", 0o700, true),
	}
	if os.Geteuid() == 0 {
		other := plantCellDir(t, tmp, cellDirPrefix+"777", 0o700, true)
		if err := os.Lchown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		kept["another user's"] = other
	} else {
		t.Log("not root: no directory of another user's to plant")
	}
	removed, err := SweepCellDirs()
	if err != nil {
		t.Fatal(err)
	}
	if removed != 1 || exists(dead) {
		t.Errorf("removed %d; the killed owner's %s is there: %v; want it alone removed", removed, dead, exists(dead))
	}
	for what, p := range kept {
		if !exists(p) {
			t.Errorf("%s %s was removed", what, p)
		}
	}
	if !exists(filepath.Join(victim, "cell.sh")) {
		t.Errorf("the link's target lost its files")
	}
	if got := shellCode(own, "echo still here"); got.stdout() != "still here\r\n" && got.stdout() != "still here\n" {
		t.Errorf("this process's shell after the sweep: %q, %v", got.stdout(), got.err)
	}
}

// A temporary directory others could rename entries in (writable by all,
// without the sticky bit) is not swept: the names in it are not the
// user's to judge.
func TestSweepCellDirsRefusesAnOpenTmp(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dead, kill := cellDirOwner(t, tmp)
	kill()
	if err := os.Chmod(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	if removed, err := SweepCellDirs(); removed != 0 || err == nil || !exists(dead) {
		t.Errorf("removed %d (err %v) from a temporary directory open to all", removed, err)
	}
}

// A shell's directory is marked and locked while it lives, and gone once
// it is closed.
func TestShellCellDirLocked(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	s, err := Start(t.Context(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(s.dir) != tmp || !cellDirName(filepath.Base(s.dir)) || !exists(filepath.Join(s.dir, ownerMark)) {
		t.Errorf("cell directory %s: want a marked %s* in %s", s.dir, cellDirPrefix, tmp)
	}
	if ok, err := sweepCellDir(s.dir); ok || err != nil {
		t.Errorf("a live shell's directory was swept (%v)", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if exists(s.dir) {
		t.Errorf("%s left after Close", s.dir)
	}
}
