package bridge

import "github.com/evalhost/evalhost/internal/proctree"

// descendants counts the running processes below pid, through the
// children files of its threads; ok is false when the kernel has none. The
// reaper is a child subreaper, so what a tool command left running is found
// below it however it forked. A process that has ended is not counted,
// though it stays listed as a zombie until the reaper reaps it on its
// SIGCHLD, which may come well after the kill: whoever saw it end must not
// see it still running here.
func descendants(pid int) (n int, ok bool) {
	kids, ok := proctree.Children(pid)
	if !ok {
		return 0, false
	}
	for len(kids) > 0 {
		p := kids[len(kids)-1]
		kids = kids[:len(kids)-1]
		if proctree.Ended(p) {
			continue // a zombie's children were re-parented when it exited
		}
		n++
		more, _ := proctree.Children(p)
		kids = append(kids, more...)
	}
	return n, true
}
