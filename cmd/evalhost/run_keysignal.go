package main

import (
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/evalhost/evalhost/sessions"
)

// quitForwarder passes run's SIGQUIT on to session's cell: a Ctrl-\
// reaches python3's children too, a kill of its pid not.
func quitForwarder(reg *sessions.Registry, session string) func(syscall.Signal) bool {
	return func(sig syscall.Signal) bool {
		if keyFromTerminal() {
			return reg.SignalForeground(session, sig)
		}
		return reg.SignalCell(session, sig)
	}
}

// interruptAlone says whether run's Ctrl-C (SIGINT) interrupts the
// script's interpreter alone (backend.ErrInterruptAlone), as kill -INT
// reaches python3 alone, or its process group, its children with it, as
// a Ctrl-C typed at the terminal reaches python3's (keyFromTerminal).
func interruptAlone() bool { return !keyFromTerminal() }

// keyFromTerminal says whether a SIGQUIT or SIGINT run was just sent can
// be its terminal's Ctrl-\ or Ctrl-C, which the terminal sends to its
// whole foreground job: python3's children get it with python3 there, so
// run passes it on to the interpreter's process group
// (Registry.SignalForeground; a Ctrl-C's interrupt). Go's os/signal does
// not tell who sent a signal (siginfo's si_code and si_pid), and no
// receiver can tell kill(pid) from kill(-pgid) (both SI_USER), so this is
// what can be known: a key's signal comes only to the foreground process
// group of run's controlling terminal, and only while that terminal makes
// signals of keys (ISIG). Anywhere else (no controlling terminal, a
// background job, a terminal in raw mode: an agent's, an editor's) the
// signal came from kill(1) or the like, and python3 would have got it
// alone: run passes it to the interpreter alone (Registry.SignalCell;
// backend.ErrInterruptAlone). Its limits: a kill of run's pid while run
// is that foreground job reaches the script's children too, and a kill
// of run's process group (not a terminal's) does not reach them.
func keyFromTerminal() bool {
	fd, err := unix.Open("/dev/tty", unix.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return false // no controlling terminal
	}
	defer unix.Close(fd)
	fg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	if err != nil || fg != unix.Getpgrp() {
		return false
	}
	tio, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	return err == nil && tio.Lflag&unix.ISIG != 0
}
