package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"golang.org/x/term"

	"github.com/evalhost/evalhost/termrelay"
)

// ttyRelay is a one-shot run's --tty: its script gets a terminal of its
// own, fed from run's (package termrelay), as its stdin and controlling
// terminal, so input(), getpass, /dev/tty and a child's password prompt
// work as under python3 in that terminal. Without --tty a script's stdin
// is never interactive (the brief): input() on a terminal fails at once.
type ttyRelay struct {
	relay *termrelay.Relay
	winch chan os.Signal
	quit  chan struct{}
	wg    sync.WaitGroup
}

// checkTTY refuses --tty where there is no terminal to give the script,
// or no script to give it to.
func checkTTY(f runFlags, source string, stdin io.Reader, attached bool) error {
	switch {
	case attached:
		return errors.New("--tty gives this command's terminal to a one-shot run's script; the background process of --session has none to give: run without --session to use it")
	case resolvedGateway(f.choice()):
		return errors.New("--tty needs the runner backend: a gateway's kernel cannot have this terminal; run with --backend runner to use it")
	case source == "-":
		return errors.New("--tty and cells from stdin (-): stdin cannot be both the script and its terminal; give FILE or -c")
	}
	if file, ok := stdin.(*os.File); !ok || !term.IsTerminal(int(file.Fd())) {
		return errors.New("--tty gives the script run's terminal, and stdin is not one (a pipe or a file reaches the script without --tty)")
	}
	return nil
}

// startTTY starts the relay on stdin, a terminal, and makes its
// pseudo-terminal the script's stdin (f.stdin, f.stdinTerminal).
func startTTY(f *runFlags, stdin *os.File) (*ttyRelay, error) {
	relay, err := termrelay.Start(stdin)
	if err != nil {
		return nil, fmt.Errorf("--tty: %w", err)
	}
	t := &ttyRelay{relay: relay, winch: make(chan os.Signal, 1), quit: make(chan struct{})}
	f.stdin, f.stdinTerminal = relay.Slave(), true
	signal.Notify(t.winch, syscall.SIGWINCH)
	t.wg.Add(1)
	go func() { // the window's new size reaches the script's terminal
		defer t.wg.Done()
		for {
			select {
			case <-t.winch:
				_ = relay.Resize()
			case <-t.quit:
				return
			}
		}
	}()
	return t, nil
}

// suspend and resume bracket Ctrl-Z's stop of run: the shell gets its
// terminal settings back meanwhile. Safe on a nil relay (no --tty).
func (t *ttyRelay) suspend() {
	if t != nil {
		_ = t.relay.Suspend()
	}
}

func (t *ttyRelay) resume() {
	if t != nil {
		_ = t.relay.Resume()
	}
}

// echo shows the key of a terminal's signal (termrelay's EchoSignal).
// Safe on nil.
func (t *ttyRelay) echo(sig syscall.Signal) {
	if t != nil {
		t.relay.EchoSignal(sig)
	}
}

// synced is w with the relay's output shown before each write: the echo
// of a line the script read comes before what it printed after reading.
func (t *ttyRelay) synced(w io.Writer) io.Writer {
	if t == nil {
		return w
	}
	return syncedWriter{w: w, relay: t.relay}
}

type syncedWriter struct {
	w     io.Writer
	relay *termrelay.Relay
}

func (s syncedWriter) Write(p []byte) (int, error) {
	s.relay.Sync()
	return s.w.Write(p)
}

// close ends the relay, after the script's interpreter exited: what it
// echoed last is shown, and the terminal is as it was. Safe on nil.
func (t *ttyRelay) close() {
	if t == nil {
		return
	}
	signal.Stop(t.winch)
	close(t.quit)
	t.wg.Wait()
	_ = t.relay.Close()
}
