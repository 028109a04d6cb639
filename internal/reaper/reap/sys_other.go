//go:build !linux

package reap

import "syscall"

// idleFirst: no parent-death signal here, so an idle child forked before
// the reaper subscribed would outlive a reaper that died of a terminating
// signal meanwhile, and its starter, told it was not started, would start
// another on the same pipes: every child waits for the subscription.
const idleFirst = false

// becomeSubreaper: there is no subreaper outside Linux; orphans go to init.
func becomeSubreaper() {}

// childAttr: the child leads its own session (and process group), and with
// tty takes fd ttyFd as its controlling terminal.
func childAttr(tty bool, ttyFd int) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Setctty: tty, Ctty: ttyFd}
}

func dup2(from, to int) error { return syscall.Dup2(from, to) }

// killTree sends SIGKILL to the child's process group, and to the child in
// case it left it. Processes moved to other groups are not found.
func killTree(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
}
