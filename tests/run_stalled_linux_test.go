package tests

import (
	"bufio"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/testkit"
)

// A run whose stdout reader stopped reading (`evalhost run ... | sleep
// 600`) while its script floods it, then sent SIGTERM or SIGINT, stayed
// blocked in that write for ever, its interpreter already gone; python3
// dies of the signal at once there. The run now dies of it once the write
// has waited 5 s, leaving no interpreter.
func TestRunSignalWithAStalledReader(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := command(t, "run", "--timeout", "0", "-c", "import os\nprint(os.getpid(), flush=True)\nwhile True: print('z' * 1000)")
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			w := startWatched(t, cmd)
			line, err := bufio.NewReaderSize(out, 64).ReadString('\n')
			pid, perr := strconv.Atoi(strings.TrimSpace(line))
			if err != nil || perr != nil {
				t.Fatalf("no pid line: %q %v %v", line, err, perr)
			}
			testkit.WaitThreadSyscall(t, cmd.Process.Pid, int(syscall.SYS_WRITE), 1) // blocked in a write to stdout
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-w.exited:
				var ee *exec.ExitError
				ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
				if !errors.As(w.waitErr, &ee) || !ws.Signaled() || ws.Signal() != sig {
					t.Errorf("run ended %v, want to die of %v as python3 does; stderr:\n%s", w.waitErr, sig, w.log())
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("run did not end within 30 s of %v while nothing read its output", sig)
			}
			checkPidsGone(t, []int{pid})
		})
	}
}
