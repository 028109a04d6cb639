//go:build unix

package sentinput_test

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/rawio"
	"github.com/evalhost/evalhost/internal/sentinput"
)

// inputs are the readers New can end at what was sent: os.Pipe's read end
// (an *os.File in the poller) and, on Linux, internal/rawio's File of it.
func inputs(t *testing.T) map[string]func() (io.Reader, *os.File) {
	pipe := func() (*os.File, *os.File) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close(); w.Close() })
		return r, w
	}
	m := map[string]func() (io.Reader, *os.File){
		"file": func() (io.Reader, *os.File) { r, w := pipe(); return r, w },
	}
	if r, _ := pipe(); rawio.New(r) != nil {
		m["rawio"] = func() (io.Reader, *os.File) { r, w := pipe(); return rawio.New(r), w }
	}
	return m
}

// After ReadSent, Read returns what the client had written, then io.EOF,
// without waiting: a Read waiting for more is woken. The hang guard
// fails the test that waits for ever.
func TestReadSent(t *testing.T) {
	t.Cleanup(leakcheck.Watchdog(t, time.Minute))
	for name, open := range inputs(t) {
		for _, tc := range []struct {
			name    string
			sent    string
			closed  bool // the writer closed its end
			waiting bool // a Read waits when ReadSent comes
		}{
			{"nothing, a Read waiting", "", false, true},
			{"nothing", "", false, false},
			{"a line and a half", "{\"op\":\"ping\"}\n{\"op\"", false, false},
			{"a line, the writer closed", "{\"op\":\"ping\"}\n", true, false},
			{"a line, and one written after", "{\"op\":\"ping\"}\n", false, false},
		} {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				if strings.Contains(tc.name, "after") && runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
					t.Skip("what the input holds is asked on Linux and the BSDs")
				}
				r, w := open()
				in := sentinput.New(r)
				if tc.sent != "" {
					if _, err := w.WriteString(tc.sent); err != nil {
						t.Fatal(err)
					}
				}
				if tc.closed {
					w.Close()
				}
				got := make(chan string, 1)
				read := func() {
					b, err := io.ReadAll(in)
					if err != nil {
						b = append(b, "ERROR: "+err.Error()...)
					}
					got <- string(b)
				}
				if tc.waiting {
					go read()
				}
				if !in.ReadSent() {
					t.Fatal("ReadSent: false")
				}
				if strings.Contains(tc.name, "after") {
					if _, err := w.WriteString("{\"op\":\"late\"}\n"); err != nil {
						t.Fatal(err)
					}
				}
				if !tc.waiting {
					read()
				}
				if s := <-got; s != tc.sent {
					t.Fatalf("read %q, want %q", s, tc.sent)
				}
			})
		}
	}
}

// An input that takes no deadline (a regular file here; a tty, a blocking
// descriptor) cannot be ended so: ReadSent says so, and Read reads on.
func TestReadSentRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := sentinput.New(f)
	if in.ReadSent() {
		t.Fatal("ReadSent of a regular file: true")
	}
	if b, err := io.ReadAll(in); err != nil || string(b) != "a\nb\n" {
		t.Fatalf("read %q, %v", b, err)
	}
}
