package daemon

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/testkit"
)

// A client whose cell runs when the process is stopped is told why before
// its request is cancelled: without it the command showed the interrupt
// as a Ctrl-C nobody pressed, and a jobs --wait said "context canceled".
func TestStopTellsConnectedClientsWhy(t *testing.T) {
	paths, wait := serveHome(t, time.Hour)
	c, err := Dial(paths)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := map[string]any{"op": "eval", "id": "run", "session": "s", "cwd": filepath.Dir(paths.Dir),
		"cells": []map[string]string{{"language": "sh", "code": "echo running; sleep 30"}}}
	if err := c.Send(req); err != nil {
		t.Fatal(err)
	}
	for {
		line, err := c.Next()
		if err != nil {
			t.Fatalf("before the cell ran: %v", err)
		}
		if gjson.GetBytes(line, "type").String() == "stdout" {
			break
		}
	}
	if c.Ending() != "" {
		t.Fatalf("Ending %q before any stop", c.Ending())
	}
	if _, err := Stop(paths); err != nil {
		t.Fatal(err)
	}
	var status string
	for {
		line, err := c.Next()
		if err != nil {
			break
		}
		switch gjson.GetBytes(line, "type").String() {
		case TypeStopping:
			t.Fatalf("Next returned the stopping line %s; Ending keeps it", line)
		case "end":
			status = gjson.GetBytes(line, "status").String()
		}
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.Ending(), "was stopped (evalhost daemon stop") || status == "ok" {
		t.Fatalf("Ending %q, end status %q; want why the process ended and the cell not ok", c.Ending(), status)
	}
}

// A client that stopped reading (its command stopped, its output piped to
// a pager left open) does not hold the process's end: a stop waited for
// it for ever, holding the lock, so every later command was refused ("holds
// the lock but does not answer") until that client read on or ended.
func TestStopDoesNotWaitForAStalledClient(t *testing.T) {
	t.Cleanup(leakcheck.Watchdog(t, time.Minute)) // the stop hung for ever
	paths, wait := serveHome(t, time.Hour)
	c := dialed(t, paths)
	req := map[string]any{"op": "eval", "id": "run", "session": "s", "cwd": filepath.Dir(paths.Dir),
		"cells": []map[string]string{{"language": "sh", "code": "echo running; yes"}}}
	if err := c.Send(req); err != nil {
		t.Fatal(err)
	}
	readUntil(t, c, "stdout")
	testkit.WaitParked(t, "daemon.(*conn)", "waitWrite") // c reads no more
	if _, err := Stop(paths); err != nil {
		t.Fatal(err)
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
}
