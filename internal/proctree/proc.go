package proctree

import (
	"bytes"
	"os"
	"strconv"
)

// Children lists the children of every thread of process pid; ok is false
// when the kernel has no children files (built without them). A process
// that is gone already has none.
func Children(pid int) (kids []int, ok bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil, true // gone already
	}
	for _, t := range tasks {
		b, err := os.ReadFile(dir + t.Name() + "/children")
		if os.IsNotExist(err) {
			if _, serr := os.Stat(dir + t.Name()); serr == nil {
				return nil, false // the task exists, its children file does not
			}
		}
		for _, f := range bytes.Fields(b) {
			if k, err := strconv.Atoi(string(f)); err == nil {
				kids = append(kids, k)
			}
		}
	}
	return kids, true
}

// Ended says whether process pid is gone or has exited (a zombie, or being
// reaped), from the state field of /proc/PID/stat. A leader that is a
// zombie while another of its threads runs (its main thread exited alone)
// has not ended: that thread holds the process's descriptors and may fork.
func Ended(pid int) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/"
	state, ok := stateOf(dir + "stat")
	if !ok {
		return true
	}
	if !exited(state) {
		return false
	}
	tasks, _ := os.ReadDir(dir + "task") // none: gone
	for _, t := range tasks {
		if st, ok := stateOf(dir + "task/" + t.Name() + "/stat"); ok && !exited(st) {
			return false
		}
	}
	return true
}

func exited(state byte) bool { return state == 'Z' || state == 'X' || state == 'x' }

// stateOf is the state field of a stat file; ok is false when it cannot be
// read (the process or thread is gone). A field it cannot find reads as
// running, so that nothing is taken for ended on a misread.
func stateOf(path string) (state byte, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndex(b, []byte(") ")) // the name may hold ") "
	if i < 0 || i+2 >= len(b) {
		return 'R', true
	}
	return b[i+2], true
}
