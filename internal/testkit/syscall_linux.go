package testkit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// InSyscall says whether process pid's main thread is blocked in one of the
// system calls nrs (/proc/PID/syscall), and returns the line it read.
func InSyscall(pid int, nrs ...int) (bool, []byte, error) {
	return inSyscallAt(fmt.Sprintf("/proc/%d/syscall", pid), nrs...)
}

// inSyscallAt is InSyscall of a syscall file: a process's or a thread's.
func inSyscallAt(path string, nrs ...int) (bool, []byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return false, nil, err
	}
	nr, _, _ := strings.Cut(string(b), " ")
	for _, want := range nrs {
		if nr == strconv.Itoa(want) {
			return true, b, nil
		}
	}
	return false, b, nil
}

// WaitSyscall waits until process pid's main thread is blocked in system
// call nr with args as its first arguments (none: any): a process at a
// known point of its work, such as a reaper held at its report. It fails
// tb after 20 s or when the process is gone, and skips it when
// /proc/PID/syscall cannot be read otherwise (a kernel without it).
func WaitSyscall(tb testing.TB, pid, nr int, args ...uintptr) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		in, b, err := InSyscall(pid, nr)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			tb.Fatalf("process %d ended before it blocked in system call %d: %v", pid, nr, err)
		}
		if err != nil {
			tb.Skipf("cannot read what process %d is doing: %v", pid, err)
		}
		if in && leadingArgs(b, args) {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("process %d never blocked in system call %d %x (last: %q)", pid, nr, args, strings.TrimSpace(string(b)))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// leadingArgs says whether a /proc/PID/syscall line's arguments begin with
// args (the kernel writes them in hex, 0x-prefixed).
func leadingArgs(line []byte, args []uintptr) bool {
	f := strings.Fields(string(line))
	if len(f) < 1+len(args) {
		return false
	}
	for i, a := range args {
		if f[1+i] != "0x"+strconv.FormatUint(uint64(a), 16) {
			return false
		}
	}
	return true
}

// WaitThreadSyscall is WaitSyscall for any thread of process pid: a Go
// program's blocked call (a write to a full pipe) is on whichever thread
// its goroutine ran.
func WaitThreadSyscall(tb testing.TB, pid, nr int, args ...uintptr) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			tb.Fatalf("process %d: %v", pid, err)
		}
		var last []byte
		for _, task := range tasks {
			in, b, err := inSyscallAt(fmt.Sprintf("/proc/%d/task/%s/syscall", pid, task.Name()), nr)
			if err != nil {
				continue // a thread that ended
			}
			last = b
			if in && leadingArgs(b, args) {
				return
			}
		}
		if time.Now().After(deadline) {
			tb.Fatalf("no thread of process %d blocked in system call %d %x (last: %q)", pid, nr, args, strings.TrimSpace(string(last)))
		}
		time.Sleep(5 * time.Millisecond)
	}
}
