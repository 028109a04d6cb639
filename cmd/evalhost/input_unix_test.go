//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/notebook"
)

// TestReadBoundedRefusesWhatIsNoFile: nb's input files (a notebook, a
// script, --text-file, --content-file, -f) are read only when they are
// regular files, and anything else is refused at once, saying what it is:
// a FIFO's open waited for a writer for ever, /dev/null read as an empty
// text, /dev/zero read to the limit, a socket "no such device or address".
func TestReadBoundedRefusesWhatIsNoFile(t *testing.T) {
	dir, err := os.MkdirTemp("", "in") // short: a socket's path is bounded
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	fifo, sock := filepath.Join(dir, "fifo"), filepath.Join(dir, "sock")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs:", err)
	}
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, tc := range []struct{ name, path, want string }{
		{"a FIFO without a writer", fifo, "cannot read " + fifo + ": it is a named pipe (FIFO), not a regular file, and its read waits for a writer"},
		{"a socket", sock, "cannot read " + sock + ": it is a socket, not a regular file"},
		{"/dev/null", "/dev/null", "cannot read /dev/null: it is a character device, not a regular file"},
		{"/dev/zero", "/dev/zero", "cannot read /dev/zero: it is a character device, not a regular file"},
		{"a directory", dir, "cannot read " + dir + ": it is a directory, not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { _, err := readBounded(tc.path, nil, 1<<20); done <- err }()
			select {
			case err := <-done:
				var fe *notebook.FileError
				if !errors.As(err, &fe) || !errors.Is(err, notebook.ErrNotRegular) || !strings.HasPrefix(err.Error(), tc.want) {
					t.Errorf("%v\nwant a *notebook.FileError starting %q, matching ErrNotRegular", err, tc.want)
				}
			case <-time.After(20 * time.Second):
				if w, err := os.OpenFile(tc.path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close() // the reader's open ends
				}
				t.Fatalf("still reading %s after 20 s", tc.path)
			}
		})
	}
}

// TestReadScriptReadsAPipe: run's FILE is opened as python3 opens it, so
// a FIFO (bash's <(...) is a pipe too) is read once its writer writes.
func TestReadScriptReadsAPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "script.py")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs:", err)
	}
	wrote := make(chan error, 1)
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // waits for the reader
		if err == nil {
			_, err = w.WriteString("print(1)\n")
			w.Close()
		}
		wrote <- err
	}()
	data, err := readScript(fifo, nil, 1<<20)
	if err != nil || string(data) != "print(1)\n" {
		t.Fatalf("%q, %v; want the script", data, err)
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
}
