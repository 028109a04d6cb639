package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// A one-shot run merges its cells' stdout and stderr only where what is
// written to either is read in the order written: one pipe, socket or
// character device, or one regular file through one open file (2>&1) or
// appended to by both.
func TestOneDestination(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "log")
	open := func(flag int) *os.File {
		f, err := os.OpenFile(file, flag|os.O_WRONLY|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	pipe := func() *os.File {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close(); w.Close() })
		return w
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	p, shared := pipe(), open(os.O_TRUNC)
	dup := dupFile(shared)
	if dup == nil {
		t.Fatal("dup failed")
	}
	defer dup.Close()
	cases := []struct {
		name           string
		stdout, stderr io.Writer
		want           bool
	}{
		{"one pipe", p, p, true},
		{"two pipes", pipe(), pipe(), false},
		{"a pipe and a file", p, shared, false},
		{"/dev/null twice", null, null, true},
		{"one open file (2>&1)", shared, dup, runtime.GOOS == "linux"}, // kcmp tells
		{"a file opened twice (>f 2>f)", open(0), open(0), false},
		{"a file appended to twice (>>f 2>>f)", open(os.O_APPEND), open(os.O_APPEND), true},
		{"not files", &bytes.Buffer{}, &bytes.Buffer{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := oneDestination(c.stdout, c.stderr); got != c.want {
				t.Errorf("oneDestination = %v, want %v", got, c.want)
			}
		})
	}
}
