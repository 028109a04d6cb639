package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/evalhost/evalhost/notebook"
)

// TestReadPipedReadsAPipe: a file nb only reads (--text-file,
// --content-file, -f) may be a pipe, as bash's <(...) gives: its text is
// read to the writer's end. One nothing writes to is refused at once,
// saying so, rather than read as an empty text (nb apply would have
// emptied the notebook) or waited on for ever; devices and directories
// stay refused.
func TestReadPipedReadsAPipe(t *testing.T) {
	dir := t.TempDir()
	fifo := func(name string) string {
		p := filepath.Join(dir, name)
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skip("no FIFOs:", err)
		}
		return p
	}
	written, unwritten := fifo("written"), fifo("unwritten")
	// Its writer holds it open before the read, as bash's <(...) holds its
	// pipe (O_RDWR: the open waits for no reader), and ends it once the
	// reader took the text: the reader then meets the end.
	w, err := os.OpenFile(written, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteString("x = 1\n"); err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	go func() {
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
			n, err := unix.IoctlGetInt(int(w.Fd()), unix.TIOCINQ) // FIONREAD: what the pipe holds
			if err != nil || n == 0 || time.Now().After(deadline) {
				wrote <- errors.Join(err, w.Close())
				return
			}
		}
	}()
	for _, tc := range []struct{ name, path, text, err string }{
		{"a pipe its writer writes", written, "x = 1\n", ""},
		{"a pipe nothing writes to", unwritten, "", "cannot read " + unwritten + ": it is a named pipe (FIFO) and nothing wrote to it: start what writes to it first"},
		{"/dev/null", "/dev/null", "", "cannot read /dev/null: it is a character device, not a regular file"},
		{"a directory", dir, "", "cannot read " + dir + ": it is a directory, not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type result struct {
				data []byte
				err  error
			}
			done := make(chan result, 1)
			go func() { d, err := readPiped(tc.path, nil, 1<<20); done <- result{d, err} }()
			var r result
			select {
			case r = <-done:
			case <-time.After(20 * time.Second):
				if w, err := os.OpenFile(tc.path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close() // the reader's wait ends
				}
				t.Fatalf("still reading %s after 20 s", tc.path)
			}
			if tc.err == "" {
				if r.err != nil || string(r.data) != tc.text {
					t.Fatalf("read %q, %v; want %q", r.data, r.err, tc.text)
				}
				return
			}
			var fe *notebook.FileError
			if !errors.As(r.err, &fe) || !strings.HasPrefix(r.err.Error(), tc.err) {
				t.Errorf("%v\nwant a *notebook.FileError starting %q", r.err, tc.err)
			}
		})
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
}
