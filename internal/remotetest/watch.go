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

// ownerSays is what run writes before it closes the pipe: an EOF with it
// is the owner asking for the teardown, an EOF without it the owner's
// death.
const ownerSays = "."

// watchScript reads its stdin to EOF, runs the teardown (a function, not a
// subshell: a forked sh would have this command line, which the gateway's
// teardown kills by) and, when the owner died, removes its own output file
// and the fixture's directories, its arguments: no one else is left to.
const watchScript = `said=$(cat)
teardown() {
%s
}
teardown
rc=$?
[ -n "$said" ] || rm -rf -- "$@"
exit $rc
`

// watch starts sh reading its stdin until EOF, then running script. The
// write end stays with this process, so its death (any death) is the EOF.
// The watcher is in its own process group, so a signal to the test's group
// does not take it down before it has cleaned up. When the test process
// died, the watcher also removes dirs (the fixture's temporary
// directories, which the test's own cleanup would have removed) and its
// output file.
func watch(t testing.TB, script string, dirs ...string) *watcher {
	t.Helper()
	out, err := os.CreateTemp("", Marker+"teardown-")
	if err != nil {
		t.Fatalf("teardown watcher: %v", err)
	}
	defer out.Close()
	args := append([]string{"-c", fmt.Sprintf(watchScript, script), Marker + "teardown", out.Name()}, dirs...)
	cmd := exec.Command("sh", args...)
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
		_, werr := io.WriteString(w.pipe, ownerSays)
		w.pipe.Close()
		err := w.cmd.Wait()
		out, _ := os.ReadFile(w.outName)
		os.Remove(w.outName)
		if err == nil && werr != nil {
			err = fmt.Errorf("telling the watcher its owner lives: %w", werr)
		}
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
