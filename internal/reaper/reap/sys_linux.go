package reap

import (
	"bytes"
	"os"
	"strconv"
	"syscall"

	"github.com/evalhost/evalhost/internal/proctree"
)

const prSetChildSubreaper = 36 // PR_SET_CHILD_SUBREAPER, linux/prctl.h

// idleFirst: an idle child is forked before the reaper subscribes to the
// terminating signals (notifyTerminating), as its parent-death signal ends
// it with a reaper that dies of one meanwhile.
const idleFirst = true

// becomeSubreaper makes orphans below the reaper its children instead of
// init's, so none escapes by double-forking or setsid.
func becomeSubreaper() {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
}

// childAttr: the child leads its own session (and process group), dies
// with the reaper, and with tty takes fd ttyFd as its controlling terminal.
func childAttr(tty bool, ttyFd int) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Setctty: tty, Ctty: ttyFd, Pdeathsig: syscall.SIGKILL}
}

func dup2(from, to int) error { return syscall.Dup3(from, to, 0) }

// killTree sends SIGKILL to the child's group and to every live process
// below the reaper. It walks the tree through /proc/PID/task/TID/children,
// or where the kernel lacks those files, through every process's parent in
// /proc. Either is a snapshot that can miss a process forked meanwhile; the
// caller repeats until no child is left.
func killTree(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	self := os.Getpid()
	kids, ok := proctree.Children(self)
	if !ok {
		killByParent(self)
		return
	}
	for len(kids) > 0 {
		p := kids[len(kids)-1]
		kids = kids[:len(kids)-1]
		_ = syscall.Kill(p, syscall.SIGKILL)
		more, _ := proctree.Children(p)
		kids = append(kids, more...)
	}
}

// killByParent kills every live process below root, found through the
// parent links of every process in /proc.
func killByParent(root int) {
	children := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, live := parentOf(p); live {
			children[ppid] = append(children[ppid], p)
		}
	}
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			_ = syscall.Kill(c, syscall.SIGKILL)
			walk(c)
		}
	}
	walk(root)
}

// parentOf reads the parent of a live (not zombie) process from
// /proc/PID/stat, whose comm field may hold spaces and parentheses.
func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:]) // state ppid ...
	if len(f) < 2 || len(f[0]) != 1 || f[0][0] == 'Z' || f[0][0] == 'X' {
		return 0, false
	}
	ppid, err := strconv.Atoi(string(f[1]))
	return ppid, err == nil
}
