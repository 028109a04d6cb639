//go:build !linux

package main

import "golang.org/x/sys/unix"

// ioctlGetTermios reads a terminal's settings (keyFromTerminal): the BSDs'
// and macOS's request.
const ioctlGetTermios = unix.TIOCGETA
