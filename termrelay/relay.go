package termrelay

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// ErrUnsupported is wrapped by Start's error where the terminal cannot be
// relayed (see the package doc).
var ErrUnsupported = errors.New("the terminal cannot be relayed here")

// Relay is a running relay between a real terminal and a pseudo-terminal.
type Relay struct {
	term   *os.File  // the real terminal, a descriptor of this Relay's own (non-blocking)
	shown  io.Writer // where the pseudo-terminal's output goes: term, or a crlfWriter on it
	outMu  sync.Mutex
	outBuf []byte // pump's, under outMu
	master *os.File
	slave  *os.File // the child's end, closed by Close
	wg     sync.WaitGroup

	mu         sync.Mutex
	saved      unix.Termios // the terminal's settings before the relay changed them
	suspended  bool         // Suspend gave them back; Resume has not taken them again
	background bool         // suspended in the background: a key in the foreground resumes (copyIn)
	closed     bool
}

// Start relays tty, a terminal (evalhost run's stdin), into a new
// pseudo-terminal whose slave (Slave) is for the child.
func Start(tty *os.File) (*Relay, error) {
	term, err := reopen(tty)
	if err != nil {
		return nil, err
	}
	r := &Relay{term: term}
	if err := r.takeSettings(); err != nil {
		term.Close()
		return nil, fmt.Errorf("termrelay: %s is not a terminal: %w", term.Name(), err)
	}
	if r.master, r.slave, err = openPTY(); err != nil {
		term.Close()
		return nil, fmt.Errorf("termrelay: open a pseudo-terminal: %w", err)
	}
	// The child reads its end with blocking reads; Fd makes it blocking.
	slaveFd := int(r.slave.Fd())
	if err := unix.IoctlSetTermios(slaveFd, ioctlSetTermios, &r.saved); err == nil {
		err = r.Resize()
	}
	if err == nil && r.foreground() {
		err = r.passThrough()
	} else if err == nil {
		r.suspended, r.background = true, true // started in the background (&): as after bg, see Resume
	}
	if err != nil {
		r.slave.Close()
		r.master.Close()
		term.Close()
		return nil, fmt.Errorf("termrelay: set up %s: %w", term.Name(), err)
	}
	r.shown, r.outBuf = r.out(), make([]byte, 4096)
	r.wg.Add(2)
	go r.copyIn()
	go r.copyOut()
	return r, nil
}

// Slave is the pseudo-terminal's end for the child: its stdin and
// controlling terminal. The caller passes it to the child and does not
// close it: Close reads what the child left unread through it.
func (r *Relay) Slave() *os.File { return r.slave }

// Resize gives the pseudo-terminal the real terminal's size (after a
// SIGWINCH).
func (r *Relay) Resize() error {
	var ws *unix.Winsize
	err := control(r.term, func(fd int) (err error) {
		ws, err = unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ)
		return err
	})
	if err != nil {
		return err
	}
	return control(r.master, func(fd int) error { return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, ws) })
}

// passThrough sets the real terminal to pass keys through (see the package
// doc) from r.saved.
func (r *Relay) passThrough() error {
	t := r.saved
	t.Lflag &^= unix.ICANON | unix.ECHO | unix.ECHONL | unix.IEXTEN
	t.Iflag &^= unix.ICRNL | unix.INLCR | unix.IGNCR | unix.ISTRIP
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	return control(r.term, func(fd int) error { return unix.IoctlSetTermios(fd, ioctlSetTermios, &t) })
}

// takeSettings reads the real terminal's settings as they are now into
// r.saved, what restore gives back.
func (r *Relay) takeSettings() error {
	return control(r.term, func(fd int) error {
		t, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
		if err == nil {
			r.saved = *t
		}
		return err
	})
}

// restore gives the real terminal its settings back.
func (r *Relay) restore() error {
	return control(r.term, func(fd int) error { return unix.IoctlSetTermios(fd, ioctlSetTermios, &r.saved) })
}

// Suspend gives the terminal its settings back before the caller stops.
func (r *Relay) Suspend() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.suspended, r.background = true, false
	return r.restore()
}

