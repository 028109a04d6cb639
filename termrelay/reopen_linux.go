package termrelay

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// reopen opens the terminal tty is, by the name /proc/self/fd gives, as a
// new open file description: non-blocking there does not touch the
// shell's, which it shares tty's.
func reopen(tty *os.File) (*os.File, error) {
	rc, err := tty.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("termrelay: %w: %v", ErrUnsupported, err)
	}
	var name string
	var lerr error
	if err := rc.Control(func(fd uintptr) { name, lerr = os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd)) }); err != nil || lerr != nil {
		return nil, fmt.Errorf("termrelay: %w: cannot name the terminal: %v", ErrUnsupported, errors.Join(err, lerr))
	}
	if !strings.HasPrefix(name, "/dev/") {
		return nil, fmt.Errorf("termrelay: %w: %s is not a terminal device", ErrUnsupported, name)
	}
	f, err := os.OpenFile(name, os.O_RDWR|syscall.O_NOCTTY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("termrelay: %w: open %s: %v", ErrUnsupported, name, err)
	}
	return f, nil
}
