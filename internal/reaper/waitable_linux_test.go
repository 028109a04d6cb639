package reaper_test

import (
	"time"

	"golang.org/x/sys/unix"
)

// waitable reports, within the given time, whether pid (a child of this
// process) has exited and can be collected, or was already (ECHILD),
// without collecting it. A zombie
// in /proc is not enough: the kernel holds back a thread group's leader
// from wait4 until its other threads have ended, and a Go reaper has some.
func waitable(pid int, within time.Duration) bool {
	for deadline := time.Now().Add(within); ; time.Sleep(time.Millisecond) {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT|unix.WNOHANG, nil)
		if err != nil || info.Signo != 0 {
			return err == nil || err == unix.ECHILD
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}
