package daemon

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// A request's kill (its command's second Ctrl-C) kills the interpreters
// of its own session, not those of the same name in another cwd, which
// another command keeps state in (it killed every cwd's).
func TestKillEndsItsOwnCwdsSession(t *testing.T) {
	paths, _ := serveHome(t, time.Hour)
	other := t.TempDir()
	evalIn(t, paths, "s", other, "X=kept")
	c, err := Dial(paths)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Send(map[string]any{"op": "eval", "id": "run", "session": "s", "cwd": filepath.Dir(paths.Dir),
		"cells": []map[string]string{{"language": "sh", "code": "echo started; sleep 30"}}})
	readUntil(t, c, "stdout")
	c.Send(map[string]string{"op": OpKill, "id": "run"})
	if st := gjson.GetBytes(readUntil(t, c, "end"), "status").String(); st == "ok" {
		t.Fatalf("the killed request ended %s", st)
	}
	if got := evalIn(t, paths, "s", other, "echo $X"); got != "kept\n" {
		t.Fatalf("session s in another cwd after the kill: %q, want its state kept", got)
	}
}

// A close with a cwd ends that cwd's session of the name; the state file
// forgets only it, and keeps the name while another cwd holds state.
func TestCloseInOneCwd(t *testing.T) {
	paths, _ := serveHome(t, time.Hour)
	home, other := filepath.Dir(paths.Dir), t.TempDir()
	evalIn(t, paths, "s", home, "X=home")
	evalIn(t, paths, "s", other, "X=other")
	c, err := Dial(paths)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Send(map[string]any{"op": "close", "id": "k", "session": "s", "cwd": home})
	if line := readUntil(t, c, "closed"); !gjson.GetBytes(line, "existed").Bool() {
		t.Fatalf("close in %s: %s", home, line)
	}
	st, _ := readState(paths.State)
	if len(st.Sessions) != 1 || len(st.Held) != 1 || st.Held[0].Key.Cwd != other {
		t.Fatalf("state %+v; want s listed, held in %s alone", st, other)
	}
	if got := evalIn(t, paths, "s", other, "echo $X"); got != "other\n" {
		t.Fatalf("session s in the other cwd: %q, want its state kept", got)
	}
	if got := evalIn(t, paths, "s", home, "echo ${X:-fresh}"); got != "fresh\n" {
		t.Fatalf("session s in the closed cwd: %q, want a fresh one", got)
	}
}
