package shell

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// shellSignalMember sends sig to process pid if it is in process group pgrp
// of session sid. A pidfd pins the process between the check and the
// signal, so a pid that was reused since it was listed is not signalled;
// without pidfds (Linux before 5.3) the check and the signal are as close
// as they can be.
func shellSignalMember(pid, pgrp, sid int, sig syscall.Signal) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if err == unix.ENOSYS && shellInGroup(pid, pgrp, sid) {
			_ = syscall.Kill(pid, sig)
		}
		return
	}
	defer unix.Close(fd)
	if shellInGroup(pid, pgrp, sid) {
		_ = unix.PidfdSendSignal(fd, sig, nil, 0)
	}
}
