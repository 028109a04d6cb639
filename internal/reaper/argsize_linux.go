package reaper

import "syscall"

// maxStringBytes is the most one argument or variable may hold: Linux's
// MAX_ARG_STRLEN, 32 pages of 4 KiB, its NUL included.
const maxStringBytes = 32*4096 - 1

// minArgLimit is the least execve allows them all, whatever the stack
// limit (ARG_MAX's 32 pages): below it argLimit need not be asked.
const minArgLimit = 32 * 4096

// argLimit is what execve lets this process start a program with, as
// Linux's bprm_stack_limits reckons it: a quarter of the stack limit, at
// most three quarters of 8 MiB, at least minArgLimit.
func argLimit() int {
	limit := uint64(8<<20) / 4 * 3
	var r syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_STACK, &r) == nil && r.Cur/4 < limit {
		limit = r.Cur / 4
	}
	return int(max(limit, minArgLimit))
}
