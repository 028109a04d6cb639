package shared

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"syscall"
)

// pidAlive reports whether pid is a running (not zombie) process.
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist) || !procMounted()
	}
	// The state follows the parenthesised command, which may hold spaces.
	if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z' && stat[i+2] != 'X'
	}
	return true
}

func procMounted() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}

// isGateway reports whether the recorded pid is still the gateway info
// describes: alive and, where /proc tells, running kernel_gateway and
// holding the recorded port (holdsPort). A pid recorded before a reboot or
// long ago may name any process now, which must never be signalled, and a
// gateway that let its port go must not be trusted with the token, since
// anyone may hold the port now.
func isGateway(info Info) bool {
	if !pidAlive(info.PID) {
		return false
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", info.PID))
	if err != nil {
		return !procMounted()
	}
	u, err := url.Parse(info.URL)
	if err != nil || u.Port() == "" {
		return false
	}
	args := strings.Split(string(raw), "\x00")
	return slices.Contains(args, "kernel_gateway") && holdsPort(info.PID, u.Port(), args)
}