// Resume, once the caller is continued after Suspend, takes the
// terminal's settings as they are now (the shell's) for the next restore
// and passes keys through again. Without a Suspend before it (a SIGCONT
// that continued nothing) it only copies the size. Continued in the
// background (bg, or kill %1's SIGCONT after its SIGTERM) it stays
// suspended: the terminal is the shell's, and a background process that
// sets its modes (SIGTTOU) or reads it (SIGTTIN) is stopped again; copyIn
// resumes once the caller is in the foreground again (fg continues a
// running job without a SIGCONT).
func (r *Relay) Resume() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errors.New("termrelay: Resume after Close")
	}
	if !r.suspended {
		return r.Resize()
	}
	if !r.foreground() {
		r.background = true
		return nil
	}
	r.suspended, r.background = false, false
	if err := r.takeSettings(); err != nil {
		return err
	}
	if err := r.passThrough(); err != nil {
		return err
	}
	return r.Resize()
}

// foreground says whether the caller's process group is the terminal's
// foreground one, which alone may read it and set its modes.
func (r *Relay) foreground() bool {
	var pgrp int
	if control(r.term, func(fd int) (err error) {
		pgrp, err = unix.IoctlGetInt(fd, unix.TIOCGPGRP)
		return err
	}) != nil {
		return true // no job control to stop the caller
	}
	return pgrp == unix.Getpgrp()
}

// isSuspended says whether the terminal is the shell's: Suspend gave it
// back and Resume has not taken it again; background, whether the caller
// was continued (or started) in the background since.
func (r *Relay) isSuspended() (suspended, background bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.suspended, r.background
}

// EchoSignal shows the key that made a terminal signal the caller ("^C"
// for SIGINT, "^\\" SIGQUIT, "^Z" SIGTSTP), as the terminal itself shows
// it with ECHO and ECHOCTL set, which the relay cleared: a Ctrl-C the
// caller forwards to the child looks as it does under python3. A signal
// that did not come from a key (kill -INT) is shown the same.
func (r *Relay) EchoSignal(sig syscall.Signal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.suspended || r.saved.Lflag&(unix.ECHO|unix.ECHOCTL|unix.ISIG) != unix.ECHO|unix.ECHOCTL|unix.ISIG {
		return
	}
	var key byte
	switch sig {
	case syscall.SIGINT:
		key = r.saved.Cc[unix.VINTR]
	case syscall.SIGQUIT:
		key = r.saved.Cc[unix.VQUIT]
	case syscall.SIGTSTP:
		key = r.saved.Cc[unix.VSUSP]
	default:
		return
	}
	if key < 0x20 || key == 0x7f {
		r.outMu.Lock()
		_, _ = r.term.Write([]byte{'^', key ^ 0x40})
		r.outMu.Unlock()
	}
}

// copyIn feeds what the user types to the pseudo-terminal. While
// suspended it reads nothing: the keys are the shell's, and a read from
// the background would stop the caller (SIGTTIN). A key that wakes it
// then, the caller being in the foreground again, resumes the relay.
func (r *Relay) copyIn() {
	defer r.wg.Done()
	rc, err := r.term.SyscallConn()
	if err != nil {
		return
	}
	buf := make([]byte, 4096)
	_ = rc.Read(func(fd uintptr) bool {
		for {
			// Between Suspend and the caller's stop a key must not undo
			// Suspend: only a caller continued in the background resumes here.
			if suspended, background := r.isSuspended(); suspended {
				if !background || r.Resume() != nil {
					return false
				}
				if suspended, _ = r.isSuspended(); suspended {
					return false
				}
			}
			n, err := unix.Read(int(fd), buf)
			if n > 0 {
				if _, werr := r.master.Write(buf[:n]); werr != nil {
					return true
				}
				continue // and ask again whether it is suspended
			}
			switch err {
			case unix.EINTR:
				continue
			case unix.EAGAIN:
				return false
			}
			return true // end of file, or the terminal is gone (EIO)
		}
	})
}

