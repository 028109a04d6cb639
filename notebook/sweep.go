package notebook

import (
	"path/filepath"
	"strings"
	"sync"
)

// A save's temp file is ".NAME.<digits>.tmp" beside the notebook NAME
// (createTemp). Every evalhost writer makes it holding the notebook's Lock
// and renames or removes it before it lets go, and each writer also
// flocks its temp file from its creation until it renames or removes it
// (markWriting, then holdMark past its Close). So one found while holding
// the Lock whose flock Lock takes is what a writer killed mid-save left:
// Lock removes those (sweepTemps), where it has a real lock. A flock not had
// for any other reason (NFS) proves nothing, and the file is kept.

// swept holds the notebooks (canonical paths) whose directory this process
// has swept. Listing a directory of 100,000 files costs ~55 ms, and nb run
// locks twice per cell; a killed save's leftovers are clutter, not harm,
// so the first Lock in a process removing them is enough.
var swept sync.Map

// sweepOnce is sweepTemps of target, the first time this process locks it.
func sweepOnce(target string) {
	if _, done := swept.LoadOrStore(target, struct{}{}); !done {
		sweepTemps(target)
	}
}

// tempPattern is createTemp's os.CreateTemp pattern for the notebook base.
func tempPattern(base string) string { return "." + base + ".*.tmp" }

// isTempOf reports whether name is a temp file createTemp made for the
// notebook base: CreateTemp puts decimal digits where the pattern has
// "*", so another notebook's ("NAME.x"'s ".NAME.x.<digits>.tmp") is not.
func isTempOf(name, base string) bool {
	rest, ok := strings.CutPrefix(name, "."+base+".")
	if !ok {
		return false
	}
	digits, ok := strings.CutSuffix(rest, ".tmp")
	return ok && digits != "" && strings.Trim(digits, "0123456789") == ""
}

// tempsOf lists the names in dir that are temp files of the notebook base.
func tempsOf(names []string, base string) []string {
	var out []string
	for _, n := range names {
		if isTempOf(n, base) {
			out = append(out, n)
		}
	}
	return out
}

// splitTarget is the directory and name of a canonical notebook path.
func splitTarget(target string) (dir, base string) {
	dir, base = filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	return dir, base
}
