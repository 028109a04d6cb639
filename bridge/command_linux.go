package bridge

import (
	"os"
	"strconv"
	"strings"
)

// descendants counts the processes below pid, through the children files
// of its threads; ok is false when the kernel has none. The reaper is a
// child subreaper, so what a tool command left running is found below it
// however it forked.
func descendants(pid int) (n int, ok bool) {
	kids, ok := childrenOf(pid)
	if !ok {
		return 0, false
	}
	for len(kids) > 0 {
		p := kids[len(kids)-1]
		kids = kids[:len(kids)-1]
		n++
		more, _ := childrenOf(p)
		kids = append(kids, more...)
	}
	return n, true
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
