package main

import (
	"fmt"
	"os"
	"os/exec"
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
