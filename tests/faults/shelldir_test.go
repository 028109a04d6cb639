package faults

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// startServeIn starts `evalhost serve` with tmp as its temporary directory
// and runs an sh cell in it, returning once the cell ended.
func startServeIn(t *testing.T, tmp string) *host {
	t.Helper()
	cmd := exec.Command(evalhostBinary(t), "serve")
	cmd.Env = append(os.Environ(), "EVALHOST_HOME="+t.TempDir(), "TMPDIR="+tmp)
	h := launchHost(t, cmd, "serve")
	t.Cleanup(h.kill)
	h.shCell(t)
	return h
}

// shCell runs an sh cell in session s and waits for its end, which must
// come after its output.
func (h *host) shCell(t *testing.T) {
	t.Helper()
	req, _ := json.Marshal(map[string]any{"op": "eval", "id": "k", "session": "s", "cwd": t.TempDir(),
		"cells": []map[string]any{{"language": "sh", "code": "echo ok", "timeout": 60}}})
	if _, err := h.stdin.Write(append(req, '\n')); err != nil {
		t.Fatal(err)
	}
	stuck := time.AfterFunc(60*time.Second, func() { _ = h.cmd.Process.Kill() })
	defer stuck.Stop()
	said := false
	for line := range h.lines {
		switch strings.TrimSpace(line) {
		case "ok":
			said = true
		case "idle":
			if !said {
				t.Fatal("the sh cell ended without its output")
			}
			return
		}
	}
	t.Fatal("serve ended before its sh cell did")
}

// shellDirs lists the shells' cell directories in tmp.
func shellDirs(t *testing.T, tmp string) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(tmp, "evalhost-sh-*"))
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// The cell directory a SIGKILLed serve's shell left in the temporary
// directory is removed by the next serve that starts, once its own first
// sh cell has run (the sweep is done by then); a live serve's is not, and
// that serve's shell goes on working.
func TestKilledServeShellDirRemoved(t *testing.T) {
	tmp := t.TempDir()
	killed := startServeIn(t, tmp)
	dirs := shellDirs(t, tmp)
	if len(dirs) != 1 {
		t.Fatalf("cell directories %v, want the one of serve's shell", dirs)
	}
	killedDir := dirs[0]
	live := startServeIn(t, tmp)
	liveDirs := shellDirs(t, tmp)
	killed.kill()
	if !slices.Contains(shellDirs(t, tmp), killedDir) {
		t.Fatalf("%s went with its serve's SIGKILL: the test needs it left", killedDir)
	}
	startServeIn(t, tmp)
	left := shellDirs(t, tmp)
	if slices.Contains(left, killedDir) {
		t.Errorf("the killed serve's %s was left after the next serve's shell started", killedDir)
	}
	for _, d := range liveDirs {
		if d != killedDir && !slices.Contains(left, d) {
			t.Errorf("the live serve's %s was removed", d)
		}
	}
	live.shCell(t) // its shell still has its cell directory
}
