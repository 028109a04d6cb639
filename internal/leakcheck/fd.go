package leakcheck

import (
	"os"
	"slices"
	"strings"
)

// openFDs maps each of this process's descriptors to what it refers to.
func openFDs() map[string]string {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil
	}
	fds := make(map[string]string, len(ents))
	for _, e := range ents {
		// The one that fails is the listing's own, closed by now.
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil {
			fds[e.Name()] = target
		}
	}
	return fds
}

// added lists the descriptors of now that were not open, to the same
// target, in before: the likely leaks, named by what they refer to.
func added(before, now map[string]string) string {
	var out []string
	for fd, target := range now {
		if old, ok := before[fd]; !ok || old != target {
			out = append(out, fd+"→"+target)
		}
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}
