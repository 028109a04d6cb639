package main

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// jobControlSignals are what a shell's job control sends a one-shot run:
// Ctrl-Z's SIGTSTP, unless evalhost was started ignoring it (trap "" TSTP,
// a supervisor's SIG_IGN), which then stays ignored, by run and its
// interpreter, as python3 keeps it; and SIGCONT. (os/signal.Ignored does
// not report an inherited SIGTSTP ignore: sigIgnored asks the kernel.)
func jobControlSignals() []os.Signal {
	sigs := []os.Signal{syscall.SIGCONT}
	if !sigIgnored(syscall.SIGTSTP) {
		sigs = append(sigs, syscall.SIGTSTP)
	}
	return sigs
}

// jobControl is how a one-shot run stops and continues its script's
// interpreter (sessions.Registry's Suspend and Resume), each saying
// whether one got it.
type jobControl struct {
	suspend, resume func() bool
	// ttySuspend and ttyResume, when not nil, give the shell its terminal
	// settings back while run is stopped, and take them again (--tty).
	ttySuspend, ttyResume func()
}

// jobControl makes Ctrl-Z stop the script as it stops python3. The
// interpreter has a session of its own, which the terminal's SIGTSTP never
// reaches (and which, orphaned, would discard it): so its process group
// gets SIGSTOP, then evalhost stops itself, and the shell sees its job
// stopped. fg or bg continue evalhost with SIGCONT, which goes on to the
// group. The cell's timeout does not count the time it was stopped
// (python3 has none; a user who stopped a run did not use its time). A
// signal sent meanwhile waits for the SIGCONT, as it waits for a stopped
// python3's (kill %1 sends SIGTERM, then SIGCONT): the kernel ends a
// stopped process for SIGKILL alone, not for a SIGTERM or SIGHUP whose
// action is the default (a bare kill -TERM leaves python3 stopped too),
// so those keep run's handlers while it is stopped, and the script's
// handler runs at the SIGCONT (TestRunJobControlAsPython). A SIGKILL of
// the stopped run ends the script with it (the reaper's lifeline).
func (in *interrupts) jobControl(sig syscall.Signal) {
	if sig == syscall.SIGCONT {
		if in.jobs.ttyResume != nil {
			in.jobs.ttyResume()
		}
		in.jobs.resume()
		return
	}
	if orphaned() {
		return // the kernel would discard it for python3 there
	}
	in.jobs.suspend()
	if in.jobs.ttySuspend != nil {
		in.jobs.ttySuspend()
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
}

// orphaned says whether evalhost's process group is orphaned as far as its
// parent tells: a parent in another session (setsid, a daemon's or a
// supervisor's child, one re-parented to init) is no shell that could
// continue it. The kernel discards a SIGTSTP to such a group's python3;
// the SIGSTOP that stands for it here cannot be discarded, and would stop
// run and its script for good. A group in the parent's session (a shell's
// job, a subshell's) is stopped as before.
func orphaned() bool {
	sid, err := unix.Getsid(0)
	if err != nil {
		return false
	}
	psid, err := unix.Getsid(os.Getppid())
	return err == nil && psid != sid
}
