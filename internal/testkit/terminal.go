package testkit

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// Terminal is a pseudo-terminal a test reads and types into as a person at
// a terminal would: Tty, its slave, is the terminal of the process under
// test (its stdin, stdout, stderr; its controlling terminal with
// Setsid/Setctty). What the process shows is collected as it comes.
type Terminal struct {
	Tty    *os.File
	tb     testing.TB
	master *os.File
	mu     sync.Mutex
	shown  bytes.Buffer
	grew   chan struct{}
	done   chan struct{}
}

// awaitBound bounds Await; a test that waits longer has hung.
const awaitBound = 30 * time.Second

// NewTerminal opens one, 100x30, closed when the test ends; without
// pseudo-terminals it skips tb.
func NewTerminal(tb testing.TB) *Terminal {
	tb.Helper()
	master, tty, err := pty.Open()
	if err != nil {
		tb.Skipf("no pty: %v", err)
	}
	if err := pty.Setsize(master, &pty.Winsize{Cols: 100, Rows: 30}); err != nil {
		tb.Fatal(err)
	}
	t := &Terminal{Tty: tty, tb: tb, master: master, grew: make(chan struct{}, 1), done: make(chan struct{})}
	go t.collect()
	tb.Cleanup(func() {
		tty.Close()
		master.Close()
		<-t.done
	})
	return t
}

func (t *Terminal) collect() {
	defer close(t.done)
	buf := make([]byte, 4096)
	for {
		n, err := t.master.Read(buf)
		if n > 0 {
			t.mu.Lock()
			t.shown.Write(buf[:n])
			t.mu.Unlock()
			select {
			case t.grew <- struct{}{}:
			default:
			}
		}
		if err != nil {
			return
		}
	}
}

// Shown is everything shown so far, "\r\n" as the terminal sent it.
func (t *Terminal) Shown() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.shown.String()
}

// Await waits until the terminal has shown want, failing the test after
// awaitBound.
func (t *Terminal) Await(want string) {
	t.tb.Helper()
	deadline := time.After(awaitBound)
	for !strings.Contains(t.Shown(), want) {
		select {
		case <-t.grew:
		case <-deadline:
			t.tb.Fatalf("the terminal never showed %q; it shows %q", want, t.Shown())
		}
	}
}

// Type sends keys as typed: "\r" is Enter, "\x03" Ctrl-C, "\x04" Ctrl-D.
func (t *Terminal) Type(keys string) {
	t.tb.Helper()
	if _, err := t.master.Write([]byte(keys)); err != nil {
		t.tb.Fatal(err)
	}
}
