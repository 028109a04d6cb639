package reaper

import (
	"bufio"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/reaper/launch"
)

// A reaper that dies of SIGTERM before its "pid" report (an idle child's
// reaper in the window before it subscribed: the child was forked, and died
// with it) makes Start fail with how it ended, marked not started so a
// spare's Start may start the child again; the message said "ended before
// starting the child: EOF", which was not true of an idle child. The
// reaper is played by sh, which kills itself with SIGTERM before writing
// anything on its status pipe.
func TestReaperDeadBeforeReportSaysHow(t *testing.T) {
	leakcheck.Check(t, leakcheck.Options{FDs: true})
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	statR, statW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	pid, _, err := launch.Process("/bin/sh", []string{"sh", "-c", "kill -TERM $$"}, os.Environ(), "",
		[]*os.File{nil, nil, nil, lifeR, statW})
	lifeR.Close()
	statW.Close()
	if err != nil {
		lifeW.Close()
		statR.Close()
		t.Fatal(err)
	}
	c := &Child{proc: &process{Pid: pid}, lifeline: lifeW, statusR: statR, status: bufio.NewReader(statR)}
	err = c.started(context.Background())
	if !errors.Is(err, errNotStarted) {
		t.Fatalf("started: %v, want errNotStarted", err)
	}
	if want := "ended (signal: terminated) before it reported its child's start"; !strings.Contains(err.Error(), want) {
		t.Errorf("started: %q, want it to say %q", err, want)
	}
}
