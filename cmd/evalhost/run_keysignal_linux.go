package main

import "golang.org/x/sys/unix"

// ioctlGetTermios reads a terminal's settings (keyFromTerminal).
const ioctlGetTermios = unix.TCGETS
