//go:build unix

package config

import (
	"io/fs"
	"os"
	"syscall"
)

// ownedByMe reports the file's owner and whether it is the effective user.
func ownedByMe(st fs.FileInfo) (owner int, mine bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return -1, true
	}
	return int(sys.Uid), int(sys.Uid) == os.Geteuid()
}
