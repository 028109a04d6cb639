package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// runBare runs python -c code with stdout and stderr on /dev/null and
// returns its wall time.
func runBare(python, code string) (time.Duration, error) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return 0, err
	}
	defer null.Close()
	cmd := exec.Command(python, "-c", code)
	cmd.Stdout, cmd.Stderr = null, null
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%s -c %q: %w", python, code, err)
	}
	return time.Since(start), nil
}

// runTimed runs python -c code with stdout on /dev/null, the interpreter
// timing the code itself: an anchor for work done inside a running
// interpreter, without the interpreter's start.
func runTimed(python, code string) (time.Duration, error) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return 0, err
	}
	defer null.Close()
	timed := "import time as _t, os as _os\n_t0 = _t.perf_counter()\n" + code +
		"\n_os.write(2, repr(_t.perf_counter() - _t0).encode())"
	var stderr strings.Builder
	cmd := exec.Command(python, "-c", timed)
	cmd.Stdout, cmd.Stderr = null, &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%s -c %q: %w: %s", python, code, err, stderr.String())
	}
	sec, err := strconv.ParseFloat(strings.TrimSpace(stderr.String()), 64)
	if err != nil {
		return 0, fmt.Errorf("%s -c %q: no timing on stderr: %q", python, code, stderr.String())
	}
	return time.Duration(sec * float64(time.Second)), nil
}

// Workloads shared by the Go API, serve and the Jupyter script.
const (
	printLoop = "for i in range(300000): print(i)"
	// bulk prints n blocks of 64 KiB (65535 x's and a newline).
	bulk = "import sys\nb = 'x' * 65535 + '\\n'\nw = sys.stdout.write\nfor _ in range(%d):\n    w(b)\nsys.stdout.flush()"
	// deathCell records the wall clock in ns in a file (%q), then dies: a
	// stamp printed just before the kill may never leave a Jupyter kernel.
	// Only the first attempt writes it; sessions retry a dead cell once.
	deathCell = "import os, time\ntry:\n    open(%q, 'x').write(str(time.time_ns()))\nexcept FileExistsError:\n    pass\nos.kill(os.getpid(), 9)"
)
