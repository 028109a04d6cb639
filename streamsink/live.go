package streamsink

import (
	"io/fs"
	"os"
	"sync"
)

// live holds the artifacts that the Stores of this process are writing,
// which the limits of every Store in the process leave alone. A lock
// cannot say so: on NFS, where Linux makes flock an fcntl lock, a lock
// belongs to the process, so it never excludes the process's own opens,
// and the limits' close of their own open of the file would release it.
var live struct {
	// mu is held from an artifact's creation to its entry here, and
	// around each check-and-remove of the limits, so that no removal
	// falls between the two.
	mu    sync.Mutex
	files map[*os.File]struct{}
}

// addLive enters f, just created; live.mu is held.
func addLive(f *os.File) {
	if live.files == nil {
		live.files = make(map[*os.File]struct{})
	}
	live.files[f] = struct{}{}
}

// dropLive removes f, finished or given up.
func dropLive(f *os.File) {
	live.mu.Lock()
	delete(live.files, f)
	live.mu.Unlock()
}

// isLive reports whether fi is an artifact this process has open for
// writing; live.mu is held. The comparison is with the open file's own
// stat, not its name's: while open, its inode cannot be reused by
// another file. A writer that closed its file without finishing is done
// writing it; its own Store still keeps it until then, by id.
func isLive(fi fs.FileInfo) bool {
	for f := range live.files {
		if open, err := f.Stat(); err == nil && os.SameFile(open, fi) {
			return true
		}
	}
	return false
}
