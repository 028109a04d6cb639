package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/evalhost/evalhost/internal/leakcheck"
)

// The descriptors the first command had beyond stdio (a harness's pipe,
// `4>&1`) are not kept by the background process it starts, nor by that
// process's interpreters: `run --session s ... 4>&1 | cat` waited for the
// process's idle end, its pipe held open there.
func TestDaemonKeepsNoInheritedDescriptor(t *testing.T) {
	h := newDaemonHome(t)
	var pipes []string
	cmd := h.cmd("run", "--session", "s", "-c", "import os; print(os.getpid(), os.getppid())")
	for range 2 { // fd 3, where the process's ready pipe goes, and fd 4
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		defer w.Close()
		var st syscall.Stat_t
		if err := syscall.Fstat(int(w.Fd()), &st); err != nil {
			t.Fatal(err)
		}
		pipes = append(pipes, fmt.Sprintf("pipe:[%d]", st.Ino))
		cmd.ExtraFiles = append(cmd.ExtraFiles, w)
	}
	out, stderr, code := runCaptured(t, cmd, false)
	ids := strings.Fields(out)
	if code != 0 || len(ids) != 2 {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, out, stderr)
	}
	interp, _ := strconv.Atoi(ids[0])
	reaper, _ := strconv.Atoi(ids[1])
	daemonPID, ok := leakcheck.Parent(reaper)
	if !ok {
		t.Fatalf("no parent of the reaper %d", reaper)
	}
	procs := map[string]int{"the interpreter": interp, "its reaper": reaper, "the background process": daemonPID}
	for who, pid := range procs {
		ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			link, _ := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), e.Name()))
			for i, p := range pipes {
				if link == p {
					t.Errorf("%s (pid %d) holds the command's fd %d as its fd %s", who, pid, 3+i, e.Name())
				}
			}
		}
	}
}
