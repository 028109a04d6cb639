package tests

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// orderCells write a line to stdout and then one to stderr, raw (no
// marks between them): each must be recorded in that order by serve, by
// run --session and by nb run, as ipykernel mostly records it (host/doc.go, "Order of
// stdout and stderr").
var orderCells = []string{
	"import os\nos.write(1, b'a\\n'); os.write(2, b'b\\n')\nNone",
	"import os\nos.system('echo a; echo b >&2')\nNone",
	"import subprocess\nsubprocess.run('echo a; echo b >&2', shell=True)\nNone",
}

func TestRawWritesKeepOrder(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("evalhost keeps the order of raw writes to the two streams on Linux")
	}
	const rounds = 30
	t.Run("serve", func(t *testing.T) {
		c := startServe(t)
		dir := t.TempDir()
		for i := range rounds {
			for j, code := range orderCells {
				id := fmt.Sprintf("r%d-%d", i, j)
				c.send(map[string]any{"op": "eval", "id": id, "session": "s", "cwd": dir, "cells": []any{py(code)}})
				var got []string
				for _, m := range c.result(id) {
					if m["type"] == "stdout" || m["type"] == "stderr" {
						got = append(got, fmt.Sprintf("%s %q", m["type"], m["data"]))
					}
				}
				if want := `stdout "a\n"|stderr "b\n"`; strings.Join(got, "|") != want {
					t.Fatalf("round %d, cell %q: stream lines %q, want %q", i, code, got, want)
				}
			}
		}
	})
	t.Run("run --session", func(t *testing.T) {
		// The background process's streams, written by run to one pipe.
		h := newDaemonHome(t)
		for i := range rounds / 3 {
			for _, code := range orderCells {
				stdout, stderr, status := runCaptured(t, h.cmd("run", "--session", "s", "-c", code), true)
				if status != 0 || stdout != "a\nb\n" {
					t.Fatalf("round %d, cell %q: exit %d, output %q (stderr %q), want %q", i, code, status, stdout, stderr, "a\nb\n")
				}
			}
		}
	})
	t.Run("nb run", func(t *testing.T) {
		dir := t.TempDir()
		in, out := filepath.Join(dir, "order.ipynb"), filepath.Join(dir, "out.ipynb")
		var cells []string
		for range rounds / 3 { // nb run writes the notebook after every cell
			cells = append(cells, orderCells...)
		}
		writeNotebook(t, in, cells...)
		if stdout, stderr, code := runCaptured(t, command(t, "nb", "run", in, "-o", out), false); code != 0 {
			t.Fatalf("nb run exited %d\nstdout %s\nstderr %s", code, stdout, stderr)
		}
		for i, c := range readNotebook(t, out) {
			var got []string
			for _, o := range c.Outputs {
				got = append(got, fmt.Sprintf("%s %s %q", o.OutputType, o.Name, text(o.Text)))
			}
			if want := `stream stdout "a\n"|stream stderr "b\n"`; strings.Join(got, "|") != want {
				t.Fatalf("cell %d (%q): outputs %q, want %q", i, cells[i], got, want)
			}
		}
	})
}
