package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/testkit"
)

// A papermill-style run killed (SIGKILL) while a cell runs leaves the
// notebook papermill leaves: saved as each cell started, so the cells it
// passed are completed (markdown too), the running one says running with
// its start time and no output yet, and the rest are pending. Both are
// killed once the cell's first output is in their --log-output, which
// comes after the cell's start was saved.
func TestNotebookKilledMidCellMatchesPapermill(t *testing.T) {
	testkit.NeedModuleIn(t, "python3", "papermill, ipykernel", "papermill ipykernel")
	dir := t.TempDir()
	in := filepath.Join(dir, "in.ipynb")
	writeTaggedNotebook(t, in, "md:# Report", "print('one')", "md:## The slow part",
		"import os, time\nprint('pid', os.getpid(), flush=True)\ntime.sleep(300)", "md:# After", "print('never')")
	want := []string{
		"markdown completed exception=False start=True end=True count=None outputs=''",
		"code completed exception=False start=True end=True count=1 outputs='one\\n'",
		"markdown completed exception=False start=True end=True count=None outputs=''",
		"code running exception=False start=True end=False count=None outputs=''",
		"markdown pending exception=None start=False end=False count=None outputs=''",
		"code pending exception=None start=False end=False count=None outputs=''",
	}
	tests := []struct {
		name    string
		command func(out string) *exec.Cmd
		reaped  bool // the cell's interpreter ends with the killed process
	}{
		{"evalhost nb run", func(out string) *exec.Cmd {
			return command(t, "nb", "run", in, "-o", out, "--log-output", "--papermill-metadata", "on")
		}, true},
		{"papermill", func(out string) *exec.Cmd {
			return exec.Command("python3", "-c", papermillCLI, in, out, "--log-output", "--kernel", "python3", "--no-progress-bar")
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".ipynb")
			cmd := tt.command(out)
			pid := killAtCellOutput(t, cmd)
			if tt.reaped {
				if !leakcheck.Gone(pid, hangBound) {
					t.Errorf("the cell's interpreter %d outlived the killed run", pid)
				}
			} else {
				syscall.Kill(pid, syscall.SIGKILL) // papermill's kernel outlives it
			}
			got := killedNotebook(t, out)
			if strings.Join(got.Cells, "\n") != strings.Join(want, "\n") {
				t.Errorf("cells of the killed run's notebook:\n%s\nwant\n%s", strings.Join(got.Cells, "\n"), strings.Join(want, "\n"))
			}
			if !got.Started || got.Ended {
				t.Errorf("the run's metadata.papermill: start_time set %v, end_time set %v; want a start and no end", got.Started, got.Ended)
			}
		})
	}
}

// killAtCellOutput starts cmd, reads its stderr until the running cell's
// "pid N" line and kills cmd with SIGKILL; it returns N.
func killAtCellOutput(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := regexp.MustCompile(`^pid (\d+)$`)
	var seen strings.Builder
	for sc := bufio.NewScanner(stderr); sc.Scan(); {
		fmt.Fprintln(&seen, sc.Text())
		if m := line.FindStringSubmatch(sc.Text()); m != nil {
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			pid, _ := strconv.Atoi(m[1])
			return pid
		}
	}
	cmd.Wait()
	t.Fatalf("%s ended before the slow cell ran; its stderr:\n%s", cmd.Args[0], &seen)
	return 0
}

// killedRun is what a killed run's notebook says: each cell as a line,
// and whether the run's start and end times are set.
type killedRun struct {
	Cells          []string
	Started, Ended bool
}

// killedNotebook reads path as nbformat reads it (and validates it).
func killedNotebook(t *testing.T, path string) killedRun {
	t.Helper()
	script := `
import json, sys, nbformat
nb = nbformat.read(sys.argv[1], as_version=4)
nbformat.validate(nb)
cells = []
for c in nb.cells:
    pm = c.metadata.get("papermill", {})
    text = "".join(o.get("text", "") for o in c.get("outputs", []))
    cells.append("%s %s exception=%s start=%s end=%s count=%s outputs=%r" % (c.cell_type, pm.get("status"), pm.get("exception"),
        pm.get("start_time") is not None, pm.get("end_time") is not None, c.get("execution_count"), text))
run = nb.metadata.get("papermill", {})
json.dump({"Cells": cells, "Started": run.get("start_time") is not None, "Ended": run.get("end_time") is not None}, sys.stdout)
`
	data, err := exec.Command("python3", "-c", script, path).CombinedOutput()
	if err != nil {
		t.Fatalf("read %s: %v\n%s", path, err, data)
	}
	var run killedRun
	if err := json.Unmarshal(data, &run); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	return run
}
