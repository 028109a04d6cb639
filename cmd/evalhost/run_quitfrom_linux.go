package main

import "golang.org/x/sys/unix"

// ioctlGetTermios reads a terminal's settings (quitFromTerminal).
const ioctlGetTermios = unix.TCGETS
