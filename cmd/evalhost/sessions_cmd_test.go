package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/daemon"
	"github.com/evalhost/evalhost/sessions"
)

// A sessions table cell reads as one value: text that is blank, holds
// white space or is not printable is quoted.
func TestTableCell(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "s1", "s1"},
		{"a path", "/home/u/proj", "/home/u/proj"},
		{"blank", " ", `" "`},
		{"empty", "", `""`},
		{"a space inside", "a b", `"a b"`},
		{"a path with a space", "/home/u/my proj", `"/home/u/my proj"`},
		{"a tab", "a\tb", `"a\tb"`},
		{"an escape", "a\x1b[2Jb", `"a\x1b[2Jb"`},
		{"unicode", "café", "café"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tableCell(tc.in); got != tc.want {
				t.Errorf("tableCell(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

// TestSessionDir: a session's directory is its path with the links on
// the way resolved, so one directory is one key however it was reached;
// a path that no longer exists keeps its missing part, below what of it
// resolves.
func TestSessionDir(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(base, "real")
	if err := os.MkdirAll(filepath.Join(real, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{"link": "real", "link2": "link", "up": "real/sub/..", "gone": "nothing"} {
		if err := os.Symlink(to, filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct{ name, path, want string }{
		{"plain", real, real},
		{"a link", filepath.Join(base, "link"), real},
		{"a link to a link", filepath.Join(base, "link2", "sub"), filepath.Join(real, "sub")},
		{"a link with ..", filepath.Join(base, "up"), real},
		{"removed, under a link", filepath.Join(base, "link", "removed", "deeper"), filepath.Join(real, "removed", "deeper")},
		{"a dangling link", filepath.Join(base, "gone"), filepath.Join(base, "gone")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sessionDir(tt.path); got != tt.want {
				t.Fatalf("sessionDir(%s) = %s, want %s", tt.path, got, tt.want)
			}
		})
	}
}

// A request sent after a stop ended the process's reading (jobs --wait
// sends its wait after asking where the job runs) fails with EPIPE; the
// process said why before it stopped reading, and sendOn says so: it told
// a stop as "ended without a stop (killed or crashed: broken pipe)", and
// jobs then told the session's loss that lost.json tells its next cell.
func TestSendOnAfterStopSaysStopped(t *testing.T) {
	home := t.TempDir()
	paths := daemon.PathsFor(home)
	ready := make(chan struct{})
	served := make(chan error, 1)
	go func() {
		served <- daemon.Serve(context.Background(), daemon.Config{Paths: paths, Version: "test", Idle: time.Hour,
			Sessions: sessions.Config{Home: home}, Ready: func() { close(ready) }})
	}()
	select {
	case <-ready:
	case err := <-served:
		t.Fatal(err)
	}
	c, err := daemon.Dial(paths)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := daemon.Stop(paths); err != nil { // its end closed c's connection
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	err = sendOn(c, map[string]string{"op": "wait", "id": "jobs", "job": "job-1"})
	var ended *daemon.EndedError
	if !errors.As(err, &ended) || !strings.HasPrefix(ended.Why, "was stopped (evalhost daemon stop") {
		t.Fatalf("sendOn = %v; want an EndedError saying it was stopped", err)
	}
}
