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
// reaped), from the state field of /proc/PID/stat.
func Ended(pid int) bool {
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
