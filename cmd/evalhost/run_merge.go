package main

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// oneDestination reports whether stdout and stderr are one destination
// whose reader sees what is written to either in the order it was written
// (2>&1, a terminal): a one-shot run then gives its Python cells one pipe
// for both (sessions.Config.MergeStderr), as python3 writes to one there,
// so a cell's stdout, its stderr and its children's output keep the
// kernel's order, which two pipes read apart cannot.
//
// Both must be the same file (device and inode). A pipe, a socket or a
// character device (a terminal, /dev/null) is one stream whoever writes
// to it. A regular file is only when both descriptors share one open file
// description (2>&1: one offset; kcmp says so on Linux) or both append
// (>>f 2>>f): `>f 2>f` opens it twice, and python3's two streams then
// overwrite each other, which one pipe would not do the same way.
func oneDestination(stdout, stderr io.Writer) bool {
	o, ok := fdOf(stdout)
	e, ok2 := fdOf(stderr)
	if !ok || !ok2 {
		return false
	}
	var so, se unix.Stat_t
	if unix.Fstat(o, &so) != nil || unix.Fstat(e, &se) != nil || so.Dev != se.Dev || so.Ino != se.Ino {
		return false
	}
	switch so.Mode & unix.S_IFMT {
	case unix.S_IFIFO, unix.S_IFSOCK, unix.S_IFCHR:
		return true
	case unix.S_IFREG:
		return sameOpenFile(o, e) || appends(o) && appends(e)
	}
	return false
}

// fdOf is w's descriptor when w is a file. Not f.Fd(), which would put a
// non-blocking descriptor, shared with whoever else holds it, in blocking
// mode.
func fdOf(w io.Writer) (int, bool) {
	f, ok := w.(*os.File)
	if !ok {
		return 0, false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, false
	}
	fd := -1
	if rc.Control(func(s uintptr) { fd = int(s) }) != nil || fd < 0 {
		return 0, false
	}
	return fd, true
}

func appends(fd int) bool {
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	return err == nil && fl&unix.O_APPEND != 0
}
