//go:build unix

package main

import "syscall"

// oNoFollow makes an open fail rather than follow a symbolic link.
const oNoFollow = syscall.O_NOFOLLOW
