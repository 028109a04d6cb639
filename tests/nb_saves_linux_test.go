package tests

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A run with parameters (papermill's metadata: each cell's start is saved
// too) writes the notebook about as often as one without, once per cell,
// not twice: each save writes the whole notebook, and a 5,000-cell run
// took 2-4 times as long. The saves are counted as the temp files each
// one is written to (created under a new name each time: inotify would
// merge a series of renames to the one name into one event). TestNotebookKilledMidCellMatchesPapermill shows a
// killed run's notebook still holds what the saves protect.
func TestNotebookRunWithParametersSavesOncePerCell(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.ipynb")
	cells := []string{"tagged:x = 0"}
	for i := 0; i < 150; i++ {
		cells = append(cells, "y = 1")
	}
	writeTaggedNotebook(t, in, cells...)
	saves := func(out string, args ...string) int {
		t.Helper()
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
		if err != nil {
			t.Skipf("inotify: %v", err)
		}
		defer unix.Close(fd)
		if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CREATE); err != nil {
			t.Fatal(err)
		}
		cmd := command(t, append([]string{"nb", "run", in, "-o", out}, args...)...)
		if _, errOut, code := runCaptured(t, cmd, false); code != 0 {
			t.Fatalf("nb run %q: exit %d\n%s", args, code, errOut)
		}
		return tempsOf(t, fd, filepath.Base(out))
	}
	plain := saves(filepath.Join(dir, "plain.ipynb"))
	withParams := saves(filepath.Join(dir, "params.ipynb"), "-p", "x", "1")
	t.Logf("%d saves with -p, %d without, for %d cells", withParams, plain, len(cells))
	// The injected cell is one more; an end no start followed within
	// nbrun.DefaultIdleAfter (a loaded machine) is saved on its own.
	if plain < len(cells) || withParams > plain+plain/4+2 {
		t.Fatalf("%d saves with -p, %d without, for %d cells; want about as many", withParams, plain, len(cells))
	}
}

// An interrupt writes the notebook once more, not once per cell that never
// ran: each such cell's end was saved, the whole notebook each time, so
// Ctrl-C of a script of 3,000 cells took 13 s to return (19,000: 100 s),
// silent. Counted as TestNotebookRunWithParametersSavesOncePerCell counts.
func TestNotebookRunInterruptSavesOnce(t *testing.T) {
	for _, params := range []bool{false, true} {
		name := "plain"
		if params {
			name = "papermill's metadata"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "running")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			src := "# %%\nimport time\nopen('running', 'w').close()\ntime.sleep(300)\n" + strings.Repeat("# %%\ny = 1\n", 300)
			script, out := filepath.Join(dir, "nb.py"), filepath.Join(dir, "out.ipynb")
			if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"nb", "run", script, "-o", out}
			if params {
				args = append(args, "-p", "x", "1")
			}
			cmd := command(t, args...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill() })
			if _, err := os.ReadFile(fifo); err != nil { // the first cell runs
				t.Fatal(err)
			}
			fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
			if err != nil {
				t.Skipf("inotify: %v", err)
			}
			defer unix.Close(fd)
			if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CREATE); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != 130 {
				t.Fatalf("exit %d (%v), want 130\n%s", code, err, &stderr)
			}
			// The interrupted cell's end, and the final save.
			if n := tempsOf(t, fd, filepath.Base(out)); n > 2 {
				t.Errorf("%d saves after the interrupt, for 300 cells that never ran; want 2 at most", n)
			}
			if !strings.Contains(stderr.String(), "interrupted; wrote "+out) {
				t.Errorf("stderr: %s", &stderr)
			}
		})
	}
}

// tempsOf counts the IN_CREATE events queued on fd for the temp files a
// save of name writes (".NAME.RANDOM.tmp").
func tempsOf(t *testing.T, fd int, name string) int {
	t.Helper()
	n := 0
	buf := make([]byte, 64<<10)
	for {
		got, err := unix.Read(fd, buf)
		if errors.Is(err, unix.EAGAIN) {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off+unix.SizeofInotifyEvent <= got; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			nameBytes := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				t.Fatal("inotify's queue overflowed")
			}
			created := string(bytes.TrimRight(nameBytes, "\x00"))
			if strings.HasPrefix(created, "."+name+".") && strings.HasSuffix(created, ".tmp") {
				n++
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
}
