package faults

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/sessions"
)

// helperEnv makes the test binary act as a host (see TestMain).
const helperEnv = "EVALHOST_FAULTS_HOST"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHostHelper(mode))
	}
	os.Exit(m.Run())
}

// runHostHelper is a host that starts one interpreter, prints "pid N" for
// it, and then either keeps the cell running ("busy") or idles after it
// ("idle") until it is killed.
func runHostHelper(mode string) int {
	lang, state, _ := strings.Cut(mode, ":")
	r := sessions.New(sessions.Config{Home: os.Getenv("EVALHOST_FAULTS_HOME")})
	code := map[string]string{
		"py": "import os, time\nprint('pid', os.getpid(), flush=True)\n",
		"sh": "echo pid $$\n",
	}[lang]
	if state == "busy" {
		code += map[string]string{"py": "time.sleep(600)", "sh": "sleep 600"}[lang]
	}
	emit := func(_ int, f frames.Frame) {
		if f.Type == frames.TypeStdout {
			fmt.Print(f.Data)
		}
	}
	res, err := r.Eval(context.Background(), sessions.Request{Cells: []sessions.Cell{{Language: lang, Code: code, Timeout: 600 * time.Second}}}, emit)
	if err != nil || res.Status != sessions.StatusOK {
		fmt.Fprintf(os.Stderr, "helper: %v %+v\n", err, res)
		return 1
	}
	fmt.Println("idle")
	select {} // wait for SIGKILL
}

// When the host is SIGKILLed, no interpreter outlives it: neither one in
// the middle of a cell nor an idle one, for Python and for sh.
func TestHostKilled(t *testing.T) {
	requirePython(t)
	tests := []struct{ name, mode string }{
		{"python busy", "py:busy"},
		{"python idle", "py:idle"},
		{"sh busy", "sh:busy"},
		{"sh idle", "sh:idle"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), helperEnv+"="+tc.mode, "EVALHOST_FAULTS_HOME="+t.TempDir())
			cmd.Stderr = os.Stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// A helper that never answers is killed, which ends the read.
			stuck := time.AfterFunc(30*time.Second, func() { _ = cmd.Process.Kill() })
			began := time.Now()
			pid, err := readPID(out, strings.HasSuffix(tc.mode, "idle"))
			stuck.Stop()
			t.Logf("helper reported pid after %v", time.Since(began))
			if err != nil {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatalf("helper host: %v", err)
			}
			if leakcheck.Gone(pid, 0) {
				t.Fatalf("interpreter %d not running before the host is killed", pid)
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			killed := time.Now()
			defer func() { t.Logf("interpreter gone %v after its host", time.Since(killed)) }()
			if !leakcheck.Gone(pid, 10*time.Second) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("interpreter %d survived its host's SIGKILL", pid)
			}
		})
	}
}

// readPID reads the helper's "pid N" line, and with idle also waits for
// "idle" so the kill lands after the cell ended.
func readPID(out io.Reader, idle bool) (int, error) {
	sc := bufio.NewScanner(out)
	pid := 0
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "pid "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(rest))
			if err != nil {
				return 0, fmt.Errorf("bad pid line %q", line)
			}
			pid = n
		}
		if pid != 0 && (!idle || line == "idle") {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("helper ended without a pid line (scan: %v)", sc.Err())
}
