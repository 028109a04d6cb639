//go:build unix

package runner

import (
	"os"
	"syscall"
)

// owner returns the uid owning fi and this process's effective uid.
func owner(fi os.FileInfo) (uid, me int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(st.Uid), os.Geteuid(), true
}
