package shell

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// The pty master is registered with Go's poller (non-blocking), which is what
// lets Close unblock the reader. os.File.Fd would switch it back to blocking
// mode, so every ioctl on it goes through SyscallConn instead.

// shellPollable returns f's descriptor as a new File in Go's poller. pty.Open
// leaves the master blocking (its ioctls call Fd), and a blocking Read could
// not be interrupted by Close. f is closed.
func shellPollable(f *os.File) (*os.File, error) {
	defer f.Close()
	sc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var fd uintptr
	var errno syscall.Errno
	if err := sc.Control(func(old uintptr) {
		fd, _, errno = syscall.Syscall(syscall.SYS_FCNTL, old, syscall.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return nil, err
	}
	if errno != 0 {
		return nil, fmt.Errorf("dup pty master: %w", errno)
	}
	if err := syscall.SetNonblock(int(fd), true); err != nil {
		_ = syscall.Close(int(fd))
		return nil, fmt.Errorf("pty master non-blocking: %w", err)
	}
	return os.NewFile(fd, f.Name()), nil
}

// shellIoctl runs one ioctl on f without touching its blocking mode.
func shellIoctl(f *os.File, req uintptr, arg unsafe.Pointer) error {
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var errno syscall.Errno
	cerr := sc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, req, uintptr(arg))
	})
	if cerr != nil {
		return cerr
	}
	if errno != 0 {
		return errno
	}
	return nil
}

// shellQuietTTY turns off echo (so the command lines the host types are not
// read back as output) and newline translation (so "\n" stays "\n"). On
// Linux, termios ioctls on the master act on the slave, so this works on
// either end; it is reapplied before every cell in case a program changed it.
func shellQuietTTY(f *os.File) error {
	var t syscall.Termios
	if err := shellIoctl(f, ioctlGetTermios, unsafe.Pointer(&t)); err != nil {
		return fmt.Errorf("read terminal modes: %w", err)
	}
	const echo = syscall.ECHO | syscall.ECHOE | syscall.ECHOK | syscall.ECHONL | syscall.ECHOCTL
	if t.Lflag&echo == 0 && t.Oflag&syscall.ONLCR == 0 {
		return nil
	}
	t.Lflag &^= echo
	t.Oflag &^= syscall.ONLCR
	if err := shellIoctl(f, ioctlSetTermios, unsafe.Pointer(&t)); err != nil {
		return fmt.Errorf("set terminal modes: %w", err)
	}
	return nil
}

// shellForeground returns the terminal's foreground process group: bash's
// own group, or a job's when a cell turned job control on.
func shellForeground(f *os.File) (int, error) {
	var pgrp int32
	if err := shellIoctl(f, syscall.TIOCGPGRP, unsafe.Pointer(&pgrp)); err != nil {
		return 0, err
	}
	return int(pgrp), nil
}

// shellSessionPids lists the live (non-zombie) processes of session sid.
// Killing bash's process group misses what a cell moved into other groups
// (set -m jobs, setsid children); the session holds them all.
func shellSessionPids(sid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		state, s, ok := shellStatSession(b)
		if ok && s == sid && state != 'Z' && state != 'X' {
			pids = append(pids, pid)
		}
	}
	return pids
}

// shellStatSession parses the state and session fields of /proc/PID/stat,
// whose second field (comm) may contain spaces and parentheses.
func shellStatSession(stat []byte) (state byte, sid int, ok bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(stat[i+1:]) // state ppid pgrp session ...
	if len(f) < 4 || len(f[0]) != 1 || !shellIsLetter(f[0][0]) {
		return 0, 0, false
	}
	sid, err := strconv.Atoi(string(f[3]))
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], sid, true
}

// shellKillSession sends SIGKILL to bash's group and to every process left in
// its session.
func shellKillSession(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	for _, p := range shellSessionPids(pid) {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
}

func shellIsLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
