package remotetest

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// watcher runs a teardown script exactly once: when its owner calls run, or,
// should the test process die first, when the pipe it reads from closes.
type watcher struct {
	cmd     *exec.Cmd
	pipe    io.WriteCloser
	outName string
	once    sync.Once
	err     error
}

// watch starts sh reading its stdin until EOF, then running script. The
// write end stays with this process, so its death (any death) is the EOF.
// The watcher is in its own process group, so a signal to the test's group
// does not take it down before it has cleaned up.
func watch(t testing.TB, script string) *watcher {
	t.Helper()
	out, err := os.CreateTemp("", Marker+"teardown-")
	if err != nil {
		t.Fatalf("teardown watcher: %v", err)
	}
	defer out.Close()
	cmd := exec.Command("sh", "-c", "cat >/dev/null\n"+script, Marker+"teardown")
	setOwnGroup(cmd)
	cmd.Stdout, cmd.Stderr = out, out
	pipe, err := cmd.StdinPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		os.Remove(out.Name())
		t.Fatalf("teardown watcher: %v", err)
	}
	return &watcher{cmd: cmd, pipe: pipe, outName: out.Name()}
}

// run has the script run now and waits for it; its output is in the error
// when it failed. Safe to call twice.
func (w *watcher) run() error {
	w.once.Do(func() {
		w.pipe.Close()
		err := w.cmd.Wait()
		out, _ := os.ReadFile(w.outName)
		os.Remove(w.outName)
		if err != nil {
			w.err = fmt.Errorf("teardown: %w: %s", err, strings.TrimSpace(string(out)))
		}
	})
	return w.err
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
