package bridge

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// descendants counts the running processes below pid, through the
// children files of its threads; ok is false when the kernel has none. The
// reaper is a child subreaper, so what a tool command left running is found
// below it however it forked. A process that has ended is not counted,
// though it stays listed as a zombie until the reaper reaps it on its
// SIGCHLD, which may come well after the kill: whoever saw it end must not
// see it still running here.
func descendants(pid int) (n int, ok bool) {
	kids, ok := childrenOf(pid)
	if !ok {
		return 0, false
	}
	for len(kids) > 0 {
		p := kids[len(kids)-1]
		kids = kids[:len(kids)-1]
		if ended(p) {
			continue // a zombie's children were re-parented when it exited
		}
		n++
		more, _ := childrenOf(p)
		kids = append(kids, more...)
	}
	return n, true
}

// ended says whether process pid is gone or has exited (a zombie, or
// being reaped), from the state field of /proc/PID/stat.
func ended(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndex(b, []byte(") ")) // the name may hold ") "
	if i < 0 || i+2 >= len(b) {
		return false
	}
	state := b[i+2]
	return state == 'Z' || state == 'X' || state == 'x'
}

func childrenOf(pid int) ([]int, bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil, true // gone: no children
	}
	var kids []int
	for _, t := range tasks {
		b, err := os.ReadFile(dir + t.Name() + "/children")
		if os.IsNotExist(err) {
			if _, serr := os.Stat(dir + t.Name()); serr == nil {
				return nil, false // no children files in this kernel
			}
		}
		for _, f := range strings.Fields(string(b)) {
			if k, err := strconv.Atoi(f); err == nil {
				kids = append(kids, k)
			}
		}
	}
	return kids, true
}