// copyOut shows what the pseudo-terminal outputs, until its last slave is
// closed (EIO) or Close stops it. Each wake-up reads and shows what is
// there under outMu, so that Sync, which takes it too, never runs between
// a read and its write.
func (r *Relay) copyOut() {
	defer r.wg.Done()
	rc, err := r.master.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Read(func(fd uintptr) bool {
		r.outMu.Lock()
		defer r.outMu.Unlock()
		return r.pump(int(fd))
	})
}

// pump shows what the pseudo-terminal holds now, with non-blocking reads;
// true when it will show no more (its slaves are closed: EIO). The caller
// holds outMu.
func (r *Relay) pump(fd int) bool {
	for {
		n, err := unix.Read(fd, r.outBuf)
		if n > 0 {
			if _, werr := r.shown.Write(r.outBuf[:n]); werr != nil {
				return true
			}
			continue
		}
		switch err {
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		}
		return true
	}
}

// Sync shows what the pseudo-terminal has output and copyOut not yet
// shown: a caller about to show what the child printed elsewhere (its
// stdout, through the runner) calls it first, so the echo of the line the
// child read comes before what the child printed after reading it, as on
// one terminal. What the child writes to the terminal itself after
// printing elsewhere (getpass's prompt after a print) can still overtake
// that print, which has further to go.
func (r *Relay) Sync() {
	r.outMu.Lock()
	defer r.outMu.Unlock()
	_ = control(r.master, func(fd int) error {
		r.pump(fd)
		return nil
	})
}

// out is where the pseudo-terminal's output goes (shown): the real
// terminal, which post-processes it again. Both map "\n" to "\r\n" (ONLCR, the
// pseudo-terminal having the real one's flags), which would show the
// child's line ends as "\r\r\n"; the mapping is undone on the way
// (crlfWriter), so the screen gets the bytes python3's would.
func (r *Relay) out() io.Writer {
	if r.saved.Oflag&unix.OPOST != 0 && r.saved.Oflag&unix.ONLCR != 0 {
		return &crlfWriter{w: r.term}
	}
	return r.term
}

// Close ends the relay, once the child has exited: it shows what the
// pseudo-terminal still holds, gives back to the terminal's input what was
// typed and never read (giveBack), gives the terminal its settings back,
// and returns once both goroutines are done.
func (r *Relay) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	now := time.Now() // r.suspended is settled: Resume returns after Close
	_ = r.term.SetReadDeadline(now)
	_ = r.master.SetWriteDeadline(now)
	_ = r.master.SetReadDeadline(now) // a child's child may hold the slave for ever
	r.wg.Wait()
	_ = r.term.SetWriteDeadline(time.Now().Add(time.Second)) // a terminal that does not take it (XOFF) is not waited for
	r.Sync()                                                 // the last echo of a child that has exited
	if c, ok := r.shown.(*crlfWriter); ok {
		c.flush()
	}
	var err error
	if !r.suspended { // else the settings are the shell's, and the terminal too
		r.giveBack()
		err = r.restore()
	}
	r.slave.Close()
	r.master.Close()
	r.term.Close()
	return err
}

// openPTY is pty.Open with a master the poller waits on: pty.Open's
// ioctls leave it blocking, where no deadline ends a read (Close would wait
// for a child's child holding the slave). The master is this process's
// alone, so its non-blocking flag is no one else's.
func openPTY() (master, slave *os.File, err error) {
	m, slave, err := pty.Open()
	if err != nil {
		return nil, nil, err
	}
	fd, err := unix.Dup(int(m.Fd()))
	m.Close()
	if err == nil {
		unix.CloseOnExec(fd)
		if err = unix.SetNonblock(fd, true); err != nil {
			unix.Close(fd)
		}
	}
	if err != nil {
		slave.Close()
		return nil, nil, err
	}
	return os.NewFile(uintptr(fd), "/dev/ptmx"), slave, nil
}

// control runs fn on f's descriptor without making it blocking (as Fd
// would).
func control(f *os.File, fn func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}
