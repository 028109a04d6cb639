package termrelay

import "golang.org/x/sys/unix"

// maxGiveBack bounds what giveBack returns: a terminal's input queue holds
// 4 KB; more is a paste no shell wanted.
const maxGiveBack = 4096

// giveBack returns to the real terminal's input what was typed and the
// child never read, as a terminal keeps type-ahead for the shell after
// python3 exits: the next command typed while a script finished is not
// lost. It reads the pseudo-terminal's unread input through the slave,
// made non-canonical so a line not ended yet is read too, and pushes each
// byte into the real terminal with TIOCSTI, with echo off (the
// pseudo-terminal echoed it once already). TIOCSTI needs the terminal to
// be the caller's controlling terminal, and Linux can refuse it
// (dev.tty.legacy_tiocsti=0): then the keys are lost, as under ssh -t.
// Its caller holds no lock; copyIn and copyOut are done.
func (r *Relay) giveBack() {
	sfd := int(r.slave.Fd())
	t, err := unix.IoctlGetTermios(sfd, ioctlGetTermios)
	if err != nil {
		return
	}
	t.Lflag &^= unix.ICANON | unix.ECHO | unix.ECHONL | unix.ISIG
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 0, 0
	if unix.IoctlSetTermios(sfd, ioctlSetTermios, t) != nil {
		return
	}
	var typed []byte
	buf := make([]byte, 1024)
	for len(typed) < maxGiveBack {
		n, err := unix.Read(sfd, buf)
		if n <= 0 || err != nil {
			break
		}
		typed = append(typed, buf[:n]...)
	}
	if len(typed) == 0 {
		return
	}
	quiet := r.saved
	quiet.Lflag &^= unix.ECHO | unix.ECHONL
	_ = control(r.term, func(fd int) error {
		if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &quiet); err != nil {
			return err
		}
		return pushInput(fd, typed)
	})
}
