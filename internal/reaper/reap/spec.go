package reap

import (
	"os"
	"strconv"
	"syscall"
)

// Spare is the value of EnvVar for a reaper started before its child is
// known (reaper.Prestart), then ",gomaxprocs" as for any reaper. Its fds
// 0-2 are /dev/null, 3 the lifeline, 4 the status pipe, 5 a Unix socket on
// which it receives one Spec and the child's descriptors.
const Spare = "spare"

// Spec is the child a spare reaper starts, as package reaper sends it.
type Spec struct {
	Path string
	Argv []string
	Env  []string
	Dir  string // empty: the reaper's own
	TTY  bool   // fd TTYFd becomes the child's controlling terminal
	// TTYFd is the child's descriptor of its terminal (with TTY).
	TTYFd int
	// Idle: the child starts nothing before its first request, which its
	// starter sends only once the pid is reported (notifyTerminating).
	Idle bool
}

// specMagic starts every message, so a stray writer's bytes are refused.
const specMagic = "evalhost-spec-2"

// Encode is the message for a spare reaper: its length in decimal and a
// newline, then NUL-terminated fields: the magic, "tty" (fd 0), "ttyN" or
// "-", "idle" or "-", path, dir,
// the number of arguments, the arguments, then every environment entry.
// None of these can hold a NUL (execve takes C strings).
func (s Spec) Encode() []byte {
	tty, idle := "-", "-"
	if s.TTY {
		tty = TTYConf(s.TTYFd)
	}
	if s.Idle {
		idle = "idle"
	}
	fields := append([]string{specMagic, tty, idle, s.Path, s.Dir, strconv.Itoa(len(s.Argv))}, s.Argv...)
	var body []byte
	for _, f := range append(fields, s.Env...) {
		body = append(append(body, f...), 0)
	}
	return append([]byte(strconv.Itoa(len(body))+"\n"), body...)
}

// decodeSpec parses a message body (after the length line).
func decodeSpec(body string) (Spec, bool) {
	if !hasSuffix(body, "\x00") {
		return Spec{}, false
	}
	f := splitByte(body[:len(body)-1], 0)
	if len(f) < 6 || f[0] != specMagic || f[3] == "" || f[2] != "idle" && f[2] != "-" {
		return Spec{}, false
	}
	ttyFd, tty, ok := parseTTY(f[1])
	if !ok {
		return Spec{}, false
	}
	n, err := strconv.Atoi(f[5])
	if err != nil || n < 1 || len(f) < 6+n || strconv.Itoa(n) != f[5] {
		return Spec{}, false
	}
	return Spec{TTY: tty, TTYFd: ttyFd, Idle: f[2] == "idle", Path: f[3], Dir: f[4], Argv: f[6 : 6+n], Env: f[6+n:]}, true
}

// TTYConf spells a terminal on the child's fd: "tty" for fd 0 (a shell's
// pty), "ttyN" for another (a script's stdin, moved to 0 once it runs).
func TTYConf(fd int) string {
	if fd == 0 {
		return "tty"
	}
	return "tty" + strconv.Itoa(fd)
}

// parseTTY reads TTYConf's spelling, or "-" for none.
func parseTTY(s string) (fd int, tty, ok bool) {
	if s == "-" {
		return 0, false, true
	}
	rest, found := cutPrefix(s, "tty")
	if !found {
		return 0, false, false
	}
	if rest == "" {
		return 0, true, true
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n <= 0 || strconv.Itoa(n) != rest {
		return 0, false, false
	}
	return n, true, true
}

// maxSpec bounds a message: twice Linux's usual ARG_MAX.
const maxSpec = 4 << 20

// receiveSpec reads one message and the descriptors sent with it from the
// socket sock, and marks those close-on-exec. fds are returned even when
// the message is bad, for the caller to close. The socket is read through
// Go's poller: a thread blocked in recvmsg would be one more thread for
// the reaper to start and, at its exit, to end.
func receiveSpec(sock int) (s Spec, fds []int, ok bool) {
	if syscall.SetNonblock(sock, true) != nil {
		return Spec{}, nil, false
	}
	f := os.NewFile(uintptr(sock), "spec")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return Spec{}, nil, false
	}
	buf := make([]byte, 64<<10)
	oob := make([]byte, syscall.CmsgSpace(64*4))
	var msg []byte
	for {
		var n, oobn int
		var rerr error
		err := rc.Read(func(fd uintptr) bool {
			n, oobn, _, _, rerr = syscall.Recvmsg(int(fd), buf, oob, 0)
			return rerr != syscall.EAGAIN && rerr != syscall.EINTR
		})
		if oobn > 0 {
			fds = append(fds, rights(oob[:oobn])...)
		}
		if err != nil || rerr != nil || n == 0 {
			return Spec{}, fds, false
		}
		msg = append(msg, buf[:n]...)
		head, body, found := cutByte(string(msg), '\n')
		if !found {
			if len(msg) > 16 {
				return Spec{}, fds, false
			}
			continue
		}
		size, err := strconv.Atoi(head)
		if err != nil || size < 0 || size > maxSpec {
			return Spec{}, fds, false
		}
		if len(body) >= size {
			s, ok = decodeSpec(body[:size])
			return s, fds, ok
		}
	}
}

// rights returns the descriptors in a control message, close-on-exec.
func rights(oob []byte) []int {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for _, m := range msgs {
		got, err := syscall.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		for _, fd := range got {
			syscall.CloseOnExec(fd)
		}
		fds = append(fds, got...)
	}
	return fds
}
