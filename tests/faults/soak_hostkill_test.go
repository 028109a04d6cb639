package faults

import (
	"context"
	"flag"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/testkit"
	"github.com/evalhost/evalhost/sessions"
)

var soakHostKills = flag.Int("soak.hostkills", 30, "times the host-kill soak SIGKILLs a busy host")

// soakHostCells are what a soak host runs: cells that start processes of
// every kind, and cells that are busy, interrupted or die.
func soakHostCells() []sessions.Cell {
	sh := func(code string) sessions.Cell { return sessions.Cell{Language: sessions.LangShell, Code: code} }
	return []sessions.Cell{
		py(spawnCode("py", false)),
		sh(spawnCode("sh", false)),
		py("print('ok')"),
		py("import time\ntime.sleep(0.5)"),
		sh("sleep 0.3; echo ok"),
		pyT("import subprocess, time\nsubprocess.Popen(['sleep', '1000'], start_new_session=True)\ntime.sleep(5)", time.Second),
		py("import os\nos.kill(os.getpid(), 9)"),
	}
}

// runSoakHost runs random cells in four sessions working in dir until it is
// killed.
func runSoakHost(r *sessions.Registry, dir string) int {
	cells := soakHostCells()
	for w := range 4 {
		go func() {
			rng := rand.New(rand.NewPCG(uint64(os.Getpid()), uint64(w)))
			for {
				c := cells[rng.IntN(len(cells))]
				_, _ = r.Eval(context.Background(), sessions.Request{Session: "h" + strconv.Itoa(w), Cwd: dir, Cells: []sessions.Cell{c}},
					func(int, frames.Frame) {})
			}
		}()
	}
	select {} // wait for SIGKILL
}

// TestSoakHostKill SIGKILLs a host running random cells in four sessions at
// random points, again and again, and checks each time that every process
// its cells started (found by working directory, wherever it was
// re-parented) ends.
func TestSoakHostKill(t *testing.T) {
	if !*soak {
		t.Skip("soak test: run with -soak (and -soak.hostkills N)")
	}
	testkit.Python(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 42))
	caught, killedBusy := 0, 0
	for round := range *soakHostKills {
		dir := t.TempDir()
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"=soak", "EVALHOST_FAULTS_HOME="+t.TempDir(), "EVALHOST_FAULTS_CWD="+dir)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The random point of the kill; nothing is asserted about this wait.
		time.Sleep(time.Duration(200+rng.IntN(4000)) * time.Millisecond)
		running := len(leakcheck.InDir(dir))
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		killed := time.Now()
		if left := leakcheck.GoneFromDir(dir, hangBound); len(left) > 0 {
			t.Errorf("round %d: %d processes still ran %s after the host's SIGKILL: %q", round, len(left), hangBound, left)
			for _, p := range left {
				if pid, err := strconv.Atoi(strings.Fields(p)[0]); err == nil {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		caught += running
		if running > 0 {
			killedBusy++
		}
		t.Logf("round %d: %d processes in the cells' directory at the kill, all gone %v after it", round, running, time.Since(killed).Round(time.Millisecond))
	}
	if killedBusy == 0 {
		t.Error("no kill landed while cells had processes running: the soak proved nothing")
	}
	t.Logf("%d kills, %d with cell processes running, %d such processes in all", *soakHostKills, killedBusy, caught)
}
