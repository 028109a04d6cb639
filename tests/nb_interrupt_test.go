package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
)

// TestNotebookRunInterrupted: a signal during nb run interrupts the running
// cell, writes the notebook with everything so far (the finished cell's
// output, the interrupted cell's partial output and its KeyboardInterrupt; the
// cell that never ran untouched), says so, exits 130, and ends the
// processes the cell started.
func TestNotebookRunInterrupted(t *testing.T) {
	tests := []struct {
		name   string
		sig    syscall.Signal
		output bool // -o OUT instead of --inplace
	}{
		{"SIGINT inplace", syscall.SIGINT, false},
		{"SIGTERM to -o", syscall.SIGTERM, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "started")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			in := filepath.Join(dir, "nb.ipynb")
			writeNotebook(t, in,
				"print('one')",
				"import subprocess, time\np = subprocess.Popen(['sleep', '300'])\nprint('two', flush=True)\n"+
					"with open('started', 'w') as f:\n    f.write(str(p.pid))\ntime.sleep(300)",
				"print('three')")
			out := in
			args := []string{"nb", "run", in, "--grace", "20s"}
			if tt.output {
				out = filepath.Join(dir, "out.ipynb")
				args = append(args, "-o", out)
			} else {
				args = append(args, "--inplace")
			}
			cmd := command(t, args...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill() })
			// Opening the FIFO waits for the cell to open it: the cell runs.
			// An evalhost that exits first must not leave the test waiting.
			exited := make(chan struct{})
			var waitErr error
			go func() {
				waitErr = cmd.Wait()
				close(exited)
				if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
			}()
			data, err := os.ReadFile(fifo)
			select {
			case <-exited:
				t.Fatalf("evalhost nb run exited before the cell ran; stderr %s", &stderr)
			default:
			}
			pid, _ := strconv.Atoi(string(data))
			if err != nil || pid <= 0 {
				t.Fatalf("read the cell's child pid: %q %v", data, err)
			}
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			// Written after every cell: what a kill -9 now would leave.
			if c := readNotebook(t, out)[0]; len(c.Outputs) != 1 || text(c.Outputs[0].Text) != "one\n" {
				t.Errorf("while cell 1 runs, %s lacks cell 0's output: %+v", out, c)
			}
			cmd.Process.Signal(tt.sig)
			select {
			case <-exited:
			case <-time.After(60 * time.Second):
				t.Fatal("evalhost nb run did not exit after the signal")
			}
			if code := cmd.ProcessState.ExitCode(); code != 130 {
				t.Fatalf("exit %d (%v), want 130; stderr %s", code, waitErr, &stderr)
			}
			if !strings.Contains(stderr.String(), "interrupted; wrote "+out+" with the outputs so far (1 of 3 cells finished)") {
				t.Errorf("stderr %q does not say it was interrupted and where the notebook is", &stderr)
			}
			cells := readNotebook(t, out)
			if c := cells[0]; len(c.Outputs) != 1 || text(c.Outputs[0].Text) != "one\n" || c.ExecutionCount == nil {
				t.Errorf("the finished cell lost its output: %+v", c)
			}
			c := cells[1]
			if len(c.Outputs) != 2 || text(c.Outputs[0].Text) != "two\n" || errorNames(c) != "KeyboardInterrupt" {
				t.Errorf("the interrupted cell should keep its output and one error output, its KeyboardInterrupt: %+v", c)
			}
			if c := cells[2]; len(c.Outputs) != 0 || c.ExecutionCount != nil {
				t.Errorf("the cell that never ran was changed: %+v", c)
			}
			if !leakcheck.Gone(pid, hangBound) {
				t.Errorf("the cell's child process %d outlived evalhost nb run", pid)
			}
		})
	}
}
