package runner

import "syscall"

// wakeMain sends sig to the runner's main thread, whose tid is its pid, as
// the host's wake-up does: a process-directed signal may land in another
// thread and leave the main thread's blocking call alone.
func wakeMain(pid int, sig syscall.Signal) { _ = syscall.Tgkill(pid, pid, sig) }
