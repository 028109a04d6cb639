//go:build !linux

package shell

import "syscall"

// shellSignalMember sends sig to process pid if it is in process group pgrp
// of session sid. Only /proc lists a session's processes (shellSessionPids),
// so elsewhere nothing is ever asked of this.
func shellSignalMember(pid, pgrp, sid int, sig syscall.Signal) {
	if shellInGroup(pid, pgrp, sid) {
		_ = syscall.Kill(pid, sig)
	}
}
